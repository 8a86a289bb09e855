package svctest

import (
	"context"
	"crypto/ed25519"
	"testing"

	"github.com/svc-gov/svc/pkg/service/logwriter"
	"github.com/svc-gov/svc/pkg/service/server"
)

// WithLog is a configure option of New: the service appends every VPEC
// it seals to a real transparency log (Tessera, POSIX backend, in a
// temporary directory, checkpoints every 100 ms) that the test's cleanup
// closes. The log is returned too, for its key.
func WithLog(tb testing.TB) (func(*server.Config), *logwriter.Log) {
	tb.Helper()
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		tb.Fatal(err)
	}
	l, err := logwriter.Open(context.Background(), logwriter.Config{Dir: tb.TempDir(), Origin: "svc.test/log", Signer: priv,
		CheckpointInterval: logwriter.MinCheckpointInterval})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = l.Close(context.Background()) })
	secret := make([]byte, 32)
	return func(c *server.Config) {
		c.Log = &server.TransparencyLog{Log: l, Secret: secret, ReceiptRetryAfter: logwriter.MinCheckpointInterval}
	}, l
}
