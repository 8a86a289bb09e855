package cli_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/witnesstest"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
)

// witnessedServe is a `svc serve` process with a witness policy, its log
// file and its organisation's key.
type witnessedServe struct {
	t        *testing.T
	url, key string
	data     string
	logFile  string
	cmd      *exec.Cmd
}

// startWitnessedServe creates an organisation in data and starts `svc
// serve` on it on loopback with the given extra flags, its JSON log going
// to a file the test reads.
func startWitnessedServe(t *testing.T, data string, extra ...string) *witnessedServe {
	t.Helper()
	key := newOrgKey(t, "acme", "--data-dir", data)
	s := &witnessedServe{t: t, key: key.APIKey, data: data, logFile: filepath.Join(t.TempDir(), "serve.log")}
	addrFile := filepath.Join(t.TempDir(), "addr")
	s.cmd = exec.Command("svc", append([]string{"serve", "--data-dir", data, "--addr", "127.0.0.1:0", "--addr-file", addrFile, "--log-format", "json"}, extra...)...)
	logf, err := os.Create(s.logFile)
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.cmd.Process.Kill(); s.cmd.Wait(); logf.Close() })
	for range 400 {
		if b, err := os.ReadFile(addrFile); err == nil && len(b) > 0 {
			s.url = "http://" + strings.TrimSpace(string(b))
			return s
		}
		time.Sleep(25 * time.Millisecond)
	}
	log, _ := os.ReadFile(s.logFile)
	t.Fatalf("svc serve did not start:\n%s", log)
	return nil
}

func (s *witnessedServe) call(method, path string, body []byte) (int, []byte, http.Header) {
	s.t.Helper()
	req, _ := http.NewRequest(method, s.url+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data, resp.Header
}

// closeOne opens and closes a run and returns the VPEC's id and document.
func (s *witnessedServe) closeOne() (string, []byte) {
	s.t.Helper()
	code, body, _ := s.call("POST", "/api/v1/runs", []byte(`{"workflow_id":"claims"}`))
	var run api.Run
	if code != 201 || json.Unmarshal(body, &run) != nil {
		s.t.Fatalf("open: %d %s", code, body)
	}
	code, doc, _ := s.call("POST", "/api/v1/runs/"+run.RunID+"/close", nil)
	if code != 200 {
		s.t.Fatalf("close: %d %s", code, doc)
	}
	d, err := vpec.Parse(doc)
	if err != nil {
		s.t.Fatal(err)
	}
	return d.VPEC.VPECID, doc
}

// receipt asks for the VPEC's receipt until its witnessing is the one
// wanted (the witnesses answer after the checkpoint is published), and
// returns it with the unwitnessed reason.
func (s *witnessedServe) receipt(id string, witnessed bool) ([]byte, string) {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, body, hdr := s.call("GET", "/api/v1/vpecs/"+id+"/receipt?wait=30s", nil)
		if code != 200 {
			s.t.Fatalf("receipt of %s: %d %s", id, code, body)
		}
		got := hdr.Get(api.HeaderReceiptWitnessed)
		if got == strconv.FormatBool(witnessed) {
			return body, hdr.Get(api.HeaderReceiptUnwitnessed)
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("receipt of %s: %s %q (%s), want %v", id, api.HeaderReceiptWitnessed, got, hdr.Get(api.HeaderReceiptUnwitnessed), witnessed)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// witnessMetric is the value of svc_witness_cosignatures_total for result
// on the server's /metrics (0 when absent).
func (s *witnessedServe) witnessMetric(result string) int {
	s.t.Helper()
	resp, err := http.Get(s.url + "/metrics")
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^svc_witness_cosignatures_total\{result="` + regexp.QuoteMeta(result) + `"\} (\d+)`).FindSubmatch(body)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// logLines returns the server's JSON log lines at level whose message
// contains msg.
func (s *witnessedServe) logLines(level, msg string) []map[string]any {
	s.t.Helper()
	data, err := os.ReadFile(s.logFile)
	if err != nil {
		s.t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range bytes.Split(data, []byte("\n")) {
		var m map[string]any
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		if m["level"] == level && strings.Contains(m["msg"].(string), msg) {
			out = append(out, m)
		}
	}
	return out
}

// verifyWithPolicy runs svc-verify verify on the VPEC with its receipt and
// the witness policy against the service's trust bundle and returns the
// exit code and the transparency check of its JSON report.
func (s *witnessedServe) verifyWithPolicy(doc, receipt []byte, policy string) (int, map[string]any) {
	s.t.Helper()
	dir := s.t.TempDir()
	vp, rp, bp := filepath.Join(dir, "vpec.json"), filepath.Join(dir, "vpec.receipt.json"), filepath.Join(dir, "bundle.pem")
	for p, b := range map[string][]byte{vp: doc, rp: receipt, bp: []byte(svcOut(s.t, "serve", "trust-bundle", "--data-dir", s.data))} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			s.t.Fatal(err)
		}
	}
	cmd := exec.Command("svc-verify", "verify", vp, "--trust-root", bp, "--receipt", rp, "--witness-policy", policy, "--output", "json")
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		s.t.Fatal(err)
	}
	var rep struct {
		Verdict string           `json:"verdict"`
		Checks  []map[string]any `json:"checks"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		s.t.Fatalf("svc-verify --output json: %v\n%s", err, out)
	}
	for _, c := range rep.Checks {
		if c["name"] == "transparency" {
			return code, c
		}
	}
	s.t.Fatalf("svc-verify reports no transparency check:\n%s", out)
	return code, nil
}

// forkLog gives data directories one log key and origin, as an operator
// forking the log to show two histories would.
func forkLog(t *testing.T, origin string, dirs ...string) tlog.LogKey {
	t.Helper()
	pub, priv, err := signing.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	pemKey, err := signing.MarshalPrivateKeyPEM(priv)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		dir := filepath.Join(d, server.LogDir)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, server.LogKeyFile), pemKey, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, server.LogOriginFile), []byte(origin+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	k, err := tlog.NewLogKey(origin, pub)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSplitViewThroughServe: two `svc serve` data directories share one
// log key and origin (a forked log: two histories of one log) and one
// real witness (omniwitness on loopback). The first history is
// witnessed; the second's checkpoints the witness refuses (409/422), and
// the operator of the second sees it: the conflict metric, an ERROR log
// line naming the split view, and receipts marked unwitnessed with the
// reason over GET /api/v1/vpecs/{id}/receipt; svc-verify with the policy
// fails the VPEC on its transparency check.
func TestSplitViewThroughServe(t *testing.T) {
	witnesstest.Binary(t)
	const origin = "svc.test/forked-log"
	a, b := t.TempDir(), t.TempDir()
	key := forkLog(t, origin, a, b)
	w := witnesstest.Start(t, "witness.test/w1", witnesstest.Log{Origin: origin, VKey: key.String()})
	policy := filepath.Join(t.TempDir(), "policy")
	if err := os.WriteFile(policy, []byte(w.PolicyLine("w1")+"quorum w1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--witness-policy", policy, "--tlog-checkpoint-interval", "100ms", "--witness-timeout", "2s"}

	sa := startWitnessedServe(t, a, flags...)
	var id string
	var doc []byte
	for range 3 {
		id, doc = sa.closeOne()
	}
	receipt, _ := sa.receipt(id, true)
	if code, check := sa.verifyWithPolicy(doc, receipt, policy); code != 0 || check["status"] != "pass" {
		t.Fatalf("history A under the policy: exit %d, transparency %v", code, check)
	}
	if n := sa.witnessMetric("conflict"); n != 0 {
		t.Errorf("history A counted %d conflicts", n)
	}

	sb := startWitnessedServe(t, b, flags...)
	for range 3 {
		id, doc = sb.closeOne()
	}
	receipt, reason := sb.receipt(id, false)
	if !strings.Contains(reason, "different history") {
		t.Errorf("history B's receipt is unwitnessed because %q, want the split view named", reason)
	}
	if n := sb.witnessMetric("conflict"); n == 0 {
		t.Error(`svc_witness_cosignatures_total{result="conflict"} is 0 after a split view`)
	}
	if lines := sb.logLines("ERROR", "split view"); len(lines) == 0 {
		log, _ := os.ReadFile(sb.logFile)
		t.Errorf("no ERROR log line names the split view:\n%s", log)
	}
	code, check := sb.verifyWithPolicy(doc, receipt, policy)
	if code != 1 || check["status"] != "fail" || check["code"] != "WITNESS POLICY NOT SATISFIED" {
		t.Errorf("history B under the policy: exit %d, transparency %v; want exit 1 and the transparency check failed", code, check)
	}
}

// TestUnreachableWitnessThroughServe: the documented policy for a witness
// that cannot be reached (docs/TRANSPARENCY.md, fail open, visibly),
// through `svc serve`: it starts, closes keep working, receipts are
// marked unwitnessed with the reason, the metric counts the witness
// unreachable and a WARN line says so; svc-verify with the policy fails
// the transparency check.
func TestUnreachableWitnessThroughServe(t *testing.T) {
	witnesstest.Binary(t)
	down := witnesstest.New(t, "witness.test/down") // never started
	policy := filepath.Join(t.TempDir(), "policy")
	if err := os.WriteFile(policy, []byte(down.PolicyLine("w")+"quorum w\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startWitnessedServe(t, t.TempDir(), "--witness-policy", policy, "--tlog-checkpoint-interval", "100ms", "--witness-timeout", "2s")
	var id string
	var doc []byte
	for range 2 {
		id, doc = s.closeOne()
	}
	receipt, reason := s.receipt(id, false)
	if !strings.Contains(reason, "unreachable") {
		t.Errorf("the receipt is unwitnessed because %q, want the witness named unreachable", reason)
	}
	if n := s.witnessMetric("unreachable"); n == 0 {
		t.Error(`svc_witness_cosignatures_total{result="unreachable"} is 0`)
	}
	if lines := s.logLines("WARN", "did not cosign"); len(lines) == 0 {
		t.Error("no WARN log line says the witness did not cosign")
	}
	if code, check := s.verifyWithPolicy(doc, receipt, policy); code != 1 || check["status"] != "fail" || check["code"] != "WITNESS POLICY NOT SATISFIED" {
		t.Errorf("under the policy: exit %d, transparency %v; want exit 1 and the transparency check failed", code, check)
	}
}
