package logwriter

import (
	"bytes"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/transparency-dev/tessera/api/layout"
)

// Handler serves the log read-only in the C2SP tlog-tiles layout, for
// standard tlog clients and svc's monitor: GET or HEAD of /checkpoint,
// /tile/<L>/<N>[.p/<W>] and /tile/entries/<N>[.p/<W>], relative to where
// it is mounted (e.g. http.StripPrefix("/log", l.Handler()) serves
// /log/checkpoint). Anything else, .state/ included, is 404. Tiles and
// entry bundles are immutable and cached for a year; the checkpoint is
// not cached.
func (l *Log) Handler() http.Handler { return &tileHandler{dir: l.dir} }

// TileHandler serves a log directory as Log.Handler does, for a process
// that only reads the log (or serves another's).
func TileHandler(dir string) http.Handler { return &tileHandler{dir: dir} }

type tileHandler struct{ dir string }

func (h *tileHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the log is read-only", http.StatusMethodNotAllowed)
		return
	}
	p := strings.TrimPrefix(r.URL.Path, "/")
	ctype, cache, ok := classify(p)
	if !ok {
		http.NotFound(w, r)
		return
	}
	root, err := os.OpenRoot(h.dir)
	if err != nil {
		http.Error(w, "the log is not available", http.StatusServiceUnavailable)
		return
	}
	defer root.Close()
	data, err := root.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		http.NotFound(w, r)
		return
	}
	if err != nil {
		http.Error(w, "the log is not available", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", cache)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
}

// tilePathRE is the shape of a tile or entry bundle path (tlog-tiles),
// checked before Tessera's parsers see it.
var tilePathRE = regexp.MustCompile(`^tile/(entries|[0-9]{1,2})/(x[0-9]{3}/)*[0-9]{3}(\.p/[0-9]{1,3})?$`)

// classify accepts the tlog-tiles paths and returns their content type and
// caching.
func classify(p string) (ctype, cache string, ok bool) {
	const immutable = "public, max-age=31536000, immutable"
	if p == layout.CheckpointPath {
		return "text/plain; charset=utf-8", "no-cache", true
	}
	if !tilePathRE.MatchString(p) {
		return "", "", false
	}
	rest := strings.TrimPrefix(p, "tile/")
	if idx, ok := strings.CutPrefix(rest, "entries/"); ok {
		n, w, err := layout.ParseTileIndexPartial(idx)
		if err != nil || layout.EntriesPath(n, w) != p {
			return "", "", false
		}
		return "application/octet-stream", immutable, true
	}
	level, idx, ok := strings.Cut(rest, "/")
	if !ok {
		return "", "", false
	}
	l, n, w, err := layout.ParseTileLevelIndexPartial(level, idx)
	if err != nil || layout.TilePath(l, n, w) != p {
		return "", "", false
	}
	return "application/octet-stream", immutable, true
}
