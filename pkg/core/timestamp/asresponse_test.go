package timestamp

import (
	"bytes"
	"context"
	"encoding/asn1"
	"errors"
	"path/filepath"
	"testing"
)

// AsResponse keeps a response byte for byte, wraps a bare token in a
// granted response that verifies as the original does, and refuses
// anything else with ErrMalformed.
func TestAsResponse(t *testing.T) {
	a, err := InitAuthority(filepath.Join(t.TempDir(), "tsa"), AuthorityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := digestOf("signature bytes")
	resp, err := a.Timestamp(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := AsResponse(resp); err != nil || !bytes.Equal(got, resp) {
		t.Fatalf("response: changed or refused (%v)", err)
	}
	tok, err := parseAny(resp)
	if err != nil {
		t.Fatal(err)
	}
	var tr timeStampResp
	if _, err := asn1.Unmarshal(resp, &tr); err != nil {
		t.Fatal(err)
	}
	wrapped, err := AsResponse(tr.TimeStampToken.FullBytes)
	if err != nil || bytes.Equal(wrapped, tr.TimeStampToken.FullBytes) {
		t.Fatalf("bare token: %v", err)
	}
	again, err := parseAny(wrapped)
	if err != nil || !again.tst.GenTime.Equal(tok.tst.GenTime) {
		t.Fatalf("wrapped token parses differently: %v", err)
	}
	for _, bad := range [][]byte{nil, {0x30, 0x00}, []byte("not DER"), append(append([]byte{}, resp...), 0)} {
		if _, err := AsResponse(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("AsResponse(%x): %v, want ErrMalformed", bad, err)
		}
	}
}
