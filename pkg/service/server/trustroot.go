package server

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/service/keys"
)

// Files of a data directory's trust root.
const (
	// TrustRootFile is the current svc.trust-root/v1 document, served at
	// api.TrustRootPath.
	TrustRootFile = "trust-root.json"
	// TrustRootHistoryDir holds every version as N.json.
	TrustRootHistoryDir = "trust-root"
	// RootKeyFile is the default root-signing key (a file: move it to an
	// offline token and name it with a root key URI).
	RootKeyFile = "root-key.pem"
)

// ErrNoTrustRoot reports a data directory without a trust root.
var ErrNoTrustRoot = errors.New("no trust root")

// RootKeyURI returns uri, or the file URI of dir's root-key.pem when uri
// is empty.
func RootKeyURI(dir, uri string) (string, error) {
	if uri != "" {
		return uri, nil
	}
	return keys.FileURI(filepath.Join(dir, RootKeyFile))
}

// ReadTrustRoot returns the parsed trust root of dir and its bytes;
// ErrNoTrustRoot when dir has none.
func ReadTrustRoot(dir string) (*trustroot.Root, []byte, error) {
	data, err := os.ReadFile(filepath.Join(dir, TrustRootFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w in %s: the first 'svc serve' writes one", ErrNoTrustRoot, dir)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("trust root: %w", err)
	}
	r, err := trustroot.Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, TrustRootFile), err)
	}
	return r, data, nil
}

// EnsureTrustRoot returns the trust root of dir, writing version 1 when
// there is none: m's VPEC key for vpec-signing, its profile key for
// profile-signing and circuit-signing, every other key of m.Trust (keys
// of the data directory used before) for those three, every TSA root
// for tsa-root, and the root key (rootURI, default root-key.pem, created
// when absent) for root-signing, signed by it. Every window starts at
// the earliest NotBefore of the TSA roots: nothing the directory's keys
// signed carries an earlier genTime (the signing key and the built-in
// TSA are created together). It reports whether it wrote one.
func EnsureTrustRoot(ctx context.Context, dir string, m *Material, rootURI string, opts keys.Options, now time.Time) (*trustroot.Root, []byte, bool, error) {
	if r, data, err := ReadTrustRoot(dir); !errors.Is(err, ErrNoTrustRoot) {
		if err != nil {
			return nil, nil, false, err
		}
		return checkRoot(ctx, dir, r, data, m, rootURI, opts, now)
	}
	uri, err := RootKeyURI(dir, rootURI)
	if err != nil {
		return nil, nil, false, err
	}
	if rootURI == "" {
		if _, err := newKeyFile(filepath.Join(dir, RootKeyFile)); err != nil {
			return nil, nil, false, fmt.Errorf("create root key: %w", err)
		}
	}
	rk, err := openRootKey(ctx, uri, opts)
	if err != nil {
		return nil, nil, false, err
	}
	defer rk.Close()
	from := now
	for _, c := range m.Trust.Roots() {
		if c.NotBefore.Before(from) {
			from = c.NotBefore
		}
	}
	from = from.UTC()
	var nks []trustroot.NewKey
	add := func(p trustroot.Purpose, pub ed25519.PublicKey, comment string) {
		nks = append(nks, trustroot.NewKey{Purpose: p, PublicKey: pub, From: from, Comment: comment})
	}
	add(trustroot.PurposeVPEC, m.Signer.PublicKey(), "")
	add(trustroot.PurposeProfile, m.ProfileSigner.PublicKey(), "")
	add(trustroot.PurposeCircuit, m.ProfileSigner.PublicKey(), "")
	for _, id := range m.Trust.KeyIDs() {
		if id == m.Signer.KeyID() || id == m.ProfileSigner.KeyID() || m.isNext(id) {
			// A next key (--next-signing-key) enters the root by a
			// rotation, valid from its instant T, never before.
			continue
		}
		pub, _ := m.Trust.Key(id)
		for _, p := range []trustroot.Purpose{trustroot.PurposeVPEC, trustroot.PurposeProfile, trustroot.PurposeCircuit} {
			add(p, pub, "an earlier key of this data directory")
		}
	}
	for _, c := range m.Trust.Roots() {
		nks = append(nks, trustroot.NewKey{Purpose: trustroot.PurposeTSARoot, Certificate: c, From: from})
	}
	add(trustroot.PurposeRoot, rk.Public().(ed25519.PublicKey), "")
	r, err := trustroot.Build(now.UTC(), 1, nks...)
	if err != nil {
		return nil, nil, false, err
	}
	data, err := signAndWrite(dir, r, rk)
	if err != nil {
		return nil, nil, false, err
	}
	return r, data, true, nil
}

func openRootKey(ctx context.Context, uri string, opts keys.Options) (*keys.Signer, error) {
	opts.Want = keys.Ed25519
	rk, err := keys.Open(ctx, uri, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: root-signing key: %w", ErrKey, err)
	}
	return rk, nil
}

// signAndWrite signs r with rk and writes it as dir's current root and
// as version N of the history (never replacing a version).
func signAndWrite(dir string, r *trustroot.Root, rk *keys.Signer) ([]byte, error) {
	if err := r.Sign(rk); err != nil {
		return nil, err
	}
	data, err := r.Marshal()
	if err != nil {
		return nil, err
	}
	hist := filepath.Join(dir, TrustRootHistoryDir)
	if err := os.MkdirAll(hist, 0o700); err != nil {
		return nil, fmt.Errorf("trust root: %w", err)
	}
	if err := fsutil.WriteNew(filepath.Join(hist, strconv.FormatInt(r.Version, 10)+".json"), data, 0o644); err != nil {
		return nil, fmt.Errorf("trust root version %d: %w", r.Version, err)
	}
	if err := fsutil.WriteReplace(filepath.Join(dir, TrustRootFile), data, 0o644); err != nil {
		return nil, fmt.Errorf("trust root: %w", err)
	}
	return data, nil
}

// Rotation is a key rotation for RotateKey.
type Rotation struct {
	// Purpose is the purpose rotated (not tsa-root).
	Purpose trustroot.Purpose
	// NewKey is the URI of the new key (opened and probed).
	NewKey string
	// OldKeyID is the key whose window ends; empty means the one key of
	// Purpose whose window is open.
	OldKeyID string
	// At is the rotation time T: the old key's valid_until and the new
	// key's valid_from.
	At time.Time
}

// RotateKey writes the next version of dir's trust root in which
// rot.NewKey is valid for rot.Purpose from rot.At and the old key's window
// ends then (trustroot.Rotate), signed by the root key rootURI. The
// service must sign with the new key from rot.At: a running server whose
// KeyRing holds the new key (svc serve --next-signing-key) does once it
// has reloaded the root (ReloadTrustRoot, SIGHUP); otherwise configure its
// URI and restart at rot.At.
func RotateKey(ctx context.Context, dir string, rot Rotation, rootURI string, opts keys.Options, now time.Time) (*trustroot.Root, error) {
	r, _, err := ReadTrustRoot(dir)
	if err != nil {
		return nil, err
	}
	if rot.Purpose == trustroot.PurposeTSARoot || rot.Purpose == trustroot.PurposeRoot {
		return nil, fmt.Errorf("%w: %s keys are not rotated by svc keys rotate: a new built-in TSA key gets its root with --tsa-key, a root key is added by the root custodians", trustroot.ErrRotate, rot.Purpose)
	}
	old := rot.OldKeyID
	if old == "" {
		for _, k := range r.Keys {
			if k.Purpose == rot.Purpose && k.Window.Until.IsZero() && k.Window.CompromisedAt.IsZero() {
				if old != "" {
					return nil, fmt.Errorf("%w: several %s keys have open windows (%s, %s): name the one to end", trustroot.ErrRotate, rot.Purpose, old, k.KeyID)
				}
				old = k.KeyID
			}
		}
		if old == "" {
			return nil, fmt.Errorf("%w: no %s key with an open window", trustroot.ErrRotate, rot.Purpose)
		}
	}
	o := opts
	o.Want = keys.Ed25519
	nk, err := keys.Open(ctx, rot.NewKey, o)
	if err != nil {
		return nil, fmt.Errorf("%w: new %s key: %w", ErrKey, rot.Purpose, err)
	}
	pub := nk.Public().(ed25519.PublicKey)
	nk.Close()
	next, err := trustroot.Rotate(r, old, trustroot.NewKey{Purpose: rot.Purpose, PublicKey: pub, From: rot.At.UTC()}, now.UTC())
	if err != nil {
		return nil, err
	}
	return writeNext(ctx, dir, next, rootURI, opts)
}

// CompromiseKey writes the next version of dir's trust root in which key
// keyID is compromised from at (trustroot.Compromise), signed by the root
// key rootURI.
func CompromiseKey(ctx context.Context, dir, keyID string, at time.Time, rootURI string, opts keys.Options, now time.Time) (*trustroot.Root, error) {
	r, _, err := ReadTrustRoot(dir)
	if err != nil {
		return nil, err
	}
	next, err := trustroot.Compromise(r, keyID, at.UTC(), now.UTC())
	if err != nil {
		return nil, err
	}
	return writeNext(ctx, dir, next, rootURI, opts)
}

func writeNext(ctx context.Context, dir string, next *trustroot.Root, rootURI string, opts keys.Options) (*trustroot.Root, error) {
	uri, err := RootKeyURI(dir, rootURI)
	if err != nil {
		return nil, err
	}
	rk, err := openRootKey(ctx, uri, opts)
	if err != nil {
		return nil, err
	}
	defer rk.Close()
	if _, err := signAndWrite(dir, next, rk); err != nil {
		return nil, err
	}
	return next, nil
}

// ErrKeyNotInRoot reports a configured key that the data directory's
// trust root does not list for its purpose: what it signs would not
// verify against the root. Rotate to it first (RotateKey).
var ErrKeyNotInRoot = errors.New("key not in the trust root")

// checkRoot checks that the root r of dir lists m's VPEC and profile keys
// for their purposes, and adds the TSA roots of m it lacks (a TSA key
// moved to an HSM gets a new root) in a next version signed by the root
// key, which it reports as written.
func checkRoot(ctx context.Context, dir string, r *trustroot.Root, data []byte, m *Material, rootURI string, opts keys.Options, now time.Time) (*trustroot.Root, []byte, bool, error) {
	for _, c := range []struct {
		p    trustroot.Purpose
		id   string
		flag string
	}{{trustroot.PurposeVPEC, m.Signer.KeyID(), "vpec-signing"}, {trustroot.PurposeProfile, m.ProfileSigner.KeyID(), "profile-signing"}} {
		if r.Key(c.p, c.id) == nil {
			return nil, nil, false, fmt.Errorf("%w: the configured %s key %s is not in %s (version %d): run 'svc keys rotate --purpose %s --new-key URI' first, so that what it signs verifies", ErrKeyNotInRoot, c.p, c.id, filepath.Join(dir, TrustRootFile), r.Version, c.flag)
		}
	}
	return addTSARoots(ctx, dir, r, data, m.Trust.Roots(), "built-in TSA root added at start", rootURI, opts, now)
}

// InRoot reports whether the data directory dir has a trust root listing
// the VPEC key keyID and the TSA root certificate whose DER has the
// "sha256:<hex>" id tsaRoot (setup.CertID): a service identity recorded
// before a rotation is still this service's.
func InRoot(dir, keyID string, tsaRoot func(*x509.Certificate) bool) bool {
	r, _, err := ReadTrustRoot(dir)
	if err != nil || r.Key(trustroot.PurposeVPEC, keyID) == nil {
		return false
	}
	for _, k := range r.Keys {
		if k.Purpose == trustroot.PurposeTSARoot && tsaRoot(k.Certificate) {
			return true
		}
	}
	return false
}

// EnsureLogKeyInRoot returns dir's trust root with the transparency log's
// key lk in it for log-checkpoint, writing the next version (signed by the
// root key, rootURI as in EnsureTrustRoot) when it is not there yet: on
// the first start with a log, or the first after an upgrade that added
// one. The key's window starts with the earliest window of the root (the
// log signs nothing before the service exists). It reports whether it
// wrote a version.
func EnsureLogKeyInRoot(ctx context.Context, dir string, lk tlog.LogKey, rootURI string, opts keys.Options, now time.Time) (*trustroot.Root, []byte, bool, error) {
	r, data, err := ReadTrustRoot(dir)
	if err != nil {
		return nil, nil, false, err
	}
	for _, k := range r.Keys {
		if k.Purpose == trustroot.PurposeLog && k.NoteVerifier == lk.String() {
			return r, data, false, nil
		}
	}
	from := now.UTC()
	for _, k := range r.Keys {
		if !k.Window.From.IsZero() && k.Window.From.Before(from) {
			from = k.Window.From
		}
	}
	return writeWith(ctx, dir, r, rootURI, opts, now, trustroot.NewKey{Purpose: trustroot.PurposeLog, PublicKey: lk.PublicKey(),
		NoteName: lk.Origin(), From: from, Comment: "the transparency log's checkpoint key"})
}

// EnsureTSARootsInRoot returns dir's trust root with every certificate of
// roots in it for tsa-root, writing the next version (signed by the root
// key, rootURI as in EnsureTrustRoot) when one is missing: the roots of
// external authorities svc serve --tsa-root publishes in the trust bundle
// are then in the trust root too, so that what the service serves at
// /.well-known/svc/trust-root.json, and its dashboard, verify their
// tokens. Each new entry is valid from the certificate's NotBefore (no
// token chaining to it is older). It reports whether it wrote a version.
func EnsureTSARootsInRoot(ctx context.Context, dir string, roots []*x509.Certificate, rootURI string, opts keys.Options, now time.Time) (*trustroot.Root, []byte, bool, error) {
	r, data, err := ReadTrustRoot(dir)
	if err != nil {
		return nil, nil, false, err
	}
	return addTSARoots(ctx, dir, r, data, roots, "external TSA root (--tsa-root) added at start", rootURI, opts, now)
}

// addTSARoots returns r (read from data) with every certificate of certs
// in it for tsa-root, each valid from its NotBefore, writing the next
// version when one is missing (writeWith); it reports whether it wrote.
func addTSARoots(ctx context.Context, dir string, r *trustroot.Root, data []byte, certs []*x509.Certificate, comment, rootURI string, opts keys.Options, now time.Time) (*trustroot.Root, []byte, bool, error) {
	var add []trustroot.NewKey
	for _, c := range certs {
		if r.Key(trustroot.PurposeTSARoot, trustroot.CertificateKeyID(c)) == nil {
			add = append(add, trustroot.NewKey{Purpose: trustroot.PurposeTSARoot, Certificate: c, From: c.NotBefore.UTC(), Comment: comment})
		}
	}
	if len(add) == 0 {
		return r, data, false, nil
	}
	return writeWith(ctx, dir, r, rootURI, opts, now, add...)
}

// writeWith writes the next version of dir's root r with add in it,
// signed by the root key rootURI, and returns it with its bytes.
func writeWith(ctx context.Context, dir string, r *trustroot.Root, rootURI string, opts keys.Options, now time.Time, add ...trustroot.NewKey) (*trustroot.Root, []byte, bool, error) {
	next, err := trustroot.AddKeys(r, now.UTC(), add...)
	if err != nil {
		return nil, nil, false, err
	}
	if _, err := writeNext(ctx, dir, next, rootURI, opts); err != nil {
		return nil, nil, false, err
	}
	out, err := next.Marshal()
	if err != nil {
		return nil, nil, false, err
	}
	return next, out, true, nil
}
