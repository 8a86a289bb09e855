package server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/store"
)

// Organisation tiers; the tier sets the calibration turnaround.
const (
	TierStandard   = "standard"
	TierEnterprise = "enterprise"
)

// ErrInvalid reports an administrative request with a bad name or value.
var ErrInvalid = errors.New("invalid")

var orgNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// CreateOrg adds an organisation named name (lowercase letters, digits and
// dashes) with the given tier.
func CreateOrg(ctx context.Context, st store.OrgStore, name, tier string, now time.Time) (store.Org, error) {
	if !orgNamePattern.MatchString(name) {
		return store.Org{}, fmt.Errorf("%w organisation name %q: use 1-63 lowercase letters, digits and dashes, starting with a letter or digit", ErrInvalid, name)
	}
	if tier != TierStandard && tier != TierEnterprise {
		return store.Org{}, fmt.Errorf("%w tier %q: use %s or %s", ErrInvalid, tier, TierStandard, TierEnterprise)
	}
	o := store.Org{ID: "org_" + name, Name: name, Tier: tier, CreatedAt: now.UTC()}
	if err := st.CreateOrg(ctx, o); err != nil {
		if errors.Is(err, store.ErrExists) {
			// The database's own words (constraint names) are no help here.
			return store.Org{}, fmt.Errorf("organisation %s: %w", name, store.ErrExists)
		}
		return store.Org{}, fmt.Errorf("create organisation %s: %w", name, err)
	}
	return o, nil
}

// keyAlphabet is base62: API keys are copy-paste and URL safe.
const keyAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewAPIKey returns a fresh API key for env: the prefix (pk_sb_ or
// pk_live_) and 32 random base62 characters (190 bits).
func NewAPIKey(env vpec.Environment) (string, error) {
	prefix := vpec.Sandbox.KeyPrefix()
	if env == vpec.Production {
		prefix = vpec.Production.KeyPrefix()
	}
	b := make([]byte, 32)
	for i := range b {
		var r [1]byte
		for {
			if _, err := rand.Read(r[:]); err != nil {
				return "", err
			}
			if r[0] < 248 { // 248 = 4*62: no modulo bias
				break
			}
		}
		b[i] = keyAlphabet[int(r[0])%62]
	}
	return prefix + string(b), nil
}

// KeyID is the public id of an API key: its prefix and the first 12 hex
// characters of its SHA-256. VPECs name the key that opened the run by it.
func KeyID(key string) string { return api.KeyID(key) }

// CreateAPIKey issues a key for the organisation named orgName and stores
// only its hash. The key is returned once and cannot be recovered.
func CreateAPIKey(ctx context.Context, st store.OrgStore, orgName string, env vpec.Environment, now time.Time) (string, store.APIKey, error) {
	org, err := st.OrgByName(ctx, orgName)
	if err != nil {
		return "", store.APIKey{}, fmt.Errorf("organisation %s: %w", orgName, err)
	}
	key, err := NewAPIKey(env)
	if err != nil {
		return "", store.APIKey{}, err
	}
	k := store.APIKey{ID: KeyID(key), OrgID: org.ID, Environment: string(env), Hash: HashKey(key), CreatedAt: now.UTC()}
	if err := st.CreateAPIKey(ctx, k); err != nil {
		return "", store.APIKey{}, fmt.Errorf("store API key: %w", err)
	}
	return key, k, nil
}

// RevocationDelay bounds how long a revoked API key keeps working on a
// server sharing the database: the life of a server's key cache entry.
const RevocationDelay = keyCacheTTL

// ListAPIKeys returns the API keys (never their secrets: only ids are
// stored) of the organisation named orgName, or of every organisation when
// orgName is "", oldest first, revoked ones included.
func ListAPIKeys(ctx context.Context, st store.OrgReader, orgName string) ([]store.APIKey, error) {
	orgID := ""
	if orgName != "" {
		org, err := st.OrgByName(ctx, orgName)
		if err != nil {
			return nil, fmt.Errorf("organisation %s: %w", orgName, err)
		}
		orgID = org.ID
	}
	keys, err := st.APIKeys(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("list API keys: %w", err)
	}
	return keys, nil
}

// RevokeAPIKey revokes the API key with the given public id (as listed by
// ListAPIKeys, e.g. pk_live_9c1e4b7a2f30) at now. Every server sharing the
// database refuses it within RevocationDelay, with 401 saying it was
// revoked. Revoking a revoked key keeps its first revocation time. An
// unknown id gives an error matching store.ErrNotFound; a malformed one
// ErrInvalid.
func RevokeAPIKey(ctx context.Context, st store.OrgStore, id string, now time.Time) (store.APIKey, error) {
	if !api.ValidKeyID(id) {
		if _, ok := api.EnvironmentOf(id); ok && len(id) > 20 {
			// Never echo what looks like a secret key into logs or terminals.
			return store.APIKey{}, fmt.Errorf("%w API key id: that is a secret API key, not a key id; give the key's id, not the secret key itself ('svc admin key list' shows the ids, e.g. %s)", ErrInvalid, KeyID(id))
		}
		return store.APIKey{}, fmt.Errorf("%w API key id %q: a key id is pk_sb_ or pk_live_ followed by 12 hex digits, e.g. pk_live_9c1e4b7a2f30 ('svc admin key list' shows them)", ErrInvalid, id)
	}
	k, err := st.RevokeAPIKey(ctx, id, now.UTC())
	if err != nil {
		return store.APIKey{}, fmt.Errorf("revoke API key %s: %w", id, err)
	}
	return k, nil
}
