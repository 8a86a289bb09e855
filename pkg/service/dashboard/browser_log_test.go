package dashboard_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/svc-gov/svc/internal/browsertest"
	"github.com/svc-gov/svc/pkg/service/server"
)

// TestBrowserLogPosition: in a real headless Chromium, an organisation
// signed in to a service with a transparency log sees its VPEC's leaf
// index and checkpoint on the runs page and on the VPEC page, with the
// receipt download link, and nowhere the other organisation's VPEC or its
// index.
func TestBrowserLogPosition(t *testing.T) {
	b := browsertest.New(t)
	e := newEnv(t, envOptions{log: true})
	e.seed()
	ctx := context.Background()
	orgOf := func(key string) string {
		k, err := e.st.APIKeyByHash(ctx, server.HashKey(key))
		if err != nil {
			t.Fatal(err)
		}
		return k.OrgID
	}
	mine, err := e.st.VPECInfo(ctx, orgOf(e.keyA), e.vpecID)
	if err != nil || !mine.Logged {
		t.Fatalf("acme's VPEC: %+v, %v; want logged", mine, err)
	}
	theirs, err := e.st.VPECInfo(ctx, orgOf(e.keyB), e.vpecIDB)
	if err != nil || !theirs.Logged || theirs.LogIndex == mine.LogIndex {
		t.Fatalf("beta's VPEC: %+v, %v; want logged at another index", theirs, err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := e.log.AwaitReceipt(ctx, max(mine.LogIndex, theirs.LogIndex)); err != nil {
		t.Fatal(err)
	}

	b.Do("sign in", chromedp.Navigate(e.ts.URL+"/dashboard/signin"), chromedp.WaitVisible(chromedp.CSS("#api_key")),
		chromedp.SendKeys(chromedp.CSS("#api_key"), e.keyA), chromedp.Click(chromedp.CSS("form.card button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("#models")))
	b.Do("runs page", chromedp.Navigate(e.ts.URL+"/dashboard/runs?state=sealed"), chromedp.WaitVisible(chromedp.CSS("#runs")))
	row := `#runs tr:has(a[href="/dashboard/vpecs/` + e.vpecID + `"])`
	cell := b.Text(row + " td.log")
	if !strings.HasPrefix(cell, "leaf index "+strconv.FormatUint(mine.LogIndex, 10)+", in the checkpoint of ") || !strings.Contains(cell, "no witness policy") {
		t.Errorf("acme's runs row says %q", cell)
	}
	if n := browsertest.Eval[int](b, `document.querySelectorAll('`+row+` td.log a[href$="/receipt.json"]').length`); n != 1 {
		t.Errorf("acme's runs row has %d receipt links, want 1", n)
	}
	indexes := browsertest.Eval[[]string](b, `[...document.querySelectorAll(".log-index")].map(e => e.textContent)`)
	if len(indexes) != 1 || indexes[0] != strconv.FormatUint(mine.LogIndex, 10) {
		t.Errorf("acme's runs page shows log indexes %q, want only %d", indexes, mine.LogIndex)
	}
	b.Screenshot("log-1-runs")

	b.Do("VPEC page", chromedp.Click(chromedp.CSS(row+` a[href="/dashboard/vpecs/`+e.vpecID+`"]`)), chromedp.WaitVisible(chromedp.CSS("#log-position")))
	if p := b.Text("#log-position"); !strings.HasPrefix(p, "leaf index "+strconv.FormatUint(mine.LogIndex, 10)+", in the checkpoint of ") {
		t.Errorf("acme's VPEC page says %q", p)
	}
	if href := browsertest.Eval[string](b, `document.querySelector("#log-receipt").getAttribute("href")`); href != "/dashboard/vpecs/"+e.vpecID+"/receipt.json" {
		t.Errorf("receipt link %q", href)
	}
	b.Screenshot("log-2-vpec")
	for _, path := range []string{"/dashboard/runs", "/dashboard/vpecs/" + e.vpecIDB} {
		b.Do("open "+path, chromedp.Navigate(e.ts.URL+path), chromedp.WaitVisible(chromedp.CSS("main")))
		if html := browsertest.Eval[string](b, "document.documentElement.outerHTML"); strings.Contains(html, e.vpecIDB) && path == "/dashboard/runs" ||
			strings.Contains(html, `class="log-index">`+strconv.FormatUint(theirs.LogIndex, 10)+"<") {
			t.Errorf("acme's %s shows beta's VPEC or its log index", path)
		}
	}
}
