package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
)

// TestIdempotencyKeyBoundToAPIKey: a close's Idempotency-Key belongs to the
// API key that sent it. Another key of the organisation replaying the same
// Idempotency-Key gets 409, never the first key's VPEC (found: it got the
// VPEC); the first key's retry still gets it.
func TestIdempotencyKeyBoundToAPIKey(t *testing.T) {
	h := newHostile(t, nil, nil)
	run := h.open(h.live)
	hdr := map[string]string{"Idempotency-Key": "close-42"}
	resp, doc := h.do("POST", "/api/v1/runs/"+run.RunID+"/close", h.live, nil, hdr)
	if resp.StatusCode != 200 {
		t.Fatalf("close: %s %s", resp.Status, doc)
	}
	resp, body := h.do("POST", "/api/v1/runs/"+run.RunID+"/close", h.live2, nil, hdr)
	if resp.StatusCode != 409 || errCode(body) != "run_sealed" {
		t.Errorf("another key replaying the Idempotency-Key: %s %.200s, want 409 run_sealed", resp.Status, body)
	}
	if resp, again := h.do("POST", "/api/v1/runs/"+run.RunID+"/close", h.live, nil, hdr); resp.StatusCode != 200 || string(again) != string(doc) {
		t.Errorf("the same key's retry: %s, same VPEC %v", resp.Status, string(again) == string(doc))
	}
}

// TestCloseRefusesBody: a close takes no body (docs/API.md); one sent with
// a body is refused 400 naming the problem, not silently closed (found:
// 200), and the run stays open.
func TestCloseRefusesBody(t *testing.T) {
	h := newHostile(t, nil, nil)
	run := h.open(h.live)
	for _, body := range []string{`{}`, `{"idempotency_key":"k1"}`} {
		resp, got := h.do("POST", "/api/v1/runs/"+run.RunID+"/close", h.live, body, nil)
		if resp.StatusCode != 400 || errCode(got) != "bad_request" || !strings.Contains(string(got), "takes no body") {
			t.Errorf("close with body %s: %s %s, want 400 naming the body", body, resp.Status, got)
		}
	}
	if resp, got := h.do("GET", "/api/v1/runs/"+run.RunID, h.live, nil, nil); resp.StatusCode != 200 || !strings.Contains(string(got), `"status":"open"`) {
		t.Errorf("the run after refused closes: %s %s", resp.Status, got)
	}
	if resp, got := h.do("POST", "/api/v1/runs/"+run.RunID+"/close", h.live, nil, nil); resp.StatusCode != 200 {
		t.Errorf("close without a body: %s %.200s", resp.Status, got)
	}
}

// TestNoSniff: every API response, JSON answers and errors included,
// carries X-Content-Type-Options: nosniff (found: none did).
func TestNoSniff(t *testing.T) {
	h := newHostile(t, nil, nil)
	_, _, id := h.closed(h.live, 1)
	for _, c := range []struct{ method, path, key string }{
		{"GET", "/healthz", ""},
		{"GET", "/.well-known/svc/trust-bundle.pem", ""},
		{"GET", "/api/v1/vpecs/" + id, h.live},
		{"GET", "/api/v1/vpecs/" + id, ""},
		{"GET", "/api/v1/nothing", h.live},
		{"POST", "/api/v1/runs", h.live},
	} {
		resp, _ := h.do(c.method, c.path, c.key, nil, nil)
		if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s (%s): X-Content-Type-Options %q", c.method, c.path, resp.Status, got)
		}
	}
}

// TestRootForBrowsers: GET / sends a browser to the dashboard; an API
// client still gets the JSON 404 no_endpoint (found: browsers got it too).
func TestRootForBrowsers(t *testing.T) {
	h := newHostile(t, nil, nil)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct {
		accept string
		want   int
	}{
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", 303},
		{"application/json", 404},
		{"*/*", 404},
		{"", 404},
		{"text/html;q=0, application/json", 404},
	} {
		req, _ := http.NewRequest("GET", h.url+"/", nil)
		if tc.accept != "" {
			req.Header.Set("Accept", tc.accept)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("GET / with Accept %q: %s, want %d", tc.accept, resp.Status, tc.want)
		}
		if tc.want == 303 && resp.Header.Get("Location") != "/dashboard/" {
			t.Errorf("GET / redirects to %q, want /dashboard/", resp.Header.Get("Location"))
		}
		if tc.want == 404 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Errorf("GET / for an API client: Content-Type %q", resp.Header.Get("Content-Type"))
		}
	}
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// TestSigninChecksRevocationFreshly: the API caches valid keys for 500 ms
// (keyCacheTTL); a key revoked within that time must not sign in to the
// dashboard, whose session would outlive the cache entry (found: it
// created a session). The clock is frozen, so the cache entry never expires.
func TestSigninChecksRevocationFreshly(t *testing.T) {
	frozen := time.Now()
	h := newHostile(t, func(c *server.Config) { c.Now = func() time.Time { return frozen } }, nil)
	if resp, body := h.do("POST", "/api/v1/runs", h.sb, map[string]any{}, nil); resp.StatusCode != 201 {
		t.Fatalf("open: %s %s", resp.Status, body) // the key is now in the cache
	}
	if _, err := h.st.RevokeAPIKey(context.Background(), keyID(t, h, h.sb), frozen); err != nil {
		t.Fatal(err)
	}
	if resp, _ := h.do("POST", "/api/v1/runs", h.sb, map[string]any{}, nil); resp.StatusCode != 201 {
		t.Fatalf("the API no longer serves the cached key: the test does not reproduce the window (%s)", resp.Status)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(h.url + "/dashboard/signin")
	if err != nil {
		t.Fatal(err)
	}
	page := new(strings.Builder)
	buf := make([]byte, 64<<10)
	for {
		n, err := resp.Body.Read(buf)
		page.Write(buf[:n])
		if err != nil {
			break
		}
	}
	resp.Body.Close()
	m := csrfInput.FindStringSubmatch(page.String())
	if m == nil {
		t.Fatalf("no CSRF field on the sign-in page")
	}
	req, _ := http.NewRequest("POST", h.url+"/dashboard/signin", strings.NewReader(url.Values{"csrf": {m[1]}, "api_key": {h.sb}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if resp, err = c.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusSeeOther {
		t.Fatalf("a key revoked within the key cache's lifetime signed in (%s to %s)", resp.Status, resp.Header.Get("Location"))
	}
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("sign-in with a revoked key: %s, want 401", resp.Status)
	}
}

// keyID is the stored id of API key key.
func keyID(t *testing.T, h *hostile, key string) string {
	t.Helper()
	k, err := h.st.APIKeyByHash(context.Background(), server.HashKey(key))
	if err != nil {
		t.Fatal(err)
	}
	return k.ID
}

// TestRecordedAtBeforeOpen: a record dated more than verify.MaxClockSkew
// before its run was opened is refused naming recorded_at (found:
// 0001-01-01 was accepted and the VPEC verified VALID); a run opened with
// the client's earlier opened_at (a queued open) takes records from then
// on, within api.MaxOpenedAtAge; and the VPEC carries the run's opened_at,
// which the verifier checks.
func TestRecordedAtBeforeOpen(t *testing.T) {
	h := newHostile(t, nil, nil)
	now := time.Now().UTC()
	post := func(run api.Run, at time.Time) (int, []byte) {
		recs := chain(run.RunID, 1)
		recs[0].RecordedAt = vpec.FormatTime(at)
		issue.Chain(vpec.Genesis(run.RunID), recs)
		resp, body := h.do("POST", "/api/v1/runs/"+run.RunID+"/records", h.live, recs[0], nil)
		return resp.StatusCode, body
	}
	openAt := func(claim string) api.Run {
		var run api.Run
		resp, body := h.do("POST", "/api/v1/runs", h.live, api.OpenRunRequest{WorkflowID: "hostile", OpenedAt: claim}, nil)
		if resp.StatusCode != 201 || json.Unmarshal(body, &run) != nil {
			t.Fatalf("open with opened_at %q: %s %s", claim, resp.Status, body)
		}
		return run
	}
	for _, c := range []struct {
		name   string
		claim  string
		at     time.Time
		status int
	}{
		{"year 1", "", time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), 400},
		{"a day before an open now", "", now.Add(-24 * time.Hour), 400},
		{"6 min before an open now", "", now.Add(-6 * time.Minute), 400},
		{"4 min before an open now", "", now.Add(-4 * time.Minute), 201},
		{"a day old, run opened (queued) two days ago", vpec.FormatTime(now.Add(-48 * time.Hour)), now.Add(-24 * time.Hour), 201},
		{"three days old, run opened two days ago", vpec.FormatTime(now.Add(-48 * time.Hour)), now.Add(-72 * time.Hour), 400},
		{"40 days old, run claimed opened a year ago", vpec.FormatTime(now.Add(-365 * 24 * time.Hour)), now.Add(-40 * 24 * time.Hour), 400},
		{"29 days old, run claimed opened a year ago", vpec.FormatTime(now.Add(-365 * 24 * time.Hour)), now.Add(-29 * 24 * time.Hour), 201},
	} {
		run := openAt(c.claim)
		code, body := post(run, c.at)
		if code != c.status || (code == 400 && errCode(body) != "bad_request") {
			t.Errorf("%s: %d %.300s, want %d", c.name, code, body, c.status)
		}
	}
	// The floor is the run's opened_at as the API shows it and the VPEC
	// signs it (milliseconds), not the service clock's finer reading: a
	// record exactly verify.MaxClockSkew before it is accepted, as the
	// verifier accepts it, and one a millisecond earlier is refused.
	// The same for a client's opened_at with digits below the
	// millisecond (RFC 3339 allows any number): the run shows, keeps and
	// signs it cut to the millisecond.
	fine := now.Add(-time.Hour).Truncate(time.Millisecond).Add(987654 * time.Nanosecond)
	for _, claim := range []string{"", fine.Format(time.RFC3339Nano)} {
		for _, c := range []struct {
			before time.Duration
			status int
		}{{verify.MaxClockSkew, 201}, {verify.MaxClockSkew + time.Millisecond, 400}} {
			run := openAt(claim)
			if claim != "" && run.OpenedAt != vpec.FormatTime(fine) {
				t.Errorf("opened_at %s: the run shows %s, want %s", claim, run.OpenedAt, vpec.FormatTime(fine))
			}
			opened, err := vpec.ParseTime(run.OpenedAt)
			if err != nil {
				t.Fatalf("the run's opened_at %q: %v", run.OpenedAt, err)
			}
			if code, body := post(run, opened.Add(-c.before)); code != c.status {
				t.Errorf("opened_at %q: recorded_at %s before the run's opened_at %s: %d %.300s, want %d", claim, c.before, run.OpenedAt, code, body, c.status)
			}
		}
	}
	if resp, body := h.do("POST", "/api/v1/runs", h.live, api.OpenRunRequest{OpenedAt: vpec.FormatTime(now.Add(time.Hour))}, nil); resp.StatusCode != 400 || !strings.Contains(string(body), `"field":"opened_at"`) {
		t.Errorf("opened_at an hour ahead: %s %s, want 400 naming opened_at", resp.Status, body)
	}
	run := openAt(vpec.FormatTime(now.Add(-time.Hour)))
	if code, body := post(run, now.Add(-50*time.Minute)); code != 201 {
		t.Fatalf("record: %d %s", code, body)
	}
	doc, _ := h.closeRun(h.live, run.RunID)
	var v vpec.VPEC
	if err := json.Unmarshal(doc, &v); err != nil || v.OpenedAt != vpec.FormatTime(now.Add(-time.Hour)) {
		t.Errorf("the VPEC's opened_at %q, want the run's %s (%v)", v.OpenedAt, vpec.FormatTime(now.Add(-time.Hour)), err)
	}
	if r, _ := verify.Verify(doc, verify.Options{Trust: h.mat.Trust}); r == nil || !r.Valid {
		t.Errorf("the VPEC with opened_at does not verify: %+v", r)
	}
}

// TestRecordIDLength: the service takes a record_id of 128 bytes in all
// (rec_ included) and refuses 129 and more naming record_id, the rule the
// verifier applies (docs/FORMATS.md, prefixed id).
func TestRecordIDLength(t *testing.T) {
	h := newHostile(t, nil, nil)
	for _, n := range []int{128, 129, 131, 132, 133} {
		run := h.open(h.live)
		recs := chain(run.RunID, 1)
		recs[0].RecordID = "rec_" + strings.Repeat("7", n-4)
		issue.Chain(vpec.Genesis(run.RunID), recs)
		resp, body := h.do("POST", "/api/v1/runs/"+run.RunID+"/records", h.live, recs[0], nil)
		want := 400
		if n <= names.MaxIDBytes {
			want = 201
		}
		if resp.StatusCode != want || (want == 400 && !strings.Contains(string(body), `"field":"record_id"`)) {
			t.Errorf("record_id of %d bytes: %s %.200s, want %d", n, resp.Status, body, want)
		}
	}
}
