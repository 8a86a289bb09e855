package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/service/backup"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
)

// backupView is what 'svc admin backup' and 'svc admin restore' print with
// --output json: the manifest, and where the backup went or came from.
type backupView struct {
	*backup.Manifest
	File    string `json:"file"`
	DataDir string `json:"data_dir,omitempty"`
}

// backupOptions are the flags of svc admin backup.
type backupOptions struct {
	data     dataOptions
	out      string
	keysOnly bool
	output   string
}

// validate checks the flags alone: an output, and SQLite unless the key
// material only is backed up.
func (o *backupOptions) validate(outIsTTY bool) error {
	if err := checkOutput(o.output); err != nil {
		return err
	}
	switch {
	case o.out == "":
		return errorf(ExitUsage, "name the new backup file, e.g. --out svc-backup.tar.gz (or --out - for standard output)", "--out is required")
	case o.data.database != "" && !o.keysOnly:
		return errorf(ExitUsage, "back the PostgreSQL database up with pg_dump, and the key material with --keys-only (docs/OPERATIONS.md, Backups)", "--database is PostgreSQL: svc admin backup snapshots SQLite only")
	case o.out == "-" && outIsTTY:
		return errorf(ExitUsage, "redirect standard output to a file or a program (e.g. | age -r ...)", "--out - would write a binary archive to the terminal")
	}
	return nil
}

// newCmdAdminBackup builds svc admin backup; runF, when not nil, gets the
// parsed options instead of the run (a test's seam).
func newCmdAdminBackup(a *app, runF func(*backupOptions) error) *cobra.Command {
	o := &backupOptions{}
	cmd := &cobra.Command{
		Use:   "backup --out FILE [--keys-only]",
		Short: "Back up a service's data directory while it serves: database snapshot and key material",
		Long: `Back up the data directory of a service, while 'svc serve' runs on it, into
one new file (a gzipped tar with a manifest listing each file's SHA-256):

  - a consistent snapshot of the SQLite database (SQLite's VACUUM INTO: one
    read transaction, holding every write committed before it began; the
    service keeps writing meanwhile), and
  - the key material: the signing key and the built-in timestamp authority.

With --keys-only, the key material only: the database of a service on
PostgreSQL is backed up with pg_dump (docs/OPERATIONS.md, Backups).

The file is created with mode 0600, written whole or not at all, and never
replaces an existing file. It holds the service's private keys: anyone
who has it can sign VPECs that verify. Keep it 0600 and encrypt it at rest
(--out - writes it to standard output, e.g. into age). 'svc admin restore'
restores it into an empty data directory.`,
		Example: `  svc admin backup --data-dir /var/lib/svc --out /tmp/svc-$(date +%F).tar.gz
  svc admin backup --data-dir /var/lib/svc --keys-only --out /tmp/svc-keys.tar.gz
  svc admin backup --data-dir /var/lib/svc --out - | age -R backup-recipients.txt > /tmp/svc.tar.gz.age`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(a.streams.OutIsTTY); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return a.runAdminBackup(cmdContext(cmd), o)
		},
	}
	o.data.add(cmd)
	cmd.Flags().StringVar(&o.out, "out", "", "the new backup file (never replaced; - for standard output)")
	cmd.Flags().BoolVar(&o.keysOnly, "keys-only", false, "back up the key material only (a service on PostgreSQL: pg_dump backs up the database)")
	addOutputFlag(cmd, &o.output)
	return cmd
}

// runAdminBackup writes the backup (backup.CreateFile, or backup.Create
// to standard output).
func (a *app) runAdminBackup(ctx context.Context, o *backupOptions) error {
	bo := backup.Options{DataDir: o.data.dir(), KeysOnly: o.keysOnly, SvcVersion: BuildVersion().Version}
	var man *backup.Manifest
	var err error
	if o.out == "-" {
		man, err = backup.Create(ctx, a.streams.Out, bo)
	} else {
		man, err = backup.CreateFile(ctx, o.out, bo)
	}
	if err != nil {
		return backupError(err)
	}
	// Anything svc serve keeps that this backup does not carry is named,
	// never silently left out.
	left, err := backup.Unaccounted(bo.DataDir, bo.Layout)
	if err != nil {
		return backupError(err)
	}
	for _, p := range left {
		fmt.Fprintf(a.streams.Err, "%s: warning: %s is not in the backup: svc does not know it as part of a data directory\n", a.name, p)
	}
	if o.output == outputJSON && o.out != "-" {
		return a.writeJSON(backupView{Manifest: man, File: o.out})
	}
	size := ""
	if st, err := os.Stat(o.out); err == nil && o.out != "-" {
		size = fmt.Sprintf(", %d bytes", st.Size())
	}
	what := "the key material"
	if man.Database != nil {
		what = fmt.Sprintf("a snapshot of the database (schema version %d) and the key material", man.Database.SchemaVersion)
	}
	fmt.Fprintf(a.streams.Err, "%s: backed up %s of %s (signing key %s) to %s: %d files%s\n",
		a.name, what, o.data.dir(), man.SigningKeyID, displayName(o.out), len(man.Files), size)
	fmt.Fprintf(a.streams.Err, "%s: the backup holds the service's private keys: keep it mode 0600 and encrypted at rest (docs/OPERATIONS.md, Backups)\n", a.name)
	return nil
}

// restoreOptions are the flags of svc admin restore.
type restoreOptions struct {
	data   dataOptions
	from   string
	check  bool
	output string
}

// validate checks the flags alone.
func (o *restoreOptions) validate() error {
	if err := checkOutput(o.output); err != nil {
		return err
	}
	if o.from == "" {
		return errorf(ExitUsage, "name the backup file, e.g. --from svc-backup.tar.gz (or --from - for standard input)", "--from is required")
	}
	return nil
}

// newCmdAdminRestore builds svc admin restore; runF, when not nil, gets
// the parsed options instead of the run (a test's seam).
func newCmdAdminRestore(a *app, runF func(*restoreOptions) error) *cobra.Command {
	o := &restoreOptions{}
	cmd := &cobra.Command{
		Use:   "restore --from FILE --data-dir DIR",
		Short: "Restore a backup into a new, empty data directory, checking every file",
		Long: `Restore a backup made by 'svc admin backup' into a data directory that does
not exist or is empty. Every file is checked against the backup's
manifest (order, size, SHA-256), the signing key must be the one the
manifest names, and the database snapshot must pass SQLite's integrity
check; only then are the files moved into place. A backup that fails any
check restores nothing.

Then start the service on it: 'svc serve --data-dir DIR' (for a keys-only
backup, after restoring the PostgreSQL database with pg_restore, with
--database). With --check the backup is checked the same way and nothing
is restored.`,
		Example: `  svc admin restore --from /tmp/svc-backup.tar.gz --check
  svc admin restore --from /tmp/svc-backup.tar.gz --data-dir /tmp/svc-restored
  age -d -i backup-key.txt /tmp/svc.tar.gz.age | svc admin restore --from - --data-dir /tmp/svc-restored`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return a.runAdminRestore(cmdContext(cmd), o)
		},
	}
	o.data.add(cmd)
	cmd.Flags().StringVar(&o.from, "from", "", "the backup file (- for standard input)")
	cmd.Flags().BoolVar(&o.check, "check", false, "check the backup whole and restore nothing")
	addOutputFlag(cmd, &o.output)
	return cmd
}

// runAdminRestore checks the backup (backup.Verify) or restores it
// (backup.Restore).
func (a *app) runAdminRestore(ctx context.Context, o *restoreOptions) error {
	var in io.Reader = a.streams.In
	if o.from != "-" {
		f, err := os.Open(o.from)
		if err != nil {
			return &Error{Code: ExitUsage, Err: err}
		}
		defer f.Close()
		in = f
	}
	start := time.Now()
	var man *backup.Manifest
	var err error
	dir := o.data.dir()
	if o.check {
		dir = ""
		man, err = backup.Verify(ctx, in, "")
	} else {
		man, err = backup.Restore(ctx, in, backup.RestoreOptions{DataDir: dir})
	}
	if err != nil {
		return backupError(err)
	}
	if o.output == outputJSON {
		return a.writeJSON(backupView{Manifest: man, File: o.from, DataDir: dir})
	}
	what := "the key material"
	if man.Database != nil {
		what = fmt.Sprintf("the database (schema version %d) and the key material", man.Database.SchemaVersion)
	}
	if o.check {
		fmt.Fprintf(a.streams.Out, "backup %s is intact: %s of signing key %s, %d files, made %s by svc %s (checked in %s)\n",
			displayName(o.from), what, man.SigningKeyID, len(man.Files), man.CreatedAt, man.SvcVersion, time.Since(start).Round(time.Millisecond))
		return nil
	}
	fmt.Fprintf(a.streams.Out, "restored %s (signing key %s, %d files, made %s by svc %s) into %s\n",
		what, man.SigningKeyID, len(man.Files), man.CreatedAt, man.SvcVersion, dir)
	if man.Database != nil {
		fmt.Fprintf(a.streams.Err, "%s: start the service on it: %s serve --data-dir %s\n", a.name, a.name, dir)
	} else {
		fmt.Fprintf(a.streams.Err, "%s: restore the PostgreSQL database (pg_restore, docs/OPERATIONS.md), then: %s serve --database DSN --data-dir %s\n", a.name, a.name, dir)
	}
	return nil
}

func displayName(p string) string {
	if p == "-" {
		return "standard output"
	}
	return p
}

// backupError is the CLI error of a backup or restore.
func backupError(err error) error {
	var tooNew *store.SchemaTooNewError
	switch {
	case errors.Is(err, server.ErrNoMaterial) || errors.Is(err, server.ErrPartialMaterial):
		return materialError(err)
	case errors.Is(err, backup.ErrExists):
		return &Error{Code: ExitUsage, Err: err, Hint: "a backup never replaces a file: give a new name (e.g. with the date)"}
	case errors.Is(err, backup.ErrNoDatabase):
		return &Error{Code: ExitUsage, Err: err, Hint: "check --data-dir; for a service on PostgreSQL back up the key material with --keys-only and the database with pg_dump"}
	case errors.Is(err, backup.ErrNotEmpty):
		return &Error{Code: ExitUsage, Err: err, Hint: "restore into a new directory, then point svc serve --data-dir at it"}
	case errors.As(err, &tooNew):
		return &Error{Code: ExitFailure, Err: err, Hint: fmt.Sprintf("restore it with the svc that made it (or a newer one): this svc knows schema versions up to %d", tooNew.Binary)}
	case errors.Is(err, backup.ErrFormat):
		return &Error{Code: ExitUsage, Err: err}
	case errors.Is(err, backup.ErrCorrupt):
		return &Error{Code: ExitInvalid, Err: err, Hint: "the backup is damaged or not an svc backup: restore an older one"}
	case errors.Is(err, backup.ErrUnsupported), errors.Is(err, backup.ErrMissing):
		return &Error{Code: ExitFailure, Err: err, Hint: "the data directory holds only what svc serve puts there: check --data-dir"}
	}
	return &Error{Code: ExitFailure, Err: err, Hint: "check the paths and their permissions"}
}
