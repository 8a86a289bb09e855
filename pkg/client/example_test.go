package client_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// The few lines an application needs: the API key comes from $SVC_API_KEY
// and the service's address from $SVC_BASE_URL.
func Example() {
	ctx := context.Background()
	p, err := client.NewPipeline(client.Options{WorkflowID: "claims-intake"})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()

	run, err := p.Open(ctx, "")
	if err != nil {
		log.Fatal(err)
	}
	claim := []byte(`{"patient": "…", "amount": 1200}`) // hashed here, never sent
	res, err := run.Record(ctx, "pii_scan", "sha256:…manifest id…", vpec.ResultPass, claim)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("commitment:", res.CommitmentHash, "queued:", res.Queued)

	v, err := run.Close(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("VPEC", v.VPEC.VPECID, "clean:", v.VPEC.IsClean, "offline:", v.Offline)
}

// End to end against a real service on loopback: open, record, close, and
// verify the VPEC offline with the service's trust bundle.
func Example_endToEnd() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "svc-example")
	defer os.RemoveAll(dir)

	// A service, as `svc serve` runs it, and a key.
	st, _ := sqlite.Open(ctx, filepath.Join(dir, "svc.db"))
	defer st.Close()
	mat, _ := server.LoadMaterial(filepath.Join(dir, "data"))
	srv, _ := server.New(server.Config{Storage: server.StorageOf(st), Signer: mat.Signer, Timestamper: mat.TSA, Trust: mat.Trust})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	server.CreateOrg(ctx, st, "acme", server.TierStandard, time.Now())
	key, _, _ := server.CreateAPIKey(ctx, st, "acme", vpec.Sandbox, time.Now())

	// The application.
	p, err := client.NewPipeline(client.Options{APIKey: key, BaseURL: hs.URL, WorkflowID: "claims-intake",
		QueuePath: filepath.Join(dir, "queue.jsonl")})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	run, _ := p.Open(ctx, "")
	manifestID := "sha256:" + fmt.Sprintf("%064x", 1)
	for _, input := range []string{"claim 4411", "claim 4412"} {
		res, err := run.Record(ctx, "pii_scan", manifestID, vpec.ResultPass, []byte(input))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.Sequence, res.CommitmentHash[:15], res.ProofLevel, "queued:", res.Queued)
	}
	v, err := run.Close(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("records:", v.VPEC.TotalChecksRun, "clean:", v.VPEC.IsClean, "test mode:", p.TestMode(), v.VPEC.Environment)
	rep, err := verify.Verify(v.Raw, verify.Options{Trust: mat.Trust})
	if err != nil { // not VALID: err says why (errors.Is verify.ErrInvalid, ...)
		log.Fatal(err)
	}
	fmt.Println(rep.Verdict)
	// Output:
	// 1 sha256:ae464e90 execution queued: false
	// 2 sha256:1542e787 execution queued: false
	// records: 2 clean: true test mode: true sandbox
	// VALID
}

// When the service cannot be reached the host carries on: records are
// queued durably and Close returns a locally built, unsigned VPEC with a
// system_unavailable gap. The queue is delivered once the service answers.
func Example_offline() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "svc-example")
	defer os.RemoveAll(dir)
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + l.Addr().String()
	l.Close() // nothing listens there

	p, err := client.NewPipeline(client.Options{APIKey: "pk_sb_example", BaseURL: closed, QueuePath: filepath.Join(dir, "queue.jsonl")})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	run, _ := p.Open(ctx, "")
	res, err := run.Record(ctx, "pii_scan", "sha256:"+fmt.Sprintf("%064x", 1), vpec.ResultPass, []byte("claim 4411"))
	fmt.Println("queued:", res.Queued, "error:", err)
	v, err := run.Close(ctx)
	fmt.Println("offline:", v.Offline, "clean:", v.VPEC.IsClean, "gap:", v.VPEC.Gaps[0].GapType, v.VPEC.Gaps[0].Severity, "error:", err)
	n, _ := p.PendingQueueCount()
	fmt.Println("waiting in the queue:", n)
	// Output:
	// queued: true error: <nil>
	// offline: true clean: false gap: system_unavailable High error: <nil>
	// waiting in the queue: 3
}
