package server_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/softhsmtest"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// BenchmarkCloseByKey closes 3-record runs through the HTTP API with the
// VPEC and TSA keys in files and on a SoftHSM2 token, alternating one close
// of each per iteration so that the machine's load weighs on both alike;
// ns/op covers one close of each, and the custom metrics give each alone.
func BenchmarkCloseByKey(b *testing.B) {
	tk := softhsmtest.NewToken(b, "svc-bench")
	ctx := context.Background()
	type side struct {
		e   *env
		key string
		d   time.Duration
	}
	mk := func(name string, kc server.KeyConfig) *side {
		dir := b.TempDir()
		st, err := sqlite.Open(ctx, filepath.Join(dir, "svc.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		m, _, err := server.OpenMaterial(ctx, filepath.Join(dir, "data"), kc, true)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { m.Close() })
		srv, err := server.New(server.Config{Storage: server.StorageOf(st), Signer: m.Signer, Timestamper: m.TSA, Trust: m.Trust})
		if err != nil {
			b.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		b.Cleanup(hs.Close)
		if _, err := server.CreateOrg(ctx, st, "alpha", server.TierStandard, time.Now()); err != nil {
			b.Fatal(err)
		}
		key, _, err := server.CreateAPIKey(ctx, st, "alpha", vpec.Production, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		return &side{e: &env{t: b, st: st, url: hs.URL, mat: m}, key: key}
	}
	hsm := tokenKeys(b, tk)
	sides := []*side{mk("file", server.KeyConfig{}), mk("softhsm", server.KeyConfig{VPEC: hsm.VPEC, TSA: hsm.TSA})}
	b.ResetTimer()
	for range b.N {
		for _, s := range sides {
			b.StopTimer()
			run := s.e.open(s.key)
			for _, r := range chain(run.RunID, 3) {
				if code, body := s.e.do("POST", "/api/v1/runs/"+run.RunID+"/records", s.key, r, nil); code != 201 {
					b.Fatalf("record: %d %s", code, body)
				}
			}
			b.StartTimer()
			t0 := time.Now()
			if code, body := s.e.do("POST", "/api/v1/runs/"+run.RunID+"/close", s.key, nil, nil); code != 200 {
				b.Fatalf("close: %d %s", code, body)
			}
			s.d += time.Since(t0)
		}
	}
	b.ReportMetric(float64(b.N)/sides[0].d.Seconds(), "file-closes/s")
	b.ReportMetric(float64(b.N)/sides[1].d.Seconds(), "softhsm-closes/s")
}
