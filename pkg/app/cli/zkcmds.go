package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/app/cli/clicore"
	"github.com/svc-gov/svc/pkg/app/cli/verifycmd"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/client/zkprove"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/zk"
)

func (a *app) verifyCircuitCmd() *cobra.Command { return verifycmd.VerifyCircuit(a.core) }

// readOptional reads path, or returns nil for "".
func readOptional(path, what string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{Code: ExitUsage, Err: fmt.Errorf("read %s: %w", what, err)}
	}
	return b, nil
}

// circuitDir is the circuit entry cache: --circuit-dir, SVC_CIRCUIT_DIR or
// the default the verifier reads.
func circuitDir(flag string) string {
	if flag != "" {
		return flag
	}
	if d := os.Getenv("SVC_CIRCUIT_DIR"); d != "" {
		return d
	}
	return verifycmd.DefaultCircuitDir()
}

// publishCircuitOptions are the flags of svc registry publish-circuit.
type publishCircuitOptions struct {
	data                           dataOptions
	keys                           keyOptions
	circuit                        string
	devSetup                       bool
	model, vk, pk, transcript, out string
	signedBy, output               string
}

// validate checks the flags alone.
func (o *publishCircuitOptions) validate() error {
	if err := checkOutput(o.output); err != nil {
		return err
	}
	if o.devSetup && o.out == "" {
		return errorf(ExitUsage, "pass --proving-key-out FILE: provers need the proving key a dev setup makes", "--dev-setup without --proving-key-out")
	}
	return nil
}

// newCmdPublishCircuit builds svc registry publish-circuit; runF, when not
// nil, gets the parsed options instead of the run (a test's seam).
func newCmdPublishCircuit(a *app, runF func(*publishCircuitOptions) error) *cobra.Command {
	o := &publishCircuitOptions{}
	cmd := &cobra.Command{
		Use:   "publish-circuit --circuit NAME [--model HEAD.onnx] (--verifying-key F --proving-key F --transcript F | --dev-setup --proving-key-out F)",
		Short: "Sign a circuit's verifying key with the service key and publish it (admin)",
		Long: `Publish a zero-knowledge circuit in the service's registry (the same data
directory or database as 'svc serve'): mlp_head (an ONNX MLP head, --model),
threshold_check, truncation_check or below_threshold_check. The keys come from a setup ceremony
('svc zk ceremony'): they must prove and verify a sample statement of the
circuit, so keys of another model or circuit are refused, and the
finalized transcript must record both keys' hashes (and the head's model).
The entry binds the verifying key (its SHA-256 is the circuit id), the
SHA-256 of the proving key (provers get the key itself from the operator),
the transcript's hash and its contributors (from the transcript, with their
phase), and is signed with the service key. --dev-setup makes keys with a single-party setup instead, for
trying things: the entry then names the operator as the only contributor,
and proofs are no better than the operator's word.`,
		Example: `  svc registry publish-circuit --circuit mlp_head --model head.onnx --verifying-key head/verifying.key --proving-key head/proving.key --transcript head/transcript.json
  svc registry publish-circuit --circuit threshold_check --dev-setup --proving-key-out threshold.pk`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return a.runPublishCircuit(cmdContext(cmd), o)
		},
	}
	o.data.add(cmd)
	o.keys.add(cmd)
	f := cmd.Flags()
	f.StringVar(&o.circuit, "circuit", "", "mlp_head, threshold_check, truncation_check or below_threshold_check (required)")
	f.StringVar(&o.model, "model", "", "mlp_head: the ONNX MLP head the circuit proves")
	f.StringVar(&o.vk, "verifying-key", "", "the ceremony's verifying key (canonical compressed bytes)")
	f.StringVar(&o.pk, "proving-key", "", "the ceremony's proving key (its SHA-256 goes in the entry)")
	f.StringVar(&o.transcript, "transcript", "", "the finalized ceremony's transcript.json (its hash and contributors go in the entry)")
	f.BoolVar(&o.devSetup, "dev-setup", false, "make the keys with a single-party setup (for trying only)")
	f.StringVar(&o.out, "proving-key-out", "", "with --dev-setup: write the proving key here")
	f.StringVar(&o.signedBy, "signed-by", "localhost"+"/.well-known/svc/trust-bundle.pem", "locator of the public key written in signed_by")
	addOutputFlag(cmd, &o.output)
	return cmd
}

// runPublishCircuit checks the keys (or makes them, --dev-setup), signs
// the entry with the data directory's key and publishes it
// (zk.PrepareEntry, server.PublishCircuit).
func (a *app) runPublishCircuit(ctx context.Context, o *publishCircuitOptions) error {
	in := zk.PublishInput{Circuit: o.circuit, DevSetup: o.devSetup}
	var err error
	if in.Model, err = readOptional(o.model, "model"); err != nil {
		return err
	}
	if in.VerifyingKey, err = readOptional(o.vk, "verifying key"); err != nil {
		return err
	}
	if in.ProvingKey, err = readOptional(o.pk, "proving key"); err != nil {
		return err
	}
	if in.Transcript, err = readOptional(o.transcript, "transcript"); err != nil {
		return err
	}
	m, err := server.ReadMaterialKeys(ctx, o.data.dir(), o.keys.config(a.streams.Getenv))
	if err != nil {
		return keyError(err)
	}
	defer m.Close()
	in.Operator = "svc key " + m.ProfileSigner.KeyID()
	st, _, err := o.data.openExisting(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := checkIdentity(ctx, st, m, o.data.dir()); err != nil {
		return err
	}
	e, keys, err := zk.PrepareEntry(in, time.Now())
	if err != nil {
		return &Error{Code: ExitUsage, Err: err}
	}
	if in.DevSetup {
		pkb, err := zk.MarshalProvingKey(keys.PK)
		if err != nil {
			return &Error{Code: ExitFailure, Err: err}
		}
		if err := fsutil.WriteNew(o.out, pkb, 0o600); err != nil {
			return &Error{Code: ExitUsage, Err: fmt.Errorf("write proving key: %w", err)}
		}
	}
	doc, err := server.PublishCircuit(ctx, st, m.ProfileSigner, o.signedBy, e, time.Now())
	if err != nil {
		if errors.Is(err, store.ErrExists) {
			return &Error{Code: ExitUsage, Err: err, Hint: "circuit entries are immutable: the same verifying key cannot be published with another ceremony or model"}
		}
		return &Error{Code: ExitFailure, Err: err}
	}
	if o.output == outputJSON {
		var v any
		json.Unmarshal(doc, &v)
		return a.writeJSON(v)
	}
	fmt.Fprintf(a.streams.Out, "published %s circuit %s (signed by key %s); setup contributors: %s\n", e.Circuit, e.CircuitID, m.ProfileSigner.KeyID(), strings.Join(e.Ceremony.Contributors, ", "))
	return nil
}

// getCircuitOptions are the flags of svc registry get-circuit.
type getCircuitOptions struct {
	co                     clientOptions
	trust                  clicore.TrustOptions
	hash, model, id, cache string
}

// newCmdGetCircuit builds svc registry get-circuit; runF, when not nil,
// gets the parsed options instead of the run (a test's seam).
func newCmdGetCircuit(a *app, runF func(*getCircuitOptions) error) *cobra.Command {
	o := &getCircuitOptions{}
	cmd := &cobra.Command{
		Use:   "get-circuit (--model-hash H | --model HEAD.onnx | --circuit-id ID)",
		Short: "Fetch a signed circuit entry, verify it and keep it in the circuit cache",
		Long: `Fetch the signed circuit entry of a model's mlp_head circuit (or any
circuit by id) from the registry, verify its signature against the trust
bundle, keep it in the circuit cache that 'svc verify' reads
(--circuit-dir) and print it.`,
		Example: `  svc registry get-circuit --model head.onnx --trust-root trust-bundle.pem`,
		Args:    cobra.NoArgs,
		RunE: clientRunE(o, &o.co, func(args []string) error {
			if o.id == "" {
				if err := checkModelRef(o.hash, o.model); err != nil {
					return err
				}
			}
			return nil
		}, runF, a.runGetCircuit),
	}
	o.co.add(cmd)
	o.trust.Add(a.core, cmd)
	cmd.Flags().StringVar(&o.hash, "model-hash", "", "the model's onnx_model_hash (sha256:…)")
	cmd.Flags().StringVar(&o.model, "model", "", "ONNX model file to hash")
	cmd.Flags().StringVar(&o.id, "circuit-id", "", "a circuit id (sha256:…)")
	cmd.Flags().StringVar(&o.cache, "circuit-dir", "", "circuit entry cache (default: svc/circuits in the user cache directory; env SVC_CIRCUIT_DIR)")
	return cmd
}

// runGetCircuit fetches the entry, verifies it against the trust bundle
// (zk.VerifyEntry) and keeps it in the circuit cache.
func (a *app) runGetCircuit(ctx context.Context, o *getCircuitOptions) error {
	hash := o.hash
	if o.id == "" {
		h, err := modelHash(o.hash, o.model)
		if err != nil {
			return err
		}
		hash = h
	}
	tb, err := o.trust.Load()
	if err != nil {
		return err
	}
	return o.co.do(func(p *client.Pipeline) error {
		var doc []byte
		var err error
		if o.id != "" {
			doc, err = p.CircuitDocumentByID(ctx, o.id)
		} else {
			doc, err = p.CircuitDocument(ctx, hash)
		}
		if err != nil {
			return &Error{Code: ExitFailure, Err: err}
		}
		if _, err := zk.VerifyEntry(doc, tb); err != nil {
			return &Error{Code: ExitInvalid, Err: err, Hint: "the entry is not signed by a key of the trust bundle: do not use it"}
		}
		zkprove.Keep(circuitDir(o.cache), doc)
		var v any
		json.Unmarshal(doc, &v)
		return a.writeJSON(v)
	})
}

// recordProofOptions are the flags of svc record-proof.
type recordProofOptions struct {
	co                                  clientOptions
	so                                  stateOptions
	trust                               clicore.TrustOptions
	check, manifestID                   string
	model, vector, entry, pkFile, cache string
	value, bound                        uint32
	passClass                           int
}

// newCmdRecordProof builds svc record-proof; runF, when not nil, gets the
// parsed options instead of the run (a test's seam).
func newCmdRecordProof(a *app, runF func(*recordProofOptions) error) *cobra.Command {
	o := &recordProofOptions{}
	cmd := &cobra.Command{
		Use:   "record-proof --check NAME --manifest-id ID (--model HEAD.onnx --input-vector F | --circuit-entry E --value N --bound B) --proving-key PK",
		Short: "Prove a check in zero knowledge and record it on the open run",
		Long: `Prove a check and record it with its proof on the run opened by 'svc run
open'. With --model the check is an ONNX MLP head run here on the
embedding in --input-vector (a JSON array of numbers): the head's run is
proved with Groth16 against the circuit the service published for the
model (fetched, verified against --trust-root and cached like profiles)
and recorded at verifiable_inference; the record's commitment is the
poseidon2 commitment of the quantised embedding. The check passes when the
class is --pass-class. Without a published circuit the inference is
recorded at execution level with a circuit_missing gap. With
--circuit-entry the check is a condition (threshold_check: value >= bound;
below_threshold_check: value < bound; truncation_check: value <= bound), proved and recorded at mathematical
level; the value stays here, only its salted poseidon2 commitment is sent.
--proving-key is the circuit's proving key (its hash is in the signed
entry).`,
		Example: `  svc record-proof --check toxicity_head --manifest-id sha256:… --model head.onnx --input-vector emb.json --proving-key head.pk --trust-root trust-bundle.pem
  svc record-proof --check score_threshold --manifest-id sha256:… --circuit-entry threshold.json --value 731 --bound 500 --proving-key threshold.pk --trust-root trust-bundle.pem`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return a.runRecordProof(cmdContext(cmd), o)
		},
	}
	o.co.add(cmd)
	o.so.add(cmd)
	o.trust.Add(a.core, cmd)
	f := cmd.Flags()
	f.StringVar(&o.check, "check", "", "check name (required)")
	f.StringVar(&o.manifestID, "manifest-id", "", "manifest id of the check (required)")
	f.StringVar(&o.model, "model", "", "an ONNX MLP head to run and prove")
	f.StringVar(&o.vector, "input-vector", "", "with --model: the embedding, a JSON array of numbers (never sent)")
	f.IntVar(&o.passClass, "pass-class", 0, "with --model: the class for which the check passes")
	f.StringVar(&o.entry, "circuit-entry", "", "a condition circuit's signed entry (threshold_check, truncation_check or below_threshold_check)")
	f.Uint32Var(&o.value, "value", 0, "with --circuit-entry: the committed value (a quantised score or a token count; never sent)")
	f.Uint32Var(&o.bound, "bound", 0, "with --circuit-entry: the public threshold or maximum")
	f.StringVar(&o.pkFile, "proving-key", "", "the circuit's proving key")
	f.StringVar(&o.cache, "circuit-dir", "", "circuit entry cache (default: svc/circuits in the user cache directory; env SVC_CIRCUIT_DIR)")
	return cmd
}

// validate checks the flags alone.
func (o *recordProofOptions) validate() error {
	switch {
	case o.check == "" || o.manifestID == "":
		return errorf(ExitUsage, "pass --check and --manifest-id", "--check and --manifest-id are required")
	case (o.model == "") == (o.entry == ""):
		return errorf(ExitUsage, "give --model (an MLP head) or --circuit-entry (a condition)", "one of --model and --circuit-entry is required")
	case o.model != "" && o.vector == "":
		return errorf(ExitUsage, "pass the embedding with --input-vector F (a JSON array)", "--model without --input-vector")
	}
	return o.co.validate()
}

// runRecordProof proves the check (an MLP head's run, or a condition) and
// records it with its proof on the state file's run (pkg/client/zkprove).
func (a *app) runRecordProof(ctx context.Context, o *recordProofOptions) error {
	tb, err := o.trust.Load()
	if err != nil {
		return err
	}
	pk, err := readOptional(o.pkFile, "proving key")
	if err != nil {
		return err
	}
	sr, err := o.so.file().Continue(o.co.forRun)
	if err != nil {
		return o.so.runError(err, "the run is closed; open a new one with 'svc run open'")
	}
	defer sr.Release()
	p, run := sr.Pipeline, sr.Run
	var res *client.RecordResult
	var summary string
	if o.model != "" {
		onnx, err := readOptional(o.model, "model")
		if err != nil {
			return err
		}
		raw, err := readOptional(o.vector, "input vector")
		if err != nil {
			return err
		}
		x, err := zk.ParseVector(raw)
		if err != nil {
			return &Error{Code: ExitUsage, Err: err}
		}
		h, err := zkprove.New(ctx, p, onnx, zkprove.Options{Trust: tb, CircuitDir: circuitDir(o.cache), ProvingKey: pk, PassClass: o.passClass})
		if err != nil {
			return &Error{Code: ExitUsage, Err: err, Hint: "pass the proving key of the model's published circuit with --proving-key"}
		}
		r, err := h.Check(ctx, run, o.check, o.manifestID, x)
		if err != nil {
			return &Error{Code: ExitFailure, Err: err}
		}
		res = r.Record
		summary = fmt.Sprintf("class %d, %s", r.Class, r.Verdict)
		if !r.Proved {
			fmt.Fprintf(a.streams.Err, "%s: warning: recorded at execution level (circuit_missing): %s\n", a.name, h.Note())
		}
	} else {
		doc, err := readOptional(o.entry, "circuit entry")
		if err != nil {
			return err
		}
		c, err := zkprove.NewCondition(doc, pk, tb)
		if err != nil {
			return &Error{Code: ExitUsage, Err: err}
		}
		r, result, _, err := c.Check(ctx, run, o.check, o.manifestID, o.value, o.bound)
		if err != nil {
			return &Error{Code: ExitFailure, Err: err}
		}
		res, summary = r, fmt.Sprintf("%s %s", c.Kind(), result)
		zkprove.Keep(circuitDir(o.cache), doc)
	}
	if err := sr.Save(); err != nil {
		return &Error{Code: ExitFailure, Err: err}
	}
	if o.co.output == outputJSON {
		return a.writeJSON(res)
	}
	state := "recorded"
	if res.Queued {
		state = "queued (service unreachable; delivered later)"
	}
	fmt.Fprintf(a.streams.Out, "%s sequence %d %s %s (%s) %s\n", res.RecordID, res.Sequence, res.ProofLevel, res.CommitmentHash, summary, state)
	return nil
}
