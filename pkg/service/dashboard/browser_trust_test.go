package dashboard_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/svc-gov/svc/internal/browsertest"
	"github.com/svc-gov/svc/internal/testvectors"
	"github.com/svc-gov/svc/pkg/app/webverify"
)

// TestBrowserOfflineVerifierTrust: the offline page in a real headless
// Chromium takes a trust root JSON and a receipt file: a VPEC with its
// receipt is VALID with the transparency check passed, a receipt of
// another VPEC fails that check by name, a key outside its window fails
// the signature check by name, and "require a log receipt" without one is
// INVALID — NO LOG RECEIPT; each as the trust vectors' manifest says.
func TestBrowserOfflineVerifierTrust(t *testing.T) {
	b := browsertest.New(t)
	page, _ := verifyPage(t)
	e := newEnv(t, envOptions{verifyPage: page})
	dir, err := filepath.Abs(filepath.Join("../../../testdata/vectors", testvectors.TrustDir))
	if err != nil {
		t.Fatal(err)
	}
	m, err := testvectors.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]testvectors.Vector{}
	for _, v := range m.Vectors {
		byName[v.Name] = v
	}
	b.Do("open /verify", chromedp.Navigate(e.ts.URL+"/verify"))
	poll(b, "verifier ready", `document.body.dataset.ready === "true"`)
	e.ts.Close()
	b.Offline()
	for _, name := range []string{"receipt-valid", "receipt-other-vpec", "key-expired", "no-receipt-required"} {
		v, ok := byName[name]
		if !ok {
			t.Fatalf("no trust vector %s", name)
		}
		actions := []chromedp.Action[chromedp.Void]{
			chromedp.Evaluate[chromedp.Void](`window.svcLastResult = undefined; document.getElementById("receipt-file").value = ""; document.getElementById("require-log").checked = ` + map[bool]string{true: "true", false: "false"}[v.RequireLog]),
			chromedp.SetUploadFiles(chromedp.CSS("#vpec-file"), []string{filepath.Join(dir, v.File)}),
			chromedp.SetUploadFiles(chromedp.CSS("#trust-file"), []string{filepath.Join(dir, v.TrustRoot)}),
		}
		if v.Receipt != "" {
			actions = append(actions, chromedp.SetUploadFiles(chromedp.CSS("#receipt-file"), []string{filepath.Join(dir, v.Receipt)}))
		}
		actions = append(actions, chromedp.Click(chromedp.CSS("#verify")))
		b.Do("verify "+name, actions...)
		poll(b, "report of "+name, `window.svcLastResult !== undefined`)
		var res webverify.Result
		if err := json.Unmarshal([]byte(browsertest.Eval[string](b, `JSON.stringify(window.svcLastResult)`)), &res); err != nil || res.Report == nil {
			t.Fatalf("%s: page result: %v %+v", name, err, res)
		}
		if res.ExitCode != v.Exit || res.Report.Verdict != v.Verdict {
			t.Errorf("%s: page exit %d %q, want %d %q", name, res.ExitCode, res.Report.Verdict, v.Exit, v.Verdict)
		}
		if len(v.Fails) > 0 {
			failing := browsertest.Eval[string](b, `document.querySelector("#checks li[data-status=fail]").dataset.check`)
			if failing != v.Fails[0] {
				t.Errorf("%s: failing check on the page %q, want %q", name, failing, v.Fails[0])
			}
		} else if got := browsertest.Eval[string](b, `document.querySelector("#checks li[data-check=transparency]").dataset.status`); got != "pass" {
			t.Errorf("%s: transparency check on the page %q, want pass", name, got)
		}
		b.Screenshot("verify-trust-" + name)
	}
}
