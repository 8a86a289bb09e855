// verify.mjs: run snarkjs's groth16.verify on many (verifying key, proof,
// public inputs) triples in one Node.js process (docs/snarkjs_test.go,
// docs/INTEROP.md "snarkjs").
//
//   SVC_SNARKJS=$(scripts/install-snarkjs.sh) node testdata/snarkjs/verify.mjs < jobs.jsonl
//
// Each input line is {"name": …, "vk": verification_key.json, "proof":
// proof.json, "public": public.json} (snarkjs's own file formats); each
// output line is {"name": …, "valid": true|false, "error": "…"}, in order.
// An exception thrown by snarkjs (a malformed key or proof) is reported as
// valid false with its message. Exit status 0 unless the input is unreadable.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";

const dir = process.env.SVC_SNARKJS;
if (!dir) {
	console.error("verify.mjs: set SVC_SNARKJS to the snarkjs package directory (scripts/install-snarkjs.sh prints it)");
	process.exit(2);
}
const snarkjs = await import(pathToFileURL(path.join(dir, "main.js")).href);
const lines = readFileSync(0, "utf8").split("\n").filter((l) => l.trim() !== "");
for (const line of lines) {
	const job = JSON.parse(line);
	let valid = false;
	let error = "";
	try {
		// A logger that records snarkjs's reason for a rejection.
		const logger = { error: (m) => { error = String(m); }, info: () => {}, debug: () => {}, warn: () => {} };
		valid = (await snarkjs.groth16.verify(job.vk, job.public, job.proof, logger)) === true;
	} catch (e) {
		error = "exception: " + (e && e.message ? e.message : String(e));
	}
	process.stdout.write(JSON.stringify({ name: job.name, valid, error }) + "\n");
}
// ffjavascript keeps worker threads for the curve; end without waiting.
process.exit(0);
