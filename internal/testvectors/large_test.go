package testvectors

import (
	"os"
	"testing"
)

func TestWriteLarge(t *testing.T) {
	dir := os.Getenv("SVC_LARGE_DIR")
	if dir == "" {
		t.Skip("SVC_LARGE_DIR not set")
	}
	if _, err := LargeVPEC(dir, 10000); err != nil {
		t.Fatal(err)
	}
}
