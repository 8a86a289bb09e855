//go:build cgo

package keys

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/softhsmtest"
)

// BenchmarkSign compares signing through PKCS#11 on SoftHSM2 with the file
// signer in the same run: quote the results as ratios (docs/KEYS.md). The
// message is 1 KiB, about a small profile's signed bytes. PKCS#11 signers
// also verify each signature they return; "parallel" runs GOMAXPROCS
// goroutines over the default pool of 4 sessions.
func BenchmarkSign(b *testing.B) {
	tk := softhsmtest.NewToken(b, "bench")
	ctx := context.Background()
	msg := make([]byte, 1024)
	dir := b.TempDir()
	for _, alg := range []Algorithm{Ed25519, ECDSAP256} {
		fileURI, _ := FileURI(filepath.Join(dir, string(alg)+".pem"))
		hsmURI := tk.URI("bench-" + string(alg))
		for _, uri := range []string{fileURI, hsmURI} {
			if _, err := Generate(ctx, uri, alg, Options{}); err != nil {
				b.Fatal(err)
			}
		}
		for _, c := range []struct{ name, uri string }{{"file", fileURI}, {"pkcs11", hsmURI}} {
			s, err := Open(ctx, c.uri, Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Run(string(alg)+"/"+c.name, func(b *testing.B) {
				for b.Loop() {
					if _, err := s.SignMessage(ctx, msg); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sigs/s")
			})
			b.Run(string(alg)+"/"+c.name+"/parallel", func(b *testing.B) {
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := s.SignMessage(ctx, msg); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sigs/s")
			})
			s.Close()
		}
	}
}

// BenchmarkSignInterleaved alternates one file signature and one PKCS#11
// signature per iteration, so that the machine's load drifts equally over
// both, and reports each rate and their ratio (pkcs11/file).
func BenchmarkSignInterleaved(b *testing.B) {
	tk := softhsmtest.NewToken(b, "bench")
	ctx := context.Background()
	msg := make([]byte, 1024)
	dir := b.TempDir()
	for _, alg := range []Algorithm{Ed25519, ECDSAP256} {
		fileURI, _ := FileURI(filepath.Join(dir, string(alg)+".pem"))
		hsmURI := tk.URI("bench-" + string(alg))
		var signers []*Signer
		for _, uri := range []string{fileURI, hsmURI} {
			if _, err := Generate(ctx, uri, alg, Options{}); err != nil {
				b.Fatal(err)
			}
			s, err := Open(ctx, uri, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			signers = append(signers, s)
		}
		b.Run(string(alg), func(b *testing.B) {
			var spent [2]time.Duration
			n := 0
			for b.Loop() {
				for i, s := range signers {
					start := time.Now()
					if _, err := s.SignMessage(ctx, msg); err != nil {
						b.Fatal(err)
					}
					spent[i] += time.Since(start)
				}
				n++
			}
			file := float64(n) / spent[0].Seconds()
			hsm := float64(n) / spent[1].Seconds()
			b.ReportMetric(file, "file-sigs/s")
			b.ReportMetric(hsm, "pkcs11-sigs/s")
			b.ReportMetric(hsm/file, "pkcs11/file")
		})
	}
}
