package trustroot

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/signing"
)

var (
	t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 = time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	t2 = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
)

// fixture holds the keys of a test root.
type fixture struct {
	vpec, vpec2, vpec3, profile, circuit, log, witness, root1, root2, root3 ed25519.PrivateKey
	tsa                                                                     *x509.Certificate
}

func newKey(t testing.TB) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func pubOf(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }

func idOf(k ed25519.PrivateKey) string { return signing.KeyID(pubOf(k)) }

func newTSARoot(t testing.TB) *x509.Certificate {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "test TSA root"},
		NotBefore: t0.Add(-time.Hour), NotAfter: t2.Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newFixture(t testing.TB) *fixture {
	return &fixture{vpec: newKey(t), vpec2: newKey(t), vpec3: newKey(t), profile: newKey(t), circuit: newKey(t), log: newKey(t),
		witness: newKey(t), root1: newKey(t), root2: newKey(t), root3: newKey(t), tsa: newTSARoot(t)}
}

// v1 is a first root: every purpose, two root keys, threshold 1, signed by
// root1.
func (f *fixture) v1(t testing.TB) *Root {
	t.Helper()
	r, err := Build(t0, 1,
		NewKey{Purpose: PurposeVPEC, PublicKey: pubOf(f.vpec), From: t0, Comment: "VPEC key on hsm-1"},
		NewKey{Purpose: PurposeProfile, PublicKey: pubOf(f.profile), From: t0},
		NewKey{Purpose: PurposeCircuit, PublicKey: pubOf(f.circuit), From: t0},
		NewKey{Purpose: PurposeTSARoot, Certificate: f.tsa, From: t0},
		NewKey{Purpose: PurposeLog, PublicKey: pubOf(f.log), NoteName: "svc.example/log", From: t0},
		NewKey{Purpose: PurposeWitness, PublicKey: pubOf(f.witness), NoteName: "witness.example", From: t0},
		NewKey{Purpose: PurposeRoot, PublicKey: pubOf(f.root1), From: t0},
		NewKey{Purpose: PurposeRoot, PublicKey: pubOf(f.root2), From: t0},
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Sign(f.root1); err != nil {
		t.Fatal(err)
	}
	return r
}

// roundTrip marshals and parses r.
func roundTrip(t testing.TB, r *Root) *Root {
	t.Helper()
	b, err := r.Marshal()
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	p, err := Parse(b)
	if err != nil {
		t.Fatalf("Parse(Marshal()): %v\n%s", err, b)
	}
	return p
}
