package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// allowedVars are the exported package-level variables of pkg/ that are
// not error sentinels, each with the reason it is a variable. Anything
// else is a constant, an accessor that returns a copy, or unexported.
var allowedVars = map[string]string{
	"pkg/service/store/storetest.T0": "the conformance suite's fixed clock (a time.Time cannot be a constant); a test-support package no program links",
}

// TestNoExportedMutableGlobals fails on an exported package-level var in
// pkg/ (non-test files) that is not an error sentinel: a value any
// importer could change under every other one. A sentinel is a var named
// Err... whose value is errors.New, fmt.Errorf or another package's Err...
func TestNoExportedMutableGlobals(t *testing.T) {
	fset := token.NewFileSet()
	seen := 0
	err := filepath.WalkDir("../../pkg", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("../..", path)
		pkg := filepath.ToSlash(filepath.Dir(rel))
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !name.IsExported() {
						continue
					}
					seen++
					var value ast.Expr
					if i < len(vs.Values) {
						value = vs.Values[i]
					}
					if sentinel(name.Name, value) {
						continue
					}
					if _, ok := allowedVars[pkg+"."+name.Name]; ok {
						continue
					}
					t.Errorf("%s: exported package-level var %s.%s can be changed by any importer: make it a constant, an accessor that returns a copy, or unexported (or add it to allowedVars with the reason)",
						fset.Position(name.Pos()), filepath.Base(pkg), name.Name)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 50 {
		t.Fatalf("saw %d exported vars in pkg/, want the whole tree (the error sentinels alone are more)", seen)
	}
}

// sentinel reports whether an exported var is an error sentinel: named
// Err... with the value errors.New(...), fmt.Errorf(...), or another
// sentinel (pkg.ErrX).
func sentinel(name string, value ast.Expr) bool {
	if !strings.HasPrefix(name, "Err") {
		return false
	}
	switch v := value.(type) {
	case *ast.CallExpr:
		sel, ok := v.Fun.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		pkg, ok := sel.X.(*ast.Ident)
		return ok && (pkg.Name == "errors" && sel.Sel.Name == "New" || pkg.Name == "fmt" && sel.Sel.Name == "Errorf")
	case *ast.SelectorExpr:
		return strings.HasPrefix(v.Sel.Name, "Err")
	case *ast.Ident:
		return strings.HasPrefix(v.Name, "Err")
	}
	return false
}
