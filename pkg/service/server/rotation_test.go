package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/keys"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store/sqlite"
)

// TestRotationUnderLoadAndCompromise rotates the VPEC key twice while
// clients keep closing runs: each rotation drains the closes in flight,
// writes the next trust root with the new key valid from T (the next
// second: genTime has second precision) and the service is restarted on
// the new key at T. No close fails, every VPEC verifies, and under the
// final root every VPEC's key is valid at its genTime (KeyFor), while the
// first key is refused after its end. A compromise of the last key at T3
// then refuses its VPECs with genTime >= T3 and keeps the earlier ones,
// and every version chains from version 1 (VerifyChain).
func TestRotationUnderLoadAndCompromise(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	st, err := sqlite.Open(ctx, filepath.Join(dir, "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := server.CreateOrg(ctx, st, "alpha", server.TierStandard, time.Now()); err != nil {
		t.Fatal(err)
	}
	apiKey, _, err := server.CreateAPIKey(ctx, st, "alpha", vpec.Production, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	mat, _, err := server.OpenMaterial(ctx, data, server.KeyConfig{}, true)
	if err != nil {
		t.Fatal(err)
	}
	first, _, wrote, err := server.EnsureTrustRoot(ctx, data, mat, "", keys.Options{}, time.Now())
	if err != nil || !wrote {
		t.Fatalf("trust root v1: %v %v", wrote, err)
	}
	newKey := func(name string) string {
		uri, _ := keys.FileURI(filepath.Join(dir, name))
		if _, err := keys.Generate(ctx, uri, keys.Ed25519, keys.Options{}); err != nil {
			t.Fatal(err)
		}
		return uri
	}

	var (
		mu    sync.Mutex
		vpecs [][]byte
		fails []string
	)
	// load closes runs on e with 4 clients until stop is closed.
	load := func(e *env, stop <-chan struct{}) *sync.WaitGroup {
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					run := e.open(apiKey)
					for _, r := range chain(run.RunID, 2) {
						if code, body := e.do("POST", "/api/v1/runs/"+run.RunID+"/records", apiKey, r, nil); code != 201 {
							mu.Lock()
							fails = append(fails, string(body))
							mu.Unlock()
						}
					}
					code, body := e.do("POST", "/api/v1/runs/"+run.RunID+"/close", apiKey, nil, nil)
					mu.Lock()
					if code != 200 {
						fails = append(fails, string(body))
					} else {
						vpecs = append(vpecs, body)
					}
					mu.Unlock()
				}
			}()
		}
		return &wg
	}
	start := func(m *server.Material) (*env, func()) {
		srv, err := server.New(server.Config{Storage: server.StorageOf(st), Signer: m.Signer, Timestamper: m.TSA, Trust: m.Trust})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		return &env{t: t, st: st, url: hs.URL, mat: m}, hs.Close
	}
	waitFor := func(n int) {
		for {
			mu.Lock()
			got := len(vpecs) + len(fails)
			mu.Unlock()
			if got >= n {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	e, stopServer := start(mat)
	stop := make(chan struct{})
	wg := load(e, stop)
	kc := server.KeyConfig{}
	var rotations []time.Time
	for i, name := range []string{"vpec-2.pem", "vpec-3.pem"} {
		waitFor(8 * (i + 1))
		uri := newKey(name)
		// Rotate while the clients keep closing; T one to two seconds
		// ahead, so the drain below ends before it even on a loaded
		// machine (the next whole second can be a millisecond away).
		at := time.Now().Add(2 * time.Second).Truncate(time.Second)
		if _, err := server.RotateKey(ctx, data, server.Rotation{Purpose: trustroot.PurposeVPEC, NewKey: uri, At: at}, "", keys.Options{}, time.Now()); err != nil {
			t.Fatal(err)
		}
		// Drain before T, restart on the new key at T.
		close(stop)
		wg.Wait()
		stopServer()
		if time.Now().After(at) {
			t.Logf("rotation %d: the drain ended after T; VPECs sealed after T by the old key would be refused below", i+1)
		}
		time.Sleep(time.Until(at))
		mat.Close()
		kc.VPEC = uri
		if mat, _, err = server.OpenMaterial(ctx, data, kc, true); err != nil {
			t.Fatal(err)
		}
		rotations = append(rotations, at)
		e, stopServer = start(mat)
		stop = make(chan struct{})
		wg = load(e, stop)
	}
	waitFor(len(vpecs) + 8)
	close(stop)
	wg.Wait()
	stopServer()
	defer mat.Close()
	if len(fails) > 0 {
		t.Fatalf("%d closes failed during rotation, first: %s", len(fails), fails[0])
	}

	final, _, err := server.ReadTrustRoot(data)
	if err != nil {
		t.Fatal(err)
	}
	var history []*trustroot.Root
	for v := int64(2); v <= final.Version; v++ {
		b, err := os.ReadFile(filepath.Join(data, server.TrustRootHistoryDir, strconv.FormatInt(v, 10)+".json"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := trustroot.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		history = append(history, r)
	}
	if _, err := trustroot.VerifyChain(first, history...); err != nil {
		t.Fatalf("the rotated roots do not chain from version 1: %v", err)
	}
	type sealed struct {
		keyID   string
		genTime time.Time
	}
	var all []sealed
	keysUsed := map[string]bool{}
	for _, doc := range vpecs {
		if rep, err := verify.Verify(doc, verify.Options{Trust: mat.Trust}); err != nil || rep.Verdict != "VALID" {
			t.Fatalf("VPEC does not verify: %v", err)
		}
		var v vpec.VPEC
		if err := json.Unmarshal(doc, &v); err != nil {
			t.Fatal(err)
		}
		gt := genTimeOf(t, v.TimestampRFC3161)
		if _, err := final.KeyFor(trustroot.PurposeVPEC, v.SigningKeyID, gt); err != nil {
			t.Errorf("VPEC of key %s at %s refused by the final root: %v", v.SigningKeyID, gt, err)
		}
		all = append(all, sealed{v.SigningKeyID, gt})
		keysUsed[v.SigningKeyID] = true
	}
	if len(keysUsed) != 3 {
		t.Fatalf("VPECs signed by %d keys, want 3", len(keysUsed))
	}
	// The first key is refused after its end.
	if _, err := final.KeyFor(trustroot.PurposeVPEC, all[0].keyID, rotations[0]); !errors.Is(err, trustroot.ErrExpired) {
		t.Errorf("first key at its end: %v, want expired", err)
	}

	// Compromise of the last key at T3: its VPECs from T3 on are refused.
	last := all[len(all)-1]
	t3 := last.genTime
	compromised, err := server.CompromiseKey(ctx, data, last.keyID, t3, "", keys.Options{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := trustroot.VerifyUpdate(final, compromised); err != nil {
		t.Fatalf("the compromise root does not chain: %v", err)
	}
	refused, kept := 0, 0
	for _, s := range all {
		_, err := compromised.KeyFor(trustroot.PurposeVPEC, s.keyID, s.genTime)
		switch {
		case s.keyID == last.keyID && !s.genTime.Before(t3):
			if !errors.Is(err, trustroot.ErrCompromised) {
				t.Errorf("VPEC at %s after the compromise at %s: %v, want compromised", s.genTime, t3, err)
			}
			refused++
		case err != nil:
			t.Errorf("VPEC of key %s at %s, not compromised, refused: %v", s.keyID, s.genTime, err)
		default:
			kept++
		}
	}
	if refused == 0 || kept == 0 {
		t.Fatalf("compromise refused %d and kept %d VPECs; want some of each", refused, kept)
	}
	t.Logf("%d VPECs over 3 keys, 0 failed closes; compromise refused %d, kept %d", len(all), refused, kept)
}

func genTimeOf(t *testing.T, tokB64 string) time.Time {
	t.Helper()
	tok, err := base64.StdEncoding.DecodeString(tokB64)
	if err != nil {
		t.Fatal(err)
	}
	info, err := timestamp.ParseResponse(tok)
	if err != nil {
		t.Fatal(err)
	}
	return info.GenTime
}
