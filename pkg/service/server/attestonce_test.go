package server_test

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/server"
)

// signIn signs in to the dashboard with key and returns the client.
func (h *hostile) signIn(key string) *http.Client {
	h.t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(h.url + "/dashboard/signin")
	if err != nil {
		h.t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfInput.FindSubmatch(page)
	if m == nil {
		h.t.Fatalf("no CSRF field on the sign-in page")
	}
	req, _ := http.NewRequest("POST", h.url+"/dashboard/signin", strings.NewReader(url.Values{"csrf": {string(m[1])}, "api_key": {key}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if resp, err = c.Do(req); err != nil {
		h.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		h.t.Fatalf("sign-in: %s", resp.Status)
	}
	return c
}

// TestAttestationSealedOnce: the attestation of a VPEC is signed and
// time-stamped once (one RFC 3161 request, an external authority's quota)
// however often it is asked for, concurrently or as the
// dashboard's download, and every answer is the same bytes; each later
// answer costs less than the first (CPU as a ratio: it writes from the
// seal; the first also parses, signs and writes, measured 0.5-0.65x of it
// each with 8 at once). Found: every call
// signed and time-stamped again (42 s CPU and 3 GB for a 255 MiB VPEC).
func TestAttestationSealedOnce(t *testing.T) {
	h := newHostile(t, nil, nil)
	h.closeRun(h.live, h.bigRun(h.live, 1)) // warm up
	doc, id := h.closeRun(h.live, h.bigRun(h.live, 8))
	before := h.tsa.n.Load()
	// Answers are hashed, not kept: the client's memory (this process's)
	// is not the server's.
	get := func() (int, []byte, int64) {
		req, _ := http.NewRequest("GET", h.url+"/api/v1/vpecs/"+id+"/attestation", nil)
		req.Header.Set("Authorization", "Bearer "+h.live)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0, nil, 0
		}
		defer resp.Body.Close()
		sum := sha256.New()
		n, _ := io.Copy(sum, resp.Body)
		return resp.StatusCode, sum.Sum(nil), n
	}
	var firstSum []byte
	var firstLen int64
	cpu1, heap1 := measure(t, func() {
		var status int
		if status, firstSum, firstLen = get(); status != 200 {
			t.Fatalf("attestation: %d", status)
		}
	})
	const again = 8
	cpuN, heapN := measure(t, func() {
		var wg sync.WaitGroup
		for i := range again {
			wg.Go(func() {
				if status, sum, _ := get(); status != 200 || !bytes.Equal(sum, firstSum) {
					t.Errorf("attestation %d: %d, same bytes as the first: %v", i, status, bytes.Equal(sum, firstSum))
				}
			})
		}
		wg.Wait()
	})
	c := h.signIn(h.live)
	resp, err := c.Get(h.url + "/dashboard/vpecs/" + id + "/attestation.sigstore.json")
	if err != nil {
		t.Fatal(err)
	}
	dl, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if dlSum := sha256.Sum256(dl); resp.StatusCode != 200 || !bytes.Equal(dlSum[:], firstSum) {
		t.Errorf("dashboard attestation download: %s, same bytes as the API's: %v", resp.Status, bytes.Equal(dlSum[:], firstSum))
	}
	if n := h.tsa.n.Load() - before; n != 1 {
		t.Errorf("%d timestamp requests for %d attestations of one VPEC, want 1", n, again+2)
	}
	t.Logf("attestation of an 8 MB VPEC (%d bytes): first %v CPU, %.1f MB peak heap; %d more %v CPU (%.2fx the first), %.1f MB peak heap (%.2fx)",
		firstLen, cpu1, float64(heap1)/1e6, again, cpuN, float64(cpuN)/float64(cpu1), float64(heapN)/1e6, float64(heapN)/float64(heap1))
	if cpuN > again*cpu1 {
		t.Errorf("%d more attestations took %.2fx the CPU of the first: more than the first each", again, float64(cpuN)/float64(cpu1))
	}
	if perCall := float64(heapN) / again / float64(len(doc)); perCall > 3 {
		t.Errorf("%d concurrent attestations took %.1fx the VPEC's size of heap each, want at most 3x", again, perCall)
	}
	if sealing := float64(heap1) / float64(len(doc)); sealing > 8 {
		t.Errorf("sealing the attestation took %.1fx the VPEC's size of heap, more than sealCost (8x)", sealing)
	}
}

// TestAttestationAdmission: the VPEC routes take a multiple of their
// VPEC's bytes (one for a read, server's sealCost, 8, for an attestation
// still to be sealed) of the service's LoadBytes before reading it, and
// past it answer 503 service_busy with Retry-After instead of loading
// another copy; sandbox keys hold at most half of it between them. Found:
// nothing bounded them (three parallel attestations of a 255 MiB VPEC with
// a sandbox key took 7.3 GB).
func TestAttestationAdmission(t *testing.T) {
	h := newHostile(t, func(c *server.Config) { c.LoadBytes = 10 << 20 }, nil)
	_, sbID := h.closeRun(h.sb, h.bigRun(h.sb, 1))       // about 1.1 MB
	_, liveID := h.closeRun(h.live, h.bigRun(h.live, 1)) // about 1.1 MB
	gate := make(chan struct{})
	h.tsa.mu.Lock()
	h.tsa.gate = gate
	h.tsa.mu.Unlock()
	released := false
	release := func() {
		if !released {
			released = true
			h.tsa.mu.Lock()
			h.tsa.gate = nil
			h.tsa.mu.Unlock()
			close(gate)
		}
	}
	defer release()
	// A sandbox attestation waits for the authority, holding about 8.8
	// MB (the first sandbox request is admitted past the sandbox half).
	held := make(chan int, 1)
	arrived := h.tsa.n.Load()
	go func() {
		req, _ := http.NewRequest("GET", h.url+"/api/v1/vpecs/"+sbID+"/attestation", nil)
		req.Header.Set("Authorization", "Bearer "+h.sb)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			held <- 0
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		held <- resp.StatusCode
	}()
	for h.tsa.n.Load() == arrived {
		time.Sleep(time.Millisecond) // until the attestation is at the authority
	}
	c := &http.Client{Timeout: time.Minute}
	get := func(key, path string) (int, string, string) {
		req, _ := http.NewRequest("GET", h.url+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v (an unbounded request waited for the authority)", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, errCode(body), resp.Header.Get("Retry-After")
	}
	// Another sandbox read would take the sandbox share past its half.
	if code, ec, ra := get(h.sb, "/api/v1/vpecs/"+sbID); code != 503 || ec != "service_busy" || ra == "" {
		t.Errorf("a second sandbox VPEC read while one holds the sandbox half: %d %s, Retry-After %q; want 503 service_busy with Retry-After", code, ec, ra)
	}
	// A production read fits in what is left; a production attestation
	// to seal (about 8.8 MB more) does not.
	if code, ec, _ := get(h.live, "/api/v1/vpecs/"+liveID); code != 200 {
		t.Errorf("a production VPEC read within the budget: %d %s", code, ec)
	}
	if code, ec, ra := get(h.live, "/api/v1/vpecs/"+liveID+"/attestation"); code != 503 || ec != "service_busy" || ra == "" {
		t.Errorf("an attestation past the budget: %d %s, Retry-After %q; want 503 service_busy with Retry-After", code, ec, ra)
	}
	release()
	if code := <-held; code != 200 {
		t.Errorf("the held sandbox attestation: %d", code)
	}
	for _, p := range []string{"/api/v1/vpecs/" + sbID, "/api/v1/vpecs/" + liveID + "/attestation"} {
		key := h.sb
		if strings.Contains(p, liveID) {
			key = h.live
		}
		if code, ec, _ := get(key, p); code != 200 {
			t.Errorf("GET %s once the budget is free: %d %s", p, code, ec)
		}
	}
}
