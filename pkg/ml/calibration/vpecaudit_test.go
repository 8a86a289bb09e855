//go:build cgo

package calibration_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/testvectors"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/ml/calibration"
	"github.com/svc-gov/svc/pkg/ml/trace"
	"github.com/svc-gov/svc/pkg/service/server"
)

// TestAuditRecord runs the replay audit of svc verify --trace as a library
// call on real executions: a signed VPEC whose one Bounded Inference record
// claims a trace, audited with the real model, a signed profile and each
// way the audit can end.
func TestAuditRecord(t *testing.T) {
	m, prof, _ := calibrated(t, 30)
	mat, err := server.LoadMaterial(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	if err := profile.Sign(prof, mat.Signer, "test"); err != nil {
		t.Fatal(err)
	}
	signed, err := document.MarshalIndent(prof)
	if err != nil {
		t.Fatal(err)
	}
	other, err := server.LoadMaterial(filepath.Join(t.TempDir(), "other"))
	if err != nil {
		t.Fatal(err)
	}
	input := []byte("Patient Jane Roe asks for a refill of her prescription.")
	honest, err := trace.Run(m, input, trace.Production)
	if err != nil {
		t.Fatal(err)
	}
	doctored := *honest
	doctored.Operators = append([]trace.Operator(nil), honest.Operators...)
	doctored.Operators[1].Mean += 1e-3 * doctored.Operators[1].RMS
	doctored.MerkleRoot, _ = trace.Root(doctored.Operators)

	// seal issues a one-record VPEC whose record claims tr on gpu, with
	// edit applied to the record first.
	seal := func(gpu string, tr *trace.Trace, edit func(*vpec.Record)) []byte {
		rec := vpec.Record{RecordID: names.NewID("rec_"), Sequence: 1, Check: "pii", ManifestID: "m", CheckResult: vpec.ResultPass,
			ProofLevel: vpec.OperatorBound, CommitmentAlgorithm: "sha256", CommitmentHash: tr.InputCommitment, Visibility: vpec.Opaque,
			RecordedAt: vpec.FormatTime(time.Now()), StageType: stage.BoundCommittedInference, StagePart: stage.PartInference,
			BoundedInference: &vpec.BoundedInference{ProfileID: prof.ProfileID, GPUClass: gpu, ONNXModelHash: tr.ONNXModelHash,
				TraceMode: tr.Mode, OperatorCount: tr.OperatorCount, MerkleRoot: tr.MerkleRoot}}
		if edit != nil {
			edit(&rec)
		}
		doc, err := testvectors.SealRecords("run_00000000-0000-4000-8000-000000000001", []vpec.Record{rec}, mat.Signer, mat.TSA)
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	withProfile := func() *profile.Set {
		s := profile.NewSet()
		if _, err := s.Add(signed); err != nil {
			t.Fatal(err)
		}
		return s
	}
	errLoad := errors.New("no model here")
	tests := []struct {
		name    string
		doc     []byte
		tr      *trace.Trace
		input   []byte
		trust   *signing.Bundle
		set     *profile.Set
		loadErr error // LoadModel fails with it
		status  verify.Status
		code    string
		want    string // in the message
		detail  string // in a detail
		missing bool
		loaded  bool // LoadModel must have been called
		wantErr error
	}{
		{name: "honest", doc: seal("cpu", honest, nil), tr: honest, input: input, status: verify.Pass, loaded: true,
			want: "profile consistent (test/pii-class/v1.0.0 · cpu), sequence 1: " + fmt.Sprint(honest.OperatorCount) + " operators replayed"},
		{name: "unreadable vpec", doc: []byte("{"), tr: honest, input: input, status: verify.Fail, code: calibration.CodeAuditNotPossible, want: "cannot be read"},
		{name: "trace of no record", doc: seal("cpu", honest, nil), tr: &doctored, input: input, status: verify.Fail, code: calibration.CodeTraceNotInVPEC, want: doctored.MerkleRoot},
		{name: "record disagrees with trace", doc: seal("cpu", honest, func(r *vpec.Record) { r.BoundedInference.OperatorCount++ }), tr: honest, input: input,
			status: verify.Fail, code: "PROFILE MISMATCH (gpu_class cpu)", want: "does not match its record", detail: "operator_count"},
		{name: "other input committed", doc: seal("cpu", honest, func(r *vpec.Record) { r.CommitmentHash = "sha256:" + strings.Repeat("0", 64) }), tr: honest, input: input,
			status: verify.Fail, code: "PROFILE MISMATCH (gpu_class cpu)", detail: "the record commits to input"},
		{name: "profile not available", doc: seal("cpu", honest, nil), tr: honest, input: input, set: profile.NewSet(), loadErr: errLoad,
			status: verify.Fail, code: calibration.CodeProfileNotAvailable, missing: true, want: "pass it with --profile"},
		{name: "profile signed by another key", doc: seal("cpu", honest, nil), tr: honest, input: input, trust: other.Trust, loadErr: errLoad,
			status: verify.Fail, code: calibration.CodeProfileInvalid},
		{name: "uncalibrated gpu class", doc: seal("a100", honest, nil), tr: honest, input: input, status: verify.Fail, loaded: true,
			code: "PROFILE MISMATCH (gpu_class a100)", want: "profile inconsistent", detail: "gpu_class a100 is not among"},
		{name: "input not the committed one", doc: seal("cpu", honest, nil), tr: honest, input: []byte("another text"), status: verify.Fail, loaded: true,
			code: "PROFILE MISMATCH (gpu_class cpu)", want: "the input given hashes to"},
		{name: "model cannot load", doc: seal("cpu", honest, nil), tr: honest, input: input, loadErr: errLoad, loaded: true, wantErr: errLoad},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			trust, set := tc.trust, tc.set
			if trust == nil {
				trust = mat.Trust
			}
			if set == nil {
				set = withProfile()
			}
			loaded := false
			c, err := calibration.AuditRecord(calibration.RecordAudit{VPEC: tc.doc, Trace: tc.tr, Input: tc.input, Trust: trust, Profiles: set,
				LoadModel: func() (*trace.Model, error) {
					loaded = true
					if tc.loadErr != nil {
						return nil, tc.loadErr
					}
					return m, nil
				}})
			if loaded != tc.loaded {
				t.Errorf("LoadModel called %v, want %v", loaded, tc.loaded)
			}
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Name != verify.CheckAudit || c.Status != tc.status || c.Code != tc.code || c.MissingTrust != tc.missing {
				t.Fatalf("check %+v, want status %s code %q missing_trust %v", c, tc.status, tc.code, tc.missing)
			}
			if !strings.Contains(c.Message, tc.want) {
				t.Errorf("message %q lacks %q", c.Message, tc.want)
			}
			if tc.detail != "" && !strings.Contains(strings.Join(c.Details, "\n"), tc.detail) {
				t.Errorf("details %q lack %q", c.Details, tc.detail)
			}
		})
	}
}
