package logwriter_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/tlogtest"
	"github.com/svc-gov/svc/pkg/client/logmonitor"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/service/logwriter"
)

// killDir makes the re-executed test binary append entries of prefix
// $SVC_TLOG_APPEND_PREFIX to the log in it, from 8 goroutines, printing
// "<index> <vpec id>" as each Append returns, until it is killed.
const killDir = "SVC_TLOG_KILL_DIR"

func appendUntilKilled(dir, prefix string) error {
	ctx := context.Background()
	l, err := logwriter.Open(ctx, logwriter.Config{Dir: dir, Origin: tlogtest.Origin, Signer: tlogtest.Key("log"), CheckpointInterval: logwriter.MinCheckpointInterval})
	if err != nil {
		return err
	}
	key, err := tlog.DeriveOrgKey(tlogtest.Secret, "org-a")
	if err != nil {
		return err
	}
	lines := make(chan string, 64)
	for w := range 8 {
		go func() {
			for i := w; ; i += 8 {
				leaf, err := tlog.NewLeaf(key, tlogtest.Entry(prefix, i, "org-a", "wf", true))
				if err != nil {
					lines <- "error " + err.Error()
					return
				}
				a, err := l.Append(ctx, leaf)
				if err != nil {
					lines <- "error " + err.Error()
					return
				}
				lines <- fmt.Sprintf("%d %s", a.Index, leaf.VPECID)
			}
		}()
	}
	for line := range lines {
		// One write per line, unbuffered: what the parent reads was
		// acknowledged before the kill.
		if _, err := os.Stdout.WriteString(line + "\n"); err != nil {
			return err
		}
	}
	return nil
}

// TestKilledAppender: a process appending from 8 goroutines is killed
// (SIGKILL) after a few, some dozens and a hundred acknowledged appends;
// after each kill the log reopens, and every entry whose index Append
// returned is in the log at that index, in a tree that hashes to its
// checkpoint.
func TestKilledAppender(t *testing.T) {
	dir := t.TempDir()
	acked := map[uint64]string{}
	for round, after := range []int{3, 40, 120} {
		prefix := string(rune('k' + round))
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), killDir+"="+dir, helperPrefix+"="+prefix)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		stderr := new(syncWriter)
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		n := 0
		for n < after && sc.Scan() {
			var idx uint64
			var id string
			if _, err := fmt.Sscanf(sc.Text(), "%d %s", &idx, &id); err != nil {
				t.Fatalf("round %d: %q: %v\n%s", round, sc.Text(), err, stderr.String())
			}
			if prev, ok := acked[idx]; ok {
				t.Fatalf("round %d: index %d given to %s and before to %s", round, idx, id, prev)
			}
			acked[idx] = id
			n++
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		if n < after {
			t.Fatalf("round %d: %d acknowledged appends before the output ended, want %d\n%s", round, n, after, stderr.String())
		}
	}

	// Reopen: the log publishes a checkpoint of everything sequenced.
	l := tlogtest.OpenLog(t, dir, "log", nil)
	var top uint64
	for i := range acked {
		top = max(top, i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := l.AwaitReceipt(ctx, top); err != nil {
		t.Fatal(err)
	}
	v := tlogtest.Verifier(t, "log", "quorum none\n")
	res, err := logmonitor.Run(ctx, logmonitor.DirSource(dir), logmonitor.Options{Verifier: v, Keys: []tlog.OrgKey{tlogtest.OrgKey(t, "org-a")}})
	if err != nil {
		t.Fatalf("the tree after the kills: %v", err)
	}
	at := map[uint64]string{}
	for _, e := range res.Entries {
		at[e.Index] = e.VPECID
	}
	lost := 0
	for idx, id := range acked {
		if at[idx] != id {
			lost++
			if lost < 5 {
				t.Errorf("acknowledged %s at %d; the log has %q there", id, idx, at[idx])
			}
		}
	}
	t.Logf("%d acknowledged appends over 3 kills, %d lost; the log holds %d entries", len(acked), lost, res.To.Size)
	if r, err := l.Receipt(ctx, top); err != nil || !strings.Contains(string(r.JSON), acked[top]) {
		t.Errorf("receipt of the last acknowledged entry: %v", err)
	}
}
