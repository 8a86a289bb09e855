package api_test

import (
	"crypto/sha256"
	"encoding/hex"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// structTags returns, per struct type declared in the non-test Go files of
// dir, the sorted JSON names of its fields ("" when it has no json tag).
func structTags(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || ts.Assign.IsValid() {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			var names []string
			for _, fld := range st.Fields.List {
				if fld.Tag == nil {
					continue
				}
				tag, err := strconv.Unquote(fld.Tag.Value)
				if err != nil {
					continue
				}
				name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
				if name != "" && name != "-" {
					names = append(names, name)
				}
			}
			if len(names) > 0 {
				slices.Sort(names)
				out[filepath.Base(f)+": "+ts.Name.Name] = strings.Join(names, " ")
			}
			return true
		})
	}
	return out
}

// TestWireTypesHaveOneHome fails when pkg/client or pkg/service/server declares a
// struct whose JSON field names are those of a pkg/core/api type: a copy of a
// wire type, which must be the pkg/core/api one instead.
func TestWireTypesHaveOneHome(t *testing.T) {
	apiTypes := map[string]string{}
	for name, tags := range structTags(t, ".") {
		apiTypes[tags] = name
	}
	if len(apiTypes) < 10 {
		t.Fatalf("found %d pkg/core/api wire types, want the scan to see them all", len(apiTypes))
	}
	for _, dir := range []string{"../../client", "../../service/server"} {
		if _, err := os.Stat(dir); err != nil {
			t.Fatal(err)
		}
		for name, tags := range structTags(t, dir) {
			if a, ok := apiTypes[tags]; ok {
				t.Errorf("%s/%s copies the wire type %s (json %s): use the pkg/core/api type", filepath.Base(dir), name, a, tags)
				continue
			}
			// A partial copy (three or more of an api type's JSON names and
			// nothing else) is a copy too: it reads the same wire format.
			names := strings.Fields(tags)
			if len(names) < 3 {
				continue
			}
			for apiTags, a := range apiTypes {
				if isSubset(names, strings.Fields(apiTags)) {
					t.Errorf("%s/%s copies part of the wire type %s (json %s): use the pkg/core/api type", filepath.Base(dir), name, a, tags)
				}
			}
		}
	}
}

func TestValidWorkflowID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"default", true},
		{"claims.v2_eu:prod-1", true},
		{strings.Repeat("a", api.MaxWorkflowIDBytes), true},
		{"", false},
		{strings.Repeat("a", api.MaxWorkflowIDBytes+1), false},
		{"has space", false},
		{"slash/no", false},
		{"é", false},
	} {
		if got := api.ValidWorkflowID(tc.id); got != tc.want {
			t.Errorf("ValidWorkflowID(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}

func TestKeyID(t *testing.T) {
	for _, tc := range []struct{ key, want string }{
		// sha256("pk_sb_test") and sha256("pk_live_test"), first 12 hex digits.
		{"pk_sb_test", "pk_sb_" + sha12("pk_sb_test")},
		{"pk_live_test", "pk_live_" + sha12("pk_live_test")},
	} {
		got := api.KeyID(tc.key)
		if got != tc.want {
			t.Errorf("KeyID(%q) = %q, want %q", tc.key, got, tc.want)
		}
		if !api.ValidKeyID(got) {
			t.Errorf("ValidKeyID(KeyID(%q) = %q) = false", tc.key, got)
		}
	}
	for _, id := range []string{"", "pk_sb_", "pk_sb_0123456789ab0", "pk_test_0123456789ab", "pk_live_0123456789AB", "pk_sb_test"} {
		if api.ValidKeyID(id) {
			t.Errorf("ValidKeyID(%q) = true", id)
		}
	}
}

// TestEnvironmentOf: a key (or key id) selects its environment by the
// prefix vpec.Environment.KeyPrefix names, the one a VPEC's api_key_id
// must carry; any other prefix selects none.
func TestEnvironmentOf(t *testing.T) {
	for _, tc := range []struct {
		key string
		env vpec.Environment
		ok  bool
	}{
		{"pk_sb_0123456789ab", vpec.Sandbox, true}, {"pk_sb_", vpec.Sandbox, true},
		{"pk_live_0123456789ab", vpec.Production, true},
		{"pk_test_x", "", false}, {"PK_SB_x", "", false}, {"pk_li", "", false}, {"", "", false},
	} {
		if env, ok := api.EnvironmentOf(tc.key); env != tc.env || ok != tc.ok {
			t.Errorf("EnvironmentOf(%q) = %q, %v; want %q, %v", tc.key, env, ok, tc.env, tc.ok)
		}
	}
	for _, e := range []vpec.Environment{vpec.Sandbox, vpec.Production} {
		if env, ok := api.EnvironmentOf(api.KeyID(e.KeyPrefix() + "k")); !ok || env != e {
			t.Errorf("a %s key's id selects %q", e, env)
		}
	}
}

func sha12(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:12]
}

// isSubset reports whether every element of sub is in set.
func isSubset(sub, set []string) bool {
	for _, s := range sub {
		if !slices.Contains(set, s) {
			return false
		}
	}
	return true
}

// TestValidatorsHaveOneHome fails when pkg/client or pkg/service/server declares
// its own copy of a validator that pkg/core/api holds (the workflow id rule,
// the API key id and its pattern): a function of that name whose body is
// more than a call of the pkg/core/api one, or the key id pattern as a literal.
func TestValidatorsHaveOneHome(t *testing.T) {
	homed := map[string]bool{"validworkflowid": true, "keyid": true, "validkeyid": true}
	for _, dir := range []string{"../../client", "../../service/server"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncDecl:
					if n.Recv == nil && homed[strings.ToLower(n.Name.Name)] && !callsAPI(n.Body) {
						t.Errorf("%s: %s re-implements a pkg/core/api validator: call the pkg/core/api one", fset.Position(n.Pos()), n.Name.Name)
					}
				case *ast.BasicLit:
					if n.Kind == token.STRING && strings.Contains(n.Value, "pk_(sb|live)") {
						t.Errorf("%s: API key id pattern as a literal: use api.ValidKeyID", fset.Position(n.Pos()))
					}
				}
				return true
			})
		}
	}
}

// callsAPI reports whether body is a single return of a pkg/core/api call.
func callsAPI(body *ast.BlockStmt) bool {
	if body == nil || len(body.List) != 1 {
		return false
	}
	ret, ok := body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return false
	}
	call, ok := ret.Results[0].(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "api"
}
