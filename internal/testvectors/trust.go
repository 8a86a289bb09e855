package testvectors

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/merkle/testonly"
	"golang.org/x/mod/sumdb/note"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// TrustDir is the directory, relative to the vectors directory, of the
// transparency log and trust root vectors. It has its own manifest (same
// format, TrustManifestFile) so that every surface opts in to them.
const TrustDir = "trust"

// The log and witness names of the trust vectors.
const (
	VectorLogOrigin      = "svc.test/vectors-log"
	VectorOtherLogOrigin = "svc.test/other-log"
	VectorWitness1       = "witness.test/vectors-w1"
	VectorWitness2       = "witness.test/vectors-w2"
)

// trustEpoch is the fixed valid_from of the trust vectors' keys and the
// issued_at of their roots: the VPECs are timestamped when generated, so
// windows are set far from any generation time (2001 ended, 2999 not yet).
var (
	trustEpoch   = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	trustIssued  = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	trustEnded   = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	trustFuture  = time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC)
	cosignedTime = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	// witnessEnded and witnessLater bracket cosignedTime: a witness
	// window that ends at the first, or starts at the second, refuses the
	// cosignatures of the trust vectors.
	witnessEnded = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	witnessLater = time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
)

// SeededKey is a TEST-ONLY Ed25519 key derived from a name: the trust
// vectors' log, witness and root keys are reproducible without key files
// (internal/trustcorpus re-signs with them).
func SeededKey(name string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("svc TEST-ONLY trust vector key " + name))
	return ed25519.NewKeyFromSeed(seed[:])
}

// tgen writes the trust vectors.
type tgen struct {
	*gen
	out     string // dir/trust
	vectors []Vector
}

func (t *tgen) file(rel string, data []byte) error {
	return writeFile(filepath.Join(t.out, rel), data)
}

func (t *tgen) add(v Vector) {
	if v.Kind == "" {
		v.Kind = "vpec"
	}
	if v.Verdict == "" && v.Valid {
		v.Verdict = "VALID"
	}
	t.vectors = append(t.vectors, v)
}

// GenerateTrust writes only the trust vectors into dir/trust, with the key
// material already in dir/keys (Generate writes them too).
func GenerateTrust(dir string) error {
	g := &gen{dir: dir, clk: &clock{t: time.Now().UTC().Truncate(time.Second)}}
	var err error
	if g.service, err = loadOrCreateKey(filepath.Join(dir, ServiceKeyFile)); err != nil {
		return err
	}
	if g.tsa, err = timestamp.LoadOrInitAuthority(filepath.Join(dir, TSADir), timestamp.AuthorityOptions{Name: "svc TEST-ONLY TSA", Now: g.clk.now}); err != nil {
		return err
	}
	return g.generateTrust()
}

// generateTrust writes the transparency log and trust root vectors into
// dir/trust, with g's service key and TSA: a VPEC, receipts for it (valid,
// and one per failure class of docs/TRANSPARENCY.md), newer checkpoints
// with consistency proofs, and trust roots whose windows, purposes or
// compromise make the VPEC's signature or timestamp refused, and root
// updates (one chained, one not signed by the previous root).
func (g *gen) generateTrust() error {
	t := &tgen{gen: g, out: filepath.Join(g.dir, TrustDir)}
	os.RemoveAll(t.out)
	v, err := g.newVPEC("run_00000000-0000-4000-8000-0000000070a9", g.cleanRecords(), nil)
	if err != nil {
		return err
	}
	doc, err := document.MarshalIndent(v)
	if err != nil {
		return err
	}
	if err := t.file("logged.json", doc); err != nil {
		return err
	}
	d, err := vpec.Parse(doc)
	if err != nil {
		return err
	}

	// The trust roots.
	rootKey := SeededKey("root")
	logKey, otherLogKey := SeededKey("log"), SeededKey("other-log")
	w1, w2 := SeededKey("w1"), SeededKey("w2")
	svc := g.service.PublicKey()
	type keyMod func([]trustroot.NewKey) []trustroot.NewKey
	build := func(version int, mods ...keyMod) (*trustroot.Root, error) {
		keys := []trustroot.NewKey{
			{Purpose: trustroot.PurposeVPEC, PublicKey: svc, From: trustEpoch, Comment: "TEST-ONLY service key"},
			{Purpose: trustroot.PurposeTSARoot, Certificate: g.tsa.Root(), From: trustEpoch, Comment: "TEST-ONLY TSA"},
			{Purpose: trustroot.PurposeLog, PublicKey: logKey.Public().(ed25519.PublicKey), NoteName: VectorLogOrigin, From: trustEpoch},
			{Purpose: trustroot.PurposeWitness, PublicKey: w1.Public().(ed25519.PublicKey), NoteName: VectorWitness1, From: trustEpoch},
			{Purpose: trustroot.PurposeWitness, PublicKey: w2.Public().(ed25519.PublicKey), NoteName: VectorWitness2, From: trustEpoch},
			{Purpose: trustroot.PurposeRoot, PublicKey: rootKey.Public().(ed25519.PublicKey), From: trustEpoch, Comment: "TEST-ONLY root key"},
		}
		for _, m := range mods {
			keys = m(keys)
		}
		r, err := trustroot.Build(trustIssued, 1, keys...)
		if err != nil {
			return nil, err
		}
		for r.Version < int64(version) {
			if r, err = r.Next(trustIssued.Add(time.Duration(r.Version) * time.Hour)); err != nil {
				return nil, err
			}
		}
		return r, nil
	}
	write := func(name string, r *trustroot.Root, signers ...ed25519.PrivateKey) error {
		if len(signers) == 0 {
			signers = []ed25519.PrivateKey{rootKey}
		}
		for _, s := range signers {
			if err := r.Sign(s); err != nil {
				return err
			}
		}
		b, err := r.Marshal()
		if err != nil {
			return err
		}
		return t.file(name, b)
	}
	setSvc := func(f func(k *trustroot.NewKey)) keyMod {
		return func(keys []trustroot.NewKey) []trustroot.NewKey { f(&keys[0]); return keys }
	}
	root, err := build(1)
	if err != nil {
		return err
	}
	if err := write("trust-root.json", root); err != nil {
		return err
	}
	for _, c := range []struct {
		name string
		mod  keyMod
	}{
		{"trust-root-key-expired.json", setSvc(func(k *trustroot.NewKey) { k.Until = trustEnded })},
		{"trust-root-key-not-yet-valid.json", setSvc(func(k *trustroot.NewKey) { k.From = trustFuture })},
		{"trust-root-key-wrong-purpose.json", setSvc(func(k *trustroot.NewKey) { k.Purpose = trustroot.PurposeProfile })},
		{"trust-root-tsa-expired.json", func(keys []trustroot.NewKey) []trustroot.NewKey { keys[1].Until = trustEnded; return keys }},
	} {
		r, err := build(1, c.mod)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		if err := write(c.name, r); err != nil {
			return err
		}
	}
	// Witness key windows (cosignatures are made at cosignedTime):
	// witness 2's window ended before, or starts after, its cosignature.
	setKey := func(i int, f func(k *trustroot.NewKey)) keyMod {
		return func(keys []trustroot.NewKey) []trustroot.NewKey { f(&keys[i]); return keys }
	}
	// The circuit entries of the proof vectors are signed by the service
	// key: these roots also list it for circuit-signing.
	circuitKey := func(f func(k *trustroot.NewKey)) keyMod {
		return func(keys []trustroot.NewKey) []trustroot.NewKey {
			k := trustroot.NewKey{Purpose: trustroot.PurposeCircuit, PublicKey: svc, From: trustEpoch, Comment: "TEST-ONLY service key, signs the proof vectors' circuit entries"}
			f(&k)
			return append(keys, k)
		}
	}
	for _, c := range []struct {
		name string
		mod  keyMod
	}{
		{"trust-root-witness-expired.json", setKey(4, func(k *trustroot.NewKey) { k.Until = witnessEnded })},
		{"trust-root-witness-not-yet-valid.json", setKey(4, func(k *trustroot.NewKey) { k.From = witnessLater })},
		{"trust-root-circuit.json", circuitKey(func(*trustroot.NewKey) {})},
		{"trust-root-circuit-key-expired.json", circuitKey(func(k *trustroot.NewKey) { k.Until = trustEnded })},
		{"trust-root-circuit-key-not-yet-valid.json", circuitKey(func(k *trustroot.NewKey) { k.From = trustFuture })},
	} {
		r, err := build(1, c.mod)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		if err := write(c.name, r); err != nil {
			return err
		}
	}
	// Witness 1 compromised before its cosignature.
	w1Compromised, err := trustroot.Compromise(root, trustroot.KeyID(mustSPKI(w1.Public().(ed25519.PublicKey))), witnessEnded, trustIssued.Add(time.Hour))
	if err != nil {
		return err
	}
	if err := write("trust-root-witness-compromised.json", w1Compromised); err != nil {
		return err
	}
	// The service key compromised in 2999: its VPEC signatures (timed
	// by their genTime) still verify, its circuit entries (untimed) do not.
	circuitRoot, err := build(1, circuitKey(func(*trustroot.NewKey) {}))
	if err != nil {
		return err
	}
	circuitCompromised, err := trustroot.Compromise(circuitRoot, trustroot.KeyID(mustSPKI(svc)), trustFuture, trustIssued.Add(time.Hour))
	if err != nil {
		return err
	}
	if err := write("trust-root-circuit-key-compromised.json", circuitCompromised); err != nil {
		return err
	}
	compromised, err := trustroot.Compromise(root, trustroot.KeyID(mustSPKI(svc)), trustEnded, trustIssued.Add(time.Hour))
	if err != nil {
		return err
	}
	if err := write("trust-root-key-compromised.json", compromised); err != nil {
		return err
	}
	// Updates of trust-root.json: version 2 signed by its root key, and a
	// version 2 signed only by a key the old root does not hold.
	v2, err := root.Next(trustIssued.Add(24 * time.Hour))
	if err != nil {
		return err
	}
	if err := write("trust-root-v2.json", v2); err != nil {
		return err
	}
	rogue := SeededKey("rogue-root")
	forged, err := trustroot.Build(trustIssued, 1,
		trustroot.NewKey{Purpose: trustroot.PurposeVPEC, PublicKey: svc, From: trustEpoch},
		trustroot.NewKey{Purpose: trustroot.PurposeTSARoot, Certificate: g.tsa.Root(), From: trustEpoch},
		trustroot.NewKey{Purpose: trustroot.PurposeRoot, PublicKey: rogue.Public().(ed25519.PublicKey), From: trustEpoch},
	)
	if err != nil {
		return err
	}
	if forged, err = forged.Next(trustIssued.Add(24 * time.Hour)); err != nil {
		return err
	}
	if err := write("trust-root-v2-not-signed-by-v1.json", forged, rogue); err != nil {
		return err
	}

	// The log: 8 entries, the VPEC at index 5; 12 entries later; a fork of
	// 12 entries in which entry 3 differs.
	orgKey, err := tlog.DeriveOrgKey([]byte("svc TEST-ONLY vectors org secret"), d.VPEC.OrgID)
	if err != nil {
		return err
	}
	issued, err := vpec.ParseTime(d.VPEC.IssuedAt)
	if err != nil {
		return err
	}
	leafOf := func(id string, digest [32]byte) (tlog.Leaf, error) {
		return tlog.NewLeaf(orgKey, tlog.Entry{VPECID: id, Digest: digest, OrgID: d.VPEC.OrgID, WorkflowID: d.VPEC.WorkflowID,
			Environment: string(d.VPEC.Environment), IssuedAt: issued, Clean: d.VPEC.IsClean})
	}
	const index = 5
	leaves := make([]tlog.Leaf, 12)
	for i := range leaves {
		id := fmt.Sprintf("vpec_00000000-0000-4000-8000-%012d", 7000+i)
		dg := tlog.Digest([]byte("signed bytes of " + id))
		if i == index {
			id, dg = d.VPEC.VPECID, tlog.DigestParts(d.SignedParts)
		}
		if leaves[i], err = leafOf(id, dg); err != nil {
			return err
		}
	}
	tree := func(n int, fork bool) *testonly.Tree {
		tr := testonly.New(rfc6962.DefaultHasher)
		for i := range n {
			data := leaves[i].Marshal()
			if fork && i == 3 {
				data = append([]byte(nil), data...)
				data[len(data)-2] ^= 1 // another state_tag: another entry
			}
			tr.AppendData(data)
		}
		return tr
	}
	t8, t6, t12, fork12 := tree(8, false), tree(6, false), tree(12, false), tree(12, true)
	checkpoint := func(origin string, key ed25519.PrivateKey, tr *testonly.Tree, witnesses ...ed25519.PrivateKey) ([]byte, error) {
		return signCheckpoint(origin, key, tr.Size(), tr.Hash(), witnesses...)
	}
	receipt := func(name string, idx uint64, l tlog.Leaf, proofIndex uint64, cp []byte) error {
		path, err := t8.InclusionProof(proofIndex, t8.Size())
		if err != nil {
			return err
		}
		r := &tlog.Receipt{LogIndex: idx, Leaf: l, Checkpoint: cp}
		for _, h := range path {
			r.InclusionProof = append(r.InclusionProof, [32]byte(h))
		}
		b, err := r.Marshal()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return t.file(name, b)
	}
	cp8, err := checkpoint(VectorLogOrigin, logKey, t8, w1, w2)
	if err != nil {
		return err
	}
	if err := receipt("receipt.json", index, leaves[index], index, cp8); err != nil {
		return err
	}
	if err := receipt("receipt-other-vpec.json", 4, leaves[4], 4, cp8); err != nil {
		return err
	}
	if err := receipt("receipt-other-index.json", index, leaves[index], index+1, cp8); err != nil {
		return err
	}
	otherCP, err := signCheckpoint(VectorOtherLogOrigin, otherLogKey, t8.Size(), t8.Hash(), w1, w2)
	if err != nil {
		return err
	}
	if err := receipt("receipt-other-log.json", index, leaves[index], index, otherCP); err != nil {
		return err
	}
	// A forged cosignature: w2's line signs another checkpoint text.
	forgedCP, err := forgeCosignature(cp8, VectorWitness2, w2)
	if err != nil {
		return err
	}
	if err := receipt("receipt-forged-cosignature.json", index, leaves[index], index, forgedCP); err != nil {
		return err
	}
	oneCP, err := checkpoint(VectorLogOrigin, logKey, t8, w1)
	if err != nil {
		return err
	}
	if err := receipt("receipt-missing-cosignature.json", index, leaves[index], index, oneCP); err != nil {
		return err
	}
	if err := t.file("policy-w1.txt", []byte(fmt.Sprintf("witness w1 %s https://witness.invalid/\nquorum w1\n",
		trustroot.FormatNoteVerifier(VectorWitness1, trustroot.NoteAlgCosignatureV1, w1.Public().(ed25519.PublicKey))))); err != nil {
		return err
	}
	for _, c := range []struct {
		name string
		tr   *testonly.Tree
	}{{"newer", t12}, {"fork", fork12}, {"older", t6}} {
		cp, err := checkpoint(VectorLogOrigin, logKey, c.tr, w1, w2)
		if err != nil {
			return err
		}
		if err := t.file("checkpoint-"+c.name+".txt", cp); err != nil {
			return err
		}
		if c.tr.Size() < t8.Size() {
			continue
		}
		// The proof from 8 entries in the tree given: for the fork it
		// is the fork's own proof, which cannot lead from the real root.
		p, err := c.tr.ConsistencyProof(t8.Size(), c.tr.Size())
		if err != nil {
			return err
		}
		if err := t.file("consistency-"+c.name+".txt", tlog.MarshalProof(p)); err != nil {
			return err
		}
	}

	// The vectors.
	const tr = "trust-root.json"
	t.add(Vector{Name: "receipt-valid", File: "logged.json", TrustRoot: tr, Receipt: "receipt.json", Valid: true,
		Description: "a VPEC with a valid receipt: index 5 of 8, cosigned by both witnesses of the trust root"})
	t.add(Vector{Name: "no-receipt", File: "logged.json", TrustRoot: tr, Valid: true,
		Description: "no receipt given: the transparency check does not apply (reported, not failed)"})
	t.add(Vector{Name: "no-receipt-required", File: "logged.json", TrustRoot: tr, RequireLog: true, Fails: []string{"transparency"}, Verdict: "INVALID — NO LOG RECEIPT", Exit: 1,
		Description: "no receipt given with --require-log"})
	t.add(Vector{Name: "receipt-newer-checkpoint", File: "logged.json", TrustRoot: tr, Receipt: "receipt.json", LogCheckpoint: "checkpoint-newer.txt", ConsistencyProof: "consistency-newer.txt", Valid: true,
		Description: "the receipt's checkpoint (8 entries) is a prefix of a newer one (12), by the consistency proof given"})
	t.add(Vector{Name: "receipt-witness-policy-file", File: "logged.json", TrustRoot: tr, Receipt: "receipt-missing-cosignature.json", WitnessPolicy: "policy-w1.txt", Valid: true,
		Description: "a checkpoint cosigned by witness 1 only, under a --witness-policy that asks for witness 1 only"})
	t.add(Vector{Name: "trust-root-update-valid", File: "logged.json", TrustRoot: tr, TrustRootUpdates: []string{"trust-root-v2.json"}, Receipt: "receipt.json", Valid: true,
		Description: "the trust root updated to version 2, signed by version 1's root key"})
	t.add(Vector{Name: "receipt-pem-bundle", File: "logged.json", TrustRoot: "../" + TrustBundleFile, Receipt: "receipt.json", Fails: []string{"transparency"}, Verdict: "UNVERIFIED — LOG KEY MISSING", Exit: 3,
		Description: "a receipt checked against the PEM trust bundle, which has no log key: trust material missing"})
	bad := func(name, desc string, v Vector) {
		v.Name, v.Description, v.File = name, desc, "logged.json"
		if v.TrustRoot == "" {
			v.TrustRoot = tr
		}
		t.add(v)
	}
	inv := func(check, code string) (string, []string, int) { return "INVALID — " + code, []string{check}, 1 }
	for _, c := range []struct{ name, desc, receipt, check, code string }{
		{"receipt-other-vpec", "a valid receipt of another VPEC of the same log (index 4)", "receipt-other-vpec.json", "transparency", "RECEIPT FOR ANOTHER VPEC"},
		{"receipt-other-index", "this VPEC's leaf at index 5 with the audit path of index 6", "receipt-other-index.json", "transparency", "INCLUSION PROOF INVALID"},
		{"receipt-other-log", "the checkpoint of another log (origin " + VectorOtherLogOrigin + ", another key) over the same tree", "receipt-other-log.json", "transparency", "CHECKPOINT FROM ANOTHER LOG"},
		{"receipt-forged-cosignature", "witness 2's cosignature line signs another checkpoint text", "receipt-forged-cosignature.json", "transparency", "COSIGNATURE FORGED"},
		{"receipt-missing-cosignature", "cosigned by witness 1 only; the trust root's policy needs both witnesses", "receipt-missing-cosignature.json", "transparency", "WITNESS POLICY NOT SATISFIED"},
	} {
		verdict, fails, exit := inv(c.check, c.code)
		bad(c.name, c.desc, Vector{Receipt: c.receipt, Fails: fails, Verdict: verdict, Exit: exit})
	}
	verdict, fails, exit := inv("transparency", "CHECKPOINT INCONSISTENT")
	bad("receipt-forked-checkpoint", "a newer checkpoint (12 entries) of a fork in which entry 3 differs: the receipt's checkpoint is not its prefix",
		Vector{Receipt: "receipt.json", LogCheckpoint: "checkpoint-fork.txt", ConsistencyProof: "consistency-fork.txt", Fails: fails, Verdict: verdict, Exit: exit})
	verdict, fails, exit = inv("transparency", "CHECKPOINT NEWER THAN GIVEN")
	bad("receipt-older-checkpoint-given", "the 'newer' checkpoint given has 6 entries, fewer than the receipt's 8: an old checkpoint",
		Vector{Receipt: "receipt.json", LogCheckpoint: "checkpoint-older.txt", Fails: fails, Verdict: verdict, Exit: exit})
	for _, c := range []struct{ name, desc, root, check, code string }{
		{"key-expired", "the VPEC key's window ended (2001) before the timestamp's genTime", "trust-root-key-expired.json", "signature", "KEY EXPIRED"},
		{"key-not-yet-valid", "the VPEC key's window starts in 2999, after the timestamp's genTime", "trust-root-key-not-yet-valid.json", "signature", "KEY NOT YET VALID"},
		{"key-wrong-purpose", "the VPEC key is listed only for profile-signing", "trust-root-key-wrong-purpose.json", "signature", "KEY WRONG PURPOSE"},
		{"key-compromised", "the VPEC key was marked compromised from 2001, before the timestamp's genTime", "trust-root-key-compromised.json", "signature", "KEY COMPROMISED"},
		{"tsa-root-expired", "the TSA root's window ended (2001) before the token's genTime", "trust-root-tsa-expired.json", "timestamp", "TSA ROOT KEY EXPIRED"},
	} {
		verdict, fails, exit := inv(c.check, c.code)
		bad(c.name, c.desc, Vector{TrustRoot: c.root, Fails: fails, Verdict: verdict, Exit: exit})
	}
	for _, c := range []struct{ name, desc, root, policy, code string }{
		{"receipt-witness-expired", "witness 2's window ended (2026-05-01) before its cosignature (2026-06-01): it does not count, and the trust root's policy needs both witnesses", "trust-root-witness-expired.json", "", "WITNESS KEY EXPIRED"},
		{"receipt-witness-not-yet-valid", "witness 2's window starts (2026-07-01) after its cosignature (2026-06-01)", "trust-root-witness-not-yet-valid.json", "", "WITNESS KEY NOT YET VALID"},
		{"receipt-witness-compromised", "witness 1 was marked compromised from 2026-05-01, before its cosignature (2026-06-01)", "trust-root-witness-compromised.json", "", "WITNESS KEY COMPROMISED"},
		{"receipt-witness-compromised-policy-file", "a --witness-policy that asks for witness 1 only, whose key the trust root marks compromised before its cosignature: the root's window applies to the policy's witnesses it lists", "trust-root-witness-compromised.json", "policy-w1.txt", "WITNESS KEY COMPROMISED"},
	} {
		verdict, fails, exit := inv("transparency", c.code)
		bad(c.name, c.desc, Vector{TrustRoot: c.root, Receipt: "receipt.json", WitnessPolicy: c.policy, Fails: fails, Verdict: verdict, Exit: exit})
	}
	t.add(Vector{Name: "receipt-witness-expired-not-needed", File: "logged.json", TrustRoot: "trust-root-witness-expired.json", Receipt: "receipt.json", WitnessPolicy: "policy-w1.txt", Valid: true,
		Description: "witness 2's window ended before its cosignature, but the --witness-policy asks for witness 1 only: the receipt is valid"})
	// Circuit entries: the proof VPEC of the main corpus and its signed
	// entries, whose published_at is the corpus's generation time.
	proofs := []string{"../" + HeadCircuitFile, "../" + ThresholdCircuitFile}
	t.add(Vector{Name: "circuit-key-in-window", File: "../vpec/valid/proofs.json", TrustRoot: "trust-root-circuit.json", Circuits: proofs, Valid: true,
		Description: "the proof VPEC with its circuit entries, whose key is valid for circuit-signing at their published_at"})
	for _, c := range []struct{ name, desc, root, code string }{
		{"circuit-key-expired", "the circuit entries' key's circuit-signing window ended (2001) before their published_at", "trust-root-circuit-key-expired.json", "CIRCUIT KEY EXPIRED"},
		{"circuit-key-not-yet-valid", "the circuit entries' key's circuit-signing window starts in 2999, after their published_at", "trust-root-circuit-key-not-yet-valid.json", "CIRCUIT KEY NOT YET VALID"},
		{"circuit-key-compromised", "the circuit entries' key is marked compromised from 2999: the VPEC (timestamped before) verifies, but an untimestamped circuit entry is refused whatever its published_at", "trust-root-circuit-key-compromised.json", "CIRCUIT KEY COMPROMISED"},
		{"circuit-key-wrong-purpose", "the circuit entries' key is listed for vpec-signing only: the VPEC verifies, but a key of one purpose is refused for another", "trust-root.json", "CIRCUIT KEY WRONG PURPOSE"},
	} {
		verdict, fails, exit := inv("zk_proofs", c.code)
		t.add(Vector{Name: c.name, Description: c.desc, File: "../vpec/valid/proofs.json", TrustRoot: c.root, Circuits: proofs, Fails: fails, Verdict: verdict, Exit: exit})
	}
	bad("trust-root-update-not-signed", "a version 2 signed only by a root key version 1 does not hold: refused before anything is verified (exit 3)",
		Vector{TrustRootUpdates: []string{"trust-root-v2-not-signed-by-v1.json"}, TrustRootRefusal: "not-signed-by-previous", Exit: 3})

	m := Manifest{
		Comment:     "svc transparency log and trust root vectors (docs/TRANSPARENCY.md, docs/KEYS.md). Every key is TEST-ONLY. Paths are relative to this directory. Regenerate with: go run ./internal/testvectors/genvectors testdata/vectors",
		TrustBundle: "../" + TrustBundleFile,
		Vectors:     t.vectors,
	}
	b, err := document.MarshalIndent(m)
	if err != nil {
		return err
	}
	return t.file(ManifestFile, b)
}

// signCheckpoint returns the checkpoint of a tree (origin, size, root)
// signed by the log key and cosigned (cosignature/v1, at cosignedTime) by
// each witness, signature lines sorted as a receipt carries them.
func signCheckpoint(origin string, key ed25519.PrivateKey, size uint64, root []byte, witnesses ...ed25519.PrivateKey) ([]byte, error) {
	text := fmt.Sprintf("%s\n%d\n%s\n", origin, size, base64.StdEncoding.EncodeToString(root))
	s, err := tlog.NewNoteSigner(origin, key)
	if err != nil {
		return nil, err
	}
	signed, err := note.Sign(&note.Note{Text: text}, s)
	if err != nil {
		return nil, err
	}
	for i, w := range witnesses {
		name := []string{VectorWitness1, VectorWitness2}[i]
		signed = append(signed, CosignatureLine(name, w, text, cosignedTime)...)
	}
	return tlog.SortSignatures(signed)
}

// CosignatureLine is a C2SP tlog-cosignature/v1 signature line by witness
// key w named name over the checkpoint text signedText, at time at.
func CosignatureLine(name string, w ed25519.PrivateKey, signedText string, at time.Time) string {
	vkey := trustroot.FormatNoteVerifier(name, trustroot.NoteAlgCosignatureV1, w.Public().(ed25519.PublicKey))
	nv, err := trustroot.ParseNoteVerifier(vkey)
	if err != nil {
		panic(err) // a name of ours
	}
	ts := uint64(at.Unix())
	msg := fmt.Sprintf("cosignature/v1\ntime %d\n%s", ts, signedText)
	sig := ed25519.Sign(w, []byte(msg))
	blob := binary.BigEndian.AppendUint32(nil, nv.Hash)
	blob = binary.BigEndian.AppendUint64(blob, ts)
	blob = append(blob, sig...)
	return fmt.Sprintf("\u2014 %s %s\n", name, base64.StdEncoding.EncodeToString(blob))
}

// forgeCosignature replaces witness name's line of cp with one that signs
// another checkpoint text (the size one more).
func forgeCosignature(cp []byte, name string, w ed25519.PrivateKey) ([]byte, error) {
	text, sigs, ok := strings.Cut(string(cp), "\n\n")
	if !ok {
		return nil, fmt.Errorf("not a signed note")
	}
	text += "\n"
	lines := strings.SplitAfter(sigs, "\n")
	var out strings.Builder
	out.WriteString(text + "\n")
	for _, l := range lines {
		if l == "" {
			continue
		}
		if strings.HasPrefix(l, "\u2014 "+name+" ") {
			origin, rest, _ := strings.Cut(text, "\n")
			l = CosignatureLine(name, w, origin+"\n999"+rest[strings.Index(rest, "\n"):], cosignedTime)
		}
		out.WriteString(l)
	}
	return tlog.SortSignatures([]byte(out.String()))
}

func mustSPKI(pub ed25519.PublicKey) []byte {
	b, err := marshalSPKI(pub)
	if err != nil {
		panic(err)
	}
	return b
}
