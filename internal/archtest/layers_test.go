// Package archtest holds the tests that keep the repository's architecture
// what README.md says it is: the pkg/ groups and the direction of imports
// between them.
package archtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/svc-gov/svc/"

// groups are pkg/'s folders, lowest first. A package may import packages
// of its own group and of groups of a lower level, never of a group of its
// level or above: zk and ml do not know each other, nor do client and
// service.
var groups = []struct {
	name  string
	level int
}{
	{"core", 0},    // formats and offline verification
	{"zk", 1},      // zero-knowledge proofs
	{"ml", 1},      // inference and Bounded Inference
	{"client", 2},  // the Go client library
	{"service", 2}, // the service
	{"app", 3},     // the command-line apps and the verifier page
}

// levelOf returns the group and level of a pkg/ package, ok false for a
// package outside pkg/.
func levelOf(pkg string) (group string, level int, ok bool) {
	rest, found := strings.CutPrefix(pkg, module+"pkg/")
	if !found {
		return "", 0, false
	}
	g, _, _ := strings.Cut(rest, "/")
	for _, x := range groups {
		if x.name == g {
			return g, x.level, true
		}
	}
	return g, -1, true
}

// packages lists every package of the module with its non-test imports of
// the module's own packages.
func packages(t *testing.T) map[string][]string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	cmd := exec.Command(gobin, "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		var own []string
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, module) {
				own = append(own, imp)
			}
		}
		pkgs[f[0]] = own
	}
	return pkgs
}

// TestLayers fails on an import that points up (or across) the groups,
// also through an internal/ package: an internal package takes the level
// of the highest group it imports, directly or not.
func TestLayers(t *testing.T) {
	pkgs := packages(t)
	// internalLevel: the highest level an internal package reaches.
	memo := map[string]int{}
	var reach func(p string, seen map[string]bool) int
	reach = func(p string, seen map[string]bool) int {
		if l, ok := memo[p]; ok {
			return l
		}
		if seen[p] {
			return -1
		}
		seen[p] = true
		level := -1
		for _, imp := range pkgs[p] {
			if _, l, ok := levelOf(imp); ok {
				level = max(level, l)
			} else {
				level = max(level, reach(imp, seen))
			}
		}
		memo[p] = level
		return level
	}
	checked := 0
	for p, imps := range pkgs {
		group, level, ok := levelOf(p)
		if !ok {
			continue
		}
		if level < 0 {
			t.Errorf("%s is in pkg/%s, which is not one of the groups (add it to groups and README.md's layout list)", p, group)
			continue
		}
		checked++
		for _, imp := range imps {
			ig, il, inPkg := levelOf(imp)
			switch {
			case inPkg && ig == group:
			case inPkg && il >= level:
				t.Errorf("%s (pkg/%s, level %d) imports %s (pkg/%s, level %d): imports point down the groups only", p, group, level, imp, ig, il)
			case !inPkg && strings.HasPrefix(imp, module+"internal/"):
				if l := reach(imp, map[string]bool{}); l > level || (l == level && l >= 0 && !sameGroupOnly(pkgs, imp, group)) {
					t.Errorf("%s (pkg/%s, level %d) imports %s, which reaches level %d", p, group, level, imp, l)
				}
			}
		}
	}
	if checked < 40 {
		t.Fatalf("checked %d pkg/ packages, want the whole tree", checked)
	}
}

// sameGroupOnly reports whether every pkg/ package an internal package
// reaches at the importer's level is of the importer's group.
func sameGroupOnly(pkgs map[string][]string, p, group string) bool {
	seen := map[string]bool{}
	var walk func(string) bool
	walk = func(q string) bool {
		if seen[q] {
			return true
		}
		seen[q] = true
		for _, imp := range pkgs[q] {
			if g, _, ok := levelOf(imp); ok {
				if g != group {
					return false
				}
			} else if !walk(imp) {
				return false
			}
		}
		return true
	}
	return walk(p)
}

var (
	layoutBlock = regexp.MustCompile(`(?s)<!-- layout:begin -->\n(.*?)<!-- layout:end -->`)
	layoutLine  = regexp.MustCompile("^- `pkg/([a-z]+)` [^:]*: (.*)$")
	backquoted  = regexp.MustCompile("`([a-z0-9/.]+)`")
)

// TestReadmeLayout keeps README.md's layout list in step with the tree:
// one line per group, in level order, naming each of its top folders.
func TestReadmeLayout(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := layoutBlock.FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no <!-- layout:begin --> ... <!-- layout:end --> list")
	}
	var listed []string
	for _, line := range strings.Split(strings.TrimSpace(string(m[1])), "\n") {
		lm := layoutLine.FindStringSubmatch(line)
		if lm == nil {
			t.Errorf("README.md layout line %q is not of the form \"- `pkg/GROUP` (what): `a`, `b`\"", line)
			continue
		}
		listed = append(listed, lm[1])
		var names []string
		for _, n := range backquoted.FindAllStringSubmatch(lm[2], -1) {
			names = append(names, n[1])
		}
		entries, err := os.ReadDir(filepath.Join("../../pkg", lm[1]))
		if err != nil {
			t.Errorf("README.md lists pkg/%s: %v", lm[1], err)
			continue
		}
		var dirs []string
		for _, e := range entries {
			if e.IsDir() && e.Name() != "testdata" {
				dirs = append(dirs, e.Name())
			}
		}
		if hasGo(filepath.Join("../../pkg", lm[1])) {
			dirs = append(dirs, ".")
		}
		slices.Sort(dirs)
		slices.Sort(names)
		if !slices.Equal(dirs, names) {
			t.Errorf("README.md lists pkg/%s as %q; the tree holds %q (\".\" is the group's own package)", lm[1], names, dirs)
		}
	}
	var want []string
	for _, g := range groups {
		want = append(want, g.name)
	}
	if !slices.Equal(listed, want) {
		t.Errorf("README.md's layout lists groups %q, want %q in that order", listed, want)
	}
	entries, _ := os.ReadDir("../../pkg")
	for _, e := range entries {
		if e.IsDir() && !slices.Contains(want, e.Name()) {
			t.Errorf("pkg/%s is not one of the groups", e.Name())
		}
	}
}

func hasGo(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	return len(m) > 0
}
