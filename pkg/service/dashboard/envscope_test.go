package dashboard_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/dashboard"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
)

// closedRun opens a run with key, records one check naming model and
// closes it; it returns the run and VPEC ids.
func (e *env) closedRun(key, workflow, model string) (string, string) {
	e.t.Helper()
	ctx := context.Background()
	p := e.pipeline(key, workflow)
	run, err := p.Open(ctx, "")
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := run.Record(ctx, "toxicity", commitment.String([]byte("m")), vpec.ResultPass, []byte("in"),
		client.WithStage(stage.OpenSourceML, stage.PartInference), client.WithModelHash(model)); err != nil {
		e.t.Fatal(err)
	}
	res, err := run.Close(ctx)
	if err != nil || res.Offline {
		e.t.Fatalf("close: %v", err)
	}
	return run.ID(), res.VPEC.VPECID
}

// status is the status of GET path with client c.
func (e *env) status(c *http.Client, path string) (int, string) {
	e.t.Helper()
	resp, err := c.Get(e.ts.URL + path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b := new(strings.Builder)
	copyLimited(b, resp)
	return resp.StatusCode, b.String()
}

// TestHostileEnvironmentScope: a dashboard session sees only its key's
// environment: the runs page, the registry, every VPEC page and every
// download refuse the other environment's runs and VPECs. Found: signed
// in with a pk_sb_ key, the runs page listed production runs with their
// VPEC ids and the production VPEC, its disclosed inputs and a freshly
// signed attestation downloaded.
func TestHostileEnvironmentScope(t *testing.T) {
	e := newEnv(t, envOptions{})
	const prodModel = "sha256:4444444444444444444444444444444444444444444444444444444444444444"
	const sbModel = "sha256:5555555555555555555555555555555555555555555555555555555555555555"
	sbKey, _, err := server.CreateAPIKey(context.Background(), e.st, "acme", vpec.Sandbox, e.now)
	if err != nil {
		t.Fatal(err)
	}
	prodRun, prodVPEC := e.closedRun(e.keyA, "wf-prod", prodModel)
	sbRun, sbVPEC := e.closedRun(sbKey, "wf-sandbox", sbModel)
	for _, c := range []struct {
		name       string
		key        string
		own, other []string // run id, VPEC id, model
		otherVPEC  string
	}{
		{"sandbox session", sbKey, []string{sbRun, sbVPEC, sbModel}, []string{prodRun, prodVPEC, prodModel}, prodVPEC},
		{"production session", e.keyA, []string{prodRun, prodVPEC, prodModel}, []string{sbRun, sbVPEC, sbModel}, sbVPEC},
	} {
		cl := e.signIn(c.key)
		runs := e.get(cl, "/dashboard/runs", http.StatusOK)
		reg := e.get(cl, "/dashboard/registry", http.StatusOK)
		for i, page := range []string{runs, runs, reg} {
			if !strings.Contains(page, c.own[i]) {
				t.Errorf("%s: its own %s is missing from %s", c.name, c.own[i], []string{"runs", "runs", "registry"}[i])
			}
			if strings.Contains(page, c.other[i]) {
				t.Errorf("%s: the other environment's %s is on %s", c.name, c.other[i], []string{"runs", "runs", "registry"}[i])
			}
		}
		if code, body := e.status(cl, "/dashboard/runs?state=sealed"); code != 200 || strings.Contains(body, c.other[1]) {
			t.Errorf("%s: sealed runs: %d, lists the other environment's VPEC: %v", c.name, code, strings.Contains(body, c.other[1]))
		}
		paths := []string{"/dashboard/vpecs/" + c.otherVPEC}
		for _, f := range []string{"vpec.json", "trust-bundle.pem", "vpec.sigstore.json", "vpec.signed.json", "trusted_root.json", "attestation.sigstore.json"} {
			paths = append(paths, "/dashboard/vpecs/"+c.otherVPEC+"/"+f)
		}
		for _, p := range paths {
			code, body := e.status(cl, p)
			if code != http.StatusForbidden {
				t.Errorf("%s: GET %s: %d, want 403", c.name, p, code)
			}
			if strings.Contains(body, "toxicity") || strings.Contains(body, c.other[2]) {
				t.Errorf("%s: GET %s shows the other environment's VPEC", c.name, p)
			}
		}
		if code, _ := e.status(cl, "/dashboard/vpecs/"+c.own[1]+"/vpec.json"); code != 200 {
			t.Errorf("%s: its own VPEC download: %d", c.name, code)
		}
	}
}

// storage is the env's store in every role the dashboard takes.
func (e *env) storage() dashboard.Storage {
	return dashboard.Storage{Sessions: e.st, Orgs: e.st, Runs: e.st, VPECs: e.st, Manifests: e.st,
		Profiles: e.st, Calibrations: e.st, Circuits: e.st}
}

// countingStore counts the VPEC bytes read through VPEC.
type countingStore struct {
	store.VPECReader
	read atomic.Int64
}

func (c *countingStore) VPEC(ctx context.Context, orgID, id string) (store.VPEC, error) {
	v, err := c.VPECReader.VPEC(ctx, orgID, id)
	c.read.Add(int64(len(v.Body)))
	return v, err
}

// TestHostileBudgetBeforeLoad: a VPEC page or download refused for the
// byte budget reads no VPEC byte (the size is known without the body).
// Found: the budget was checked after the VPEC was read (a refused view
// still loaded 255 MiB and took 22 s).
func TestHostileBudgetBeforeLoad(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.seed()
	cs := &countingStore{VPECReader: e.st}
	st := e.storage()
	st.VPECs = cs
	d, err := dashboard.New(dashboard.Config{Storage: st, Trust: e.mat.Trust, Signer: e.mat.Signer, Timestamper: e.mat.TSA,
		AuthKey: func(ctx context.Context, key string) (store.APIKey, error) {
			return e.st.APIKeyByHash(ctx, server.HashKey(key))
		},
		RequestCalibration: func(context.Context, store.APIKey, api.CalibrationRequestInput) (api.CalibrationRequestView, error) {
			return api.CalibrationRequestView{}, errors.New("not in this test")
		},
		VerifyBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	d.Register(func(p string, h http.Handler) { mux.Handle(p, h) })
	e.ts = httptest.NewServer(mux)
	defer e.ts.Close()
	a := e.signIn(e.keyA)
	release := d.Busy(1 << 20)
	for _, p := range []string{"/dashboard/vpecs/" + e.vpecID, "/dashboard/vpecs/" + e.vpecID + "/vpec.json", "/dashboard/vpecs/" + e.vpecID + "/attestation.sigstore.json"} {
		before := cs.read.Load()
		if code, _ := e.status(a, p); code != http.StatusServiceUnavailable {
			t.Errorf("%s while the budget is taken: %d, want 503", p, code)
		}
		if n := cs.read.Load() - before; n != 0 {
			t.Errorf("%s refused for the budget read %d VPEC bytes first", p, n)
		}
	}
	release()
	before := cs.read.Load()
	e.get(a, "/dashboard/vpecs/"+e.vpecID, http.StatusOK)
	if cs.read.Load() == before {
		t.Errorf("the counting store saw no read: the test measures nothing")
	}
}

// TestHostileSandboxSessionRateLimit: a sandbox session's pages share the
// sandbox key's rate limit with its API calls (429 with Retry-After past
// it); a production session is not limited. Found: dashboard routes were
// not rate-limited at all.
func TestHostileSandboxSessionRateLimit(t *testing.T) {
	e := newEnv(t, envOptions{})
	sbKey, _, err := server.CreateAPIKey(context.Background(), e.st, "acme", vpec.Sandbox, e.now)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Storage: server.StorageOf(e.st), Signer: e.mat.Signer, Timestamper: e.mat.TSA, Trust: e.mat.Trust,
		SandboxLimit: server.RateLimit{PerSecond: 0.001, Burst: 3}})
	if err != nil {
		t.Fatal(err)
	}
	e.ts = httptest.NewServer(srv)
	defer e.ts.Close()
	for _, c := range []struct {
		key     string
		limited bool
	}{{sbKey, true}, {e.keyA, false}} {
		cl := e.signIn(c.key)
		limited := 0
		for range 6 {
			resp, err := cl.Get(e.ts.URL + "/dashboard/runs")
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusTooManyRequests {
				limited++
				if resp.Header.Get("Retry-After") == "" {
					t.Errorf("429 without Retry-After")
				}
			} else if resp.StatusCode != 200 {
				t.Errorf("runs page: %s", resp.Status)
			}
		}
		if (limited > 0) != c.limited {
			t.Errorf("key %s...: %d of 6 page views refused 429 (burst 3), want limited=%v", c.key[:8], limited, c.limited)
		}
	}
}

// TestVerifyCachedAndCompressed: /verify is the same bytes for one build
// of the service, so it is served cacheable (ETag, max-age, 304 to a
// matching If-None-Match) and gzip-compressed to clients that accept it.
// Found: Cache-Control: no-store and 11.2 MB uncompressed.
func TestVerifyCachedAndCompressed(t *testing.T) {
	page := []byte("<!DOCTYPE html><title>verify</title>" + strings.Repeat("<p>the offline verifier</p>\n", 40000))
	e := newEnv(t, envOptions{verifyPage: page})
	get := func(enc, inm string) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", e.ts.URL+"/verify", nil)
		req.Header.Set("Accept-Encoding", enc) // set explicitly: the transport then does not decode
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		resp, err := e.ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, b
	}
	resp, gz := get("gzip, deflate, br", "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("/verify with Accept-Encoding gzip: %s, Content-Encoding %q", resp.Status, resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(plain, page) {
		t.Fatalf("the gzip body does not decode to the page (%v)", err)
	}
	if len(gz)*4 > len(page) {
		t.Errorf("gzip body %d bytes for a %d-byte page", len(gz), len(page))
	}
	cc, tag := resp.Header.Get("Cache-Control"), resp.Header.Get("ETag")
	if strings.Contains(cc, "no-store") || !strings.Contains(cc, "max-age=") || tag == "" || !strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
		t.Errorf("/verify caching headers: Cache-Control %q, ETag %q, Vary %q", cc, tag, resp.Header.Get("Vary"))
	}
	if resp, b := get("gzip", tag); resp.StatusCode != http.StatusNotModified || len(b) != 0 {
		t.Errorf("/verify with If-None-Match %s: %s, %d bytes", tag, resp.Status, len(b))
	}
	resp, b := get("identity", "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(b, page) || resp.Header.Get("ETag") == tag {
		t.Errorf("/verify without gzip: %s, Content-Encoding %q, the page %v, ETag %q (the gzip one is %q)",
			resp.Status, resp.Header.Get("Content-Encoding"), bytes.Equal(b, page), resp.Header.Get("ETag"), tag)
	}
	if resp, _ := get("gzip;q=0", ""); resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("/verify with gzip;q=0 is sent gzip")
	}
}
