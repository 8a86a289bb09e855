package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/client/logmonitor"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/tlog"
)

// logCmd is `svc log`: the auditor's view of the transparency log.
func (a *app) logCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "log", Short: "Check the transparency log: consistency of checkpoints, an organisation's VPECs"}
	cmd.AddCommand(newCmdLogMonitor(a, nil), newCmdLogVerifyConsistency(a, nil), newCmdLogOrgKey(a, nil))
	return cmd
}

// logOrgKeyOptions are the flags of svc log org-key.
type logOrgKeyOptions struct{ co clientOptions }

// newCmdLogOrgKey builds svc log org-key; runF, when not nil, gets the
// parsed options instead of the run (a test's seam).
func newCmdLogOrgKey(a *app, runF func(*logOrgKeyOptions) error) *cobra.Command {
	o := &logOrgKeyOptions{}
	cmd := &cobra.Command{
		Use:   "org-key",
		Short: "Print your organisation's monitoring key for the transparency log, for your auditor",
		Long: `Print the monitoring key of the API key's organisation
(svc-org-key-v1+<org_id>+<hex>; GET /api/v1/log/org-key): an auditor holding
it lists every VPEC of the organisation in the log with 'svc log monitor'.
It reveals which log entries are the organisation's, and nothing else; give
it to your auditors only (docs/TRANSPARENCY.md, Monitoring keys).
--output json adds the log's key and where the log is served.`,
		Example: `  svc log org-key > acme.orgkey`,
		Args:    cobra.NoArgs,
		RunE:    clientRunE(o, &o.co, nil, runF, a.runLogOrgKey),
	}
	o.co.add(cmd)
	return cmd
}

// runLogOrgKey prints Pipeline.LogInfo.
func (a *app) runLogOrgKey(ctx context.Context, o *logOrgKeyOptions) error {
	return o.co.do(func(p *client.Pipeline) error {
		info, err := p.LogInfo(ctx)
		if err != nil {
			return &Error{Code: ExitFailure, Err: err}
		}
		if o.co.output == outputJSON {
			return a.writeJSON(info)
		}
		_, err = fmt.Fprintln(a.streams.Out, info.OrgKey)
		return err
	})
}

// logTrustOptions say which log to trust: its key (from a trust bundle or
// given) and the witness policy its checkpoints must satisfy.
type logTrustOptions struct {
	trustRoot string
	logKey    string
	policy    string
}

func (o *logTrustOptions) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.trustRoot, "trust-root", "", "trust bundle holding the log's key (svc serve trust-bundle)")
	cmd.Flags().StringVar(&o.logKey, "log-key", "", "the log's C2SP note verifier key, <origin>+<hash>+<key>, instead of --trust-root")
	cmd.Flags().StringVar(&o.policy, "witness-policy", "", "witness policy the log's checkpoints must satisfy (default: the log's signature alone)")
}

func (o *logTrustOptions) validate() error {
	if (o.trustRoot == "") == (o.logKey == "") {
		return errorf(ExitUsage, "give the log's key with --trust-root bundle.pem or --log-key <origin>+<hash>+<key>", "name the log's key once: --trust-root or --log-key")
	}
	return nil
}

// verifier builds the tlog verifier of the options.
func (o *logTrustOptions) verifier() (*tlog.Verifier, error) {
	var key tlog.LogKey
	if o.logKey != "" {
		k, err := tlog.ParseLogKey(o.logKey)
		if err != nil {
			return nil, &Error{Code: ExitTrust, Err: fmt.Errorf("--log-key: %w", err)}
		}
		key = k
	} else {
		b, err := signing.LoadBundle(o.trustRoot)
		if err != nil {
			return nil, &Error{Code: ExitTrust, Err: err}
		}
		keys := b.LogKeys()
		if len(keys) != 1 {
			return nil, &Error{Code: ExitTrust, Err: fmt.Errorf("%s holds %d transparency log keys", o.trustRoot, len(keys)),
				Hint: "use the trust bundle of a service with a log (svc serve trust-bundle), or give --log-key"}
		}
		key = keys[0]
	}
	text := []byte("quorum none\n")
	if o.policy != "" {
		var err error
		if text, err = os.ReadFile(o.policy); err != nil {
			return nil, &Error{Code: ExitTrust, Err: fmt.Errorf("--witness-policy: %w", err)}
		}
	}
	p, err := tlog.ParseWitnessPolicy(text)
	if err != nil {
		return nil, &Error{Code: ExitTrust, Err: fmt.Errorf("--witness-policy %s: %w", o.policy, err)}
	}
	v, err := tlog.NewVerifier(key, p)
	if err != nil {
		return nil, &Error{Code: ExitTrust, Err: err}
	}
	return v, nil
}

// logSource is the log at loc: an http(s) URL where it is served (a
// service's /log/), or a directory holding it.
func logSource(loc string) (logmonitor.Source, error) {
	if strings.HasPrefix(loc, "http://") || strings.HasPrefix(loc, "https://") {
		if !strings.HasSuffix(loc, "/") {
			loc += "/"
		}
		s, err := logmonitor.HTTPSource(loc, nil)
		if err != nil {
			return nil, &Error{Code: ExitUsage, Err: err, Hint: "give --log https://svc.example.com/log/"}
		}
		return s, nil
	}
	if fi, err := os.Stat(loc); err != nil || !fi.IsDir() {
		return nil, errorf(ExitUsage, "give --log the URL the log is served at (https://svc.example.com/log/) or a directory holding it", "--log %q is neither an http(s) URL nor a directory", loc)
	}
	return logmonitor.DirSource(loc), nil
}

// logError maps a monitor's error to its exit code: two histories or a
// shrinking log are INVALID (1), trust failures 3.
func logError(err error) error {
	switch {
	case errors.Is(err, tlog.ErrInconsistent), errors.Is(err, tlog.ErrLogShrank):
		return &Error{Code: ExitInvalid, Err: fmt.Errorf("SPLIT VIEW: %w", err),
			Hint: "the log has shown a history that does not extend the one verified before: keep both checkpoints as evidence and report it to the log's operator and your witnesses"}
	case errors.Is(err, tlog.ErrWrongLog), errors.Is(err, tlog.ErrLogSignature), errors.Is(err, tlog.ErrCosignature), errors.Is(err, tlog.ErrWitnessPolicy):
		return &Error{Code: ExitTrust, Err: err, Hint: "check --trust-root / --log-key and --witness-policy name this log"}
	case errors.Is(err, tlog.ErrMalformed):
		return &Error{Code: ExitUsage, Err: err}
	}
	return &Error{Code: ExitFailure, Err: err}
}

// logMonitorOptions are the flags of svc log monitor.
type logMonitorOptions struct {
	trust     logTrustOptions
	log       string
	org       string
	orgKey    string
	workflows []string
	since     string
	state     string
	output    string
}

// newCmdLogMonitor builds svc log monitor; runF, when not nil, gets the
// parsed options instead of the run (a test's seam).
func newCmdLogMonitor(a *app, runF func(*logMonitorOptions) error) *cobra.Command {
	o := &logMonitorOptions{}
	cmd := &cobra.Command{
		Use:   "monitor --log URL --org-key KEY [--workflow W] [--since CHECKPOINT]",
		Short: "List an organisation's VPECs appended to the transparency log since the last run, checking the log only grew",
		Long: `Read the transparency log from the last checkpoint this monitor verified
(kept in --state) to the log's latest, check that the log only grew (the
entries read, hashed onto the tree verified before, give the latest
checkpoint's root) and list every VPEC of the organisation whose monitoring
key --org-key is (GET /api/v1/log/org-key gives it to the organisation):
id, issue time, environment, clean or dirty. An auditor asks for each one,
so a dirty VPEC cannot be hidden behind a clean one.

A log that shrank, or shows a history that does not extend the one verified
before (a split view, a fork), exits 1 (SPLIT VIEW) and leaves --state as
it was. --since starts from that checkpoint file instead of --state.
See docs/TRANSPARENCY.md.`,
		Example: `  svc log monitor --log "$SVC_BASE_URL/log/" --trust-root trust-bundle.pem --org-key "$(cat acme.orgkey)"
  svc log monitor --log "$SVC_BASE_URL/log/" --trust-root trust-bundle.pem --org-key "$(cat acme.orgkey)" --workflow claims-intake --output json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return a.runLogMonitor(cmdContext(cmd), o)
		},
	}
	o.trust.add(cmd)
	cmd.Flags().StringVar(&o.log, "log", "", "where the log is: the URL a service serves it at (https://svc.example.com/log/) or a directory")
	cmd.Flags().StringVar(&o.orgKey, "org-key", "", "the organisation's monitoring key, svc-org-key-v1+<org_id>+<hex>")
	cmd.Flags().StringVar(&o.org, "org", "", "the organisation's id: checked against --org-key")
	cmd.Flags().StringArrayVar(&o.workflows, "workflow", nil, "list only this workflow's VPECs (repeatable; others are counted)")
	cmd.Flags().StringVar(&o.since, "since", "", "start from this checkpoint file instead of the state")
	cmd.Flags().StringVar(&o.state, "state", "", "file keeping the last verified checkpoint (default: in the user cache directory, per log and organisation)")
	addOutputFlag(cmd, &o.output)
	return cmd
}

func (o *logMonitorOptions) validate() error {
	if err := checkOutput(o.output); err != nil {
		return err
	}
	if o.log == "" || o.orgKey == "" {
		return errorf(ExitUsage, "give --log URL and --org-key KEY", "svc log monitor needs the log (--log) and the organisation's monitoring key (--org-key)")
	}
	k, err := tlog.ParseOrgKey(o.orgKey)
	if err != nil {
		return &Error{Code: ExitUsage, Err: fmt.Errorf("--org-key: %w", err)}
	}
	if o.org != "" && o.org != k.Org() {
		return errorf(ExitUsage, "give the key of --org, or leave --org out", "--org-key is organisation %q's, --org says %q", k.Org(), o.org)
	}
	return o.trust.validate()
}

// statePath is --state, or its default: a file per log and organisation
// in the user cache directory.
func (o *logMonitorOptions) statePath(org string) (string, error) {
	if o.state != "" {
		return o.state, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", &Error{Code: ExitUsage, Err: fmt.Errorf("no user cache directory for the monitor's state: %w", err), Hint: "give --state FILE"}
	}
	h := sha256.Sum256([]byte(o.log + "\n" + org + "\n"))
	return filepath.Join(dir, "svc", "log-monitor", hex.EncodeToString(h[:8])+".checkpoint"), nil
}

// monitorJSON is svc log monitor --output json.
type monitorJSON struct {
	Log            string             `json:"log"`
	FromSize       uint64             `json:"from_size"`
	ToSize         uint64             `json:"to_size"`
	Scanned        uint64             `json:"scanned"`
	State          string             `json:"state"`
	OtherWorkflows int                `json:"other_workflows"`
	Entries        []monitorEntryJSON `json:"entries"`
}

type monitorEntryJSON struct {
	Index       uint64 `json:"log_index"`
	VPECID      string `json:"vpec_id"`
	IssuedAt    string `json:"issued_at"`
	Org         string `json:"org_id"`
	Workflow    string `json:"workflow_id,omitempty"`
	Environment string `json:"environment"`
	Clean       bool   `json:"is_clean"`
	Duplicate   bool   `json:"duplicate,omitempty"`
}

// runLogMonitor runs logmonitor.Watch.
func (a *app) runLogMonitor(ctx context.Context, o *logMonitorOptions) error {
	v, err := o.trust.verifier()
	if err != nil {
		return err
	}
	key, _ := tlog.ParseOrgKey(o.orgKey) // validated
	src, err := logSource(o.log)
	if err != nil {
		return err
	}
	state, err := o.statePath(key.Org())
	if err != nil {
		return err
	}
	opts := logmonitor.Options{Verifier: v, Keys: []tlog.OrgKey{key}, Workflows: o.workflows}
	if o.since != "" {
		if opts.Since, err = os.ReadFile(o.since); err != nil {
			return &Error{Code: ExitUsage, Err: fmt.Errorf("--since: %w", err)}
		}
	}
	res, err := logmonitor.Watch(ctx, src, opts, state)
	if err != nil {
		return logError(err)
	}
	var from uint64
	if res.From != nil {
		from = res.From.Size
	}
	if o.output == outputJSON {
		out := monitorJSON{Log: v.LogKey().Origin(), FromSize: from, ToSize: res.To.Size, Scanned: res.Scanned, State: state,
			OtherWorkflows: res.OtherWorkflows, Entries: []monitorEntryJSON{}}
		for _, e := range res.Entries {
			out.Entries = append(out.Entries, monitorEntryJSON{Index: e.Index, VPECID: e.VPECID, IssuedAt: e.IssuedAt.Format(tlog.IssuedAtLayout),
				Org: e.Org, Workflow: e.Workflow, Environment: e.Environment, Clean: e.Clean, Duplicate: e.Duplicate})
		}
		return a.writeJSON(out)
	}
	fmt.Fprintf(a.streams.Out, "log %s: verified it grew from %d to %d entries (%d read); %d VPECs of %s", v.LogKey().Origin(), from, res.To.Size, res.Scanned, len(res.Entries), key.Org())
	if res.OtherWorkflows > 0 {
		fmt.Fprintf(a.streams.Out, " (%d more of other workflows)", res.OtherWorkflows)
	}
	fmt.Fprintf(a.streams.Out, "\n")
	for _, e := range res.Entries {
		state := "clean"
		if !e.Clean {
			state = "DIRTY"
		}
		wf := e.Workflow
		if wf == "" {
			wf = "-"
		}
		dup := ""
		if e.Duplicate {
			dup = " (duplicate entry)"
		}
		fmt.Fprintf(a.streams.Out, "%d\t%s\t%s\t%s\t%s\t%s%s\n", e.Index, e.VPECID, e.IssuedAt.Format(time.RFC3339), e.Environment, state, wf, dup)
	}
	return nil
}

// logConsistencyOptions are the flags and arguments of svc log
// verify-consistency.
type logConsistencyOptions struct {
	trust      logTrustOptions
	older      string
	newer      string
	proof, log string
}

// newCmdLogVerifyConsistency builds svc log verify-consistency; runF, when
// not nil, gets the parsed options instead of the run (a test's seam).
func newCmdLogVerifyConsistency(a *app, runF func(*logConsistencyOptions) error) *cobra.Command {
	o := &logConsistencyOptions{}
	cmd := &cobra.Command{
		Use:   "verify-consistency OLD_CHECKPOINT NEW_CHECKPOINT (--log URL | --proof FILE)",
		Short: "Check that a newer checkpoint of the transparency log extends an older one",
		Long: `Check that NEW_CHECKPOINT extends OLD_CHECKPOINT: both are signed by the
log's key (and satisfy --witness-policy), and the RFC 6962 consistency proof
leads from the older root to the newer. The proof is read from the log's
tiles (--log) or given (--proof: one base64 hash per line, the form
tlog-witness requests carry). Two checkpoints of one size with different
roots, or a proof that does not verify, exit 1 (SPLIT VIEW); a newer
checkpoint that is smaller exits 1 too. See docs/TRANSPARENCY.md.`,
		Example: `  svc log verify-consistency old.checkpoint new.checkpoint --log "$SVC_BASE_URL/log/" --trust-root trust-bundle.pem`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.older, o.newer = args[0], args[1]
			if (o.proof == "") == (o.log == "") {
				return errorf(ExitUsage, "give --log URL (the proof is read from the log) or --proof FILE", "name the consistency proof's source once: --log or --proof")
			}
			if err := o.trust.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return a.runLogVerifyConsistency(cmdContext(cmd), o)
		},
	}
	o.trust.add(cmd)
	cmd.Flags().StringVar(&o.log, "log", "", "read the proof from the log served at this URL (or held in this directory)")
	cmd.Flags().StringVar(&o.proof, "proof", "", "the consistency proof: one standard base64 hash per line")
	return cmd
}

// runLogVerifyConsistency runs logmonitor.CheckConsistency.
func (a *app) runLogVerifyConsistency(ctx context.Context, o *logConsistencyOptions) error {
	v, err := o.trust.verifier()
	if err != nil {
		return err
	}
	older, err := os.ReadFile(o.older)
	if err != nil {
		return &Error{Code: ExitUsage, Err: err}
	}
	newer, err := os.ReadFile(o.newer)
	if err != nil {
		return &Error{Code: ExitUsage, Err: err}
	}
	var proof [][]byte
	var src logmonitor.Source
	if o.proof != "" {
		text, err := os.ReadFile(o.proof)
		if err != nil {
			return &Error{Code: ExitUsage, Err: err}
		}
		if proof, err = tlog.ParseProof(text); err != nil {
			return &Error{Code: ExitUsage, Err: fmt.Errorf("--proof: %w", err)}
		}
		if proof == nil {
			proof = [][]byte{}
		}
	} else if src, err = logSource(o.log); err != nil {
		return err
	}
	oc, nc, err := logmonitor.CheckConsistency(ctx, v, older, newer, proof, src)
	if err != nil {
		return logError(err)
	}
	fmt.Fprintf(a.streams.Out, "CONSISTENT: %s of %d entries extends %s of %d entries (log %s)\n", o.newer, nc.Size, o.older, oc.Size, v.LogKey().Origin())
	return nil
}
