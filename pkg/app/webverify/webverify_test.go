package webverify_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/svc-gov/svc/internal/fuzzedge"
	"github.com/svc-gov/svc/internal/testvectors"
	"github.com/svc-gov/svc/pkg/app/webverify"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
)

func large(t testing.TB) (doc, bundle []byte) {
	t.Helper()
	l, err := testvectors.LargeVPEC(t.TempDir(), 5)
	if err != nil {
		t.Fatal(err)
	}
	bundle, err = os.ReadFile(l.BundlePath)
	if err != nil {
		t.Fatal(err)
	}
	return l.Doc, bundle
}

// TestSameAsLibrary: the page's verdict, checks and exit code are the
// library's (what svc verify prints), for a valid VPEC and a tampered one.
func TestSameAsLibrary(t *testing.T) {
	doc, bundle := large(t)
	tampered := bytes.Replace(doc, []byte(`"toxicity"`), []byte(`"toxicitx"`), 1)
	if bytes.Equal(tampered, doc) {
		t.Fatal("tampering changed nothing")
	}
	trust, err := signing.ParseBundle(bundle)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		doc      []byte
		code     int
		verdict  string
		failing  verify.CheckName
		wantKind error
	}{
		{"valid", doc, webverify.ExitValid, "VALID", "", nil},
		{"tampered", tampered, webverify.ExitInvalid, "INVALID — ", verify.CheckSignature, verify.ErrInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := webverify.Verify(webverify.Input{VPEC: webverify.File{Name: "vpec.json", Data: c.doc}, Trust: webverify.File{Name: "trust-bundle.pem", Data: bundle}})
			want, werr := verify.Verify(c.doc, verify.Options{Trust: trust})
			if !errors.Is(werr, c.wantKind) && !(c.wantKind == nil && werr == nil) {
				t.Fatalf("library error %v, want %v", werr, c.wantKind)
			}
			if res.Report == nil || res.ExitCode != c.code || res.Error != "" {
				t.Fatalf("Verify = %+v, want exit %d with a report", res, c.code)
			}
			if got := res.Report.Verdict; got != want.Verdict || len(got) < len(c.verdict) || got[:len(c.verdict)] != c.verdict {
				t.Errorf("verdict %q, library %q, want prefix %q", got, want.Verdict, c.verdict)
			}
			if len(res.Report.Checks) != len(want.Checks) {
				t.Fatalf("%d checks, library %d", len(res.Report.Checks), len(want.Checks))
			}
			for i := range want.Checks {
				if res.Report.Checks[i].Name != want.Checks[i].Name || res.Report.Checks[i].Status != want.Checks[i].Status {
					t.Errorf("check %d = %s %s, library %s %s", i, res.Report.Checks[i].Name, res.Report.Checks[i].Status, want.Checks[i].Name, want.Checks[i].Status)
				}
			}
			if c.failing != "" {
				if f := res.Report.FirstFailure(); f == nil || f.Name != c.failing {
					t.Errorf("first failure %+v, want %s", f, c.failing)
				}
			}
			if tr := res.Report.TrustRoot; tr == nil || tr.File != "trust-bundle.pem" || tr.Source != webverify.TrustSource {
				t.Errorf("trust root %+v", tr)
			}
			var back map[string]any
			if err := json.Unmarshal(res.JSON(), &back); err != nil || back["report"] == nil {
				t.Errorf("JSON() = %s, %v", res.JSON(), err)
			}
		})
	}
}

func TestInputProblems(t *testing.T) {
	doc, bundle := large(t)
	other, _ := large(t)
	for _, c := range []struct {
		name string
		in   webverify.Input
		code int
	}{
		{"no VPEC", webverify.Input{Trust: webverify.File{Data: bundle}}, webverify.ExitUsage},
		{"no trust bundle", webverify.Input{VPEC: webverify.File{Data: doc}}, webverify.ExitTrust},
		{"not PEM", webverify.Input{VPEC: webverify.File{Data: doc}, Trust: webverify.File{Name: "t.pem", Data: []byte("hello")}}, webverify.ExitTrust},
		{"binary VPEC", webverify.Input{VPEC: webverify.File{Data: []byte{0, 1, 2}}, Trust: webverify.File{Data: bundle}}, webverify.ExitUsage},
		{"corrupt profile", webverify.Input{VPEC: webverify.File{Data: doc}, Trust: webverify.File{Data: bundle}, Profiles: []webverify.File{{Name: "p.json", Data: []byte(`{"profile_id":`)}}}, webverify.ExitInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			if res := webverify.Verify(c.in); res.ExitCode != c.code {
				t.Errorf("exit %d, want %d: %+v", res.ExitCode, c.code, res)
			}
		})
	}
	// A VPEC under another service's key: INVALID against this bundle.
	res := webverify.Verify(webverify.Input{VPEC: webverify.File{Data: other}, Trust: webverify.File{Data: bundle}})
	if res.ExitCode == webverify.ExitValid {
		t.Errorf("a VPEC of another service verified against this bundle: %+v", res.Report)
	}
}

func FuzzVerify(f *testing.F) {
	doc, bundle := large(f)
	f.Add(doc, bundle)
	f.Add([]byte(`{}`), bundle)
	if w, err := os.ReadFile("../../../testdata/vectors/vpec/valid/witnessed.json"); err == nil {
		for _, d := range fuzzedge.Documents(w, 300) { // integers at the documented maxima and int64 edges
			f.Add(d, bundle)
		}
	}
	f.Fuzz(func(t *testing.T, doc, trust []byte) {
		res := webverify.Verify(webverify.Input{VPEC: webverify.File{Data: doc}, Trust: webverify.File{Data: trust}})
		if res.ExitCode == webverify.ExitValid && (res.Report == nil || !res.Report.Valid) {
			t.Fatalf("exit 0 without a valid report: %+v", res)
		}
		if res.Report == nil && res.Error == "" {
			t.Fatal("neither report nor error")
		}
	})
}
