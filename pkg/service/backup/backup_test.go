package backup_test

import (
	"archive/tar"
	"bytes"
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
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/backup"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// newDataDir makes a data directory as svc serve leaves it: key material
// and a SQLite database holding orgs organisations with a key each.
func newDataDir(t testing.TB, orgs int) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := server.LoadMaterial(dir); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := range orgs {
		name := fmt.Sprintf("org%d", i)
		if _, err := server.CreateOrg(ctx, st, name, server.TierStandard, time.Now()); err != nil {
			t.Fatal(err)
		}
		if _, _, err := server.CreateAPIKey(ctx, st, name, vpec.Production, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tree returns the regular files under dir (slash paths) with their
// contents, leaving out SQLite's side files and the serve lock.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func orgNames(t *testing.T, dbPath string) []string {
	t.Helper()
	st, err := sqlite.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var names []string
	for i := 0; ; i++ {
		o, err := st.OrgByName(context.Background(), fmt.Sprintf("org%d", i))
		if errors.Is(err, store.ErrNotFound) {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, o.Name)
	}
}

// TestRoundTrip backs up a data directory (whole, and its key material
// only), restores it into a new directory and compares: the key material
// byte for byte, the database by its contents.
func TestRoundTrip(t *testing.T) {
	for _, keysOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("keys-only=%v", keysOnly), func(t *testing.T) {
			ctx := context.Background()
			src := newDataDir(t, 3)
			out := filepath.Join(t.TempDir(), "b.tar.gz")
			man, err := backup.CreateFile(ctx, out, backup.Options{DataDir: src, KeysOnly: keysOnly, SvcVersion: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o600 {
				t.Fatalf("backup file: %v, mode %v (want 0600: it holds the signing key)", err, st.Mode())
			}
			var paths []string
			for _, f := range man.Files {
				paths = append(paths, f.Path)
				// Private keys and the database are secret; certificates
				// are not.
				if secret := strings.HasSuffix(f.Path, "key.pem") || f.Path == "svc.db"; f.Secret != secret {
					t.Errorf("%s marked secret=%v, want %v", f.Path, f.Secret, secret)
				}
			}
			want := "signing-key.pem tsa/root.pem tsa/tsa-key.pem tsa/tsa.pem profile-key.pem transparency/log-key.pem"
			if !keysOnly {
				want = "svc.db " + want
			}
			if strings.Join(paths, " ") != want {
				t.Fatalf("files %v, want %s", paths, want)
			}
			dst := filepath.Join(t.TempDir(), "restored")
			got, err := backup.RestoreFile(ctx, out, backup.RestoreOptions{DataDir: dst})
			if err != nil {
				t.Fatal(err)
			}
			if got.SigningKeyID != man.SigningKeyID || got.Contents != man.Contents {
				t.Fatalf("restored manifest %+v, made %+v", got, man)
			}
			before, after := tree(t, src), tree(t, dst)
			for name, content := range before {
				if name == "svc.db" || strings.HasPrefix(name, "svc.db-") {
					continue
				}
				if after[name] != content {
					t.Errorf("%s differs after the restore", name)
				}
			}
			for _, name := range []string{"signing-key.pem", "tsa/tsa-key.pem"} {
				if st, err := os.Stat(filepath.Join(dst, name)); err != nil || st.Mode().Perm() != 0o600 {
					t.Errorf("%s restored with mode %v, %v (want 0600)", name, st.Mode(), err)
				}
			}
			m1, _ := server.ReadMaterial(src)
			m2, err := server.ReadMaterial(dst)
			if err != nil || !bytes.Equal(m1.Trust.Marshal(), m2.Trust.Marshal()) {
				t.Fatalf("trust bundle changed: %v", err)
			}
			if keysOnly {
				if _, err := os.Stat(filepath.Join(dst, "svc.db")); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("a keys-only restore made a database: %v", err)
				}
				return
			}
			if names := orgNames(t, filepath.Join(dst, "svc.db")); len(names) != 3 {
				t.Fatalf("restored organisations %v, want 3", names)
			}
		})
	}
}

// TestSnapshotUnderWrites takes snapshots while a writer creates
// organisations as fast as it can: each snapshot passes SQLite's
// integrity check and holds every organisation whose creation returned
// before the snapshot began (and, being one read transaction, a prefix of
// them: no gaps).
func TestSnapshotUnderWrites(t *testing.T) {
	ctx := context.Background()
	dir := newDataDir(t, 0)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var acked atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := server.CreateOrg(ctx, st, fmt.Sprintf("org%d", i), server.TierStandard, time.Now()); err != nil {
				t.Error(err)
				return
			}
			acked.Store(int64(i + 1))
		}
	}()
	for acked.Load() < 50 {
		time.Sleep(time.Millisecond)
	}
	for n := range 5 {
		before := acked.Load()
		snap := filepath.Join(t.TempDir(), "snap.db")
		v, err := backup.Snapshot(ctx, filepath.Join(dir, "svc.db"), snap)
		if err != nil {
			t.Fatal(err)
		}
		if v != sqlite.KnownSchemaVersion() {
			t.Fatalf("snapshot schema %d, want %d", v, sqlite.KnownSchemaVersion())
		}
		got := orgNames(t, snap)
		if int64(len(got)) < before {
			t.Fatalf("snapshot %d holds %d organisations; %d were acknowledged before it began", n, len(got), before)
		}
		if _, err := os.Stat(snap + "-wal"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the snapshot left a -wal file (%v): it must be one self-contained file", err)
		}
	}
	if acked.Load() < 60 {
		t.Fatalf("the writer made %d organisations during 5 snapshots: was it blocked?", acked.Load())
	}
}

func TestCreateFileRefusesToOverwrite(t *testing.T) {
	src := newDataDir(t, 1)
	dir := t.TempDir()
	out := filepath.Join(dir, "b.tar.gz")
	if err := os.WriteFile(out, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := backup.CreateFile(context.Background(), out, backup.Options{DataDir: src})
	if !errors.Is(err, backup.ErrExists) {
		t.Fatalf("err = %v, want ErrExists", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "precious" {
		t.Fatal("the existing file was changed")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
}

func TestCreateRefuses(t *testing.T) {
	ctx := context.Background()
	noDB := t.TempDir()
	if _, err := server.LoadMaterial(noDB); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		dir  string
		want error
	}{
		{"no key material", t.TempDir(), server.ErrNoMaterial},
		{"no database", noDB, backup.ErrNoDatabase},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if _, err := backup.Create(ctx, &buf, backup.Options{DataDir: tc.dir}); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	// A symbolic link in the key material is refused, not followed.
	dir := newDataDir(t, 0)
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "tsa", "extra.pem")); err != nil {
		t.Fatal(err)
	}
	if _, err := backup.Create(ctx, io.Discard, backup.Options{DataDir: dir}); !errors.Is(err, backup.ErrUnsupported) {
		t.Fatalf("symlink: err = %v, want ErrUnsupported", err)
	}
}

// entry is one member of a crafted archive.
type entry struct {
	name string
	body []byte
	typ  byte
}

func writeArchive(t testing.TB, entries []entry, trailer []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		h := &tar.Header{Name: e.name, Typeflag: typ, Mode: 0o600, Size: int64(len(e.body)), ModTime: time.Unix(0, 0)}
		if typ == tar.TypeSymlink {
			h.Size, h.Linkname = 0, "/etc/passwd"
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			tw.Write(e.body)
		}
	}
	tw.Close()
	zw.Close()
	return append(buf.Bytes(), trailer...)
}

// regzip returns the gzip stream b with extra appended to its content
// (after the tar archive's end).
func regzip(t testing.TB, b, extra []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(append(raw, extra...))
	zw.Close()
	return buf.Bytes()
}

// readArchive returns the entries of a backup.
func readArchive(t testing.TB, b []byte) []entry {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var out []entry
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		out = append(out, entry{name: h.Name, body: body})
	}
}

func keysBackup(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := backup.Create(context.Background(), &buf, backup.Options{DataDir: newDataDir(t, 0), KeysOnly: true, SvcVersion: "test"}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// withManifest returns entries with the manifest replaced by edit's
// result.
func withManifest(t *testing.T, es []entry, edit func(m map[string]any)) []entry {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(es[0].body, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, _ := json.Marshal(m)
	out := append([]entry{{name: es[0].name, body: b}}, es[1:]...)
	return out
}

func files(m map[string]any) []any { return m["files"].([]any) }

// TestRestoreRefuses: every way an archive can differ from its manifest,
// or the target from a fresh directory, is refused with a matchable error,
// and the data directory is left as it was (here: not created).
func TestRestoreRefuses(t *testing.T) {
	good := keysBackup(t)
	es := readArchive(t, good)
	full := func() []byte {
		var buf bytes.Buffer
		if _, err := backup.Create(context.Background(), &buf, backup.Options{DataDir: newDataDir(t, 1)}); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}()
	fes := readArchive(t, full)
	flipped := append([]entry(nil), es...)
	flipped[1] = entry{name: es[1].name, body: append([]byte("x"), es[1].body[1:]...)}
	swapped := append([]entry(nil), es...)
	swapped[1], swapped[2] = swapped[2], swapped[1]
	otherKey := readArchive(t, keysBackup(t))
	for _, tc := range []struct {
		name    string
		archive []byte
		want    error
	}{
		{"not gzip", []byte("hello"), backup.ErrCorrupt},
		{"empty", nil, backup.ErrCorrupt},
		{"a file's bytes changed", writeArchive(t, flipped, nil), backup.ErrCorrupt},
		{"files out of order", writeArchive(t, swapped, nil), backup.ErrCorrupt},
		{"a file missing", writeArchive(t, es[:len(es)-1], nil), backup.ErrCorrupt},
		{"an extra file", writeArchive(t, append(append([]entry(nil), es...), entry{name: "extra", body: []byte("x")}), nil), backup.ErrCorrupt},
		{"manifest not first", writeArchive(t, append(append([]entry(nil), es[1:]...), es[0]), nil), backup.ErrCorrupt},
		{"symlink entry", writeArchive(t, append(es[:1:1], entry{name: es[1].name, typ: tar.TypeSymlink}), nil), backup.ErrCorrupt},
		{"data after the gzip stream", writeArchive(t, es, []byte("more")), backup.ErrCorrupt},
		{"data after the tar archive's end", regzip(t, good, []byte("more")), backup.ErrCorrupt},
		{"gzip checksum damaged", func() []byte {
			b := append([]byte(nil), good...)
			b[len(b)-8] ^= 0xff // the CRC-32 of the gzip trailer
			return b
		}(), backup.ErrCorrupt},
		{"another format", writeArchive(t, withManifest(t, es, func(m map[string]any) { m["format"] = "svc-backup/v2" }), nil), backup.ErrFormat},
		{"unknown manifest field", writeArchive(t, withManifest(t, es, func(m map[string]any) { m["extra"] = 1 }), nil), backup.ErrCorrupt},
		{"path escaping the data directory", writeArchive(t, withManifest(t, es, func(m map[string]any) {
			files(m)[0].(map[string]any)["path"] = "../signing-key.pem"
		}), nil), backup.ErrCorrupt},
		{"absolute path", writeArchive(t, withManifest(t, es, func(m map[string]any) {
			files(m)[0].(map[string]any)["path"] = "/etc/cron.d/x"
		}), nil), backup.ErrCorrupt},
		{"serve lock in the manifest", writeArchive(t, withManifest(t, es, func(m map[string]any) {
			files(m)[0].(map[string]any)["path"] = "serve.lock"
		}), nil), backup.ErrCorrupt},
		{"setup lock in the manifest", writeArchive(t, withManifest(t, es, func(m map[string]any) {
			files(m)[0].(map[string]any)["path"] = "setup.lock"
		}), nil), backup.ErrCorrupt},
		{"setuid mode", writeArchive(t, withManifest(t, es, func(m map[string]any) {
			files(m)[0].(map[string]any)["mode"] = "4755"
		}), nil), backup.ErrCorrupt},
		{"signing key of another service", writeArchive(t, withManifest(t, otherKey, func(m map[string]any) {
			var mine map[string]any
			json.Unmarshal(es[0].body, &mine)
			m["signing_key_id"] = mine["signing_key_id"]
		}), nil), backup.ErrCorrupt},
		{"database schema newer than this svc", writeArchive(t, withManifest(t, fes, func(m map[string]any) {
			m["database"].(map[string]any)["schema_version"] = 999
		}), nil), store.ErrSchemaTooNew},
		{"database schema other than the snapshot's", writeArchive(t, withManifest(t, fes, func(m map[string]any) {
			m["database"].(map[string]any)["schema_version"] = 1
		}), nil), backup.ErrCorrupt},
		{"database not a SQLite file", writeArchive(t, func() []entry {
			junk := bytes.Repeat([]byte("junk"), 1024)
			sum := sha256.Sum256(junk)
			out := withManifest(t, fes, func(m map[string]any) {
				f := files(m)[0].(map[string]any)
				f["size"], f["sha256"] = len(junk), hex.EncodeToString(sum[:])
			})
			out[1].body = junk
			return out
		}(), nil), backup.ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "data")
			_, err := backup.Restore(context.Background(), bytes.NewReader(tc.archive), backup.RestoreOptions{DataDir: dst})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if _, serr := os.Stat(dst); !errors.Is(serr, fs.ErrNotExist) {
				t.Fatalf("a refused restore left %s (%v): %v", dst, serr, err)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(dst), "signing-key.pem")); !errors.Is(err, fs.ErrNotExist) {
				t.Fatal("a file was written outside the data directory")
			}
		})
	}
	// The good archive restores, and a data directory that is not empty
	// is refused and left as it was.
	dst := t.TempDir()
	if _, err := backup.Restore(context.Background(), bytes.NewReader(good), backup.RestoreOptions{DataDir: filepath.Join(dst, "ok")}); err != nil {
		t.Fatalf("the unmodified archive: %v", err)
	}
	busy := t.TempDir()
	os.WriteFile(filepath.Join(busy, "svc.db"), []byte("live"), 0o600)
	if _, err := backup.Restore(context.Background(), bytes.NewReader(good), backup.RestoreOptions{DataDir: busy}); !errors.Is(err, backup.ErrNotEmpty) {
		t.Fatalf("non-empty data directory: err = %v", err)
	}
	if names := keys(tree(t, busy)); strings.Join(names, ",") != "svc.db" {
		t.Fatalf("the non-empty directory now holds %v", names)
	}
	// An empty mounted volume (lost+found only) is fresh.
	vol := t.TempDir()
	os.Mkdir(filepath.Join(vol, "lost+found"), 0o700)
	if _, err := backup.Restore(context.Background(), bytes.NewReader(good), backup.RestoreOptions{DataDir: vol}); err != nil {
		t.Fatalf("volume with lost+found: %v", err)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// FuzzRestore: whatever the bytes, Restore does not panic, writes nothing
// outside the data directory, and either restores (a valid backup) or
// leaves no data directory behind.
func FuzzRestore(f *testing.F) {
	good := keysBackup(f)
	f.Add(good)
	f.Add(good[:len(good)/2])
	es := readArchive(f, good)
	f.Add(writeArchive(f, es[:1], nil))
	f.Add(writeArchive(f, []entry{{name: backup.ManifestName, body: []byte(`{"format":"svc-backup/v1","files":[{"path":"../x"}]}`)}}, nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		root := t.TempDir()
		dst := filepath.Join(root, "data")
		_, err := backup.Restore(context.Background(), bytes.NewReader(b), backup.RestoreOptions{DataDir: dst})
		entries, _ := os.ReadDir(root)
		if err != nil && len(entries) != 0 {
			t.Fatalf("a refused restore left %v: %v", entries, err)
		}
		if err == nil && (len(entries) != 1 || entries[0].Name() != "data") {
			t.Fatalf("a restore wrote outside the data directory: %v", entries)
		}
	})
}

// TestParseManifest checks the manifest's rules one by one.
func TestParseManifest(t *testing.T) {
	base := func() map[string]any {
		return map[string]any{
			"format": backup.Format, "contents": "keys", "created_at": "2026-11-28T00:00:00.000Z", "svc_version": "test",
			"signing_key_id": "0123456789abcdef",
			"files":          []any{map[string]any{"path": "signing-key.pem", "size": 1, "sha256": strings.Repeat("a", 64), "mode": "0600", "secret": true}},
		}
	}
	file := func(m map[string]any) map[string]any { return m["files"].([]any)[0].(map[string]any) }
	for _, tc := range []struct {
		name string
		edit func(m map[string]any)
		want error
	}{
		{"valid", func(m map[string]any) {}, nil},
		{"contents", func(m map[string]any) { m["contents"] = "all" }, backup.ErrCorrupt},
		{"full without database", func(m map[string]any) { m["contents"] = "full" }, backup.ErrCorrupt},
		{"keys with database", func(m map[string]any) {
			m["database"] = map[string]any{"engine": "sqlite", "path": "signing-key.pem", "schema_version": 7}
		}, backup.ErrCorrupt},
		{"database not first", func(m map[string]any) {
			m["contents"] = "full"
			m["database"] = map[string]any{"engine": "sqlite", "path": "svc.db", "schema_version": 7}
		}, backup.ErrCorrupt},
		{"upper-case hash", func(m map[string]any) { file(m)["sha256"] = strings.Repeat("A", 64) }, backup.ErrCorrupt},
		{"short key id", func(m map[string]any) { m["signing_key_id"] = "abc" }, backup.ErrCorrupt},
		{"mode without leading zero", func(m map[string]any) { file(m)["mode"] = "600" }, backup.ErrCorrupt},
		{"dot path", func(m map[string]any) { file(m)["path"] = "./signing-key.pem" }, backup.ErrCorrupt},
		{"backslash path", func(m map[string]any) { file(m)["path"] = `tsa\root.pem` }, backup.ErrCorrupt},
		{"wal file", func(m map[string]any) { file(m)["path"] = "svc.db-wal" }, backup.ErrCorrupt},
		{"listed twice", func(m map[string]any) { m["files"] = append(m["files"].([]any), m["files"].([]any)[0]) }, backup.ErrCorrupt},
		{"file and directory", func(m map[string]any) {
			m["files"] = append(m["files"].([]any), map[string]any{"path": "signing-key.pem/x", "size": 1, "sha256": strings.Repeat("a", 64), "mode": "0600", "secret": true})
		}, backup.ErrCorrupt},
		{"negative size", func(m map[string]any) { file(m)["size"] = -1 }, backup.ErrCorrupt},
		{"missing field", func(m map[string]any) { delete(file(m), "secret") }, backup.ErrCorrupt},
		{"bad time", func(m map[string]any) { m["created_at"] = "yesterday" }, backup.ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := base()
			tc.edit(m)
			b, _ := json.Marshal(m)
			_, err := backup.ParseManifest(b)
			if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	// Duplicate keys: one accepted encoding.
	if _, err := backup.ParseManifest([]byte(`{"format":"svc-backup/v1","format":"svc-backup/v1"}`)); !errors.Is(err, backup.ErrCorrupt) {
		t.Fatalf("duplicate key: %v", err)
	}
}

// TestUnaccounted: what a data directory holds beyond what a backup
// carries or knowingly leaves out is named, so a new part of the data
// directory is never silently missing from backups.
func TestUnaccounted(t *testing.T) {
	dir := newDataDir(t, 1)
	for _, f := range []string{"serve.lock", "setup.lock", "svc.db-wal", "svc.db-shm", ".svc-backup-123"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := backup.Unaccounted(dir, backup.Layout{})
	if err != nil || len(got) != 0 {
		t.Fatalf("a data directory of svc serve's files: %v %v", got, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "log", "tile"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err = backup.Unaccounted(dir, backup.Layout{})
	want := []string{filepath.Join(dir, "log"), filepath.Join(dir, "notes.txt")}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("Unaccounted = %v, %v; want %v", got, err, want)
	}
	layout := backup.DataDirLayout()
	layout.Items = append(layout.Items, backup.Item{Path: "log", Dir: true})
	if got, err := backup.Unaccounted(dir, layout); err != nil || !slices.Equal(got, want[1:]) {
		t.Fatalf("with log in the layout: %v, %v", got, err)
	}
}
