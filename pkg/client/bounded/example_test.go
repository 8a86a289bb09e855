package bounded_test

import (
	"context"
	"fmt"
	"log"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/client/bounded"
	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// A PII classifier as a bound_committed_inference check: load ONNX Runtime
// and the model once, then check each input on a run. The profile is
// looked up once; the trace stays local (keep it for audits).
func Example() {
	ctx := context.Background()
	lib, err := inference.LibraryPath("") // --ort-lib, SVC_ORT_LIB, or the cache of make ort
	if err != nil {
		log.Fatal(err)
	}
	if err := inference.Init(lib); err != nil {
		log.Fatal(err)
	}
	model, err := trace.LoadModel("pii-model") // model.onnx + tokenizer.json or vocab.txt
	if err != nil {
		log.Fatal(err)
	}
	p, err := client.NewPipeline(client.Options{WorkflowID: "claims-intake"}) // key from SVC_API_KEY
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	pii, err := bounded.New(p, model, bounded.Options{GPUClass: "cpu", Threshold: 0.8})
	if err != nil {
		log.Fatal(err)
	}
	defer pii.Close()
	run, err := p.Open(ctx, "")
	if err != nil {
		log.Fatal(err)
	}
	res, err := pii.Check(ctx, run, "pii_detection", "sha256:…manifest id…", []byte("Patient Jane Roe, DOB 1984-02-29"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Verdict, res.ProofLevel, res.Trace.MerkleRoot)
	vpec, err := run.Close(ctx)
	if err != nil {
		log.Fatal(err)
	}
	_ = vpec.Raw // the signed VPEC
}

// Acting on the verdict before the trace is complete: Start returns the
// verdict as soon as ONNX Runtime has run; the trace's statistics and
// Merkle root are computed on another goroutine, and Wait records the six
// parts. Every Start needs its Wait before the run is closed.
func ExampleClassifier_Start() {
	ctx := context.Background()
	var pii *bounded.Classifier // bounded.New, as in the package example
	var run *client.Run         // p.Open
	pending, err := pii.Start(ctx, run, "pii_detection", "sha256:…manifest id…", []byte("Patient Jane Roe"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("verdict", pending.Verdict, "score", pending.Score) // act on it now
	res, err := pending.Wait(ctx)                                   // then record (later, or on another goroutine)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Trace.MerkleRoot)
}
