package server_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/tlogtest"
	"github.com/svc-gov/svc/internal/witnesstest"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/logwriter"
	"github.com/svc-gov/svc/pkg/service/server"
)

// getPage GETs path with a signed-in client and returns status and body.
func getPage(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// runRow returns the runs page's row of the run whose VPEC is id ("" when
// the page has none).
func runRow(page, id string) string {
	m := regexp.MustCompile(`(?s)<tr data-run="[^"]*">(?:(?:[^<]|<[^/]|</[^t]|</t[^r])*?)` + regexp.QuoteMeta(id) + `.*?</tr>`).FindString(page)
	return m
}

// TestDashboardShowsLogPosition: an organisation's runs page and VPEC
// page show each of its VPECs' place in the transparency log, in the
// same words: "not logged" on a service without a log, "pending" for a
// VPEC stored before the log (not yet appended), and for a logged one its
// leaf index, the size of the checkpoint covering it and (no witness
// policy here) that none applies, with a receipt download that verifies
// as the API's receipt. Another organisation sees neither the position
// nor the receipt (404), and a session of the other environment gets 403.
func TestDashboardShowsLogPosition(t *testing.T) {
	e := newEnv(t)
	// beta (production) closes one VPEC while the service has no log.
	oldDoc, _ := e.closeRun(e.keyB, e.open(e.keyB).RunID)
	old := subjectOf(t, oldDoc).VPECID
	noLog := (&hostile{t: t, url: e.url}).signIn(e.keyB)
	for _, path := range []string{"/dashboard/runs", "/dashboard/vpecs/" + old} {
		if code, page := getPage(t, noLog, e.url+path); code != 200 || !strings.Contains(page, `data-log="off">not logged</span>`) {
			t.Errorf("without a log, %s (%d) does not say not logged:\n%s", path, code, page)
		}
	}

	// The service restarts with a log: the old VPEC is pending until the
	// backlog is appended; a new one is logged at index 0.
	l, v := openTestLog(t, t.TempDir())
	_, url := startLogServer(t, e.st, e.mat, l, make([]byte, 32))
	e.url = url
	doc, idx := e.closeLogged(e.keyB, e.open(e.keyB).RunID)
	sub := subjectOf(t, doc)
	if idx != "0" {
		t.Fatalf("log index %q, want 0", idx)
	}
	if code, body := e.do("GET", "/api/v1/vpecs/"+sub.VPECID+"/receipt?wait=30s", e.keyB, nil, nil); code != 200 {
		t.Fatalf("receipt: %d %s", code, body)
	}
	// alpha (sandbox) closes one of its own.
	docA, idxA := e.closeLogged(e.keyA, e.open(e.keyA).RunID)
	subA := subjectOf(t, docA)
	if _, err := l.AwaitReceipt(context.Background(), 1); err != nil || idxA != "1" {
		t.Fatalf("alpha's VPEC at %q: %v", idxA, err)
	}

	h := &hostile{t: t, url: url}
	beta, alpha := h.signIn(e.keyB), h.signIn(e.keyA)
	logged := `leaf index <strong class="log-index">0</strong>, in the checkpoint of <span class="log-size">`
	_, runs := getPage(t, beta, url+"/dashboard/runs")
	if row := runRow(runs, sub.VPECID); !strings.Contains(row, logged) || !strings.Contains(row, `data-log="integrated">no witness policy`) ||
		!strings.Contains(row, `href="/dashboard/vpecs/`+sub.VPECID+`/receipt.json"`) {
		t.Errorf("beta's runs page row of its logged VPEC lacks its position and receipt link:\n%s", row)
	}
	if row := runRow(runs, old); !strings.Contains(row, `data-log="pending">pending</span>`) || strings.Contains(row, "receipt.json") {
		t.Errorf("beta's runs page row of its VPEC from before the log is not pending:\n%s", row)
	}
	if strings.Contains(runs, subA.VPECID) {
		t.Error("beta's runs page shows alpha's VPEC")
	}
	code, page := getPage(t, beta, url+"/dashboard/vpecs/"+sub.VPECID)
	if code != 200 || !strings.Contains(page, `<p id="log-position">`+logged) || !strings.Contains(page, `id="log-receipt" href="/dashboard/vpecs/`+sub.VPECID+`/receipt.json"`) {
		t.Errorf("beta's VPEC page (%d) lacks the position or the receipt link:\n%s", code, page)
	}
	if _, page := getPage(t, beta, url+"/dashboard/vpecs/"+old); !strings.Contains(page, `data-log="pending"`) || strings.Contains(page, "log-receipt") {
		t.Errorf("the VPEC page of a VPEC from before the log is not pending:\n%s", page)
	}
	code, receipt := getPage(t, beta, url+"/dashboard/vpecs/"+sub.VPECID+"/receipt.json")
	if code != 200 {
		t.Fatalf("receipt download: %d %s", code, receipt)
	}
	if got, err := v.VerifyReceipt([]byte(receipt), sub); err != nil || got.Index != 0 {
		t.Errorf("the downloaded receipt: index %v, %v", got, err)
	}
	if code, _ := getPage(t, beta, url+"/dashboard/vpecs/"+old+"/receipt.json"); code != 404 {
		t.Errorf("receipt download of a VPEC not in the log: %d, want 404", code)
	}

	// alpha sees its own position, never beta's.
	_, runsA := getPage(t, alpha, url+"/dashboard/runs")
	if row := runRow(runsA, subA.VPECID); !strings.Contains(row, `leaf index <strong class="log-index">1</strong>`) {
		t.Errorf("alpha's runs page row lacks its VPEC's index 1:\n%s", row)
	}
	if strings.Contains(runsA, sub.VPECID) || strings.Contains(runsA, `class="log-index">0<`) {
		t.Error("alpha's runs page shows beta's VPEC or its position")
	}
	for _, path := range []string{"/dashboard/vpecs/" + sub.VPECID, "/dashboard/vpecs/" + sub.VPECID + "/receipt.json"} {
		if code, page := getPage(t, alpha, url+path); code != 404 || strings.Contains(page, "log-index") {
			t.Errorf("alpha GET %s: %d, want 404 without a position", path, code)
		}
	}
	// A sandbox session of beta: 403 for its production VPEC's page and receipt.
	sbKey, _, err := server.CreateAPIKey(context.Background(), e.st, "beta", vpec.Sandbox, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	sb := h.signIn(sbKey)
	for _, path := range []string{"/dashboard/vpecs/" + sub.VPECID, "/dashboard/vpecs/" + sub.VPECID + "/receipt.json"} {
		if code, page := getPage(t, sb, url+path); code != 403 || strings.Contains(page, "log-index") {
			t.Errorf("beta's sandbox session GET %s: %d, want 403 without a position", path, code)
		}
	}
	if _, runs := getPage(t, sb, url+"/dashboard/runs"); strings.Contains(runs, "log-index") {
		t.Error("beta's sandbox runs page shows its production VPEC's position")
	}
}

// TestDashboardShowsWitnessing: with a witness policy, the VPEC page and
// the runs page say whether the checkpoint covering the VPEC is
// witnessed: witnessed once a real witness (omniwitness on loopback)
// cosigned it, NOT WITNESSED when the policy's witness is down.
func TestDashboardShowsWitnessing(t *testing.T) {
	witnesstest.Binary(t)
	logKey := tlogtest.LogKey(t, "log")
	up := witnesstest.Start(t, "witness.test/up", witnesstest.Log{Origin: tlogtest.Origin, VKey: logKey.String()})
	down := witnesstest.New(t, "witness.test/down")
	for _, c := range []struct {
		name    string
		witness *witnesstest.Witness
		want    string
	}{
		{"witnessed", up, `data-log="witnessed">witnessed</span>`},
		{"witness down", down, `data-log="unwitnessed">NOT WITNESSED</span>`},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			l := tlogtest.OpenLog(t, t.TempDir(), "log", func(cfg *logwriter.Config) {
				cfg.WitnessPolicy = tlogtest.Policy(t, c.witness.PolicyLine("w")+"quorum w\n")
				cfg.WitnessTimeout = 2 * time.Second
			})
			_, url := startLogServer(t, e.st, e.mat, l, make([]byte, 32))
			e.url = url
			doc, _ := e.closeRun(e.keyB, e.open(e.keyB).RunID)
			id := subjectOf(t, doc).VPECID
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if _, err := l.AwaitReceipt(ctx, 0); err != nil {
				t.Fatal(err)
			}
			beta := (&hostile{t: t, url: url}).signIn(e.keyB)
			// The witness answers within its timeout of the first round.
			deadline := time.Now().Add(30 * time.Second)
			for {
				_, page := getPage(t, beta, url+"/dashboard/vpecs/"+id)
				_, runs := getPage(t, beta, url+"/dashboard/runs")
				if strings.Contains(page, c.want) && strings.Contains(runRow(runs, id), c.want) {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("the pages do not say %q:\n%s\n%s", c.want, page, runRow(runs, id))
				}
				time.Sleep(200 * time.Millisecond)
			}
		})
	}
}
