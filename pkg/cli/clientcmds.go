package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/api"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/commitment"
	"github.com/svc-gov/svc/pkg/document"
	"github.com/svc-gov/svc/pkg/vpec"
)

// DefaultStateFile is where `svc run open` keeps the open run for the
// following `svc record` and `svc close` of a shell script.
const DefaultStateFile = ".svc-run.json"

// clientOptions is the flag group of every command that talks to a service.
type clientOptions struct {
	baseURL   string
	apiKey    string
	queuePath string
	timeout   time.Duration
	output    string
}

func (o *clientOptions) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.baseURL, "base-url", "", "service address (env SVC_BASE_URL; default http://127.0.0.1:8080)")
	cmd.Flags().StringVar(&o.apiKey, "api-key", "", "API key, pk_sb_... or pk_live_... (env SVC_API_KEY)")
	cmd.Flags().StringVar(&o.queuePath, "queue-path", "", "durable queue file for records made while the service is unreachable (env SVC_QUEUE_PATH)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", client.DefaultTimeout, "longest a call may take before the record is queued instead")
	addOutputFlag(cmd, &o.output)
}

func (o *clientOptions) pipeline(workflowID string, policy []string) (*client.Pipeline, error) {
	if err := checkOutput(o.output); err != nil {
		return nil, err
	}
	p, err := client.NewPipeline(client.Options{APIKey: o.apiKey, BaseURL: o.baseURL, QueuePath: o.queuePath,
		Timeout: o.timeout, WorkflowID: workflowID, Policy: policy})
	if err != nil {
		hint := ""
		switch {
		case errors.Is(err, client.ErrNoAPIKey), errors.Is(err, client.ErrInvalidAPIKey):
			hint = "pass --api-key or set SVC_API_KEY (an operator creates one with 'svc admin key create')"
		case errors.Is(err, client.ErrQueueLocked):
			hint = "another svc process is using the queue; wait for it or pass another --queue-path"
		}
		return nil, &Error{Code: ExitUsage, Err: err, Hint: hint}
	}
	return p, nil
}

// do runs fn with a pipeline that needs no workflow identity and
// releases it after.
func (o *clientOptions) do(fn func(p *client.Pipeline) error) error {
	p, err := o.pipeline("", nil)
	if err != nil {
		return err
	}
	defer p.Close()
	return fn(p)
}

// stateOptions locates the run state file.
type stateOptions struct{ path string }

func (o *stateOptions) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.path, "state", DefaultStateFile, "file holding the open run between commands (env SVC_STATE)")
}

func (o *stateOptions) load() (client.RunState, error) {
	var st client.RunState
	data, err := os.ReadFile(o.path)
	if err != nil {
		return st, &Error{Code: ExitUsage, Err: fmt.Errorf("no open run: %w", err), Hint: "open one first with 'svc run open' (or pass --state)"}
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, &Error{Code: ExitUsage, Err: fmt.Errorf("run state %s: %w", o.path, err), Hint: "remove the file and open a new run"}
	}
	return st, nil
}

// save writes the state atomically and durably (synced, renamed into
// place): a crash leaves the previous state or this one.
func (o *stateOptions) save(st client.RunState) error {
	data, err := document.MarshalIndent(st)
	if err != nil {
		return &Error{Code: ExitFailure, Err: err}
	}
	if err := fsutil.WriteReplace(o.path, data, 0o600); err != nil {
		return &Error{Code: ExitFailure, Err: fmt.Errorf("save run state: %w", err)}
	}
	return nil
}

// lock serialises the commands of one state file (a lock file beside it),
// waiting for another svc process to finish: two 'svc record' at once
// would otherwise take the same sequence number. Release it after save.
func (o *stateOptions) lock() (func(), error) {
	f, err := os.OpenFile(o.path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, &Error{Code: ExitFailure, Err: fmt.Errorf("lock run state: %w", err), Hint: "check the directory of --state is writable"}
	}
	if err := fsutil.LockFileWait(f); err != nil {
		f.Close()
		return nil, &Error{Code: ExitFailure, Err: fmt.Errorf("lock run state %s: %w", o.path, err)}
	}
	return func() { fsutil.UnlockFile(f); f.Close() }, nil
}

func (a *app) runCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "run", Short: "Open a run for the records of a shell script"}
	var (
		co       clientOptions
		so       stateOptions
		workflow string
		policy   []string
		pack     string
	)
	open := &cobra.Command{
		Use:   "open",
		Short: "Open a run and keep it in a state file for 'svc record' and 'svc close'",
		Long: `Open a run and keep its id and chain position in a state file (default
.svc-run.json) so that later 'svc record' and 'svc close' commands of the
same script continue it. If the service is unreachable the run opens
locally and everything is queued: the script is never blocked.`,
		Example: `  svc run open --workflow-id claims-intake --policy hipaa
  svc record --check pii_detection --manifest-id "$MANIFEST" --result pass --input-file note.txt
  svc close --out vpec.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			unlock, err := so.lock()
			if err != nil {
				return err
			}
			defer unlock()
			var carried []client.UnsignedCopy
			if _, err := os.Stat(so.path); err == nil {
				st, err := so.load()
				if err == nil && !st.Sealed {
					return errorf(ExitUsage, "close it with 'svc close', or remove "+so.path, "run %s in %s is still open", st.RunID, so.path)
				}
				// Unsigned offline VPECs of earlier runs still wait for
				// their signed VPEC ('svc queue flush' writes it).
				carried = st.UnsignedCopies
			}
			p, err := co.pipeline(workflow, policy)
			if err != nil {
				return err
			}
			defer p.Close()
			run, err := p.Open(cmdContext(cmd), pack)
			if err != nil {
				return &Error{Code: ExitFailure, Err: err}
			}
			st := run.State()
			st.UnsignedCopies = carried
			if err := so.save(st); err != nil {
				return err
			}
			pending, _ := p.PendingQueueCount()
			res := map[string]any{"run_id": run.ID(), "workflow_id": run.WorkflowID(), "environment": run.Environment(), "queued": pending > 0, "state": so.path}
			if co.output == outputJSON {
				return a.writeJSON(res)
			}
			fmt.Fprintln(a.streams.Out, run.ID())
			if pending > 0 {
				fmt.Fprintf(a.streams.Err, "%s: warning: the service is unreachable; the run and its records are queued in %s\n", a.name, p.QueuePath())
			}
			return nil
		},
	}
	co.add(open)
	so.add(open)
	open.Flags().StringVar(&workflow, "workflow-id", "", "workflow identity (default \"default\"; env SVC_WORKFLOW_ID)")
	open.Flags().StringArrayVar(&policy, "policy", nil, "policy bundle the run is bound to (repeatable)")
	open.Flags().StringVar(&pack, "policy-pack", "", "policy pack id")
	cmd.AddCommand(open)
	return cmd
}

type recordOptions struct {
	co         clientOptions
	so         stateOptions
	check      string
	manifestID string
	result     string
	input      string
	inputFile  string
	outputFile string
	details    []string
	visibility string
	inf        inferenceOptions
}

func (a *app) recordCmd() *cobra.Command {
	o := &recordOptions{}
	cmd := &cobra.Command{
		Use:   "record --check NAME --manifest-id ID (--result RESULT | --model DIR) (--input TEXT | --input-file F | stdin)",
		Short: "Record a check execution on the open run",
		Long: `Record a check execution on the run opened by 'svc run open'. The input
(and --output-file) are hashed here: only their SHA-256 commitments are
sent. If the service is unreachable the record is queued durably
("queued": true) and delivered later in order; the command still succeeds.

Results: pass, fail, error, skipped, degraded, override, not_applicable.

With --model DIR the check is a classifier run here as a
bound_committed_inference check: the model is looked up in the profile
registry by its onnx_model_hash (the profile is cached in --profile-dir),
the input is tokenized and validated, the traced forward pass runs on ONNX
Runtime, and the score is compared with --threshold (at or above: fail).
Six records are made (pre_conditions tokenization, input_schema_validation,
truncation_check; the inference at operator_bound, with the trace's Merkle
root; post_conditions threshold_check, output_schema_validation). Without
a profile for the model and --gpu-class the inference is recorded at
execution level (open_source_ml) and the VPEC gets a model_profile_missing
gap. Keep the trace (--trace-out) for audits: 'svc verify --trace'.`,
		Example: `  svc record --check pii_detection --manifest-id sha256:… --result pass --input-file note.txt --details model=pii-v3
  echo "$PROMPT" | svc record --check prompt_injection --manifest-id sha256:… --result fail
  svc record --check pii_detection --manifest-id sha256:… --model pii-model --input-file note.txt --trace-out note.trace.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return a.runRecord(cmdContext(cmd), o) },
	}
	o.co.add(cmd)
	o.so.add(cmd)
	cmd.Flags().StringVar(&o.check, "check", "", "check name (required)")
	cmd.Flags().StringVar(&o.manifestID, "manifest-id", "", "manifest id of the check (required; see 'svc manifest register')")
	cmd.Flags().StringVar(&o.result, "result", "", "check result (required)")
	cmd.Flags().StringVar(&o.input, "input", "", "the check's input as text (hashed locally)")
	cmd.Flags().StringVar(&o.inputFile, "input-file", "", "file holding the check's input (hashed locally; - for stdin)")
	cmd.Flags().StringVar(&o.outputFile, "output-file", "", "file holding the check's output (hashed locally)")
	cmd.Flags().StringArrayVar(&o.details, "details", nil, "metadata key=value sent as-is (repeatable; never personal data)")
	cmd.Flags().StringVar(&o.visibility, "visibility", string(vpec.Opaque), "opaque, selective or transparent")
	o.inf.add(cmd)
	return cmd
}

func (a *app) runRecord(ctx context.Context, o *recordOptions) error {
	switch {
	case o.check == "":
		return errorf(ExitUsage, "name the check, e.g. --check pii_detection", "--check is required")
	case o.manifestID == "":
		return errorf(ExitUsage, "register the check with 'svc manifest register FILE' and pass its id", "--manifest-id is required")
	case o.inf.model != "" && o.result != "":
		return errorf(ExitUsage, "drop --result: with --model the classifier's score decides", "--result and --model given")
	case o.inf.model == "" && !vpec.CheckResult(o.result).Valid():
		return errorf(ExitUsage, fmt.Sprintf("use one of %v", vpec.CheckResults()), "--result %q is not a check result", o.result)
	case !vpec.Visibility(o.visibility).Valid():
		return errorf(ExitUsage, fmt.Sprintf("use one of %v", vpec.Visibilities()), "--visibility %q is not a visibility mode", o.visibility)
	case o.input != "" && o.inputFile != "":
		return errorf(ExitUsage, "give the input once", "both --input and --input-file given")
	}
	var input []byte
	var err error
	switch {
	case o.input != "":
		input = []byte(o.input)
	case o.inputFile != "" && o.inputFile != "-":
		input, err = os.ReadFile(o.inputFile)
	default:
		input, err = io.ReadAll(a.streams.In)
	}
	if err != nil {
		return &Error{Code: ExitUsage, Err: fmt.Errorf("read input: %w", err)}
	}
	opts := []client.RecordOption{client.WithVisibility(vpec.Visibility(o.visibility))}
	if o.outputFile != "" {
		out, err := os.ReadFile(o.outputFile)
		if err != nil {
			return &Error{Code: ExitUsage, Err: fmt.Errorf("read output: %w", err)}
		}
		opts = append(opts, client.WithOutput(out))
	}
	if len(o.details) > 0 {
		d := map[string]any{}
		for _, kv := range o.details {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return errorf(ExitUsage, "write --details key=value", "--details %q is not key=value", kv)
			}
			d[k] = v
		}
		opts = append(opts, client.WithDetails(d))
	}
	unlock, err := o.so.lock()
	if err != nil {
		return err
	}
	defer unlock()
	st, err := o.so.load()
	if err != nil {
		return err
	}
	p, err := o.co.pipeline(st.WorkflowID, nil)
	if err != nil {
		return err
	}
	defer p.Close()
	run, err := p.RestoreRun(st)
	if err != nil {
		return &Error{Code: ExitUsage, Err: err}
	}
	if o.inf.model != "" {
		return a.recordInference(ctx, o, p, run, input)
	}
	res, err := run.Record(ctx, o.check, o.manifestID, vpec.CheckResult(o.result), input, opts...)
	if err != nil {
		if errors.Is(err, client.ErrRunSealed) {
			return &Error{Code: ExitUsage, Err: err, Hint: "the run is closed; open a new one with 'svc run open'"}
		}
		return &Error{Code: ExitFailure, Err: err}
	}
	if err := o.so.save(run.State()); err != nil {
		return err
	}
	if o.co.output == outputJSON {
		return a.writeJSON(res)
	}
	state := "recorded"
	if res.Queued {
		state = "queued (service unreachable; delivered later)"
	}
	fmt.Fprintf(a.streams.Out, "%s sequence %d %s %s\n", res.RecordID, res.Sequence, res.CommitmentHash, state)
	return nil
}

func (a *app) closeCmd() *cobra.Command {
	var (
		co    clientOptions
		so    stateOptions
		out   string
		force bool
	)
	cmd := &cobra.Command{
		Use:   "close [--out vpec.json]",
		Short: "Close the open run and write its VPEC",
		Long: `Close the run opened by 'svc run open': the service seals it and issues the
signed, timestamped VPEC, written to --out (default vpec.json). If the
service is unreachable, an unsigned offline VPEC (schema
svc.vpec.unsigned-offline/v1, with a system_unavailable gap) is written
instead and the close is queued; 'svc queue flush' later writes the signed
VPEC over it (or fetch it with 'svc vpec get RUN_ID --out FILE').`,
		Example: `  svc close --out vpec.json && svc verify vpec.json --trust-root trust-bundle.pem`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := os.Stat(out); err == nil && !force {
				return errorf(ExitUsage, "choose another --out or pass --force", "%s already exists", out)
			}
			unlock, err := so.lock()
			if err != nil {
				return err
			}
			defer unlock()
			st, err := so.load()
			if err != nil {
				return err
			}
			p, err := co.pipeline(st.WorkflowID, nil)
			if err != nil {
				return err
			}
			defer p.Close()
			run, err := p.RestoreRun(st)
			if err != nil {
				return &Error{Code: ExitUsage, Err: err}
			}
			res, err := run.Close(cmdContext(cmd))
			if err != nil {
				if errors.Is(err, client.ErrRunSealed) {
					return &Error{Code: ExitUsage, Err: err, Hint: "the run was already closed"}
				}
				return &Error{Code: ExitFailure, Err: err}
			}
			if force {
				os.Remove(out)
			}
			if err := fsutil.WriteNew(out, res.Raw, 0o644); err != nil {
				return &Error{Code: ExitFailure, Err: err}
			}
			st = run.State()
			if res.Offline {
				// 'svc queue flush' writes the signed VPEC over it, while
				// it still holds these bytes.
				c, err := client.NewUnsignedCopy(run.ID(), out, res.Raw)
				if err != nil {
					return &Error{Code: ExitFailure, Err: err}
				}
				st.UnsignedCopies = append(st.UnsignedCopies, c)
			}
			if err := so.save(st); err != nil {
				return err
			}
			v := res.VPEC
			summary := map[string]any{"vpec_id": v.VPECID, "run_id": v.RunID, "out": out, "offline": res.Offline,
				"proof_level_floor": v.ProofLevelFloor, "total_checks_run": v.TotalChecksRun, "gaps": len(v.Gaps), "is_clean": v.IsClean}
			if co.output == outputJSON {
				return a.writeJSON(summary)
			}
			if res.Offline {
				fmt.Fprintf(a.streams.Err, "%s: warning: the service is unreachable: %s holds an unsigned local VPEC with a system_unavailable gap; the close is queued: 'svc queue flush --state %s' writes the signed VPEC over it (or: svc vpec get %s --out %s)\n", a.name, out, so.path, v.RunID, out)
			}
			// "clean" means no governance gaps, not that every check
			// passed: print both, so neither is read as the other.
			clean := "clean: no governance gaps"
			if !v.IsClean {
				clean = "not clean: see the gaps"
			}
			fmt.Fprintf(a.streams.Out, "%s: %d checks (%d passed, %d failed), floor %s, %d gap(s), %s -> %s\n",
				v.RunID, v.TotalChecksRun, v.ChecksPassed, v.ChecksFailed, v.ProofLevelFloor, len(v.Gaps), clean, out)
			return nil
		},
	}
	co.add(cmd)
	so.add(cmd)
	cmd.Flags().StringVar(&out, "out", "vpec.json", "file to write the VPEC to")
	cmd.Flags().BoolVar(&force, "force", false, "replace --out if it exists")
	return cmd
}

func (a *app) manifestCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "manifest", Short: "Register check manifests"}
	var co clientOptions
	reg := &cobra.Command{
		Use:   "register FILE",
		Short: "Register a check manifest (JSON or YAML) and print its content-addressed id",
		Example: `  svc manifest register pii-check.yaml
  MANIFEST=$(svc manifest register pii-check.yaml)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := a.readInput(args[0], "manifest")
			if err != nil {
				return err
			}
			var m api.Manifest
			if err := parseManifest(data, &m); err != nil {
				return &Error{Code: ExitUsage, Err: fmt.Errorf("%s: %w", args[0], err), Hint: "a manifest has name, version and stages (stage_name, proof_ceiling, regulatory_references)"}
			}
			return co.do(func(p *client.Pipeline) error {
				reg, err := p.RegisterCheck(cmdContext(cmd), m)
				if err != nil {
					return &Error{Code: ExitFailure, Err: err}
				}
				if co.output == outputJSON {
					return a.writeJSON(reg)
				}
				fmt.Fprintln(a.streams.Out, reg.ManifestID)
				return nil
			})
		},
	}
	co.add(reg)
	cmd.AddCommand(reg)
	return cmd
}

// parseManifest reads JSON, or YAML converted to JSON, strictly.
func parseManifest(data []byte, m *api.Manifest) error {
	trimmed := strings.TrimSpace(string(data))
	if !strings.HasPrefix(trimmed, "{") {
		var y any
		if err := yaml.Unmarshal(data, &y); err != nil {
			return fmt.Errorf("neither JSON nor YAML: %w", err)
		}
		j, err := json.Marshal(y)
		if err != nil {
			return fmt.Errorf("YAML with non-string keys: %w", err)
		}
		data = j
	}
	_, err := document.Parse(data, m)
	return err
}

// modelHash returns --model-hash, or the commitment of the --model file.
func modelHash(hash, file string) (string, error) {
	switch {
	case hash != "" && file != "":
		return "", errorf(ExitUsage, "give one of them", "both a model hash and --model given")
	case file != "":
		path := file
		if st, err := os.Stat(file); err == nil && st.IsDir() {
			path = filepath.Join(file, "model.onnx")
		}
		h, _, err := commitment.SumFile(path)
		if err != nil {
			return "", &Error{Code: ExitUsage, Err: fmt.Errorf("hash model: %w", err)}
		}
		return h.String(), nil
	case hash == "":
		return "", errorf(ExitUsage, "pass the model's sha256:… hash or --model FILE", "no model given")
	}
	if _, err := vpec.ParseHash(hash); err != nil {
		return "", &Error{Code: ExitUsage, Err: err, Hint: "an onnx_model_hash is sha256: and 64 lowercase hex"}
	}
	return hash, nil
}

// registryClientCmds are the registry commands that ask a service.
func (a *app) registryClientCmds() []*cobra.Command {
	var co clientOptions
	list := &cobra.Command{
		Use:   "list",
		Short: "List the published model profiles",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return co.do(func(p *client.Pipeline) error {
				profiles, err := p.Profiles(cmdContext(cmd))
				if err != nil {
					return &Error{Code: ExitFailure, Err: err}
				}
				if co.output == outputJSON {
					return a.writeJSON(api.ProfileList{Profiles: profiles})
				}
				for _, pr := range profiles {
					fmt.Fprintf(a.streams.Out, "%s\t%s\t%s\t%s\n", pr.ProfileID, pr.ModelClass, strings.Join(pr.CalibratedGPUClasses, ","), pr.CalibrationDate)
				}
				return nil
			})
		},
	}
	co.add(list)

	var lco clientOptions
	var lmodel string
	lookup := &cobra.Command{
		Use:   "lookup (HASH | --model FILE)",
		Short: "Look a model up by its onnx_model_hash (exit 1 when no profile covers it)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := modelHash(firstArg(args), lmodel)
			if err != nil {
				return err
			}
			return lco.do(func(p *client.Pipeline) error {
				lk, err := p.Lookup(cmdContext(cmd), h)
				if err != nil {
					return &Error{Code: ExitFailure, Err: err}
				}
				if lco.output == outputJSON {
					if err := a.writeJSON(lk); err != nil {
						return err
					}
				} else if lk.Found {
					fmt.Fprintf(a.streams.Out, "found: %s (%s, %s)\n", lk.ProfileID, lk.ModelClass, lk.Architecture)
				} else {
					fmt.Fprintf(a.streams.Out, "not found: no profile covers %s (request one with 'svc calibrate request')\n", h)
				}
				if !lk.Found {
					return exitError{ExitInvalid}
				}
				return nil
			})
		},
	}
	lco.add(lookup)
	lookup.Flags().StringVar(&lmodel, "model", "", "ONNX model file (or directory with model.onnx) to hash")

	var gco clientOptions
	get := &cobra.Command{
		Use:   "get HASH",
		Short: "Print the full signed profile covering a model",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := modelHash(args[0], "")
			if err != nil {
				return err
			}
			return gco.do(func(p *client.Pipeline) error {
				doc, err := p.ProfileDocument(cmdContext(cmd), h)
				if err != nil {
					return &Error{Code: ExitFailure, Err: err}
				}
				var v any
				json.Unmarshal(doc, &v)
				return a.writeJSON(v)
			})
		},
	}
	gco.add(get)
	return []*cobra.Command{list, lookup, get}
}

func firstArg(args []string) string {
	if len(args) > 0 {
		return args[0]
	}
	return ""
}

func (a *app) calibrateCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "calibrate", Short: "Drift profile calibration"}
	var (
		co                  clientOptions
		hash, model, hub, e string
		gpus                []string
		desc                string
	)
	req := &cobra.Command{
		Use:     "request (--model-hash H | --model FILE)",
		Short:   "Request the calibration of a drift profile for a model",
		Example: `  svc calibrate request --model ./pii-model --hub-model-id acme/pii-distilbert --gpu-class cpu,a10g --email ml@acme.example`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := modelHash(hash, model)
			if err != nil {
				return err
			}
			return co.do(func(p *client.Pipeline) error {
				st, err := p.RequestCalibration(cmdContext(cmd), client.CalibrationRequest{ONNXModelHash: h, HubModelID: hub, DesiredGPUClasses: gpus, NotifyEmail: e, ModelDescription: desc})
				if err != nil {
					return &Error{Code: ExitFailure, Err: err}
				}
				if co.output == outputJSON {
					return a.writeJSON(st)
				}
				fmt.Fprintf(a.streams.Out, "%s %s (estimated completion %s)\n", st.RequestID, st.Status, st.EstimatedCompletion)
				return nil
			})
		},
	}
	co.add(req)
	req.Flags().StringVar(&hash, "model-hash", "", "the model's onnx_model_hash (sha256:…)")
	req.Flags().StringVar(&model, "model", "", "ONNX model file (or directory with model.onnx) to hash")
	req.Flags().StringVar(&hub, "hub-model-id", "", "the model's id on a public model hub")
	req.Flags().StringSliceVar(&gpus, "gpu-class", nil, "GPU classes to calibrate for: cpu, a10g, a100, h100 (default cpu)")
	req.Flags().StringVar(&e, "email", "", "address notified when the profile is published")
	req.Flags().StringVar(&desc, "description", "", "free text describing the model")
	cmd.AddCommand(req, a.calibrateRunCmd(), a.calibrateMergeCmd())
	return cmd
}

func (a *app) queueCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "queue", Short: "The durable queue of records made while the service was unreachable"}
	var sco, fco clientOptions
	status := &cobra.Command{
		Use:   "status",
		Short: "Print how many entries wait in the queue",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return sco.do(func(p *client.Pipeline) error {
				n, err := p.PendingQueueCount()
				if err != nil {
					return &Error{Code: ExitFailure, Err: err}
				}
				if sco.output == outputJSON {
					return a.writeJSON(map[string]any{"pending": n, "queue_path": p.QueuePath()})
				}
				fmt.Fprintf(a.streams.Out, "%d pending in %s\n", n, p.QueuePath())
				return nil
			})
		},
	}
	sco.add(status)
	var fso stateOptions
	flush := &cobra.Command{
		Use:   "flush",
		Short: "Deliver the queued entries in order (exit 1 if some remain)",
		Long: `Deliver the queued entries in order (exit 1 if some remain), and print
the VPEC id of each run whose close was delivered. For a close made offline
with 'svc close --state S --out F', the signed VPEC is written over F, the
unsigned offline VPEC it left, if F still holds exactly what 'svc close'
wrote (a changed file is left alone, with a warning).`,
		Example: `  svc queue flush && svc verify vpec.json --trust-root trust-bundle.pem`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return fco.do(func(p *client.Pipeline) error {
				ctx := cmdContext(cmd)
				res, ferr := p.Flush(ctx)
				left, _ := p.PendingQueueCount()
				var written []writtenCopy
				var warnings []string
				if !errors.Is(ferr, client.ErrUnavailable) {
					written, warnings = a.writeSignedCopies(ctx, p, &fso)
				}
				if fco.output == outputJSON {
					out := map[string]any{"delivered": res.Delivered, "pending": left, "sealed": nonNil(res.Sealed), "written": nonNil(written)}
					if ferr != nil {
						out["error"] = ferr.Error()
					}
					if len(warnings) > 0 {
						out["warnings"] = warnings
					}
					if err := a.writeJSON(out); err != nil {
						return err
					}
				} else {
					fmt.Fprintf(a.streams.Out, "%d delivered, %d pending\n", res.Delivered, left)
					for _, s := range res.Sealed {
						fmt.Fprintf(a.streams.Out, "%s sealed: %s\n", s.RunID, orUnknown(s.VPECID))
					}
					for _, w := range written {
						fmt.Fprintf(a.streams.Out, "%s: signed VPEC %s written over the unsigned offline VPEC %s\n", w.RunID, w.VPECID, w.Path)
					}
					for _, w := range warnings {
						fmt.Fprintf(a.streams.Err, "%s: warning: %s\n", a.name, w)
					}
				}
				if ferr != nil {
					return &Error{Code: ExitInvalid, Err: ferr, Hint: "the service may still be unreachable; the entries stay queued"}
				}
				return nil
			})
		},
	}
	fco.add(flush)
	fso.add(flush)
	cmd.AddCommand(status, flush)
	return cmd
}

// writtenCopy is a signed VPEC written over an unsigned offline VPEC.
type writtenCopy struct {
	RunID  string `json:"run_id"`
	VPECID string `json:"vpec_id"`
	Path   string `json:"path"`
}

// writeSignedCopies writes the signed VPEC over each unsigned offline VPEC
// the state file lists whose run the service has sealed; the list keeps
// those to try again. A missing state file is no error.
func (a *app) writeSignedCopies(ctx context.Context, p *client.Pipeline, so *stateOptions) (written []writtenCopy, warnings []string) {
	if _, err := os.Stat(so.path); err != nil {
		return nil, nil
	}
	unlock, err := so.lock()
	if err != nil {
		return nil, []string{err.Error()}
	}
	defer unlock()
	st, err := so.load()
	if err != nil || len(st.UnsignedCopies) == 0 {
		return nil, nil
	}
	results, keep := p.ReplaceCopies(ctx, st.UnsignedCopies)
	for _, r := range results {
		switch {
		case r.Err == nil:
			written = append(written, writtenCopy{RunID: r.RunID, VPECID: r.VPECID, Path: r.Path})
		case errors.Is(r.Err, client.ErrNotUnsignedCopy):
			warnings = append(warnings, fmt.Sprintf("%s changed since the offline close of %s: left alone; fetch the signed VPEC with 'svc vpec get %s --out FILE'", r.Path, r.RunID, r.RunID))
		}
	}
	if len(keep) != len(st.UnsignedCopies) {
		st.UnsignedCopies = keep
		if err := so.save(st); err != nil {
			warnings = append(warnings, err.Error())
		}
	}
	return written, warnings
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "(VPEC id not reported)"
	}
	return s
}
