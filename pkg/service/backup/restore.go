package backup

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/server/setup"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// MaxFiles bounds the files a manifest may list.
const MaxFiles = 100000

// RestoreOptions configure Restore.
type RestoreOptions struct {
	// DataDir is the data directory to restore into. It must not exist,
	// or be empty (a lost+found directory, as at the root of a mounted
	// volume, is allowed). Required.
	DataDir string
	// KnownSchema is the highest SQLite schema version the restoring svc
	// knows; a backup of a database at a higher version is refused with a
	// *store.SchemaTooNewError. Zero means sqlite.KnownSchemaVersion().
	KnownSchema int
}

// Restore reads a backup from r into the empty data directory
// o.DataDir and returns its manifest. Every file is checked against the
// manifest (order, type, size, SHA-256), the key material is loaded and
// must be the signing key the manifest names, and the database snapshot
// must pass SQLite's integrity check at the manifest's schema version.
// Files are written to a private staging directory inside o.DataDir and
// moved into place only when all of that holds: on any error the data
// directory is left empty (and removed, if Restore created it).
func Restore(ctx context.Context, r io.Reader, o RestoreOptions) (man *Manifest, err error) {
	if o.DataDir == "" {
		return nil, errors.New("restore: no data directory given")
	}
	if o.KnownSchema == 0 {
		o.KnownSchema = sqlite.KnownSchemaVersion()
	}
	created, err := prepareDataDir(o.DataDir)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	stage, err := os.MkdirTemp(o.DataDir, ".restore-")
	if err != nil {
		if created {
			os.Remove(o.DataDir)
		}
		return nil, fmt.Errorf("restore: %w", err)
	}
	var moved []string
	defer func() {
		if err == nil {
			return
		}
		for _, name := range moved {
			os.RemoveAll(filepath.Join(o.DataDir, name))
		}
		os.RemoveAll(stage)
		if created {
			os.Remove(o.DataDir)
		}
	}()
	man, err = extract(ctx, r, stage, o.KnownSchema)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	if err := checkRestored(ctx, stage, man); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	entries, err := os.ReadDir(stage)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	for _, e := range entries {
		if err := os.Rename(filepath.Join(stage, e.Name()), filepath.Join(o.DataDir, e.Name())); err != nil {
			return nil, fmt.Errorf("restore: %w", err)
		}
		moved = append(moved, e.Name())
	}
	if err := os.Remove(stage); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	if err := fsutil.SyncDir(o.DataDir); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	return man, nil
}

// RestoreFile is Restore from the backup file at p.
func RestoreFile(ctx context.Context, p string, o RestoreOptions) (*Manifest, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	defer f.Close()
	return Restore(ctx, f, o)
}

// Verify reads a whole backup from r and checks it as Restore does
// (restoring it into a temporary directory under tempDir, "" for the
// system's, which it removes), without touching any data directory.
func Verify(ctx context.Context, r io.Reader, tempDir string) (*Manifest, error) {
	dir, err := os.MkdirTemp(tempDir, "svc-backup-verify-")
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	defer os.RemoveAll(dir)
	return Restore(ctx, r, RestoreOptions{DataDir: filepath.Join(dir, "data")})
}

// prepareDataDir makes sure dir can be restored into: it is created (0700)
// when missing, and otherwise must be an empty directory.
func prepareDataDir(dir string) (created bool, err error) {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return false, err
		}
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if !st.IsDir() {
		return false, fmt.Errorf("%s is not a directory", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	var names []string
	for _, e := range entries {
		if e.Name() != "lost+found" {
			names = append(names, e.Name())
		}
	}
	if len(names) > 0 {
		if len(names) > 3 {
			names = append(names[:3], "…")
		}
		return false, fmt.Errorf("%w: %s holds %s: restore into a new or empty directory (a restore never mixes with or replaces a service's state)", ErrNotEmpty, dir, strings.Join(names, ", "))
	}
	return false, nil
}

// extract reads the archive from r into dir, checking every entry
// against the manifest.
func extract(ctx context.Context, r io.Reader, dir string, knownSchema int) (*Manifest, error) {
	br := bufio.NewReader(r)
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, corrupt("", "not a gzip stream (%v): is it an svc backup?", err)
	}
	zr.Multistream(false)
	tr := tar.NewReader(zr)
	h, err := tr.Next()
	if err != nil {
		return nil, corrupt("", "not a tar archive inside the gzip stream (%v)", err)
	}
	if h.Name != ManifestName || h.Typeflag != tar.TypeReg {
		return nil, corrupt(h.Name, "the first entry must be the manifest %s", ManifestName)
	}
	if h.Size > MaxManifestBytes {
		return nil, corrupt(ManifestName, "%d bytes, more than the %d a manifest may have", h.Size, MaxManifestBytes)
	}
	body, err := io.ReadAll(tr)
	if err != nil {
		return nil, corrupt(ManifestName, "%v", err)
	}
	man, err := ParseManifest(body)
	if err != nil {
		return nil, err
	}
	if man.Database != nil && man.Database.SchemaVersion > knownSchema {
		return nil, fmt.Errorf("the backup's database: %w", &store.SchemaTooNewError{Database: man.Database.SchemaVersion, Binary: knownSchema})
	}
	for i, f := range man.Files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, corrupt(f.Path, "missing: the archive ends after %d of the manifest's %d files", i, len(man.Files))
		}
		if err != nil {
			return nil, corrupt(f.Path, "%v", err)
		}
		switch {
		case h.Name != f.Path:
			return nil, corrupt(h.Name, "entry %d is %q where the manifest lists %q", i+2, h.Name, f.Path)
		case h.Typeflag != tar.TypeReg:
			return nil, corrupt(h.Name, "not a regular file (type %q)", h.Typeflag)
		case h.Size != f.Size:
			return nil, corrupt(h.Name, "%d bytes where the manifest says %d", h.Size, f.Size)
		}
		if err := writeFile(dir, f, tr); err != nil {
			return nil, err
		}
	}
	if h, err := tr.Next(); err == nil {
		return nil, corrupt(h.Name, "not in the manifest")
	} else if !errors.Is(err, io.EOF) {
		return nil, corrupt("", "after the last file: %v", err)
	}
	if n, err := io.Copy(io.Discard, zr); err != nil || n != 0 {
		return nil, corrupt("", "data after the tar archive's end, or a damaged gzip stream (%d bytes, %v)", n, err)
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		return nil, corrupt("", "data after the gzip stream")
	}
	return man, nil
}

// writeFile writes the entry f, read from r, under dir and checks its
// hash.
func writeFile(dir string, f File, r io.Reader) error {
	p := filepath.Join(dir, filepath.FromSlash(f.Path))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	mode, _ := strconv.ParseUint(f.Mode, 8, 32)
	out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	defer out.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), io.LimitReader(r, f.Size))
	if err != nil {
		return corrupt(f.Path, "%v", err)
	}
	if n != f.Size {
		return corrupt(f.Path, "%d bytes where the manifest says %d", n, f.Size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != f.SHA256 {
		return corrupt(f.Path, "SHA-256 %s where the manifest says %s", got, f.SHA256)
	}
	if err := out.Chmod(fs.FileMode(mode)); err != nil {
		return err
	}
	if err := out.Sync(); err != nil {
		return err
	}
	return out.Close()
}

// checkRestored loads what was restored into dir: the key material must be
// the signing key the manifest names, and the database snapshot must pass
// the integrity check at the manifest's schema version.
func checkRestored(ctx context.Context, dir string, man *Manifest) error {
	m, err := server.ReadMaterial(dir)
	if err != nil {
		return corrupt("", "the key material does not load: %v", err)
	}
	if id := m.Signer.KeyID(); id != man.SigningKeyID {
		return corrupt(server.SigningKeyFile, "signing key %s where the manifest says %s", id, man.SigningKeyID)
	}
	if man.Database == nil {
		return nil
	}
	v, err := checkDatabase(ctx, filepath.Join(dir, filepath.FromSlash(man.Database.Path)), false)
	if err != nil {
		return corrupt(man.Database.Path, "%v", err)
	}
	if v != man.Database.SchemaVersion {
		return corrupt(man.Database.Path, "schema version %d where the manifest says %d", v, man.Database.SchemaVersion)
	}
	return nil
}

var (
	hexSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)
	keyID     = regexp.MustCompile(`^[0-9a-f]{16}$`)
	modeRE    = regexp.MustCompile(`^0[0-7]{3}$`)
)

// ParseManifest decodes and checks a backup manifest: strictly (no
// unknown, missing, duplicate or empty optional fields), then its rules:
// the format, the contents, clean unique paths, hashes, modes, and the
// database entry of a full backup. A manifest of another format is
// ErrFormat; anything else wrong matches ErrCorrupt.
func ParseManifest(body []byte) (*Manifest, error) {
	var head struct {
		Format string `json:"format"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return nil, corrupt(ManifestName, "not JSON: %v", err)
	}
	if head.Format != Format {
		return nil, fmt.Errorf("%w %q (this svc reads %s): restore it with the svc version that made it, or a newer one", ErrFormat, head.Format, Format)
	}
	var man Manifest
	if _, err := document.Parse(body, &man); err != nil {
		return nil, corrupt(ManifestName, "%v", err)
	}
	if err := man.check(); err != nil {
		return nil, corrupt(ManifestName, "%v", err)
	}
	return &man, nil
}

func (m *Manifest) check() error {
	switch m.Contents {
	case ContentsFull:
		if m.Database == nil {
			return errors.New("a full backup without its database")
		}
	case ContentsKeys:
		if m.Database != nil {
			return errors.New("a keys-only backup with a database")
		}
	default:
		return fmt.Errorf("contents %q: want %s or %s", m.Contents, ContentsFull, ContentsKeys)
	}
	if _, err := vpec.ParseTime(m.CreatedAt); err != nil {
		return fmt.Errorf("created_at: %v", err)
	}
	if !keyID.MatchString(m.SigningKeyID) {
		return fmt.Errorf("signing_key_id %q: want 16 lowercase hex digits", m.SigningKeyID)
	}
	if len(m.Files) > MaxFiles {
		return fmt.Errorf("%d files, more than %d", len(m.Files), MaxFiles)
	}
	seen := make(map[string]bool, len(m.Files))
	for i, f := range m.Files {
		if err := checkPath(f.Path); err != nil {
			return fmt.Errorf("files[%d]: %v", i, err)
		}
		if reserved(f.Path, m.Database) {
			return fmt.Errorf("files[%d]: %s is never part of a backup", i, f.Path)
		}
		if seen[f.Path] {
			return fmt.Errorf("files[%d]: %s listed twice", i, f.Path)
		}
		seen[f.Path] = true
		if f.Size < 0 {
			return fmt.Errorf("files[%d]: negative size", i)
		}
		if !hexSHA256.MatchString(f.SHA256) {
			return fmt.Errorf("files[%d]: sha256 %q: want 64 lowercase hex digits", i, f.SHA256)
		}
		if !modeRE.MatchString(f.Mode) {
			return fmt.Errorf("files[%d]: mode %q: want four octal digits such as 0600", i, f.Mode)
		}
	}
	// A file may not also be a directory of another file (tsa and
	// tsa/root.pem).
	for p := range seen {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if seen[d] {
				return fmt.Errorf("%s is both a file and the directory of %s", d, p)
			}
		}
	}
	if m.Database != nil {
		if m.Database.Engine != "sqlite" {
			return fmt.Errorf("database engine %q: want sqlite", m.Database.Engine)
		}
		if m.Database.SchemaVersion < 1 {
			return fmt.Errorf("database schema_version %d", m.Database.SchemaVersion)
		}
		if len(m.Files) == 0 || m.Files[0].Path != m.Database.Path {
			return fmt.Errorf("the database %q must be the first file", m.Database.Path)
		}
	}
	return nil
}

// reserved reports whether p is a file a backup never holds: the manifest
// itself, the serve and setup locks, SQLite's side files.
func reserved(p string, db *Database) bool {
	if p == ManifestName || p == setup.LockFile || p == setup.SetupLockFile {
		return true
	}
	if db != nil {
		for _, suffix := range []string{"-wal", "-shm", "-journal"} {
			if p == db.Path+suffix {
				return true
			}
		}
	}
	return strings.HasSuffix(p, ".db-wal") || strings.HasSuffix(p, ".db-shm")
}
