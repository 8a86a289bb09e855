package dashboard_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/svc-gov/svc/internal/browsertest"
	"github.com/svc-gov/svc/internal/testvectors"
	"github.com/svc-gov/svc/internal/webbuild"
	"github.com/svc-gov/svc/pkg/app/webverify"
)

var (
	pageOnce sync.Once
	pageHTML []byte
	pageInfo webbuild.Info
	pageErr  error
)

// verifyPage builds verify.html once per test binary (the WebAssembly
// build takes some seconds).
func verifyPage(t *testing.T) ([]byte, webbuild.Info) {
	t.Helper()
	pageOnce.Do(func() {
		dir, err := os.MkdirTemp("", "svc-verify-page-")
		if err != nil {
			pageErr = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "verify.html")
		root, _ := filepath.Abs("../../..")
		if pageInfo, pageErr = webbuild.Build(context.Background(), webbuild.Options{ModuleDir: root, Out: out, Version: "v0.0.0-test"}); pageErr == nil {
			pageHTML, pageErr = os.ReadFile(out)
		}
	})
	if pageErr != nil {
		t.Fatalf("build verify.html: %v", pageErr)
	}
	return pageHTML, pageInfo
}

func poll(b *browsertest.Browser, what, expr string) {
	b.Do(what, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second)))
}

// TestBrowserDashboard walks the dashboard in a real headless Chromium:
// sign in with the form, see each status mark on the registry, file a
// calibration request with the form, publish the profile with `svc
// registry publish` and see the mark change and the e-mail arrive, open
// the profile, runs and VPEC pages; the keyboard reaches the controls.
func TestBrowserDashboard(t *testing.T) {
	b := browsertest.New(t)
	e := newEnv(t, envOptions{})
	e.seed()
	b.Do("open the dashboard", chromedp.Navigate(e.ts.URL+"/dashboard/"), chromedp.WaitVisible(chromedp.CSS("#api_key")))
	if title := browsertest.Eval[string](b, "document.title"); !strings.HasPrefix(title, "Sign in") {
		t.Fatalf("signed out, /dashboard/ shows %q", title)
	}
	// Keyboard: the first Tab reaches the skip link, labelled controls follow.
	b.Do("tab", chromedp.KeyEvent("\t"))
	if got := browsertest.Eval[string](b, "document.activeElement.textContent"); got != "Skip to content" {
		t.Errorf("first Tab focuses %q", got)
	}
	if n := browsertest.Eval[int](b, `[...document.querySelectorAll("input:not([type=hidden]),select")].filter(i => !(i.labels && i.labels.length)).length`); n != 0 {
		t.Errorf("%d controls without a label on the sign-in page", n)
	}
	b.Screenshot("1-signin")
	b.Do("type the key", chromedp.SendKeys(chromedp.CSS("#api_key"), e.keyA))
	b.Do("sign in", chromedp.Click(chromedp.CSS("form.card button[type=submit]")))
	b.Screenshot("1b-after-signin")
	b.Do("registry", chromedp.WaitVisible(chromedp.CSS("#models")))
	status := func() map[string]string {
		var m map[string]string
		js := `Object.fromEntries([...document.querySelectorAll("#models tr[data-model]")].map(r => [r.dataset.model, r.dataset.status + " | " + r.querySelector(".mark").textContent.trim()]))`
		m = browsertest.Eval[map[string]string](b, js)
		return m
	}
	got := status()
	for model, want := range map[string]string{modelMissing: "missing | ✖ Profile missing", modelRequested: "requested | ◐ Calibration requested", modelPublished: "published | ✔ Profile published"} {
		if got[model] != want {
			t.Errorf("registry row %s = %q, want %q", model, got[model], want)
		}
	}
	if n := browsertest.Eval[int](b, `[...document.querySelectorAll("input:not([type=hidden]),select")].filter(i => !(i.labels && i.labels.length)).length`); n != 0 {
		t.Errorf("%d controls without a label on the registry page", n)
	}
	b.Screenshot("2-registry")

	row := `#models tr[data-model="` + modelMissing + `"]`
	b.Do("file a calibration request",
		chromedp.Click(chromedp.CSS(row+" summary")),
		chromedp.SendKeys(chromedp.CSS(row+` input[name=hub_model_id]`), "acme/pii-bert"),
		chromedp.Click(chromedp.CSS(row+` input[value=a10g]`)),
		chromedp.SendKeys(chromedp.CSS(row+` input[name=notify_email]`), "ml-owner@acme.test"),
		chromedp.Click(chromedp.CSS(row+` button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("#requested-id")))
	if got := status()[modelMissing]; !strings.HasPrefix(got, "requested") {
		t.Errorf("after the request the model is %q", got)
	}
	b.Screenshot("3-registry-requested")

	t.Log(strings.TrimSpace(e.publishWithCLI()))
	b.Do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#models")))
	if got := status()[modelMissing]; !strings.HasPrefix(got, "published") {
		t.Errorf("after svc registry publish the model is %q", got)
	}
	b.Screenshot("4-registry-published")
	var mail []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && len(mail) == 0; time.Sleep(50 * time.Millisecond) {
		for _, m := range e.smtp.Messages() {
			mail = append(mail, strings.Join(m.To, ",")+": "+m.Data)
		}
	}
	if len(mail) != 1 || !strings.HasPrefix(mail[0], "ml-owner@acme.test: ") || !strings.Contains(mail[0], "svc-test/pii-detection-class/v1.0.0") {
		t.Errorf("e-mails at the loopback SMTP listener: %q", mail)
	}

	b.Do("profile page", chromedp.Click(chromedp.CSS(row+` a[href^="/dashboard/profiles/"]`)), chromedp.WaitVisible(chromedp.CSS("svg.chart")))
	if s := b.Text("#signature"); !strings.HasPrefix(s, "signature valid") {
		t.Errorf("profile signature line %q", s)
	}
	b.Screenshot("5-profile")

	b.Do("runs page", chromedp.Navigate(e.ts.URL+"/dashboard/runs?state=sealed"), chromedp.WaitVisible(chromedp.CSS("#runs")))
	b.Screenshot("6-runs")
	b.Do("VPEC page", chromedp.Click(chromedp.CSS(`#runs a[href="/dashboard/vpecs/`+e.vpecID+`"]`)), chromedp.WaitVisible(chromedp.CSS("#verdict")))
	if v := b.Text("#verdict"); !strings.HasPrefix(v, "VALID") {
		t.Errorf("VPEC page verdict %q", v)
	}
	if n := browsertest.Eval[int](b, `document.querySelectorAll("#checks > li[data-check]").length`); n < 12 {
		t.Errorf("VPEC page lists %d checks", n)
	}
	if browsertest.Eval[int](b, `document.querySelectorAll("script").length`) != 0 {
		t.Error("a dashboard page carries a script element")
	}
	b.Screenshot("7-vpec")
}

// TestBrowserOfflineVerifier opens /verify, then cuts the page off the
// network (the server is closed and the tab emulates offline), verifies a
// VPEC (VALID) and a tampered copy (INVALID, the failing check named),
// and finds no request after the page loaded; the page's report is the
// library's.
func TestBrowserOfflineVerifier(t *testing.T) {
	b := browsertest.New(t)
	page, info := verifyPage(t)
	e := newEnv(t, envOptions{verifyPage: page})
	dir := t.TempDir()
	l, err := testvectors.LargeVPEC(dir, 20)
	if err != nil {
		t.Fatal(err)
	}
	tampered := filepath.Join(dir, "tampered.json")
	doc := strings.Replace(string(l.Doc), `"toxicity"`, `"toxicitx"`, 1)
	if err := os.WriteFile(tampered, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Do("open /verify", chromedp.Navigate(e.ts.URL+"/verify"))
	poll(b, "verifier ready", `document.body.dataset.ready === "true"`)
	loaded := b.Requests()
	if len(loaded) != 1 || !strings.HasSuffix(loaded[0], "/verify") {
		t.Errorf("loading the page made requests %q, want the page only", loaded)
	}
	if got := b.Text("#digest-check"); got != "digest checked" {
		t.Errorf("digest line %q", got)
	}
	if got := b.Text("#wasm-sha256"); got != info.WasmSHA256 {
		t.Errorf("page states WebAssembly sha256 %s, built %s", got, info.WasmSHA256)
	}
	if got := b.Text("#version"); got != "v0.0.0-test" {
		t.Errorf("page states version %q", got)
	}
	e.ts.Close()
	b.Offline()

	verify := func(name, vpecPath string) webverify.Result {
		b.Do("verify "+name,
			chromedp.Evaluate[chromedp.Void](`window.svcLastResult = undefined`),
			chromedp.SetUploadFiles(chromedp.CSS("#vpec-file"), []string{vpecPath}),
			chromedp.SetUploadFiles(chromedp.CSS("#trust-file"), []string{l.BundlePath}),
			chromedp.Click(chromedp.CSS("#verify")))
		poll(b, "report of "+name, `window.svcLastResult !== undefined`)
		raw := browsertest.Eval[string](b, `JSON.stringify(window.svcLastResult)`)
		var res webverify.Result
		if err := json.Unmarshal([]byte(raw), &res); err != nil || res.Report == nil {
			t.Fatalf("%s: page result %s: %v", name, raw, err)
		}
		// The same verification in Go gives the same report.
		vp, _ := os.ReadFile(vpecPath)
		bundle, _ := os.ReadFile(l.BundlePath)
		want := webverify.Verify(webverify.Input{VPEC: webverify.File{Name: filepath.Base(vpecPath), Data: vp}, Trust: webverify.File{Name: filepath.Base(l.BundlePath), Data: bundle}})
		if res.ExitCode != want.ExitCode || res.Report.Verdict != want.Report.Verdict || len(res.Report.Checks) != len(want.Report.Checks) {
			t.Errorf("%s: page %d %q, library %d %q", name, res.ExitCode, res.Report.Verdict, want.ExitCode, want.Report.Verdict)
		}
		for i := range want.Report.Checks {
			if i < len(res.Report.Checks) && (res.Report.Checks[i].Name != want.Report.Checks[i].Name || res.Report.Checks[i].Status != want.Report.Checks[i].Status) {
				t.Errorf("%s: check %d page %+v, library %+v", name, i, res.Report.Checks[i], want.Report.Checks[i])
			}
		}
		b.Screenshot("verify-" + name)
		return res
	}
	res := verify("valid", l.VPECPath)
	if v := b.Text("#verdict"); v != "VALID (not clean: 0 governance gap(s))" && v != "VALID" {
		t.Errorf("verdict line %q", v)
	}
	if res.ExitCode != webverify.ExitValid {
		t.Errorf("valid VPEC: exit %d", res.ExitCode)
	}
	res = verify("tampered", tampered)
	if v := b.Text("#verdict"); !strings.HasPrefix(v, "INVALID") {
		t.Errorf("tampered verdict line %q", v)
	}
	failing := browsertest.Eval[string](b, `document.querySelector("#checks li[data-status=fail]").dataset.check`)
	if f := res.Report.FirstFailure(); f == nil || string(f.Name) != failing || failing != "signature" {
		t.Errorf("tampered: first failing check on the page %q, report %+v", failing, f)
	}
	// Markup in a document reaches the page as text: the schema check
	// names the unknown member, and nothing runs.
	hostile := filepath.Join(dir, "hostile.json")
	if err := os.WriteFile(hostile, []byte(`{"schema":"svc.vpec/v1","<img src=x onerror=window.pwned=1>":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	res = verify("hostile", hostile)
	if res.ExitCode == webverify.ExitValid {
		t.Error("hostile document verified")
	}
	if n := browsertest.Eval[int](b, `document.querySelectorAll("#result img").length + (window.pwned === undefined ? 0 : 100)`); n != 0 {
		t.Errorf("markup from the document became elements or ran (%d)", n)
	}
	if !strings.Contains(b.Text("#checks"), "<img src=x onerror=window.pwned=1>") {
		t.Errorf("the report does not show the unknown member as text: %q", b.Text("#checks"))
	}
	if after := b.Requests(); len(after) != len(loaded) {
		t.Errorf("requests after the page loaded: %q", after[len(loaded):])
	}
}

// TestBrowserNoJavaScript: with the page's JavaScript switched off, signing
// in, browsing and filing a calibration request all work (forms post and
// redirect).
func TestBrowserNoJavaScript(t *testing.T) {
	b := browsertest.New(t)
	e := newEnv(t, envOptions{})
	e.seed()
	if _, err := chromedp.Call(b.Ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	// The switch works: a page's own script does not run.
	b.Do("script probe", chromedp.Navigate(`data:text/html,<title>off</title><script>document.title="ran"</script>`))
	if title := browsertest.Eval[string](b, "document.title"); title != "off" {
		t.Fatalf("page scripts still run (title %q)", title)
	}
	b.Do("sign in", chromedp.Navigate(e.ts.URL+"/dashboard/"), chromedp.SendKeys(chromedp.CSS("#api_key"), e.keyA),
		chromedp.Click(chromedp.CSS("form.card button[type=submit]")), chromedp.WaitVisible(chromedp.CSS("#models")))
	const other = "sha256:4444444444444444444444444444444444444444444444444444444444444444"
	b.Do("request calibration", chromedp.SendKeys(chromedp.CSS("#new-hash"), other), chromedp.Click(chromedp.CSS("#new-hub")),
		chromedp.SendKeys(chromedp.CSS("#new-hub"), "acme/other"), chromedp.Click(chromedp.CSS("form.card.calform button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("#requested-id")))
	if got := b.Text(`#models tr[data-model="` + other + `"] .mark`); !strings.Contains(got, "Calibration requested") {
		t.Errorf("without JavaScript the new model shows %q", got)
	}
	b.Do("filter runs", chromedp.Navigate(e.ts.URL+"/dashboard/runs"), chromedp.SendKeys(chromedp.CSS("#f-workflow"), "wf-claims"),
		chromedp.Click(chromedp.CSS(".filters button[type=submit]")), chromedp.WaitVisible(chromedp.CSS(`#runs a[href="/dashboard/vpecs/`+e.vpecID+`"]`)))
	b.Screenshot("no-js-runs")
}
