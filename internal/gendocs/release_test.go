package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

const repoRoot = "../.."

// releaseConfig is the part of .goreleaser.yaml that ships man pages.
type releaseConfig struct {
	Archives []struct {
		ID    string      `yaml:"id"`
		Files []yaml.Node `yaml:"files"`
	} `yaml:"archives"`
	Casks []struct {
		Name     string   `yaml:"name"`
		IDs      []string `yaml:"ids"`
		Manpages []string `yaml:"manpages"`
	} `yaml:"homebrew_casks"`
}

// archiveFile is a files entry of an archive in its long form.
type archiveFile struct {
	Src         string `yaml:"src"`
	Dst         string `yaml:"dst"`
	StripParent bool   `yaml:"strip_parent"`
}

func loadRelease(t *testing.T) releaseConfig {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rc releaseConfig
	if err := yaml.Unmarshal(b, &rc); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if len(rc.Archives) == 0 || len(rc.Casks) == 0 {
		t.Fatalf(".goreleaser.yaml: %d archives, %d casks", len(rc.Archives), len(rc.Casks))
	}
	return rc
}

// archiveManPages lists the man pages an archive ships, as paths inside it
// (man/man1/NAME.1), from its files entries whose dst is under man. The
// pages must land in a section directory (man/man1), so that the unpacked
// archive is a manual tree (MANPATH=man), and only pages of section 1 go
// there.
func archiveManPages(t *testing.T, files []yaml.Node) []string {
	t.Helper()
	var out []string
	for _, n := range files {
		var f archiveFile
		if n.Kind != yaml.MappingNode || n.Decode(&f) != nil || !strings.HasPrefix(f.Dst, "man") {
			continue
		}
		if !f.StripParent {
			t.Errorf("files entry %s -> %s: without strip_parent the pages land in %s/%s", f.Src, f.Dst, f.Dst, path.Dir(f.Src))
		}
		if f.Dst != "man/man1" {
			t.Errorf("files entry %s -> %s: man pages go to man/man1 (a manual tree man reads), not %s", f.Src, f.Dst, f.Dst)
		}
		matches, err := filepath.Glob(filepath.Join(repoRoot, filepath.FromSlash(f.Src)))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range matches {
			if !strings.HasSuffix(m, ".1") {
				t.Errorf("files entry %s: %s is not a section 1 page", f.Src, m)
			}
			out = append(out, f.Dst+"/"+filepath.Base(m))
		}
	}
	return out
}

// TestReleaseManPagesDoNotCollide: the svc and svc-verify archives ship man
// pages of distinct file names, and each Homebrew cask installs exactly the
// pages of its archive, so installing both casks (one man1 directory) finds
// no page twice. `svc verify` and the svc-verify binary were both
// man/svc-verify.1.
func TestReleaseManPagesDoNotCollide(t *testing.T) {
	rc := loadRelease(t)
	shipped := map[string][]string{} // archive id -> man/NAME.1
	owner := map[string]string{}     // man/NAME.1 -> archive id
	for _, a := range rc.Archives {
		pages := archiveManPages(t, a.Files)
		if len(pages) == 0 {
			t.Errorf("archive %s ships no man pages", a.ID)
		}
		for _, p := range pages {
			if o, ok := owner[p]; ok {
				t.Errorf("%s is shipped by both archives %s and %s", p, o, a.ID)
			}
			owner[p] = a.ID
		}
		shipped[a.ID] = pages
	}
	installed := map[string]string{} // man/NAME.1 -> cask
	for _, c := range rc.Casks {
		var want []string
		for _, id := range c.IDs {
			want = append(want, shipped[id]...)
		}
		for _, p := range c.Manpages {
			if o, ok := installed[p]; ok {
				t.Errorf("%s is installed by both casks %s and %s", p, o, c.Name)
			}
			installed[p] = c.Name
			if !slices.Contains(want, p) {
				t.Errorf("cask %s installs %s, which its archives %v do not ship", c.Name, p, c.IDs)
			}
		}
		for _, p := range want {
			if !slices.Contains(c.Manpages, p) {
				t.Errorf("cask %s does not install %s of its archives %v", c.Name, p, c.IDs)
			}
		}
	}
}

// apache2SHA256 is the SHA-256 of the Apache License 2.0 text as the
// Apache Software Foundation publishes it (LICENSE-2.0.txt).
const apache2SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"

// TestReleaseShipsLicense: every archive lists LICENSE*, and the glob
// finds the repository's LICENSE: the full Apache 2.0 text. The archives
// listed it while there was none.
func TestReleaseShipsLicense(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "LICENSE"))
	if err != nil {
		t.Fatalf("LICENSE: %v", err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != apache2SHA256 {
		t.Errorf("LICENSE is not the Apache License 2.0 text as published (sha256 %x)", sum)
	}
	for _, a := range loadRelease(t).Archives {
		listed := false
		for _, n := range a.Files {
			if n.Kind != yaml.ScalarNode || !strings.HasPrefix(n.Value, "LICENSE") {
				continue
			}
			matches, err := filepath.Glob(filepath.Join(repoRoot, n.Value))
			if err != nil || len(matches) == 0 {
				t.Errorf("archive %s lists %s, which matches no file", a.ID, n.Value)
			}
			listed = true
		}
		if !listed {
			t.Errorf("archive %s ships no LICENSE", a.ID)
		}
	}
}

// TestGoreleaserCheck runs `goreleaser check` (what make release-check
// runs) with the pinned goreleaser when scripts/install-goreleaser.sh has
// built it into the cache; it is skipped otherwise (the build takes
// minutes: make release-check does it once).
func TestGoreleaserCheck(t *testing.T) {
	script, err := os.ReadFile(filepath.Join(repoRoot, "scripts", "install-goreleaser.sh"))
	if err != nil {
		t.Fatal(err)
	}
	version := ""
	for _, line := range strings.Split(string(script), "\n") {
		if v, ok := strings.CutPrefix(line, "VERSION="); ok {
			version = v
		}
	}
	if version == "" {
		t.Fatal("scripts/install-goreleaser.sh pins no VERSION")
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	bin := filepath.Join(cache, "svc", "goreleaser", version, "goreleaser")
	if d := os.Getenv("SVC_GORELEASER_DIR"); d != "" {
		bin = filepath.Join(d, "goreleaser")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("goreleaser %s is not built (make release-check builds it): %v", version, err)
	}
	cmd := exec.Command(bin, "check")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("goreleaser check: %v\n%s", err, out)
	}
}
