package keys

import (
	"bytes"
	"context"
	"crypto"
	"fmt"
	"strings"
	"sync"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/kms/hashivault"
	"github.com/sigstore/sigstore/pkg/signature/options"
)

// vaultBackend signs through HashiCorp Vault's (or OpenBao's) transit
// engine, with sigstore's wrapper. The key version is pinned by the first
// signature (Open's probe), so a key rotated inside Vault afterwards is an
// error, not a silent change of key id.
type vaultBackend struct {
	sv      *hashivault.SignerVerifier
	alg     Algorithm
	mu      sync.Mutex
	version string
}

func openVault(ctx context.Context, u *URI, opts Options) (*Signer, error) {
	first := func(vals ...string) string {
		for _, v := range vals {
			if v != "" {
				return v
			}
		}
		return ""
	}
	addr := first(opts.VaultAddress, opts.getenv("VAULT_ADDR"), opts.getenv("BAO_ADDR"))
	token := first(opts.VaultToken, opts.getenv("VAULT_TOKEN"), opts.getenv("BAO_TOKEN"))
	path := first(opts.VaultTransitPath, opts.getenv("TRANSIT_SECRET_ENGINE_PATH"), "transit")
	if addr == "" {
		return nil, fmt.Errorf("%w: no Vault address: set VAULT_ADDR (or BAO_ADDR)", ErrUnreachable)
	}
	if token == "" {
		// Never fall back to a token helper or ~/.vault-token: the
		// service's credentials are configured, not found.
		return nil, fmt.Errorf("%w: no Vault token: set VAULT_TOKEN (or BAO_TOKEN)", ErrUnreachable)
	}
	sv, err := hashivault.LoadSignerVerifier("hashivault://"+u.VaultKey, crypto.Hash(0),
		options.WithRPCAuthOpts(options.RPCAuth{Address: addr, Token: token, Path: path}))
	if err != nil {
		return nil, fmt.Errorf("%w: Vault at %s: %w", ErrUnreachable, addr, err)
	}
	pub, err := sv.PublicKey(options.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("%w: Vault at %s, transit mount %q: read the public key of %q: %w", ErrUnreachable, addr, path, u.VaultKey, err)
	}
	alg, err := algorithmOf(pub)
	if err != nil {
		return nil, fmt.Errorf("Vault transit key %q: %w (create it with type=ed25519 or type=ecdsa-p256)", u.VaultKey, err)
	}
	return newSigner(ctx, u.Raw, u.Scheme, pub, &vaultBackend{sv: sv, alg: alg}, true, opts)
}

func (v *vaultBackend) sign(ctx context.Context, msg []byte) ([]byte, error) {
	var hash crypto.Hash
	if v.alg == ECDSAP256 {
		hash = crypto.SHA256
	}
	v.mu.Lock()
	version := v.version
	v.mu.Unlock()
	var used string
	so := []signature.SignOption{options.WithContext(ctx), options.WithDigest(msg), options.WithCryptoSignerOpts(hash), options.ReturnKeyVersionUsed(&used)}
	if version != "" {
		so = append(so, options.WithKeyVersion(version))
	}
	sig, err := v.sv.SignMessage(bytes.NewReader(msg), so...)
	if err != nil {
		return nil, fmt.Errorf("%w: Vault transit: %w", ErrSign, err)
	}
	if version == "" {
		// "vault:v3:" -> "3"
		if n := strings.TrimSuffix(strings.TrimPrefix(used, "vault:v"), ":"); n != "" && n != used {
			v.mu.Lock()
			if v.version == "" {
				v.version = n
			}
			v.mu.Unlock()
		}
	}
	return sig, nil
}

func (v *vaultBackend) close() error { return nil }
