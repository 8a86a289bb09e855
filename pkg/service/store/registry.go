package store

import (
	"context"
	"time"
)

// Manifest is a registered check manifest, content-addressed.
type Manifest struct {
	OrgID     string
	ID        string // sha256:<hex> of the canonical manifest
	Name      string
	Body      []byte // canonical JSON
	CreatedAt time.Time
}

// ManifestReader reads an organisation's check manifests.
type ManifestReader interface {
	// Manifest returns a manifest of the organisation; ErrNotFound otherwise.
	Manifest(ctx context.Context, orgID, id string) (Manifest, error)
	// ManifestsOfOrg lists the organisation's manifests by creation time, then id.
	ManifestsOfOrg(ctx context.Context, orgID string) ([]Manifest, error)
}

// ManifestStore is the manifests role.
type ManifestStore interface {
	ManifestReader
	// PutManifest stores a manifest; created=false if the organisation
	// already had that manifest id (idempotent). ErrNotFound for an
	// unknown organisation.
	PutManifest(ctx context.Context, m Manifest) (created bool, err error)
}

// Profile is a published, signed model profile.
type Profile struct {
	ID          string   // profile_id
	ModelHashes []string // onnx_model_hash of every model it covers
	Body        []byte   // the signed profile JSON
	PublishedAt time.Time
}

// ProfileReader reads the published model profiles (the service's, not an
// organisation's).
type ProfileReader interface {
	// Profiles lists published profiles ordered by profile id.
	Profiles(ctx context.Context) ([]Profile, error)
	// ProfileByID and ProfileByModelHash find a profile; ErrNotFound if absent.
	// ProfileByModelHash returns the covering profile of latest
	// PublishedAt (the last published on a tie).
	ProfileByID(ctx context.Context, id string) (Profile, error)
	ProfileByModelHash(ctx context.Context, modelHash string) (Profile, error)
}

// ProfileStore is the profile registry.
type ProfileStore interface {
	ProfileReader
	// PutProfile publishes a profile, replacing the model index entries of
	// the models it covers (unless one of them is covered by a profile of
	// later PublishedAt); ErrExists if the profile id is already published
	// (profiles are immutable: a new version gets a new id).
	PutProfile(ctx context.Context, p Profile) error
}
