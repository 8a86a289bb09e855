package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/signing"
)

// apiCall sends one request with key and returns the status, body and the
// log index header.
func apiCall(ctx context.Context, method, url, key string, body []byte) (int, []byte, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, "", err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, resp.Header.Get(api.HeaderLogIndex), err
}

// TestCrashLosesNoVPECFromLog kills svc serve with SIGKILL while closes
// run, restarts it, and checks that every VPEC it issued (every run with a
// vpec_id, whether or not its close was answered) is in the transparency
// log: 0 sealed VPECs missing from the log. Half the closes answer once
// the VPEC is stored (the default: its append may be cut short by the
// kill, and the restart appends it), half ask to wait for the index
// (?wait=log-index), each of them at the index it was answered. svc log
// monitor reads the log from the restarted service.
func TestCrashLosesNoVPECFromLog(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped with -short")
	}
	data := t.TempDir()
	key := newOrgKey(t, "crashlog", "--data-dir", data)
	url, proc := startServe(t, data, "--tlog-checkpoint-interval", "100ms")
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var runs []string
	type answer struct {
		index  string // the close's log index header
		waited bool   // the close asked for it
	}
	answered := map[string]answer{}
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		query := ""
		if w%2 == 0 {
			query = "?wait=log-index"
		}
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				code, body, _, err := apiCall(ctx, "POST", url+"/api/v1/runs", key.APIKey, []byte(`{"workflow_id":"crash"}`))
				if err != nil || code != 201 {
					return
				}
				var run api.Run
				if json.Unmarshal(body, &run) != nil {
					return
				}
				mu.Lock()
				runs = append(runs, run.RunID)
				mu.Unlock()
				code, body, idx, err := apiCall(ctx, "POST", url+"/api/v1/runs/"+run.RunID+"/close"+query, key.APIKey, nil)
				if err != nil || code != 200 {
					return
				}
				var v struct {
					VPECID string `json:"vpec_id"`
				}
				if json.Unmarshal(body, &v) == nil {
					mu.Lock()
					answered[v.VPECID] = answer{idx, query != ""}
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	if err := proc.Process.Kill(); err != nil { // SIGKILL: mid-close
		t.Fatal(err)
	}
	proc.Wait()
	cancel()
	wg.Wait()
	if len(answered) < 5 {
		t.Fatalf("only %d closes answered before the kill", len(answered))
	}

	url, _ = startServe(t, data, "--tlog-checkpoint-interval", "100ms")
	issued := map[string]bool{}
	for _, id := range runs {
		code, body, _, err := apiCall(context.Background(), "GET", url+"/api/v1/runs/"+id, key.APIKey, nil)
		if err != nil || code != 200 {
			t.Fatalf("GET run %s: %d %s %v", id, code, body, err)
		}
		var run api.Run
		if err := json.Unmarshal(body, &run); err != nil {
			t.Fatal(err)
		}
		if run.VPECID != "" {
			issued[run.VPECID] = true
		}
	}
	for id, a := range answered {
		if !issued[id] || a.waited != (a.index != "") {
			t.Fatalf("VPEC %s was answered (log index %q, waited %v) but its run does not name it, or the index header is wrong", id, a.index, a.waited)
		}
	}
	trust, err := signing.ParseBundle([]byte(svcOut(t, "serve", "trust-bundle", "--data-dir", data)))
	if err != nil || len(trust.LogKeys()) != 1 {
		t.Fatalf("trust bundle: %v, %d log keys", err, len(trust.LogKeys()))
	}
	_, body, _, err := apiCall(context.Background(), "GET", url+"/api/v1/log/org-key", key.APIKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	var info api.LogInfo
	if err := json.Unmarshal(body, &info); err != nil {
		t.Fatal(err)
	}
	// The backlog appended at start may still wait for its checkpoint.
	var listed map[string][]uint64
	for range 100 {
		out := svcOut(t, "log", "monitor", "--log", url+"/log/", "--log-key", trust.LogKeys()[0].String(), "--org-key", info.OrgKey,
			"--state", filepath.Join(t.TempDir(), "state"), "--output", "json")
		var res struct {
			Entries []struct {
				VPECID string `json:"vpec_id"`
				Index  uint64 `json:"log_index"`
			} `json:"entries"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		listed = map[string][]uint64{}
		for _, e := range res.Entries {
			listed[e.VPECID] = append(listed[e.VPECID], e.Index)
		}
		missing := 0
		for id := range issued {
			if len(listed[id]) == 0 {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	missing, dups := 0, 0
	for id := range issued {
		if len(listed[id]) == 0 {
			missing++
			t.Errorf("sealed VPEC %s is not in the transparency log", id)
		}
		if len(listed[id]) > 1 {
			dups++
		}
	}
	for id, a := range answered {
		found := !a.waited
		for _, i := range listed[id] {
			found = found || a.index == itoa(i)
		}
		if !found {
			t.Errorf("VPEC %s: its close answered log index %s, the log has it at %v", id, a.index, listed[id])
		}
	}
	t.Logf("%d runs, %d VPECs issued (%d closes answered) before SIGKILL: %d missing from the log, %d appended twice", len(runs), len(issued), len(answered), missing, dups)
}

func itoa(i uint64) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// TestShutdownFinishesLogAppends: closes answered before their leaves
// were appended (the default) are in the log once svc serve stops on
// SIGTERM: the published checkpoint covers them all, so no start has to
// append them.
func TestShutdownFinishesLogAppends(t *testing.T) {
	if testing.Short() {
		t.Skip("starts svc serve")
	}
	data := t.TempDir()
	key := newOrgKey(t, "shutdownlog", "--data-dir", data)
	url, proc := startServe(t, data)
	const n = 5
	for range n {
		code, body, _, err := apiCall(context.Background(), "POST", url+"/api/v1/runs", key.APIKey, []byte(`{"workflow_id":"stop"}`))
		if err != nil || code != 201 {
			t.Fatalf("open: %d %s %v", code, body, err)
		}
		var run api.Run
		if err := json.Unmarshal(body, &run); err != nil {
			t.Fatal(err)
		}
		code, body, idx, err := apiCall(context.Background(), "POST", url+"/api/v1/runs/"+run.RunID+"/close", key.APIKey, nil)
		if err != nil || code != 200 || idx != "" {
			t.Fatalf("close: %d %s index %q %v; want 200 without an index", code, body, idx, err)
		}
	}
	if err := proc.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := proc.Wait(); err != nil {
		t.Fatalf("svc serve on SIGTERM: %v", err)
	}
	cp, err := os.ReadFile(filepath.Join(data, "transparency", "tiles", "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(cp), "\n", 3)
	if len(lines) < 3 || lines[1] != strconv.Itoa(n) {
		t.Fatalf("the published checkpoint after SIGTERM:\n%s\nwant tree size %d", cp, n)
	}
}
