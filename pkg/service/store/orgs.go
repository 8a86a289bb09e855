package store

import (
	"context"
	"time"
)

// Org is an organisation: the unit every resource is scoped to.
type Org struct {
	ID        string
	Name      string
	Tier      string // "standard" or "enterprise"
	CreatedAt time.Time
}

// APIKey is a stored API key. The key itself is never stored: only its
// SHA-256 hash, looked up by hash and compared in constant time.
type APIKey struct {
	ID          string // public id: prefix + first 12 hex of the hash, e.g. pk_live_9c1e4b7a2f30
	OrgID       string
	Environment string // "sandbox" or "production"
	Hash        []byte // SHA-256 of the full key
	CreatedAt   time.Time
	RevokedAt   time.Time // zero while the key is valid
}

// ReviewerKey is a human reviewer's Ed25519 public key registered by an
// organisation; witnessed records must be signed by a registered key.
type ReviewerKey struct {
	OrgID     string
	KeyID     string // signing.KeyID of the key
	PublicKey []byte // SPKI DER
	Name      string
	CreatedAt time.Time
}

// OrgReader reads organisations and the keys registered to them.
type OrgReader interface {
	// OrgByName and OrgByID find an organisation; ErrNotFound if absent.
	OrgByName(ctx context.Context, name string) (Org, error)
	OrgByID(ctx context.Context, id string) (Org, error)
	// APIKeyByHash finds a key by the SHA-256 of its secret; ErrNotFound if
	// absent. A revoked key is returned with an error matching ErrRevoked
	// (so a caller that only checks the error refuses it).
	APIKeyByHash(ctx context.Context, hash []byte) (APIKey, error)
	// APIKeys lists the keys of the organisation orgID, or of every
	// organisation when orgID is "", revoked ones included, ordered by
	// creation time then id.
	APIKeys(ctx context.Context, orgID string) ([]APIKey, error)
	// ReviewerKey returns a registered key of the organisation; ErrNotFound otherwise.
	ReviewerKey(ctx context.Context, orgID, keyID string) (ReviewerKey, error)
}

// OrgStore is the accounts role: organisations, their API keys and their
// reviewer keys.
type OrgStore interface {
	OrgReader
	// CreateOrg adds an organisation; ErrExists if the name is taken.
	CreateOrg(ctx context.Context, o Org) error
	// CreateAPIKey stores a key; ErrExists if its id or hash is taken,
	// ErrNotFound for an unknown organisation.
	CreateAPIKey(ctx context.Context, k APIKey) error
	// RevokeAPIKey revokes the key with the given id at time at and returns
	// it. Revoking a revoked key changes nothing (the first revocation time
	// stays) and succeeds; an unknown id gives ErrNotFound. The revocation
	// is committed when it returns: every process sharing the database
	// sees it on its next read.
	RevokeAPIKey(ctx context.Context, id string, at time.Time) (APIKey, error)
	// CreateReviewerKey registers a reviewer key; ErrExists if the
	// organisation already has that key id; ErrNotFound for an unknown org.
	CreateReviewerKey(ctx context.Context, k ReviewerKey) error
}
