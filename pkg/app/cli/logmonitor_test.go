package cli_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/svctest"
	"github.com/svc-gov/svc/pkg/app/cli"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/logwriter"
	"github.com/svc-gov/svc/pkg/service/server"
)

// openLog opens a POSIX log in dir signed by priv, checkpoints every
// 100 ms, closed at cleanup.
func openLog(t *testing.T, dir string, priv ed25519.PrivateKey) *logwriter.Log {
	t.Helper()
	l, err := logwriter.Open(context.Background(), logwriter.Config{Dir: dir, Origin: "svc.test/log", Signer: priv, CheckpointInterval: logwriter.MinCheckpointInterval})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	return l
}

// getJSON GETs path with key and decodes the answer.
func getBody(t *testing.T, url, key string) []byte {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, data)
	}
	return data
}

type monitorOut struct {
	FromSize uint64 `json:"from_size"`
	ToSize   uint64 `json:"to_size"`
	Entries  []struct {
		VPECID string `json:"vpec_id"`
		Clean  bool   `json:"is_clean"`
		Index  uint64 `json:"log_index"`
	} `json:"entries"`
}

// TestLogMonitor: svc log monitor lists every VPEC of the organisation in
// the log, the dirty one its operator would rather not show included, then
// only the new ones on the next run (its state); a forked log (same key,
// same size, other entries) and a shrunk one exit 1 SPLIT VIEW and leave
// the state alone. svc log verify-consistency accepts two checkpoints of
// the log and refuses the fork's.
func TestLogMonitor(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(nil)
	l := openLog(t, t.TempDir(), priv)
	secret := make([]byte, 32)
	sv := svctest.New(t, nil, func(c *server.Config) {
		c.Log = &server.TransparencyLog{Log: l, Secret: secret, ReceiptRetryAfter: logwriter.MinCheckpointInterval}
	})
	var info api.LogInfo
	if err := json.Unmarshal(getBody(t, sv.URL+"/api/v1/log/org-key", sv.Key), &info); err != nil {
		t.Fatal(err)
	}
	p := sv.Pipeline(t)
	ctx := context.Background()
	closeRun := func(result vpec.CheckResult) *client.VPECResult {
		t.Helper()
		run, err := p.Open(ctx, "pp_1")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := run.Record(ctx, "pii_scan", "sha256:"+fmt.Sprintf("%064x", 1), result, []byte("x")); err != nil {
			t.Fatal(err)
		}
		res, err := run.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := res.AwaitReceipt(ctx); err != nil { // integrated: the checkpoint covers it
			t.Fatal(err)
		}
		return res
	}
	clean, empty := closeRun(vpec.ResultPass), (*client.VPECResult)(nil)
	{ // an empty run: dirty (empty_run gap)
		run, err := p.Open(ctx, "pp_1")
		if err != nil {
			t.Fatal(err)
		}
		if empty, err = run.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := empty.AwaitReceipt(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if !clean.VPEC.IsClean || empty.VPEC.IsClean {
		t.Fatalf("fixture: clean %v, empty %v", clean.VPEC.IsClean, empty.VPEC.IsClean)
	}
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	cp1 := filepath.Join(dir, "cp1")
	if err := os.WriteFile(cp1, getBody(t, sv.URL+"/log/checkpoint", ""), 0o644); err != nil {
		t.Fatal(err)
	}
	monitor := func(log string) (int, monitorOut, string) {
		t.Helper()
		code, stdout, stderr := svcRun(t, "log", "monitor", "--log", log, "--log-key", l.Key().String(), "--org-key", info.OrgKey, "--state", state, "--output", "json")
		var out monitorOut
		if code == 0 {
			if err := json.Unmarshal([]byte(stdout), &out); err != nil {
				t.Fatalf("monitor output %q: %v", stdout, err)
			}
		}
		return code, out, stderr
	}
	code, out, stderr := monitor(sv.URL + "/log/")
	if code != 0 || out.FromSize != 0 || out.ToSize != 2 || len(out.Entries) != 2 ||
		out.Entries[0].VPECID != clean.VPEC.VPECID || !out.Entries[0].Clean || out.Entries[1].VPECID != empty.VPEC.VPECID || out.Entries[1].Clean {
		t.Fatalf("first monitor: exit %d %+v %s; want the clean VPEC and the dirty one", code, out, stderr)
	}
	third := closeRun(vpec.ResultFail)
	code, out, stderr = monitor(sv.URL + "/log")
	if code != 0 || out.FromSize != 2 || out.ToSize != 3 || len(out.Entries) != 1 || out.Entries[0].VPECID != third.VPEC.VPECID {
		t.Fatalf("second monitor: exit %d %+v %s; want only the third VPEC", code, out, stderr)
	}
	cp2 := filepath.Join(dir, "cp2")
	if err := os.WriteFile(cp2, getBody(t, sv.URL+"/log/checkpoint", ""), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := svcRun(t, "log", "verify-consistency", cp1, cp2, "--log", sv.URL+"/log/", "--log-key", l.Key().String()); code != 0 {
		t.Fatalf("verify-consistency cp1 cp2: exit %d %s %s", code, stdout, stderr)
	}

	// A fork: the same key and origin, other entries.
	forkAt := func(n int) string {
		t.Helper()
		fdir := t.TempDir()
		fl := openLog(t, fdir, priv)
		ok, err := tlog.ParseOrgKey(info.OrgKey)
		if err != nil {
			t.Fatal(err)
		}
		var last uint64
		for i := range n {
			leaf, err := tlog.NewLeaf(ok, tlog.Entry{VPECID: fmt.Sprintf("vpec_fork-%d", i), OrgID: ok.Org(), WorkflowID: "moderation",
				Environment: "production", IssuedAt: time.Now(), Clean: true})
			if err != nil {
				t.Fatal(err)
			}
			a, err := fl.Append(ctx, leaf)
			if err != nil {
				t.Fatal(err)
			}
			last = a.Index
		}
		if _, err := fl.AwaitReceipt(ctx, last); err != nil {
			t.Fatal(err)
		}
		return fdir
	}
	before, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	forked := forkAt(3)
	for _, fdir := range []string{forked, forkAt(2)} {
		code, _, stderr := monitor(fdir)
		if code != cli.ExitInvalid {
			t.Errorf("monitor on a fork of %s: exit %d %s; want %d SPLIT VIEW", fdir, code, stderr, cli.ExitInvalid)
		}
		if after, _ := os.ReadFile(state); string(after) != string(before) {
			t.Error("a failed monitor changed its state")
		}
	}
	fcp := filepath.Join(dir, "fork-cp")
	data, err := os.ReadFile(filepath.Join(forked, "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fcp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := svcRun(t, "log", "verify-consistency", cp2, fcp, "--log", forked, "--log-key", l.Key().String()); code != cli.ExitInvalid {
		t.Errorf("verify-consistency of the log's checkpoint and the fork's: exit %d %s %s; want %d", code, stdout, stderr, cli.ExitInvalid)
	}
}
