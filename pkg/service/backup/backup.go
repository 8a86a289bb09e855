// Package backup makes and restores backups of a Governance Proof
// Service's data directory: an online, consistent snapshot of the SQLite
// database taken while the service writes, and the key material beside it
// (the signing key and the built-in timestamp authority), in one archive
// whose manifest lists every file's size and SHA-256.
//
// A backup is a gzip-compressed tar (docs/OPERATIONS.md, "Backups"):
//
//   - the first entry is the manifest, svc-backup.json (Manifest);
//   - then one regular file per manifest entry, in the manifest's order,
//     named by its path relative to the data directory (svc.db,
//     signing-key.pem, tsa/root.pem, ...);
//   - nothing else: no directory entries, links or other types.
//
// Restore accepts exactly that and nothing else: an entry out of order,
// missing, extra, of another type or size, or whose SHA-256 differs from
// the manifest's is refused, and the data directory is left as it was.
//
// The package takes everything as arguments: it reads no environment and
// creates no keys. A data directory's layout (what a restore needs) is a
// Layout, DataDirLayout for what svc serve keeps today.
package backup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/logwriter"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/server/setup"
)

// Format names the archive format in every manifest. A restore refuses any
// other value: a backup made by a newer svc in a newer format says so.
const Format = "svc-backup/v1"

// ManifestName is the name of the manifest, the archive's first entry.
const ManifestName = "svc-backup.json"

// MaxManifestBytes bounds the manifest a restore reads.
const MaxManifestBytes = 4 << 20

// What a backup contains (Manifest.Contents).
const (
	// ContentsFull: a snapshot of the SQLite database and the key
	// material: everything svc serve needs to start where it was.
	ContentsFull = "full"
	// ContentsKeys: the key material only. A PostgreSQL service backs up
	// its database with pg_dump; the key material lives in each server's
	// data directory and is backed up with this.
	ContentsKeys = "keys"
)

// Errors of this package, matchable with errors.Is.
var (
	// ErrExists: the output file exists (a backup never replaces one).
	ErrExists = errors.New("backup file exists")
	// ErrNotEmpty: the data directory to restore into holds files.
	ErrNotEmpty = errors.New("data directory is not empty")
	// ErrNoDatabase: a full backup of a data directory without a SQLite
	// database.
	ErrNoDatabase = errors.New("no SQLite database in the data directory")
	// ErrMissing: a required part of the data directory is missing (the
	// signing key or the built-in TSA).
	ErrMissing = errors.New("missing from the data directory")
	// ErrUnsupported: a data directory entry a backup cannot carry (a
	// symbolic link, a device, a socket).
	ErrUnsupported = errors.New("unsupported file type")
	// ErrCorrupt: the archive is not a valid backup or does not match its
	// manifest (a *CorruptError says where).
	ErrCorrupt = errors.New("corrupt backup")
	// ErrFormat: the manifest names another format (a newer svc's).
	ErrFormat = errors.New("unknown backup format")
	// ErrChanged: a file changed while it was being backed up.
	ErrChanged = errors.New("file changed during the backup")
	// ErrSnapshot: the SQLite snapshot could not be taken or checked.
	ErrSnapshot = errors.New("database snapshot failed")
)

// CorruptError says what is wrong with an archive. It matches ErrCorrupt.
type CorruptError struct {
	// Entry is the archive entry at fault ("" for the archive as a whole).
	Entry string
	// Reason says what is wrong, in words.
	Reason string
}

func (e *CorruptError) Error() string {
	if e.Entry == "" {
		return "corrupt backup: " + e.Reason
	}
	return fmt.Sprintf("corrupt backup: %s: %s", e.Entry, e.Reason)
}

// Is makes a *CorruptError match ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

func corrupt(entry, format string, args ...any) error {
	return &CorruptError{Entry: entry, Reason: fmt.Sprintf(format, args...)}
}

// Item is one part of a data directory that a restore needs.
type Item struct {
	// Path is slash-separated and relative to the data directory.
	Path string
	// Dir: a directory, carried whole (its regular files, recursively).
	Dir bool
	// Secret: it is private key material (a file), or every file of it is
	// (a directory); the manifest marks its files secret.
	Secret bool
	// SecretFiles names the files of a directory item, relative to it,
	// that are secret when the rest is not (the TSA's key beside its
	// certificates).
	SecretFiles []string
	// Required: a backup fails when it is missing. An optional item that
	// is missing is left out.
	Required bool
	// What says what it is, for the docs and messages.
	What string
	// Live, for a directory item, is a part of it that the running
	// service writes while the backup reads it (the POSIX transparency
	// log): nil for none.
	Live *LiveDir
}

// LiveDir is a directory a running service writes while a backup copies
// it: its files are taken by kind (logwriter.BackupKind), so the copy is
// one consistent state of it.
type LiveDir struct {
	// Sub is the directory, relative to its item.
	Sub string
	// First are its files read, in this order, before the others are
	// listed (logwriter.BackupFirst).
	First []string
	// Kind classifies a file by its path relative to Sub: skipped,
	// stable (listed now, copied later) or volatile (read when listed; a
	// file gone by then is left out).
	Kind func(rel string) logwriter.FileKind
}

// Layout is what a data directory holds that a restore needs.
type Layout struct {
	// Database is the SQLite database file (snapshotted, never copied).
	Database string
	// Items are the files and directories copied as they are.
	Items []Item
}

// DataDirLayout is the layout of the data directory svc serve keeps: the
// SQLite database, the signing keys, the built-in timestamp authority, the
// trust root and the transparency log. A new part of the data directory is
// added here, and every later backup carries it; a directory added must be consistent when copied file by
// file while the service runs, or come with its own snapshot.
//
// Never carried: the locks (serve.lock, setup.lock) and SQLite's -wal and -shm
// files (the snapshot holds their committed contents).
func DataDirLayout() Layout {
	return Layout{
		Database: setup.SQLiteFile,
		Items: []Item{
			{Path: server.SigningKeyFile, Secret: true, Required: true,
				What: "the service's Ed25519 signing key (VPECs, profiles, circuit entries)"},
			{Path: server.TSADir, Dir: true, Required: true, SecretFiles: []string{timestamp.KeyFile},
				What: "the built-in RFC 3161 timestamp authority: root and TSA certificates and the TSA's private key"},
			{Path: server.ProfileKeyFile, Secret: true,
				What: "the profile signing key (profiles and circuit entries; a data directory made before separate profile keys has none)"},
			{Path: server.RootKeyFile, Secret: true,
				What: "the root-signing key of the trust root (when it is a file)"},
			{Path: server.TrustRootFile,
				What: "the current trust root (svc.trust-root/v1)"},
			{Path: server.TrustRootHistoryDir, Dir: true,
				What: "every version of the trust root"},
			// The log is copied after the database snapshot, so it holds
			// every VPEC the snapshot records as logged; the service
			// appends meanwhile, so its files are taken by kind, the
			// checkpoint and then the tree state first (LiveDir).
			{Path: server.LogDir, Dir: true, SecretFiles: []string{server.LogKeyFile, server.LogSecretFile},
				What: "the transparency log: its key, origin and monitoring secret, and (POSIX backend) its tiles and checkpoint",
				Live: &LiveDir{Sub: server.LogTilesDir, First: logwriter.BackupFirst(), Kind: logwriter.BackupKind}},
		},
	}
}

// Manifest is the first entry of a backup. Its JSON form is decoded
// strictly (no unknown, missing or duplicate fields).
type Manifest struct {
	// Format is always Format.
	Format string `json:"format"`
	// Contents is ContentsFull or ContentsKeys.
	Contents string `json:"contents"`
	// CreatedAt is when the backup was made (RFC 3339, UTC).
	CreatedAt string `json:"created_at"`
	// SvcVersion is the version of the svc that made it.
	SvcVersion string `json:"svc_version"`
	// SigningKeyID is the key id of the service's signing key in the
	// backup: the key its VPECs are signed with.
	SigningKeyID string `json:"signing_key_id"`
	// Database describes the database snapshot (ContentsFull only).
	Database *Database `json:"database,omitempty"`
	// Files are the archive's files after the manifest, in order.
	Files []File `json:"files"`
}

// Database describes the database snapshot of a full backup.
type Database struct {
	// Engine is "sqlite".
	Engine string `json:"engine"`
	// Path is the snapshot's entry (the database file's name in the data
	// directory, svc.db).
	Path string `json:"path"`
	// SchemaVersion is the snapshot's schema version (its highest
	// migration).
	SchemaVersion int `json:"schema_version"`
}

// File is one file of a backup.
type File struct {
	// Path is slash-separated and relative to the data directory.
	Path string `json:"path"`
	// Size is its length in bytes.
	Size int64 `json:"size"`
	// SHA256 is the lowercase hex SHA-256 of its bytes.
	SHA256 string `json:"sha256"`
	// Mode is its permission bits in octal, e.g. "0600".
	Mode string `json:"mode"`
	// Secret: it holds private key material (or is the database, which
	// holds API key hashes and the service's records).
	Secret bool `json:"secret"`
}

// Options configure Create.
type Options struct {
	// DataDir is the data directory to back up. Required.
	DataDir string
	// Layout is its layout; the zero value means DataDirLayout().
	Layout Layout
	// KeysOnly leaves the database out (ContentsKeys): the key material
	// of a server whose database is PostgreSQL.
	KeysOnly bool
	// SvcVersion is recorded in the manifest.
	SvcVersion string
	// TempDir holds the database snapshot while the archive is written,
	// in a private (0700) directory removed afterwards. Default: the data
	// directory itself (writable wherever the service runs, even in a
	// container whose root filesystem is read-only; it needs room for a
	// copy of the database).
	TempDir string
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (o *Options) defaults() {
	if o.Layout.Database == "" && o.Layout.Items == nil {
		o.Layout = DataDirLayout()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.TempDir == "" {
		o.TempDir = o.DataDir
	}
}

// source is a file to archive: where it is read from and what it is.
type source struct {
	file File
	from string // absolute path to read
	data []byte // the file's bytes, read when listed (a LiveDir's volatile file); nil: read from
}

// Create writes a backup of o.DataDir to w and returns its manifest. The
// database is snapshotted with SQLite's VACUUM INTO, a read transaction:
// it is consistent (every write committed before the snapshot began, none
// after) and does not stop the service from writing meanwhile.
func Create(ctx context.Context, w io.Writer, o Options) (*Manifest, error) {
	o.defaults()
	m, err := server.ReadMaterial(o.DataDir)
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	man := &Manifest{Format: Format, Contents: ContentsFull, CreatedAt: vpec.FormatTime(o.Now()),
		SvcVersion: o.SvcVersion, SigningKeyID: m.Signer.KeyID(), Files: []File{}}
	if man.SvcVersion == "" {
		man.SvcVersion = "unknown"
	}
	var srcs []source
	if o.KeysOnly {
		man.Contents = ContentsKeys
	} else {
		if o.Layout.Database == "" {
			return nil, fmt.Errorf("backup: the layout names no database: back up the key material only (KeysOnly)")
		}
		tmp, err := os.MkdirTemp(o.TempDir, ".svc-backup-")
		if err != nil {
			return nil, fmt.Errorf("backup: temporary directory: %w", err)
		}
		defer os.RemoveAll(tmp)
		snap := filepath.Join(tmp, "snapshot.db")
		version, err := Snapshot(ctx, filepath.Join(o.DataDir, filepath.FromSlash(o.Layout.Database)), snap)
		if err != nil {
			return nil, fmt.Errorf("backup: %w", err)
		}
		f, err := describe(snap, o.Layout.Database, true)
		if err != nil {
			return nil, fmt.Errorf("backup: %w", err)
		}
		f.Mode = "0600"
		man.Database = &Database{Engine: "sqlite", Path: o.Layout.Database, SchemaVersion: version}
		srcs = append(srcs, source{file: f, from: snap})
	}
	items, err := collect(o.DataDir, o.Layout.Items)
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	srcs = append(srcs, items...)
	for _, s := range srcs {
		man.Files = append(man.Files, s.file)
	}
	if err := writeArchive(ctx, w, man, srcs); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	return man, nil
}

// CreateFile writes a backup of o.DataDir to the new file path (mode
// 0600) and returns its manifest. The archive is written to a temporary
// file beside path, synced, and linked into place only when complete: a
// crash or an error leaves no partial backup. An existing path is never
// replaced (ErrExists). Unless o.TempDir says otherwise the snapshot is
// taken in path's directory.
func CreateFile(ctx context.Context, path string, o Options) (*Manifest, error) {
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("%w: %s: choose another name, or remove it first", ErrExists, path)
	}
	dir := filepath.Dir(path)
	if o.TempDir == "" {
		o.TempDir = dir
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	defer os.Remove(tmp.Name())
	man, err := func() (*Manifest, error) {
		defer tmp.Close()
		if err := tmp.Chmod(0o600); err != nil {
			return nil, fmt.Errorf("backup: %w", err)
		}
		man, err := Create(ctx, tmp, o)
		if err != nil {
			return nil, err
		}
		if err := tmp.Sync(); err != nil {
			return nil, fmt.Errorf("backup: sync %s: %w", tmp.Name(), err)
		}
		return man, tmp.Close()
	}()
	if err != nil {
		return nil, err
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%w: %s: choose another name, or remove it first", ErrExists, path)
		}
		return nil, fmt.Errorf("backup: %w", err)
	}
	if err := fsutil.SyncDir(dir); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	return man, nil
}

// collect lists the files of the layout's items in dataDir, in order: an
// item's files in lexical order.
func collect(dataDir string, items []Item) ([]source, error) {
	var out []source
	for _, it := range items {
		if err := checkPath(it.Path); err != nil {
			return nil, fmt.Errorf("layout item %q: %w", it.Path, err)
		}
		root := filepath.Join(dataDir, filepath.FromSlash(it.Path))
		st, err := os.Lstat(root)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !it.Required:
			continue
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("%w: %s (%s)", ErrMissing, root, it.What)
		case err != nil:
			return nil, err
		}
		if !it.Dir {
			if !st.Mode().IsRegular() {
				return nil, fmt.Errorf("%w: %s is not a regular file", ErrUnsupported, root)
			}
			f, err := describe(root, it.Path, it.Secret)
			if err != nil {
				return nil, err
			}
			out = append(out, source{file: f, from: root})
			continue
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("%w: %s is not a directory", ErrUnsupported, root)
		}
		var live string // the LiveDir's path, slash-separated, relative to the item
		if it.Live != nil {
			live = path.Clean(it.Live.Sub)
			for _, name := range it.Live.First {
				src, ok, err := readVolatile(dataDir, filepath.Join(root, filepath.FromSlash(live), filepath.FromSlash(name)))
				if err != nil {
					return nil, err
				}
				if ok {
					out = append(out, src)
				}
			}
		}
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			if !d.Type().IsRegular() {
				return fmt.Errorf("%w: %s (only regular files and directories are backed up)", ErrUnsupported, p)
			}
			rel, err := filepath.Rel(dataDir, p)
			if err != nil {
				return err
			}
			inItem, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			inItem = filepath.ToSlash(inItem)
			if inLive, ok := strings.CutPrefix(inItem, live+"/"); it.Live != nil && ok {
				switch {
				case slices.Contains(it.Live.First, inLive):
					return nil // read first, above
				case it.Live.Kind(inLive) == logwriter.FileSkip:
					return nil
				case it.Live.Kind(inLive) == logwriter.FileVolatile:
					src, ok, err := readVolatile(dataDir, p)
					if ok {
						out = append(out, src)
					}
					return err
				}
			}
			f, err := describe(p, filepath.ToSlash(rel), it.Secret || slices.Contains(it.SecretFiles, inItem))
			if err != nil {
				return err
			}
			out = append(out, source{file: f, from: p})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readVolatile reads the file at p (under dataDir) into memory: false if
// it is gone (replaced or removed by the service since it was listed).
// Such files are never secret.
func readVolatile(dataDir, p string) (source, bool, error) {
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return source{}, false, nil
	}
	if err != nil {
		return source{}, false, err
	}
	rel, err := filepath.Rel(dataDir, p)
	if err != nil {
		return source{}, false, err
	}
	name := filepath.ToSlash(rel)
	if err := checkPath(name); err != nil {
		return source{}, false, fmt.Errorf("%s: %w", p, err)
	}
	sum := sha256.Sum256(data)
	f := File{Path: name, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), Mode: "0644"}
	return source{file: f, from: p, data: data}, true, nil
}

// describe hashes the file at p for the manifest entry name.
func describe(p, name string, secret bool) (File, error) {
	if err := checkPath(name); err != nil {
		return File{}, fmt.Errorf("%s: %w", p, err)
	}
	f, err := os.Open(p)
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return File{}, err
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return File{}, fmt.Errorf("read %s: %w", p, err)
	}
	return File{Path: name, Size: n, SHA256: hex.EncodeToString(h.Sum(nil)),
		Mode: fmt.Sprintf("%04o", st.Mode().Perm()), Secret: secret}, nil
}

// writeArchive writes the manifest and the files to w as a gzipped tar,
// checking each file against the manifest as it is copied.
func writeArchive(ctx context.Context, w io.Writer, man *Manifest, srcs []source) error {
	body, err := document.MarshalIndent(man)
	if err != nil {
		return err
	}
	mtime, err := vpec.ParseTime(man.CreatedAt)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	hdr := func(name string, size int64, mode int64) *tar.Header {
		return &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: mode, ModTime: mtime, Format: tar.FormatPAX}
	}
	if err := tw.WriteHeader(hdr(ManifestName, int64(len(body)), 0o600)); err != nil {
		return err
	}
	if _, err := tw.Write(body); err != nil {
		return err
	}
	for _, s := range srcs {
		if err := ctx.Err(); err != nil {
			return err
		}
		mode, _ := strconv.ParseInt(s.file.Mode, 8, 64)
		if err := tw.WriteHeader(hdr(s.file.Path, s.file.Size, mode)); err != nil {
			return err
		}
		if err := copyChecked(tw, s); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// copyChecked copies the file of s to w and checks that it still has the
// size and hash the manifest gives.
func copyChecked(w io.Writer, s source) error {
	if s.data != nil {
		_, err := w.Write(s.data)
		return err
	}
	f, err := os.Open(s.from)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(f, s.file.Size))
	if err != nil {
		return fmt.Errorf("archive %s: %w", s.file.Path, err)
	}
	var one [1]byte
	if more, _ := f.Read(one[:]); n != s.file.Size || more > 0 || hex.EncodeToString(h.Sum(nil)) != s.file.SHA256 {
		return fmt.Errorf("%w: %s", ErrChanged, s.from)
	}
	return nil
}

// Snapshot writes a consistent copy of the SQLite database at src to the
// new file dst (SQLite's VACUUM INTO, one read transaction: it sees every
// transaction committed before it began and none after, and writers carry
// on meanwhile), checks it (PRAGMA integrity_check), turns it into a
// single self-contained file (rollback journal mode, no -wal file) and
// returns its schema version. The source is opened without creating it
// and never migrated.
func Snapshot(ctx context.Context, src, dst string) (schemaVersion int, err error) {
	if strings.ContainsRune(src, '?') || strings.ContainsRune(dst, '?') {
		return 0, fmt.Errorf("%w: a database path may not contain '?'", ErrSnapshot)
	}
	st, err := os.Stat(src)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, fmt.Errorf("%w at %s: back up the data directory of a service that has started (or only its key material)", ErrNoDatabase, src)
	case err != nil:
		return 0, fmt.Errorf("%w: %w", ErrSnapshot, err)
	case !st.Mode().IsRegular():
		return 0, fmt.Errorf("%w: %s is not a regular file", ErrUnsupported, src)
	}
	if _, err := os.Lstat(dst); err == nil {
		return 0, fmt.Errorf("%w: %s", ErrExists, dst)
	}
	db, err := sql.Open("sqlite", src+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return 0, fmt.Errorf("%w: open %s: %w", ErrSnapshot, src, err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", dst); err != nil {
		return 0, fmt.Errorf("%w: VACUUM INTO: %w", ErrSnapshot, err)
	}
	if err := os.Chmod(dst, 0o600); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrSnapshot, err)
	}
	return checkDatabase(ctx, dst, true)
}

// checkDatabase opens the SQLite file p (never creating it), checks its
// integrity and returns its schema version; with rollback it first leaves
// WAL mode, so the file holds everything by itself.
func checkDatabase(ctx context.Context, p string, rollback bool) (int, error) {
	if _, err := os.Stat(p); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrSnapshot, err)
	}
	db, err := sql.Open("sqlite", p)
	if err != nil {
		return 0, fmt.Errorf("%w: open %s: %w", ErrSnapshot, p, err)
	}
	defer db.Close()
	if rollback {
		var mode string
		if err := db.QueryRowContext(ctx, "PRAGMA journal_mode = DELETE").Scan(&mode); err != nil {
			return 0, fmt.Errorf("%w: %w", ErrSnapshot, err)
		}
	}
	var ok string
	if err := db.QueryRowContext(ctx, "PRAGMA integrity_check(1)").Scan(&ok); err != nil {
		return 0, fmt.Errorf("%w: integrity check: %w", ErrSnapshot, err)
	}
	if ok != "ok" {
		return 0, fmt.Errorf("%w: integrity check: %s", ErrSnapshot, ok)
	}
	var v int
	if err := db.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v); err != nil {
		return 0, fmt.Errorf("%w: schema version: %w", ErrSnapshot, err)
	}
	if err := db.Close(); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrSnapshot, err)
	}
	return v, nil
}

// checkPath accepts a clean, relative, slash-separated path of plain
// names: no "..", no ".", no empty element, no backslash, no NUL.
func checkPath(p string) error {
	if p == "" || len(p) > 255 || strings.ContainsAny(p, "\\\x00") || path.IsAbs(p) || path.Clean(p) != p || strings.HasPrefix(p, "../") || p == ".." || p == "." {
		return fmt.Errorf("not a clean relative path: %q", p)
	}
	for _, el := range strings.Split(p, "/") {
		if el == "" || el == "." || el == ".." || strings.HasPrefix(el, ".restore-") {
			return fmt.Errorf("not a clean relative path: %q", p)
		}
		for _, r := range el {
			if r < 0x20 || r == 0x7f {
				return fmt.Errorf("control character in path %q", p)
			}
		}
	}
	return nil
}
