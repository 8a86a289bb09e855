package logwriter

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/svc-gov/svc/pkg/core/tlog"
	fnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
)

// TestWitnessAnswers: every answer the C2SP tlog-witness protocol allows
// to add-checkpoint is classified (the real omniwitness gives 200, 409
// with its size and 422 in the other tests; these are the rest), and a
// 409 with a smaller size is followed by a request with a consistency
// proof from that size.
func TestWitnessAnswers(t *testing.T) {
	skey, vkey, err := note.GenerateKey(strings.NewReader(strings.Repeat("k", 64)), "witness.test/w")
	if err != nil {
		t.Fatal(err)
	}
	signer, err := fnote.NewSignerForCosignatureV1(skey)
	if err != nil {
		t.Fatal(err)
	}
	cvkey, err := fnote.VKeyToCosignatureV1(vkey)
	if err != nil {
		t.Fatal(err)
	}
	v, err := fnote.NewVerifierForCosignatureV1(cvkey)
	if err != nil {
		t.Fatal(err)
	}
	text := "svc.test/log\n5\nRbnTkWM633D+dbYhwlHO5fXiEAxeExuY2PRQoE8LgWo=\n"
	cp := []byte(text + "\n\u2014 svc.test/log AAAAAAAA\n")
	sig, err := signer.Sign([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	good := fmt.Sprintf("\u2014 witness.test/w %s\n", base64.StdEncoding.EncodeToString(append([]byte{byte(v.KeyHash() >> 24), byte(v.KeyHash() >> 16), byte(v.KeyHash() >> 8), byte(v.KeyHash())}, sig...)))
	bad := strings.Replace(good, good[len(good)-6:len(good)-2], "AAAA", 1)
	type answer struct {
		status int
		ctype  string
		body   string
	}
	for _, c := range []struct {
		name    string
		answers []answer
		latest  uint64
		want    error // nil: no failure
		lines   int
		stale   bool
		second  string // the second request's body must start with this
	}{
		{"cosigned", []answer{{200, "", good}}, 5, nil, 1, false, ""},
		{"asks for its size, then cosigns", []answer{{409, "text/x.tlog.size", "3\n"}, {200, "", good}}, 5, nil, 1, false, "old 3\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n"},
		{"a cosignature that does not verify", []answer{{200, "", bad}}, 5, ErrWitnessRejected, 0, false, ""},
		{"no cosignature", []answer{{200, "", ""}}, 5, ErrWitnessRejected, 0, false, ""},
		{"has seen more entries than the log", []answer{{409, "text/x.tlog.size", "7\n"}}, 5, ErrWitnessConflict, 0, false, ""},
		{"has seen a newer checkpoint of the log", []answer{{409, "text/x.tlog.size", "7\n"}}, 8, nil, 0, true, ""},
		{"same size, other root", []answer{{409, "", ""}}, 5, ErrWitnessConflict, 0, false, ""},
		{"proof rejected", []answer{{422, "", ""}}, 5, ErrWitnessConflict, 0, false, ""},
		{"unknown origin", []answer{{404, "", ""}}, 5, ErrWitnessRejected, 0, false, ""},
		{"untrusted key", []answer{{403, "", ""}}, 5, ErrWitnessRejected, 0, false, ""},
		{"bad request", []answer{{400, "", ""}}, 5, ErrWitnessRejected, 0, false, ""},
		{"server error", []answer{{500, "", ""}}, 5, ErrWitnessRejected, 0, false, ""},
		{"unreadable size", []answer{{409, "text/x.tlog.size", "many\n"}}, 5, ErrWitnessRejected, 0, false, ""},
		{"keeps asking", []answer{{409, "text/x.tlog.size", "1\n"}, {409, "text/x.tlog.size", "2\n"}, {409, "text/x.tlog.size", "3\n"}}, 5, ErrWitnessRejected, 0, false, ""},
		{"unreachable", nil, 5, ErrWitnessUnreachable, 0, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var bodies []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				a := c.answers[min(len(bodies), len(c.answers)-1)]
				bodies = append(bodies, string(b))
				mu.Unlock()
				if a.ctype != "" {
					w.Header().Set("Content-Type", a.ctype)
				}
				w.WriteHeader(a.status)
				w.Write([]byte(a.body))
			}))
			if c.answers == nil {
				srv.Close()
			} else {
				defer srv.Close()
			}
			wc := &witnessClient{name: "witness.test/w", url: srv.URL + "/add-checkpoint", v: v, hc: srv.Client(), sem: make(chan struct{}, 1)}
			proof := func(_ context.Context, from, to uint64) ([][]byte, error) {
				if from == 0 || from >= to || to != 5 {
					return nil, fmt.Errorf("proof %d→%d asked of a checkpoint of 5", from, to)
				}
				return [][]byte{make([]byte, 32)}, nil
			}
			lines, ev := wc.cosign(context.Background(), cp, 5, func() uint64 { return c.latest }, proof)
			if c.want == nil && ev.Err != nil || c.want != nil && !errors.Is(ev.Err, c.want) {
				t.Errorf("event error %v, want %v", ev.Err, c.want)
			}
			if len(lines) != c.lines || ev.Stale != c.stale || ev.Witness != "witness.test/w" || ev.CheckpointSize != 5 {
				t.Errorf("%d lines, event %+v; want %d lines, stale %v", len(lines), ev, c.lines, c.stale)
			}
			if c.lines > 0 {
				with, err := tlog.SortSignatures(append(cp, []byte(strings.Join(lines, "\n")+"\n")...))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := note.Open(with, note.VerifierList(v)); err != nil {
					t.Errorf("the cosignature line does not verify: %v", err)
				}
			}
			if len(bodies) > 0 && !strings.HasPrefix(bodies[0], "old 0\n\n") {
				t.Errorf("first request %q, want old 0 and no proof", bodies[0])
			}
			if c.second != "" && (len(bodies) < 2 || !strings.HasPrefix(bodies[1], c.second)) {
				t.Errorf("requests %q, want a second starting %q", bodies, c.second)
			}
		})
	}
}

// FuzzTilePath: the read-only handler's path check never panics on a
// request path, and accepts only paths Tessera's layout writes.
func FuzzTilePath(f *testing.F) {
	for _, p := range []string{"checkpoint", "tile/0/000", "tile/0/x001/234.p/7", "tile/entries/000.p/5", "tile/entries/.p", ".state/treeState"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if kind, _, _, _ := classify(p); kind != "" && p != "checkpoint" && !tilePathRE.MatchString(p) {
			t.Fatalf("accepted %q", p)
		}
	})
}
