package timestamp

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1" //nolint:gosec // RFC 5280 method 1 key identifier, not a security use
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/svc-gov/svc/internal/fsutil"
)

// File names of a persisted authority inside its directory.
const (
	// RootFile is the file holding the authority's self-signed root CA
	// certificate (PEM "CERTIFICATE"). Distribute it to verifiers.
	RootFile = "root.pem"
	// CertificateFile is the file holding the TSA signing certificate (PEM
	// "CERTIFICATE"), issued by the root.
	CertificateFile = "tsa.pem"
	// KeyFile is the file holding the TSA signing key (PEM PKCS#8 "PRIVATE
	// KEY", mode 0600). It is the only secret of an authority.
	KeyFile = "tsa-key.pem"
)

// Authority is a built-in RFC 3161 time-stamping authority. It holds a
// self-signed ECDSA P-256 root CA certificate and an ECDSA P-256 TSA
// certificate issued by that root, whose extended key usage extension is
// critical and contains only id-kp-timeStamping, whose key usage is
// digitalSignature and which is not a CA. The root's private key is used
// once, to issue the TSA certificate, and is never stored.
//
// An Authority is persisted in a directory by [InitAuthority] and read back
// by [LoadAuthority]. Its methods are safe for concurrent use.
type Authority struct {
	root   *x509.Certificate
	leaf   *x509.Certificate
	key    crypto.Signer
	policy asn1.ObjectIdentifier
	now    func() time.Time

	// allowExpired lets tests issue tokens outside the certificate's
	// validity, to check that Verify rejects them.
	allowExpired bool
}

// AuthorityOptions configures [InitAuthority] and [LoadOrInitAuthority].
// The zero value gives sensible defaults.
type AuthorityOptions struct {
	// Name is the prefix of the certificates' subject common names. The
	// default is "svc built-in TSA".
	Name string
	// Validity is how long the root and TSA certificates are valid from
	// creation. The default is 10 years.
	Validity time.Duration
	// Policy is the TSA policy OID written in every token and in the TSA
	// certificate's certificate policies. The default is
	// 1.3.6.1.4.1.32473.1, under the documentation arc of RFC 5612.
	Policy asn1.ObjectIdentifier
	// Now is the clock used for certificate validity and genTime. The
	// default is time.Now; tests set it.
	Now func() time.Time
}

func (o AuthorityOptions) withDefaults() (AuthorityOptions, error) {
	if o.Name == "" {
		o.Name = defaultAuthorityName
	}
	if o.Validity == 0 {
		o.Validity = 10 * 365 * 24 * time.Hour
	}
	if o.Validity < 0 {
		return o, fmt.Errorf("timestamp: authority validity must be positive, got %v", o.Validity)
	}
	if len(o.Policy) == 0 {
		o.Policy = defaultPolicy
	}
	if _, err := asn1.Marshal(o.Policy); err != nil {
		return o, fmt.Errorf("timestamp: invalid authority policy OID %v: %w", o.Policy, err)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}

// Root returns the authority's self-signed root CA certificate: the trust
// anchor verifiers pass in [VerifyOptions.Roots].
func (a *Authority) Root() *x509.Certificate { return a.root }

// Certificate returns the TSA signing certificate (the leaf that signs
// tokens).
func (a *Authority) Certificate() *x509.Certificate { return a.leaf }

// Policy returns the TSA policy OID written in every token.
func (a *Authority) Policy() asn1.ObjectIdentifier {
	return append(asn1.ObjectIdentifier(nil), a.policy...)
}

// InitAuthority creates a new authority and writes it to dir, which is
// created with mode 0700 if missing: RootFile and CertificateFile (PEM
// certificates) and KeyFile (PEM PKCS#8 private key, mode 0600).
//
// It refuses to overwrite an existing authority, so that a signing key is
// never lost: if any of the three files exists, the error wraps
// [fs.ErrExist]. Every file is written to a temporary file, synced and then
// linked or renamed into place, and the key is written last, so an
// interrupted run never leaves a half-written file.
func InitAuthority(dir string, opts AuthorityOptions) (*Authority, error) {
	if err := checkNoAuthority(dir); err != nil {
		return nil, err
	}
	a, err := newAuthority(opts, nil)
	if err != nil {
		return nil, err
	}
	if err := a.save(dir); err != nil {
		return nil, err
	}
	return a, nil
}

// InitAuthorityWithKey creates a new authority whose TSA signing key is key,
// a P-256 key held elsewhere (an HSM or a cloud KMS through
// pkg/service/keys): it issues the TSA certificate for key's public key
// under a new root (whose private key is used once and never stored) and
// writes RootFile and CertificateFile to dir, never a key file. Like
// InitAuthority it refuses a directory that holds any authority file
// (fs.ErrExist).
func InitAuthorityWithKey(dir string, key crypto.Signer, opts AuthorityOptions) (*Authority, error) {
	if err := checkNoAuthority(dir); err != nil {
		return nil, err
	}
	a, err := newAuthorityFor(key, opts, nil)
	if err != nil {
		return nil, err
	}
	if err := a.saveCertificates(dir); err != nil {
		return nil, err
	}
	return a, nil
}

// LoadAuthorityWithKey reads the certificates of an authority written by
// InitAuthorityWithKey from dir and signs with key, which must be the
// key of the TSA certificate.
func LoadAuthorityWithKey(dir string, key crypto.Signer) (*Authority, error) {
	return loadAuthority(dir, func() (crypto.Signer, error) { return key, nil })
}

// LoadAuthority reads an authority written by [InitAuthority] from dir. It
// checks that the files are complete and consistent (the key matches the TSA
// certificate, the TSA certificate is issued by the root and obeys the RFC
// 3161 usage rules) and names the offending file and the fix in its errors.
// The loaded authority uses time.Now as its clock.
func LoadAuthority(dir string) (*Authority, error) {
	return loadAuthority(dir, func() (crypto.Signer, error) { return loadKey(dir) })
}

func loadAuthority(dir string, loadKey func() (crypto.Signer, error)) (*Authority, error) {
	root, err := loadOneCertificate(dir, RootFile)
	if err != nil {
		return nil, err
	}
	leaf, err := loadOneCertificate(dir, CertificateFile)
	if err != nil {
		return nil, err
	}
	key, err := loadKey()
	if err != nil {
		return nil, err
	}
	keyPath := filepath.Join(dir, KeyFile)
	if _, inMemory := key.(*ecdsa.PrivateKey); !inMemory {
		keyPath = "the configured TSA key"
	}
	leafPath := filepath.Join(dir, CertificateFile)
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(leaf.PublicKey) {
		return nil, fmt.Errorf("timestamp: load authority: the key in %s does not match the certificate in %s; restore the matching pair from a backup or initialise a new authority in an empty directory", keyPath, leafPath)
	}
	if err := leaf.CheckSignatureFrom(root); err != nil {
		return nil, fmt.Errorf("timestamp: load authority: the certificate in %s is not issued by the root in %s (%v); restore the matching files from a backup or initialise a new authority in an empty directory", leafPath, filepath.Join(dir, RootFile), err)
	}
	if err := checkTSACertificate(leaf); err != nil {
		return nil, fmt.Errorf("timestamp: load authority: %s: %w", leafPath, err)
	}
	policy := defaultPolicy
	if len(leaf.PolicyIdentifiers) > 0 {
		policy = leaf.PolicyIdentifiers[0]
	}
	return &Authority{root: root, leaf: leaf, key: key, policy: policy, now: time.Now}, nil
}

// LoadOrInitAuthority loads the authority in dir if one is there (any of its
// files exists) and otherwise initialises a new one with opts. opts.Now, if
// set, becomes the clock of a loaded authority too.
func LoadOrInitAuthority(dir string, opts AuthorityOptions) (*Authority, error) {
	if err := checkNoAuthority(dir); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		a, err := LoadAuthority(dir)
		if err != nil {
			return nil, err
		}
		if opts.Now != nil {
			a.now = opts.Now
		}
		return a, nil
	}
	a, err := InitAuthority(dir, opts)
	if errors.Is(err, fs.ErrExist) {
		// Another process initialised it between our check and our write.
		return LoadAuthority(dir)
	}
	return a, err
}

// newAuthority generates the keys and certificates of a new authority in
// memory. mutate, used only by tests, may alter the certificate templates
// before they are signed (to build deliberately broken authorities).
func newAuthority(opts AuthorityOptions, mutate func(root, leaf *x509.Certificate)) (*Authority, error) {
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("timestamp: generate TSA key: %w", err)
	}
	return newAuthorityFor(leafKey, opts, mutate)
}

// newAuthorityFor is newAuthority with the TSA signing key given.
func newAuthorityFor(leafKey crypto.Signer, opts AuthorityOptions, mutate func(root, leaf *x509.Certificate)) (*Authority, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	leafPub, ok := leafKey.Public().(*ecdsa.PublicKey)
	if !ok || leafPub.Curve != elliptic.P256() {
		return nil, fmt.Errorf("timestamp: the TSA signing key is %T, want ECDSA P-256", leafKey.Public())
	}
	rootKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("timestamp: generate root key: %w", err)
	}
	rootSKI, err := keyID(&rootKey.PublicKey)
	if err != nil {
		return nil, err
	}
	leafSKI, err := keyID(leafPub)
	if err != nil {
		return nil, err
	}
	rootSerial, err := randomPositive(128)
	if err != nil {
		return nil, err
	}
	leafSerial, err := randomPositive(128)
	if err != nil {
		return nil, err
	}
	policy, err := x509OID(opts.Policy)
	if err != nil {
		return nil, err
	}
	ekuValue, err := asn1.Marshal([]asn1.ObjectIdentifier{oidKPTimeStamping})
	if err != nil {
		return nil, fmt.Errorf("timestamp: encode extended key usage: %w", err)
	}

	now := opts.Now().UTC().Truncate(time.Second)
	// A little slack for verifiers whose clocks run behind.
	notBefore := now.Add(-5 * time.Minute)
	notAfter := now.Add(opts.Validity)
	id := fmt.Sprintf("%X", rootSKI[:4])

	rootTmpl := &x509.Certificate{
		SerialNumber:          rootSerial,
		Subject:               pkix.Name{CommonName: opts.Name + " root CA " + id},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLen:            0,
		MaxPathLenZero:        true,
		SubjectKeyId:          rootSKI,
	}
	leafTmpl := &x509.Certificate{
		SerialNumber:          leafSerial,
		Subject:               pkix.Name{CommonName: opts.Name + " " + id},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  false,
		SubjectKeyId:          leafSKI,
		PolicyIdentifiers:     []asn1.ObjectIdentifier{opts.Policy},
		Policies:              []x509.OID{policy},
		// x509.Certificate.ExtKeyUsage would be encoded non-critical;
		// RFC 3161 section 2.3 requires a critical extension.
		ExtraExtensions: []pkix.Extension{{Id: oidExtKeyUsage, Critical: true, Value: ekuValue}},
	}
	if mutate != nil {
		mutate(rootTmpl, leafTmpl)
	}

	rootDER, err := x509.CreateCertificate(rand.Reader, rootTmpl, rootTmpl, &rootKey.PublicKey, rootKey)
	if err != nil {
		return nil, fmt.Errorf("timestamp: create root certificate: %w", err)
	}
	root, err := x509.ParseCertificate(rootDER)
	if err != nil {
		return nil, fmt.Errorf("timestamp: parse new root certificate: %w", err)
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, root, leafPub, rootKey)
	if err != nil {
		return nil, fmt.Errorf("timestamp: create TSA certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(leafDER)
	if err != nil {
		return nil, fmt.Errorf("timestamp: parse new TSA certificate: %w", err)
	}
	return &Authority{
		root:   root,
		leaf:   leaf,
		key:    leafKey,
		policy: append(asn1.ObjectIdentifier(nil), opts.Policy...),
		now:    opts.Now,
	}, nil
}

// keyID computes an RFC 5280 method-1 key identifier: the SHA-1 hash of the
// subjectPublicKey bit string.
func keyID(pub crypto.PublicKey) ([]byte, error) {
	spki, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("timestamp: encode public key: %w", err)
	}
	var info struct {
		Algorithm pkix.AlgorithmIdentifier
		PublicKey asn1.BitString
	}
	if _, err := asn1.Unmarshal(spki, &info); err != nil {
		return nil, fmt.Errorf("timestamp: decode public key: %w", err)
	}
	sum := sha1.Sum(info.PublicKey.Bytes) //nolint:gosec // key identifier only
	return sum[:], nil
}

// x509OID converts an asn1.ObjectIdentifier to an x509.OID.
func x509OID(oid asn1.ObjectIdentifier) (x509.OID, error) {
	ints := make([]uint64, len(oid))
	for i, v := range oid {
		if v < 0 {
			return x509.OID{}, fmt.Errorf("timestamp: invalid policy OID %v", oid)
		}
		ints[i] = uint64(v)
	}
	o, err := x509.OIDFromInts(ints)
	if err != nil {
		return x509.OID{}, fmt.Errorf("timestamp: invalid policy OID %v: %w", oid, err)
	}
	return o, nil
}

// checkNoAuthority returns an error wrapping fs.ErrExist if any authority
// file exists in dir.
func checkNoAuthority(dir string) error {
	for _, name := range []string{RootFile, CertificateFile, KeyFile} {
		p := filepath.Join(dir, name)
		_, err := os.Lstat(p)
		if err == nil {
			return fmt.Errorf("timestamp: an authority already exists in %s (found %s); refusing to overwrite it and lose its key: load it instead, or choose an empty directory: %w", dir, p, fs.ErrExist)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("timestamp: check for an existing authority: %w", err)
		}
	}
	return nil
}

// save writes the authority to dir without ever overwriting a file. The key
// is written last: a directory holding the key holds a complete authority.
func (a *Authority) save(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("timestamp: create authority directory: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(a.key)
	if err != nil {
		return fmt.Errorf("timestamp: encode TSA key: %w", err)
	}
	files := []struct {
		name string
		data []byte
		perm fs.FileMode
	}{
		{RootFile, EncodeCertificatePEM(a.root), 0o644},
		{CertificateFile, EncodeCertificatePEM(a.leaf), 0o644},
		{KeyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600},
	}
	for _, f := range files {
		if err := fsutil.WriteNew(filepath.Join(dir, f.name), f.data, f.perm); err != nil {
			return err
		}
	}
	return fsutil.SyncDir(dir)
}

const loadFix = "restore it from a backup, or initialise a new authority in an empty directory (tokens issued by the old authority stay verifiable with its root certificate)"

// saveCertificates writes the authority's certificates to dir, never
// overwriting a file; the TSA certificate is written last.
func (a *Authority) saveCertificates(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("timestamp: create authority directory: %w", err)
	}
	for _, f := range []struct {
		name string
		c    *x509.Certificate
	}{{RootFile, a.root}, {CertificateFile, a.leaf}} {
		if err := fsutil.WriteNew(filepath.Join(dir, f.name), EncodeCertificatePEM(f.c), 0o644); err != nil {
			return err
		}
	}
	return fsutil.SyncDir(dir)
}

// loadOneCertificate reads the single certificate in dir/name.
func loadOneCertificate(dir, name string) (*x509.Certificate, error) {
	p := filepath.Join(dir, name)
	data, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("timestamp: load authority: %s is missing (the directory does not hold a complete authority); %s: %w", p, loadFix, err)
		}
		return nil, fmt.Errorf("timestamp: load authority: %w", err)
	}
	certs, err := ParseCertificatesPEM(data)
	if err != nil {
		return nil, fmt.Errorf("timestamp: load authority: %s: %w; %s", p, err, loadFix)
	}
	if len(certs) != 1 {
		return nil, fmt.Errorf("timestamp: load authority: %s holds %d certificates, want exactly 1; %s", p, len(certs), loadFix)
	}
	return certs[0], nil
}

// loadKey reads the TSA signing key.
func loadKey(dir string) (crypto.Signer, error) {
	p := filepath.Join(dir, KeyFile)
	data, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("timestamp: load authority: %s is missing (the directory does not hold a complete authority, perhaps an interrupted initialisation); %s: %w", p, loadFix, err)
		}
		return nil, fmt.Errorf("timestamp: load authority: %w", err)
	}
	var block *pem.Block
	for rest := data; ; {
		block, rest = pem.Decode(rest)
		if block == nil || block.Type == "PRIVATE KEY" {
			break
		}
	}
	if block == nil {
		return nil, fmt.Errorf("timestamp: load authority: %s holds no PEM \"PRIVATE KEY\" block; %s", p, loadFix)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("timestamp: load authority: %s: parse PKCS#8 key: %w; %s", p, err, loadFix)
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, fmt.Errorf("timestamp: load authority: %s holds a %T key, want ECDSA P-256; %s", p, key, loadFix)
	}
	return ec, nil
}
