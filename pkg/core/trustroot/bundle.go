package trustroot

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"time"

	"github.com/svc-gov/svc/pkg/core/signing"
)

// legacyPurposes are what a key of a PEM trust bundle was trusted for:
// every Ed25519 key signed VPECs, profiles and circuit entries.
var legacyPurposes = []Purpose{PurposeVPEC, PurposeProfile, PurposeCircuit}

// FromBundle reads a legacy PEM trust bundle as a root: each Ed25519 key
// valid for VPECs, profiles and circuit entries, each certificate a TSA
// root, each TRANSPARENCY LOG KEY block a log-checkpoint key, all valid
// forever (Window.Forever; Window.String says so, and
// Root.Legacy is true). It has no version and cannot be chained or
// written; ConvertBundle makes a trust root of it.
func FromBundle(b *signing.Bundle) *Root {
	r := &Root{Source: SourcePEMBundle, Threshold: 1}
	for _, id := range b.KeyIDs() {
		pub, _ := b.Key(id)
		for _, p := range legacyPurposes {
			r.Keys = append(r.Keys, &Key{KeyID: id, Purpose: p, PublicKey: pub, Window: Window{Forever: true}})
		}
	}
	for _, c := range b.Roots() {
		r.Keys = append(r.Keys, &Key{KeyID: CertificateKeyID(c), Purpose: PurposeTSARoot, Certificate: c, Window: Window{Forever: true}})
	}
	for _, lk := range b.LogKeys() {
		pub := lk.PublicKey()
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			continue // an Ed25519 key always marshals
		}
		r.Keys = append(r.Keys, &Key{KeyID: KeyID(der), Purpose: PurposeLog, PublicKey: pub, NoteVerifier: lk.String(), Window: Window{Forever: true}})
	}
	r.sortKeys()
	return r
}

// ConvertBundle turns a PEM trust bundle into a version 1 trust root,
// issued at issuedAt, in which every key of the bundle is valid from
// `from` (choose a time before the first signature it must verify) with no
// end, for the purposes FromBundle gives it (log keys included). The result has no
// root-signing keys: add them (AddKeys, then Sign) before distributing it
// as the first root of a chain.
func ConvertBundle(b *signing.Bundle, from, issuedAt time.Time) (*Root, error) {
	var keys []NewKey
	for _, id := range b.KeyIDs() {
		pub, _ := b.Key(id)
		for _, p := range legacyPurposes {
			keys = append(keys, NewKey{Purpose: p, PublicKey: pub, From: from, Comment: "converted from a PEM trust bundle"})
		}
	}
	for _, c := range b.Roots() {
		keys = append(keys, NewKey{Purpose: PurposeTSARoot, Certificate: c, From: from, Comment: "converted from a PEM trust bundle"})
	}
	for _, lk := range b.LogKeys() {
		keys = append(keys, NewKey{Purpose: PurposeLog, PublicKey: lk.PublicKey(), NoteName: lk.Origin(), From: from, Comment: "converted from a PEM trust bundle"})
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("trust root: %w", signing.ErrEmptyBundle)
	}
	return Build(issuedAt, 1, keys...)
}

// Load reads a trust root (JSON, see Parse) or a legacy PEM trust bundle
// (read by FromBundle as valid forever), telling them apart by the first
// non-space byte: "{" is a trust root.
func Load(data []byte) (*Root, error) {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return Parse(data)
	}
	b, err := signing.ParseBundle(data)
	if err != nil {
		return nil, err
	}
	return FromBundle(b), nil
}
