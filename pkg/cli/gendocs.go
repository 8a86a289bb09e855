package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// docsDate is the date written into generated man pages. It is fixed so
// regenerating the docs is reproducible; bump it when the CLI changes a lot.
var docsDate = time.Date(2026, time.November, 1, 0, 0, 0, 0, time.UTC)

// GenerateDocs writes the CLI reference (markdown under docsDir/cli, man
// pages under docsDir/man) and shell completions (bash, zsh, fish,
// powershell) under completionsDir, for both svc and svc-verify.
func GenerateDocs(docsDir, completionsDir string) error {
	quiet := &Streams{In: bytes.NewReader(nil), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, Getenv: func(string) string { return "" }}
	for _, root := range []*cobra.Command{NewSvcCommand(quiet), NewVerifyCommand(quiet)} {
		root.DisableAutoGenTag = true
		md := filepath.Join(docsDir, "cli", root.Name())
		// One man directory per binary: "svc verify" and the svc-verify
		// root would both be svc-verify.1.
		man := filepath.Join(docsDir, "man", root.Name())
		for _, d := range []string{md, man, completionsDir} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		if err := doc.GenMarkdownTree(root, md); err != nil {
			return fmt.Errorf("markdown for %s: %w", root.Name(), err)
		}
		header := &doc.GenManHeader{Title: root.Name(), Section: "1", Source: "svc", Manual: "svc manual", Date: &docsDate}
		if err := doc.GenManTree(root, header, man); err != nil {
			return fmt.Errorf("man pages for %s: %w", root.Name(), err)
		}
		base := filepath.Join(completionsDir, root.Name())
		gens := []struct {
			ext string
			gen func(*bytes.Buffer) error
		}{
			{".bash", func(b *bytes.Buffer) error { return root.GenBashCompletionV2(b, true) }},
			{".zsh", func(b *bytes.Buffer) error { return root.GenZshCompletion(b) }},
			{".fish", func(b *bytes.Buffer) error { return root.GenFishCompletion(b, true) }},
			{".ps1", func(b *bytes.Buffer) error { return root.GenPowerShellCompletionWithDesc(b) }},
		}
		for _, g := range gens {
			var b bytes.Buffer
			if err := g.gen(&b); err != nil {
				return fmt.Errorf("%s completion for %s: %w", g.ext, root.Name(), err)
			}
			if err := os.WriteFile(base+g.ext, b.Bytes(), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
