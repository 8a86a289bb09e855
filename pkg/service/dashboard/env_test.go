package dashboard_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/pgtest"
	"github.com/svc-gov/svc/internal/tlogtest"
	"github.com/svc-gov/svc/pkg/app/cli"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/logwriter"
	"github.com/svc-gov/svc/pkg/service/notify"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/postgres"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// Models of the seeded organisation: one whose profile is published, one
// with a calibration request, and one without either whose records raise
// model_profile_missing gaps (the model of the test profile vector, so
// publishing that vector resolves it).
const (
	modelMissing   = "sha256:5f2b1c0e6d9a4b3f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a392817"
	modelPublished = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	modelRequested = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	profileVector  = "../../../testdata/vectors/profile/pii-detection-v1.0.0.json"
	hostileCheck   = `pii<script>alert("check")</script>`
	hostileName    = `pii<img src=x onerror=alert(1)>`
)

// env is a real svc service on loopback (SQLite in a data directory, the
// built-in TSA, the dashboard), two organisations with keys, and a
// loopback SMTP listener.
type env struct {
	t          *testing.T
	dir        string
	st         store.Store
	dsn        string // the PostgreSQL DSN when the store is PostgreSQL
	mat        *server.Material
	srv        *server.Server
	ts         *httptest.Server
	keyA, keyB string
	smtp       *notify.TestServer
	now        time.Time
	vpecID     string // org A's VPEC
	vpecIDB    string // org B's VPEC
	log        *logwriter.Log
}

type envOptions struct {
	postgres   bool // PostgreSQL (SVC_TEST_POSTGRES_DSN, a fresh schema) instead of SQLite
	tls        bool
	verifyPage []byte
	clock      func() time.Time
	scanBytes  int64 // the dashboard's ScanBytes (0: the default)
	log        bool  // a transparency log (Tessera's POSIX backend in the data directory, e.log)
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{t: t, dir: t.TempDir(), now: time.Now().UTC()}
	var err error
	if e.mat, err = server.LoadMaterial(e.dir); err != nil {
		t.Fatal(err)
	}
	if o.postgres {
		e.dsn = pgtest.New(t, "svc_dash_").DSN
		e.st, err = postgres.Open(ctx, e.dsn)
	} else {
		e.st, err = sqlite.Open(ctx, filepath.Join(e.dir, cli.SQLiteFile))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.st.Close() })
	for _, org := range []string{"acme", "beta"} {
		if _, err := server.CreateOrg(ctx, e.st, org, server.TierStandard, e.now); err != nil {
			t.Fatal(err)
		}
	}
	if e.keyA, _, err = server.CreateAPIKey(ctx, e.st, "acme", vpec.Production, e.now); err != nil {
		t.Fatal(err)
	}
	if e.keyB, _, err = server.CreateAPIKey(ctx, e.st, "beta", vpec.Production, e.now); err != nil {
		t.Fatal(err)
	}
	cfg := server.Config{Storage: server.StorageOf(e.st), Signer: e.mat.Signer, Timestamper: e.mat.TSA, Trust: e.mat.Trust, Version: "test",
		Now: o.clock, Dashboard: server.DashboardConfig{VerifyPage: o.verifyPage, ScanBytes: o.scanBytes}}
	if o.log {
		e.log = tlogtest.OpenLog(t, filepath.Join(e.dir, "log"), "log", nil)
		cfg.Log = &server.TransparencyLog{Log: e.log, Secret: make([]byte, 32), Store: e.st}
	}
	e.srv, err = server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if o.tls {
		e.ts = httptest.NewTLSServer(e.srv)
	} else {
		e.ts = httptest.NewServer(e.srv)
	}
	t.Cleanup(e.ts.Close)
	if e.smtp, err = notify.StartTestServer(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.smtp.Close() })
	return e
}

func (e *env) pipeline(key, workflow string) *client.Pipeline {
	e.t.Helper()
	p, err := client.NewPipeline(client.Options{APIKey: key, WorkflowID: workflow, SurfaceID: "surface-web", BaseURL: e.ts.URL,
		QueuePath: filepath.Join(e.t.TempDir(), "queue"), HTTPClient: e.ts.Client()})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { p.Close() })
	return p
}

// seed gives org A a manifest naming modelMissing, a closed run whose
// records ran modelMissing (open_source_ml, so two model_profile_missing
// gaps) and a check whose name is markup, a calibration request for
// modelRequested and a published profile for modelPublished; and org B a
// closed run of its own.
func (e *env) seed() {
	t := e.t
	ctx := context.Background()
	p := e.pipeline(e.keyA, "wf-claims")
	reg, err := p.RegisterCheck(ctx, api.Manifest{Name: hostileName, Version: "1.0.0", Stages: []api.ManifestStage{
		{StageName: "classify", ProofCeiling: "execution", RegulatoryReferences: []string{}, ONNXModelHash: modelMissing},
		{StageName: "extract", ProofCeiling: "operator_bound", RegulatoryReferences: []string{"EU AI Act art. 15"}, ONNXModelHash: modelPublished},
	}})
	if err != nil {
		t.Fatal(err)
	}
	run, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := run.Record(ctx, "pii_detection", reg.ManifestID, vpec.ResultPass, []byte{byte(i)},
			client.WithStage(stage.OpenSourceML, stage.PartInference), client.WithModelHash(modelMissing)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := run.Record(ctx, hostileCheck, reg.ManifestID, vpec.ResultFail, []byte("x")); err != nil {
		t.Fatal(err)
	}
	res, err := run.Close(ctx)
	if err != nil || res.Offline {
		t.Fatalf("close: %v (offline %v)", err, res != nil && res.Offline)
	}
	e.vpecID = res.VPEC.VPECID
	if _, err := p.RequestCalibration(ctx, client.CalibrationRequest{ONNXModelHash: modelRequested, DesiredGPUClasses: []string{"a100"}}); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(profileVector)
	if err != nil {
		t.Fatal(err)
	}
	prof, err := profile.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	prof.ProfileID = "svc-test/ner-class/v2.1.0"
	prof.ModelClass = "ner"
	prof.Models[0].ONNXModelHash = modelPublished
	if _, err := server.Publish(ctx, e.st, e.mat.Signer, "127.0.0.1/.well-known/svc/trust-bundle.pem", prof, nil, e.now); err != nil {
		t.Fatal(err)
	}
	pb := e.pipeline(e.keyB, "wf-beta")
	runB, err := pb.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runB.Record(ctx, "beta_only_check", commitment.String([]byte("m")), vpec.ResultPass, []byte("b")); err != nil {
		t.Fatal(err)
	}
	resB, err := runB.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.vpecIDB = resB.VPEC.VPECID
	// The closes answered once their VPECs were stored; with a log, their
	// leaves are appended in the background.
	if err := e.srv.WaitLogged(ctx); err != nil {
		t.Fatal(err)
	}
}

// publishWithCLI publishes the test profile vector (modelMissing) with
// `svc registry publish`, run in process on the service's data directory,
// notices going to the loopback SMTP listener.
func (e *env) publishWithCLI() string {
	e.t.Helper()
	var out, errOut strings.Builder
	args := []string{"registry", "publish", profileVector, "--data-dir", e.dir, "--smtp", "smtp://" + e.smtp.Addr() + "?from=registry@svc.test"}
	if e.dsn != "" {
		args = append(args, "--database", e.dsn)
	}
	code := cli.Main(args,
		&cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errOut, Getenv: func(string) string { return "" }})
	if code != 0 {
		e.t.Fatalf("svc registry publish: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	return out.String()
}

// browserless is an HTTP client with a cookie jar that does not follow
// redirects, for the tests that look at headers and status codes.
func (e *env) httpClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	c := *e.ts.Client() // a copy: ts.Client() is one shared client
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signIn signs in with key through the form and returns the client.
func (e *env) signIn(key string) *http.Client {
	e.t.Helper()
	c := e.httpClient()
	body := e.get(c, "/dashboard/signin", http.StatusOK)
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		e.t.Fatalf("sign-in page has no CSRF field:\n%s", body)
	}
	resp := e.post(c, "/dashboard/signin", url.Values{"csrf": {m[1]}, "api_key": {key}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/dashboard/registry" {
		e.t.Fatalf("sign-in: %s, Location %q", resp.Status, resp.Header.Get("Location"))
	}
	return c
}

func (e *env) get(c *http.Client, path string, want int) string {
	e.t.Helper()
	resp, err := c.Get(e.ts.URL + path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b := new(strings.Builder)
	if _, err := copyLimited(b, resp); err != nil {
		e.t.Fatal(err)
	}
	if resp.StatusCode != want {
		e.t.Fatalf("GET %s: %s, want %d\n%s", path, resp.Status, want, b)
	}
	return b.String()
}

func (e *env) post(c *http.Client, path string, form url.Values, header http.Header) *http.Response {
	e.t.Helper()
	req, err := http.NewRequest("POST", e.ts.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func copyLimited(b *strings.Builder, resp *http.Response) (int64, error) {
	buf := make([]byte, 32<<10)
	var n int64
	for {
		k, err := resp.Body.Read(buf)
		b.Write(buf[:k])
		n += int64(k)
		if err != nil {
			if err.Error() == "EOF" {
				return n, nil
			}
			return n, err
		}
	}
}

func csrfOf(t *testing.T, body string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF field in:\n%s", body)
	}
	return m[1]
}
