//go:build js && wasm

// Command svc-verify-wasm is the offline verifier compiled to WebAssembly
// (GOOS=js GOARCH=wasm) for the self-contained verify.html page that
// internal/webbuild assembles. It exposes one JavaScript function,
//
//	svcVerify({vpec, trust, profiles, requireClean}) -> JSON string
//
// where vpec and trust are {name, data: Uint8Array} and profiles a list of
// them; the string is a pkg/webverify Result. It links only the
// verification library (deps_test.go guards that): no network code.
package main

import (
	"syscall/js"

	"github.com/svc-gov/svc/pkg/webverify"
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

func verify(this js.Value, args []js.Value) any {
	if len(args) != 1 || args[0].Type() != js.TypeObject {
		return string(webverify.Result{Error: "svcVerify takes one object {vpec, trust, profiles, requireClean}", ExitCode: webverify.ExitUsage}.JSON())
	}
	a := args[0]
	in := webverify.Input{VPEC: file(a.Get("vpec")), Trust: file(a.Get("trust")), RequireClean: a.Get("requireClean").Truthy()}
	if ps := a.Get("profiles"); !ps.IsUndefined() && !ps.IsNull() {
		for i := 0; i < ps.Length(); i++ {
			in.Profiles = append(in.Profiles, file(ps.Index(i)))
		}
	}
	return string(webverify.Verify(in).JSON())
}

func main() {
	js.Global().Set("svcVerify", js.FuncOf(verify))
	js.Global().Set("svcVerifierVersion", version)
	if ready := js.Global().Get("svcVerifierReady"); ready.Type() == js.TypeFunction {
		ready.Invoke(version)
	}
	select {} // serve calls until the page is closed
}
