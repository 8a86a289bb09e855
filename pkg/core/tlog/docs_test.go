package tlog_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/tlog"
)

// TestDocExamples: the worked examples of docs/TRANSPARENCY.md are what
// this package computes: the monitoring key, the leaf, its hash, the log
// key, and the receipt, which verifies for the example VPEC.
func TestDocExamples(t *testing.T) {
	md, err := os.ReadFile("../../../docs/TRANSPARENCY.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(md)
	for _, want := range []string{exampleOrgKey, "```text\n" + exampleLeaf + "```", exampleLeafHash} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/TRANSPARENCY.md does not show %q", want)
		}
	}
	vkey := regexp.MustCompile("`(svc\\.test/log\\+[0-9a-f]{8}\\+[A-Za-z0-9+/=]+)`").FindStringSubmatch(doc)
	receipt := regexp.MustCompile(`(?m)^(\{"checkpoint":.*\})$`).FindStringSubmatch(doc)
	if vkey == nil || receipt == nil {
		t.Fatal("docs/TRANSPARENCY.md: no log key or receipt example found")
	}
	key, err := tlog.ParseLogKey(vkey[1])
	if err != nil {
		t.Fatal(err)
	}
	none, err := tlog.ParseWitnessPolicy([]byte("quorum none\n"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := tlog.NewVerifier(key, none)
	if err != nil {
		t.Fatal(err)
	}
	e := exampleEntry()
	got, err := v.VerifyReceipt([]byte(receipt[1]), tlog.Subject{VPECID: e.VPECID, Digest: e.Digest})
	if err != nil {
		t.Fatalf("the documented receipt: %v", err)
	}
	if cp := string(got.Checkpoint.Note); !strings.Contains(doc, "```text\n"+cp+"```") {
		t.Errorf("docs/TRANSPARENCY.md does not show the receipt's checkpoint:\n%s", cp)
	}
	// The longest leaf is as long as the document says.
	e.VPECID = "vpec_" + strings.Repeat("a", 128)
	l, err := tlog.NewLeaf(exampleKey(t), e)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(l.Marshal()); !strings.Contains(doc, "The longest leaf is "+strconv.Itoa(n)+" bytes") {
		t.Errorf("the longest leaf is %d bytes; docs/TRANSPARENCY.md says otherwise", n)
	}
	if _, err := tlog.ParseLeaf(l.Marshal()); err != nil {
		t.Errorf("the longest leaf: %v", err)
	}
}
