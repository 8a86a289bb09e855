package keys

// NOT LIVE TESTS. The servers below are emulations, on 127.0.0.1, of the
// parts of the HashiCorp Vault transit API, the AWS KMS JSON API and the
// Cloud KMS v1 REST API that svc's providers call, written from the
// providers' API references. They sign with real Ed25519 and P-256 keys, so
// every signature is checked by crypto/ed25519 and crypto/ecdsa, but they
// prove only that svc speaks those APIs as documented, not that a live
// service accepts svc's credentials (docs/KEYS.md says how an operator
// checks that: svc serve probes its key when it starts).

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeKey is one key version held by a fake provider.
type fakeKey struct {
	priv crypto.Signer
	alg  Algorithm
}

func newFakeKey(t testing.TB, alg Algorithm) fakeKey {
	t.Helper()
	if alg == Ed25519 {
		_, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return fakeKey{k, alg}
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return fakeKey{k, alg}
}

func (k fakeKey) sign(msgOrDigest []byte) []byte {
	if k.alg == Ed25519 {
		return ed25519.Sign(k.priv.(ed25519.PrivateKey), msgOrDigest)
	}
	sig, err := ecdsa.SignASN1(rand.Reader, k.priv.(*ecdsa.PrivateKey), msgOrDigest)
	if err != nil {
		panic(err)
	}
	return sig
}

func (k fakeKey) spki() []byte {
	der, err := x509.MarshalPKIXPublicKey(k.priv.Public())
	if err != nil {
		panic(err)
	}
	return der
}

// failMode makes a fake misbehave for the next requests.
type failMode struct {
	mu      sync.Mutex
	status  int  // answer sign requests with this HTTP status
	corrupt bool // return a signature by another key
}

func (f *failMode) get() (int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.status, f.corrupt
}

func (f *failMode) set(status int, corrupt bool) {
	f.mu.Lock()
	f.status, f.corrupt = status, corrupt
	f.mu.Unlock()
}

// fakeVault emulates Vault's transit engine mounted at "transit":
// GET /v1/transit/keys/NAME and PUT /v1/transit/sign/NAME[/sha2-256].
type fakeVault struct {
	t     testing.TB
	token string
	mu    sync.Mutex
	keys  map[string][]fakeKey // name -> versions 1..n
	fail  failMode
	signs int
}

func (v *fakeVault) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Vault-Token") != v.token {
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"errors":["permission denied"]}`)
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/transit/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 2 {
		http.NotFound(w, r)
		return
	}
	versions := v.keys[parts[1]]
	if len(versions) == 0 {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"errors":[]}`)
		return
	}
	switch {
	case parts[0] == "keys" && r.Method == http.MethodGet:
		keys := map[string]any{}
		for i, k := range versions {
			entry := map[string]any{"creation_time": "2026-11-28T00:00:00Z"}
			if k.alg == Ed25519 {
				entry["name"] = "ed25519"
				entry["public_key"] = base64.StdEncoding.EncodeToString(k.priv.Public().(ed25519.PublicKey))
			} else {
				entry["name"] = "P-256"
				entry["public_key"] = string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: k.spki()}))
			}
			keys[strconv.Itoa(i+1)] = entry
		}
		typ := "ed25519"
		if versions[0].alg == ECDSAP256 {
			typ = "ecdsa-p256"
		}
		json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"type": typ, "latest_version": len(versions), "keys": keys}})
	case parts[0] == "sign" && (r.Method == http.MethodPut || r.Method == http.MethodPost):
		v.signs++
		if status, _ := v.fail.get(); status != 0 {
			w.WriteHeader(status)
			io.WriteString(w, `{"errors":["internal error"]}`)
			return
		}
		var req struct {
			Input      string `json:"input"`
			Prehashed  bool   `json:"prehashed"`
			KeyVersion string `json:"key_version"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		in, _ := base64.StdEncoding.DecodeString(req.Input)
		n := len(versions)
		if kv, _ := strconv.Atoi(req.KeyVersion); kv > 0 {
			n = kv
		}
		k := versions[n-1]
		if k.alg == ECDSAP256 && (!req.Prehashed || len(parts) != 3 || parts[2] != "sha2-256") {
			v.t.Errorf("ECDSA sign request %s prehashed=%v", r.URL.Path, req.Prehashed)
		}
		if k.alg == Ed25519 && req.Prehashed {
			v.t.Errorf("Ed25519 sign request asks for a prehashed signature")
		}
		sig := k.sign(in)
		if _, corrupt := v.fail.get(); corrupt {
			sig = newFakeKey(v.t, k.alg).sign(in)
		}
		json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{
			"signature": fmt.Sprintf("vault:v%d:%s", n, base64.StdEncoding.EncodeToString(sig)), "key_version": n}})
	default:
		http.NotFound(w, r)
	}
}

func (v *fakeVault) rotate(name string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.keys[name] = append(v.keys[name], newFakeKey(v.t, v.keys[name][0].alg))
}

func startFakeVault(t *testing.T) (*fakeVault, Options) {
	v := &fakeVault{t: t, token: "s.test-token", keys: map[string][]fakeKey{
		"svc-vpec": {newFakeKey(t, Ed25519)},
		"svc-tsa":  {newFakeKey(t, ECDSAP256)},
	}}
	srv := httptest.NewServer(v)
	t.Cleanup(srv.Close)
	env := map[string]string{"VAULT_ADDR": srv.URL, "VAULT_TOKEN": v.token}
	return v, Options{Getenv: func(n string) string { return env[n] }}
}

func checkSigner(t *testing.T, s *Signer, alg Algorithm) {
	t.Helper()
	if s.Algorithm() != alg {
		t.Fatalf("algorithm %s, want %s", s.Algorithm(), alg)
	}
	msg := []byte(`{"profile":"credit-v3"}`)
	sig, err := s.SignMessage(context.Background(), msg)
	if err != nil {
		t.Fatal(err)
	}
	switch pub := s.Public().(type) {
	case ed25519.PublicKey:
		if !ed25519.Verify(pub, msg, sig) {
			t.Fatal("crypto/ed25519 rejects the signature")
		}
	case *ecdsa.PublicKey:
		d := sha256.Sum256(msg)
		if !ecdsa.VerifyASN1(pub, d[:], sig) {
			t.Fatal("crypto/ecdsa rejects the signature")
		}
	}
	id, _ := KeyID(s.Public())
	if s.KeyID() != id {
		t.Fatalf("key id %s, want %s", s.KeyID(), id)
	}
}

// TestVaultTransit (not live: an emulated transit API, see the top of the
// file) signs Ed25519 and P-256 through sigstore's Vault wrapper.
func TestVaultTransit(t *testing.T) {
	v, opts := startFakeVault(t)
	ctx := context.Background()
	for _, c := range []struct {
		uri string
		alg Algorithm
	}{{"hashivault://svc-vpec", Ed25519}, {"openbao://svc-tsa", ECDSAP256}} {
		s, err := Open(ctx, c.uri, opts)
		if err != nil {
			t.Fatalf("Open(%s): %v", c.uri, err)
		}
		checkSigner(t, s, c.alg)
		if s.Provider() != strings.Split(c.uri, ":")[0] {
			t.Fatalf("provider %s", s.Provider())
		}
	}

	// A key rotated inside Vault after Open: svc keeps signing with the
	// version its key id names (pinned by the probe).
	s, err := Open(ctx, "hashivault://svc-vpec", opts)
	if err != nil {
		t.Fatal(err)
	}
	v.rotate("svc-vpec")
	checkSigner(t, s, Ed25519)

	// A signing failure mid-run is an error naming the key, and a retry
	// after the provider recovers succeeds: no fallback, no lost key.
	v.fail.set(http.StatusInternalServerError, false)
	_, err = s.SignMessage(ctx, []byte("close run_1"))
	var ke *KeyError
	if !errors.Is(err, ErrSign) || !errors.As(err, &ke) || ke.URI != "hashivault://svc-vpec" || ke.Op != "sign" {
		t.Fatalf("sign while Vault fails: %v", err)
	}
	v.fail.set(0, false)
	checkSigner(t, s, Ed25519)

	// A signature that does not verify under the key's public key (a
	// provider answering with another key) is refused.
	v.fail.set(0, true)
	if _, err := s.SignMessage(ctx, []byte("close run_2")); !errors.Is(err, ErrSign) {
		t.Fatalf("foreign signature accepted: %v", err)
	}
	v.fail.set(0, false)
}

func TestVaultErrors(t *testing.T) {
	v, opts := startFakeVault(t)
	env := func(kv ...string) Options {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return Options{Getenv: func(n string) string { return m[n] }}
	}
	addr := opts.Getenv("VAULT_ADDR")
	cases := []struct {
		name string
		uri  string
		opts Options
		want error
	}{
		{"no address", "hashivault://svc-vpec", env("VAULT_TOKEN", v.token), ErrUnreachable},
		{"no token (no ~/.vault-token fallback)", "hashivault://svc-vpec", env("VAULT_ADDR", addr), ErrUnreachable},
		{"wrong token", "hashivault://svc-vpec", env("VAULT_ADDR", addr, "VAULT_TOKEN", "s.wrong"), ErrUnreachable},
		{"no such key", "hashivault://missing", opts, ErrUnreachable},
		{"nothing listening", "hashivault://svc-vpec", env("VAULT_ADDR", "http://127.0.0.1:1", "VAULT_TOKEN", v.token), ErrUnreachable},
		{"wrong algorithm for the use", "hashivault://svc-tsa", Options{Getenv: opts.Getenv, Want: Ed25519}, ErrAlgorithm},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Open(context.Background(), c.uri, c.opts)
			var ke *KeyError
			if !errors.Is(err, c.want) || !errors.As(err, &ke) || ke.URI != c.uri || ke.Op != "open" {
				t.Fatalf("Open = %v, want %v naming %s", err, c.want, c.uri)
			}
		})
	}
	// The options override the environment.
	s, err := Open(context.Background(), "hashivault://svc-vpec", Options{VaultAddress: addr, VaultToken: v.token})
	if err != nil {
		t.Fatal(err)
	}
	checkSigner(t, s, Ed25519)
}

// fakeAWS emulates AWS KMS's JSON 1.1 API: TrentService.GetPublicKey and
// TrentService.Sign.
type fakeAWS struct {
	t     testing.TB
	keys  map[string]fakeKey
	fail  failMode
	signs int
	mu    sync.Mutex
}

func (a *fakeAWS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKIDSVCTEST/") || !strings.Contains(r.Header.Get("Authorization"), "/eu-west-1/kms/aws4_request") {
		a.t.Errorf("request not SigV4-signed for eu-west-1/kms: %q", r.Header.Get("Authorization"))
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	var req struct {
		KeyID            string `json:"KeyId"`
		Message          []byte `json:"Message"`
		MessageType      string `json:"MessageType"`
		SigningAlgorithm string `json:"SigningAlgorithm"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	k, ok := a.keys[req.KeyID]
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"__type":"NotFoundException","message":"Alias arn:aws:kms:eu-west-1:111122223333:%s is not found."}`, req.KeyID)
		return
	}
	spec, algs := "ECC_NIST_EDWARDS25519", []string{"ED25519_SHA_512", "ED25519_PH_SHA_512"}
	if k.alg == ECDSAP256 {
		spec, algs = "ECC_NIST_P256", []string{"ECDSA_SHA_256"}
	}
	switch r.Header.Get("X-Amz-Target") {
	case "TrentService.GetPublicKey":
		json.NewEncoder(w).Encode(map[string]any{"KeyId": "arn:aws:kms:eu-west-1:111122223333:key/" + req.KeyID,
			"KeySpec": spec, "KeyUsage": "SIGN_VERIFY", "PublicKey": k.spki(), "SigningAlgorithms": algs})
	case "TrentService.Sign":
		a.signs++
		if status, _ := a.fail.get(); status != 0 {
			w.WriteHeader(status)
			io.WriteString(w, `{"__type":"KMSInternalException","message":"internal"}`)
			return
		}
		want := map[Algorithm][2]string{Ed25519: {"RAW", "ED25519_SHA_512"}, ECDSAP256: {"DIGEST", "ECDSA_SHA_256"}}[k.alg]
		if req.MessageType != want[0] || req.SigningAlgorithm != want[1] {
			a.t.Errorf("Sign with %s/%s, want %v", req.MessageType, req.SigningAlgorithm, want)
		}
		if len(req.Message) > AWSMaxMessage {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"__type":"ValidationException","message":"Message too long"}`)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"KeyId": req.KeyID, "Signature": k.sign(req.Message), "SigningAlgorithm": want[1]})
	default:
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"__type":"UnknownOperationException"}`)
	}
}

func startFakeAWS(t *testing.T) (*fakeAWS, *httptest.Server) {
	a := &fakeAWS{t: t, keys: map[string]fakeKey{"alias/svc-vpec": newFakeKey(t, Ed25519), "alias/svc-tsa": newFakeKey(t, ECDSAP256)}}
	srv := httptest.NewTLSServer(a)
	t.Cleanup(srv.Close)
	// The SDK's credential chain reads the environment; keep it off the
	// developer's files and off the EC2 metadata service.
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDSVCTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent/svc-test-aws-config")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/svc-test-aws-credentials")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_MAX_ATTEMPTS", "1")
	t.Setenv("AWS_CA_BUNDLE", "")
	return a, srv
}

// TestAWSKMS (not live: an emulated KMS API, see the top of the file).
func TestAWSKMS(t *testing.T) {
	a, srv := startFakeAWS(t)
	host := strings.TrimPrefix(srv.URL, "https://")
	opts := Options{HTTPClient: srv.Client(), AWSRegion: "eu-west-1"}
	ctx := context.Background()
	ed, err := Open(ctx, "awskms://"+host+"/alias/svc-vpec", opts)
	if err != nil {
		t.Fatal(err)
	}
	checkSigner(t, ed, Ed25519)
	ec, err := Open(ctx, "awskms://"+host+"/alias/svc-tsa", opts)
	if err != nil {
		t.Fatal(err)
	}
	checkSigner(t, ec, ECDSAP256)

	// Pure Ed25519 on AWS KMS signs at most 4096 bytes: a longer message
	// is refused before any request.
	before := a.signs
	_, err = ed.SignMessage(ctx, make([]byte, AWSMaxMessage+1))
	if !errors.Is(err, ErrMessageTooLarge) || a.signs != before {
		t.Fatalf("5 KiB message: %v (%d requests)", err, a.signs-before)
	}
	if _, err := ed.SignMessage(ctx, make([]byte, AWSMaxMessage)); err != nil {
		t.Fatalf("4096-byte message: %v", err)
	}
	// ECDSA signs digests: any message length.
	if _, err := ec.SignMessage(ctx, make([]byte, 1<<20)); err != nil {
		t.Fatalf("ECDSA over a 1 MiB message: %v", err)
	}

	a.fail.set(http.StatusBadRequest, false)
	if _, err := ed.SignMessage(ctx, []byte("x")); !errors.Is(err, ErrSign) {
		t.Fatalf("sign while KMS fails: %v", err)
	}
	a.fail.set(0, false)

	cases := []struct {
		name string
		uri  string
		opts Options
		want error
	}{
		{"no such key", "awskms://" + host + "/alias/missing", opts, ErrKeyNotFound},
		{"no region", "awskms://" + host + "/alias/svc-vpec", Options{HTTPClient: srv.Client()}, ErrUnreachable},
		{"wrong algorithm for the use", "awskms://" + host + "/alias/svc-vpec", Options{HTTPClient: srv.Client(), AWSRegion: "eu-west-1", Want: ECDSAP256}, ErrAlgorithm},
		{"TLS certificate not trusted", "awskms://" + host + "/alias/svc-vpec", Options{AWSRegion: "eu-west-1"}, ErrUnreachable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Open(ctx, c.uri, c.opts)
			var ke *KeyError
			if !errors.Is(err, c.want) || !errors.As(err, &ke) || ke.URI != c.uri {
				t.Fatalf("Open = %v, want %v naming the URI", err, c.want)
			}
		})
	}
}

// fakeGCP emulates Cloud KMS v1 REST: cryptoKeyVersions.getPublicKey and
// cryptoKeyVersions.asymmetricSign.
type fakeGCP struct {
	t      testing.TB
	token  string
	keys   map[string]fakeKey
	fail   failMode
	badCRC bool
	mu     sync.Mutex
}

func (g *fakeGCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer "+g.token {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/v1/")
	name, op := path, ""
	if i := strings.LastIndex(path, ":"); i >= 0 {
		name, op = path[:i], path[i+1:]
	} else if n, ok := strings.CutSuffix(path, "/publicKey"); ok {
		name, op = n, "publicKey"
	}
	k, ok := g.keys[name]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":{"code":404,"message":"%s not found.","status":"NOT_FOUND"}}`, name)
		return
	}
	algName := map[Algorithm]string{Ed25519: "EC_SIGN_ED25519", ECDSAP256: "EC_SIGN_P256_SHA256"}[k.alg]
	switch {
	case op == "publicKey" && r.Method == http.MethodGet:
		p := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: k.spki()}))
		json.NewEncoder(w).Encode(map[string]any{"pem": p, "algorithm": algName, "pemCrc32c": crcString([]byte(p)), "name": name})
	case op == "asymmetricSign" && r.Method == http.MethodPost:
		if status, _ := g.fail.get(); status != 0 {
			w.WriteHeader(status)
			io.WriteString(w, `{"error":{"code":403,"message":"Permission 'cloudkms.cryptoKeyVersions.useToSign' denied","status":"PERMISSION_DENIED"}}`)
			return
		}
		var req struct {
			Data    []byte `json:"data"`
			DataCRC string `json:"dataCrc32c"`
			Digest  *struct {
				SHA256 []byte `json:"sha256"`
			} `json:"digest"`
			DigestCRC string `json:"digestCrc32c"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		resp := map[string]any{"name": name}
		var sig []byte
		if k.alg == Ed25519 {
			if req.Digest != nil || req.DataCRC != crcString(req.Data) {
				g.t.Errorf("Ed25519 request: digest %v, data CRC %s", req.Digest, req.DataCRC)
			}
			sig = k.sign(req.Data)
			resp["verifiedDataCrc32c"] = true
		} else {
			if req.Digest == nil || req.DigestCRC != crcString(req.Digest.SHA256) {
				g.t.Errorf("P-256 request without a checked SHA-256 digest")
			}
			sig = k.sign(req.Digest.SHA256)
			resp["verifiedDigestCrc32c"] = true
		}
		resp["signature"] = sig
		crc := crcString(sig)
		if g.badCRC {
			crc = "1"
		}
		resp["signatureCrc32c"] = crc
		json.NewEncoder(w).Encode(resp)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

const (
	gcpEd   = "projects/svc/locations/europe-west1/keyRings/svc/cryptoKeys/vpec/cryptoKeyVersions/1"
	gcpP256 = "projects/svc/locations/europe-west1/keyRings/svc/cryptoKeys/tsa/cryptoKeyVersions/3"
)

// TestCloudKMS (not live: an emulated Cloud KMS REST API, see the top of
// the file).
func TestCloudKMS(t *testing.T) {
	g := &fakeGCP{t: t, token: "ya29.test", keys: map[string]fakeKey{gcpEd: newFakeKey(t, Ed25519), gcpP256: newFakeKey(t, ECDSAP256)}}
	srv := httptest.NewTLSServer(g)
	defer srv.Close()
	token := func(tok string) func(context.Context) (string, error) {
		return func(context.Context) (string, error) { return tok, nil }
	}
	opts := Options{HTTPClient: srv.Client(), GCPEndpoint: srv.URL, GCPAccessToken: token(g.token)}
	ctx := context.Background()
	ed, err := Open(ctx, "gcpkms://"+gcpEd, opts)
	if err != nil {
		t.Fatal(err)
	}
	checkSigner(t, ed, Ed25519)
	ec, err := Open(ctx, "gcpkms://"+gcpP256, opts)
	if err != nil {
		t.Fatal(err)
	}
	checkSigner(t, ec, ECDSAP256)

	g.badCRC = true
	if _, err := ed.SignMessage(ctx, []byte("x")); !errors.Is(err, ErrSign) {
		t.Fatalf("signature with a bad CRC32C accepted: %v", err)
	}
	g.badCRC = false
	g.fail.set(http.StatusForbidden, false)
	if _, err := ed.SignMessage(ctx, []byte("x")); !errors.Is(err, ErrSign) {
		t.Fatalf("sign refused by IAM: %v", err)
	}
	// Permission to read the public key but not to sign: Open's probe
	// catches it at start-up.
	_, err = Open(ctx, "gcpkms://"+gcpEd, opts)
	if !errors.Is(err, ErrSign) || !strings.Contains(err.Error(), "probe") {
		t.Fatalf("Open without sign permission: %v", err)
	}
	g.fail.set(0, false)

	missing := strings.Replace(gcpEd, "vpec", "other", 1)
	cases := []struct {
		name string
		uri  string
		opts Options
		want error
	}{
		{"no such key version", "gcpkms://" + missing, opts, ErrKeyNotFound},
		{"bad credentials", "gcpkms://" + gcpEd, Options{HTTPClient: srv.Client(), GCPEndpoint: srv.URL, GCPAccessToken: token("expired")}, ErrUnreachable},
		{"wrong algorithm for the use", "gcpkms://" + gcpP256, Options{HTTPClient: srv.Client(), GCPEndpoint: srv.URL, GCPAccessToken: token(g.token), Want: Ed25519}, ErrAlgorithm},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Open(ctx, c.uri, c.opts)
			var ke *KeyError
			if !errors.Is(err, c.want) || !errors.As(err, &ke) || ke.URI != c.uri {
				t.Fatalf("Open = %v, want %v naming the URI", err, c.want)
			}
		})
	}
}
