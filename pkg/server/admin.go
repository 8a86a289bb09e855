package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/svc-gov/svc/pkg/store"
	"github.com/svc-gov/svc/pkg/vpec"
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
func CreateOrg(ctx context.Context, st store.Store, name, tier string, now time.Time) (store.Org, error) {
	if !orgNamePattern.MatchString(name) {
		return store.Org{}, fmt.Errorf("%w organisation name %q: use 1-63 lowercase letters, digits and dashes, starting with a letter or digit", ErrInvalid, name)
	}
	if tier != TierStandard && tier != TierEnterprise {
		return store.Org{}, fmt.Errorf("%w tier %q: use %s or %s", ErrInvalid, tier, TierStandard, TierEnterprise)
	}
	o := store.Org{ID: "org_" + name, Name: name, Tier: tier, CreatedAt: now.UTC()}
	if err := st.CreateOrg(ctx, o); err != nil {
		return store.Org{}, fmt.Errorf("create organisation %s: %w", name, err)
	}
	return o, nil
}

// keyAlphabet is base62: API keys are copy-paste and URL safe.
const keyAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewAPIKey returns a fresh API key for env: the prefix (pk_sb_ or
// pk_live_) and 32 random base62 characters (190 bits).
func NewAPIKey(env vpec.Environment) (string, error) {
	prefix := vpec.SandboxKeyPrefix
	if env == vpec.Production {
		prefix = vpec.ProductionKeyPrefix
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
func KeyID(key string) string {
	env, _ := vpec.EnvironmentOf(key)
	prefix := vpec.SandboxKeyPrefix
	if env == vpec.Production {
		prefix = vpec.ProductionKeyPrefix
	}
	return prefix + hex.EncodeToString(HashKey(key))[:12]
}

// CreateAPIKey issues a key for the organisation named orgName and stores
// only its hash. The key is returned once and cannot be recovered.
func CreateAPIKey(ctx context.Context, st store.Store, orgName string, env vpec.Environment, now time.Time) (string, store.APIKey, error) {
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
