// Package tlogtest holds what the transparency log's tests share: fixed
// keys, entries and a log in a temporary directory.
package tlogtest

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/service/logwriter"
)

// Origin is the test log's origin.
const Origin = "svc.test/log"

// Key returns a fixed Ed25519 key derived from seed (TEST ONLY).
func Key(seed string) ed25519.PrivateKey {
	s := sha256.Sum256([]byte("svc tlogtest key " + seed))
	return ed25519.NewKeyFromSeed(s[:])
}

// Secret is the test log's monitoring secret (TEST ONLY).
var Secret = func() []byte { s := sha256.Sum256([]byte("svc tlogtest monitoring secret")); return s[:] }()

// OrgKey returns org's monitoring key under Secret.
func OrgKey(t testing.TB, org string) tlog.OrgKey {
	t.Helper()
	k, err := tlog.DeriveOrgKey(Secret, org)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// VPECID returns the VPEC id numbered n under prefix p (letters and
// digits), e.g. vpec_a-00000007.
func VPECID(p string, n int) string {
	return fmt.Sprintf("vpec_%s-%08d", p, n)
}

// Digest returns the digest the entries of this package give VPEC id.
func Digest(id string) [32]byte { return tlog.Digest([]byte("signed bytes of " + id)) }

// Entry returns the entry of VPEC VPECID(p, n) of org and workflow.
func Entry(p string, n int, org, workflow string, clean bool) tlog.Entry {
	id := VPECID(p, n)
	return tlog.Entry{
		VPECID:      id,
		Digest:      Digest(id),
		OrgID:       org,
		WorkflowID:  workflow,
		Environment: "production",
		IssuedAt:    time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Millisecond),
		Clean:       clean,
	}
}

// Leaf returns e's leaf under its organisation's key.
func Leaf(t testing.TB, e tlog.Entry) tlog.Leaf {
	t.Helper()
	l, err := tlog.NewLeaf(OrgKey(t, e.OrgID), e)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// LogKey returns the log key of Key(seed) under Origin.
func LogKey(t testing.TB, seed string) tlog.LogKey {
	t.Helper()
	k, err := tlog.NewLogKey(Origin, Key(seed).Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Policy parses a witness policy.
func Policy(t testing.TB, text string) *tlog.WitnessPolicy {
	t.Helper()
	p, err := tlog.ParseWitnessPolicy([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Verifier returns a verifier of the log of Key(seed) with the policy.
func Verifier(t testing.TB, seed, policy string) *tlog.Verifier {
	t.Helper()
	v, err := tlog.NewVerifier(LogKey(t, seed), Policy(t, policy))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// OpenLog opens a log in dir signed by Key(seed) under Origin, with a
// 100 ms checkpoint interval, closed when the test ends. mod, if not nil,
// adjusts the configuration first.
func OpenLog(t testing.TB, dir, seed string, mod func(*logwriter.Config)) *logwriter.Log {
	t.Helper()
	cfg := logwriter.Config{Dir: dir, Origin: Origin, Signer: Key(seed), CheckpointInterval: logwriter.MinCheckpointInterval}
	if mod != nil {
		mod(&cfg)
	}
	l, err := logwriter.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := l.Close(ctx); err != nil {
			t.Errorf("close the log: %v", err)
		}
	})
	return l
}
