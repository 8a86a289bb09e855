package clicore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// FileConfig reads the flat YAML or JSON files svc reads, with SVC_*
// environment variables winning over the file.
func TestFileConfig(t *testing.T) {
	cases := []struct {
		name, file, body string
		env              map[string]string
		want             map[string]string // flag -> value; "" means unset
		wantErr          error
	}{
		{name: "yaml", file: "c.yaml", body: "trust-root: /b.pem\nrequire-clean: true\npasses: 3\n",
			want: map[string]string{"trust-root": "/b.pem", "require-clean": "true", "passes": "3", "output": ""}},
		{name: "json", file: "c.json", body: `{"output": "json", "Profile-Dir": "/p"}`,
			want: map[string]string{"output": "json", "profile-dir": "/p"}},
		{name: "environment wins", file: "c.yml", body: "output: text\n", env: map[string]string{"SVC_OUTPUT": "json", "SVC_PROFILE_DIR": "/e"},
			want: map[string]string{"output": "json", "profile-dir": "/e"}},
		{name: "empty environment is unset", file: "c.yml", body: "output: text\n", env: map[string]string{"SVC_OUTPUT": ""},
			want: map[string]string{"output": "text"}},
		{name: "nested and list values are no flag values", file: "c.yaml", body: "server:\n  port: 1\nprofile: [a, b]\nnull-key: ~\n",
			want: map[string]string{"server": "", "profile": "", "null-key": ""}},
		{name: "toml refused", file: "c.toml", body: "output = 'json'\n", wantErr: ErrConfigType},
		{name: "missing", file: "", wantErr: fs.ErrNotExist},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			path := filepath.Join(t.TempDir(), "absent.yaml")
			if c.file != "" {
				path = filepath.Join(t.TempDir(), c.file)
				if err := os.WriteFile(path, []byte(c.body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var fc FileConfig
			err := fc.Read(path)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("Read: %v, want %v", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fc.FileUsed() != path {
				t.Errorf("FileUsed %q", fc.FileUsed())
			}
			for k, want := range c.want {
				got, ok := fc.Lookup(k)
				if ok != (want != "") || got != want {
					t.Errorf("Lookup(%q) = %q, %v; want %q", k, got, ok, want)
				}
			}
		})
	}
}

// A config file is the user's own, but a malformed one must be an error,
// never a panic.
func FuzzFileConfig(f *testing.F) {
	for _, s := range []string{"a: 1\n", `{"a": null, "b": [1, {"c": null}]}`, "- 1\n", "a: {b: {c: ~}}\n", "", "\x00", "a: &x [*x]\n"} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		var fc FileConfig
		if err := fc.Read(path); err != nil {
			return
		}
		for _, k := range fc.FileKeys() {
			fc.Lookup(k)
		}
	})
}
