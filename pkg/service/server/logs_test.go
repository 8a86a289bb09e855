package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/svc-gov/svc/internal/svctest"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
)

// TestLogsFullRun runs a full run with JSON logs (open, records with
// details, output and a transparent disclosure, close, a dashboard
// sign-in) and checks every line is JSON, every request's lines carry its
// request id, and no line holds the API key or any input, output or
// detail.
func TestLogsFullRun(t *testing.T) {
	ctx := context.Background()
	var logs syncBuffer
	s := svctest.New(t, nil, func(c *server.Config) { c.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })
	secrets := map[string]string{
		"the API key":           s.Key,
		"an opaque input":       "opaque-input-4411-Jane-Doe",
		"an output":             "output-verdict-88ab",
		"a detail":              "detail-value-77cd",
		"a disclosed input":     "transparent-input-5522",
		"the disclosed base64":  "dHJhbnNwYXJlbnQtaW5wdXQtNTUyMg", // base64 of the disclosed input
		"the API key's secret":  strings.TrimPrefix(s.Key, "pk_live_"),
		"a detail key's secret": "detail-key-secret-99",
	}
	p := s.Pipeline(t)
	run, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	manifest := "sha256:" + fmt.Sprintf("%064x", 1)
	if _, err := run.Record(ctx, "pii_scan", manifest, vpec.ResultPass, []byte(secrets["an opaque input"]),
		client.WithOutput([]byte(secrets["an output"])), client.WithDetails(map[string]any{"note": secrets["a detail"], secrets["a detail key's secret"]: 1})); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Record(ctx, "toxicity", manifest, vpec.ResultPass, []byte(secrets["a disclosed input"]), client.WithVisibility(client.Transparent)); err != nil {
		t.Fatal(err)
	}
	// A refused record (bad field) logs nothing of its body either.
	call(t, "POST", s.URL+"/api/v1/runs/"+run.ID()+"/records", s.Key, `{"record_id":"`+secrets["a detail"]+`"}`)
	if _, err := run.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// The dashboard sign-in, through its form.
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(s.URL + "/dashboard/signin")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfInput.FindSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF field on the sign-in page")
	}
	resp, err = hc.PostForm(s.URL+"/dashboard/signin", url.Values{"csrf": {string(m[1])}, "api_key": {s.Key}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %s", resp.Status)
	}
	resp, err = hc.Get(s.URL + "/dashboard/runs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	out := logs.String()
	for what, secret := range secrets {
		if strings.Contains(out, secret) {
			t.Errorf("the logs hold %s (%q)", what, secret)
		}
	}
	var requests, withID int
	msgs := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not a JSON log line: %q", line)
		}
		msg, _ := rec["msg"].(string)
		msgs[msg] = true
		if msg == "request" || msg == "run opened" || msg == "run closed" {
			requests++
			if id, _ := rec["request_id"].(string); server.ValidRequestID(id) {
				withID++
			} else {
				t.Errorf("line without a request id: %s", line)
			}
		}
	}
	if !msgs["run opened"] || !msgs["run closed"] || requests < 8 {
		t.Fatalf("the logs miss the run's lines (%d request lines):\n%s", requests, out)
	}
}

// TestRequestID: a well-formed X-Request-Id is kept, answered and logged;
// anything else gets a fresh id.
func TestRequestID(t *testing.T) {
	var logs syncBuffer
	s := svctest.New(t, nil, func(c *server.Config) { c.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })
	fresh := regexp.MustCompile(`^[0-9a-f]{32}$`)
	for _, c := range []struct {
		name, sent string
		kept       bool
	}{
		{"uuid", "0b8e6c1e-3f1a-4f7e-9d55-2f1f6f0c9a11", true},
		{"load balancer id", "Root=1-67891233-abcdef012345678912345678:lb.1", true},
		{"none", "", false},
		{"too long", strings.Repeat("a", server.MaxRequestIDLen+1), false},
		{"space", "id with space", false},
		{"quote", `id"x`, false},
		{"non-ASCII", "idé", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", s.URL+"/healthz", nil)
			if c.sent != "" {
				req.Header.Set(server.RequestIDHeader, c.sent)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			got := resp.Header.Get(server.RequestIDHeader)
			switch {
			case c.kept && got != c.sent:
				t.Errorf("answered id %q, want the client's %q", got, c.sent)
			case !c.kept && !fresh.MatchString(got):
				t.Errorf("answered id %q, want a fresh one", got)
			}
			if !strings.Contains(logs.String(), `"request_id":"`+got+`"`) {
				t.Errorf("id %q not in the logs", got)
			}
		})
	}
}

// FuzzValidRequestID: an accepted id is bounded and safe in a header and
// a log line.
func FuzzValidRequestID(f *testing.F) {
	for _, s := range []string{"", "abc", "0b8e6c1e-3f1a", "a b", "x\ny", strings.Repeat("z", 200)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if !server.ValidRequestID(id) {
			return
		}
		if len(id) == 0 || len(id) > server.MaxRequestIDLen || strings.ContainsAny(id, " \t\r\n\"\\<>") {
			t.Fatalf("accepted %q", id)
		}
		b, _ := json.Marshal(id)
		if string(b) != `"`+id+`"` {
			t.Fatalf("accepted %q, which JSON escapes", id)
		}
	})
}
