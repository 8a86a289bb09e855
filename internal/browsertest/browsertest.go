// Package browsertest runs tests in a real headless Chromium through
// chromedp: it finds the browser (SVC_CHROMIUM, else chromium on PATH, as
// scripts/install-chromium.sh installs it), starts it with the flags the
// project's machines need, records every network request a page makes, and
// saves screenshots as test artefacts.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// Env names the browser binary to use, overriding the search on PATH.
const Env = "SVC_CHROMIUM"

// ScreenshotEnv names the directory screenshots are saved in (default: a
// directory under the test's temporary directory, printed in the log).
const ScreenshotEnv = "SVC_SCREENSHOT_DIR"

// Path returns the browser to use, or "" when there is none.
func Path() string {
	if p := os.Getenv(Env); p != "" {
		return p
	}
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome-stable", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	return ""
}

// Browser is one headless Chromium with one tab, for one test.
type Browser struct {
	Ctx context.Context
	t   testing.TB
	dir string
	log *requestLog
}

// requestLog holds the URLs of every request the tab sent, in order.
type requestLog struct {
	mu   sync.Mutex
	urls []string
}

// For returns b working for t, a subtest of the test that started it: the
// same browser and tab, with failures and screenshots reported to t (a
// subtest must not fail its parent). Use it from t's goroutine only.
func (b *Browser) For(t testing.TB) *Browser {
	c := *b
	c.t, c.dir = t, ""
	return &c
}

// New starts Chromium for t (stopped at cleanup) or skips t when there is
// no browser: `make test` installs one (scripts/install-chromium.sh), so
// the skip happens only outside it.
func New(t testing.TB) *Browser {
	t.Helper()
	path := Path()
	if path == "" {
		t.Skip("no Chromium: run scripts/install-chromium.sh (make test does) or set SVC_CHROMIUM to a Chromium binary")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s=%s: %v", Env, path, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // the test machines run as root
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("dns-prefetch-disable", true),
		chromedp.WindowSize(1100, 900),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	// No timeout on the browser's own context: cancelling it stops the browser.
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b := &Browser{Ctx: ctx, t: t, log: &requestLog{}}
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			b.log.mu.Lock()
			b.log.urls = append(b.log.urls, e.Request.URL)
			b.log.mu.Unlock()
		}
	}); err != nil {
		t.Fatalf("start Chromium (%s): %v", path, err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("Network.enable: %v", err)
	}
	return b
}

// Requests returns the URLs of every request the tab has sent so far.
func (b *Browser) Requests() []string {
	b.log.mu.Lock()
	defer b.log.mu.Unlock()
	return append([]string(nil), b.log.urls...)
}

// Offline cuts the tab off the network (every request fails) from now on.
func (b *Browser) Offline() {
	b.t.Helper()
	if _, err := chromedp.Call(b.Ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
		MatchedNetworkConditions: []*network.Conditions{{Offline: true, DownloadThroughput: -1, UploadThroughput: -1}},
	}); err != nil {
		b.t.Fatalf("emulate offline: %v", err)
	}
}

// ActionTimeout bounds each Do, Text, Eval and Screenshot.
const ActionTimeout = 30 * time.Second

// Do runs actions, failing the test on error or after ActionTimeout.
func (b *Browser) Do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, ActionTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// Text returns the visible text of the first element matching the CSS selector.
func (b *Browser) Text(sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, ActionTimeout)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// Eval evaluates a JavaScript expression in the page.
func Eval[T any](b *Browser, js string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, ActionTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Screenshot saves a full-page PNG named after the test and name, and logs
// where. A screenshot is an artefact for people, not an assertion: when
// Chromium does not deliver one (seen under heavy load: capture hangs past
// ActionTimeout), it tries once more, then logs that it has none and
// returns "" rather than failing the test.
func (b *Browser) Screenshot(name string) string {
	b.t.Helper()
	var png []byte
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		ctx, cancel := context.WithTimeout(b.Ctx, ActionTimeout)
		png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100 gives PNG, below it JPEG
		cancel()
		if err == nil {
			break
		}
	}
	if err != nil {
		b.t.Logf("screenshot %s: none taken: %v", name, err)
		return ""
	}
	if b.dir == "" {
		b.dir = os.Getenv(ScreenshotEnv)
		if b.dir == "" {
			b.dir = filepath.Join(b.t.TempDir(), "screenshots")
		}
		if err := os.MkdirAll(b.dir, 0o755); err != nil {
			b.t.Fatal(err)
		}
	}
	p := filepath.Join(b.dir, unsafeName.ReplaceAllString(b.t.Name()+"-"+name, "_")+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", p)
	return p
}
