package client

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/signing"
)

// RegisterCheck registers a check manifest (POST /api/v1/manifests). The
// id is content-addressed (see ManifestID), so registering again returns
// the same id. It needs the service.
func (p *Pipeline) RegisterCheck(ctx context.Context, m api.Manifest) (api.ManifestRegistration, error) {
	var reg api.ManifestRegistration
	if err := p.enter(); err != nil {
		return reg, err
	}
	defer p.exit()
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	body, err := document.Marshal(m.WithEmptyLists())
	if err != nil {
		return reg, fmt.Errorf("svc client: register check: %w", err)
	}
	p.autoFlush(ctx)
	data, _, err := p.call(ctx, http.MethodPost, "/api/v1/manifests", body)
	if err != nil {
		p.noteFailure(err)
		return reg, fmt.Errorf("svc client: register check %s: %w", m.Name, err)
	}
	if err := json.Unmarshal(data, &reg); err != nil {
		return reg, fmt.Errorf("svc client: register check: answer: %w", err)
	}
	return reg, nil
}

// ManifestID computes a manifest's id locally, as the service does:
// "sha256:" of its RFC 8785 canonical JSON. Records may name it before
// the manifest is registered (for example while the service is down).
func ManifestID(m api.Manifest) (string, error) {
	raw, err := document.Marshal(m.WithEmptyLists())
	if err != nil {
		return "", err
	}
	c, err := document.SignedBytes(raw)
	if err != nil {
		return "", err
	}
	return commitment.String(c), nil
}

// RegisterReviewer registers a human reviewer's Ed25519 public key for the
// organisation (POST /api/v1/reviewers) and returns its reviewer key id
// (idempotent). It needs the service.
func (p *Pipeline) RegisterReviewer(ctx context.Context, pub ed25519.PublicKey, name string) (string, error) {
	if err := p.enter(); err != nil {
		return "", err
	}
	defer p.exit()
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	pemKey, err := signing.MarshalPublicKeyPEM(pub)
	if err != nil {
		return "", fmt.Errorf("svc client: register reviewer: %w", err)
	}
	body, err := json.Marshal(api.ReviewerKeyRequest{PublicKey: string(pemKey), Name: name})
	if err != nil {
		return "", err
	}
	p.autoFlush(ctx)
	data, _, err := p.call(ctx, http.MethodPost, "/api/v1/reviewers", body)
	if err != nil {
		p.noteFailure(err)
		return "", fmt.Errorf("svc client: register reviewer: %w", err)
	}
	var res api.ReviewerKeyResult
	if err := json.Unmarshal(data, &res); err != nil {
		return "", fmt.Errorf("svc client: register reviewer: answer: %w", err)
	}
	return res.ReviewerKeyID, nil
}
