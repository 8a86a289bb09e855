package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/loadgen"
	"github.com/svc-gov/svc/pkg/api"
	"github.com/svc-gov/svc/pkg/signing"
	"github.com/svc-gov/svc/pkg/vpec"
)

// TestTwoServersOnePostgres runs two `svc serve` processes on one
// PostgreSQL database and one data directory (the shared signing key and
// TSA) and drives one run through both: records alternate between them,
// the close happens on the other, and a second close on the first is
// refused.
func TestTwoServersOnePostgres(t *testing.T) {
	dsn := os.Getenv("SVC_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("SVC_TEST_POSTGRES_DSN not set: start one with scripts/postgres.sh start (make unit does)")
	}
	data := t.TempDir()
	org := "two-" + vpec.NewID("")[:8]
	key := newOrgKey(t, org, "--database", dsn, "--data-dir", data)
	urlA, _ := startServe(t, data, "--database", dsn) // the first serve creates the key material
	urlB, _ := startServe(t, data, "--database", dsn)
	trust, err := signing.ParseBundle([]byte(svcOut(t, "serve", "trust-bundle", "--data-dir", data)))
	if err != nil {
		t.Fatal(err)
	}

	hc := &http.Client{Timeout: 10 * time.Second}
	post := func(url, path string, body, out any) int {
		t.Helper()
		var b []byte // no body for nil: a close takes none
		if body != nil {
			b, _ = json.Marshal(body)
		}
		req, _ := http.NewRequest("POST", url+path, bytesReader(b))
		req.Header.Set("Authorization", "Bearer "+key.APIKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if out != nil {
			json.NewDecoder(resp.Body).Decode(out)
		}
		return resp.StatusCode
	}
	var run api.Run
	if code := post(urlA, "/api/v1/runs", api.OpenRunRequest{WorkflowID: "shared"}, &run); code != 201 {
		t.Fatalf("open on A: %d", code)
	}
	prev := vpec.Genesis(run.RunID)
	for seq := int64(1); seq <= 20; seq++ {
		recs := []vpec.Record{loadgen.Record(run.RunID, seq)}
		vpec.Chain(prev, recs)
		prev, _ = vpec.ParseHash(recs[0].ChainHash)
		url := urlA
		if seq%2 == 0 {
			url = urlB
		}
		if code := post(url, "/api/v1/runs/"+run.RunID+"/records", recs[0], nil); code != 201 {
			t.Fatalf("record %d: %d", seq, code)
		}
	}
	doc, _, err := loadgen.Close(context.Background(), hc, urlB, key.APIKey, run.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := vpec.Verify(doc, vpec.Options{Trust: trust}); err != nil || !rep.Valid || !rep.IsClean || rep.Records != 20 {
		t.Fatalf("VPEC from B: %s, %d records", rep.Verdict, rep.Records)
	}
	var eb api.ErrorBody
	if code := post(urlA, "/api/v1/runs/"+run.RunID+"/close", nil, &eb); code != 409 || eb.Error.Code != api.CodeRunSealed {
		t.Fatalf("second close on A: %d %+v", code, eb)
	}
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
