package server_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/sigstore"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// TestAttestationEndpoint: GET /api/v1/vpecs/{id}/attestation serves the
// issued VPEC as an in-toto statement in a DSSE envelope signed by the
// service key (internal/sigstoretest verifies the same form with
// sigstore-go and cosign), only to the VPEC's organisation.
func TestAttestationEndpoint(t *testing.T) {
	e := newEnv(t)
	run := e.open(e.keyA)
	for _, r := range chain(run.RunID, 2) {
		if code, body := e.do("POST", "/api/v1/runs/"+run.RunID+"/records", e.keyA, r, nil); code != 201 {
			t.Fatalf("record: %d %s", code, body)
		}
	}
	code, doc := e.do("POST", "/api/v1/runs/"+run.RunID+"/close", e.keyA, nil, nil)
	if code != 200 {
		t.Fatalf("close: %d %s", code, doc)
	}
	var v vpec.VPEC
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/vpecs/" + v.VPECID + "/attestation"
	req, _ := http.NewRequest("GET", e.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+e.keyA)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != sigstore.BundleMediaType {
		t.Fatalf("GET attestation: %d %s", resp.StatusCode, ct)
	}
	code, body := e.do("GET", path, e.keyA, nil, nil)
	if code != 200 {
		t.Fatalf("GET attestation: %d %s", code, body)
	}
	var b struct {
		VerificationMaterial struct {
			PublicKey struct{ Hint string }
		}
		DSSEEnvelope struct {
			Payload     []byte
			PayloadType string
			Signatures  []struct{ Sig []byte }
		}
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	env := b.DSSEEnvelope
	if b.VerificationMaterial.PublicKey.Hint != v.SigningKeyID || env.PayloadType != sigstore.PayloadTypeInToto || len(env.Signatures) != 1 {
		t.Fatalf("bundle: %s", body)
	}
	pub, err := e.mat.Trust.Key(v.SigningKeyID)
	if err != nil {
		t.Fatal(err)
	}
	if !ed25519.Verify(pub, sigstore.PAE(env.PayloadType, env.Payload), env.Signatures[0].Sig) {
		t.Fatal("DSSE signature does not verify with the service key")
	}
	var st struct {
		Type          string `json:"_type"`
		PredicateType string `json:"predicateType"`
		Subject       []struct {
			Name   string
			Digest map[string]string
		}
		Predicate json.RawMessage
	}
	if err := json.Unmarshal(env.Payload, &st); err != nil {
		t.Fatal(err)
	}
	signed, err := vpec.SignedBytes(doc)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(signed)
	if st.Type != sigstore.StatementType || st.PredicateType != sigstore.PredicateTypeVPEC || len(st.Subject) != 1 ||
		st.Subject[0].Name != v.VPECID || st.Subject[0].Digest["sha256"] != hex.EncodeToString(sum[:]) {
		t.Fatalf("statement: %+v", st)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, doc); err != nil || !bytes.Equal(compact.Bytes(), st.Predicate) {
		t.Fatalf("predicate is not the VPEC (%v)", err)
	}

	// Another organisation's key, no key, an unknown VPEC.
	var apiErr api.ErrorBody
	if code, _ := e.do("GET", path, e.keyB, nil, &apiErr); code != 404 || apiErr.Error.Code != api.CodeNotFound {
		t.Errorf("other org: %d %+v", code, apiErr)
	}
	if code, _ := e.do("GET", path, "", nil, nil); code != 401 {
		t.Errorf("no key: %d", code)
	}
	if code, _ := e.do("GET", "/api/v1/vpecs/vpec_00000000-0000-4000-8000-000000000000/attestation", e.keyA, nil, nil); code != 404 {
		t.Errorf("unknown VPEC: %d", code)
	}
}
