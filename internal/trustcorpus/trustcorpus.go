// Package trustcorpus builds the adversarial cases of svc-verify's
// transparency log and trust root inputs whose answer the docs once left
// open (docs/TRANSPARENCY.md, docs/KEYS.md, docs/FORMATS.md "Verification"):
// witness policy files, flag combinations, newer checkpoints and
// consistency proofs, log key windows at their boundary instants, and the
// one encoding of receipts and trust roots. Each case is a
// [testvectors.Vector] over the files of testdata/vectors/trust and of a
// directory Build writes; the CLI test runs it through both binaries and
// the docs test through the Python second implementation.
package trustcorpus

import (
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/svc-gov/svc/internal/testvectors"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// Case is one corpus case: the vector (paths relative to the directory
// Build wrote) and what it settles.
type Case struct {
	testvectors.Vector
	// Code is the failing check's code (the verdict names it), or "" for a
	// valid VPEC or a refusal before verifying (exit 2 or 3).
	Code string
	// Python says the second implementation reads this case (it is given
	// no flag combination, only files).
	Python bool
}

// The times of the corpus: cosignatures at cosignedLate, after every
// vector's genTime; the vectors' own cosignatures are at vectorsCosigned,
// before it.
var (
	epoch           = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	issued          = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ended           = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	far             = time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC)
	vectorsCosigned = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	cosignedLate    = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
)

// seededKey is internal/testvectors' TEST-ONLY key of a name.
var seededKey = testvectors.SeededKey

func pub(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }

// Build writes the corpus's files into out and returns its cases. trustDir
// is testdata/vectors/trust (its VPEC, receipt and trust root are the
// starting point); a case's paths are relative to out, which holds a copy
// of the files it uses.
func Build(trustDir, out string) ([]Case, error) {
	b := &builder{out: out, src: map[string][]byte{}}
	for _, f := range []string{"logged.json", "receipt.json", "trust-root.json", "receipt-missing-cosignature.json",
		"checkpoint-newer.txt", "consistency-newer.txt"} {
		data, err := os.ReadFile(filepath.Join(trustDir, f))
		if err != nil {
			return nil, err
		}
		if err := b.file(f, data); err != nil {
			return nil, err
		}
		b.src[f] = data
	}
	if err := b.build(trustDir); err != nil {
		return nil, err
	}
	return b.cases, nil
}

type builder struct {
	out   string
	src   map[string][]byte // the files of trustDir Build read
	cases []Case
}

func (b *builder) file(name string, data []byte) error {
	return os.WriteFile(filepath.Join(b.out, name), data, 0o644)
}

func (b *builder) add(c Case) {
	c.Kind, c.File = "vpec", "logged.json"
	if c.TrustRoot == "" {
		c.TrustRoot = "trust-root.json"
	}
	switch {
	case c.Exit == 0:
		c.Valid, c.Verdict = true, "VALID"
	case c.Code != "" && c.Exit == 1:
		c.Verdict = "INVALID \u2014 " + c.Code
	case c.Code != "" && c.Exit == 3:
		c.Verdict = "UNVERIFIED \u2014 " + c.Code
	}
	b.cases = append(b.cases, c)
}

func (b *builder) build(trustDir string) error {
	logKey, w1, w2, w3, rootKey := seededKey("log"), seededKey("w1"), seededKey("w2"), seededKey("w3"), seededKey("root")
	const (
		logOrigin = testvectors.VectorLogOrigin
		w1Name    = testvectors.VectorWitness1
		w2Name    = testvectors.VectorWitness2
		w3Name    = "witness.test/corpus-w3"
	)
	vk := func(name string, k ed25519.PrivateKey) string {
		return trustroot.FormatNoteVerifier(name, trustroot.NoteAlgCosignatureV1, pub(k))
	}
	rcptData, err := os.ReadFile(filepath.Join(trustDir, "receipt.json"))
	if err != nil {
		return err
	}
	rcpt, err := tlog.ParseReceipt(rcptData)
	if err != nil {
		return err
	}
	text, _, _ := strings.Cut(string(rcpt.Checkpoint), "\n\n")
	text += "\n"
	// checkpoint signs the receipt's checkpoint text again, with the log
	// key and the cosignatures given.
	type cosig struct {
		name string
		key  ed25519.PrivateKey
		at   time.Time
	}
	checkpoint := func(cos ...cosig) ([]byte, error) {
		s, err := tlog.NewNoteSigner(logOrigin, logKey)
		if err != nil {
			return nil, err
		}
		signed, err := note.Sign(&note.Note{Text: text}, s)
		if err != nil {
			return nil, err
		}
		for _, c := range cos {
			signed = append(signed, testvectors.CosignatureLine(c.name, c.key, text, c.at)...)
		}
		return tlog.SortSignatures(signed)
	}
	receipt := func(name string, cos ...cosig) error {
		cp, err := checkpoint(cos...)
		if err != nil {
			return err
		}
		r := *rcpt
		r.Checkpoint = cp
		data, err := r.Marshal()
		if err != nil {
			return err
		}
		return b.file(name, data)
	}
	// The trust roots: the vectors' keys (service, TSA, log, w1, w2, root)
	// with the log key's window or the witnesses changed.
	base, err := trustroot.Parse(b.src["trust-root.json"])
	if err != nil {
		return err
	}
	var svcKey ed25519.PublicKey
	for _, k := range base.Keys {
		if k.Purpose == trustroot.PurposeVPEC {
			svcKey = k.PublicKey
		}
	}
	tsa := base.TSARoots()
	if svcKey == nil || len(tsa) != 1 {
		return fmt.Errorf("trustcorpus: %s lacks the service key or its TSA root", trustDir)
	}
	type rootOpts struct {
		logFrom, logUntil time.Time
		logPurpose        trustroot.Purpose
		noTSA             bool
		witnesses         int // of w1, w2
		compromiseLogAt   time.Time
		svcFrom, svcUntil time.Time
		compromiseSvcAt   time.Time
		tsaUntil          time.Time
	}
	root := func(name string, o rootOpts) error {
		if o.logFrom.IsZero() {
			o.logFrom = epoch
		}
		if o.svcFrom.IsZero() {
			o.svcFrom = epoch
		}
		keys := []trustroot.NewKey{{Purpose: trustroot.PurposeVPEC, PublicKey: svcKey, From: o.svcFrom, Until: o.svcUntil}}
		if !o.noTSA {
			keys = append(keys, trustroot.NewKey{Purpose: trustroot.PurposeTSARoot, Certificate: tsa[0], From: epoch, Until: o.tsaUntil})
		}
		if o.logPurpose == "" {
			o.logPurpose = trustroot.PurposeLog
		}
		keys = append(keys, trustroot.NewKey{Purpose: o.logPurpose, PublicKey: pub(logKey), NoteName: logOrigin, From: o.logFrom, Until: o.logUntil})
		for i, w := range []ed25519.PrivateKey{w1, w2}[:o.witnesses] {
			keys = append(keys, trustroot.NewKey{Purpose: trustroot.PurposeWitness, PublicKey: pub(w), NoteName: []string{w1Name, w2Name}[i], From: epoch})
		}
		keys = append(keys, trustroot.NewKey{Purpose: trustroot.PurposeRoot, PublicKey: pub(rootKey), From: epoch})
		r, err := trustroot.Build(issued, 1, keys...)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		for _, cm := range []struct {
			purpose trustroot.Purpose
			at      time.Time
		}{{trustroot.PurposeLog, o.compromiseLogAt}, {trustroot.PurposeVPEC, o.compromiseSvcAt}} {
			if cm.at.IsZero() {
				continue
			}
			id := ""
			for _, k := range r.Keys {
				if k.Purpose == cm.purpose {
					id = k.KeyID
				}
			}
			if r, err = trustroot.Compromise(r, id, cm.at, issued.Add(time.Hour)); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		if err := r.Sign(rootKey); err != nil {
			return err
		}
		data, err := r.Marshal()
		if err != nil {
			return err
		}
		return b.file(name, data)
	}
	late := func(names ...string) []cosig {
		var out []cosig
		for _, n := range names {
			out = append(out, map[string]cosig{
				"w1": {w1Name, w1, cosignedLate}, "w2": {w2Name, w2, cosignedLate}, "w3": {w3Name, w3, cosignedLate},
			}[n])
		}
		return out
	}

	// --- Witness policy files (TRANSPARENCY.md, "In svc-verify").
	pw1 := fmt.Sprintf("witness w1 %s https://w1.invalid/\n", vk(w1Name, w1))
	for _, p := range []struct {
		name, text, receipt, desc, code string
		exit                            int
	}{
		{"policy-threshold-zero", pw1 + "group g 0 w1\nquorum g\n", "receipt-missing-cosignature.json",
			"a group asking for 0 of its witnesses: refused, never read as 'quorum none'", "", 3},
		{"policy-two-quorums", pw1 + "quorum w1\nquorum none\n", "receipt-missing-cosignature.json",
			"two quorum lines, the second 'none': refused rather than the last one winning", "", 3},
		{"policy-no-quorum", pw1, "receipt-missing-cosignature.json", "witness lines without a quorum line: refused", "", 3},
		{"policy-empty", "", "receipt.json", "an empty policy file: refused", "", 3},
		{"policy-group-no-members", "group g any\nquorum g\n", "receipt.json", "a group without members: refused", "", 3},
		{"policy-duplicate-witness", pw1 + pw1 + "quorum w1\n", "receipt-missing-cosignature.json", "the same witness name twice: refused", "", 3},
		{"policy-crlf", strings.ReplaceAll(pw1+"quorum w1\n", "\n", "\r\n"), "receipt-missing-cosignature.json",
			"CR LF line ends: accepted (a CR is white space between fields)", "", 0},
		{"policy-no-final-lf", pw1 + "quorum w1", "receipt-missing-cosignature.json", "no line feed after the last line: accepted", "", 0},
		{"policy-comments", "# the auditor's policy\n" + pw1 + "\nquorum w1 # one witness\n", "receipt-missing-cosignature.json",
			"comments and blank lines: accepted", "", 0},
		{"policy-none-no-cosignature", "quorum none\n", "receipt-nocosig.json",
			"quorum none with a checkpoint no witness cosigned: the log's signature alone", "", 0},
		{"policy-witness-not-in-root", fmt.Sprintf("witness w3 %s https://w3.invalid/\nquorum w3\n", vk(w3Name, w3)), "receipt-w3.json",
			"the policy names a witness the trust root does not list, which cosigned: it counts (the policy replaces the root's witnesses)", "", 0},
		{"policy-witness-not-in-root-absent", fmt.Sprintf("witness w3 %s https://w3.invalid/\nquorum w3\n", vk(w3Name, w3)), "receipt.json",
			"the policy names a witness the trust root does not list, which did not cosign: w1's and w2's cosignatures do not count", "WITNESS POLICY NOT SATISFIED", 1},
	} {
		if err := b.file(p.name+".policy", []byte(p.text)); err != nil {
			return err
		}
		c := Case{Code: p.code, Python: true}
		c.Name, c.Description, c.Receipt, c.WitnessPolicy, c.Exit = p.name, p.desc, p.receipt, p.name+".policy", p.exit
		if p.code != "" {
			c.Fails = []string{"transparency"}
		}
		b.add(c)
	}
	if err := receipt("receipt-nocosig.json"); err != nil {
		return err
	}
	if err := receipt("receipt-w3.json", late("w3")...); err != nil {
		return err
	}

	// --- Flags without what they need.
	flag := func(name, desc string, exit int, code string, set func(*Case)) {
		c := Case{Code: code}
		c.Name, c.Description, c.Exit = name, desc, exit
		if code != "" {
			c.Fails = []string{"transparency"}
		}
		set(&c)
		b.add(c)
	}
	flag("log-checkpoint-without-receipt", "--log-checkpoint and --consistency-proof without --receipt: a usage error, never VALID with the checkpoint unchecked", 2, "", func(c *Case) {
		c.LogCheckpoint, c.ConsistencyProof = "checkpoint-newer.txt", "consistency-newer.txt"
	})
	flag("consistency-proof-without-log-checkpoint", "--consistency-proof without --log-checkpoint: a usage error", 2, "", func(c *Case) {
		c.Receipt, c.ConsistencyProof = "receipt.json", "consistency-newer.txt"
	})
	flag("witness-policy-without-receipt", "--witness-policy without --receipt: read and checked, constrains nothing: VALID", 0, "", func(c *Case) {
		c.WitnessPolicy = "policy-comments.policy"
	})
	flag("bad-witness-policy-without-receipt", "a malformed --witness-policy without --receipt: still trust material unusable (exit 3)", 3, "", func(c *Case) {
		c.WitnessPolicy = "policy-two-quorums.policy"
	})
	flag("receipt-file-missing", "--receipt naming no file: input that cannot be read (exit 2)", 2, "", func(c *Case) {
		c.Receipt = "no-such-receipt.json"
	})
	flag("log-checkpoint-file-missing", "--log-checkpoint naming no file: input that cannot be read (exit 2)", 2, "", func(c *Case) {
		c.Receipt, c.LogCheckpoint, c.ConsistencyProof = "receipt.json", "no-such-checkpoint.txt", "consistency-newer.txt"
	})

	// --- The receipt file: any bytes are judged, as RECEIPT MALFORMED.
	rcase := func(name, desc string, data []byte, code string, exit int) error {
		if err := b.file(name+".json", data); err != nil {
			return err
		}
		c := Case{Code: code, Python: true}
		c.Name, c.Description, c.Receipt, c.Exit = name, desc, name+".json", exit
		if code != "" {
			c.Fails = []string{"transparency"}
		}
		b.add(c)
		return nil
	}
	rs := string(rcptData)
	digestAt := strings.Index(rs, "vpec_digest sha256:") + len("vpec_digest sha256:")
	cp := string(rcpt.Checkpoint)
	cpText, cpSigs, _ := strings.Cut(cp, "\n\n")
	sigLines := strings.Split(strings.TrimSuffix(cpSigs, "\n"), "\n")
	for i, j := 0, len(sigLines)-1; i < j; i, j = i+1, j-1 {
		sigLines[i], sigLines[j] = sigLines[j], sigLines[i]
	}
	unsorted := cpText + "\n\n" + strings.Join(sigLines, "\n") + "\n"
	for _, r := range []struct {
		name, desc string
		data       string
	}{
		{"receipt-empty", "an empty receipt file", ""},
		{"receipt-oversize", "a receipt file of 64 KiB + 1 byte", strings.Repeat(" ", tlog.MaxReceiptBytes+1)},
		{"receipt-duplicate-member", "a member twice (the second identical)", rs[:len(rs)-1] + `,"schema":"svc.tlog.receipt/v1"}`},
		{"receipt-unknown-member", "an unknown member", rs[:len(rs)-1] + `,"zzz":1}`},
		{"receipt-final-lf", "a line feed after the JSON", rs + "\n"},
		{"receipt-upper-hex-digest", "the leaf's digest in upper-case hex (same bytes): malformed before any other check", rs[:digestAt] + strings.ToUpper(rs[digestAt:digestAt+64]) + rs[digestAt+64:]},
		{"receipt-crlf-leaf", "the leaf's first line ends in CR LF", strings.Replace(rs, `svc.tlog.leaf/v1\n`, `svc.tlog.leaf/v1\r\n`, 1)},
		{"receipt-unsorted-signatures", "the checkpoint's signature lines not in ascending byte order", strings.Replace(rs, jsonString(cp), jsonString(unsorted), 1)},
	} {
		if err := rcase(r.name, r.desc, []byte(r.data), "RECEIPT MALFORMED", 1); err != nil {
			return err
		}
	}

	// --- Newer checkpoints and consistency proofs.
	if err := b.file("checkpoint-same.txt", rcpt.Checkpoint); err != nil {
		return err
	}
	if err := b.file("checkpoint-same-unsorted.txt", []byte(unsorted)); err != nil {
		return err
	}
	if err := b.file("checkpoint-same-crlf.txt", []byte(strings.ReplaceAll(cp, "\n", "\r\n"))); err != nil {
		return err
	}
	proof := b.src["consistency-newer.txt"]
	if err := b.file("proof-crlf.txt", []byte(strings.ReplaceAll(string(proof), "\n", "\r\n"))); err != nil {
		return err
	}
	if err := b.file("proof-empty.txt", nil); err != nil {
		return err
	}
	for _, c := range []struct {
		name, desc, checkpoint, proof, code string
		exit                                int
		python                              bool
	}{
		{"newer-without-proof", "a larger newer checkpoint and no --consistency-proof: an empty proof, which does not lead to it", "checkpoint-newer.txt", "", "CHECKPOINT INCONSISTENT", 1, true},
		{"same-checkpoint-no-proof", "the receipt's own checkpoint as the newer one, no proof: same size and root need none", "checkpoint-same.txt", "", "", 0, true},
		{"same-checkpoint-empty-proof", "the receipt's own checkpoint and an empty proof file", "checkpoint-same.txt", "proof-empty.txt", "", 0, true},
		{"same-checkpoint-nonempty-proof", "the receipt's own checkpoint with a non-empty proof: same size takes an empty proof (RFC 9162)", "checkpoint-same.txt", "consistency-newer.txt", "CHECKPOINT INCONSISTENT", 1, true},
		{"newer-unsorted-signatures", "a newer checkpoint (the receipt's) with signature lines in another order: accepted", "checkpoint-same-unsorted.txt", "", "", 0, true},
		{"newer-crlf", "a newer checkpoint with CR LF line ends", "checkpoint-same-crlf.txt", "", "NEWER CHECKPOINT INVALID", 1, true},
		{"proof-crlf", "a consistency proof with CR LF line ends: not a proof file, input that cannot be read", "checkpoint-newer.txt", "proof-crlf.txt", "", 2, false},
	} {
		v := Case{Code: c.code, Python: c.python}
		v.Name, v.Description, v.Receipt, v.LogCheckpoint, v.ConsistencyProof, v.Exit = c.name, c.desc, "receipt.json", c.checkpoint, c.proof, c.exit
		if c.code != "" {
			v.Fails = []string{"transparency"}
		}
		b.add(v)
	}

	// --- Trust roots: one encoding.
	tr := string(b.src["trust-root.json"])
	tr = strings.TrimSuffix(tr, "\n")
	for _, c := range []struct{ name, desc, data string }{
		{"root-duplicate-member", "a trust root with a member twice", tr[:len(tr)-1] + `,"schema":"svc.trust-root/v1"}`},
		{"root-unknown-member", "a trust root with an unknown member", tr[:len(tr)-1] + `,"zzz":1}`},
	} {
		if err := b.file(c.name+".json", []byte(c.data)); err != nil {
			return err
		}
		v := Case{Python: true}
		v.Name, v.Description, v.TrustRoot, v.Receipt, v.Exit = c.name, c.desc, c.name+".json", "receipt.json", 3
		b.add(v)
	}

	// --- The log key's window (KEYS.md, "Which time"): checked at the
	// later of the VPEC's genTime and the latest verified cosignature of
	// a policy witness.
	if err := receipt("receipt-late.json", late("w1", "w2")...); err != nil {
		return err
	}
	if err := receipt("receipt-late-w3.json", append([]cosig{{w1Name, w1, vectorsCosigned}, {w2Name, w2, vectorsCosigned}}, late("w3")...)...); err != nil {
		return err
	}
	for _, c := range []struct {
		name, desc, receipt string
		o                   rootOpts
		code                string
		exit                int
	}{
		{"log-key-until-at-cosignature", "the log key's valid_until is the instant both witnesses cosigned: half-open, expired", "receipt-late.json",
			rootOpts{logUntil: cosignedLate, witnesses: 2}, "LOG KEY EXPIRED", 1},
		{"log-key-until-after-cosignature", "the log key's valid_until is 1 ns after the cosignatures: valid", "receipt-late.json",
			rootOpts{logUntil: cosignedLate.Add(time.Nanosecond), witnesses: 2}, "", 0},
		{"log-key-from-at-cosignature", "the log key's valid_from is the cosignatures' instant (after the VPEC's genTime): valid", "receipt-late.json",
			rootOpts{logFrom: cosignedLate, witnesses: 2}, "", 0},
		{"log-key-compromised-at-cosignature", "the log key compromised at the cosignatures' instant", "receipt-late.json",
			rootOpts{compromiseLogAt: cosignedLate, witnesses: 2}, "LOG KEY COMPROMISED", 1},
		{"log-key-checked-at-gentime-not-earlier-cosignature", "cosigned 2026-06-01, before the VPEC's genTime; the log key ended 1 s after the cosignatures: checked at the later genTime, expired", "receipt.json",
			rootOpts{logUntil: vectorsCosigned.Add(time.Second), witnesses: 2}, "LOG KEY EXPIRED", 1},
		{"log-key-no-cosignature-gentime", "no witness in the root, a checkpoint without cosignature, the log key ended in 2001: checked at the genTime", "receipt-nocosig.json",
			rootOpts{logUntil: ended}, "LOG KEY EXPIRED", 1},
		{"log-key-non-policy-cosignature-ignored", "w3 (not a witness of the root's policy) cosigned in 2030; the log key ends 2029: only policy witnesses' times count, checked at the genTime: valid", "receipt-late-w3.json",
			rootOpts{logUntil: cosignedLate.Add(-24 * time.Hour), witnesses: 2}, "", 0},
		{"log-key-listed-as-witness-only", "the log's key listed only for witness: no log-checkpoint key, trust material missing", "receipt.json",
			rootOpts{logPurpose: trustroot.PurposeWitness, witnesses: 2}, "LOG KEY MISSING", 3},
		{"root-without-witnesses", "a root without witness keys and a checkpoint no witness cosigned: the log's signature alone", "receipt-nocosig.json",
			rootOpts{}, "", 0},
	} {
		name := "root-" + c.name + ".json"
		if err := root(name, c.o); err != nil {
			return err
		}
		v := Case{Code: c.code, Python: true}
		v.Name, v.Description, v.TrustRoot, v.Receipt, v.Exit = c.name, c.desc, name, c.receipt, c.exit
		if c.code != "" {
			v.Fails = []string{"transparency"}
		}
		b.add(v)
	}
	// The VPEC key's and the TSA root's windows at the genTime's instant
	// (KEYS.md, "Validity windows": half-open, compromise first).
	doc, err := vpec.Parse(b.src["logged.json"])
	if err != nil {
		return err
	}
	tok, err := timestamp.ParseResponse(doc.Token)
	if err != nil {
		return err
	}
	gen := tok.GenTime
	for _, c := range []struct {
		name, desc, check, code string
		o                       rootOpts
		exit                    int
	}{
		{"vpec-key-until-at-gentime", "the VPEC key's valid_until is the genTime: half-open, expired", "signature", "KEY EXPIRED", rootOpts{svcUntil: gen}, 1},
		{"vpec-key-until-after-gentime", "the VPEC key's valid_until is 1 ns after the genTime: valid", "", "", rootOpts{svcUntil: gen.Add(time.Nanosecond)}, 0},
		{"vpec-key-from-at-gentime", "the VPEC key's valid_from is the genTime: valid", "", "", rootOpts{svcFrom: gen}, 0},
		{"vpec-key-from-after-gentime", "the VPEC key's valid_from is 1 ns after the genTime: not yet valid", "signature", "KEY NOT YET VALID", rootOpts{svcFrom: gen.Add(time.Nanosecond)}, 1},
		{"vpec-key-compromised-at-gentime", "the VPEC key compromised at the genTime", "signature", "KEY COMPROMISED", rootOpts{compromiseSvcAt: gen}, 1},
		{"vpec-key-compromised-after-gentime", "the VPEC key compromised 1 ns after the genTime: valid", "", "", rootOpts{compromiseSvcAt: gen.Add(time.Nanosecond)}, 0},
		{"vpec-key-compromised-before-from", "the VPEC key compromised before its valid_from (allowed): compromise comes first", "signature", "KEY COMPROMISED", rootOpts{svcFrom: gen.Add(time.Hour), compromiseSvcAt: ended}, 1},
		{"tsa-root-until-at-gentime", "the TSA root's valid_until is the token's genTime: expired", "timestamp", "TSA ROOT KEY EXPIRED", rootOpts{tsaUntil: gen}, 1},
	} {
		name := "root-" + c.name + ".json"
		if err := root(name, c.o); err != nil {
			return err
		}
		v := Case{Python: true}
		v.Name, v.Description, v.TrustRoot, v.Exit = c.name, c.desc, name, c.exit
		if c.check != "" {
			v.Fails = []string{c.check}
			v.Verdict = "INVALID \u2014 " + c.code
		}
		b.add(v)
	}

	// No genTime (no TSA root) and no cosignature: the log key's window
	// cannot be checked, so the check fails for want of trust material.
	if err := root("root-no-tsa.json", rootOpts{logUntil: far, noTSA: true}); err != nil {
		return err
	}
	v := Case{Python: true}
	v.Name, v.TrustRoot, v.Receipt, v.Exit = "log-key-window-no-time", "root-no-tsa.json", "receipt-nocosig.json", 3
	v.Description = "no TSA root (no verified genTime) and no cosignature: the log key's window is checked at no time, so transparency fails for want of trust material, never passes"
	v.Fails = []string{"timestamp", "transparency"}
	v.Verdict = "UNVERIFIED \u2014 TSA ROOT MISSING, LOG KEY WINDOW NOT CHECKED"
	b.cases = append(b.cases, v)
	b.cases[len(b.cases)-1].Kind, b.cases[len(b.cases)-1].File = "vpec", "logged.json"
	return nil
}

// jsonString is s as the JSON string RFC 8785 writes (the receipt's
// members are ASCII but for the em dash, written as is).
func jsonString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`)
	return `"` + r.Replace(s) + `"`
}
