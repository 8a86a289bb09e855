// Package webbuild assembles the offline verifier page, verify.html: it
// compiles cmd/svc-verify-wasm with GOOS=js GOARCH=wasm and inlines the
// WebAssembly (base64) and the Go toolchain's wasm_exec.js into one
// self-contained HTML file stating its version and the SHA-256 of its
// WebAssembly. `make web` and goreleaser's before hook run it through
// ./internal/webbuild/genverify; docs/DASHBOARD.md describes the page.
package webbuild

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

//go:embed verify.tmpl.html
var pageTemplate string

// DefaultOut is where the page is written for svc serve to embed it
// (pkg/service/dashboard serves it at /verify), relative to the module root.
const DefaultOut = "pkg/service/dashboard/verifypage/verify.html"

// ErrVersion is returned for a version string that cannot be written into
// the page verbatim.
var ErrVersion = errors.New("webbuild: version must be 1-64 characters of A-Z a-z 0-9 . _ + -")

var versionPattern = regexp.MustCompile(`^[A-Za-z0-9._+-]{1,64}$`)

// Options configure Build.
type Options struct {
	// ModuleDir is the root of the svc module (where go.mod is). Required.
	ModuleDir string
	// Out is the page to write (created or replaced).
	Out string
	// Version is stated in the page and linked into the WebAssembly.
	Version string
	// Go is the go command (default "go" on PATH).
	Go string
}

// Info describes a built page.
type Info struct {
	Version    string
	WasmSize   int    // bytes of the WebAssembly
	WasmSHA256 string // lowercase hex
	PageSize   int    // bytes of verify.html
}

// Build compiles the verifier to WebAssembly and writes the page.
func Build(ctx context.Context, o Options) (Info, error) {
	if !versionPattern.MatchString(o.Version) {
		return Info{}, fmt.Errorf("%w (got %q)", ErrVersion, o.Version)
	}
	if o.Go == "" {
		o.Go = "go"
	}
	tmp, err := os.MkdirTemp("", "svc-webbuild-")
	if err != nil {
		return Info{}, fmt.Errorf("webbuild: %w", err)
	}
	defer os.RemoveAll(tmp)
	wasmPath := filepath.Join(tmp, "verify.wasm")
	cmd := exec.CommandContext(ctx, o.Go, "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -X main.version="+o.Version, "-o", wasmPath, "./cmd/svc-verify-wasm")
	cmd.Dir = o.ModuleDir
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return Info{}, fmt.Errorf("webbuild: GOOS=js GOARCH=wasm go build ./cmd/svc-verify-wasm: %w\n%s", err, out)
	}
	wasm, err := os.ReadFile(wasmPath)
	if err != nil {
		return Info{}, fmt.Errorf("webbuild: %w", err)
	}
	execJS, err := wasmExecJS(ctx, o.Go)
	if err != nil {
		return Info{}, err
	}
	page, info, err := Page(wasm, execJS, o.Version)
	if err != nil {
		return Info{}, err
	}
	if err := os.MkdirAll(filepath.Dir(o.Out), 0o755); err != nil {
		return Info{}, fmt.Errorf("webbuild: %w", err)
	}
	if err := os.WriteFile(o.Out+".tmp", page, 0o644); err != nil {
		return Info{}, fmt.Errorf("webbuild: %w", err)
	}
	if err := os.Rename(o.Out+".tmp", o.Out); err != nil {
		return Info{}, fmt.Errorf("webbuild: %w", err)
	}
	return info, nil
}

// wasmExecJS reads the JavaScript support file of the Go toolchain that
// built the WebAssembly (lib/wasm since Go 1.24, misc/wasm before).
func wasmExecJS(ctx context.Context, gocmd string) ([]byte, error) {
	out, err := exec.CommandContext(ctx, gocmd, "env", "GOROOT").Output()
	if err != nil {
		return nil, fmt.Errorf("webbuild: go env GOROOT: %w", err)
	}
	root := strings.TrimSpace(string(out))
	for _, p := range []string{"lib/wasm/wasm_exec.js", "misc/wasm/wasm_exec.js"} {
		if b, err := os.ReadFile(filepath.Join(root, p)); err == nil {
			return b, nil
		}
	}
	return nil, fmt.Errorf("webbuild: no wasm_exec.js under %s (lib/wasm or misc/wasm)", root)
}

// Page fills the page template: version, the WebAssembly's digest, the
// WebAssembly (standard base64) and wasm_exec.js, each inlined verbatim.
func Page(wasm, wasmExecJS []byte, version string) ([]byte, Info, error) {
	if !versionPattern.MatchString(version) {
		return nil, Info{}, fmt.Errorf("%w (got %q)", ErrVersion, version)
	}
	if bytes.Contains(bytes.ToLower(wasmExecJS), []byte("</script")) {
		return nil, Info{}, errors.New("webbuild: wasm_exec.js contains </script and cannot be inlined")
	}
	sum := sha256.Sum256(wasm)
	info := Info{Version: version, WasmSize: len(wasm), WasmSHA256: hex.EncodeToString(sum[:])}
	page := strings.NewReplacer(
		"@@VERSION@@", version,
		"@@WASM_SHA256@@", info.WasmSHA256,
		"@@WASM_EXEC_JS@@", string(wasmExecJS),
		"@@WASM_B64@@", base64.StdEncoding.EncodeToString(wasm),
	).Replace(pageTemplate)
	info.PageSize = len(page)
	return []byte(page), info, nil
}
