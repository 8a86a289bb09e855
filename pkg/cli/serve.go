package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/internal/fsutil"

	"github.com/svc-gov/svc/pkg/server"
	"github.com/svc-gov/svc/pkg/store"
	"github.com/svc-gov/svc/pkg/store/postgres"
	"github.com/svc-gov/svc/pkg/store/sqlite"
	"github.com/svc-gov/svc/pkg/timestamp"
	"github.com/svc-gov/svc/pkg/timestamp/tsahttp"
	"github.com/svc-gov/svc/pkg/vpec"
)

// SQLiteFile is the database file inside a data directory.
const SQLiteFile = "svc.db"

// dataOptions is the flag group that locates a service's state.
type dataOptions struct {
	dataDir  string
	database string
}

func (o *dataOptions) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.dataDir, "data-dir", "", "service state: signing key, built-in TSA, SQLite database (default: svc in the user data directory; env SVC_DATA_DIR)")
	cmd.Flags().StringVar(&o.database, "database", "", "PostgreSQL DSN (postgres://...) instead of SQLite in the data directory (env SVC_DATABASE)")
}

func (o *dataOptions) dir() string {
	if o.dataDir != "" {
		return o.dataDir
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "svc")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "svc")
	}
	return "svc-data"
}

// open returns the store: PostgreSQL when a DSN is given, else SQLite in
// the data directory. A new SQLite database is created only when notice is
// not nil (the first serve, and the bootstrap commands admin org create and
// admin key create), and then notice is told where, so a mistyped
// --data-dir shows at once; every other command refuses a data directory
// without a database (openExisting).
func (o *dataOptions) open(ctx context.Context, notice io.Writer) (store.Store, string, error) {
	if o.database != "" {
		if !strings.HasPrefix(o.database, "postgres://") && !strings.HasPrefix(o.database, "postgresql://") {
			return nil, "", errorf(ExitUsage, "--database takes a postgres://user@host:port/db DSN; leave it out for SQLite", "unsupported database %q", redactDSN(o.database))
		}
		st, err := postgres.Open(ctx, o.database)
		if err != nil {
			return nil, "", &Error{Code: ExitFailure, Err: err, Hint: "check that PostgreSQL is running and the DSN is right"}
		}
		return st, "postgres " + redactDSN(o.database), nil
	}
	path := filepath.Join(o.dir(), SQLiteFile)
	_, statErr := os.Stat(path)
	isNew := errors.Is(statErr, fs.ErrNotExist)
	if isNew && notice == nil {
		return nil, "", errorf(ExitUsage, "check --data-dir (or SVC_DATA_DIR); a service creates its database on its first 'svc serve'",
			"no service database at %s", path)
	}
	if err := os.MkdirAll(o.dir(), 0o700); err != nil {
		return nil, "", &Error{Code: ExitFailure, Err: fmt.Errorf("data directory: %w", err)}
	}
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, "", &Error{Code: ExitFailure, Err: err, Hint: "check the --data-dir permissions"}
	}
	if isNew {
		fmt.Fprintf(notice, "svc: created a new service database at %s\n", path)
	}
	return st, "sqlite " + path, nil
}

// openExisting opens the store of an existing service: it never creates a
// database.
func (o *dataOptions) openExisting(ctx context.Context) (store.Store, string, error) {
	return o.open(ctx, nil)
}

// redactDSN hides a password in a DSN for messages.
func redactDSN(dsn string) string {
	if at := strings.Index(dsn, "@"); at > 0 {
		if c := strings.Index(dsn[:at], "://"); c >= 0 {
			if p := strings.Index(dsn[c+3:at], ":"); p >= 0 {
				return dsn[:c+3+p+1] + "****" + dsn[at:]
			}
		}
	}
	return dsn
}

type serveOptions struct {
	data         dataOptions
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
	// tsaFallbackBuiltin lets the built-in TSA answer when every --tsa-url
	// fails (each fallback logged as a warning).
	tsaFallbackBuiltin bool
}

func (a *app) serveCmd() *cobra.Command {
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

SIGINT or SIGTERM stops it gracefully: requests in flight finish.`,
		Example: `  svc serve
  svc serve --addr 127.0.0.1:9090 --data-dir /var/lib/svc
  svc serve --database postgres://svc@db.internal:5432/svc`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return a.runServe(cmdContext(cmd), o) },
	}
	o.data.add(cmd)
	cmd.Flags().StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on")
	cmd.Flags().Int64Var(&o.maxBodyBytes, "max-body-bytes", server.DefaultMaxBodyBytes, "largest request body accepted (larger get 413)")
	cmd.Flags().Int64Var(&o.maxRecordsPerRun, "max-records-per-run", server.DefaultMaxRecordsPerRun, "most records one run holds (more get 422 run_too_large); the VPEC size bound applies too")
	cmd.Flags().StringVar(&o.logFormat, "log-format", "text", "log format on stderr: text or json")
	cmd.Flags().DurationVar(&o.shutdown, "shutdown-timeout", 30*time.Second, "how long in-flight requests may take to finish on shutdown")
	cmd.Flags().Float64Var(&o.sandboxRate, "sandbox-rate", server.DefaultSandboxLimit.PerSecond, "requests per second allowed to each sandbox (pk_sb_) key; 0 disables the limit")
	cmd.Flags().IntVar(&o.sandboxBurst, "sandbox-burst", server.DefaultSandboxLimit.Burst, "burst allowed to each sandbox key")
	cmd.Flags().StringArrayVar(&o.tsaURLs, "tsa-url", nil, "external RFC 3161 authority to timestamp VPECs and sessions with, tried in order (repeatable); when all fail, sealing fails (502) unless --tsa-fallback-builtin")
	cmd.Flags().BoolVar(&o.tsaFallbackBuiltin, "tsa-fallback-builtin", false, "when every --tsa-url fails, timestamp with the built-in authority instead (a warning is logged each time; the token names the built-in TSA)")
	cmd.Flags().StringArrayVar(&o.tsaRoots, "tsa-root", nil, "PEM root certificate of an external authority, published in the trust bundle (repeatable)")
	cmd.Flags().StringVar(&o.addrFile, "addr-file", "", "write the address listened on to this file once serving (useful with --addr 127.0.0.1:0)")
	trust := &cobra.Command{
		Use:   "trust-bundle",
		Short: "Print the trust bundle that verifies this service's VPECs and profiles",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := server.ReadMaterial(o.data.dir())
			if err != nil {
				return materialError(err)
			}
			_, err = a.streams.Out.Write(m.Trust.Marshal())
			return err
		},
	}
	trust.Flags().StringVar(&o.data.dataDir, "data-dir", "", "service state directory (default: svc in the user data directory; env SVC_DATA_DIR)")
	cmd.AddCommand(trust)
	return cmd
}

func (a *app) runServe(ctx context.Context, o *serveOptions) error {
	var handler slog.Handler
	switch o.logFormat {
	case "text":
		handler = slog.NewTextHandler(a.streams.Err, nil)
	case "json":
		handler = slog.NewJSONHandler(a.streams.Err, nil)
	default:
		return errorf(ExitUsage, "use --log-format text or json", "unknown log format %q", o.logFormat)
	}
	log := slog.New(handler)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	if o.data.database == "" {
		// One process per SQLite data directory: a second serve would
		// share the database file and its key material unannounced.
		unlock, err := lockDataDir(o.data.dir())
		if err != nil {
			return err
		}
		defer unlock()
	}
	m, created, err := server.LoadOrCreateMaterial(o.data.dir())
	if err != nil {
		return materialError(err)
	}
	if created.Any() {
		// Trust is explicit: new key material is announced, never silent.
		fmt.Fprintf(a.streams.Err, "%s: first start in %s: created the service signing key %s (%s) and the built-in timestamp authority %s; publish the new trust bundle: %s serve trust-bundle --data-dir %s\n",
			a.name, o.data.dir(), m.Signer.KeyID(), created.SigningKey, created.TSA, a.name, o.data.dir())
		log.Warn("created new service key material", "signing_key", m.Signer.KeyID(), "key_file", created.SigningKey, "tsa_dir", created.TSA)
	}
	if o.tsaFallbackBuiltin && len(o.tsaURLs) == 0 {
		return errorf(ExitUsage, "add --tsa-url URL, or leave --tsa-fallback-builtin out: the built-in authority is used by default", "--tsa-fallback-builtin needs --tsa-url")
	}
	st, where, err := o.data.open(ctx, a.streams.Err)
	if err != nil {
		return err
	}
	defer st.Close()
	tsa := serveTimestamper(o, m, log)
	if len(o.tsaURLs) == 0 {
		log.Info("timestamping with the built-in TSA", "tsa", m.TSA.Certificate().Subject.CommonName)
	} else {
		log.Info("timestamping with external TSAs", "tsa_urls", strings.Join(o.tsaURLs, " "), "fallback_builtin", o.tsaFallbackBuiltin)
	}
	for _, f := range o.tsaRoots {
		data, err := os.ReadFile(f)
		if err != nil {
			return &Error{Code: ExitUsage, Err: fmt.Errorf("--tsa-root: %w", err)}
		}
		certs, err := timestamp.ParseCertificatesPEM(data)
		if err != nil {
			return &Error{Code: ExitUsage, Err: fmt.Errorf("--tsa-root %s: %w", f, err), Hint: "give the PEM root certificate of the external authority"}
		}
		for _, c := range certs {
			m.Trust.AddRoot(c)
		}
	}
	limit := server.RateLimit{PerSecond: o.sandboxRate, Burst: o.sandboxBurst}
	if o.sandboxRate <= 0 {
		limit.PerSecond = -1
	}
	if o.maxRecordsPerRun < 1 {
		return &Error{Code: ExitUsage, Err: fmt.Errorf("--max-records-per-run must be at least 1, is %d", o.maxRecordsPerRun)}
	}
	srv, err := server.New(server.Config{
		Store: st, Signer: m.Signer, Timestamper: tsa, Trust: m.Trust, Logger: log,
		MaxBodyBytes: o.maxBodyBytes, Version: BuildVersion().Version, SandboxLimit: limit,
		RunLimits: server.RunLimits{MaxRecords: o.maxRecordsPerRun},
	})
	if err != nil {
		return &Error{Code: ExitFailure, Err: err}
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return &Error{Code: ExitFailure, Err: fmt.Errorf("listen: %w", err), Hint: "choose another --addr, e.g. 127.0.0.1:0 for any free port"}
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute}
	fmt.Fprintf(a.streams.Out, "svc: listening on http://%s (%s, signing key %s)\n", ln.Addr(), where, m.Signer.KeyID())
	fmt.Fprintf(a.streams.Out, "svc: dashboard at http://%[1]s/dashboard/ (sign in with an API key), offline verifier page at http://%[1]s/verify\n", ln.Addr())
	log.Info("serving", "addr", ln.Addr().String(), "store", where, "signing_key", m.Signer.KeyID(), "data_dir", o.data.dir())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	if o.addrFile != "" {
		if err := os.WriteFile(o.addrFile, []byte(ln.Addr().String()+"\n"), 0o644); err != nil {
			hs.Close()
			return &Error{Code: ExitFailure, Err: fmt.Errorf("--addr-file: %w", err)}
		}
	}
	select {
	case err := <-errc:
		return &Error{Code: ExitFailure, Err: err}
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing requests in flight", "timeout", o.shutdown.String())
	sctx, cancel := context.WithTimeout(context.Background(), o.shutdown)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		// Closing the connections cancels the requests still in flight:
		// their timestamp requests are abandoned, and a close among them
		// stays sealed without a VPEC until its client retries.
		hs.Close()
		return &Error{Code: ExitFailure, Err: fmt.Errorf("shutdown: %w", err)}
	}
	log.Info("stopped")
	return nil
}

// serveTimestamper is the authority a service timestamps with: the
// built-in one by default; with --tsa-url the external ones in order and
// nothing else, unless --tsa-fallback-builtin lets the built-in one answer
// when they all fail (logged as a warning every time).
func serveTimestamper(o *serveOptions, m *server.Material, log *slog.Logger) vpec.Timestamper {
	if len(o.tsaURLs) == 0 {
		return m.TSA
	}
	var ext timestamp.Chain
	for _, u := range o.tsaURLs {
		ext = append(ext, &tsahttp.Client{URL: u})
	}
	if !o.tsaFallbackBuiltin {
		return ext
	}
	return &timestamp.Fallback{Primary: ext, Secondary: m.TSA, OnFallback: func(err error) {
		log.Warn("external timestamp authorities failed: timestamped with the built-in TSA (--tsa-fallback-builtin)",
			"tsa", m.TSA.Certificate().Subject.CommonName, "tsa_urls", strings.Join(o.tsaURLs, " "), "error", err.Error())
	}}
}

// materialError is the CLI error for key material that cannot be read.
func materialError(err error) error {
	switch {
	case errors.Is(err, server.ErrNoMaterial):
		return &Error{Code: ExitUsage, Err: err, Hint: "check --data-dir (or SVC_DATA_DIR): key material is created only by the first 'svc serve'"}
	case errors.Is(err, server.ErrPartialMaterial):
		return &Error{Code: ExitFailure, Err: err, Hint: "restore the data directory from a backup"}
	}
	return &Error{Code: ExitFailure, Err: err, Hint: "check the --data-dir permissions"}
}

type adminOptions struct {
	data    dataOptions
	tier    string
	org     string
	sandbox bool
	live    bool
	output  string
}

func (a *app) adminCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "admin", Short: "Manage organisations and API keys of a service"}
	o := &adminOptions{}
	org := &cobra.Command{Use: "org", Short: "Manage organisations"}
	orgCreate := &cobra.Command{
		Use:     "create NAME",
		Short:   "Create an organisation",
		Example: `  svc admin org create acme --tier enterprise`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			st, _, err := o.data.open(cmdContext(cmd), a.streams.Err)
			if err != nil {
				return err
			}
			defer st.Close()
			created, err := server.CreateOrg(cmdContext(cmd), st, args[0], o.tier, time.Now())
			if err != nil {
				if errors.Is(err, store.ErrExists) || errors.Is(err, server.ErrInvalid) {
					return &Error{Code: ExitUsage, Err: err}
				}
				return &Error{Code: ExitFailure, Err: err}
			}
			res := map[string]string{"org_id": created.ID, "name": created.Name, "tier": created.Tier}
			if o.output == outputJSON {
				return a.writeJSON(res)
			}
			fmt.Fprintf(a.streams.Out, "organisation %s created (id %s, tier %s)\n", created.Name, created.ID, created.Tier)
			return nil
		},
	}
	o.data.add(orgCreate)
	orgCreate.Flags().StringVar(&o.tier, "tier", server.TierStandard, "standard or enterprise (calibration turnaround 7d or 48h)")
	addOutputFlag(orgCreate, &o.output)
	org.AddCommand(orgCreate)

	key := &cobra.Command{Use: "key", Short: "Manage API keys"}
	keyCreate := &cobra.Command{
		Use:   "create --org NAME (--sandbox | --live)",
		Short: "Create an API key and print it (once: only its hash is stored)",
		Example: `  svc admin key create --org acme --sandbox
  SVC_API_KEY=$(svc admin key create --org acme --live --output json | jq -r .api_key)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			if o.sandbox == o.live {
				return errorf(ExitUsage, "pass exactly one of --sandbox (pk_sb_, rate-limited) or --live (pk_live_)", "choose the key's environment")
			}
			if o.org == "" {
				return errorf(ExitUsage, "create one with 'svc admin org create NAME'", "--org is required")
			}
			env := vpec.Sandbox
			if o.live {
				env = vpec.Production
			}
			st, _, err := o.data.open(cmdContext(cmd), a.streams.Err)
			if err != nil {
				return err
			}
			defer st.Close()
			secret, k, err := server.CreateAPIKey(cmdContext(cmd), st, o.org, env, time.Now())
			if err != nil {
				if errors.Is(err, store.ErrNotFound) {
					return &Error{Code: ExitUsage, Err: err, Hint: "create it with 'svc admin org create " + o.org + "'"}
				}
				return &Error{Code: ExitFailure, Err: err}
			}
			if o.output == outputJSON {
				return a.writeJSON(map[string]string{"api_key": secret, "key_id": k.ID, "org_id": k.OrgID, "environment": k.Environment})
			}
			fmt.Fprintln(a.streams.Out, secret)
			fmt.Fprintf(a.streams.Err, "%s: API key %s for %s (%s); it is shown once, store it now\n", a.name, k.ID, o.org, k.Environment)
			return nil
		},
	}
	o.data.add(keyCreate)
	keyCreate.Flags().StringVar(&o.org, "org", "", "organisation name")
	keyCreate.Flags().BoolVar(&o.sandbox, "sandbox", false, "a sandbox key (pk_sb_): free, rate-limited")
	keyCreate.Flags().BoolVar(&o.live, "live", false, "a production key (pk_live_)")
	addOutputFlag(keyCreate, &o.output)
	key.AddCommand(keyCreate, a.adminKeyListCmd(), a.adminKeyRevokeCmd())
	cmd.AddCommand(org, key, a.adminCalibrationCmd())
	return cmd
}

func cmdContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// ServeLockFile is the file in a data directory that the serving process
// holds locked (flock) and writes its pid to.
const ServeLockFile = "serve.lock"

// lockDataDir locks dir for this serve process, or says which process
// holds it.
func lockDataDir(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, &Error{Code: ExitFailure, Err: fmt.Errorf("data directory: %w", err)}
	}
	path := filepath.Join(dir, ServeLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, &Error{Code: ExitFailure, Err: fmt.Errorf("lock the data directory: %w", err), Hint: "check the --data-dir permissions"}
	}
	if err := fsutil.LockFile(f); err != nil {
		holder, _ := io.ReadAll(f)
		f.Close()
		if errors.Is(err, fsutil.ErrLocked) {
			who := "another svc serve"
			if pid := strings.TrimSpace(string(holder)); pid != "" {
				who += " (pid " + pid + ")"
			}
			return nil, errorf(ExitFailure, "stop it first, or serve several processes from one PostgreSQL database (--database postgres://...)",
				"%s is serving %s", who, dir)
		}
		return nil, &Error{Code: ExitFailure, Err: fmt.Errorf("lock %s: %w", path, err)}
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() {
		f.Truncate(0)
		fsutil.UnlockFile(f)
		f.Close()
	}, nil
}
