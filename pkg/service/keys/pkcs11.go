//go:build cgo

package keys

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"encoding/asn1"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"

	"github.com/miekg/pkcs11"
)

// PKCS#11 3.0 values miekg/pkcs11 v1.1.2 does not name.
const (
	ckmEDDSA                 = 0x1057 // CKM_EDDSA
	ckkECEdwards             = 0x40   // CKK_EC_EDWARDS
	ckmECEdwardsKeyPairGen   = 0x1055 // CKM_EC_EDWARDS_KEY_PAIR_GEN
	defaultPKCS11Sessions    = 4
	maxFoundObjects          = 2
	pkcs11ProviderName       = "pkcs11"
	pkcs11AlreadyInitialized = pkcs11.Error(pkcs11.CKR_CRYPTOKI_ALREADY_INITIALIZED)
)

var (
	oidEd25519   = asn1.ObjectIdentifier{1, 3, 101, 112}
	oidP256      = asn1.ObjectIdentifier{1, 2, 840, 10045, 3, 1, 7}
	ecParamsP256 = mustMarshal(oidP256)
	// ecParamsEd25519 is the DER OID id-Ed25519, the form PKCS#11 3.0
	// prefers for CKA_EC_PARAMS (SoftHSM 2.6 accepts it).
	ecParamsEd25519 = mustMarshal(oidEd25519)
)

func mustMarshal(v any) []byte {
	b, err := asn1.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// A PKCS#11 module is process-wide state: C_Initialize and C_Finalize act on
// the whole library, so two signers on one module (the VPEC key and the TSA
// key on one HSM) must share one initialisation. modules counts the signers
// using each loaded module and finalises it when the last one closes.
var modules = struct {
	sync.Mutex
	m map[string]*module
}{m: map[string]*module{}}

type module struct {
	path string
	ctx  *pkcs11.Ctx
	refs int
}

func acquireModule(path string) (*module, error) {
	modules.Lock()
	defer modules.Unlock()
	if m := modules.m[path]; m != nil {
		m.refs++
		return m, nil
	}
	ctx := pkcs11.New(path)
	if ctx == nil {
		return nil, fmt.Errorf("%w: cannot load PKCS#11 module %s (dlopen failed: is the path right and the library installed?)", ErrUnreachable, path)
	}
	if err := ctx.Initialize(); err != nil && !errors.Is(err, pkcs11AlreadyInitialized) {
		ctx.Destroy()
		return nil, fmt.Errorf("%w: PKCS#11 module %s: C_Initialize: %w", ErrUnreachable, path, err)
	}
	m := &module{path: path, ctx: ctx, refs: 1}
	modules.m[path] = m
	return m, nil
}

func (m *module) release() error {
	modules.Lock()
	defer modules.Unlock()
	m.refs--
	if m.refs > 0 {
		return nil
	}
	delete(modules.m, m.path)
	err := m.ctx.Finalize()
	m.ctx.Destroy()
	if err != nil {
		return fmt.Errorf("PKCS#11 module %s: C_Finalize: %w", m.path, err)
	}
	return nil
}

// pkcs11Target is a key URI resolved against the options: which module,
// which PIN.
type pkcs11Target struct {
	uri    *PKCS11URI
	module string
	pin    string
}

func resolvePKCS11(u *PKCS11URI, opts Options) (*pkcs11Target, error) {
	t := &pkcs11Target{uri: u, module: u.ModulePath}
	if t.module == "" {
		t.module = opts.PKCS11Module
	}
	if t.module == "" {
		return nil, fmt.Errorf("%w: no PKCS#11 module: add ?module-path=/PATH/TO/MODULE.so to the URI or configure the module", ErrUnreachable)
	}
	pin, err := readPIN(u.PINSource, opts)
	if err != nil {
		return nil, err
	}
	t.pin = pin
	return t, nil
}

// session opens a read-write session on the token the URI names and logs
// in. The caller closes it.
func (t *pkcs11Target) session(m *module) (uint, pkcs11.SessionHandle, error) {
	slot, err := findToken(m.ctx, t.uri)
	if err != nil {
		return 0, 0, err
	}
	sh, err := openSession(m.ctx, slot, t.pin)
	return slot, sh, err
}

func openSession(ctx *pkcs11.Ctx, slot uint, pin string) (pkcs11.SessionHandle, error) {
	sh, err := ctx.OpenSession(slot, pkcs11.CKF_SERIAL_SESSION|pkcs11.CKF_RW_SESSION)
	if err != nil {
		return 0, fmt.Errorf("%w: C_OpenSession on slot %d: %w", ErrUnreachable, slot, err)
	}
	if err := ctx.Login(sh, pkcs11.CKU_USER, pin); err != nil && !errors.Is(err, pkcs11.Error(pkcs11.CKR_USER_ALREADY_LOGGED_IN)) {
		_ = ctx.CloseSession(sh)
		return 0, fmt.Errorf("%w: C_Login refused on slot %d: %w (check the PIN source)", ErrUnreachable, slot, err)
	}
	return sh, nil
}

// findToken returns the one initialised token matching u.
func findToken(ctx *pkcs11.Ctx, u *PKCS11URI) (uint, error) {
	slots, err := ctx.GetSlotList(true)
	if err != nil {
		return 0, fmt.Errorf("%w: C_GetSlotList: %w", ErrUnreachable, err)
	}
	var found []uint
	var seen []string
	for _, s := range slots {
		info, err := ctx.GetTokenInfo(s)
		if err != nil || info.Flags&pkcs11.CKF_TOKEN_INITIALIZED == 0 {
			continue
		}
		seen = append(seen, fmt.Sprintf("%q", info.Label))
		if u.SlotID != nil && *u.SlotID != s ||
			u.Token != "" && u.Token != info.Label ||
			u.Manufacturer != "" && u.Manufacturer != info.ManufacturerID ||
			u.Model != "" && u.Model != info.Model ||
			u.Serial != "" && u.Serial != info.SerialNumber {
			continue
		}
		found = append(found, s)
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		present := "none"
		if len(seen) > 0 {
			present = strings.Join(seen, ", ")
		}
		return 0, fmt.Errorf("%w: no initialised token matches the URI (tokens present: %s)", ErrUnreachable, present)
	default:
		return 0, fmt.Errorf("%w: %d tokens match the URI; name one with token=, serial= or slot-id=", ErrKeyNotFound, len(found))
	}
}

// findObjects returns up to maxFoundObjects objects of class matching the
// URI's label and id.
func findObjects(ctx *pkcs11.Ctx, sh pkcs11.SessionHandle, class uint, label string, id []byte) ([]pkcs11.ObjectHandle, error) {
	tmpl := []*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_CLASS, class)}
	if label != "" {
		tmpl = append(tmpl, pkcs11.NewAttribute(pkcs11.CKA_LABEL, label))
	}
	if id != nil {
		tmpl = append(tmpl, pkcs11.NewAttribute(pkcs11.CKA_ID, id))
	}
	if err := ctx.FindObjectsInit(sh, tmpl); err != nil {
		return nil, fmt.Errorf("%w: C_FindObjectsInit: %w", ErrUnreachable, err)
	}
	objs, _, err := ctx.FindObjects(sh, maxFoundObjects)
	if ferr := ctx.FindObjectsFinal(sh); err == nil && ferr != nil {
		err = ferr
	}
	if err != nil {
		return nil, fmt.Errorf("%w: C_FindObjects: %w", ErrUnreachable, err)
	}
	return objs, nil
}

func describeKey(u *PKCS11URI) string {
	var parts []string
	if u.Object != "" {
		parts = append(parts, fmt.Sprintf("labelled %q", u.Object))
	}
	if u.ID != nil {
		parts = append(parts, fmt.Sprintf("with id %x", u.ID))
	}
	return strings.Join(parts, " ")
}

// publicKeyOf reads the public key of the key pair whose private key is
// priv: the public key object with the same CKA_ID (or label).
func publicKeyOf(ctx *pkcs11.Ctx, sh pkcs11.SessionHandle, priv pkcs11.ObjectHandle, u *PKCS11URI) (crypto.PublicKey, error) {
	attrs, err := ctx.GetAttributeValue(sh, priv, []*pkcs11.Attribute{
		pkcs11.NewAttribute(pkcs11.CKA_KEY_TYPE, nil),
		pkcs11.NewAttribute(pkcs11.CKA_ID, nil),
		pkcs11.NewAttribute(pkcs11.CKA_LABEL, nil),
		pkcs11.NewAttribute(pkcs11.CKA_EC_PARAMS, nil),
	})
	if err != nil {
		return nil, fmt.Errorf("%w: read the private key's attributes: %w", ErrAlgorithm, err)
	}
	keyType := bytesToUint(attrs[0].Value)
	id, label, params := attrs[1].Value, string(attrs[2].Value), attrs[3].Value
	var pubs []pkcs11.ObjectHandle
	if len(id) > 0 {
		pubs, err = findObjects(ctx, sh, pkcs11.CKO_PUBLIC_KEY, "", id)
	} else {
		pubs, err = findObjects(ctx, sh, pkcs11.CKO_PUBLIC_KEY, label, nil)
	}
	if err != nil {
		return nil, err
	}
	if len(pubs) != 1 {
		return nil, fmt.Errorf("%w: found %d public key objects for the private key %s (svc reads the public key from the token: keep the key pair's public object, same CKA_ID)", ErrKeyNotFound, len(pubs), describeKey(u))
	}
	pa, err := ctx.GetAttributeValue(sh, pubs[0], []*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_EC_POINT, nil)})
	if err != nil {
		return nil, fmt.Errorf("%w: read CKA_EC_POINT: %w", ErrAlgorithm, err)
	}
	return decodeECPoint(keyType, params, pa[0].Value)
}

// decodeECPoint turns CKA_KEY_TYPE, CKA_EC_PARAMS and CKA_EC_POINT into a
// public key svc signs with.
func decodeECPoint(keyType uint, params, point []byte) (crypto.PublicKey, error) {
	// CKA_EC_POINT is a DER OCTET STRING; some modules return it bare.
	unwrap := func(want int) []byte {
		if len(point) == want {
			return point
		}
		var inner []byte
		if rest, err := asn1.Unmarshal(point, &inner); err == nil && len(rest) == 0 && len(inner) == want {
			return inner
		}
		return nil
	}
	switch keyType {
	case ckkECEdwards:
		if !isEd25519Params(params) {
			return nil, fmt.Errorf("%w: EdDSA key with CKA_EC_PARAMS %x is not Ed25519", ErrAlgorithm, params)
		}
		raw := unwrap(ed25519.PublicKeySize)
		if raw == nil {
			return nil, fmt.Errorf("%w: Ed25519 CKA_EC_POINT of %d bytes", ErrAlgorithm, len(point))
		}
		return ed25519.PublicKey(bytes.Clone(raw)), nil
	case pkcs11.CKK_EC:
		if !bytes.Equal(params, ecParamsP256) {
			return nil, fmt.Errorf("%w: EC key with CKA_EC_PARAMS %x is not on P-256", ErrAlgorithm, params)
		}
		raw := unwrap(65)
		if raw == nil {
			return nil, fmt.Errorf("%w: P-256 CKA_EC_POINT of %d bytes", ErrAlgorithm, len(point))
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), raw)
		if err != nil {
			return nil, fmt.Errorf("%w: P-256 CKA_EC_POINT: %v", ErrAlgorithm, err)
		}
		return pub, nil
	default:
		return nil, fmt.Errorf("%w: CKA_KEY_TYPE 0x%x; svc signs with Ed25519 (CKK_EC_EDWARDS) or ECDSA P-256 (CKK_EC)", ErrAlgorithm, keyType)
	}
}

// isEd25519Params accepts the two encodings of edwards25519 PKCS#11 3.0
// allows: the OID 1.3.101.112 and the PrintableString "edwards25519".
func isEd25519Params(params []byte) bool {
	var oid asn1.ObjectIdentifier
	if rest, err := asn1.Unmarshal(params, &oid); err == nil && len(rest) == 0 {
		return oid.Equal(oidEd25519)
	}
	var name string
	if rest, err := asn1.UnmarshalWithParams(params, &name, "printable"); err == nil && len(rest) == 0 {
		return name == "edwards25519"
	}
	return false
}

// bytesToUint decodes a CK_ULONG attribute (host byte order).
func bytesToUint(b []byte) uint {
	switch len(b) {
	case 8:
		return uint(binary.NativeEndian.Uint64(b))
	case 4:
		return uint(binary.NativeEndian.Uint32(b))
	}
	return ^uint(0)
}

// pkcs11Backend signs with a private key object through a bounded pool of
// logged-in sessions.
type pkcs11Backend struct {
	mod  *module
	slot uint
	pin  string
	priv pkcs11.ObjectHandle
	alg  Algorithm
	sem  chan struct{}
	mu   sync.Mutex
	idle []pkcs11.SessionHandle
}

func openPKCS11(ctx context.Context, u *URI, opts Options) (*Signer, error) {
	t, err := resolvePKCS11(u.PKCS11, opts)
	if err != nil {
		return nil, err
	}
	m, err := acquireModule(t.module)
	if err != nil {
		return nil, err
	}
	b, pub, err := newPKCS11Backend(m, t, opts)
	if err != nil {
		_ = m.release()
		return nil, err
	}
	s, err := newSigner(ctx, u.Raw, pkcs11ProviderName, pub, b, true, opts)
	if err != nil {
		_ = b.close()
		return nil, err
	}
	return s, nil
}

func newPKCS11Backend(m *module, t *pkcs11Target, opts Options) (*pkcs11Backend, crypto.PublicKey, error) {
	slot, sh, err := t.session(m)
	if err != nil {
		return nil, nil, err
	}
	keep := false
	defer func() {
		if !keep {
			_ = m.ctx.CloseSession(sh)
		}
	}()
	privs, err := findObjects(m.ctx, sh, pkcs11.CKO_PRIVATE_KEY, t.uri.Object, t.uri.ID)
	if err != nil {
		return nil, nil, err
	}
	switch len(privs) {
	case 0:
		return nil, nil, fmt.Errorf("%w: no private key %s on the token", ErrKeyNotFound, describeKey(t.uri))
	case 1:
	default:
		return nil, nil, fmt.Errorf("%w: more than one private key %s on the token; name one with id=", ErrKeyNotFound, describeKey(t.uri))
	}
	pub, err := publicKeyOf(m.ctx, sh, privs[0], t.uri)
	if err != nil {
		return nil, nil, err
	}
	alg, err := algorithmOf(pub)
	if err != nil {
		return nil, nil, err
	}
	n := opts.PKCS11Sessions
	if n <= 0 {
		n = defaultPKCS11Sessions
	}
	keep = true
	return &pkcs11Backend{mod: m, slot: slot, pin: t.pin, priv: privs[0], alg: alg,
		sem: make(chan struct{}, n), idle: []pkcs11.SessionHandle{sh}}, pub, nil
}

func (b *pkcs11Backend) get(ctx context.Context) (pkcs11.SessionHandle, error) {
	select {
	case b.sem <- struct{}{}:
	case <-ctx.Done():
		return 0, fmt.Errorf("%w: waiting for a PKCS#11 session: %w", ErrSign, ctx.Err())
	}
	b.mu.Lock()
	if n := len(b.idle); n > 0 {
		sh := b.idle[n-1]
		b.idle = b.idle[:n-1]
		b.mu.Unlock()
		return sh, nil
	}
	b.mu.Unlock()
	sh, err := openSession(b.mod.ctx, b.slot, b.pin)
	if err != nil {
		<-b.sem
		return 0, err
	}
	return sh, nil
}

// put returns a session to the pool, or closes it after an error (the
// next signature opens a fresh one: a token that came back recovers).
func (b *pkcs11Backend) put(sh pkcs11.SessionHandle, ok bool) {
	if ok {
		b.mu.Lock()
		b.idle = append(b.idle, sh)
		b.mu.Unlock()
	} else {
		_ = b.mod.ctx.CloseSession(sh)
	}
	<-b.sem
}

func (b *pkcs11Backend) sign(ctx context.Context, msg []byte) ([]byte, error) {
	sh, err := b.get(ctx)
	if err != nil {
		return nil, err
	}
	mech := []*pkcs11.Mechanism{pkcs11.NewMechanism(ckmEDDSA, nil)}
	if b.alg == ECDSAP256 {
		mech = []*pkcs11.Mechanism{pkcs11.NewMechanism(pkcs11.CKM_ECDSA, nil)}
	}
	if err := b.mod.ctx.SignInit(sh, mech, b.priv); err != nil {
		b.put(sh, false)
		return nil, fmt.Errorf("%w: C_SignInit: %w", ErrSign, err)
	}
	sig, err := b.mod.ctx.Sign(sh, msg)
	if err != nil {
		b.put(sh, false)
		return nil, fmt.Errorf("%w: C_Sign: %w", ErrSign, err)
	}
	b.put(sh, true)
	if b.alg == ECDSAP256 {
		return ecdsaRawToASN1(sig)
	}
	return sig, nil
}

// ecdsaRawToASN1 converts PKCS#11's r||s to the ASN.1 DER
// ECDSA-Sig-Value crypto.Signer returns.
func ecdsaRawToASN1(raw []byte) ([]byte, error) {
	if len(raw) != 64 {
		return nil, fmt.Errorf("%w: CKM_ECDSA returned %d bytes, want 64 (r||s on P-256)", ErrSign, len(raw))
	}
	r := new(big.Int).SetBytes(raw[:32])
	s := new(big.Int).SetBytes(raw[32:])
	return asn1.Marshal(struct{ R, S *big.Int }{r, s})
}

// close waits for signatures in flight, closes the sessions and releases
// the module.
func (b *pkcs11Backend) close() error {
	for i := 0; i < cap(b.sem); i++ {
		b.sem <- struct{}{}
	}
	b.mu.Lock()
	for _, sh := range b.idle {
		_ = b.mod.ctx.CloseSession(sh)
	}
	b.idle = nil
	b.mu.Unlock()
	return b.mod.release()
}

// generatePKCS11 creates a key pair on the token the URI names, labelled
// with its object (and CKA_ID its id, or the label's bytes). The private
// key is CKA_SENSITIVE and not CKA_EXTRACTABLE: it never leaves the token.
func generatePKCS11(u *URI, alg Algorithm, opts Options) (crypto.PublicKey, error) {
	p := u.PKCS11
	if p.Object == "" {
		return nil, fmt.Errorf("%w: name the new key with object=LABEL", ErrGenerate)
	}
	t, err := resolvePKCS11(p, opts)
	if err != nil {
		return nil, err
	}
	m, err := acquireModule(t.module)
	if err != nil {
		return nil, err
	}
	defer func() { _ = m.release() }()
	_, sh, err := t.session(m)
	if err != nil {
		return nil, err
	}
	defer func() { _ = m.ctx.CloseSession(sh) }()
	id := p.ID
	if id == nil {
		id = []byte(p.Object)
	}
	for _, class := range []uint{pkcs11.CKO_PRIVATE_KEY, pkcs11.CKO_PUBLIC_KEY} {
		for _, q := range []struct {
			label string
			id    []byte
		}{{p.Object, nil}, {"", id}} {
			objs, err := findObjects(m.ctx, sh, class, q.label, q.id)
			if err != nil {
				return nil, err
			}
			if len(objs) > 0 {
				return nil, fmt.Errorf("%w: the token already holds a key labelled %q or with id %x; svc never replaces a key: choose another label", ErrGenerate, p.Object, id)
			}
		}
	}
	var mech uint
	var keyType uint
	var params []byte
	switch alg {
	case Ed25519:
		mech, keyType, params = ckmECEdwardsKeyPairGen, ckkECEdwards, ecParamsEd25519
	case ECDSAP256:
		mech, keyType, params = pkcs11.CKM_EC_KEY_PAIR_GEN, pkcs11.CKK_EC, ecParamsP256
	default:
		return nil, fmt.Errorf("%w: %q", ErrAlgorithm, alg)
	}
	pubT := []*pkcs11.Attribute{
		pkcs11.NewAttribute(pkcs11.CKA_CLASS, pkcs11.CKO_PUBLIC_KEY),
		pkcs11.NewAttribute(pkcs11.CKA_KEY_TYPE, keyType),
		pkcs11.NewAttribute(pkcs11.CKA_TOKEN, true),
		pkcs11.NewAttribute(pkcs11.CKA_VERIFY, true),
		pkcs11.NewAttribute(pkcs11.CKA_EC_PARAMS, params),
		pkcs11.NewAttribute(pkcs11.CKA_LABEL, p.Object),
		pkcs11.NewAttribute(pkcs11.CKA_ID, id),
	}
	privT := []*pkcs11.Attribute{
		pkcs11.NewAttribute(pkcs11.CKA_CLASS, pkcs11.CKO_PRIVATE_KEY),
		pkcs11.NewAttribute(pkcs11.CKA_KEY_TYPE, keyType),
		pkcs11.NewAttribute(pkcs11.CKA_TOKEN, true),
		pkcs11.NewAttribute(pkcs11.CKA_PRIVATE, true),
		pkcs11.NewAttribute(pkcs11.CKA_SIGN, true),
		pkcs11.NewAttribute(pkcs11.CKA_SENSITIVE, true),
		pkcs11.NewAttribute(pkcs11.CKA_EXTRACTABLE, false),
		pkcs11.NewAttribute(pkcs11.CKA_LABEL, p.Object),
		pkcs11.NewAttribute(pkcs11.CKA_ID, id),
	}
	pubH, privH, err := m.ctx.GenerateKeyPair(sh, []*pkcs11.Mechanism{pkcs11.NewMechanism(mech, nil)}, pubT, privT)
	if err != nil {
		return nil, fmt.Errorf("%w: C_GenerateKeyPair (%s): %w", ErrGenerate, alg, err)
	}
	_ = pubH
	return publicKeyOf(m.ctx, sh, privH, &PKCS11URI{Object: p.Object, ID: id})
}
