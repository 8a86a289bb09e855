package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/service/dashboard"
	"github.com/svc-gov/svc/pkg/service/logwriter"
	"github.com/svc-gov/svc/pkg/service/metrics"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/server/setup"
	"github.com/svc-gov/svc/pkg/service/telemetry"
)

// serveOptions are the flags of svc serve.
type serveOptions struct {
	data         dataOptions
	keys         keyOptions
	rootKey      rootKeyOptions
	addr         string
	maxBodyBytes int64
	// maxRecordsPerRun bounds the records of a run (D1).
	maxRecordsPerRun int64
	logFormat        string
	shutdown         time.Duration
	addrFile         string
	sandboxRate      float64
	sandboxBurst     int
	tsaURLs          []string
	tsaRoots         []string
	// nextKeys are the next VPEC keys (--next-signing-key): each signs
	// from the instant a rotation of the trust root makes it valid.
	nextKeys []string
	// tsaFallbackBuiltin lets the built-in TSA answer when every --tsa-url
	// fails (each fallback logged as a warning).
	tsaFallbackBuiltin bool
	// metricsAddr serves /metrics on its own listener instead of the
	// API's; otelEndpoint exports traces over OTLP/HTTP.
	metricsAddr, otelEndpoint string
	// tlog configures the transparency log; noTlog turns it off.
	tlog   setup.LogOptions
	noTlog bool
}

func (a *app) serveCmd() *cobra.Command {
	cmd := newCmdServe(a, nil)
	var data dataOptions
	var ko keyOptions
	trust := &cobra.Command{
		Use:   "trust-bundle",
		Short: "Print the trust bundle that verifies this service's VPECs and profiles",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := server.ReadMaterialKeys(cmdContext(cmd), data.dir(), ko.config(a.streams.Getenv))
			if err != nil {
				return keyError(err)
			}
			defer m.Close()
			if err := addLogKey(m, data.dir()); err != nil {
				return &Error{Code: ExitFailure, Err: err}
			}
			_, err = a.streams.Out.Write(m.Trust.Marshal())
			return err
		},
	}
	trust.Flags().StringVar(&data.dataDir, "data-dir", "", "service state directory (default: svc in the user data directory; env SVC_DATA_DIR)")
	ko.add(trust)
	cmd.AddCommand(trust)
	return cmd
}

// newCmdServe builds svc serve (without its trust-bundle subcommand);
// runF, when not nil, gets the parsed options instead of the run (a
// test's seam).
func newCmdServe(a *app, runF func(*serveOptions) error) *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the Governance Proof Service",
		Long: `Run the Governance Proof Service: the HTTP API v1 (docs/API.md) on the
given address, with SQLite in the data directory unless --database names a
PostgreSQL server. The first start creates the service signing key and a
built-in RFC 3161 timestamp authority in the data directory. The trust
bundle that verifies this service's VPECs is served at
/.well-known/svc/trust-bundle.pem and printed by 'svc serve trust-bundle'.

Every VPEC a close issues is appended to the service's transparency log
(docs/TRANSPARENCY.md), kept in the data directory (its key too, created on
first start and added to the trust bundle) unless --tlog-mysql names a
database several server processes share; the close answers once the VPEC
is stored and its leaf is appended in the background (with
?wait=log-index the close answers with its log index), its receipt follows
at GET /api/v1/vpecs/{id}/receipt, and the log is served read-only under
/log/. --no-tlog turns it off.

SIGINT or SIGTERM stops it gracefully: requests in flight finish, and so do
the transparency log appends of the closes answered.`,
		Example: `  svc serve
  svc serve --addr 127.0.0.1:9090 --data-dir /var/lib/svc
  svc serve --database postgres://svc@db.internal:5432/svc`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return a.runServe(cmdContext(cmd), o)
		},
	}
	o.data.add(cmd)
	o.keys.add(cmd)
	o.rootKey.add(cmd)
	cmd.Flags().StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on")
	cmd.Flags().Int64Var(&o.maxBodyBytes, "max-body-bytes", server.DefaultMaxBodyBytes, "largest request body accepted (larger get 413)")
	cmd.Flags().Int64Var(&o.maxRecordsPerRun, "max-records-per-run", server.DefaultMaxRecordsPerRun, "most records one run holds (more get 422 run_too_large); the VPEC size bound applies too")
	cmd.Flags().StringVar(&o.logFormat, "log-format", "text", "log format on stderr: text or json")
	cmd.Flags().DurationVar(&o.shutdown, "shutdown-timeout", 30*time.Second, "how long in-flight requests may take to finish on shutdown")
	cmd.Flags().Float64Var(&o.sandboxRate, "sandbox-rate", server.DefaultSandboxRate, "requests per second allowed to each sandbox (pk_sb_) key; 0 disables the limit")
	cmd.Flags().IntVar(&o.sandboxBurst, "sandbox-burst", server.DefaultSandboxBurst, "burst allowed to each sandbox key")
	cmd.Flags().StringArrayVar(&o.tsaURLs, "tsa-url", nil, "external RFC 3161 authority to timestamp VPECs and sessions with, tried in order (repeatable); when all fail, sealing fails (502) unless --tsa-fallback-builtin")
	cmd.Flags().BoolVar(&o.tsaFallbackBuiltin, "tsa-fallback-builtin", false, "when every --tsa-url fails, timestamp with the built-in authority instead (a warning is logged each time; the token names the built-in TSA)")
	cmd.Flags().StringArrayVar(&o.nextKeys, "next-signing-key", nil, "key URI of a next VPEC signing key (repeatable), opened at start: the server signs with it from the instant 'svc keys rotate' makes it valid, once it has reloaded the trust root (SIGHUP), without a restart (docs/KEYS.md, Rotation)")
	cmd.Flags().StringArrayVar(&o.tsaRoots, "tsa-root", nil, "PEM root certificate of an external authority, published in the trust bundle (repeatable)")
	cmd.Flags().StringVar(&o.metricsAddr, "metrics-addr", "", "serve the Prometheus metrics at /metrics on this address instead of on --addr (docs/OBSERVABILITY.md)")
	cmd.Flags().StringVar(&o.otelEndpoint, "otel-endpoint", "", "export traces over OTLP/HTTP to this collector URL, e.g. http://127.0.0.1:4318 (default: off, or the OTEL_EXPORTER_OTLP_ENDPOINT environment variable)")
	cmd.Flags().BoolVar(&o.noTlog, "no-tlog", false, "run without the transparency log: VPECs get no log index and no receipt (docs/TRANSPARENCY.md)")
	cmd.Flags().StringVar(&o.tlog.Origin, "tlog-origin", "", "name of the transparency log, a schema-less URL such as svc.example.com/log, fixed when the log is created (default svc.invalid/log/<signing key id>)")
	cmd.Flags().StringVar(&o.tlog.MySQLDSN, "tlog-mysql", "", "keep the transparency log in this MySQL or MariaDB database (user:password@tcp(host:3306)/db), which several server processes share; default: a directory in the data directory, one process")
	cmd.Flags().StringVar(&o.tlog.WitnessPolicyFile, "witness-policy", "", "witness policy file: the witnesses each checkpoint is sent to and how many must cosign (docs/TRANSPARENCY.md, Witnesses)")
	cmd.Flags().DurationVar(&o.tlog.CheckpointInterval, "tlog-checkpoint-interval", logwriter.DefaultCheckpointInterval, "how often the transparency log publishes a checkpoint (receipts wait about this long; at least 100ms, 1s with --tlog-mysql)")
	cmd.Flags().DurationVar(&o.tlog.WitnessTimeout, "witness-timeout", logwriter.DefaultWitnessTimeout, "how long one round of sending a checkpoint to the witnesses may take")
	cmd.Flags().StringVar(&o.addrFile, "addr-file", "", "write the address listened on to this file once serving (useful with --addr 127.0.0.1:0)")
	return cmd
}

// validate checks the flags alone.
func (o *serveOptions) validate() error {
	switch {
	case o.logFormat != "text" && o.logFormat != "json":
		return errorf(ExitUsage, "use --log-format text or json", "unknown log format %q", o.logFormat)
	case o.tsaFallbackBuiltin && len(o.tsaURLs) == 0:
		return errorf(ExitUsage, "add --tsa-url URL, or leave --tsa-fallback-builtin out: the built-in authority is used by default", "--tsa-fallback-builtin needs --tsa-url")
	case o.metricsAddr != "" && o.metricsAddr == o.addr:
		return errorf(ExitUsage, "give --metrics-addr another address than --addr, or leave it out to serve /metrics on --addr", "--metrics-addr %s is --addr", o.metricsAddr)
	case o.otelEndpoint != "" && !telemetry.ValidEndpoint(o.otelEndpoint):
		return errorf(ExitUsage, "give the collector's OTLP/HTTP URL, e.g. --otel-endpoint http://127.0.0.1:4318", "--otel-endpoint %q is not an http:// or https:// URL", o.otelEndpoint)
	case o.noTlog && (o.tlog.Origin != "" || o.tlog.MySQLDSN != "" || o.tlog.WitnessPolicyFile != ""):
		return errorf(ExitUsage, "leave --no-tlog out to configure the log", "--no-tlog with --tlog-origin, --tlog-mysql or --witness-policy")
	case !o.noTlog && o.tlog.CheckpointInterval < logwriter.MinCheckpointInterval:
		return errorf(ExitUsage, "give --tlog-checkpoint-interval of at least 100ms", "--tlog-checkpoint-interval %v is below the log's minimum", o.tlog.CheckpointInterval)
	case !o.noTlog && o.tlog.MySQLDSN != "" && o.tlog.CheckpointInterval < logwriter.MinCheckpointIntervalMySQL:
		return errorf(ExitUsage, "give --tlog-checkpoint-interval of at least 1s with --tlog-mysql", "--tlog-checkpoint-interval %v is below the MySQL backend's minimum", o.tlog.CheckpointInterval)
	case o.maxRecordsPerRun < 1:
		return &Error{Code: ExitUsage, Err: fmt.Errorf("--max-records-per-run must be at least 1, is %d", o.maxRecordsPerRun)}
	}
	return nil
}

// setupWait is how long svc serve waits for another process's setup of
// the same data directory (setup.LockSetup).
const setupWait = 2 * time.Minute

// runServe serves the API until ctx ends or a signal stops it
// (setup.Serve).
func (a *app) runServe(ctx context.Context, o *serveOptions) error {
	var handler slog.Handler = slog.NewTextHandler(a.streams.Err, nil)
	if o.logFormat == "json" {
		handler = slog.NewJSONHandler(a.streams.Err, nil)
	}
	log := slog.New(handler)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	if o.data.database == "" {
		// One process per SQLite data directory: a second serve would
		// share the database file and its key material unannounced.
		unlock, err := setup.LockDataDir(o.data.dir())
		if errors.Is(err, setup.ErrLocked) {
			return &Error{Code: ExitFailure, Err: err, Hint: "stop it first, or serve several processes from one PostgreSQL database (--database postgres://...)"}
		}
		if err != nil {
			return &Error{Code: ExitFailure, Err: err, Hint: "check the --data-dir permissions"}
		}
		defer unlock()
	}
	st, where, err := o.data.open(ctx, a.streams.Err)
	if err != nil {
		return err
	}
	defer st.Close()
	// Servers starting at once on one new data directory (PostgreSQL)
	// create its keys and trust root once: the others wait, then load them.
	unlockSetup, err := setup.LockSetup(ctx, o.data.dir(), setupWait)
	if errors.Is(err, setup.ErrSetupWait) {
		return &Error{Code: ExitFailure, Err: err, Hint: "another svc serve holds " + setup.SetupLockFile + " while it opens its keys (an HSM that does not answer?); stop it, or start again once it serves"}
	}
	if err != nil {
		return &Error{Code: ExitFailure, Err: err, Hint: "check the --data-dir permissions"}
	}
	defer unlockSetup()
	// A database that already belongs to a service never gets new keys
	// from a server with an empty data directory: they would not verify
	// against the service's trust bundle.
	// (Keys held outside the data directory are checked against the
	// recorded identity by CheckIdentity below.)
	if o.keys.vpec == "" && o.keys.tsa == "" {
		if err := setup.CheckMaterialPresent(ctx, st, o.data.dir()); err != nil {
			return identityError(err, o.data.dir())
		}
	}
	// Every configured key is opened and made to sign a probe: one that
	// cannot stops the start, naming the key and why.
	kc := o.keys.config(a.streams.Getenv)
	kc.NextVPEC = o.nextKeys
	m, created, err := server.OpenMaterial(ctx, o.data.dir(), kc, true)
	if err != nil {
		return keyError(err)
	}
	defer m.Close()
	if created.Any() {
		// Trust is explicit: new key material is announced, never silent.
		fmt.Fprintf(a.streams.Err, "%s: first start in %s: created %s; publish the new trust bundle: %s serve trust-bundle --data-dir %s\n",
			a.name, o.data.dir(), describeCreated(created, m), a.name, o.data.dir())
		log.Warn("created new service key material", "signing_key", m.Signer.KeyID(), "key_file", created.SigningKey,
			"profile_key_file", created.ProfileKey, "log_key_file", created.LogKey, "tsa_dir", created.TSA)
	}
	recorded, err := setup.CheckIdentity(ctx, st, m, o.data.dir(), time.Now())
	if err != nil {
		return identityError(err, o.data.dir())
	}
	if recorded {
		log.Info("recorded the service identity in the database: every server on it must hold this key material", "signing_key", m.Signer.KeyID(), "store", where)
	}
	root, rootDoc, wrote, err := server.EnsureTrustRoot(ctx, o.data.dir(), m, o.rootKey.uri, o.keys.config(a.streams.Getenv).Options, time.Now())
	if err != nil {
		return keyError(err)
	}
	if wrote {
		fmt.Fprintf(a.streams.Err, "%s: wrote the trust root version %d of %s (%s), served at %s\n", a.name, root.Version, o.data.dir(), server.TrustRootFile, "/.well-known/svc/trust-root.json")
	}
	unlockSetup()
	reg := metrics.New(metrics.Options{})
	tracing, stopTracing, err := telemetry.Setup(ctx, telemetry.Config{Endpoint: o.otelEndpoint, ServiceName: "svc", Version: BuildVersion().Version})
	if err != nil {
		return &Error{Code: ExitUsage, Err: err, Hint: "give --otel-endpoint as the collector's OTLP/HTTP URL, e.g. http://127.0.0.1:4318"}
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := stopTracing(sctx); err != nil {
			log.Warn("flushing traces", "error", err.Error())
		}
	}()
	tsa := setup.ObservedTimestamper(o.tsaURLs, o.tsaFallbackBuiltin, m.TSA, log, reg, tracing)
	if len(o.tsaURLs) == 0 {
		log.Info("timestamping with the built-in TSA", "tsa", m.TSA.Certificate().Subject.CommonName)
	} else {
		log.Info("timestamping with external TSAs", "tsa_urls", strings.Join(o.tsaURLs, " "), "fallback_builtin", o.tsaFallbackBuiltin)
	}
	if err := setup.AddTSARoots(m, o.tsaRoots); err != nil {
		return &Error{Code: ExitUsage, Err: fmt.Errorf("--tsa-root: %w", err), Hint: "give the PEM root certificate of the external authority"}
	}
	if len(o.tsaRoots) > 0 {
		if root, rootDoc, wrote, err = server.EnsureTSARootsInRoot(ctx, o.data.dir(), m.Trust.Roots(), o.rootKey.uri, o.keys.config(a.streams.Getenv).Options, time.Now()); err != nil {
			return keyError(err)
		} else if wrote {
			fmt.Fprintf(a.streams.Err, "%s: wrote the trust root version %d of %s with the --tsa-root certificates\n", a.name, root.Version, o.data.dir())
		}
	}
	var tlog *server.TransparencyLog
	var watchLog *setup.Log
	if !o.noTlog {
		o.tlog.OnWitness = func(e logwriter.WitnessEvent) { reg.Witness(logwriter.WitnessResult(e)) }
		tl, err := setup.OpenLog(ctx, o.data.dir(), m.Signer.KeyID(), m.LogSigner, o.tlog, log)
		if err != nil {
			return &Error{Code: ExitFailure, Err: err, Hint: "check the transparency log options (--tlog-origin, --tlog-mysql, --witness-policy), or run with --no-tlog"}
		}
		defer func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.shutdown)
			defer cancel()
			if err := tl.Close(cctx); err != nil {
				log.Warn("closing the transparency log", "error", err.Error())
			}
		}()
		m.Trust.AddLogKey(tl.Material.Key)
		if root, rootDoc, wrote, err = server.EnsureLogKeyInRoot(ctx, o.data.dir(), tl.Material.Key, o.rootKey.uri, o.keys.config(a.streams.Getenv).Options, time.Now()); err != nil {
			return keyError(err)
		} else if wrote {
			fmt.Fprintf(a.streams.Err, "%s: wrote the trust root version %d of %s with the transparency log key %s\n", a.name, root.Version, o.data.dir(), tl.Material.Key)
		}
		watchLog = tl
		if tl.Created {
			fmt.Fprintf(a.streams.Err, "%s: created the transparency log key %s; publish the new trust bundle: %s serve trust-bundle --data-dir %s\n", a.name, tl.Material.Key, a.name, o.data.dir())
			log.Warn("created a new transparency log key", "log_key", tl.Material.Key.String())
		}
		tlog = &server.TransparencyLog{Log: tl.Log, Secret: tl.Material.Secret, Store: st, ReceiptRetryAfter: o.tlog.CheckpointInterval,
			BatchWindow: o.tlog.CheckpointInterval / 4}
		log.Info("transparency log open", "log_key", tl.Material.Key.String(), "mysql", o.tlog.MySQLDSN != "", "witness_policy", o.tlog.WitnessPolicyFile)
	}
	limit := server.RateLimit{PerSecond: o.sandboxRate, Burst: o.sandboxBurst}
	if o.sandboxRate <= 0 {
		limit.PerSecond = -1
	}
	srv, err := server.New(server.Config{
		Storage: server.StorageOf(st), Signer: m.Signer, Keys: m.Keys(root), Timestamper: tsa, Trust: m.Trust, TrustRoot: rootDoc, Logger: log,
		MaxBodyBytes: o.maxBodyBytes, Version: BuildVersion().Version, SandboxLimit: limit,
		RunLimits: server.RunLimits{MaxRecords: o.maxRecordsPerRun}, Log: tlog,
		Metrics: reg, MetricsElsewhere: o.metricsAddr != "", Tracing: tracing,
	})
	if err != nil {
		return &Error{Code: ExitFailure, Err: err}
	}
	// SIGHUP: take the trust root version svc keys rotate or compromise
	// wrote; the key ring signs by its windows from then on.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				r, changed, err := srv.ReloadTrustRoot(o.data.dir())
				switch {
				case err != nil:
					log.Error("SIGHUP: trust root not reloaded; the server keeps the version in use", "error", err.Error())
				case changed:
					log.Info("SIGHUP: trust root reloaded", "version", r.Version)
				default:
					log.Info("SIGHUP: trust root unchanged", "version", r.Version)
				}
			}
		}
	}()
	for _, ns := range m.NextSigners {
		log.Info("next VPEC signing key ready: it signs from the start of its window in the trust root", "key", ns.KeyID(), "in_root", root.Key(trustroot.PurposeVPEC, ns.KeyID()) != nil)
	}
	if o.metricsAddr != "" {
		maddr, _, err := setup.ServeMetrics(ctx, o.metricsAddr, reg.Handler())
		if err != nil {
			return &Error{Code: ExitFailure, Err: err, Hint: "choose another --metrics-addr"}
		}
		log.Info("serving metrics", "addr", maddr.String(), "path", server.MetricsPath)
	}
	// VPECs a crash left stored but not logged go into the log before
	// anything else is served.
	if n, err := srv.AppendBacklog(ctx); err != nil {
		return &Error{Code: ExitFailure, Err: err, Hint: "the transparency log could not be written: check its directory or database"}
	} else if n > 0 {
		log.Warn("appended stored VPECs missing from the transparency log (a crash between storing and logging them)", "vpecs", n)
	}
	if tlog != nil {
		// Stored VPECs a failed background append left out go in at the
		// next sweep.
		go srv.KeepLogging(ctx, o.tlog.CheckpointInterval)
	}
	if watchLog != nil {
		watchLog.WatchCheckpoints(ctx, o.tlog.CheckpointInterval, func(size uint64, at time.Time) {
			reg.LogCheckpoint(at)
			srv.CheckpointPublished(size, at)
		})
	}
	err = setup.Serve(ctx, srv, setup.HTTP{Addr: o.addr, ShutdownTimeout: o.shutdown, Listening: func(addr net.Addr) error {
		fmt.Fprintf(a.streams.Out, "svc: listening on http://%s (%s, signing key %s)\n", addr, where, m.Signer.KeyID())
		fmt.Fprintf(a.streams.Out, "svc: dashboard at http://%[1]s/dashboard/ (sign in with an API key), offline verifier page at http://%[1]s/verify\n", addr)
		if !dashboard.EmbeddedVerifyPage() {
			// go build / go install: the page is generated, not committed.
			fmt.Fprintf(a.streams.Out, "svc: this svc was built without the offline verifier page: /verify says how to build it (make build, or make web before go build)\n")
			log.Warn("the offline verifier page is not built into this binary: /verify serves a page saying how to build it", "build", "make build (make web, then go build)")
		}
		log.Info("serving", "addr", addr.String(), "store", where, "signing_key", m.Signer.KeyID(), "data_dir", o.data.dir())
		if o.addrFile != "" {
			if err := os.WriteFile(o.addrFile, []byte(addr.String()+"\n"), 0o644); err != nil {
				return fmt.Errorf("--addr-file: %w", err)
			}
		}
		return nil
	}}, log)
	if tlog != nil {
		// Closes answered before their leaf was appended: finish the
		// appends before the log closes (what is cut short is appended at
		// the next start).
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.shutdown)
		if werr := srv.WaitLogged(wctx); werr != nil {
			log.Warn("stopping with transparency log appends unfinished", "error", werr.Error())
		}
		cancel()
	}
	if errors.Is(err, setup.ErrListen) {
		return &Error{Code: ExitFailure, Err: err, Hint: "choose another --addr, e.g. 127.0.0.1:0 for any free port"}
	}
	if err != nil {
		return &Error{Code: ExitFailure, Err: err}
	}
	return nil
}

// addLogKey adds the data directory's transparency log key, if it has a
// log, to m's trust bundle.
func addLogKey(m *server.Material, dataDir string) error {
	k, ok, err := server.ReadLogKey(dataDir, m.LogSigner)
	if ok {
		m.Trust.AddLogKey(k)
	}
	return err
}

// describeCreated says what OpenMaterial created.
func describeCreated(c server.Created, m *server.Material) string {
	var parts []string
	if c.SigningKey != "" {
		parts = append(parts, fmt.Sprintf("the service signing key %s (%s, signs VPECs)", m.Signer.KeyID(), c.SigningKey))
	}
	if c.ProfileKey != "" {
		parts = append(parts, fmt.Sprintf("the profile signing key %s (%s)", m.ProfileSigner.KeyID(), c.ProfileKey))
	}
	if c.LogKey != "" {
		parts = append(parts, "the log checkpoint key ("+c.LogKey+")")
	}
	if c.TSA != "" {
		parts = append(parts, "the built-in timestamp authority "+c.TSA)
	}
	return strings.Join(parts, ", ")
}
