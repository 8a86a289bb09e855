package dashboard_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/svc-gov/svc/internal/browsertest"
	"github.com/svc-gov/svc/internal/testvectors"
	"github.com/svc-gov/svc/pkg/app/quickstart"
	"github.com/svc-gov/svc/pkg/app/webverify"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/dashboard"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/server/setup"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// storeVPEC seals a fresh run of org acme with body as its VPEC, written
// straight to the store (as a corrupt or foreign row would be), and
// returns the VPEC id.
func (e *env) storeVPEC(id string, body []byte) string {
	e.t.Helper()
	ctx := context.Background()
	run, err := e.pipeline(e.keyA, "wf-stored").Open(ctx, "")
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.st.SealRun(ctx, "org_acme", run.ID(), store.VPEC{ID: id, RunID: run.ID(), OrgID: "org_acme", IssuedAt: time.Now().UTC(), Body: body}); err != nil {
		e.t.Fatal(err)
	}
	return id
}

// TestVPECPageUndecodable: a stored VPEC that does not decode is shown
// with the decoding error (and the verifier's report), not as an empty
// VPEC with no gaps and no records.
func TestVPECPageUndecodable(t *testing.T) {
	e := newEnv(t, envOptions{})
	a := e.signIn(e.keyA)
	for _, c := range []struct {
		name, body, want string
	}{
		{"not JSON", "this is not JSON", "invalid character"},
		{"records not an array", `{"schema":"svc.vpec/v1","records":"none"}`, "cannot unmarshal string"},
		{"truncated", `{"schema":"svc.vpec/v1","records":[{"sequence":1`, "unexpected end of JSON input"},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := e.storeVPEC("vpec_undecodable-"+strings.ReplaceAll(c.name, " ", "-"), []byte(c.body))
			body := e.get(a, "/dashboard/vpecs/"+id, http.StatusOK)
			i := strings.Index(body, `id="decode-error"`)
			if i < 0 {
				t.Fatalf("the page does not say the VPEC could not be decoded:\n%s", body)
			}
			if msg := html.UnescapeString(body[i:min(len(body), i+400)]); !strings.Contains(msg, c.want) {
				t.Errorf("decode error %q does not carry %q", msg, c.want)
			}
			if strings.Contains(body, `id="records"`) || strings.Contains(body, "<p>None.</p>") {
				t.Error("an undecodable VPEC is shown with empty gap and record tables")
			}
			if !strings.Contains(body, `id="verdict"`) || strings.Contains(body, ">"+"VALID") {
				t.Errorf("the verifier's report is missing or VALID")
			}
			if !strings.Contains(body, string(verify.CheckSchema)) {
				t.Error("the report does not name the schema check")
			}
		})
	}
}

// qsService is the quickstart's own service (its data directory: SQLite,
// keys, published circuits, the VPEC) served again on loopback with the
// dashboard and the offline verifier page, plus VPECs derived from the
// quickstart's: one whose mlp_head proof is garbled and one whose proof
// names a circuit the service never published, both re-sealed by the
// service's key and TSA and stored for the quickstart organisation.
type qsService struct {
	dir, key         string
	ts               *httptest.Server
	vpecID           string
	proofs           int    // records with a zk_proof
	headID           string // circuit id of the mlp_head proof
	entries          []string
	garbled, foreign string // VPEC files (and ids in the store)
	garbledID        string
	foreignID        string
	unpublished      string // the circuit id the foreign VPEC names
}

// reseal issues records again as the quickstart's service would (chain,
// signature, timestamp) for run runID.
func reseal(t *testing.T, runID string, recs []vpec.Record, mat *server.Material) []byte {
	t.Helper()
	doc, err := testvectors.SealRecords(runID, recs, mat.Signer, mat.TSA)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func startQuickstart(t *testing.T, page []byte) *qsService {
	t.Helper()
	ctx := context.Background()
	q := &qsService{dir: t.TempDir()}
	res, err := quickstart.Run(ctx, quickstart.Options{Dir: q.dir, Version: "test"})
	if err != nil {
		t.Fatalf("quickstart: %v", err)
	}
	if !res.Report.Valid {
		t.Fatalf("the quickstart's own verification: %s", res.Report.Verdict)
	}
	data := filepath.Join(q.dir, "data")
	mat, err := server.LoadMaterial(data)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(data, setup.SQLiteFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := server.New(server.Config{Storage: server.StorageOf(st), Signer: mat.Signer, Timestamper: mat.TSA, Trust: mat.Trust, Version: "test",
		Dashboard: server.DashboardConfig{VerifyPage: page}})
	if err != nil {
		t.Fatal(err)
	}
	q.ts = httptest.NewServer(srv)
	t.Cleanup(q.ts.Close)
	if q.key, _, err = server.CreateAPIKey(ctx, st, "quickstart", vpec.Production, time.Now()); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(res.VPECPath)
	if err != nil {
		t.Fatal(err)
	}
	var v vpec.VPEC
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	q.vpecID = v.VPECID
	if q.entries, err = filepath.Glob(filepath.Join(res.CircuitDir, "*.json")); err != nil || len(q.entries) == 0 {
		t.Fatalf("circuit entries in %s: %v", res.CircuitDir, err)
	}
	// The garbled copy: the mlp_head proof's first point negated (the
	// compressed encoding's sign flag flipped: still a canonical point,
	// so the proof decodes and fails the pairing check).
	garbled := append([]vpec.Record(nil), v.Records...)
	foreign := append([]vpec.Record(nil), v.Records...)
	for i, r := range v.Records {
		if r.ZKProof == nil {
			continue
		}
		q.proofs++
		if r.ZKProof.Circuit != zkverify.CircuitMLPHead {
			continue
		}
		q.headID = r.ZKProof.CircuitID
		p, err := base64.StdEncoding.DecodeString(r.ZKProof.Proof)
		if err != nil {
			t.Fatal(err)
		}
		p[0] ^= 0x40
		z := *r.ZKProof
		z.Proof = base64.StdEncoding.EncodeToString(p)
		garbled[i].ZKProof = &z
		q.unpublished = commitment.String([]byte("a circuit this service never published"))
		z2 := *r.ZKProof
		z2.CircuitID = q.unpublished
		foreign[i].ZKProof = &z2
	}
	if q.headID == "" {
		t.Fatal("the quickstart's VPEC has no mlp_head proof")
	}
	write := func(name string, doc []byte) string {
		p := filepath.Join(q.dir, name)
		if err := os.WriteFile(p, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Re-sealed unchanged, the records verify: what fails below fails for
	// the change made.
	if got := webverify.Verify(q.input(t, reseal(t, v.RunID, v.Records, mat), q.entries)); got.ExitCode != webverify.ExitValid {
		t.Fatalf("the quickstart's records re-sealed: %s", got.JSON())
	}
	q.garbled = write("garbled.json", reseal(t, v.RunID, garbled, mat))
	q.foreign = write("unpublished-circuit.json", reseal(t, v.RunID, foreign, mat))
	keep := func(path string) string {
		doc, _ := os.ReadFile(path)
		var sv vpec.VPEC
		if err := json.Unmarshal(doc, &sv); err != nil {
			t.Fatal(err)
		}
		runID := "run_" + strings.TrimPrefix(sv.VPECID, "vpec_")
		now := time.Now().UTC()
		if err := st.CreateRun(ctx, store.Run{ID: runID, OrgID: "org_quickstart", WorkflowID: "derived", Environment: string(vpec.Production), OpenedAt: now}); err != nil {
			t.Fatal(err)
		}
		if err := st.SealRun(ctx, "org_quickstart", runID, store.VPEC{ID: sv.VPECID, RunID: runID, OrgID: "org_quickstart", IssuedAt: now, Body: doc}); err != nil {
			t.Fatal(err)
		}
		return sv.VPECID
	}
	q.garbledID, q.foreignID = keep(q.garbled), keep(q.foreign)
	return q
}

// input is the page's input for a VPEC of the quickstart with the given
// circuit entry files.
func (q *qsService) input(t *testing.T, doc []byte, entries []string) webverify.Input {
	t.Helper()
	read := func(p string) webverify.File {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return webverify.File{Name: filepath.Base(p), Data: b}
	}
	in := webverify.Input{VPEC: webverify.File{Name: "vpec.json", Data: doc}, Trust: read(filepath.Join(q.dir, "trust-bundle.pem"))}
	if _, err := os.Stat(filepath.Join(q.dir, "profile.json")); err == nil {
		in.Profiles = []webverify.File{read(filepath.Join(q.dir, "profile.json"))}
	}
	for _, e := range entries {
		in.Circuits = append(in.Circuits, read(e))
	}
	return in
}

// TestBrowserProofs: the quickstart's VPEC, with its Groth16 proofs (four
// with ONNX Runtime, two without), is VALID with "ZK proofs valid" on the
// dashboard's VPEC page (the service's published circuit entries) and on
// the offline verifier page (the entries chosen as files, or as a
// folder); a garbled proof is INVALID naming zk_proofs on both; a missing
// entry is named, with what to add, on both. One quickstart run and one
// browser serve every subtest.
func TestBrowserProofs(t *testing.T) {
	b := browsertest.New(t)
	page, _ := verifyPage(t)
	q := startQuickstart(t, page)
	t.Logf("quickstart VPEC %s: %d proofs, %d circuit entries", q.vpecID, q.proofs, len(q.entries))
	valid := fmt.Sprintf("ZK proofs valid (%d proofs, circuit ids ", q.proofs)

	t.Run("dashboard", func(t *testing.T) {
		b := b.For(t)
		b.Do("sign in", chromedp.Navigate(q.ts.URL+"/dashboard/"), chromedp.WaitVisible(chromedp.CSS("#api_key")),
			chromedp.SendKeys(chromedp.CSS("#api_key"), q.key), chromedp.Click(chromedp.CSS("form.card button[type=submit]")),
			chromedp.WaitVisible(chromedp.CSS("#models")))
		open := func(id string) (verdict, zkStatus, zk string) {
			b.Do("VPEC page "+id, chromedp.Navigate(q.ts.URL+"/dashboard/vpecs/"+id), chromedp.WaitVisible(chromedp.CSS("#verdict")))
			return b.Text("#verdict"), browsertest.Eval[string](b, `document.querySelector("#checks li[data-check=zk_proofs]").dataset.status`),
				b.Text("#checks li[data-check=zk_proofs]")
		}
		verdict, status, zk := open(q.vpecID)
		if verdict != "VALID" || status != "pass" || !strings.Contains(zk, valid) {
			t.Errorf("quickstart VPEC on the dashboard: %q, zk_proofs %s %q", verdict, status, zk)
		}
		b.Screenshot("vpec-valid")
		verdict, status, zk = open(q.garbledID)
		first := browsertest.Eval[string](b, `document.querySelector("#checks li[data-status=fail]").dataset.check`)
		if !strings.HasPrefix(verdict, "INVALID") || status != "fail" || first != "zk_proofs" || !strings.Contains(zk, "groth16 verify") {
			t.Errorf("garbled proof on the dashboard: %q, first failure %s, zk_proofs %s %q", verdict, first, status, zk)
		}
		b.Screenshot("vpec-garbled")
		verdict, status, zk = open(q.foreignID)
		if verdict != "UNVERIFIED — CIRCUIT NOT AVAILABLE" || status != "fail" || !strings.Contains(zk, q.unpublished) ||
			!strings.Contains(zk, dashboard.CircuitAdvice) {
			t.Errorf("unpublished circuit on the dashboard: %q, zk_proofs %s %q", verdict, status, zk)
		}
		b.Screenshot("vpec-unpublished")
	})

	t.Run("offline page", func(t *testing.T) {
		b := b.For(t)
		b.Do("open /verify", chromedp.Navigate(q.ts.URL+"/verify"))
		poll(b, "verifier ready", `document.body.dataset.ready === "true"`)
		loaded := len(b.Requests())
		b.Offline()
		profile := []string{}
		if _, err := os.Stat(filepath.Join(q.dir, "profile.json")); err == nil {
			profile = []string{filepath.Join(q.dir, "profile.json")}
		}
		verifyIn := func(name, vpecPath string, entries []string, folder string) webverify.Result {
			actions := []chromedp.Action[chromedp.Void]{
				chromedp.Evaluate[chromedp.Void](`window.svcLastResult = undefined; document.getElementById("circuit-files").value = ""; document.getElementById("circuit-folder").value = ""`),
				chromedp.SetUploadFiles(chromedp.CSS("#vpec-file"), []string{vpecPath}),
				chromedp.SetUploadFiles(chromedp.CSS("#trust-file"), []string{filepath.Join(q.dir, "trust-bundle.pem")}),
			}
			if len(profile) > 0 {
				actions = append(actions, chromedp.SetUploadFiles(chromedp.CSS("#profile-files"), profile))
			}
			if len(entries) > 0 {
				actions = append(actions, chromedp.SetUploadFiles(chromedp.CSS("#circuit-files"), entries))
			}
			if folder != "" {
				actions = append(actions, chromedp.SetUploadFiles(chromedp.CSS("#circuit-folder"), []string{folder}))
			}
			b.Do("choose the files for "+name, actions...)
			b.Do("verify "+name, chromedp.Click(chromedp.CSS("#verify")))
			poll(b, "report of "+name, `window.svcLastResult !== undefined`)
			var res webverify.Result
			if err := json.Unmarshal([]byte(browsertest.Eval[string](b, `JSON.stringify(window.svcLastResult)`)), &res); err != nil || res.Report == nil {
				t.Fatalf("%s: page result: %v %+v", name, err, res)
			}
			b.Screenshot(strings.ReplaceAll(name, " ", "-"))
			return res
		}
		zkCheck := func(res webverify.Result) (verify.Status, string) {
			c := res.Report.Check(verify.CheckZK)
			return c.Status, c.Message
		}
		vp := filepath.Join(q.dir, "vpec.json")
		res := verifyIn("entries as files", vp, q.entries, "")
		if st, msg := zkCheck(res); res.ExitCode != webverify.ExitValid || b.Text("#verdict") != "VALID" || st != verify.Pass || !strings.HasPrefix(msg, valid) {
			t.Errorf("entries as files: exit %d %q, zk_proofs %s %q", res.ExitCode, b.Text("#verdict"), st, msg)
		}
		t.Logf("the quickstart VPEC with its %d proofs, verified in the page in %s ms", q.proofs, browsertest.Eval[string](b, `document.getElementById("result").dataset.ms`))
		doc, _ := os.ReadFile(vp)
		want := webverify.Verify(q.input(t, doc, q.entries))
		if st, msg := zkCheck(res); want.Report.Verdict != res.Report.Verdict || want.Report.Check(verify.CheckZK).Message != msg || st != want.Report.Check(verify.CheckZK).Status {
			t.Errorf("the page's zk_proofs %q, the library's %q", msg, want.Report.Check(verify.CheckZK).Message)
		}
		res = verifyIn("entries as a folder", vp, nil, filepath.Dir(q.entries[0]))
		if st, msg := zkCheck(res); res.ExitCode != webverify.ExitValid || st != verify.Pass || !strings.HasPrefix(msg, valid) {
			t.Errorf("entries as a folder: exit %d, zk_proofs %s %q (warnings %q)", res.ExitCode, st, msg, res.Warnings)
		}
		res = verifyIn("garbled proof", q.garbled, q.entries, "")
		failing := browsertest.Eval[string](b, `document.querySelector("#checks li[data-status=fail]").dataset.check`)
		if st, msg := zkCheck(res); res.ExitCode != webverify.ExitInvalid || failing != "zk_proofs" || st != verify.Fail || !strings.Contains(msg, "groth16 verify") {
			t.Errorf("garbled proof: exit %d, first failing check %q, zk_proofs %s %q", res.ExitCode, failing, st, msg)
		}
		var others []string
		for _, e := range q.entries {
			if filepath.Base(e) != strings.TrimPrefix(q.headID, "sha256:")+".json" {
				others = append(others, e)
			}
		}
		if len(others) != len(q.entries)-1 {
			t.Fatalf("the head's entry %s is not among %q", q.headID, q.entries)
		}
		res = verifyIn("missing entry", vp, others, "")
		shown := b.Text("#checks li[data-check=zk_proofs]")
		if res.ExitCode != webverify.ExitTrust || b.Text("#verdict") != "UNVERIFIED — CIRCUIT NOT AVAILABLE" || !strings.Contains(shown, q.headID) ||
			!strings.Contains(shown, "add its signed circuit entry under Circuit entries") || strings.Contains(shown, "--circuit") {
			t.Errorf("missing entry: exit %d %q, zk_proofs shown as %q", res.ExitCode, b.Text("#verdict"), shown)
		}
		// Dropped on the drop zone, the entries are recognised as circuit
		// entries (last: dropped files stay chosen).
		var files []string
		for _, e := range q.entries {
			data, err := os.ReadFile(e)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, fmt.Sprintf("new File([Uint8Array.from(atob(%q), c => c.charCodeAt(0))], %q)", base64.StdEncoding.EncodeToString(data), filepath.Base(e)))
		}
		b.Do("drop the entries", chromedp.Evaluate[chromedp.Void](`(() => { const dt = new DataTransfer(); [`+strings.Join(files, ",")+`].forEach(f => dt.items.add(f));
			document.getElementById("drop").dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true})); })()`))
		poll(b, "dropped files listed", fmt.Sprintf(`(document.getElementById("dropped").textContent.match(/\(circuit entry\)/g) || []).length === %d`, len(q.entries)))
		res = verifyIn("entries dropped", vp, nil, "")
		if st, msg := zkCheck(res); res.ExitCode != webverify.ExitValid || st != verify.Pass || !strings.HasPrefix(msg, valid) {
			t.Errorf("entries dropped: exit %d, zk_proofs %s %q", res.ExitCode, st, msg)
		}
		if after := b.Requests(); len(after) != loaded {
			t.Errorf("requests after the page loaded: %q", after[loaded:])
		}
	})
}
