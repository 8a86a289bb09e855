package bounded_test

import (
	"context"
	"fmt"
	"log"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/client/bounded"
	"github.com/svc-gov/svc/pkg/inference"
	"github.com/svc-gov/svc/pkg/trace"
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
