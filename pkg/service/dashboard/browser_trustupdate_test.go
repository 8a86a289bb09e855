package dashboard_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/svc-gov/svc/internal/browsertest"
	"github.com/svc-gov/svc/internal/testvectors"
	"github.com/svc-gov/svc/pkg/app/webverify"
)

// TestBrowserOfflineVerifierPolicyAndUpdates: the offline page in a real
// headless Chromium takes a witness policy file and trust root updates
// and gives every trust vector that uses them (and the witness window
// vectors) the verdict and exit code svc-verify gives, as the manifest
// says; a refused update is an error naming its code, with no report.
func TestBrowserOfflineVerifierPolicyAndUpdates(t *testing.T) {
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
	b.Do("open /verify", chromedp.Navigate(e.ts.URL+"/verify"))
	poll(b, "verifier ready", `document.body.dataset.ready === "true"`)
	e.ts.Close()
	b.Offline()
	ran := 0
	for _, v := range m.Vectors {
		if v.LogCheckpoint != "" || len(v.Circuits) > 0 || (v.WitnessPolicy == "" && len(v.TrustRootUpdates) == 0 && !strings.HasPrefix(v.Name, "receipt-witness-")) {
			continue
		}
		ran++
		// Clear every input a previous vector set.
		actions := []chromedp.Action[chromedp.Void]{
			chromedp.Evaluate[chromedp.Void](`window.svcLastResult = undefined; for (const id of ["receipt-file", "witness-policy-file", "trust-update-files"]) document.getElementById(id).value = ""; document.getElementById("require-log").checked = ` + map[bool]string{true: "true", false: "false"}[v.RequireLog]),
			chromedp.SetUploadFiles(chromedp.CSS("#vpec-file"), []string{filepath.Join(dir, v.File)}),
			chromedp.SetUploadFiles(chromedp.CSS("#trust-file"), []string{filepath.Join(dir, v.TrustRoot)}),
		}
		if v.Receipt != "" {
			actions = append(actions, chromedp.SetUploadFiles(chromedp.CSS("#receipt-file"), []string{filepath.Join(dir, v.Receipt)}))
		}
		if v.WitnessPolicy != "" {
			actions = append(actions, chromedp.SetUploadFiles(chromedp.CSS("#witness-policy-file"), []string{filepath.Join(dir, v.WitnessPolicy)}))
		}
		if len(v.TrustRootUpdates) > 0 {
			var files []string
			for _, u := range v.TrustRootUpdates {
				files = append(files, filepath.Join(dir, u))
			}
			actions = append(actions, chromedp.SetUploadFiles(chromedp.CSS("#trust-update-files"), files))
		}
		actions = append(actions, chromedp.Click(chromedp.CSS("#verify")))
		b.Do("verify "+v.Name, actions...)
		poll(b, "result of "+v.Name, `window.svcLastResult !== undefined`)
		var res webverify.Result
		if err := json.Unmarshal([]byte(browsertest.Eval[string](b, `JSON.stringify(window.svcLastResult)`)), &res); err != nil {
			t.Fatalf("%s: page result: %v", v.Name, err)
		}
		if v.TrustRootRefusal != "" {
			if res.Report != nil || res.ExitCode != v.Exit || !strings.Contains(res.Error, "("+v.TrustRootRefusal+")") {
				t.Errorf("%s: page exit %d error %q, want exit %d naming (%s)", v.Name, res.ExitCode, res.Error, v.Exit, v.TrustRootRefusal)
			}
			continue
		}
		if res.Report == nil || res.ExitCode != v.Exit || res.Report.Verdict != v.Verdict {
			t.Errorf("%s: page exit %d %+v (%s), want %d %q", v.Name, res.ExitCode, res.Report, res.Error, v.Exit, v.Verdict)
			continue
		}
		if len(v.Fails) > 0 {
			if failing := browsertest.Eval[string](b, `document.querySelector("#checks li[data-status=fail]").dataset.check`); failing != v.Fails[0] {
				t.Errorf("%s: failing check on the page %q, want %q", v.Name, failing, v.Fails[0])
			}
		}
		b.Screenshot("verify-trust-" + v.Name)
	}
	if ran < 8 {
		t.Fatalf("ran %d vectors with a witness policy, an update or a witness window; expected at least 8", ran)
	}
}
