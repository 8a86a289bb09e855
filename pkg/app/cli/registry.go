package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/service/notify"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
)

// publishOptions are the flags and argument of svc registry publish.
type publishOptions struct {
	file     string // the profile
	data     dataOptions
	keys     keyOptions
	signedBy string
	smtp     string
	output   string
}

func (a *app) registryCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "registry", Short: "The model profile registry"}
	cmd.AddCommand(newCmdRegistryPublish(a, nil))
	cmd.AddCommand(a.registryClientCmds()...)
	cmd.AddCommand(newCmdPublishCircuit(a, nil), newCmdGetCircuit(a, nil))
	return cmd
}

// newCmdRegistryPublish builds svc registry publish; runF, when not nil,
// gets the parsed options instead of the run (a test's seam).
func newCmdRegistryPublish(a *app, runF func(*publishOptions) error) *cobra.Command {
	o := &publishOptions{}
	publish := &cobra.Command{
		Use:   "publish PROFILE",
		Short: "Sign a calibrated profile with the service key and publish it (admin)",
		Long: `Sign a calibrated model profile with the service's signing key and publish
it in the service's registry (the same data directory or database as
'svc serve'). From then on lookups of its models find it, checks on them no
longer raise model_profile_missing, every open calibration request for its
models is marked published, and each requester with a notify e-mail gets a
notice through the SMTP server given by --smtp.`,
		Example: `  svc registry publish profile.json --data-dir /var/lib/svc --smtp 'smtp://mail.internal:25?from=registry@example.com'`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.file = args[0]
			if err := checkOutput(o.output); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return a.runRegistryPublish(cmdContext(cmd), o)
		},
	}
	o.data.add(publish)
	o.keys.add(publish)
	publish.Flags().StringVar(&o.signedBy, "signed-by", "localhost"+"/.well-known/svc/trust-bundle.pem", "locator of the public key written in signed_by (host and path of the trust bundle)")
	publish.Flags().StringVar(&o.smtp, "smtp", "", "SMTP server for publication notices: smtp://[user:password@]host:port?from=addr (env SVC_SMTP)")
	addOutputFlag(publish, &o.output)
	return publish
}

// runRegistryPublish signs the profile with the data directory's key and
// publishes it (server.Publish).
func (a *app) runRegistryPublish(ctx context.Context, o *publishOptions) error {
	doc, err := a.readInput(o.file, "profile")
	if err != nil {
		return err
	}
	p, err := profile.Parse(doc) // any old signature is replaced by Publish
	if err != nil {
		return &Error{Code: ExitUsage, Err: err, Hint: "the profile must be valid (see docs/FORMATS.md, Model profile); any old signature is replaced"}
	}
	mailer, err := notify.Parse(o.smtp)
	if err != nil {
		return &Error{Code: ExitUsage, Err: err}
	}
	m, err := server.ReadMaterialKeys(ctx, o.data.dir(), o.keys.config(a.streams.Getenv))
	if err != nil {
		return keyError(err)
	}
	defer m.Close()
	st, _, err := o.data.openExisting(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := checkIdentity(ctx, st, m, o.data.dir()); err != nil {
		return err
	}
	res, err := server.Publish(ctx, st, m.ProfileSigner, o.signedBy, p, mailer, time.Now())
	if err != nil {
		if errors.Is(err, store.ErrExists) {
			return &Error{Code: ExitUsage, Err: err, Hint: "profiles are immutable: publish a new version (bump v<major>.<minor>.<patch> in profile_id)"}
		}
		return &Error{Code: ExitFailure, Err: err}
	}
	if o.output == outputJSON {
		return a.writeJSON(res)
	}
	fmt.Fprintf(a.streams.Out, "published %s (signed by key %s) for %d model(s); %d calibration request(s) marked published, %d notice(s) sent\n",
		res.ProfileID, m.ProfileSigner.KeyID(), len(res.Models), len(res.RequestsPublished), res.NoticesSent)
	for _, pr := range res.RequestsPartial {
		fmt.Fprintf(a.streams.Out, "request %s covered in part: %s calibrated; still to calibrate: %s (left in_progress)\n",
			pr.RequestID, strings.Join(pr.Covered, ", "), strings.Join(pr.Missing, ", "))
	}
	for _, e := range res.NoticeErrors {
		fmt.Fprintf(a.streams.Err, "%s: warning: notice not sent: %s\n", a.name, e)
	}
	if n := len(res.NoticesNotSent); n > 0 {
		fmt.Fprintf(a.streams.Err, "%s: warning: %d requester(s) not notified, no --smtp given: %s\n", a.name, n, strings.Join(res.NoticesNotSent, ", "))
	}
	return nil
}

// calStatusOptions are the flags and arguments of svc admin calibration
// status.
type calStatusOptions struct {
	requestID, status string
	data              dataOptions
	org               string
	note              string
	output            string
}

func (a *app) adminCalibrationCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "calibration", Short: "Manage calibration requests"}
	cmd.AddCommand(newCmdCalibrationStatus(a, nil))
	return cmd
}

// newCmdCalibrationStatus builds svc admin calibration status; runF, when
// not nil, gets the parsed options instead of the run (a test's seam).
func newCmdCalibrationStatus(a *app, runF func(*calStatusOptions) error) *cobra.Command {
	o := &calStatusOptions{}
	status := &cobra.Command{
		Use:   "status REQUEST_ID (in_progress | rejected)",
		Short: "Move a calibration request to in_progress, or reject it with --note",
		Example: `  svc admin calibration status cal_req_0b5e... in_progress --org acme
  svc admin calibration status cal_req_0b5e... rejected --org acme --note "model file not reachable"`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.requestID, o.status = args[0], args[1]
			if err := checkOutput(o.output); err != nil {
				return err
			}
			if o.org == "" {
				return errorf(ExitUsage, "name the organisation that made the request", "--org is required")
			}
			if runF != nil {
				return runF(o)
			}
			return a.runCalibrationStatus(cmdContext(cmd), o)
		},
	}
	o.data.add(status)
	status.Flags().StringVar(&o.org, "org", "", "organisation that made the request")
	status.Flags().StringVar(&o.note, "note", "", "why (shown to the requester), for rejected")
	addOutputFlag(status, &o.output)
	return status
}

// runCalibrationStatus moves the request (server.SetCalibrationStatus).
func (a *app) runCalibrationStatus(ctx context.Context, o *calStatusOptions) error {
	st, _, err := o.data.openExisting(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	org, err := st.OrgByName(ctx, o.org)
	if err != nil {
		return &Error{Code: ExitUsage, Err: fmt.Errorf("organisation %s: %w", o.org, err)}
	}
	c, err := server.SetCalibrationStatus(ctx, st, org.ID, o.requestID, o.status, o.note, time.Now())
	if err != nil {
		code := ExitFailure
		if errors.Is(err, server.ErrTransition) || errors.Is(err, store.ErrNotFound) {
			code = ExitUsage
		}
		return &Error{Code: code, Err: err}
	}
	if o.output == outputJSON {
		return a.writeJSON(map[string]string{"request_id": c.ID, "status": c.Status, "note": c.Note})
	}
	fmt.Fprintf(a.streams.Out, "%s is now %s%s\n", c.ID, c.Status, strings.TrimSuffix(" ("+c.Note+")", " ()"))
	return nil
}
