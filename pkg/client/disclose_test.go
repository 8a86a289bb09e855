package client_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/disclosure"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// A selective record needs its manifest and a JSON object input; a
// transparent one a bounded input. Nothing is recorded otherwise.
func TestDisclosureOptionsRefused(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	run, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	m := api.Manifest{Name: "kyc", Version: "1", Stages: []api.ManifestStage{{StageName: "kyc", ProofCeiling: "execution", Disclose: []string{"a"}}}}
	id, _ := client.ManifestID(m)
	sel := client.WithVisibility(client.Selective)
	for name, tc := range map[string]struct {
		manifestID string
		input      []byte
		opts       []client.RecordOption
		also       error
	}{
		"selective without manifest":          {id, []byte(`{"a":1}`), []client.RecordOption{sel}, nil},
		"selective, another manifest":         {manifest, []byte(`{"a":1}`), []client.RecordOption{sel, client.WithManifest(m)}, nil},
		"selective, not an object":            {id, []byte(`["a"]`), []client.RecordOption{sel, client.WithManifest(m)}, disclosure.ErrMalformed},
		"selective, lossy number":             {id, []byte(`{"a":12345678901234567890}`), []client.RecordOption{sel, client.WithManifest(m)}, disclosure.ErrMalformed},
		"selective, review signed beforehand": {id, []byte(`{"a":1}`), []client.RecordOption{sel, client.WithManifest(m), client.WithReviewerSignature(&client.Session{}, nil, nil, nil, "")}, nil},
		"transparent, too large":              {id, bytes.Repeat([]byte("x"), disclosure.MaxDisclosedBytes+1), []client.RecordOption{client.WithVisibility(client.Transparent)}, nil},
	} {
		_, err := run.Record(ctx, "kyc", tc.manifestID, vpec.ResultPass, tc.input, tc.opts...)
		if !errors.Is(err, client.ErrInvalidRecord) || (tc.also != nil && !errors.Is(err, tc.also)) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := run.Record(ctx, "kyc", id, vpec.ResultPass, []byte(`{"a":1}`), sel, client.WithManifest(m),
		client.WithReviewerSignature(&client.Session{}, nil, nil, nil, "")); err == nil || !strings.Contains(err.Error(), "not WithReviewerSignature") {
		t.Errorf("selective with a review signed beforehand: %v", err)
	}
	res, err := run.Record(ctx, "kyc", id, vpec.ResultPass, []byte(`{"a":1,"b":2}`), sel, client.WithManifest(m))
	if err != nil || res.Sequence != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	// The caller keeps every field's salt: the undisclosed "b" can be
	// opened later, and the fields recompute the commitment.
	var digests []string
	for _, d := range res.AllDisclosures {
		dg, err := d.Digest()
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, dg)
	}
	if len(res.AllDisclosures) != 2 || res.AllDisclosures[1].Field != "b" || disclosure.Commitment(digests) != res.CommitmentHash {
		t.Fatalf("all disclosures %+v", res.AllDisclosures)
	}
	// Empty input and output round-trip in a transparent record.
	if _, err := run.Record(ctx, "t", id, vpec.ResultPass, nil, client.WithVisibility(client.Transparent), client.WithOutput([]byte{})); err != nil {
		t.Fatal(err)
	}
	v, err := run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.mustValid(v, 2)
}
