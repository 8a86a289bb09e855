// Package sigstoretest verifies svc's Sigstore exports (pkg/core/sigstore) with
// the Sigstore project's own Go library, github.com/sigstore/sigstore-go.
//
// It is a module of its own so that sigstore-go's large dependency graph
// (which raises golang.org/x/text, whose normalization tables pkg/ml/tokenizer
// depends on) never enters the svc module's build list: svc itself links no
// Sigstore code. Its transparency log tests run the service in process
// (internal/svctest, a real Tessera log) and also check exported log
// entries with rekor-tiles, the Rekor v2 verification code sigstore-go uses. Run it with `make interop` or `cd internal/sigstoretest &&
// go test ./...`.
package sigstoretest
