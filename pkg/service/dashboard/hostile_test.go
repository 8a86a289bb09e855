package dashboard_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/dashboard"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
)

// spoof is text an attacker wants the dashboard to show as its own.
const spoof = "Your API key leaked: sign in again at https://evil.example/svc"

// TestHostileContentSpoofing: a link the attacker sends a signed-in user
// must not make a dashboard page show the attacker's sentence as the
// service's message. Found: /dashboard/registry?problem=<text> showed any
// text as "The calibration request was not filed: <text>" (role=alert),
// and ?requested=<text> as a filed request id. Now a form problem is
// shown in the answer to the post itself (422), and requested= only names
// a calibration request of the session's organisation.
func TestHostileContentSpoofing(t *testing.T) {
	e := newEnv(t, envOptions{})
	a := e.signIn(e.keyA)
	for _, p := range []string{
		"/dashboard/registry?problem=" + url.QueryEscape(spoof),
		"/dashboard/registry?requested=" + url.QueryEscape(spoof),
		"/dashboard/registry?requested=cal_req_" + url.QueryEscape(spoof),
	} {
		if body := e.get(a, p, http.StatusOK); strings.Contains(body, "evil.example") {
			t.Errorf("%s: the page shows the attacker's text", p)
		}
	}
	// Another organisation's request id is not shown either.
	ctx := context.Background()
	pb := e.pipeline(e.keyB, "wf-b")
	reqB, err := pb.RequestCalibration(ctx, client.CalibrationRequest{ONNXModelHash: modelRequested, DesiredGPUClasses: []string{"cpu"}})
	if err != nil {
		t.Fatal(err)
	}
	if body := e.get(a, "/dashboard/registry?requested="+reqB.RequestID, http.StatusOK); strings.Contains(body, reqB.RequestID) {
		t.Errorf("org A's registry names org B's request %s as filed", reqB.RequestID)
	}
	// The real flow still shows both: the problem in the answer to the
	// post, the id of a request just filed after the redirect.
	tok := csrfOf(t, e.get(a, "/dashboard/registry", http.StatusOK))
	resp, body := e.postBody(a, "/dashboard/calibration-requests", url.Values{"csrf": {tok}, "onnx_model_hash": {modelMissing}, "gpu_class": {"tpu"}})
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "The calibration request was not filed") || !strings.Contains(body, "tpu") {
		t.Errorf("invalid GPU class: %s\n%.400s", resp.Status, body)
	}
	resp, _ = e.postBody(a, "/dashboard/calibration-requests", url.Values{"csrf": {tok}, "onnx_model_hash": {modelMissing}, "gpu_class": {"cpu"}})
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "requested=cal_req_") {
		t.Fatalf("filed: %s %s", resp.Status, loc)
	}
	id, _ := url.QueryUnescape(loc[strings.Index(loc, "requested=")+len("requested="):])
	if body := e.get(a, loc, http.StatusOK); !strings.Contains(body, `<code id="requested-id">`+id+`</code>`) {
		t.Errorf("the filed request %s is not shown", id)
	}
}

// postBody posts a form and returns the answer with its body read.
func (e *env) postBody(c *http.Client, path string, form url.Values) (*http.Response, string) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.ts.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b := new(strings.Builder)
	copyLimited(b, resp)
	return resp, b.String()
}

// TestHostileSessions: session fixation, a CSRF token carried to another
// session, a signed-out cookie, and redirects after sign-in.
func TestHostileSessions(t *testing.T) {
	e := newEnv(t, envOptions{})
	u, _ := url.Parse(e.ts.URL + "/dashboard/")
	// Fixation: a session cookie planted before sign-in is replaced.
	c := e.httpClient()
	planted := strings.Repeat("A", 43)
	c.Jar.SetCookies(u, []*http.Cookie{{Name: dashboard.SessionCookie, Value: planted, Path: "/dashboard/"}})
	body := e.get(c, "/dashboard/signin", http.StatusOK)
	resp := e.post(c, "/dashboard/signin", url.Values{"csrf": {csrfOf(t, body)}, "api_key": {e.keyA}}, nil)
	var got string
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == dashboard.SessionCookie {
			got = ck.Value
		}
	}
	if resp.StatusCode != http.StatusSeeOther || got == "" || got == planted {
		t.Fatalf("fixation: %s, session cookie %q", resp.Status, got)
	}
	// A CSRF token of one session (A) does not work in another (B, same
	// organisation), and a post without Origin and Referer needs the
	// token still.
	a, b := e.signIn(e.keyA), e.signIn(e.keyA)
	tokA := csrfOf(t, e.get(a, "/dashboard/registry", http.StatusOK))
	form := url.Values{"onnx_model_hash": {modelRequested}, "gpu_class": {"cpu"}}
	form.Set("csrf", tokA)
	if resp := e.post(b, "/dashboard/calibration-requests", form, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("session A's token in session B: %s", resp.Status)
	}
	form.Del("csrf")
	if resp := e.post(b, "/dashboard/calibration-requests", form, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a post without a token (no Origin, no Referer): %s", resp.Status)
	}
	for _, origin := range []string{"null", "http://" + u.Host + ".evil.example", "http://evil.example@" + u.Host + "x"} {
		form.Set("csrf", tokA)
		if resp := e.post(a, "/dashboard/calibration-requests", form, http.Header{"Origin": {origin}}); resp.StatusCode != http.StatusForbidden {
			t.Errorf("Origin %q: %s", origin, resp.Status)
		}
	}
	// Signed out: the cookie, replayed with its token, is dead.
	replay := e.httpClient()
	replay.Jar.SetCookies(u, a.Jar.Cookies(u))
	if resp := e.post(a, "/dashboard/signout", url.Values{"csrf": {tokA}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out: %s", resp.Status)
	}
	form.Set("csrf", tokA)
	if resp := e.post(replay, "/dashboard/calibration-requests", form, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a post replaying a signed-out session's cookie and token: %s", resp.Status)
	}
	// Redirects after sign-in stay on the dashboard.
	for _, next := range []string{"//evil.example/", "https://evil.example/dashboard/", "/dashboard/\\evil", "/\\evil.example", "/dashboard/%0d%0aSet-Cookie:x=y", " /dashboard/x", "/dashboard//evil.example"} {
		c := e.httpClient()
		body := e.get(c, "/dashboard/signin?next="+url.QueryEscape(next), http.StatusOK)
		resp := e.post(c, "/dashboard/signin", url.Values{"csrf": {csrfOf(t, body)}, "api_key": {e.keyA}, "next": {next}}, nil)
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || loc.Host != "" || loc.Scheme != "" || !strings.HasPrefix(loc.Path, "/dashboard/") || strings.HasPrefix(loc.Path, "//") || strings.Contains(resp.Header.Get("Location"), "\n") {
			t.Errorf("next=%q: redirected to %q", next, resp.Header.Get("Location"))
		}
	}
}

// TestHostileDisclosedValues: values a record discloses are the
// document's (any client may send any text): the VPEC page reports them
// (today the check's counts only) and never carries them as markup.
func TestHostileDisclosedValues(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	p := e.pipeline(e.keyA, "wf-disclose")
	m := api.Manifest{Name: "kyc", Version: "1", Stages: []api.ManifestStage{{StageName: "kyc", ProofCeiling: "execution",
		RegulatoryReferences: []string{}, Disclose: []string{"<svg onload=alert(1)>"}}}}
	reg, err := p.RegisterCheck(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	run, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Record(ctx, "kyc", reg.ManifestID, vpec.ResultPass, []byte(`</code><script>alert(1)</script>`),
		client.WithVisibility(vpec.Transparent)); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Record(ctx, "kyc", reg.ManifestID, vpec.ResultPass, []byte(`{"<svg onload=alert(1)>":"<img src=x onerror=alert(2)>"}`),
		client.WithVisibility(vpec.Selective), client.WithManifest(m)); err != nil {
		t.Fatal(err)
	}
	res, err := run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	body := e.get(e.signIn(e.keyA), "/dashboard/vpecs/"+res.VPEC.VPECID, http.StatusOK)
	if !strings.Contains(body, "2 disclosed inputs match their commitments") {
		t.Fatalf("the VPEC page does not report the disclosures check passing")
	}
	for _, raw := range []string{"<script>", "<svg", "<img"} {
		if strings.Contains(body, raw) {
			t.Errorf("the VPEC page carries %q unescaped", raw)
		}
	}
}

// TestHostileScanBudget: the registry and runs pages read VPECs and
// records within Config.ScanBytes. Found: the registry read the bodies of
// the organisation's 200 most recent VPECs at once (each up to 256 MiB:
// 51 GB for one page view) and the runs page those of 100; a member of
// any organisation could exhaust the service's memory by filling a few
// runs and opening the dashboard. Now a VPEC whose run's records do not
// fit in what is left is skipped, and the page says so.
func TestHostileScanBudget(t *testing.T) {
	const budget = 64 << 10
	e := newEnv(t, envOptions{scanBytes: budget})
	e.seed() // org A: one small VPEC naming modelMissing
	ctx := context.Background()
	const bigModel = "sha256:3333333333333333333333333333333333333333333333333333333333333333"
	p := e.pipeline(e.keyA, "wf-big")
	run, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 12<<10)
	for i := range 8 { // about 100 KiB of records: over the budget alone
		if _, err := run.Record(ctx, "pii_detection", commitment.String([]byte("m")), vpec.ResultPass, []byte{byte(i)},
			client.WithModelHash(bigModel), client.WithDetails(map[string]any{"pad": pad})); err != nil {
			t.Fatal(err)
		}
	}
	res, err := run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a := e.signIn(e.keyA)
	reg := e.get(a, "/dashboard/registry", http.StatusOK)
	if strings.Contains(reg, bigModel) || !strings.Contains(reg, modelMissing) {
		t.Errorf("registry: the VPEC over the budget was read, or the small one was not")
	}
	if !strings.Contains(reg, `id="scan-note"`) || !strings.Contains(reg, "1 recent VPEC(s)") {
		t.Errorf("registry does not say it skipped a VPEC")
	}
	runs := e.get(a, "/dashboard/runs", http.StatusOK)
	if !strings.Contains(runs, `id="scan-note"`) || !strings.Contains(runs, "not read here") {
		t.Errorf("runs page does not say it skipped a VPEC")
	}
	// The VPEC's own page still shows it.
	if vp := e.get(a, "/dashboard/vpecs/"+res.VPEC.VPECID, http.StatusOK); !strings.Contains(vp, res.VPEC.VPECID) {
		t.Errorf("the skipped VPEC's own page")
	}
	// With the default budget everything is read and no note is shown.
	e2 := newEnv(t, envOptions{})
	e2.seed()
	if reg := e2.get(e2.signIn(e2.keyA), "/dashboard/registry", http.StatusOK); strings.Contains(reg, `id="scan-note"`) {
		t.Errorf("a note without a skipped VPEC")
	}
}

// TestHostileVerifyAdmission: VPEC pages and downloads verify or
// re-encode the whole VPEC (up to 256 MiB, a few times that in memory);
// concurrent views of large VPECs are admitted within Config.VerifyBytes
// and answered 503 with Retry-After past it, instead of all running at
// once (found: nothing bounded them).
func TestHostileVerifyAdmission(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.seed()
	d, err := dashboard.New(dashboard.Config{Storage: e.storage(), Trust: e.mat.Trust, Signer: e.mat.Signer, Timestamper: e.mat.TSA,
		AuthKey: func(ctx context.Context, key string) (store.APIKey, error) {
			return e.st.APIKeyByHash(ctx, server.HashKey(key))
		},
		RequestCalibration: func(context.Context, store.APIKey, api.CalibrationRequestInput) (api.CalibrationRequestView, error) {
			return api.CalibrationRequestView{}, errors.New("not in this test")
		},
		VerifyBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	d.Register(func(p string, h http.Handler) { mux.Handle(p, h) })
	ts := httptest.NewServer(mux)
	defer ts.Close()
	e.ts = ts // signIn and get talk to this dashboard
	a := e.signIn(e.keyA)
	page, file := "/dashboard/vpecs/"+e.vpecID, "/dashboard/vpecs/"+e.vpecID+"/vpec.sigstore.json"
	e.get(a, page, http.StatusOK)
	release := d.Busy(1 << 20) // a verification holding the whole budget
	for _, p := range []string{page, file} {
		resp, err := a.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s while the budget is taken: %s, Retry-After %q", p, resp.Status, resp.Header.Get("Retry-After"))
		}
	}
	release()
	e.get(a, page, http.StatusOK)
	e.get(a, file, http.StatusOK)
}
