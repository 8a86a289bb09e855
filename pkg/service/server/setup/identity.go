package setup

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
)

// ErrIdentityMismatch: the key material of this process differs from the
// service identity recorded in the database (an *IdentityMismatchError).
var ErrIdentityMismatch = errors.New("key material differs from the service's")

// IdentityOf is the store.Identity of key material m: its signing key and
// its built-in timestamp authority's certificates.
func IdentityOf(m *server.Material, now time.Time) (store.Identity, error) {
	spki, err := x509.MarshalPKIXPublicKey(m.Signer.PublicKey())
	if err != nil {
		return store.Identity{}, fmt.Errorf("signing key: %w", err)
	}
	return store.Identity{
		SigningKeyID: m.Signer.KeyID(),
		SigningKey:   spki,
		TSACert:      CertID(m.TSA.Certificate()),
		TSARoot:      CertID(m.TSA.Root()),
		RecordedAt:   now.UTC().Truncate(time.Microsecond),
	}, nil
}

// CertID is "sha256:<hex>" of a certificate's DER.
func CertID(c *x509.Certificate) string { return commitment.String(c.Raw) }

// short is the first 16 hex digits of a "sha256:<hex>" id, for messages.
func short(id string) string {
	const p = len("sha256:")
	if len(id) >= p+16 {
		return id[p : p+16]
	}
	return id
}

// IdentityMismatchError is the error of CheckIdentity when the database
// belongs to a service with other key material. It matches
// ErrIdentityMismatch.
type IdentityMismatchError struct {
	// Recorded is the identity in the database; Local the one of DataDir.
	Recorded, Local store.Identity
	DataDir         string
}

func (e *IdentityMismatchError) Error() string {
	what := ""
	switch {
	case e.Recorded.SigningKeyID != e.Local.SigningKeyID || string(e.Recorded.SigningKey) != string(e.Local.SigningKey):
		what = fmt.Sprintf("the database's service signs with key %s, this server with key %s (%s)",
			e.Recorded.SigningKeyID, e.Local.SigningKeyID, filepath.Join(e.DataDir, server.SigningKeyFile))
	default:
		what = fmt.Sprintf("the database's service (signing key %s) timestamps with the built-in TSA certificate %s (root %s), this server with %s (root %s) from %s",
			e.Recorded.SigningKeyID, short(e.Recorded.TSACert), short(e.Recorded.TSARoot), short(e.Local.TSACert), short(e.Local.TSARoot),
			filepath.Join(e.DataDir, server.TSADir))
	}
	return fmt.Sprintf("%s: %s; its VPECs would not verify against the service's trust bundle (recorded %s)",
		ErrIdentityMismatch, what, e.Recorded.RecordedAt.Format(time.RFC3339))
}

// Is matches ErrIdentityMismatch.
func (e *IdentityMismatchError) Is(target error) bool { return target == ErrIdentityMismatch }

// MissingMaterialError is the error of RecordedIdentity's caller when the
// database already belongs to a service and the data directory holds no
// key material: creating new keys would split the service in two.
type MissingMaterialError struct {
	Recorded store.Identity
	DataDir  string
}

func (e *MissingMaterialError) Error() string {
	return fmt.Sprintf("%s in %s, and the database belongs to the service with signing key %s (recorded %s): new keys would not verify against its trust bundle",
		server.ErrNoMaterial, e.DataDir, e.Recorded.SigningKeyID, e.Recorded.RecordedAt.Format(time.RFC3339))
}

// Is matches server.ErrNoMaterial.
func (e *MissingMaterialError) Is(target error) bool { return target == server.ErrNoMaterial }

// RecordedIdentity returns the service identity recorded in st, with
// found=false when none is recorded yet (no server has started on it).
func RecordedIdentity(ctx context.Context, st store.IdentityStore) (id store.Identity, found bool, err error) {
	id, err = st.Identity(ctx)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.Identity{}, false, nil
	case err != nil:
		return store.Identity{}, false, err
	}
	return id, true, nil
}

// CheckMaterialPresent refuses to let a process create key material in
// dataDir when st already records the identity of a service: it returns
// a *MissingMaterialError (matching server.ErrNoMaterial) if the
// database has an identity and dataDir has no key material, else nil.
func CheckMaterialPresent(ctx context.Context, st store.IdentityStore, dataDir string) error {
	if _, err := server.ReadMaterial(dataDir); !errors.Is(err, server.ErrNoMaterial) {
		return nil // present, partial or unreadable: the loading reports it
	}
	rec, found, err := RecordedIdentity(ctx, st)
	if err != nil || !found {
		return err
	}
	return &MissingMaterialError{Recorded: rec, DataDir: dataDir}
}

// CheckIdentity makes sure the key material m of dataDir is the service
// identity of the database st: the first process to call it on a database
// records m's identity (recorded=true); later ones compare, and key
// material that differs is an *IdentityMismatchError naming both.
// Every server on one database must hold the same signing key and
// built-in timestamp authority (the data directory's signing-key.pem and
// tsa/), or the VPECs one of them closes would not verify against the
// trust bundle another publishes.
func CheckIdentity(ctx context.Context, st store.IdentityStore, m *server.Material, dataDir string, now time.Time) (recorded bool, err error) {
	local, err := IdentityOf(m, now)
	if err != nil {
		return false, err
	}
	stored, created, err := st.InitIdentity(ctx, local)
	if err != nil {
		return false, err
	}
	if !stored.Equal(local) && !rotated(stored, local, dataDir) {
		return false, &IdentityMismatchError{Recorded: stored, Local: local, DataDir: dataDir}
	}
	return created, nil
}

// rotated reports whether the recorded identity and the local one are
// both keys of dataDir's trust root (svc keys rotate, or a TSA key moved
// to an HSM): the recorded VPEC key and TSA root, and the local ones.
func rotated(stored, local store.Identity, dataDir string) bool {
	is := func(id string) func(*x509.Certificate) bool {
		return func(c *x509.Certificate) bool { return CertID(c) == id }
	}
	return server.InRoot(dataDir, stored.SigningKeyID, is(stored.TSARoot)) && server.InRoot(dataDir, local.SigningKeyID, is(local.TSARoot))
}
