package api

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/disclosure"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// Limits of request fields (docs/API.md, "Limits"). Lengths are in bytes of
// UTF-8. A request that breaks one gets 400 bad_request naming the field.
const (
	MaxWorkflowIDBytes      = 128                     // workflow_id
	MaxSurfaceIDBytes       = 128                     // surface_id
	MaxPolicyPackIDBytes    = 128                     // policy_pack_id
	MaxPolicies             = 64                      // entries of policy
	MaxPolicyBytes          = 128                     // one policy entry
	MaxManifestNameBytes    = 128                     // manifest name
	MaxManifestVersionBytes = 64                      // manifest version
	MaxStages               = 256                     // manifest stages
	MaxStageNameBytes       = 128                     // stages[].stage_name
	MaxReferences           = 32                      // stages[].regulatory_references
	MaxReferenceBytes       = 256                     // one regulatory reference
	MaxCheckBytes           = vpec.MaxCheckBytes      // a check name (sessions; records: vpec.Record.Validate)
	MaxManifestIDBytes      = vpec.MaxManifestIDBytes // a manifest id (sessions; records: vpec.Record.Validate)
	MaxReviewerNameBytes    = 128                     // reviewer name
	MaxPublicKeyBytes       = 4096                    // reviewer public_key (PEM or base64 DER)
	MaxReviewerKeyIDBytes   = 128                     // reviewer_key_id
	MaxDescriptionBytes     = 4096                    // calibration model_description
	MaxHubModelIDBytes      = 256                     // calibration hub_model_id
	MaxEmailBytes           = 254                     // calibration notify_email
	MaxLineageTokenBytes    = 4096                    // lineage_token
	MaxDelegationBytes      = 16384
	MaxDiscloseFields       = disclosure.MaxDisclosures // stages[].disclose
	MaxDiscloseFieldBytes   = disclosure.MaxFieldBytes  // one disclose entry
	MaxZKProofBytes         = vpec.MaxZKProofBytes      // zk_proof.proof, decoded (records: vpec.Record.Validate)
	MaxZKLogits             = vpec.MaxZKLogits          // zk_proof.logits of an mlp_head proof
)

// ErrLimit is wrapped by every FieldError: a request field breaks a
// documented limit or rule.
var ErrLimit = errors.New("request field out of limits")

// FieldError names the request field at fault and the problem. It wraps
// ErrLimit and, when a name check failed, names.ErrInvalidName.
type FieldError struct {
	Field   string
	Problem string
	Err     error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

// Unwrap returns ErrLimit and the underlying error, if any.
func (e *FieldError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrLimit, e.Err}
	}
	return []error{ErrLimit}
}

func fieldErr(field, format string, a ...any) *FieldError {
	return &FieldError{Field: field, Problem: fmt.Sprintf(format, a...)}
}

// CheckName checks a name a person reads: between min and max bytes, and
// free of control and bidi characters (names.ValidName).
func CheckName(field, s string, minBytes, maxBytes int) error {
	if len(s) < minBytes || len(s) > maxBytes {
		if minBytes > 0 {
			return fieldErr(field, "must be %d to %d bytes, is %d", minBytes, maxBytes, len(s))
		}
		return fieldErr(field, "must be at most %d bytes, is %d", maxBytes, len(s))
	}
	if err := names.ValidName(s); err != nil {
		return &FieldError{Field: field, Problem: err.Error(), Err: err}
	}
	return nil
}

// CheckText checks free text a person reads (a description): at most max
// bytes, valid UTF-8, no control or bidi characters except tab and newline.
func CheckText(field, s string, maxBytes int) error {
	if len(s) > maxBytes {
		return fieldErr(field, "must be at most %d bytes, is %d", maxBytes, len(s))
	}
	if !utf8.ValidString(s) {
		return fieldErr(field, "is not valid UTF-8")
	}
	for i, r := range s {
		if r != '\n' && r != '\t' && names.IsControl(r) {
			return &FieldError{Field: field, Problem: fmt.Sprintf("control character U+%04X at byte %d", r, i), Err: names.ErrInvalidName}
		}
	}
	return nil
}

// CheckNames checks a list of names: at most maxItems, each a name of 1 to
// maxBytes bytes, no duplicates. Errors name the entry (field[i]).
func CheckNames(field string, list []string, maxItems, maxBytes int) error {
	if len(list) > maxItems {
		return fieldErr(field, "has %d entries, at most %d allowed", len(list), maxItems)
	}
	seen := make(map[string]bool, len(list))
	for i, s := range list {
		f := fmt.Sprintf("%s[%d]", field, i)
		if err := CheckName(f, s, 1, maxBytes); err != nil {
			return err
		}
		if seen[s] {
			return fieldErr(f, "%q is listed twice", s)
		}
		seen[s] = true
	}
	return nil
}

// CheckLimits checks an open-run request against the documented limits
// (run_id and process_context_hash formats are checked by the server).
func (r *OpenRunRequest) CheckLimits() error {
	if r.WorkflowID != "" {
		if err := CheckName("workflow_id", r.WorkflowID, 1, MaxWorkflowIDBytes); err != nil {
			return err
		}
	}
	if err := CheckName("surface_id", r.SurfaceID, 0, MaxSurfaceIDBytes); err != nil {
		return err
	}
	if err := CheckName("policy_pack_id", r.PolicyPackID, 0, MaxPolicyPackIDBytes); err != nil {
		return err
	}
	return CheckNames("policy", r.Policy, MaxPolicies, MaxPolicyBytes)
}

// CheckLimits checks a manifest: name and version, at most MaxStages
// stages with distinct names, each proof_ceiling a known proof level, and
// bounded regulatory references.
func (m *Manifest) CheckLimits() error {
	if err := CheckName("name", m.Name, 1, MaxManifestNameBytes); err != nil {
		return err
	}
	if err := CheckName("version", m.Version, 1, MaxManifestVersionBytes); err != nil {
		return err
	}
	if len(m.Stages) > MaxStages {
		return fieldErr("stages", "has %d stages, at most %d allowed", len(m.Stages), MaxStages)
	}
	seen := make(map[string]bool, len(m.Stages))
	for i, st := range m.Stages {
		f := fmt.Sprintf("stages[%d]", i)
		if err := CheckName(f+".stage_name", st.StageName, 1, MaxStageNameBytes); err != nil {
			return err
		}
		if seen[st.StageName] {
			return fieldErr(f+".stage_name", "%q is listed twice", st.StageName)
		}
		seen[st.StageName] = true
		if !vpec.ProofLevel(st.ProofCeiling).Valid() {
			return fieldErr(f+".proof_ceiling", "%q is not a proof level (one of %v)", st.ProofCeiling, vpec.ProofLevels())
		}
		if err := CheckNames(f+".regulatory_references", st.RegulatoryReferences, MaxReferences, MaxReferenceBytes); err != nil {
			return err
		}
		if err := CheckNames(f+".disclose", st.Disclose, MaxDiscloseFields, MaxDiscloseFieldBytes); err != nil {
			return err
		}
	}
	return nil
}

// AsDocument returns m as the manifest document a selective record
// carries (nil lists as empty ones, as registered); its ID is the
// manifest id the service gives m.
func (m Manifest) AsDocument() vpec.Manifest { return vpec.Manifest(m.WithEmptyLists()) }

// CheckGPUClasses checks a list of GPU classes: known classes, each at
// most once.
func CheckGPUClasses(field string, list []string) error {
	seen := map[string]bool{}
	for i, g := range list {
		f := fmt.Sprintf("%s[%d]", field, i)
		if !profile.ValidGPUClass(g) {
			if len(g) > 16 {
				g = g[:16] + "…"
			}
			return fieldErr(f, "%q is not a GPU class (one of %v)", g, profile.GPUClasses())
		}
		if seen[g] {
			return fieldErr(f, "%q is listed twice", g)
		}
		seen[g] = true
	}
	return nil
}

// CheckLimits checks a reviewer registration: a bounded public key and,
// if given, a name a person can read.
func (r *ReviewerKeyRequest) CheckLimits() error {
	if len(r.PublicKey) > MaxPublicKeyBytes {
		return &FieldError{Field: "public_key", Problem: fmt.Sprintf("must be at most %d bytes, is %d", MaxPublicKeyBytes, len(r.PublicKey)), Err: ErrLimit}
	}
	return CheckName("name", r.Name, 0, MaxReviewerNameBytes)
}

// CheckLimits checks a session request's names; kind, the duration and the
// reviewer key are checked by openSession.
func (r *SessionRequest) CheckLimits() error {
	if err := CheckName("check", r.Check, 1, MaxCheckBytes); err != nil {
		return err
	}
	if err := CheckName("manifest_id", r.ManifestID, 1, MaxManifestIDBytes); err != nil {
		return err
	}
	return CheckName("reviewer_key_id", r.ReviewerKeyID, 0, MaxReviewerKeyIDBytes)
}

// CheckLimits checks a calibration request's free-text members and GPU
// classes (known classes, each once).
func (in *CalibrationRequestInput) CheckLimits() error {
	if err := CheckText("model_description", in.ModelDescription, MaxDescriptionBytes); err != nil {
		return err
	}
	if err := CheckName("hub_model_id", in.HubModelID, 0, MaxHubModelIDBytes); err != nil {
		return err
	}
	if len(in.NotifyEmail) > MaxEmailBytes {
		return &FieldError{Field: "notify_email", Problem: fmt.Sprintf("must be at most %d bytes", MaxEmailBytes)}
	}
	return CheckGPUClasses("desired_gpu_classes", in.DesiredGPUClasses)
}

// CheckLimits bounds a resume request's token.
func (r *ResumeRequest) CheckLimits() error {
	if len(r.LineageToken) > MaxLineageTokenBytes {
		return &FieldError{Field: "lineage_token", Problem: fmt.Sprintf("must be at most %d bytes, is %d", MaxLineageTokenBytes, len(r.LineageToken))}
	}
	return nil
}

// CheckLimits bounds the canonical size of a delegation description.
func (r *DelegationRequest) CheckLimits() error {
	b, err := canonical.Marshal(r.Delegation)
	if err != nil {
		return &FieldError{Field: "delegation", Problem: err.Error(), Err: err}
	}
	if len(b) > MaxDelegationBytes {
		return &FieldError{Field: "delegation", Problem: fmt.Sprintf("canonical JSON must be at most %d bytes, is %d", MaxDelegationBytes, len(b))}
	}
	return nil
}
