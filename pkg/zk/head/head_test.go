package head

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/test"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// loadHead generates an ONNX head with modelgen, loads and quantises it.
func loadHead(t testing.TB, dims []int, seed int64) (*Model, *Quantized, [][]float32) {
	t.Helper()
	b, err := modelgen.MLPHead(modelgen.MLPHeadConfig{Dims: dims, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	m, err := LoadONNX(b)
	if err != nil {
		t.Fatal(err)
	}
	corpus := RandomCorpus(dims[0], 200, uint64(seed))
	q, rep, err := Quantize(m, corpus)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v: agreement %.3f, max logit error %.4f (max |logit| %.3f)", dims, rep.ArgmaxAgreement, rep.MaxLogitError, rep.MaxLogit)
	return m, q, corpus
}

type fixture struct {
	q      *Quantized
	c      *Compiled
	pk     *groth16bn254.ProvingKey
	vk     []byte
	corpus [][]float32
}

var (
	smallOnce sync.Once
	small     fixture
	smallErr  error
)

// smallFixture compiles and sets up a 64-16-8-3 head once per test run.
func smallFixture(t *testing.T) fixture {
	t.Helper()
	smallOnce.Do(func() {
		_, q, corpus := loadHead(t, []int{64, 16, 8, 3}, 7)
		c, err := Compile(q)
		if err != nil {
			smallErr = err
			return
		}
		pk, vk, err := Setup(c)
		if err != nil {
			smallErr = err
			return
		}
		vkb, err := EncodeVerifyingKey(vk)
		if err != nil {
			smallErr = err
			return
		}
		small = fixture{q: q, c: c, pk: pk, vk: vkb, corpus: corpus}
	})
	if smallErr != nil {
		t.Fatal(smallErr)
	}
	return small
}

func TestQuantizedAgreesWithFloat(t *testing.T) {
	_, _, _ = loadHead(t, []int{64, 16, 8, 3}, 7)
	m, q, corpus := loadHead(t, []int{768, 64, 2}, 3)
	rep, err := Compare(m, q, corpus)
	if err != nil {
		t.Fatal(err)
	}
	if rep.ArgmaxAgreement < 0.95 {
		t.Errorf("argmax agreement %.3f below 0.95", rep.ArgmaxAgreement)
	}
	if rep.MaxLogitError > 0.05*rep.MaxLogit {
		t.Errorf("max logit error %.4f above 5%% of max |logit| %.4f", rep.MaxLogitError, rep.MaxLogit)
	}
}

// TestCircuitSolvesQuantizedRun checks the circuit accepts exactly the
// quantised run: the honest witness solves, a wrong class, logit or
// commitment does not (gnark's test engine, no setup).
func TestCircuitSolvesQuantizedRun(t *testing.T) {
	_, q, corpus := loadHead(t, []int{64, 16, 8, 3}, 7)
	field := ecc.BN254.ScalarField()
	for k := 0; k < 4; k++ {
		x := q.QuantizeInput(corpus[k])
		if k == 3 { // extremes
			for i := range x {
				x[i] = []int8{-128, 127, 0}[i%3]
			}
		}
		logits, class, _ := q.Run(x)
		mk := func(class int, logits []int64, com commitment.Hash) *Circuit {
			c := NewCircuit(q)
			c.q = nil
			c.Commitment = com.Digest
			c.Class = class
			for i := range logits {
				c.Logits[i] = logits[i]
			}
			for i, v := range commitment.Int8Payload(x) {
				c.Input[i] = int(v)
			}
			return c
		}
		com := commitment.SumPoseidon2Int8(x)
		if err := test.IsSolved(NewCircuit(q), mk(class, logits, com), field); err != nil {
			t.Fatalf("input %d: honest witness rejected: %v", k, err)
		}
		if err := test.IsSolved(NewCircuit(q), mk((class+1)%3, logits, com), field); err == nil {
			t.Errorf("input %d: wrong class accepted", k)
		}
		bad := append([]int64(nil), logits...)
		bad[0]++
		if err := test.IsSolved(NewCircuit(q), mk(class, bad, com), field); err == nil {
			t.Errorf("input %d: altered logit accepted", k)
		}
		other := append([]int8(nil), x...)
		other[0] ^= 1
		if err := test.IsSolved(NewCircuit(q), mk(class, logits, commitment.SumPoseidon2Int8(other)), field); err == nil {
			t.Errorf("input %d: another input's commitment accepted", k)
		}
	}
}

// TestArgmaxTieBreak checks a tie goes to the smallest index, in Run and
// in the circuit.
func TestArgmaxTieBreak(t *testing.T) {
	if got := Argmax([]int64{5, 7, 7, 1}); got != 1 {
		t.Fatalf("Argmax tie = %d, want 1", got)
	}
	// A head whose last layer is all zeros: every logit ties at 0.
	_, q, _ := loadHead(t, []int{8, 4, 3}, 2)
	zq := *q
	zq.Layers = append([]QLayer(nil), q.Layers...)
	last := zq.Layers[1]
	last.W = make([]int8, len(last.W))
	last.B = make([]int32, len(last.B))
	last.MaxAcc = 0
	zq.Layers[1] = last
	if err := zq.Check(); err != nil {
		t.Fatal(err)
	}
	x := make([]int8, 8)
	logits, class, _ := zq.Run(x)
	if class != 0 {
		t.Fatalf("class %d on ties, want 0", class)
	}
	field := ecc.BN254.ScalarField()
	for _, cl := range []int{0, 1, 2} {
		c := NewCircuit(&zq)
		c.q = nil
		c.Commitment = commitment.SumPoseidon2Int8(x).Digest
		c.Class = cl
		for i := range logits {
			c.Logits[i] = logits[i]
		}
		for i, v := range commitment.Int8Payload(x) {
			c.Input[i] = int(v)
		}
		err := test.IsSolved(NewCircuit(&zq), c, field)
		if (cl == 0) != (err == nil) {
			t.Errorf("tie with class %d: err = %v", cl, err)
		}
	}
}

func TestProveVerify(t *testing.T) {
	f := smallFixture(t)
	x := f.q.QuantizeInput(f.corpus[0])
	proof, pub, err := Prove(f.c, f.pk, x)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(f.vk, proof, pub); err != nil {
		t.Fatalf("honest proof: %v", err)
	}
	if len(proof) != 196 {
		t.Errorf("proof is %d bytes, want 196", len(proof))
	}
	// docs/FORMATS.md "Groth16 proofs": 300 + 32*(L+4) + 132 bytes.
	if want := 300 + 32*(len(pub.Logits)+4) + 132; len(f.vk) != want {
		t.Errorf("verifying key is %d bytes, the documented layout gives %d", len(f.vk), want)
	}
	if id := zkverify.CircuitID(f.vk); len(id) != 71 {
		t.Errorf("CircuitID %q", id)
	}
	other := append([]int8(nil), x...)
	other[5]++
	flipped := append([]int64(nil), pub.Logits...)
	flipped[1] = -flipped[1] - 1
	mut := func(f func(p *Public)) Public {
		p := pub
		p.Logits = append([]int64(nil), pub.Logits...)
		f(&p)
		return p
	}
	cases := []struct {
		name  string
		proof []byte
		pub   Public
		want  error
	}{
		{"wrong class", proof, mut(func(p *Public) { p.Class = (p.Class + 1) % 3 }), ErrInvalidProof},
		{"other input", proof, mut(func(p *Public) { p.Commitment = commitment.SumPoseidon2Int8(other) }), ErrInvalidProof},
		{"flipped logit", proof, mut(func(p *Public) { p.Logits = flipped }), ErrInvalidProof},
		{"sha256 commitment", proof, mut(func(p *Public) { p.Commitment = commitment.Sum([]byte("x")) }), ErrPublicInputs},
		{"class out of range", proof, mut(func(p *Public) { p.Class = 3 }), ErrPublicInputs},
		{"too few logits", proof, mut(func(p *Public) { p.Logits = p.Logits[:2]; p.Class = 0 }), ErrPublicInputs},
		{"truncated proof", proof[:len(proof)-1], pub, ErrProofEncoding},
		{"extra byte", append(append([]byte(nil), proof...), 0), pub, ErrProofEncoding},
		{"empty proof", nil, pub, ErrProofEncoding},
	}
	for i := 0; i < len(proof); i += 17 {
		g := append([]byte(nil), proof...)
		g[i] ^= 0x40
		cases = append(cases, struct {
			name  string
			proof []byte
			pub   Public
			want  error
		}{"garbled byte", g, pub, nil})
	}
	for _, c := range cases {
		err := Verify(f.vk, c.proof, c.pub)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
		if c.want == nil && !errors.Is(err, ErrProofEncoding) && !errors.Is(err, ErrInvalidProof) {
			t.Errorf("%s: err = %v is neither ErrProofEncoding nor ErrInvalidProof", c.name, err)
		}
	}
}

// TestOtherModelKey checks a proof does not verify under the key of
// another model of the same shape.
func TestOtherModelKey(t *testing.T) {
	f := smallFixture(t)
	_, q2, _ := loadHead(t, []int{64, 16, 8, 3}, 8)
	c2, err := Compile(q2)
	if err != nil {
		t.Fatal(err)
	}
	_, vk2, err := Setup(c2)
	if err != nil {
		t.Fatal(err)
	}
	vk2b, _ := EncodeVerifyingKey(vk2)
	proof, pub, err := Prove(f.c, f.pk, f.q.QuantizeInput(f.corpus[1]))
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(vk2b, proof, pub); !errors.Is(err, ErrInvalidProof) {
		t.Fatalf("proof under another model's key: err = %v, want ErrInvalidProof", err)
	}
	if zkverify.CircuitID(vk2b) == zkverify.CircuitID(f.vk) {
		t.Fatal("two models share a circuit id")
	}
	// Garbled and truncated keys.
	for _, bad := range [][]byte{nil, f.vk[:len(f.vk)-1], append(append([]byte(nil), f.vk...), 0)} {
		if err := Verify(bad, proof, pub); !errors.Is(err, ErrKeyEncoding) {
			t.Errorf("bad key of %d bytes: err = %v, want ErrKeyEncoding", len(bad), err)
		}
	}
	// A changed byte in a point the verification equation uses (α1 at 0,
	// β2 at 64, γ2 at 128, δ2 at 224, K from 292) fails decoding or the
	// pairing check. (β1 and δ1 are not used by verification; a change
	// there still changes the circuit id.)
	for _, at := range []int{5, 70, 140, 230, 300} {
		g := append([]byte(nil), f.vk...)
		g[at] ^= 1
		err := Verify(g, proof, pub)
		if !errors.Is(err, ErrKeyEncoding) && !errors.Is(err, ErrInvalidProof) {
			t.Errorf("key garbled at byte %d: err = %v", at, err)
		}
		if zkverify.CircuitID(g) == zkverify.CircuitID(f.vk) {
			t.Error("garbled key has the same circuit id")
		}
	}
}

func TestEncodingsRoundTrip(t *testing.T) {
	f := smallFixture(t)
	vk, err := DecodeVerifyingKey(f.vk)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := EncodeVerifyingKey(vk)
	if !bytes.Equal(again, f.vk) {
		t.Fatal("verifying key does not re-encode to the same bytes")
	}
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([]int8, 64)
	for i := range x {
		x[i] = int8(rng.IntN(256) - 128)
	}
	proof, pub, err := Prove(f.c, f.pk, x)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(f.vk, proof, pub); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Prove(f.c, f.pk, x[:10]); !errors.Is(err, ErrInput) {
		t.Fatalf("short input: %v", err)
	}
}

func FuzzDecodeProof(f *testing.F) {
	fx := fixtureForFuzz(f)
	f.Add(fx.proof)
	f.Add(fx.proof[:100])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodeProof(b)
		if err != nil {
			if !errors.Is(err, ErrProofEncoding) {
				t.Fatalf("error %v does not wrap ErrProofEncoding", err)
			}
			return
		}
		again, _ := EncodeProof(p)
		if !bytes.Equal(again, b) {
			t.Fatal("accepted non-canonical proof bytes")
		}
		_ = Verify(fx.vk, b, fx.pub) // must not panic
	})
}

func FuzzDecodeVerifyingKey(f *testing.F) {
	fx := fixtureForFuzz(f)
	f.Add(fx.vk)
	f.Add(fx.vk[:300])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		vk, err := DecodeVerifyingKey(b)
		if err != nil {
			if !errors.Is(err, ErrKeyEncoding) {
				t.Fatalf("error %v does not wrap ErrKeyEncoding", err)
			}
			return
		}
		again, _ := EncodeVerifyingKey(vk)
		if !bytes.Equal(again, b) {
			t.Fatal("accepted non-canonical key bytes")
		}
		_ = VerifyWithKey(vk, fx.proof, fx.pub)
	})
}

type fuzzFixture struct {
	vk, proof []byte
	pub       Public
}

var (
	fuzzOnce sync.Once
	fuzzFx   fuzzFixture
)

// fixtureForFuzz proves once on a tiny 8-4-2 head.
func fixtureForFuzz(f *testing.F) fuzzFixture {
	fuzzOnce.Do(func() {
		_, q, corpus := loadHead(f, []int{8, 4, 2}, 5)
		c, err := Compile(q)
		if err != nil {
			f.Fatal(err)
		}
		pk, vk, err := Setup(c)
		if err != nil {
			f.Fatal(err)
		}
		vkb, _ := EncodeVerifyingKey(vk)
		proof, pub, err := Prove(c, pk, q.QuantizeInput(corpus[0]))
		if err != nil {
			f.Fatal(err)
		}
		fuzzFx = fuzzFixture{vk: vkb, proof: proof, pub: pub}
	})
	return fuzzFx
}

// TestCompileDeterministic checks that a head compiles to the same
// constraint system bytes every time, also after a JSON round trip of the
// quantised head: a prover must rebuild exactly the system a ceremony set
// up.
func TestCompileDeterministic(t *testing.T) {
	_, q, _ := loadHead(t, []int{32, 8, 2}, 11)
	j, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	q2, err := ParseQuantized(j)
	if err != nil {
		t.Fatal(err)
	}
	var bufs [2]bytes.Buffer
	for i, qq := range []*Quantized{q, q2} {
		c, err := Compile(qq)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.CS.WriteTo(&bufs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(bufs[0].Bytes(), bufs[1].Bytes()) {
		t.Fatal("two compilations of the same head differ")
	}
	bad := bytes.Replace(j, []byte(`"max_acc":`), []byte(`"max_acc":1`), 1)
	if _, err := ParseQuantized(bad); !errors.Is(err, ErrQuantize) {
		t.Fatalf("altered max_acc: err = %v, want ErrQuantize", err)
	}
	if _, err := ParseQuantized(append(j, '{', '}')); !errors.Is(err, ErrQuantize) {
		t.Fatalf("trailing data: err = %v", err)
	}
}

func FuzzParseQuantized(f *testing.F) {
	b, _ := modelgen.MLPHead(modelgen.MLPHeadConfig{Dims: []int{6, 3, 2}, Seed: 1})
	m, _ := LoadONNX(b)
	q, _, _ := Quantize(m, RandomCorpus(6, 4, 1))
	j, _ := json.Marshal(q)
	f.Add(j)
	f.Add([]byte(`{"version":"svc-mlp-int8/v1"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := ParseQuantized(b)
		if err != nil {
			if !errors.Is(err, ErrQuantize) {
				t.Fatalf("error %v does not wrap ErrQuantize", err)
			}
			return
		}
		x := make([]int8, q.Layers[0].In)
		for i := range x {
			x[i] = int8(i*37 - 128)
		}
		if _, _, err := q.Run(x); err != nil {
			t.Fatal(err)
		}
	})
}
