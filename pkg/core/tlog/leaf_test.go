package tlog_test

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/tlog"
)

// The worked example of docs/TRANSPARENCY.md: a Python script from that
// document alone gives the same bytes.
const (
	exampleSecretHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	exampleOrgKey    = "svc-org-key-v1+acme-health+5b82ba21914a60957d6e3d149d3cbca42f6fb864d3a6127e22514d42b03b3395"
	exampleLeaf      = "svc.tlog.leaf/v1\n" +
		"vpec_id vpec_00000000-0000-4000-8000-00000000c1ea\n" +
		"vpec_digest sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881\n" +
		"issued_at 2026-11-22T00:19:30.000Z\n" +
		"org_tag 354d1b4754cce88c9700ebaf7b625c53c6de6b8e8def2bb9d4c2c75c8524930f\n" +
		"workflow_tag 030ac81f8cf49c6149672a927700e8c835b3f2ca3b2fa7b4cdb8910da3a29719\n" +
		"state_tag 24f5b37c2ac63f9eb00942e163c1288837f842d03f29604ec569b5772f9c08a6\n"
	exampleLeafHash = "ce4a29660069cf01c0450b3215f099c5a07f8067ece8ad4e632b3a96f8502c5f"
)

func exampleEntry() tlog.Entry {
	return tlog.Entry{
		VPECID:      "vpec_00000000-0000-4000-8000-00000000c1ea",
		Digest:      tlog.Digest([]byte("x")),
		OrgID:       "acme-health",
		WorkflowID:  "claims-intake",
		Environment: "production",
		IssuedAt:    time.Date(2026, 11, 22, 0, 19, 30, 0, time.UTC),
		Clean:       false,
	}
}

func exampleKey(t *testing.T) tlog.OrgKey {
	t.Helper()
	secret, _ := hex.DecodeString(exampleSecretHex)
	k, err := tlog.DeriveOrgKey(secret, "acme-health")
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestLeafExample: the documented example's key, leaf and leaf hash.
func TestLeafExample(t *testing.T) {
	k := exampleKey(t)
	if k.String() != exampleOrgKey {
		t.Errorf("org key %s, want %s", k, exampleOrgKey)
	}
	l, err := tlog.NewLeaf(k, exampleEntry())
	if err != nil {
		t.Fatal(err)
	}
	if got := string(l.Marshal()); got != exampleLeaf {
		t.Errorf("leaf:\n%s\nwant:\n%s", got, exampleLeaf)
	}
	if h := l.Hash(); hex.EncodeToString(h[:]) != exampleLeafHash {
		t.Errorf("leaf hash %x, want %s", h, exampleLeafHash)
	}
	back, err := tlog.ParseLeaf([]byte(exampleLeaf))
	if err != nil || back != l {
		t.Errorf("ParseLeaf(example) = %+v, %v", back, err)
	}
	o, mine, err := k.Open(back, "onboarding", "claims-intake")
	if err != nil || !mine || o != (tlog.Opened{Org: "acme-health", Workflow: "claims-intake", Environment: "production", Clean: false}) {
		t.Errorf("Open: %+v %v %v", o, mine, err)
	}
}

// TestNewLeafRefuses: entries that cannot be recorded name the field.
func TestNewLeafRefuses(t *testing.T) {
	k := exampleKey(t)
	for _, c := range []struct {
		name string
		mod  func(*tlog.Entry)
		want string
	}{
		{"vpec id without prefix", func(e *tlog.Entry) { e.VPECID = "00000000" }, "vpec_id"},
		{"vpec id with a space", func(e *tlog.Entry) { e.VPECID = "vpec_a b" }, "vpec_id"},
		{"vpec id with a newline", func(e *tlog.Entry) { e.VPECID = "vpec_a\nb" }, "vpec_id"},
		{"org id of another org", func(e *tlog.Entry) { e.OrgID = "other-org" }, "monitoring key"},
		{"empty workflow", func(e *tlog.Entry) { e.WorkflowID = "" }, "workflow_id"},
		{"workflow with +", func(e *tlog.Entry) { e.WorkflowID = "a+b" }, "workflow_id"},
		{"unknown environment", func(e *tlog.Entry) { e.Environment = "staging" }, "environment"},
		{"year 10000", func(e *tlog.Entry) { e.IssuedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "issued_at"},
	} {
		e := exampleEntry()
		c.mod(&e)
		_, err := tlog.NewLeaf(k, e)
		if !errors.Is(err, tlog.ErrMalformed) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrMalformed naming %s", c.name, err, c.want)
		}
	}
	// Sub-millisecond times and other zones are recorded in UTC to the
	// millisecond.
	e := exampleEntry()
	e.IssuedAt = time.Date(2026, 11, 22, 1, 19, 30, 999999, time.FixedZone("CET", 3600))
	l, err := tlog.NewLeaf(k, e)
	if err != nil || !strings.Contains(string(l.Marshal()), "issued_at 2026-11-22T00:19:30.000Z\n") {
		t.Errorf("leaf of a CET time: %v\n%s", err, l.Marshal())
	}
}

// TestParseLeafOneEncoding: every other spelling of the example leaf is
// refused.
func TestParseLeafOneEncoding(t *testing.T) {
	for _, c := range []struct{ name, leaf, want string }{
		{"CRLF line ends", strings.ReplaceAll(exampleLeaf, "\n", "\r\n"), ""},
		{"no final line feed", strings.TrimSuffix(exampleLeaf, "\n"), "line feed"},
		{"an extra blank line", exampleLeaf + "\n", "lines"},
		{"an extra field", exampleLeaf + "note x\n", "lines"},
		{"fields swapped", strings.Replace(strings.Replace(exampleLeaf, "org_tag", "XX", 1), "workflow_tag", "org_tag", 1), "org_tag"},
		{"uppercase hex", strings.Replace(exampleLeaf, "354d1b", "354D1B", 1), "org_tag"},
		{"short tag", strings.Replace(exampleLeaf, "354d1b", "354d1", 1), "org_tag"},
		{"digest without algorithm", strings.Replace(exampleLeaf, "sha256:2d71", "2d71", 1), "vpec_digest"},
		{"two spaces", strings.Replace(exampleLeaf, "vpec_id vpec", "vpec_id  vpec", 1), "vpec_id"},
		{"seconds only", strings.Replace(exampleLeaf, "30.000Z", "30Z", 1), "issued_at"},
		{"microseconds", strings.Replace(exampleLeaf, "30.000Z", "30.000000Z", 1), "issued_at"},
		{"an offset", strings.Replace(exampleLeaf, "30.000Z", "30.000+00:00", 1), "issued_at"},
		{"lowercase z", strings.Replace(exampleLeaf, "30.000Z", "30.000z", 1), "issued_at"},
		{"a leap second", strings.Replace(exampleLeaf, "00:19:30.000Z", "23:59:60.000Z", 1), "issued_at"},
		{"another version", strings.Replace(exampleLeaf, "leaf/v1", "leaf/v2", 1), "upgrade"},
		{"not a leaf", "hello\n", "svc.tlog.leaf/v1"},
		{"empty", "", "line feed"},
		{"too long", exampleLeaf + strings.Repeat("x", 2000), "bytes"},
	} {
		_, err := tlog.ParseLeaf([]byte(c.leaf))
		if !errors.Is(err, tlog.ErrMalformed) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrMalformed mentioning %q", c.name, err, c.want)
		}
	}
}

// TestOrgKeyCommitments: an organisation's key finds its leaves and only
// them; the commitments of two leaves of one organisation and workflow
// share nothing visible; a leaf whose state cannot be opened is an error,
// not a skip.
func TestOrgKeyCommitments(t *testing.T) {
	k := exampleKey(t)
	secret, _ := hex.DecodeString(exampleSecretHex)
	other, err := tlog.DeriveOrgKey(secret, "other-org")
	if err != nil {
		t.Fatal(err)
	}
	e1, e2 := exampleEntry(), exampleEntry()
	e2.VPECID = "vpec_00000000-0000-4000-8000-0000000000b2"
	e2.Clean, e2.Environment = true, "sandbox"
	l1, _ := tlog.NewLeaf(k, e1)
	l2, _ := tlog.NewLeaf(k, e2)
	if l1.OrgTag == l2.OrgTag || l1.WorkflowTag == l2.WorkflowTag || l1.StateTag == l2.StateTag {
		t.Error("two leaves of one organisation and workflow share a commitment: linkable without the key")
	}
	if _, mine, err := other.Open(l1); mine || err != nil {
		t.Errorf("another organisation's key opens the leaf: %v %v", mine, err)
	}
	o, mine, err := k.Open(l2)
	if !mine || err != nil || o.Workflow != "" || o.Environment != "sandbox" || !o.Clean {
		t.Errorf("Open without workflow candidates: %+v %v %v", o, mine, err)
	}
	bad := l2
	bad.StateTag[0] ^= 1
	if _, mine, err := k.Open(bad); !mine || !errors.Is(err, tlog.ErrMalformed) {
		t.Errorf("a leaf whose state does not open: mine %v, %v", mine, err)
	}
	// Text form.
	back, err := tlog.ParseOrgKey(k.String())
	if err != nil || back != k || back.Org() != "acme-health" {
		t.Errorf("ParseOrgKey(String()) = %v, %v", back, err)
	}
	for _, s := range []string{"", "svc-org-key-v1+acme-health", "svc-org-key-v1+acme-health+" + strings.Repeat("A", 64),
		"svc-org-key-v2+acme-health+" + strings.Repeat("a", 64), "svc-org-key-v1+bad org+" + strings.Repeat("a", 64)} {
		if _, err := tlog.ParseOrgKey(s); !errors.Is(err, tlog.ErrMalformed) {
			t.Errorf("ParseOrgKey(%q): %v, want ErrMalformed", s, err)
		}
	}
	if _, err := tlog.DeriveOrgKey(secret[:16], "acme-health"); !errors.Is(err, tlog.ErrMalformed) {
		t.Errorf("a 16-byte secret: %v", err)
	}
}

func TestReceiptPath(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"vpec.json", "vpec.receipt.json"},
		{"out/run.json", "out/run.receipt.json"},
		{"vpec", "vpec.receipt.json"},
		{"vpec.JSON", "vpec.JSON.receipt.json"},
		{"a.json.json", "a.json.receipt.json"},
		{".json", ".receipt.json"},
	} {
		if got := tlog.ReceiptPath(c.in); got != c.want {
			t.Errorf("ReceiptPath(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
