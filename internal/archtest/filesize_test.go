package archtest

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFileLines is the most lines a hand-written Go file of the repository
// has: past it, a file holds more than one job and is split by concern.
const maxFileLines = 700

// longFiles are the files allowed past maxFileLines, each doing one job
// that reads best whole.
var longFiles = map[string]string{
	"pkg/core/canonical/canonical.go": "one RFC 8785 parser and serializer: the grammar's states refer to each other throughout",
	"pkg/ml/tokenizer/load.go":        "one loader of Hugging Face tokenizer.json: each pipeline stage's decoder is a case of the same switch",
}

// TestFileSize fails on a non-test, non-generated Go file over
// maxFileLines lines that longFiles does not name, and on a longFiles
// entry that is no longer long (or gone), so the list stays true.
func TestFileSize(t *testing.T) {
	long := map[string]int{}
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if generated(data) {
			return nil
		}
		if n := bytes.Count(data, []byte("\n")); n > maxFileLines {
			rel, _ := filepath.Rel("../..", path)
			long[filepath.ToSlash(rel)] = n
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for f, n := range long {
		if _, ok := longFiles[f]; !ok {
			t.Errorf("%s has %d lines (at most %d): split it by concern, or add it to longFiles with the reason it reads best whole", f, n, maxFileLines)
		}
	}
	for f := range longFiles {
		if _, ok := long[f]; !ok {
			t.Errorf("longFiles names %s, which is not over %d lines (or gone): remove it from the list", f, maxFileLines)
		}
	}
}

// generated reports whether a Go file carries the standard "Code
// generated ... DO NOT EDIT." line before its package clause.
func generated(data []byte) bool {
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, "package ") {
			return false
		}
		if strings.HasPrefix(line, "// Code generated ") && strings.HasSuffix(line, " DO NOT EDIT.") {
			return true
		}
	}
	return false
}
