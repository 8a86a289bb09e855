package docs_test

// TestSnarkjsAgreesWithSvcVerify holds svc's Groth16 encodings to
// docs/FORMATS.md with a verifier svc shares no code with: iden3's snarkjs
// (JavaScript, the circom ecosystem's). The converter below reads a
// condition record's zk_proof and the verifying key of the circuit entry
// its circuit_id names, decodes both from FORMATS.md alone ("Groth16
// proofs": compressed points, layouts; "zk_proof block": the public
// inputs), writes snarkjs's verification_key.json, proof.json and
// public.json, and snarkjs's groth16.verify must give every case the
// verdict svc-verify's zk_proofs check gives (docs/INTEROP.md, "snarkjs").

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/zk"
	"github.com/svc-gov/svc/pkg/zk/conditions"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// BN254's base field modulus p and scalar field modulus r.
var (
	bnP, _ = new(big.Int).SetString("21888242871839275222246405745257275088696311157297823662689037894645226208583", 10)
	bnR, _ = new(big.Int).SetString("21888242871839275222246405745257275088548364400416034343698204186575808495617", 10)
)

// errNotConvertible marks keys and proofs the converter refuses: what
// FORMATS.md says is malformed, or gnark's commitment extension, which
// plain Groth16 (snarkjs) has no equation for.
var errNotConvertible = errors.New("not convertible to snarkjs")

// fp2 is a + b·u in F_p[u]/(u² + 1).
type fp2 struct{ a0, a1 *big.Int }

func modp(x *big.Int) *big.Int { return x.Mod(x, bnP) }

func (x fp2) add(y fp2) fp2 {
	return fp2{modp(new(big.Int).Add(x.a0, y.a0)), modp(new(big.Int).Add(x.a1, y.a1))}
}

func (x fp2) mul(y fp2) fp2 {
	t0 := new(big.Int).Mul(x.a0, y.a0)
	t1 := new(big.Int).Mul(x.a1, y.a1)
	c1 := new(big.Int).Add(new(big.Int).Mul(x.a0, y.a1), new(big.Int).Mul(x.a1, y.a0))
	return fp2{modp(t0.Sub(t0, t1)), modp(c1)}
}

func (x fp2) equal(y fp2) bool { return x.a0.Cmp(y.a0) == 0 && x.a1.Cmp(y.a1) == 0 }

// sqrt returns a square root in F_p² (p ≡ 3 mod 4), or false.
func (x fp2) sqrt() (fp2, bool) {
	half := new(big.Int).ModInverse(big.NewInt(2), bnP)
	var cand fp2
	if x.a1.Sign() == 0 {
		if s := new(big.Int).ModSqrt(x.a0, bnP); s != nil {
			cand = fp2{s, new(big.Int)}
		} else {
			s := new(big.Int).ModSqrt(modp(new(big.Int).Neg(x.a0)), bnP)
			if s == nil {
				return fp2{}, false
			}
			cand = fp2{new(big.Int), s}
		}
	} else {
		norm := modp(new(big.Int).Add(new(big.Int).Mul(x.a0, x.a0), new(big.Int).Mul(x.a1, x.a1)))
		alpha := new(big.Int).ModSqrt(norm, bnP)
		if alpha == nil {
			return fp2{}, false
		}
		delta := modp(new(big.Int).Mul(new(big.Int).Add(x.a0, alpha), half))
		s := new(big.Int).ModSqrt(delta, bnP)
		if s == nil {
			delta = modp(new(big.Int).Mul(new(big.Int).Sub(x.a0, alpha), half))
			if s = new(big.Int).ModSqrt(delta, bnP); s == nil {
				return fp2{}, false
			}
		}
		inv := new(big.Int).ModInverse(new(big.Int).Lsh(s, 1), bnP)
		cand = fp2{s, modp(new(big.Int).Mul(x.a1, inv))}
	}
	if !cand.mul(cand).equal(x) {
		return fp2{}, false
	}
	return cand, true
}

// largest: FORMATS.md's "lexicographically largest" of ±y. In F_p, y >
// (p−1)/2; in F_p², that of A1, or of A0 when A1 is zero.
func largest(y *big.Int) bool {
	return y.Cmp(new(big.Int).Rsh(bnP, 1)) > 0
}

func largest2(y fp2) bool {
	if y.a1.Sign() == 0 {
		return largest(y.a0)
	}
	return largest(y.a1)
}

// flags splits off a compressed point's two top bits and checks them:
// infinity must be all zero otherwise, uncompressed encodings are refused.
func flags(b []byte) (largestY, infinity bool, err error) {
	switch b[0] >> 6 {
	case 0b01:
		rest := append([]byte{b[0] & 0x3f}, b[1:]...)
		if !bytes.Equal(rest, make([]byte, len(rest))) {
			return false, false, fmt.Errorf("%w: point at infinity with nonzero bits", errNotConvertible)
		}
		return false, true, nil
	case 0b10:
		return false, false, nil
	case 0b11:
		return true, false, nil
	}
	return false, false, fmt.Errorf("%w: uncompressed point (flags 00)", errNotConvertible)
}

// coord reads a 32-byte big-endian base-field element (flags cleared).
func coord(b []byte, clearFlags bool) (*big.Int, error) {
	c := append([]byte(nil), b...)
	if clearFlags {
		c[0] &= 0x3f
	}
	x := new(big.Int).SetBytes(c)
	if x.Cmp(bnP) >= 0 {
		return nil, fmt.Errorf("%w: coordinate not below p", errNotConvertible)
	}
	return x, nil
}

// g1 decodes a compressed G1 point into snarkjs's projective JSON
// [x, y, "1"] (infinity: ["0", "1", "0"]). Curve: y² = x³ + 3.
func g1(b []byte) ([]string, error) {
	big1, inf, err := flags(b)
	if err != nil {
		return nil, err
	}
	if inf {
		return []string{"0", "1", "0"}, nil
	}
	x, err := coord(b, true)
	if err != nil {
		return nil, err
	}
	rhs := modp(new(big.Int).Add(new(big.Int).Exp(x, big.NewInt(3), bnP), big.NewInt(3)))
	y := new(big.Int).ModSqrt(rhs, bnP)
	if y == nil {
		return nil, fmt.Errorf("%w: G1 x is not on the curve", errNotConvertible)
	}
	if largest(y) != big1 {
		y = modp(y.Neg(y))
	}
	return []string{x.String(), y.String(), "1"}, nil
}

// g2 decodes a compressed G2 point (x.A1 then x.A0, flags in the first
// byte) into snarkjs's [[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]]. Curve
// (the twist): y² = x³ + 3/(9 + u).
func g2(b []byte) ([][]string, error) {
	big1, inf, err := flags(b)
	if err != nil {
		return nil, err
	}
	if inf {
		return [][]string{{"0", "0"}, {"1", "0"}, {"0", "0"}}, nil
	}
	a1, err := coord(b[:32], true)
	if err != nil {
		return nil, err
	}
	a0, err := coord(b[32:64], false)
	if err != nil {
		return nil, err
	}
	x := fp2{a0, a1}
	inv82 := new(big.Int).ModInverse(big.NewInt(82), bnP)
	// 3/(9+u) = 3(9−u)/82
	bTwist := fp2{modp(new(big.Int).Mul(big.NewInt(27), inv82)), modp(new(big.Int).Mul(big.NewInt(-3), inv82))}
	y, ok := x.mul(x).mul(x).add(bTwist).sqrt()
	if !ok {
		return nil, fmt.Errorf("%w: G2 x is not on the curve", errNotConvertible)
	}
	if largest2(y) != big1 {
		y = fp2{modp(new(big.Int).Neg(y.a0)), modp(new(big.Int).Neg(y.a1))}
	}
	return [][]string{{a0.String(), a1.String()}, {y.a0.String(), y.a1.String()}, {"1", "0"}}, nil
}

// reader walks a byte string, failing once past its end.
type reader struct {
	b   []byte
	err error
}

func (r *reader) next(n int) []byte {
	if r.err != nil || n > len(r.b) {
		if r.err == nil {
			r.err = fmt.Errorf("%w: truncated", errNotConvertible)
		}
		return make([]byte, n)
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) u32() uint32 { return binary.BigEndian.Uint32(r.next(4)) }

type snarkjsVK struct {
	Protocol string     `json:"protocol"`
	Curve    string     `json:"curve"`
	NPublic  int        `json:"nPublic"`
	Alpha1   []string   `json:"vk_alpha_1"`
	Beta2    [][]string `json:"vk_beta_2"`
	Gamma2   [][]string `json:"vk_gamma_2"`
	Delta2   [][]string `json:"vk_delta_2"`
	IC       [][]string `json:"IC"`
}

type snarkjsProof struct {
	A        []string   `json:"pi_a"`
	B        [][]string `json:"pi_b"`
	C        []string   `json:"pi_c"`
	Protocol string     `json:"protocol"`
	Curve    string     `json:"curve"`
}

// convertVK decodes FORMATS.md's verifying key layout.
func convertVK(b []byte) (*snarkjsVK, error) {
	r := &reader{b: b}
	vk := &snarkjsVK{Protocol: "groth16", Curve: "bn128"}
	var err error
	must := func(e error) {
		if err == nil {
			err = e
		}
	}
	var e error
	vk.Alpha1, e = g1(r.next(32))
	must(e)
	_, e = g1(r.next(32)) // β (G1): not used by verification
	must(e)
	vk.Beta2, e = g2(r.next(64))
	must(e)
	vk.Gamma2, e = g2(r.next(64))
	must(e)
	_, e = g1(r.next(32)) // δ (G1): not used by verification
	must(e)
	vk.Delta2, e = g2(r.next(64))
	must(e)
	nK := r.u32()
	if nK < 1 || nK > 4103 {
		must(fmt.Errorf("%w: nK = %d", errNotConvertible, nK))
		nK = 0
	}
	for i := uint32(0); i < nK; i++ {
		p, e := g1(r.next(32))
		must(e)
		vk.IC = append(vk.IC, p)
	}
	if m := r.u32(); m != 0 {
		must(fmt.Errorf("%w: the key has %d Pedersen commitments (gnark's commitment extension: no plain Groth16 equation)", errNotConvertible, m))
	}
	if m := r.u32(); m != 0 {
		must(fmt.Errorf("%w: the key has %d commitment keys", errNotConvertible, m))
	}
	must(r.err)
	if len(r.b) != 0 {
		must(fmt.Errorf("%w: %d bytes after the key", errNotConvertible, len(r.b)))
	}
	vk.NPublic = len(vk.IC) - 1
	return vk, err
}

// convertProof decodes FORMATS.md's proof layout.
func convertProof(b []byte) (*snarkjsProof, error) {
	r := &reader{b: b}
	p := &snarkjsProof{Protocol: "groth16", Curve: "bn128"}
	var err error
	must := func(e error) {
		if err == nil {
			err = e
		}
	}
	var e error
	p.A, e = g1(r.next(32))
	must(e)
	p.B, e = g2(r.next(64))
	must(e)
	p.C, e = g1(r.next(32))
	must(e)
	if n := r.u32(); n != 0 {
		must(fmt.Errorf("%w: the proof has %d Pedersen commitments (gnark's commitment extension)", errNotConvertible, n))
	}
	pok := r.next(32) // the commitments' proof of knowledge: infinity when there are none
	if _, inf, e := flags(pok); e != nil || !inf {
		must(fmt.Errorf("%w: proof of knowledge of no commitments is not the point at infinity", errNotConvertible))
	}
	must(r.err)
	if len(r.b) != 0 {
		must(fmt.Errorf("%w: %d bytes after the proof", errNotConvertible, len(r.b)))
	}
	return p, err
}

// publicOf rebuilds a condition record's public inputs from FORMATS.md's
// table ("What is carried and what is derived"), as decimal strings.
func publicOf(rec *vpec.Record) ([]string, error) {
	z := rec.ZKProof
	digest, ok := strings.CutPrefix(rec.CommitmentHash, "poseidon2:")
	raw, err := hex.DecodeString(digest)
	if !ok || err != nil || len(raw) != 32 {
		return nil, fmt.Errorf("%w: commitment_hash %q", errNotConvertible, rec.CommitmentHash)
	}
	var bound *int64
	switch z.Circuit {
	case "threshold_check", "below_threshold_check":
		bound = z.Threshold
	case "truncation_check":
		bound = z.MaxTokens
	default:
		return nil, fmt.Errorf("%w: circuit %q", errNotConvertible, z.Circuit)
	}
	if bound == nil {
		return nil, fmt.Errorf("%w: no bound", errNotConvertible)
	}
	passed := map[vpec.CheckResult]string{"pass": "1", "fail": "0"}[rec.CheckResult]
	if passed == "" {
		return nil, fmt.Errorf("%w: check_result %q", errNotConvertible, rec.CheckResult)
	}
	cm := new(big.Int).SetBytes(raw)
	if cm.Cmp(bnR) >= 0 {
		return nil, fmt.Errorf("%w: commitment digest not below r", errNotConvertible)
	}
	return []string{cm.String(), fmt.Sprint(*bound), passed}, nil
}

// sjJob is one verify.mjs input line.
type sjJob struct {
	Name   string        `json:"name"`
	VK     *snarkjsVK    `json:"vk"`
	Proof  *snarkjsProof `json:"proof"`
	Public []string      `json:"public"`
}

// convertRecord converts a record and the circuit entry its circuit_id
// names into snarkjs's three files.
func convertRecord(name string, rec *vpec.Record, entries *zk.Set) (sjJob, error) {
	doc, err := entries.Entry(rec.ZKProof.CircuitID)
	if err != nil {
		return sjJob{}, err
	}
	var entry struct {
		VerifyingKey string `json:"verifying_key"`
	}
	if err := json.Unmarshal(doc, &entry); err != nil {
		return sjJob{}, err
	}
	vkBytes, err := base64.StdEncoding.Strict().DecodeString(entry.VerifyingKey)
	if err != nil {
		return sjJob{}, err
	}
	proofBytes, err := base64.StdEncoding.Strict().DecodeString(rec.ZKProof.Proof)
	if err != nil {
		return sjJob{}, err
	}
	vk, err := convertVK(vkBytes)
	if err != nil {
		return sjJob{}, fmt.Errorf("verifying key: %w", err)
	}
	proof, err := convertProof(proofBytes)
	if err != nil {
		return sjJob{}, fmt.Errorf("proof: %w", err)
	}
	pub, err := publicOf(rec)
	if err != nil {
		return sjJob{}, err
	}
	return sjJob{Name: name, VK: vk, Proof: proof, Public: pub}, nil
}

type sjResult struct {
	Name  string `json:"name"`
	Valid bool   `json:"valid"`
	Error string `json:"error"`
}

// runSnarkjs verifies every job in one Node.js process.
func runSnarkjs(t *testing.T, dir string, jobs []sjJob) []sjResult {
	t.Helper()
	cmd := exec.Command("node", "../testdata/snarkjs/verify.mjs")
	cmd.Env = append(os.Environ(), "SVC_SNARKJS="+dir)
	out := runJSONLines(t, cmd, jobs)
	var res []sjResult
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r sjResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("verify.mjs output %q: %v", line, err)
		}
		res = append(res, r)
	}
	if len(res) != len(jobs) {
		t.Fatalf("verify.mjs answered %d of %d jobs", len(res), len(jobs))
	}
	return res
}

// snarkjsDir returns the installed snarkjs package, or skips.
func snarkjsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SVC_SNARKJS")
	if dir == "" {
		t.Skip("SVC_SNARKJS is not set: `make test` sets it (scripts/install-snarkjs.sh installs snarkjs 0.7.6)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("SVC_SNARKJS is set but node is not installed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "main.js")); err != nil {
		t.Fatalf("SVC_SNARKJS=%s is not the snarkjs package directory: %v", dir, err)
	}
	return dir
}

type sjCase struct {
	name    string
	rec     *vpec.Record
	entries *zk.Set
	trust   *signing.Bundle
	// svcValid is what svc-verify must say; snarkjs must say the same.
	svcValid bool
}

func TestSnarkjsAgreesWithSvcVerify(t *testing.T) {
	dir := snarkjsDir(t)

	// Dev keys of the three condition circuits (two of threshold_check,
	// for a proof under another key of the same circuit), entries signed
	// by a fresh service key.
	_, priv, err := signing.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	signer, err := signing.NewSigner(priv)
	if err != nil {
		t.Fatal(err)
	}
	trust := signing.NewBundle()
	trust.AddKey(signer.PublicKey())
	set := zk.NewSet()
	keys := map[string]*zk.Keys{}
	ids := map[string]string{}
	for _, name := range []string{"threshold_check", "below_threshold_check", "truncation_check", "threshold_check#2"} {
		kind := conditions.Kind(strings.TrimSuffix(name, "#2"))
		k, err := zk.DevSetupCondition(kind)
		if err != nil {
			t.Fatal(err)
		}
		e, err := zk.NewEntry(k, "", zk.Ceremony{TranscriptHash: zk.HashBytes([]byte(zk.DevSetupTranscript)), Contributors: []string{"svc test"}}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := zk.Sign(e, signer, "test"); err != nil {
			t.Fatal(err)
		}
		b, err := document.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := set.Add(b); err != nil {
			t.Fatal(err)
		}
		keys[name], ids[name] = k, e.CircuitID
	}
	record := func(kind string, value, bound uint32, salt byte) *vpec.Record {
		var s conditions.Salt
		s[31] = salt
		p, err := zk.ProveCondition(keys[kind], value, bound, s)
		if err != nil {
			t.Fatal(err)
		}
		return &vpec.Record{ProofLevel: "mathematical", CommitmentAlgorithm: "poseidon2", CommitmentHash: p.CommitmentHash, CheckResult: p.CheckResult, ZKProof: p.ZKProof}
	}
	clone := func(r *vpec.Record) *vpec.Record {
		c := *r
		z := *r.ZKProof
		c.ZKProof = &z
		return &c
	}
	i64 := func(v int64) *int64 { return &v }
	// editProof rewrites the proof bytes.
	editProof := func(r *vpec.Record, f func(b []byte)) *vpec.Record {
		c := clone(r)
		b, _ := base64.StdEncoding.DecodeString(c.ZKProof.Proof)
		f(b)
		c.ZKProof.Proof = base64.StdEncoding.EncodeToString(b)
		return c
	}

	var cases []sjCase
	add := func(name string, rec *vpec.Record, valid bool) {
		cases = append(cases, sjCase{name: name, rec: rec, entries: set, trust: trust, svcValid: valid})
	}
	thrPass := record("threshold_check", 731, 500, 1)
	thrFail := record("threshold_check", 499, 500, 2)
	belowPass := record("below_threshold_check", 499, 500, 3)
	belowFail := record("below_threshold_check", 500, 500, 4)
	truncPass := record("truncation_check", 512, 512, 5)
	truncFail := record("truncation_check", 513, 512, 6)
	edge := record("threshold_check", 1<<32-1, 1<<32-1, 7)
	for _, c := range []struct {
		name string
		r    *vpec.Record
	}{{"threshold_check pass", thrPass}, {"threshold_check fail", thrFail}, {"below_threshold_check pass", belowPass},
		{"below_threshold_check fail", belowFail}, {"truncation_check pass", truncPass}, {"truncation_check fail", truncFail},
		{"threshold_check 2^32-1 >= 2^32-1", edge}} {
		add(c.name+": valid", c.r, true)

		flipped := clone(c.r)
		flipped.CheckResult = map[vpec.CheckResult]vpec.CheckResult{"pass": "fail", "fail": "pass"}[c.r.CheckResult]
		add(c.name+": passed bit flipped", flipped, false)

		other := clone(c.r)
		if other.ZKProof.Threshold != nil {
			other.ZKProof.Threshold = i64(*other.ZKProof.Threshold - 1)
		} else {
			other.ZKProof.MaxTokens = i64(*other.ZKProof.MaxTokens - 1)
		}
		add(c.name+": other bound", other, false)

		cm := clone(c.r)
		cm.CommitmentHash = record(string(c.r.ZKProof.Circuit), 100, 200, 9).CommitmentHash
		add(c.name+": other commitment", cm, false)

		// −C: the sign flag of Krs flipped (another valid point).
		add(c.name+": proof point C negated", editProof(c.r, func(b []byte) { b[96] ^= 0x40 }), false)
		// −A and −B together: e(−A, −B) = e(A, B), so the proof still verifies
		// (Groth16 proofs are malleable this way; both verifiers agree).
		add(c.name+": A and B both negated (malleable, still valid)", editProof(c.r, func(b []byte) { b[0] ^= 0x40; b[32] ^= 0x40 }), true)
		add(c.name+": proof point B negated", editProof(c.r, func(b []byte) { b[32] ^= 0x40 }), false)
		// A taken from another valid proof of the same key.
		donor, _ := base64.StdEncoding.DecodeString(record(string(c.r.ZKProof.Circuit), 7, 7, 8).ZKProof.Proof)
		add(c.name+": proof point A from another proof", editProof(c.r, func(b []byte) { copy(b[:32], donor[:32]) }), false)
	}
	// A proof under another circuit's key: the record relabelled as the
	// other circuit (svc-verify: groth16 verify), or only its circuit_id
	// changed (svc-verify: circuit mismatch; snarkjs: the pairing).
	relabel := clone(thrPass)
	relabel.ZKProof.Circuit, relabel.ZKProof.CircuitID = "below_threshold_check", ids["below_threshold_check"]
	relabel.CheckResult = "fail"
	add("threshold_check proof as below_threshold_check (its key, passed 0)", relabel, false)
	asTrunc := clone(truncPass)
	asTrunc.ZKProof.CircuitID = ids["threshold_check"]
	add("truncation_check proof with threshold_check's circuit id", asTrunc, false)
	otherKey := clone(thrPass)
	otherKey.ZKProof.CircuitID = ids["threshold_check#2"]
	add("threshold_check proof under another threshold_check key", otherKey, false)
	second := record("threshold_check#2", 731, 500, 1)
	add("threshold_check under the second key: valid", second, true)

	// The test vectors' threshold_check record (fixed bytes: a dev setup
	// from a fixed seed), with the vectors' signed entries and trust bundle.
	vecTrust, err := signing.LoadBundle(filepath.Join(vectorsDir, "keys/trust-bundle.pem"))
	if err != nil {
		t.Fatal(err)
	}
	vecSet := zk.NewSet()
	for _, f := range []string{"circuit/threshold-check.json", "circuit/mlp-head-16-8-2.json"} {
		if _, err := vecSet.Add(mustRead(t, filepath.Join(vectorsDir, f))); err != nil {
			t.Fatal(err)
		}
	}
	var vec struct {
		Records []vpec.Record `json:"records"`
	}
	if err := json.Unmarshal(mustRead(t, filepath.Join(vectorsDir, "vpec/valid/proofs.json")), &vec); err != nil {
		t.Fatal(err)
	}
	var heads []*vpec.Record
	nVec := 0
	for i := range vec.Records {
		r := &vec.Records[i]
		if r.ZKProof == nil {
			continue
		}
		if r.ZKProof.Circuit == zkverify.CircuitMLPHead {
			heads = append(heads, r)
			continue
		}
		nVec++
		cases = append(cases, sjCase{name: "vector proofs.json " + r.RecordID, rec: r, entries: vecSet, trust: vecTrust, svcValid: true})
		fl := clone(r)
		fl.CheckResult = "fail"
		cases = append(cases, sjCase{name: "vector proofs.json " + r.RecordID + " flipped", rec: fl, entries: vecSet, trust: vecTrust, svcValid: false})
	}
	if nVec == 0 || len(heads) == 0 {
		t.Fatalf("vpec/valid/proofs.json: %d condition and %d head proofs, want both", nVec, len(heads))
	}

	var jobs []sjJob
	for _, c := range cases {
		v := &zk.Verifier{Trust: c.trust, Circuits: c.entries}
		_, svcErr := v.VerifyProof("", c.rec)
		if (svcErr == nil) != c.svcValid {
			t.Errorf("%s: svc-verify's zk check gave %v, the case expects valid=%v", c.name, svcErr, c.svcValid)
		}
		job, err := convertRecord(c.name, c.rec, c.entries)
		if err != nil {
			t.Fatalf("%s: converting to snarkjs: %v", c.name, err)
		}
		// The public inputs from FORMATS.md's table are the ones svc-verify
		// rebuilds (pkg/zk PublicWitness).
		if w, err := zk.PublicWitness(c.rec); err == nil {
			for i := range w {
				if got := w[i].String(); got != job.Public[i] {
					t.Errorf("%s: public input %d: FORMATS.md gives %s, svc-verify %s", c.name, i, job.Public[i], got)
				}
			}
		}
		jobs = append(jobs, job)
	}
	if out := os.Getenv("SVC_SNARKJS_OUT"); out != "" {
		writeSnarkjsFiles(t, out, jobs)
	}
	res := runSnarkjs(t, dir, jobs)
	agree := 0
	for i, c := range cases {
		if res[i].Valid != c.svcValid {
			t.Errorf("%s: snarkjs says valid=%v (%s), svc-verify valid=%v", c.name, res[i].Valid, res[i].Error, c.svcValid)
			continue
		}
		agree++
	}
	t.Logf("snarkjs 0.7.6 and svc-verify agree on %d of %d cases (%d valid)", agree, len(cases), countValid(cases))

	// The head proofs carry gnark's commitment extension: the converter
	// must refuse them, naming it, rather than hand snarkjs a partial key.
	for _, r := range heads {
		if _, err := convertRecord("head", r, vecSet); !errors.Is(err, errNotConvertible) || !strings.Contains(err.Error(), "commitment") {
			t.Errorf("mlp_head proof: converter gave %v, want a refusal naming the commitment extension", err)
		}
	}
}

func countValid(cs []sjCase) int {
	n := 0
	for _, c := range cs {
		if c.svcValid {
			n++
		}
	}
	return n
}

// writeSnarkjsFiles writes each job as verification_key.json, proof.json and
// public.json under dir/<n>/ (SVC_SNARKJS_OUT: for `snarkjs groth16 verify`
// by hand, docs/INTEROP.md).
func writeSnarkjsFiles(t *testing.T, dir string, jobs []sjJob) {
	t.Helper()
	for i, j := range jobs {
		d := filepath.Join(dir, fmt.Sprintf("%02d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "case.txt"), []byte(j.Name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for name, v := range map[string]any{"verification_key.json": j.VK, "proof.json": j.Proof, "public.json": j.Public} {
			b, err := json.MarshalIndent(v, "", " ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, name), append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestSnarkjsConverterRefuses: the converter's FORMATS.md rules without
// snarkjs (no Node.js needed): truncations, uncompressed points and points
// off the curve are refused.
func TestSnarkjsConverterRefuses(t *testing.T) {
	k, err := zk.DevSetupCondition(conditions.Threshold)
	if err != nil {
		t.Fatal(err)
	}
	p, err := zk.ProveCondition(k, 731, 500, conditions.Salt{31: 1})
	if err != nil {
		t.Fatal(err)
	}
	proof, _ := base64.StdEncoding.DecodeString(p.ZKProof.Proof)
	if len(proof) != 164 {
		t.Errorf("condition proof is %d bytes, FORMATS.md says 164 (no commitments)", len(proof))
	}
	if _, err := convertProof(proof); err != nil {
		t.Fatalf("valid proof: %v", err)
	}
	vk, err := zk.MarshalVerifyingKey(k.VK)
	if err != nil {
		t.Fatal(err)
	}
	if len(vk) != 428 {
		t.Errorf("condition verifying key is %d bytes, FORMATS.md says 428", len(vk))
	}
	if _, err := convertVK(vk); err != nil {
		t.Fatalf("valid key: %v", err)
	}
	bad := map[string][]byte{
		"truncated":       proof[:163],
		"trailing byte":   append(append([]byte(nil), proof...), 0),
		"uncompressed A":  func() []byte { b := bytes.Clone(proof); b[0] &= 0x3f; return b }(),
		"A not on curve":  notOnCurve(proof, 0),
		"C x not below p": func() []byte { b := bytes.Clone(proof); copy(b[96:128], bytes.Repeat([]byte{0xbf}, 32)); return b }(),
		"nonzero pok":     func() []byte { b := bytes.Clone(proof); b[163] = 1; return b }(),
	}
	for name, b := range bad {
		if _, err := convertProof(b); !errors.Is(err, errNotConvertible) {
			t.Errorf("%s: converter gave %v, want errNotConvertible", name, err)
		}
	}
	if _, err := convertVK(vk[:len(vk)-1]); !errors.Is(err, errNotConvertible) {
		t.Errorf("truncated key: %v", err)
	}
}

// notOnCurve returns b with the G1 x at off replaced by the smallest larger
// x that has no point on the curve, keeping the flags.
func notOnCurve(b []byte, off int) []byte {
	c := bytes.Clone(b)
	x := new(big.Int).SetBytes(append([]byte{c[off] & 0x3f}, c[off+1:off+32]...))
	for {
		x.Add(x, big.NewInt(1))
		rhs := modp(new(big.Int).Add(new(big.Int).Exp(x, big.NewInt(3), bnP), big.NewInt(3)))
		if new(big.Int).ModSqrt(rhs, bnP) == nil && x.Cmp(bnP) < 0 {
			break
		}
	}
	xb := x.FillBytes(make([]byte, 32))
	xb[0] |= c[off] & 0xc0
	copy(c[off:], xb)
	return c
}

// FuzzSnarkjsConvertProof: the converter never panics, and every 164-byte
// proof svc's decoder accepts (no commitments) the converter accepts too,
// with the same points (gnark's affine coordinates).
func FuzzSnarkjsConvertProof(f *testing.F) {
	k, err := zk.DevSetupCondition(conditions.Truncation)
	if err != nil {
		f.Fatal(err)
	}
	p, err := zk.ProveCondition(k, 3, 5, conditions.Salt{31: 9})
	if err != nil {
		f.Fatal(err)
	}
	seed, _ := base64.StdEncoding.DecodeString(p.ZKProof.Proof)
	f.Add(seed)
	f.Add(seed[:100])
	f.Fuzz(func(t *testing.T, b []byte) {
		got, cerr := convertProof(b)
		_, _ = convertVK(b)
		want, err := zk.ParseProof(b)
		if err != nil || len(b) != 164 {
			return
		}
		if cerr != nil {
			t.Fatalf("svc decodes the proof, the converter refuses it: %v", cerr)
		}
		if got.A[0] != want.Ar.X.String() || got.A[1] != want.Ar.Y.String() || got.C[1] != want.Krs.Y.String() ||
			got.B[0][0] != want.Bs.X.A0.String() || got.B[0][1] != want.Bs.X.A1.String() ||
			got.B[1][0] != want.Bs.Y.A0.String() || got.B[1][1] != want.Bs.Y.A1.String() {
			t.Fatalf("converter and svc decode different points: %v vs %v", got, want)
		}
	})
}
