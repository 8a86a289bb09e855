// Command gen regenerates pkg/ml/tokenizer/tables_gen.go from Hugging Face's
// tokenizers library (see package gentables):
//
//	go run ./internal/gentables/gen -tokenizers "$(scripts/install-tokenizers.sh)"
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/svc-gov/svc/internal/gentables"
)

func main() {
	dir := flag.String("tokenizers", os.Getenv("SVC_HF_TOKENIZERS"), "directory of the npm tokenizers package (scripts/install-tokenizers.sh prints it)")
	node := flag.String("node", "node", "Node.js executable")
	out := flag.String("o", "pkg/ml/tokenizer/tables_gen.go", "output file")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "gen: -tokenizers or SVC_HF_TOKENIZERS is required (run scripts/install-tokenizers.sh)")
		os.Exit(2)
	}
	probe, err := gentables.Probe(*node, *dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	src, err := gentables.Generate(probe)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
