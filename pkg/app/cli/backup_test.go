package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/svc-gov/svc/internal/doctest"
	"github.com/svc-gov/svc/internal/loadgen"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/backup"
)

// backupScenario is one backup procedure under test: how the service is
// started before and after, how it is backed up and restored.
type backupScenario struct {
	// storeA are the store flags of the original service (after
	// --data-dir).
	storeA []string
	// backup backs up dataA while the service serves it and records.
	backup func(t *testing.T, dataA string)
	// restore restores into the new data directory dataB and returns the
	// store flags of the restored service.
	restore func(t *testing.T, dataB string) []string
}

// apiClient talks to one service with one key.
type apiClient struct {
	t   *testing.T
	url string
	key string
	hc  *http.Client
}

func (c *apiClient) do(method, path string, body any, out any) int {
	c.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.url+path, r)
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		if p, ok := out.(*[]byte); ok {
			*p = data
		} else if resp.StatusCode/100 == 2 {
			if err := json.Unmarshal(data, out); err != nil {
				c.t.Fatalf("%s %s: %v: %s", method, path, err, data)
			}
		}
	}
	return resp.StatusCode
}

// record appends record seq to run, chained on prev, and returns its
// chain hash.
func (c *apiClient) record(runID string, seq int64, prev [32]byte) ([32]byte, int) {
	c.t.Helper()
	recs := []vpec.Record{loadgen.Record(runID, seq)}
	next, err := issue.Chain(prev, recs)
	if err != nil {
		c.t.Fatal(err)
	}
	return next, c.do("POST", "/api/v1/runs/"+runID+"/records", recs[0], nil)
}

func (c *apiClient) openRun(workflow string) string {
	c.t.Helper()
	var run api.Run
	if code := c.do("POST", "/api/v1/runs", api.OpenRunRequest{WorkflowID: workflow}, &run); code != 201 {
		c.t.Fatalf("open run: %d", code)
	}
	return run.RunID
}

// runBackupScenario drives a service the way production does and checks
// that a backup taken under load restores to the same service: every VPEC
// issued before the backup verifies offline with the trust bundle and is
// served byte for byte, a run open at backup time continues (a record
// appended after the restore chains onto its last one and the run closes
// to a valid VPEC), API keys work (and a revoked one stays revoked), the
// published profile is still there and verifies, and the trust bundle is
// byte-identical.
func runBackupScenario(t *testing.T, sc backupScenario) {
	dataA := t.TempDir()
	org := "bk-" + names.NewID("")[:8]
	flagsA := append([]string{"--data-dir", dataA}, sc.storeA...)
	key := newOrgKey(t, org, flagsA...)
	urlA, procA := startServe(t, dataA, sc.storeA...)
	bundleA := svcOut(t, append([]string{"serve", "trust-bundle"}, "--data-dir", dataA)...)
	trust, err := signing.ParseBundle([]byte(bundleA))
	if err != nil {
		t.Fatal(err)
	}
	// A sandbox key, and a key revoked before the backup.
	var sandbox, revoked struct {
		APIKey string `json:"api_key"`
		KeyID  string `json:"key_id"`
	}
	json.Unmarshal([]byte(svcOut(t, append([]string{"admin", "key", "create", "--org", org, "--sandbox", "--output", "json"}, flagsA...)...)), &sandbox)
	json.Unmarshal([]byte(svcOut(t, append([]string{"admin", "key", "create", "--org", org, "--live", "--output", "json"}, flagsA...)...)), &revoked)
	svcOut(t, append([]string{"admin", "key", "revoke", revoked.KeyID}, flagsA...)...)
	// A published profile.
	profileDoc := filepath.Join(vectorsDir, "profile", "pii-detection-v1.0.0.json")
	svcOut(t, append([]string{"registry", "publish", profileDoc}, flagsA...)...)

	hc := &http.Client{Timeout: 30 * time.Second}
	a := &apiClient{t: t, url: urlA, key: key.APIKey, hc: hc}
	// VPECs issued before the backup.
	issued := map[string][]byte{}
	for i := range 3 {
		runID := a.openRun("before-" + fmt.Sprint(i))
		prev := vpec.Genesis(runID)
		for seq := int64(1); seq <= 5; seq++ {
			var code int
			if prev, code = a.record(runID, seq, prev); code != 201 {
				t.Fatalf("record: %d", code)
			}
		}
		doc, _, err := loadgen.Close(context.Background(), hc, urlA, key.APIKey, runID)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			VPECID string `json:"vpec_id"`
		}
		json.Unmarshal(doc, &v)
		issued[v.VPECID] = doc
	}

	// Load while the backup runs: a run recording record after record
	// (open at backup time), and parallel runs of other records.
	open := a.openRun("open-at-backup")
	var acked atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		prev := vpec.Genesis(open)
		for seq := int64(1); ctx.Err() == nil; seq++ {
			recs := []vpec.Record{loadgen.Record(open, seq)}
			next, _ := issue.Chain(prev, recs)
			b, _ := json.Marshal(recs[0])
			req, _ := http.NewRequestWithContext(ctx, "POST", urlA+"/api/v1/runs/"+open+"/records", bytes.NewReader(b))
			req.Header.Set("Authorization", "Bearer "+key.APIKey)
			req.Header.Set("Content-Type", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				return // the context ended
			}
			resp.Body.Close()
			if resp.StatusCode != 201 {
				t.Errorf("record %d of the open run: %d", seq, resp.StatusCode)
				return
			}
			acked.Store(seq)
			prev = next
		}
	}()
	var load *loadgen.Result
	go func() {
		defer wg.Done()
		load = loadgen.Drive(ctx, loadgen.Config{URL: urlA, Key: key.APIKey, Runs: 4, HTTP: hc})
	}()
	for acked.Load() < 20 {
		time.Sleep(5 * time.Millisecond)
	}
	ackedBefore := acked.Load()
	// Everything the serving data directory holds is carried by a backup
	// or knowingly left out (a transparency log directory svc serve
	// started to keep there would show here).
	if left, err := backup.Unaccounted(dataA, backup.Layout{}); err != nil || len(left) > 0 {
		t.Fatalf("the data directory of a serving svc holds what a backup leaves out: %v %v", left, err)
	}
	start := time.Now()
	sc.backup(t, dataA)
	took := time.Since(start)
	during := acked.Load() - ackedBefore
	cancel()
	wg.Wait()
	t.Logf("backup took %s while the service recorded (%d records of the open run acknowledged during it; %d records by the parallel load)", took.Round(time.Millisecond), during, load.Acked())
	if during == 0 {
		t.Errorf("no record was acknowledged while the backup ran: the backup blocked the service, or was too quick to tell")
	}
	procA.Process.Signal(os.Interrupt)
	procA.Wait()

	// Restore into a fresh data directory and start the service there.
	dataB := filepath.Join(t.TempDir(), "restored")
	storeB := sc.restore(t, dataB)
	urlB, _ := startServe(t, dataB, storeB...)
	bundleB := svcOut(t, "serve", "trust-bundle", "--data-dir", dataB)
	if bundleB != bundleA {
		t.Fatalf("the trust bundle changed:\n%s\nwas\n%s", bundleB, bundleA)
	}
	var served []byte
	b := &apiClient{t: t, url: urlB, key: key.APIKey, hc: hc}
	if code := b.do("GET", api.TrustBundlePath, nil, &served); code != 200 || string(served) != bundleA {
		t.Fatalf("the restored service serves another trust bundle (%d)", code)
	}

	// Every VPEC issued before the backup: served as issued, and valid
	// offline (svc-verify, the auditor's tool) against the trust bundle.
	bundleFile := filepath.Join(t.TempDir(), "trust-bundle.pem")
	os.WriteFile(bundleFile, []byte(bundleA), 0o644)
	for id, doc := range issued {
		var got []byte
		if code := b.do("GET", "/api/v1/vpecs/"+id, nil, &got); code != 200 || !bytes.Equal(got, doc) {
			t.Fatalf("VPEC %s after the restore: %d, identical %v", id, code, bytes.Equal(got, doc))
		}
		f := filepath.Join(t.TempDir(), "vpec.json")
		os.WriteFile(f, doc, 0o644)
		if out, err := exec.Command("svc-verify", "verify", f, "--trust-root", bundleFile).CombinedOutput(); err != nil || !strings.Contains(string(out), "VALID") {
			t.Fatalf("svc-verify of %s: %v\n%s", id, err, out)
		}
	}

	// The run open at backup time continues where the backup left it.
	var run api.Run
	if code := b.do("GET", "/api/v1/runs/"+open, nil, &run); code != 200 || run.Status != api.RunOpen {
		t.Fatalf("open run after the restore: %d %+v", code, run)
	}
	if run.LastSequence < ackedBefore {
		t.Fatalf("the restored run holds %d records; %d were acknowledged before the backup began", run.LastSequence, ackedBefore)
	}
	last, err := commitment.ParseSHA256(run.LastChainHash)
	if err != nil {
		t.Fatal(err)
	}
	if _, code := b.record(open, run.LastSequence+1, last); code != 201 {
		t.Fatalf("a record chained onto the restored run's last one: %d", code)
	}
	doc, _, err := loadgen.Close(context.Background(), hc, urlB, key.APIKey, open)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := verify.Verify(doc, verify.Options{Trust: trust})
	if err != nil || !rep.Valid || !rep.IsClean || int64(rep.Records) != run.LastSequence+1 {
		t.Fatalf("VPEC of the continued run: %v %s, %d records (want %d)", err, rep.Verdict, rep.Records, run.LastSequence+1)
	}
	t.Logf("the open run had %d records acknowledged when the backup began and %d in the restored service; record %d chained on and closed to a valid VPEC",
		ackedBefore, run.LastSequence, run.LastSequence+1)

	// Keys: the sandbox key works, the revoked one is still refused.
	sb := &apiClient{t: t, url: urlB, key: sandbox.APIKey, hc: hc}
	sb.openRun("sandbox-after-restore")
	var eb api.ErrorBody
	rv := &apiClient{t: t, url: urlB, key: revoked.APIKey, hc: hc}
	if code := rv.do("POST", "/api/v1/runs", api.OpenRunRequest{WorkflowID: "x"}, &eb); code != 401 {
		t.Fatalf("the revoked key after the restore: %d", code)
	}
	// The profile is published and verifies against the trust bundle.
	var prof []byte
	if code := b.do("GET", "/api/v1/registry/profiles?model_hash=sha256:5f2b1c0e6d9a4b3f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a392817", nil, &prof); code != 200 {
		t.Fatalf("profile after the restore: %d %s", code, prof)
	}
	pf := filepath.Join(t.TempDir(), "profile.json")
	os.WriteFile(pf, prof, 0o644)
	if out, err := exec.Command("svc-verify", "verify-profile", pf, "--trust-root", bundleFile).CombinedOutput(); err != nil {
		t.Fatalf("svc-verify verify-profile after the restore: %v\n%s", err, out)
	}
}

// TestBackupRestoreSQLite: svc admin backup under load, svc admin restore
// into a new data directory, the same service.
func TestBackupRestoreSQLite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two services (not in -short)")
	}
	backupFile := filepath.Join(t.TempDir(), "svc-backup.tar.gz")
	runBackupScenario(t, backupScenario{
		backup: func(t *testing.T, dataA string) {
			if out, err := exec.Command("svc", "admin", "backup", "--data-dir", dataA, "--out", backupFile).CombinedOutput(); err != nil {
				t.Fatalf("svc admin backup: %v\n%s", err, out)
			}
			st, _ := os.Stat(backupFile)
			t.Logf("backup file: %d bytes, mode %v", st.Size(), st.Mode().Perm())
			if st.Mode().Perm() != 0o600 {
				t.Errorf("the backup file has mode %v, want 0600", st.Mode().Perm())
			}
		},
		restore: func(t *testing.T, dataB string) []string {
			out, err := exec.Command("svc", "admin", "restore", "--from", backupFile, "--data-dir", dataB).CombinedOutput()
			if err != nil {
				t.Fatalf("svc admin restore: %v\n%s", err, out)
			}
			// A second restore into the now full directory is refused.
			if out, err := exec.Command("svc", "admin", "restore", "--from", backupFile, "--data-dir", dataB).CombinedOutput(); exitCode(err) != 2 ||
				!strings.Contains(string(out), "not empty") {
				t.Fatalf("restore into a full directory: %v\n%s", err, out)
			}
			return nil
		},
	})
}

// operationsBlocks returns the shell blocks of docs/OPERATIONS.md that the
// test named runs (their doctest skip reason names it).
func operationsBlocks(t *testing.T, test string) []doctest.Block {
	t.Helper()
	md, err := os.ReadFile(filepath.Join(docsRoot, "docs", "OPERATIONS.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := doctest.Parse("docs/OPERATIONS.md", md)
	if err != nil {
		t.Fatal(err)
	}
	var out []doctest.Block
	for _, b := range blocks {
		if strings.Contains(b.Skip, test) {
			out = append(out, b)
		}
	}
	return out
}

// runOperationsBlock runs a block of docs/OPERATIONS.md as written, its
// paths and database names mapped into the test's.
func runOperationsBlock(t *testing.T, b doctest.Block, rewrite *strings.Replacer, env []string) {
	t.Helper()
	script := "set -euo pipefail\n" + rewrite.Replace(b.Text)
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s fails as written: %v\n--- block ---\n%s--- output ---\n%s", b.Name(), err, script, out)
	}
}

// TestBackupRestorePostgres: the PostgreSQL procedure of
// docs/OPERATIONS.md (pg_dump while serving, svc admin backup --keys-only;
// pg_restore into a new database, svc admin restore), run exactly as the
// docs write it, gives back the same service.
func TestBackupRestorePostgres(t *testing.T) {
	base := os.Getenv("SVC_TEST_POSTGRES_DSN")
	if base == "" {
		t.Skip("SVC_TEST_POSTGRES_DSN not set: start one with scripts/postgres.sh start (make unit does)")
	}
	if _, err := exec.LookPath("pg_dump"); err != nil {
		t.Skip("pg_dump not installed (the PostgreSQL client tools)")
	}
	blocks := operationsBlocks(t, "TestBackupRestorePostgres")
	if len(blocks) != 2 {
		t.Fatalf("docs/OPERATIONS.md has %d blocks for TestBackupRestorePostgres, want 2 (back up, restore)", len(blocks))
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	admin, err := pgxpool.New(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	suffix := strings.ToLower(names.NewID("")[:8])
	live, restored := "svc_live_"+suffix, "svc_restored_"+suffix
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+live); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, db := range []string{live, restored} {
			admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)")
		}
	})
	dsn := func(db string) string {
		v := *u
		v.Path = "/" + db
		return v.String()
	}
	backupDir := t.TempDir()
	var dataA string
	// libpq's environment, as the docs say to set it for psql.
	pgEnv := []string{"PGHOST=" + u.Hostname(), "PGPORT=" + u.Port(), "PGUSER=" + u.User.Username(), "SVC_DATABASE=" + dsn(live)}
	runBackupScenario(t, backupScenario{
		storeA: []string{"--database", dsn(live)},
		backup: func(t *testing.T, data string) {
			dataA = data
			runOperationsBlock(t, blocks[0], strings.NewReplacer("/backup/", backupDir+"/", "/var/lib/svc", dataA), pgEnv)
		},
		restore: func(t *testing.T, dataB string) []string {
			runOperationsBlock(t, blocks[1], strings.NewReplacer("/backup/", backupDir+"/", "/var/lib/svc-restored", dataB,
				"svc_restored", restored), pgEnv)
			for _, f := range []string{"svc-db.dump", "svc-keys.tar.gz"} {
				st, err := os.Stat(filepath.Join(backupDir, f))
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s: %d bytes", f, st.Size())
			}
			return []string{"--database", dsn(restored)}
		},
	})
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err == nil {
		return 0
	}
	return -1
}

// TestBackupThroughAge runs docs/OPERATIONS.md's encrypted backup as
// written: svc admin backup --out - into age, age -d into svc admin
// restore --from -, and the restored data directory is the same service
// (its trust bundle byte-identical).
func TestBackupThroughAge(t *testing.T) {
	for _, tool := range []string{"age", "age-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (apt-get install age)", tool)
		}
	}
	blocks := operationsBlocks(t, "TestBackupThroughAge")
	if len(blocks) != 1 {
		t.Fatalf("docs/OPERATIONS.md has %d blocks for TestBackupThroughAge, want 1", len(blocks))
	}
	data := t.TempDir()
	startServe(t, data)
	svcOut(t, "admin", "org", "create", "acme", "--data-dir", data)
	tmp := t.TempDir()
	runOperationsBlock(t, blocks[0], strings.NewReplacer("/var/lib/svc", data, "/tmp/", tmp+"/"), nil)
	enc, err := os.ReadFile(filepath.Join(tmp, "svc.tar.gz.age"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(enc, []byte("PRIVATE KEY")) || !bytes.HasPrefix(enc, []byte("age-encryption.org/v1")) {
		t.Fatalf("the encrypted backup is not an age file, or shows the keys")
	}
	before := svcOut(t, "serve", "trust-bundle", "--data-dir", data)
	if after := svcOut(t, "serve", "trust-bundle", "--data-dir", filepath.Join(tmp, "svc-restored")); after != before {
		t.Fatalf("the trust bundle after a restore through age:\n%s\nwas\n%s", after, before)
	}
}
