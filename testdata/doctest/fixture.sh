#!/usr/bin/env bash
# fixture.sh DIR: the state the documentation's shell blocks start from
# (pkg/app/cli's TestDocs makes it once, then copies it for every block): a
# service's data directory (organisation acme, a sandbox key, a published
# drift profile), its trust bundle, and what an auditor holds after a
# Bounded Inference check (vpec.json, profile.json, pii-model/,
# note.txt, note.trace.json). Needs svc and svc-verify on PATH and
# SVC_ORT_LIB. The key is left in DIR/.doctest/env.
set -euo pipefail
examples=$(cd "$(dirname "$0")/../../examples" && pwd -P)
out=${1:?usage: fixture.sh DIR}
mkdir -p "$out/.doctest"
out=$(cd "$out" && pwd -P)
data="$out/.doctest/data/svc" # the default data directory of the blocks (XDG_DATA_HOME=DIR/.doctest/data)

svc serve --data-dir "$data" --addr 127.0.0.1:0 --addr-file "$out/.doctest/addr" 2>"$out/.doctest/serve.log" >/dev/null &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$out/.doctest/addr" ] && break; sleep 0.1; done
[ -s "$out/.doctest/addr" ] || { echo "fixture.sh: the service did not start: $(cat "$out/.doctest/serve.log")" >&2; exit 1; }

svc admin org create acme --data-dir "$data" >/dev/null
SVC_API_KEY=$(svc admin key create --org acme --sandbox --data-dir "$data" 2>/dev/null)
export SVC_API_KEY SVC_BASE_URL="http://$(cat "$out/.doctest/addr")"
echo "SVC_API_KEY=$SVC_API_KEY" > "$out/.doctest/env"
svc serve trust-bundle --data-dir "$data" > "$out/trust-bundle.pem"

"$examples/bounded.sh" "$out" "$data" "$out/trust-bundle.pem" > "$out/.doctest/bounded.log"
mv "$out/vpec-bounded.json" "$out/vpec.json"
cp "$examples/note.txt" "$out/note.txt"
cp "$examples/pii-check.yaml" "$examples/kyc.yaml" "$examples/applicant.json" "$out/"
rm -f "$out/.svc-run-bounded.json" "$out/queue.jsonl" "$out/profile.unsigned.json"

# The ids the --help examples elide (run_0b7c…, cal_req_0b5e...), and a
# file whose hash an example quotes.
{
	echo "RUN_ID=$(jq -r .run_id "$out/vpec.json")"
	echo "VPEC_ID=$(jq -r .vpec_id "$out/vpec.json")"
	echo "MANIFEST_ID=$(svc manifest register "$examples/pii-check.yaml")"
	echo "KEY_ID=$(svc admin key list --org acme --data-dir "$data" --output json | jq -r '.[0].key_id')"
	echo "REQUEST_ID=$(svc calibrate request --model "$out/pii-model" --gpu-class cpu --output json | jq -r .request_id)"
} > "$out/.doctest/ids"
printf 'test' > "$out/input.txt"

# Proved checks (docs/PROOFS.md): a small MLP head whose keys come from a
# two-phase ceremony (head/: proving.key, verifying.key, transcript.json),
# its signed circuit entry (circuit.json) and proving key (head.pk), a dev
# threshold_check circuit (threshold.json, threshold.pk), an embedding
# (emb.json); the entries are in the client's cache, where svc verify
# looks.
(
	cd "$out"
	svc model generate --out headmodel --style mlp-head --dims 16,8,2 >/dev/null 2>&1
	cp headmodel/model.onnx head.onnx
	svc zk ceremony init --dir p1 --phase 1 --power 10
	svc zk ceremony contribute --dir p1 --name 'Example Org'
	svc zk ceremony finalize --dir p1 --beacon 8f2e4d1c0b9a79685746352413021f0e
	svc zk ceremony init --dir head --phase 2 --phase1 p1 --model head.onnx
	svc zk ceremony contribute --dir head --name 'Example Org'
	svc zk ceremony finalize --dir head --beacon 0e1f2021324354657687a9b0c1d2e3f4
	svc registry publish-circuit --circuit mlp_head --model head.onnx --verifying-key head/verifying.key \
		--proving-key head/proving.key --transcript head/transcript.json --data-dir "$data"
	cp head/proving.key head.pk
	svc registry get-circuit --model head.onnx --trust-root trust-bundle.pem > circuit.json
	svc registry publish-circuit --circuit threshold_check --dev-setup --proving-key-out threshold.pk \
		--data-dir "$data" --output json > threshold.json
	echo '[-1, -0.75, -0.5, -0.25, 0, 0.25, 0.5, 0.75, 1, -1, -0.75, -0.5, -0.25, 0, 0.25, 0.5]' > emb.json
	rm -rf headmodel
) > "$out/.doctest/zk.log" 2>&1 || { echo "fixture.sh: the proved checks' setup failed: $(tail -5 "$out/.doctest/zk.log")" >&2; exit 1; }
