package logwriter

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/tlog"
)

// TestWitnessAnswers: every answer the C2SP tlog-witness protocol allows
// an add-checkpoint request is classified (the real omniwitness gives
// 200, 409 with its size and 422 in the other tests; these are the rest),
// and the body Tessera reads next is left intact.
func TestWitnessAnswers(t *testing.T) {
	const vkey = "witness.test/w+d0a48fe3+BJrEaaQ7CZWvL3fQOdLGpaMN5kF7D80vPD9ylpYhaYvv"
	body := "old 0\n\nsvc.test/log\n5\nRbnTkWM633D+dbYhwlHO5fXiEAxeExuY2PRQoE8LgWo=\n\n\u2014 svc.test/log AAAA\n"
	for _, c := range []struct {
		name   string
		status int
		ctype  string
		answer string
		want   error // nil: no failure
	}{
		{"cosigned", 200, "", "\u2014 witness.test/w sig\n", nil},
		{"asks for its size", 409, "text/x.tlog.size", "3\n", nil},
		{"has seen more entries", 409, "text/x.tlog.size", "7\n", ErrWitnessConflict},
		{"same size, other root", 409, "", "", ErrWitnessConflict},
		{"proof rejected", 422, "", "", ErrWitnessConflict},
		{"unknown origin", 404, "", "", ErrWitnessRejected},
		{"untrusted key", 403, "", "", ErrWitnessRejected},
		{"bad request", 400, "", "", ErrWitnessRejected},
		{"server error", 500, "", "", ErrWitnessRejected},
		{"unreadable size", 409, "text/x.tlog.size", "many\n", ErrWitnessRejected},
		{"unreachable", 0, "", "", ErrWitnessUnreachable},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if c.ctype != "" {
					w.Header().Set("Content-Type", c.ctype)
				}
				w.WriteHeader(c.status)
				w.Write([]byte(c.answer))
			}))
			url := srv.URL
			if c.status == 0 {
				srv.Close()
			} else {
				defer srv.Close()
			}
			p, err := tlog.ParseWitnessPolicy([]byte("witness w " + vkey + " " + url + "\nquorum w\n"))
			if err != nil {
				t.Fatal(err)
			}
			var got []WitnessEvent
			w := newWitnessWatch(http.DefaultTransport, p, func(ev WitnessEvent) { got = append(got, ev) })
			req, err := http.NewRequest(http.MethodPost, url+"/add-checkpoint", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			resp, rerr := (&http.Client{Transport: w}).Do(req)
			if len(got) != 1 {
				t.Fatalf("%d events, want 1", len(got))
			}
			ev := got[0]
			if ev.Witness != "witness.test/w" || ev.CheckpointSize != 5 || ev.Status != c.status {
				t.Errorf("event %+v: want witness.test/w, size 5, status %d", ev, c.status)
			}
			if c.want == nil && ev.Err != nil || c.want != nil && !errors.Is(ev.Err, c.want) {
				t.Errorf("event error %v, want %v", ev.Err, c.want)
			}
			if c.status == 0 {
				if rerr == nil {
					t.Error("the transport hid the connection error")
				}
				return
			}
			if rerr != nil {
				t.Fatal(rerr)
			}
			defer resp.Body.Close()
			b := new(strings.Builder)
			if _, err := io.Copy(b, resp.Body); err != nil || b.String() != c.answer {
				t.Errorf("body after the watch %q, %v; want %q", b.String(), err, c.answer)
			}
		})
	}
}
