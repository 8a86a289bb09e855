package testvectors

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// Large is a generated VPEC with n records and the trust bundle that verifies it.
type Large struct {
	// Doc is the VPEC as the service writes it (pkg/service/server's
	// close): the document indented, each record as stored, in its RFC
	// 8785 form on a line of its own.
	Doc []byte
	// Indented is the same VPEC indented throughout, records included
	// (document.MarshalIndent), as LargeVPEC wrote it before.
	Indented   []byte
	Trust      *signing.Bundle
	VPECPath   string
	BundlePath string
}

// LargeVPEC issues a sealed VPEC of n realistic records under fresh keys and
// a fresh TSA created in dir, and writes vpec.json and trust-bundle.pem there.
// Benchmarks use it.
func LargeVPEC(dir string, n int) (*Large, error) {
	_, priv, err := signing.GenerateKey()
	if err != nil {
		return nil, err
	}
	signer, err := signing.NewSigner(priv)
	if err != nil {
		return nil, err
	}
	tsa, err := timestamp.InitAuthority(filepath.Join(dir, "tsa"), timestamp.AuthorityOptions{})
	if err != nil {
		return nil, err
	}
	trust := signing.NewBundle()
	trust.AddKey(signer.PublicKey())
	trust.AddRoot(tsa.Root())
	checks := []string{"pii_detection", "toxicity", "prompt_injection", "policy_check", "bias_detection"}
	results := []vpec.CheckResult{vpec.ResultPass, vpec.ResultPass, vpec.ResultPass, vpec.ResultFail, vpec.ResultSkipped}
	start := time.Now().Add(-time.Hour)
	recs := make([]vpec.Record, n)
	for i := range recs {
		recs[i] = vpec.Record{
			RecordID:            fmt.Sprintf("rec_00000000-0000-4000-8000-%012d", i+1),
			Sequence:            int64(i + 1),
			Check:               checks[i%len(checks)],
			ManifestID:          commitment.String([]byte(checks[i%len(checks)])),
			CheckResult:         results[i%len(results)],
			ProofLevel:          vpec.Execution,
			CommitmentAlgorithm: "sha256",
			CommitmentHash:      commitment.String([]byte(fmt.Sprintf("input %d", i))),
			OutputCommitment:    commitment.String([]byte(fmt.Sprintf("output %d", i))),
			Visibility:          vpec.Opaque,
			RecordedAt:          vpec.FormatTime(start.Add(time.Duration(i) * time.Millisecond)),
			Details:             map[string]any{"model": "pii-detector-v3", "threshold": 0.8},
		}
	}
	v := &vpec.VPEC{VPECID: names.NewOrderedID("vpec_", start), RunID: names.NewOrderedID("run_", start), WorkflowID: "bench", OrgID: "org_bench",
		Environment: vpec.Production, APIKeyID: "pk_live_bench", Records: recs, IssuedAt: vpec.FormatTime(time.Now())}
	if _, err := issue.Chain(vpec.Genesis(v.RunID), v.Records); err != nil {
		return nil, err
	}
	jcs, err := issue.RecordsJCS(v.Records)
	if err != nil {
		return nil, err
	}
	issue.Finish(v, jcs)
	if err := issue.Seal(context.Background(), v, signer, tsa); err != nil {
		return nil, err
	}
	indented, err := document.MarshalIndent(v)
	if err != nil {
		return nil, err
	}
	doc, err := issuedLayout(v)
	if err != nil {
		return nil, err
	}
	l := &Large{Doc: doc, Indented: indented, Trust: trust, VPECPath: filepath.Join(dir, "vpec.json"), BundlePath: filepath.Join(dir, "trust-bundle.pem")}
	if err := os.WriteFile(l.VPECPath, doc, 0o644); err != nil {
		return nil, err
	}
	return l, os.WriteFile(l.BundlePath, trust.Marshal(), 0o644)
}

// issuedLayout writes v as the service's close does: the VPEC without its
// records indented, and the records spliced in, each in its RFC 8785 form
// (the service stores a record's canonical bytes) on a line of its own.
func issuedLayout(v *vpec.VPEC) ([]byte, error) {
	head := *v
	head.Records = []vpec.Record{}
	doc, err := document.MarshalIndent(&head)
	if err != nil {
		return nil, err
	}
	const empty = "\n  \"records\": [],\n"
	i := bytes.Index(doc, []byte(empty))
	if i < 0 || len(v.Records) == 0 {
		return doc, nil
	}
	out := append([]byte(nil), doc[:i]...)
	out = append(out, "\n  \"records\": [\n    "...)
	for k := range v.Records {
		if k > 0 {
			out = append(out, ",\n    "...)
		}
		body, err := canonical.Marshal(&v.Records[k])
		if err != nil {
			return nil, err
		}
		out = append(out, body...)
	}
	out = append(out, "\n  ],\n"...)
	return append(out, doc[i+len(empty):]...), nil
}
