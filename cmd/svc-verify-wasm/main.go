//go:build js && wasm

// Command svc-verify-wasm is the offline verifier compiled to WebAssembly
// (GOOS=js GOARCH=wasm) for the self-contained verify.html page that
// internal/webbuild assembles. It exposes one JavaScript function,
//
//	svcVerify({vpec, trust, profiles, circuits, circuitFolder, requireClean, receipt, requireLog, witnessPolicy, trustRootUpdates}) -> JSON string
//
// where vpec, trust (a trust root JSON or a PEM trust bundle), receipt
// (optional: the VPEC's transparency log receipt) and witnessPolicy
// (optional: a witness policy file) are {name, data: Uint8Array}, and
// trustRootUpdates (newer trust root versions), profiles,
// circuits (circuit entry files) and circuitFolder (the .json files of a
// chosen folder of circuit entries) lists of them; the string is a
// pkg/app/webverify Result. It also sets svcMaxCircuitEntryBytes, the size
// past which a file cannot be a circuit entry (the page does not read a
// larger file of a folder). It links only the verification library
// (deps_test.go guards that): no network code.
package main

import (
	"syscall/js"

	"github.com/consensys/gnark/logger"

	"github.com/svc-gov/svc/pkg/app/webverify"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// version is set by the page builder (-ldflags -X main.version=...).
var version = "dev"

func file(v js.Value) webverify.File {
	if v.IsUndefined() || v.IsNull() {
		return webverify.File{}
	}
	f := webverify.File{Name: v.Get("name").String()}
	if d := v.Get("data"); !d.IsUndefined() && !d.IsNull() {
		f.Data = make([]byte, d.Get("length").Int())
		js.CopyBytesToGo(f.Data, d)
	}
	return f
}

func files(v js.Value) []webverify.File {
	if v.IsUndefined() || v.IsNull() {
		return nil
	}
	out := make([]webverify.File, v.Length())
	for i := range out {
		out[i] = file(v.Index(i))
	}
	return out
}

func verify(this js.Value, args []js.Value) any {
	if len(args) != 1 || args[0].Type() != js.TypeObject {
		return string(webverify.Result{Error: "svcVerify takes one object {vpec, trust, profiles, circuits, circuitFolder, requireClean}", ExitCode: webverify.ExitUsage}.JSON())
	}
	a := args[0]
	in := webverify.Input{VPEC: file(a.Get("vpec")), Trust: file(a.Get("trust")), RequireClean: a.Get("requireClean").Truthy(),
		Profiles: files(a.Get("profiles")), Circuits: files(a.Get("circuits")), CircuitFolder: files(a.Get("circuitFolder")),
		Receipt: file(a.Get("receipt")), RequireLog: a.Get("requireLog").Truthy(),
		WitnessPolicy: file(a.Get("witnessPolicy")), TrustRootUpdates: files(a.Get("trustRootUpdates"))}
	return string(webverify.Verify(in).JSON())
}

func main() {
	logger.Disable() // gnark would log a debug line per proof to the console
	js.Global().Set("svcVerify", js.FuncOf(verify))
	js.Global().Set("svcVerifierVersion", version)
	js.Global().Set("svcMaxCircuitEntryBytes", zkverify.MaxEntryBytes)
	if ready := js.Global().Get("svcVerifierReady"); ready.Type() == js.TypeFunction {
		ready.Invoke(version)
	}
	select {} // serve calls until the page is closed
}
