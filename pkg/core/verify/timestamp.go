package verify

import (
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// CheckTimestamp: the RFC 3161 token is over the signature, by a trusted
// timestamp authority, and its time is within MaxTimestampSkew of
// issued_at.
const CheckTimestamp CheckName = "timestamp"

// MaxTimestampSkew is how far the RFC 3161 time may lie from issued_at.
const MaxTimestampSkew = 15 * time.Minute

// timestamp runs the check and keeps its verified time for the time check
// and the report.
func (s *state) timestamp() Check {
	c, genTime := checkTimestamp(s.doc, s.opts.Trust)
	if s.opts.Root != nil && c.Status == Pass {
		c = checkTSARootWindow(c, s.doc, s.opts.Root, genTime)
	}
	if !genTime.IsZero() {
		s.genTime = genTime
		s.report.TimestampedAt = vpec.FormatTime(genTime)
	}
	return c
}

// checkTimestamp checks d's token against trust's TSA roots. genTime is
// the token's verified time, zero when the token did not verify (a token
// that verifies but lies too far from issued_at fails the check and still
// gives its time).
func checkTimestamp(d *vpec.Document, trust *signing.Bundle) (c Check, genTime time.Time) {
	c = Check{Name: CheckTimestamp}
	if trust == nil || len(trust.Roots()) == 0 {
		return fail(c, "TSA ROOT MISSING", "timestamp not checked: the trust bundle holds no timestamp authority root certificate", true), genTime
	}
	// The token is over the 64 signature bytes; its imprint may be SHA-256,
	// SHA-384 or SHA-512 of them (FORMATS.md, "Signature and timestamp").
	info, err := timestamp.VerifyData(d.Token, d.Signature, timestamp.VerifyOptions{Roots: trust.Roots()})
	if err != nil {
		code := "TIMESTAMP INVALID"
		switch {
		case errors.Is(err, timestamp.ErrUntrustedTSA):
			code = "UNTRUSTED TIMESTAMP AUTHORITY"
		case errors.Is(err, timestamp.ErrImprintMismatch):
			code = "TIMESTAMP NOT OVER SIGNATURE"
		}
		return fail(c, code, fmt.Sprintf("timestamp not authentic: %v", err), false), genTime
	}
	genTime = info.GenTime
	issued, _ := time.Parse(time.RFC3339Nano, d.VPEC.IssuedAt)
	if skew := info.GenTime.Sub(issued); skew > MaxTimestampSkew || skew < -MaxTimestampSkew {
		return fail(c, "TIMESTAMP TIME MISMATCH", fmt.Sprintf("timestamp time %s is %s away from issued_at %s (at most %s allowed)", vpec.FormatTime(info.GenTime), skew.Round(time.Second), d.VPEC.IssuedAt, MaxTimestampSkew), false), genTime
	}
	c.Status = Pass
	c.Message = fmt.Sprintf("timestamp authentic (RFC 3161, %s, %s)", vpec.FormatTime(info.GenTime), info.Signer.Subject.CommonName)
	return c, genTime
}

// checkTSARootWindow finds the tsa-root entry of root the token chains to
// and checks that genTime lies in its window (docs/KEYS.md: a TSA root by
// the genTime of the token that chains to it). c is the passed timestamp
// check; the result names the window used, or fails naming the root.
func checkTSARootWindow(c Check, d *vpec.Document, root *trustroot.Root, genTime time.Time) Check {
	var refused error
	for _, k := range root.Keys {
		if k.Purpose != trustroot.PurposeTSARoot || k.Certificate == nil {
			continue
		}
		if _, err := timestamp.VerifyData(d.Token, d.Signature, timestamp.VerifyOptions{Roots: []*x509.Certificate{k.Certificate}}); err != nil {
			continue
		}
		key, err := root.KeyFor(trustroot.PurposeTSARoot, k.KeyID, genTime)
		if err != nil {
			if refused == nil {
				refused = err
			}
			continue
		}
		c.Message += fmt.Sprintf("; TSA root %s, %s", key.KeyID, key.Window)
		return c
	}
	if refused == nil {
		// The token verified against the root's certificates together
		// but against none alone: cannot happen with a single chain.
		return fail(c, "UNTRUSTED TIMESTAMP AUTHORITY", "timestamp not authentic: it chains to no single TSA root of the trust root", false)
	}
	return keyFail(c, "TSA ROOT", refused)
}
