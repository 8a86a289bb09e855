package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/server/setup"
	"github.com/svc-gov/svc/pkg/service/store"
)

// SQLiteFile is the database file inside a data directory.
const SQLiteFile = setup.SQLiteFile

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

// open returns the store (setup.OpenStore): PostgreSQL when a DSN is
// given, else SQLite in the data directory. A new SQLite database is
// created only when notice is not nil (the first serve, and the bootstrap
// commands admin org create and admin key create), and then notice is told
// where, so a mistyped --data-dir shows at once; every other command
// refuses a data directory without a database (openExisting).
func (o *dataOptions) open(ctx context.Context, notice io.Writer) (store.Store, string, error) {
	st, err := setup.OpenStore(ctx, setup.StoreOptions{DataDir: o.dir(), DSN: o.database, Create: notice != nil})
	switch {
	case errors.Is(err, setup.ErrUnsupportedDSN):
		return nil, "", &Error{Code: ExitUsage, Err: err, Hint: "--database takes a postgres://user@host:port/db DSN; leave it out for SQLite"}
	case errors.Is(err, setup.ErrNoDatabase):
		return nil, "", &Error{Code: ExitUsage, Err: err, Hint: "check --data-dir (or SVC_DATA_DIR); a service creates its database on its first 'svc serve'"}
	case errors.Is(err, store.ErrSchemaTooNew):
		return nil, "", &Error{Code: ExitFailure, Err: err, Hint: "a newer svc migrated this database: run that svc version or a newer one, or restore the backup made before the upgrade (docs/OPERATIONS.md, Upgrades)"}
	case err != nil && o.database != "":
		return nil, "", &Error{Code: ExitFailure, Err: err, Hint: "check that PostgreSQL is running and the DSN is right"}
	case err != nil:
		return nil, "", &Error{Code: ExitFailure, Err: err, Hint: "check the --data-dir permissions"}
	}
	if st.Created {
		fmt.Fprintf(notice, "svc: created a new service database at %s\n", strings.TrimPrefix(st.Where, "sqlite "))
	}
	return st.Store, st.Where, nil
}

// openExisting opens the store of an existing service: it never creates a
// database.
func (o *dataOptions) openExisting(ctx context.Context) (store.Store, string, error) {
	return o.open(ctx, nil)
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

func cmdContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// ServeLockFile is the file in a data directory that the serving process
// holds locked (flock) and writes its pid to.
const ServeLockFile = setup.LockFile

// identityError is the CLI error for key material that is not the
// service's recorded in the database (setup.CheckIdentity and
// setup.CheckMaterialPresent).
func identityError(err error, dataDir string) error {
	var mm *setup.IdentityMismatchError
	var missing *setup.MissingMaterialError
	switch {
	case errors.As(err, &mm):
		return &Error{Code: ExitFailure, Err: err, Hint: fmt.Sprintf("every server on one database must hold the same key material: copy %s and %s/ from the data directory of a server with signing key %s into %s (replacing these), or give this server a database of its own (docs/API.md, Several servers on one database)",
			server.SigningKeyFile, server.TSADir, mm.Recorded.SigningKeyID, dataDir)}
	case errors.As(err, &missing):
		return &Error{Code: ExitFailure, Err: err, Hint: fmt.Sprintf("copy %s and %s/ from the data directory of a server with signing key %s into %s (mode 0600 for the key), then start again (docs/API.md, Several servers on one database)",
			server.SigningKeyFile, server.TSADir, missing.Recorded.SigningKeyID, dataDir)}
	}
	return &Error{Code: ExitFailure, Err: err}
}

// checkIdentity is setup.CheckIdentity for the commands that sign with a
// data directory's key material on a service's database (registry
// publish, publish-circuit): they refuse key material that is not the
// service's.
func checkIdentity(ctx context.Context, st store.IdentityStore, m *server.Material, dataDir string) error {
	if _, err := setup.CheckIdentity(ctx, st, m, dataDir, time.Now()); err != nil {
		return identityError(err, dataDir)
	}
	return nil
}
