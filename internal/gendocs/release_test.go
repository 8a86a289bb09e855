package main

import (
	"os"
	"path"
	"path/filepath"
	"slices"
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
// (man/NAME.1), from its files entries whose dst is man.
func archiveManPages(t *testing.T, files []yaml.Node) []string {
	t.Helper()
	var out []string
	for _, n := range files {
		var f archiveFile
		if n.Kind != yaml.MappingNode || n.Decode(&f) != nil || f.Dst != "man" {
			continue
		}
		if !f.StripParent {
			t.Errorf("files entry %s -> man: without strip_parent the pages land in man/%s", f.Src, path.Dir(f.Src))
		}
		matches, err := filepath.Glob(filepath.Join(repoRoot, filepath.FromSlash(f.Src)))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range matches {
			out = append(out, "man/"+filepath.Base(m))
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
