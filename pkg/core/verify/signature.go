package verify

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// CheckSignature: the Ed25519 signature over the signed bytes is by a key
// the trust bundle holds; with a trust root, by a vpec-signing key whose
// validity window holds the verified RFC 3161 genTime of the signature.
const CheckSignature CheckName = "signature"

func (s *state) signature() Check {
	if s.opts.Root != nil {
		return checkSignatureRoot(s.doc, s.opts.Root, s.presigned)
	}
	return checkSignature(s.doc, s.opts.Trust, s.presigned)
}

// signatureKey is the key a signature by key id is checked with: the
// trust root's key of that id, or without a root the trust bundle's; nil
// when there is none.
func signatureKey(opts *Options, id string) ed25519.PublicKey {
	if opts.Root != nil {
		for _, k := range opts.Root.Keys {
			if k.KeyID == id && k.PublicKey != nil {
				return k.PublicKey
			}
		}
		return nil
	}
	if opts.Trust == nil {
		return nil
	}
	pub, _ := opts.Trust.Key(id)
	return pub
}

// presigned is the signature check begun while the document is read: a
// verifier of sig by pub that vpec.ParseWith gives the signed bytes
// beside the reading of the records (vpec.ParseOptions.SignedTo).
type presigned struct {
	pub, sig []byte
	v        *signing.Verifier
}

// signedTo is vpec.ParseOptions.SignedTo for the signature check: it
// starts a verifier of the VPEC's signature by the key the check will use,
// or returns nil (the check then hashes the signed bytes itself).
func (p *presigned) signedTo(opts *Options) func(*vpec.VPEC) io.Writer {
	return func(top *vpec.VPEC) io.Writer {
		pub := signatureKey(opts, top.SigningKeyID)
		sig, err := signing.ParseSignature(top.Signature)
		if pub == nil || err != nil {
			return nil
		}
		p.pub, p.sig, p.v = pub, sig, signing.NewVerifier(pub, sig)
		return p.v
	}
}

// verifySigned verifies d's signature sig by pub over its signed bytes:
// with the verifier begun while d was read when it was given exactly them
// (d.SignedWritten) for this key and signature, else over d.SignedParts.
func verifySigned(d *vpec.Document, p *presigned, pub, sig []byte) error {
	if p != nil && p.v != nil && d.SignedWritten() && bytes.Equal(p.pub, pub) && bytes.Equal(p.sig, sig) {
		return p.v.Verify()
	}
	return signing.VerifyParts(pub, d.SignedParts, sig)
}

// checkSignature checks d's signature over its signed bytes against trust
// (p: the check begun while d was read, or nil).
func checkSignature(d *vpec.Document, trust *signing.Bundle, p *presigned) Check {
	c := Check{Name: CheckSignature}
	if trust == nil {
		return fail(c, "TRUST ROOT MISSING", "signature not checked: no trust bundle given", true)
	}
	pub, err := trust.Key(d.VPEC.SigningKeyID)
	if err == nil {
		err = verifySigned(d, p, pub, d.Signature)
	}
	if err != nil {
		if errors.Is(err, signing.ErrUnknownKey) {
			return fail(c, "UNKNOWN SIGNING KEY", fmt.Sprintf("signature by key %s, which the trust bundle does not hold", d.VPEC.SigningKeyID), false)
		}
		return fail(c, "SIGNATURE INVALID", fmt.Sprintf("signature invalid: the signed fields were changed after signing or the signature is not by key %s", d.VPEC.SigningKeyID), false)
	}
	c.Status, c.Message = Pass, fmt.Sprintf("signature valid (Ed25519, key %s)", d.VPEC.SigningKeyID)
	return c
}

// checkSignatureRoot checks d's signature against a trust root: the key
// must be listed, the signature verify with it, and the key be trusted for
// vpec-signing at the verified genTime of the VPEC's timestamp
// (docs/KEYS.md, "Which time a window is checked against"). The token is
// verified here against the root's TSA certificates to learn that time;
// the timestamp check reports on the token itself.
func checkSignatureRoot(d *vpec.Document, root *trustroot.Root, p *presigned) Check {
	c := Check{Name: CheckSignature}
	id := d.VPEC.SigningKeyID
	pub := signatureKey(&Options{Root: root}, id)
	if pub == nil {
		return fail(c, "UNKNOWN SIGNING KEY", fmt.Sprintf("signature by key %s, which the trust root does not hold", id), false)
	}
	if err := verifySigned(d, p, pub, d.Signature); err != nil {
		return fail(c, "SIGNATURE INVALID", fmt.Sprintf("signature invalid: the signed fields were changed after signing or the signature is not by key %s", id), false)
	}
	at := time.Time{}
	if k := root.Key(trustroot.PurposeVPEC, id); k == nil || !k.Window.Forever {
		info, err := timestamp.VerifyData(d.Token, d.Signature, timestamp.VerifyOptions{Roots: root.TSARoots()})
		if err != nil {
			// The timestamp check fails on this token, so the verdict
			// is not VALID; the window alone cannot be checked.
			c.Status, c.Message = Pass, fmt.Sprintf("signature valid (Ed25519, key %s); its validity window not checked: the timestamp does not verify (see timestamp)", id)
			return c
		}
		at = info.GenTime
	}
	k, err := root.KeyFor(trustroot.PurposeVPEC, id, at)
	if err != nil {
		return keyFail(c, "", err)
	}
	c.Status = Pass
	if k.Window.Forever {
		c.Message = fmt.Sprintf("signature valid (Ed25519, key %s, vpec-signing, %s)", id, k.Window)
	} else {
		c.Message = fmt.Sprintf("signature valid (Ed25519, key %s, vpec-signing, signed at %s, %s)", id, trustroot.FormatTime(at), k.Window)
	}
	return c
}

// keyFail fails c for a key a trust root refuses (a *trustroot.KeyError
// from KeyFor), with a code naming the refusal: prefix + "KEY WRONG
// PURPOSE", "KEY COMPROMISED", "KEY NOT YET VALID", "KEY EXPIRED" or
// "UNKNOWN SIGNING KEY". The message names the key, its window and the
// time checked.
func keyFail(c Check, prefix string, err error) Check {
	code := "KEY REFUSED"
	switch {
	case errors.Is(err, trustroot.ErrUnknownKey):
		code = "UNKNOWN SIGNING KEY"
		if prefix != "" {
			code = "KEY UNKNOWN"
		}
	case errors.Is(err, trustroot.ErrWrongPurpose):
		code = "KEY WRONG PURPOSE"
	case errors.Is(err, trustroot.ErrCompromised):
		code = "KEY COMPROMISED"
	case errors.Is(err, trustroot.ErrNotYetValid):
		code = "KEY NOT YET VALID"
	case errors.Is(err, trustroot.ErrExpired):
		code = "KEY EXPIRED"
	}
	if prefix != "" {
		code = prefix + " " + code
	}
	return fail(c, code, "key refused by the trust root: "+err.Error(), false)
}
