package store

import (
	"context"
	"time"
)

// Identity is the signing identity of the service a database belongs to:
// the key material every server process on that database must hold, so
// that whichever process closes a run, its VPEC verifies against the one
// trust bundle the service publishes. The first server to start on a
// database records it; later servers compare their own with it.
type Identity struct {
	// SigningKeyID is the key id (signing.KeyID) of the Ed25519 key that
	// signs VPECs, profiles and circuit entries.
	SigningKeyID string
	// SigningKey is that key's public key, SPKI DER.
	SigningKey []byte
	// TSACert and TSARoot are "sha256:<hex>" of the DER of the built-in
	// timestamp authority's certificate and of its root certificate.
	TSACert string
	TSARoot string
	// RecordedAt is when the identity was recorded.
	RecordedAt time.Time
}

// Equal reports whether two identities name the same key material
// (RecordedAt aside).
func (id Identity) Equal(o Identity) bool {
	return id.SigningKeyID == o.SigningKeyID && string(id.SigningKey) == string(o.SigningKey) &&
		id.TSACert == o.TSACert && id.TSARoot == o.TSARoot
}

// IdentityStore records the service's signing identity.
type IdentityStore interface {
	// InitIdentity records id as the service's identity if the database
	// holds none, atomically across processes, and returns the identity the
	// database holds after the call: id with created=true when this call
	// recorded it, else the one recorded before (by any process) with
	// created=false, whether or not it equals id. The recorded identity is
	// never replaced.
	InitIdentity(ctx context.Context, id Identity) (stored Identity, created bool, err error)
	// Identity returns the recorded identity; ErrNotFound if none is.
	Identity(ctx context.Context) (Identity, error)
}
