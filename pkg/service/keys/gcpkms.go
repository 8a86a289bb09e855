package keys

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/oauth2/google"
)

// gcpDefaultEndpoint is Cloud KMS's public REST endpoint.
const gcpDefaultEndpoint = "https://cloudkms.googleapis.com"

// gcpScope is the OAuth 2.0 scope of Cloud KMS.
const gcpScope = "https://www.googleapis.com/auth/cloudkms"

// maxGCPResponse bounds what svc reads from Cloud KMS.
const maxGCPResponse = 1 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// gcpBackend signs with a Cloud KMS key version through the v1 REST API
// (cryptoKeyVersions.getPublicKey and asymmetricSign), authenticated with
// application default credentials. It speaks REST rather than through
// cloud.google.com/go/kms, whose gRPC stack adds about 17 MB to svc.
type gcpBackend struct {
	name     string
	endpoint string
	client   *http.Client
	token    func(context.Context) (string, error)
	alg      Algorithm
}

func openGCP(ctx context.Context, u *URI, opts Options) (*Signer, error) {
	b := &gcpBackend{name: u.GCPName, endpoint: strings.TrimSuffix(opts.GCPEndpoint, "/"), client: opts.httpClient(), token: opts.GCPAccessToken}
	if b.endpoint == "" {
		b.endpoint = gcpDefaultEndpoint
	}
	if b.token == nil {
		ts, err := google.DefaultTokenSource(ctx, gcpScope)
		if err != nil {
			return nil, fmt.Errorf("%w: Google application default credentials: %w", ErrUnreachable, err)
		}
		b.token = func(context.Context) (string, error) {
			t, err := ts.Token()
			if err != nil {
				return "", err
			}
			return t.AccessToken, nil
		}
	}
	var pk struct {
		PEM       string `json:"pem"`
		Algorithm string `json:"algorithm"`
		PEMCRC32C string `json:"pemCrc32c"`
		Name      string `json:"name"`
	}
	if err := b.call(ctx, http.MethodGet, "/v1/"+b.name+"/publicKey", nil, &pk); err != nil {
		return nil, err
	}
	if pk.PEMCRC32C != "" && pk.PEMCRC32C != crcString([]byte(pk.PEM)) {
		return nil, fmt.Errorf("%w: Cloud KMS public key failed its CRC32C check (corrupted in transit)", ErrUnreachable)
	}
	switch pk.Algorithm {
	case "EC_SIGN_ED25519":
		b.alg = Ed25519
	case "EC_SIGN_P256_SHA256":
		b.alg = ECDSAP256
	default:
		return nil, fmt.Errorf("%w: Cloud KMS key version algorithm %s; svc signs with EC_SIGN_ED25519 or EC_SIGN_P256_SHA256", ErrAlgorithm, pk.Algorithm)
	}
	block, _ := pem.Decode([]byte(pk.PEM))
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, fmt.Errorf("%w: Cloud KMS public key is not a PUBLIC KEY PEM block", ErrAlgorithm)
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: Cloud KMS public key: %v", ErrAlgorithm, err)
	}
	if got, err := algorithmOf(pub); err != nil || got != b.alg {
		return nil, fmt.Errorf("%w: Cloud KMS returned a %T public key for algorithm %s", ErrAlgorithm, pub, pk.Algorithm)
	}
	return newSigner(ctx, u.Raw, SchemeGCP, pub, b, true, opts)
}

func crcString(b []byte) string { return strconv.FormatUint(uint64(crc32.Checksum(b, castagnoli)), 10) }

func (g *gcpBackend) sign(ctx context.Context, msg []byte) ([]byte, error) {
	req := map[string]any{}
	if g.alg == Ed25519 {
		req["data"] = base64.StdEncoding.EncodeToString(msg)
		req["dataCrc32c"] = crcString(msg)
	} else {
		req["digest"] = map[string]string{"sha256": base64.StdEncoding.EncodeToString(msg)}
		req["digestCrc32c"] = crcString(msg)
	}
	var resp struct {
		Signature            []byte `json:"signature"`
		SignatureCRC32C      string `json:"signatureCrc32c"`
		VerifiedDataCRC32C   bool   `json:"verifiedDataCrc32c"`
		VerifiedDigestCRC32C bool   `json:"verifiedDigestCrc32c"`
		Name                 string `json:"name"`
	}
	if err := g.call(ctx, http.MethodPost, "/v1/"+g.name+":asymmetricSign", req, &resp); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSign, err)
	}
	verified := resp.VerifiedDataCRC32C
	if g.alg == ECDSAP256 {
		verified = resp.VerifiedDigestCRC32C
	}
	switch {
	case !verified:
		return nil, fmt.Errorf("%w: Cloud KMS did not confirm the request's CRC32C (corrupted in transit); retry", ErrSign)
	case resp.SignatureCRC32C != crcString(resp.Signature):
		return nil, fmt.Errorf("%w: Cloud KMS signature failed its CRC32C check (corrupted in transit); retry", ErrSign)
	case resp.Name != "" && resp.Name != g.name:
		return nil, fmt.Errorf("%w: Cloud KMS signed with %s, not %s", ErrSign, resp.Name, g.name)
	}
	return resp.Signature, nil
}

func (g *gcpBackend) close() error { return nil }

// call makes one Cloud KMS REST request and decodes the JSON answer into
// out. Errors say whether the key is missing (ErrKeyNotFound) or the
// service refused or did not answer (ErrUnreachable).
func (g *gcpBackend) call(ctx context.Context, method, path string, in, out any) error {
	token, err := g.token(ctx)
	if err != nil {
		return fmt.Errorf("%w: Cloud KMS access token: %w", ErrUnreachable, err)
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode Cloud KMS request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, g.endpoint+path, body)
	if err != nil {
		return fmt.Errorf("%w: Cloud KMS request: %w", ErrUnreachable, err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := g.client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: Cloud KMS: %w", ErrUnreachable, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxGCPResponse))
	if err != nil {
		return fmt.Errorf("%w: Cloud KMS: read response: %w", ErrUnreachable, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct {
				Message string `json:"message"`
				Status  string `json:"status"`
			} `json:"error"`
		}
		_ = json.Unmarshal(data, &e)
		reason := fmt.Errorf("Cloud KMS %s %s: HTTP %d %s: %s", method, path, resp.StatusCode, e.Error.Status, e.Error.Message)
		if resp.StatusCode == http.StatusNotFound || e.Error.Status == "NOT_FOUND" || e.Error.Status == "FAILED_PRECONDITION" {
			return fmt.Errorf("%w: %w", ErrKeyNotFound, reason)
		}
		return fmt.Errorf("%w: %w", ErrUnreachable, reason)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%w: Cloud KMS answer is not the expected JSON: %w", ErrUnreachable, err)
	}
	return nil
}
