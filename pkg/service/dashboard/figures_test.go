package dashboard_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/svc-gov/svc/internal/browsertest"
	"github.com/svc-gov/svc/internal/testvectors"
	"github.com/svc-gov/svc/pkg/app/cli"
)

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestWebFigures measures the figures of docs/BENCHMARKS.md ("Offline
// verifier page"): the WebAssembly's size raw and gzipped, the page's load
// to ready, and verifying the 10,000-record VPEC in the page against svc
// verify (in process, the same machine, the same run). It runs with
// SVC_WEB_BENCH=1 (make bench-web) and asserts no timing.
func TestWebFigures(t *testing.T) {
	if os.Getenv("SVC_WEB_BENCH") == "" {
		t.Skip("set SVC_WEB_BENCH=1 (make bench-web) to measure the offline verifier page")
	}
	const runs = 5
	b := browsertest.New(t)
	page, info := verifyPage(t)
	m := regexp.MustCompile(`id="wasm-b64">([^<]+)<`).FindSubmatch(page)
	wasm, err := base64.StdEncoding.DecodeString(string(m[1]))
	if err != nil || len(wasm) != info.WasmSize {
		t.Fatalf("wasm from the page: %d bytes, %v", len(wasm), err)
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(wasm)
	zw.Close()
	var pgz bytes.Buffer
	zw, _ = gzip.NewWriterLevel(&pgz, gzip.BestCompression)
	zw.Write(page)
	zw.Close()
	t.Logf("WebAssembly %d bytes (%.2f MB), gzip -9 %d bytes (%.2f MB); verify.html %d bytes (%.2f MB), gzip -9 %d bytes (%.2f MB)",
		len(wasm), float64(len(wasm))/1e6, gz.Len(), float64(gz.Len())/1e6, len(page), float64(len(page))/1e6, pgz.Len(), float64(pgz.Len())/1e6)

	e := newEnv(t, envOptions{verifyPage: page})
	var loads, inPage []time.Duration
	for range runs {
		start := time.Now()
		b.Do("open /verify", chromedp.Navigate(e.ts.URL+"/verify"))
		poll(b, "ready", `document.body.dataset.ready === "true"`)
		loads = append(loads, time.Since(start))
		inPage = append(inPage, time.Duration(browsertest.Eval[float64](b, "window.svcReadyMs")*float64(time.Millisecond)))
	}
	t.Logf("page load to ready (navigation start to verifier ready, loopback): median %v of %d %v; inside the page (script start to ready) median %v",
		median(loads).Round(time.Millisecond), runs, loads, median(inPage).Round(time.Millisecond))

	dir := t.TempDir()
	l, err := testvectors.LargeVPEC(dir, 10000)
	if err != nil {
		t.Fatal(err)
	}
	var browser []time.Duration
	for i := range runs {
		b.Do("verify 10k",
			chromedp.Evaluate[chromedp.Void](`window.svcLastResult = undefined`),
			chromedp.SetUploadFiles(chromedp.CSS("#vpec-file"), []string{l.VPECPath}),
			chromedp.SetUploadFiles(chromedp.CSS("#trust-file"), []string{l.BundlePath}),
			chromedp.Click(chromedp.CSS("#verify")))
		poll(b, "10k report", `window.svcLastResult !== undefined`)
		if v := browsertest.Eval[string](b, "window.svcLastResult.report.verdict"); v != "VALID" {
			t.Fatalf("run %d: verdict %q", i, v)
		}
		ms, err := strconv.ParseFloat(browsertest.Eval[string](b, `document.getElementById("result").dataset.ms`), 64)
		if err != nil {
			t.Fatal(err)
		}
		browser = append(browser, time.Duration(ms*float64(time.Millisecond)))
	}
	var cliRuns []time.Duration
	for range runs {
		var out, errOut strings.Builder
		start := time.Now()
		code := cli.Main([]string{"verify", l.VPECPath, "--trust-root", l.BundlePath, "--profile-dir", filepath.Join(dir, "none")},
			&cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errOut, Getenv: func(string) string { return "" }})
		cliRuns = append(cliRuns, time.Since(start))
		if code != 0 || !strings.Contains(out.String(), "VALID") {
			t.Fatalf("svc verify: exit %d\n%s%s", code, out.String(), errOut.String())
		}
	}
	mb, mc := median(browser), median(cliRuns)
	t.Logf("10,000-record VPEC (%d bytes): in the page (svcVerify call, WebAssembly) median %v of %d %v; svc verify in process median %v of %d %v; ratio page/CLI %.2f",
		len(l.Doc), mb.Round(time.Millisecond), runs, browser, mc.Round(time.Millisecond), runs, cliRuns, float64(mb)/float64(mc))
}
