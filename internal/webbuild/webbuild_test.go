package webbuild

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestPage(t *testing.T) {
	wasm := []byte("\x00asm\x01\x00\x00\x00 not really")
	page, info, err := Page(wasm, []byte("// wasm_exec.js\nclass Go {}"), "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wasm)
	if info.WasmSHA256 != hex.EncodeToString(sum[:]) || info.WasmSize != len(wasm) || info.PageSize != len(page) {
		t.Errorf("info %+v", info)
	}
	s := string(page)
	for _, want := range []string{
		`<meta name="svc-verifier-version" content="v1.2.3">`,
		`<meta name="svc-wasm-sha256" content="` + info.WasmSHA256 + `">`,
		`id="wasm-b64">` + base64.StdEncoding.EncodeToString(wasm) + `</script>`,
		"class Go {}",
		"connect-src 'none'",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(s, "@@") {
		t.Errorf("page has an unfilled placeholder: %s", regexp.MustCompile(`@@[A-Z_0-9]+@@`).FindString(s))
	}
	// No external resource: every src or href is a fragment or absent.
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*"[^#"]`).FindString(s); m != "" {
		t.Errorf("page refers to an external resource: %s", m)
	}
	for _, v := range []string{"", "v1 2", `"><script>`, strings.Repeat("a", 65)} {
		if _, _, err := Page(wasm, nil, v); !errors.Is(err, ErrVersion) {
			t.Errorf("version %q: %v", v, err)
		}
	}
	if _, _, err := Page(wasm, []byte("x</SCRIPT>"), "v1"); err == nil {
		t.Error("a wasm_exec.js holding </script was inlined")
	}
}

// TestRelease: goreleaser builds the page before the binaries (svc embeds
// it) and ships it in both archives.
func TestRelease(t *testing.T) {
	b, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	hook := "go run ./internal/webbuild/genverify -o " + DefaultOut + " -version {{ .Version }}"
	if !strings.Contains(s, "    - "+hook+"\n") {
		t.Errorf(".goreleaser.yaml lacks the before hook %q", hook)
	}
	if n := strings.Count(s, "      - src: "+DefaultOut+"\n        strip_parent: true\n"); n != 2 {
		t.Errorf(".goreleaser.yaml ships verify.html in %d archives, want 2 (svc and svc-verify)", n)
	}
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "go run ./internal/webbuild/genverify -o "+DefaultOut) && !strings.Contains(string(mk), "$(GO) run ./internal/webbuild/genverify -o "+DefaultOut) {
		t.Error("make web does not build the page where svc embeds it")
	}
}

// TestBuildReproducible builds the page twice (the second build comes from
// Go's build cache): the WebAssembly compiles for js/wasm, and the same
// source and version give the same bytes and so the same stated digest,
// which anyone can check by rebuilding.
func TestBuildReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the WebAssembly verifier")
	}
	dir := t.TempDir()
	var infos []Info
	var pages [][]byte
	for i, name := range []string{"a.html", "b.html"} {
		out := dir + "/" + name
		info, err := Build(t.Context(), Options{ModuleDir: "../..", Out: out, Version: "v9.9.9"})
		if err != nil {
			t.Fatalf("build %d: %v", i, err)
		}
		page, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		infos, pages = append(infos, info), append(pages, page)
	}
	if infos[0] != infos[1] || string(pages[0]) != string(pages[1]) {
		t.Errorf("two builds differ: %+v vs %+v", infos[0], infos[1])
	}
	if infos[0].WasmSize < 1<<20 || !strings.Contains(string(pages[0]), `content="`+infos[0].WasmSHA256+`"`) {
		t.Errorf("build %+v", infos[0])
	}
}
