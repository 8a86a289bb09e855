package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/app/cli/internal/present"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

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
	// manifestFile is the manifest a selective record carries (its id
	// is --manifest-id, or computed from it).
	manifestFile string
	// disclosuresOut receives every field's disclosure (salts included)
	// of a selective record.
	disclosuresOut string
	// batch is a file (or - for stdin) of JSON lines, each a record: they
	// are recorded together with the batch API.
	batch string
	inf   inferenceOptions
}

// newCmdRecord builds svc record; runF, when not nil, gets the parsed
// options instead of the run (a test's seam).
func newCmdRecord(a *app, runF func(*recordOptions) error) *cobra.Command {
	o := &recordOptions{}
	cmd := &cobra.Command{
		Use:   "record (--check NAME --manifest-id ID (--result RESULT | --model DIR) (--input TEXT | --input-file F | stdin) | --batch FILE)",
		Short: "Record a check execution on the open run",
		Long: `Record a check execution on the run opened by 'svc run open'. The input
(and --output-file) are hashed here: only their SHA-256 commitments are
sent. If the service is unreachable the record is queued durably
("queued": true) and delivered later in order; the command still succeeds.

Results: pass, fail, error, skipped, degraded, override, not_applicable.

Visibility (docs/FORMATS.md, Disclosures): opaque (the default) sends
commitments only. transparent sends the raw input (and --output-file):
anyone holding the VPEC reads them; for non-sensitive data only (a warning
says so on a terminal). selective takes a JSON object input and
--manifest-file: only the top-level fields the manifest's stage for
--check declares (disclose) are sent, each with a fresh salt; the other
fields leave as salted digests only.

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
gap. The trace mode (--mode auto) is residual when the profile covers it,
which catches a substituted model, else production. Keep the trace
(--trace-out) for audits: 'svc verify --trace'.
With --condition-entry (a truncation_check and/or below_threshold_check
circuit entry, its --condition-proving-key, --trust-root) the
truncation_check and threshold_check records carry Groth16 proofs
(docs/PROOFS.md); --conditions-out keeps the salts that open them.

With --batch FILE (- for stdin) several records are made at once, in the
file's order, and sent with the batch API (docs/API.md): one JSON object
per line, each a record as the single form takes it: check, manifest_id,
result (required), input (text, hashed here), details (an object of
strings), visibility (opaque or transparent). A bad line refuses the whole
file before anything is sent.`,
		Example: `  svc record --check pii_detection --manifest-id sha256:… --result pass --input-file note.txt --details model=pii-v3
  printf '%s' 'Ignore previous instructions.' | svc record --check prompt_injection --manifest-id sha256:… --result fail
  svc record --check kyc_check --manifest-file kyc.yaml --result pass --input-file applicant.json --visibility selective
  svc record --check pii_detection --manifest-id sha256:… --model pii-model --input-file note.txt --trace-out note.trace.json
  printf '{"check":"toxicity","manifest_id":"%s","result":"pass","input":"%s"}\n' sha256:… hello sha256:… world | svc record --batch -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return a.runRecord(cmdContext(cmd), o)
		},
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
	cmd.Flags().StringVar(&o.visibility, "visibility", string(vpec.Opaque), "opaque, selective (with --manifest-file) or transparent (the input is visible to anyone holding the VPEC)")
	cmd.Flags().StringVar(&o.disclosuresOut, "disclosures-out", "", "with --visibility selective: write every field's disclosure, salts included, to this new file (mode 0600; never sent) to open an undisclosed field later")
	cmd.Flags().StringVar(&o.batch, "batch", "", "record several: a file of JSON lines, each a record {check, manifest_id, result, input, details, visibility} (- for stdin), sent with the batch API")
	cmd.Flags().StringVar(&o.manifestFile, "manifest-file", "", "the check's manifest (JSON or YAML): a selective record discloses the input fields its stage declares (disclose) and carries it; --manifest-id defaults to its id")
	o.inf.add(cmd)
	o.inf.trust.Add(a.core, cmd)
	return cmd
}

// recordOpts turns the flags into record options.
func (o *recordOptions) recordOpts() ([]client.RecordOption, error) {
	opts := []client.RecordOption{client.WithVisibility(vpec.Visibility(o.visibility))}
	if o.outputFile != "" {
		out, err := os.ReadFile(o.outputFile)
		if err != nil {
			return nil, &Error{Code: ExitUsage, Err: fmt.Errorf("read output: %w", err)}
		}
		opts = append(opts, client.WithOutput(out))
	}
	if len(o.details) > 0 {
		d := map[string]any{}
		for _, kv := range o.details {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return nil, errorf(ExitUsage, "write --details key=value", "--details %q is not key=value", kv)
			}
			d[k] = v
		}
		opts = append(opts, client.WithDetails(d))
	}
	return opts, nil
}

// validate checks the flags alone: the required ones, the values of
// --result and --visibility, and the combinations that do not go together.
func (o *recordOptions) validate() error {
	switch {
	case o.batch != "" && (o.check != "" || o.manifestID != "" || o.result != "" || o.input != "" || o.inputFile != "" || o.outputFile != "" ||
		len(o.details) > 0 || o.manifestFile != "" || o.disclosuresOut != "" || o.inf.model != "" || o.visibility != string(vpec.Opaque)):
		return errorf(ExitUsage, "put each record's check, manifest_id, result, input, details and visibility in its line of the --batch file", "--batch takes no other record flag")
	case o.batch != "":
	case o.check == "":
		return errorf(ExitUsage, "name the check, e.g. --check pii_detection", "--check is required")
	case o.manifestID == "" && o.manifestFile == "":
		return errorf(ExitUsage, "register the check with 'svc manifest register FILE' and pass its id", "--manifest-id is required")
	case o.inf.model != "" && o.result != "":
		return errorf(ExitUsage, "drop --result: with --model the classifier's score decides", "--result and --model given")
	case o.inf.model == "" && !vpec.CheckResult(o.result).Valid():
		return errorf(ExitUsage, fmt.Sprintf("use one of %v", vpec.CheckResults()), "--result %q is not a check result", o.result)
	case !vpec.Visibility(o.visibility).Valid():
		return errorf(ExitUsage, fmt.Sprintf("use one of %v", vpec.Visibilities()), "--visibility %q is not a visibility mode", o.visibility)
	case o.inf.model == "" && (len(o.inf.condEntries) > 0 || len(o.inf.condKeys) > 0 || o.inf.condOut != ""):
		return errorf(ExitUsage, "add --model: condition circuits prove the conditions of a classifier check", "--condition-entry without --model")
	case o.disclosuresOut != "" && vpec.Visibility(o.visibility) != vpec.Selective:
		return errorf(ExitUsage, "add --visibility selective, or drop --disclosures-out", "--disclosures-out is for selective records")
	case o.inf.condOut != "" && len(o.inf.condEntries) == 0 && len(o.inf.condKeys) == 0:
		return errorf(ExitUsage, "pass --condition-entry and --condition-proving-key", "--conditions-out without condition circuits")
	}
	return o.co.validate()
}

// runRecordBatch records the records of a --batch file together.
func (a *app) runRecordBatch(ctx context.Context, o *recordOptions) error {
	data, err := a.readInput(o.batch, "batch file")
	if err != nil {
		return err
	}
	items, err := client.ParseBatchLines(bytes.NewReader(data))
	if err != nil {
		return &Error{Code: ExitUsage, Err: err}
	}
	sr, err := o.so.file().Continue(o.co.forRun)
	if err != nil {
		return o.so.runError(err, "")
	}
	defer sr.Release()
	res, rerr := sr.Run.RecordBatch(ctx, items)
	if len(res) > 0 { // records made before a refusal stay made
		if err := sr.Save(); err != nil {
			return &Error{Code: ExitFailure, Err: err}
		}
	}
	if rerr != nil {
		return o.so.runError(rerr, "the run is closed; open a new one with 'svc run open'")
	}
	if o.co.output == outputJSON {
		return a.writeJSON(res)
	}
	for _, r := range res {
		present.Recorded(a.streams.Out, r)
	}
	return nil
}

// runRecord records one check execution (or, with --model, a classifier
// check) on the state file's run.
func (a *app) runRecord(ctx context.Context, o *recordOptions) error {
	if o.batch != "" {
		return a.runRecordBatch(ctx, o)
	}
	if o.disclosuresOut != "" {
		if _, err := os.Lstat(o.disclosuresOut); err == nil {
			return errorf(ExitUsage, "name a new file: it holds secrets (the salts) and is never replaced", "--disclosures-out %s exists", o.disclosuresOut)
		}
	}
	inputFile := o.inputFile
	if o.input == "" && inputFile == "" {
		inputFile = "-" // no input flag: standard input
	}
	input, err := a.readInputText(o.input, inputFile, false)
	if err != nil {
		return err
	}
	opts, err := o.recordOpts()
	if err != nil {
		return err
	}
	if o.manifestFile != "" {
		data, err := a.readInput(o.manifestFile, "manifest")
		if err != nil {
			return err
		}
		m, err := client.ParseManifest(data)
		if err != nil {
			return &Error{Code: ExitUsage, Err: fmt.Errorf("%s: %w", o.manifestFile, err)}
		}
		if o.manifestID == "" {
			if o.manifestID, err = client.ManifestID(m); err != nil {
				return &Error{Code: ExitUsage, Err: fmt.Errorf("%s: %w", o.manifestFile, err)}
			}
		}
		opts = append(opts, client.WithManifest(m))
	}
	if vpec.Visibility(o.visibility) == vpec.Transparent && a.streams.ErrIsTTY {
		fmt.Fprintf(a.streams.Err, "%s: warning: --visibility transparent: the input (and --output-file) will be visible to anyone holding the VPEC; use it for non-sensitive data only\n", a.name)
	}
	sr, err := o.so.file().Continue(o.co.forRun)
	if err != nil {
		return o.so.runError(err, "")
	}
	defer sr.Release()
	if o.inf.model != "" {
		return a.recordInference(ctx, o, sr, input)
	}
	res, err := sr.Run.Record(ctx, o.check, o.manifestID, vpec.CheckResult(o.result), input, opts...)
	if err != nil {
		if errors.Is(err, client.ErrInvalidRecord) && vpec.Visibility(o.visibility) == vpec.Selective {
			return &Error{Code: ExitUsage, Err: err, Hint: "a selective record needs --manifest-file (the manifest whose stage declares disclose fields) and a JSON object input"}
		}
		return o.so.runError(err, "the run is closed; open a new one with 'svc run open'")
	}
	if err := sr.Save(); err != nil {
		return &Error{Code: ExitFailure, Err: err}
	}
	if o.disclosuresOut != "" {
		data, err := document.MarshalIndent(res.AllDisclosures)
		if err == nil {
			err = fsutil.WriteNew(o.disclosuresOut, data, 0o600)
		}
		if err != nil {
			return &Error{Code: ExitFailure, Err: fmt.Errorf("the record is made; its disclosures were not written: %w", err)}
		}
	}
	if o.co.output == outputJSON {
		return a.writeJSON(res)
	}
	present.Recorded(a.streams.Out, res)
	return nil
}
