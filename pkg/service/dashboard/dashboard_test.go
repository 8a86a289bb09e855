package dashboard_test

import (
	"context"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/dashboard"
	"github.com/svc-gov/svc/pkg/service/server"
)

func cookie(resp *http.Response, name string) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// TestSessionCookie: sign-in sets an HttpOnly, SameSite=Strict session
// cookie, Secure over TLS and not over plain HTTP, with a server-side
// expiry; the token is not the API key.
func TestSessionCookie(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		e := newEnv(t, envOptions{tls: useTLS})
		c := e.httpClient()
		body := e.get(c, "/dashboard/signin", http.StatusOK)
		resp := e.post(c, "/dashboard/signin", url.Values{"csrf": {csrfOf(t, body)}, "api_key": {e.keyA}}, nil)
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("tls=%v: sign-in %s", useTLS, resp.Status)
		}
		ck := cookie(resp, dashboard.SessionCookie)
		if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Secure != useTLS || ck.MaxAge != int(dashboard.DefaultSessionTTL.Seconds()) || ck.Path != "/dashboard/" {
			t.Errorf("tls=%v: session cookie %+v", useTLS, ck)
		}
		if ck != nil && (strings.Contains(ck.Value, e.keyA) || len(ck.Value) < 40) {
			t.Errorf("session token %q", ck.Value)
		}
		e.get(c, "/dashboard/registry", http.StatusOK)
	}
	// Behind an HTTPS proxy (X-Forwarded-Proto: https) the cookie is Secure.
	e := newEnv(t, envOptions{})
	c := e.httpClient()
	body := e.get(c, "/dashboard/signin", http.StatusOK)
	resp := e.post(c, "/dashboard/signin", url.Values{"csrf": {csrfOf(t, body)}, "api_key": {e.keyA}}, http.Header{"X-Forwarded-Proto": {"https"}})
	if ck := cookie(resp, dashboard.SessionCookie); ck == nil || !ck.Secure {
		t.Errorf("behind an HTTPS proxy: session cookie %+v", ck)
	}
}

// TestSignInRefusals: wrong keys are refused with the reason and no
// session; a sign-in post without the form's CSRF token, or from another
// origin, is refused.
func TestSignInRefusals(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.httpClient()
	body := e.get(c, "/dashboard/signin", http.StatusOK)
	tok := csrfOf(t, body)
	for _, k := range []string{"pk_live_nope", "sk_live_x"} {
		resp := e.post(c, "/dashboard/signin", url.Values{"csrf": {tok}, "api_key": {k}}, nil)
		if resp.StatusCode != http.StatusUnauthorized || cookie(resp, dashboard.SessionCookie) != nil {
			t.Errorf("key %q: %s, cookie %v", k, resp.Status, cookie(resp, dashboard.SessionCookie))
		}
		body = e.get(c, "/dashboard/signin", http.StatusOK)
		tok = csrfOf(t, body)
	}
	for name, c2 := range map[string]struct {
		form   url.Values
		header http.Header
	}{
		"no token":     {url.Values{"api_key": {e.keyA}}, nil},
		"wrong token":  {url.Values{"api_key": {e.keyA}, "csrf": {"AAAA"}}, nil},
		"cross origin": {url.Values{"api_key": {e.keyA}, "csrf": {tok}}, http.Header{"Origin": {"http://evil.example"}}},
	} {
		resp := e.post(c, "/dashboard/signin", c2.form, c2.header)
		if resp.StatusCode != http.StatusForbidden || cookie(resp, dashboard.SessionCookie) != nil {
			t.Errorf("%s: %s", name, resp.Status)
		}
	}
	// Without a session every page sends the browser to the sign-in page.
	resp, err := e.httpClient().Get(e.ts.URL + "/dashboard/runs?workflow=x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/dashboard/signin?next="+url.QueryEscape("/dashboard/runs?workflow=x") {
		t.Errorf("signed out GET: %s %s", resp.Status, resp.Header.Get("Location"))
	}
}

// TestCSRF: every form post of a signed-in session needs the session's
// CSRF token and a same-origin Origin.
func TestCSRF(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.signIn(e.keyA)
	tok := csrfOf(t, e.get(c, "/dashboard/registry", http.StatusOK))
	form := url.Values{"onnx_model_hash": {modelRequested}, "gpu_class": {"cpu"}}
	for name, h := range map[string]http.Header{"other origin": {"Origin": {"http://evil.example"}}, "other referer": {"Referer": {"http://evil.example/x"}}} {
		f := url.Values{"csrf": {tok}}
		for k, v := range form {
			f[k] = v
		}
		if resp := e.post(c, "/dashboard/calibration-requests", f, h); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %s", name, resp.Status)
		}
	}
	for _, bad := range []string{"", "x", csrfOf(t, e.get(e.httpClient(), "/dashboard/signin", http.StatusOK))} {
		f := url.Values{"csrf": {bad}}
		for k, v := range form {
			f[k] = v
		}
		if resp := e.post(c, "/dashboard/calibration-requests", f, nil); resp.StatusCode != http.StatusForbidden {
			t.Errorf("csrf %q: %s", bad, resp.Status)
		}
	}
	if resp := e.post(c, "/dashboard/signout", url.Values{}, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("sign-out without token: %s", resp.Status)
	}
	// With the token the request is filed.
	f := url.Values{"csrf": {tok}}
	for k, v := range form {
		f[k] = v
	}
	resp := e.post(c, "/dashboard/calibration-requests", f, http.Header{"Origin": {e.ts.URL}})
	if resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "requested=cal_req_") {
		t.Errorf("calibration request with token: %s %s", resp.Status, resp.Header.Get("Location"))
	}
}

// TestSessionEnds: sign-out deletes the session server-side (the old
// cookie no longer works), expiry is enforced by the server, and revoking
// the API key ends its sessions.
func TestSessionEnds(t *testing.T) {
	var offset atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	e := newEnv(t, envOptions{clock: clock})
	replay := func(c *http.Client) int {
		req, _ := http.NewRequest("GET", e.ts.URL+"/dashboard/registry", nil)
		u, _ := url.Parse(e.ts.URL + "/dashboard/")
		for _, ck := range c.Jar.Cookies(u) {
			req.AddCookie(ck)
		}
		resp, err := e.httpClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// Sign-out.
	c := e.signIn(e.keyA)
	u, _ := url.Parse(e.ts.URL + "/dashboard/")
	saved := e.httpClient()
	saved.Jar.SetCookies(u, c.Jar.Cookies(u))
	tok := csrfOf(t, e.get(c, "/dashboard/registry", http.StatusOK))
	if resp := e.post(c, "/dashboard/signout", url.Values{"csrf": {tok}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out: %s", resp.Status)
	}
	if code := replay(saved); code != http.StatusSeeOther {
		t.Errorf("the cookie of a signed-out session still works: %d", code)
	}
	// Expiry.
	c = e.signIn(e.keyA)
	e.get(c, "/dashboard/registry", http.StatusOK)
	offset.Store(int64(dashboard.DefaultSessionTTL + time.Second))
	if code := replay(c); code != http.StatusSeeOther {
		t.Errorf("an expired session still works: %d", code)
	}
	offset.Store(0)
	// Revocation.
	c = e.signIn(e.keyA)
	e.get(c, "/dashboard/registry", http.StatusOK)
	if _, err := server.RevokeAPIKey(context.Background(), e.st, server.KeyID(e.keyA), time.Now()); err != nil {
		t.Fatal(err)
	}
	if code := replay(c); code != http.StatusSeeOther {
		t.Errorf("a session of a revoked key still works: %d", code)
	}
}

// TestOrgIsolation: a session sees its organisation's runs and VPECs
// only; another organisation's VPEC page and downloads are 404.
func TestOrgIsolation(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testOrgIsolation(t, envOptions{}) })
	t.Run("postgres", func(t *testing.T) { testOrgIsolation(t, envOptions{postgres: true}) })
}

func testOrgIsolation(t *testing.T, o envOptions) {
	e := newEnv(t, o)
	e.seed()
	a, b := e.signIn(e.keyA), e.signIn(e.keyB)
	runsA := e.get(a, "/dashboard/runs", http.StatusOK)
	runsB := e.get(b, "/dashboard/runs", http.StatusOK)
	if !strings.Contains(runsA, e.vpecID) || strings.Contains(runsA, e.vpecIDB) || strings.Contains(runsA, "wf-beta") {
		t.Errorf("org A's runs page shows org B's run or misses its own")
	}
	if !strings.Contains(runsB, e.vpecIDB) || strings.Contains(runsB, e.vpecID) {
		t.Errorf("org B's runs page shows org A's run or misses its own")
	}
	regB := e.get(b, "/dashboard/registry", http.StatusOK)
	for _, m := range []string{modelMissing, modelRequested} {
		if strings.Contains(regB, m) {
			t.Errorf("org B's registry lists org A's model %s", m)
		}
	}
	e.get(b, "/dashboard/vpecs/"+e.vpecID, http.StatusNotFound)
	for _, f := range []string{"vpec.json", "vpec.sigstore.json", "attestation.sigstore.json"} {
		e.get(b, "/dashboard/vpecs/"+e.vpecID+"/"+f, http.StatusNotFound)
		e.get(a, "/dashboard/vpecs/"+e.vpecID+"/"+f, http.StatusOK)
	}
	e.get(a, "/dashboard/vpecs/"+e.vpecID+"/nope.txt", http.StatusNotFound)
}

// TestEscaping: names from documents (a check name, a workflow id) that
// are markup reach the pages escaped, never as markup.
func TestEscaping(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.seed()
	a := e.signIn(e.keyA)
	for _, p := range []string{"/dashboard/registry", "/dashboard/runs", "/dashboard/vpecs/" + e.vpecID, "/dashboard/runs?workflow=" + url.QueryEscape(hostileName)} {
		body := e.get(a, p, http.StatusOK)
		for _, raw := range []string{"<script>", "<img src=x"} {
			if strings.Contains(body, raw) {
				t.Errorf("%s carries %q unescaped", p, raw)
			}
		}
	}
	if reg := e.get(a, "/dashboard/registry", http.StatusOK); !strings.Contains(reg, "manifest pii&lt;img src=x onerror=alert(1)&gt;, stage classify") {
		t.Errorf("the registry does not show the hostile manifest name escaped")
	}
	vp := e.get(a, "/dashboard/vpecs/"+e.vpecID, http.StatusOK)
	if !strings.Contains(vp, "pii&lt;script&gt;alert(&#34;check&#34;)&lt;/script&gt;") {
		t.Errorf("VPEC page does not show the hostile check name escaped")
	}
	// A problem message of the form is shown escaped too.
	tok := csrfOf(t, e.get(a, "/dashboard/registry", http.StatusOK))
	if _, body := e.postBody(a, "/dashboard/calibration-requests", url.Values{"csrf": {tok}, "onnx_model_hash": {modelMissing}, "gpu_class": {"<script>alert(2)</script>"}}); strings.Contains(body, "<script>alert(2)") {
		t.Error("registry page carries the form's problem unescaped")
	}
}

// TestPagesWithoutJS: the pages carry no script and forbid scripts by CSP.
func TestPagesWithoutJS(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.seed()
	a := e.signIn(e.keyA)
	for _, p := range []string{"/dashboard/registry", "/dashboard/runs", "/dashboard/vpecs/" + e.vpecID, "/dashboard/profiles/svc-test/ner-class/v2.1.0"} {
		resp, err := a.Get(e.ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		b := new(strings.Builder)
		copyLimited(b, resp)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.Contains(b.String(), "<script") {
			t.Errorf("%s: %s, script tag %v", p, resp.Status, strings.Contains(b.String(), "<script"))
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
			t.Errorf("%s: CSP %q", p, csp)
		}
	}
}

var rowStatus = regexp.MustCompile(`data-model="(sha256:[0-9a-f]{64})" data-status="([a-z]+)"`)

func statuses(body string) map[string]string {
	out := map[string]string{}
	for _, m := range rowStatus.FindAllStringSubmatch(body, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// TestRegistryStatus: the registry lists the models of the manifests,
// records and requests with their status marks and the gaps count; after
// `svc registry publish` the missing model is published, its request
// closed and its requester e-mailed.
func TestRegistryStatus(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testRegistryStatus(t, envOptions{}) })
	t.Run("postgres", func(t *testing.T) { testRegistryStatus(t, envOptions{postgres: true}) })
}

func testRegistryStatus(t *testing.T, o envOptions) {
	e := newEnv(t, o)
	e.seed()
	// A record of a fourth model in a run still open (no VPEC yet).
	const modelOpen = "sha256:3333333333333333333333333333333333333333333333333333333333333333"
	run, err := e.pipeline(e.keyA, "wf-open").Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Record(context.Background(), "ner", commitment.String([]byte("m")), vpec.ResultPass, []byte("in"), client.WithModelHash(modelOpen)); err != nil {
		t.Fatal(err)
	}
	a := e.signIn(e.keyA)
	body := e.get(a, "/dashboard/registry", http.StatusOK)
	if !strings.Contains(body, "records of 1 open run(s)") {
		t.Error("the registry does not say the open run's model comes from an open run")
	}
	want := map[string]string{modelMissing: dashboard.StatusMissing, modelRequested: dashboard.StatusRequested, modelPublished: dashboard.StatusPublished, modelOpen: dashboard.StatusMissing}
	if got := statuses(body); !maps.Equal(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	if !strings.Contains(body, "2 model_profile_missing gap(s) in recent VPECs") || !strings.Contains(body, "svc-test/ner-class/v2.1.0") {
		t.Errorf("registry lacks the gap count or the published profile id")
	}
	tok := csrfOf(t, body)
	resp := e.post(a, "/dashboard/calibration-requests", url.Values{"csrf": {tok}, "onnx_model_hash": {modelMissing},
		"gpu_class": {"cpu"}, "hub_model_id": {"acme/pii-bert"}, "notify_email": {"ml-owner@acme.test"}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("calibration request: %s", resp.Status)
	}
	if got := statuses(e.get(a, "/dashboard/registry", http.StatusOK))[modelMissing]; got != dashboard.StatusRequested {
		t.Errorf("after the request: %s", got)
	}
	// Invalid input comes back as a message, and files nothing.
	resp, page := e.postBody(a, "/dashboard/calibration-requests", url.Values{"csrf": {tok}, "onnx_model_hash": {modelMissing}, "gpu_class": {"tpu"}})
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(page, "tpu") {
		t.Errorf("invalid GPU class: %s", resp.Status)
	}
	out := e.publishWithCLI()
	if !strings.Contains(out, "1 calibration request(s) marked published, 1 notice(s) sent") {
		t.Errorf("publish: %s", out)
	}
	if got := statuses(e.get(a, "/dashboard/registry", http.StatusOK))[modelMissing]; got != dashboard.StatusPublished {
		t.Errorf("after publication: %s", got)
	}
	msgs := e.smtp.Messages()
	if len(msgs) != 1 || msgs[0].To[0] != "ml-owner@acme.test" || !strings.Contains(msgs[0].Data, "svc-test/pii-detection-class/v1.0.0") {
		t.Errorf("e-mails %+v", msgs)
	}
	// The profile page: verified signature, chart and table.
	pp := e.get(a, "/dashboard/profiles/svc-test/pii-detection-class/v1.0.0", http.StatusOK)
	for _, s := range []string{"signature valid", "<svg", "Drift bounds of svc-test/pii-detection-class/v1.0.0", "LayerNorm", "1.8e-06"} {
		if !strings.Contains(pp, s) {
			t.Errorf("profile page lacks %q", s)
		}
	}
}

// TestVerifyRoute: /verify serves the page given, or the one built into
// the binary (make web), or else a 404 page saying how to build it; always
// under a policy that allows no connection.
func TestVerifyRoute(t *testing.T) {
	get := func(e *env) (*http.Response, string) {
		resp, err := e.httpClient().Get(e.ts.URL + "/verify")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b := new(strings.Builder)
		copyLimited(b, resp)
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'none'") || !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("/verify CSP %q", csp)
		}
		return resp, b.String()
	}
	resp, body := get(newEnv(t, envOptions{verifyPage: []byte("<!DOCTYPE html><title>given</title>")}))
	if resp.StatusCode != 200 || !strings.Contains(body, "<title>given</title>") {
		t.Errorf("given page: %s %q", resp.Status, body)
	}
	resp, body = get(newEnv(t, envOptions{}))
	if strings.Contains(body, `name="svc-wasm-sha256"`) {
		t.Logf("this test binary embeds the built page (%d bytes)", len(body))
		if resp.StatusCode != 200 || !strings.Contains(body, `id="wasm-b64"`) {
			t.Errorf("embedded page: %s", resp.Status)
		}
	} else if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "make web") {
		t.Errorf("without a built page /verify answers %s:\n%s", resp.Status, body)
	}
}

// TestUnknownPage: an unknown dashboard path is an HTML 404 page, not the
// API's JSON error; the API keeps its JSON 404 for unknown endpoints.
func TestUnknownPage(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.httpClient()
	resp, err := c.Get(e.ts.URL + "/dashboard/no-such-page")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("unknown dashboard page: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	resp, err = c.Get(e.ts.URL + "/api/v1/no-such-endpoint")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("unknown API endpoint: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
}
