package logwriter

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/transparency-dev/tessera/api"
	"github.com/transparency-dev/tessera/api/layout"
	"github.com/transparency-dev/tessera/client"
)

// Handler serves the log read-only in the C2SP tlog-tiles layout, for
// standard tlog clients and svc's monitor: GET or HEAD of /checkpoint,
// /tile/<L>/<N>[.p/<W>] and /tile/entries/<N>[.p/<W>], relative to where
// it is mounted (e.g. http.StripPrefix("/log", l.Handler()) serves
// /log/checkpoint). The checkpoint is the one Checkpoint returns (with a
// witness policy, the newest one cosigned as it requires) and is not
// cached; tiles and entry bundles are immutable and cached for a year; a
// partial one whose full tile exists is served from it, cut to the width
// asked for. Anything else, .state/ included, is 404.
func (l *Log) Handler() http.Handler {
	return &tileHandler{checkpoint: l.Checkpoint, tile: l.reader.ReadTile, bundle: l.reader.ReadEntryBundle}
}

// TileHandler serves a POSIX log directory as Log.Handler does (its
// checkpoint as published, without the cosigner's), for a process that
// only reads the log.
func TileHandler(dir string) http.Handler {
	f := client.FileFetcher{Root: dir}
	return &tileHandler{checkpoint: f.ReadCheckpoint, tile: f.ReadTile, bundle: f.ReadEntryBundle}
}

type tileHandler struct {
	checkpoint func(context.Context) ([]byte, error)
	tile       func(ctx context.Context, level, index uint64, p uint8) ([]byte, error)
	bundle     func(ctx context.Context, index uint64, p uint8) ([]byte, error)
}

func (h *tileHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the log is read-only", http.StatusMethodNotAllowed)
		return
	}
	p := strings.TrimPrefix(r.URL.Path, "/")
	var data []byte
	var err error
	ctype, cache := "application/octet-stream", "public, max-age=31536000, immutable"
	switch kind, level, index, width := classify(p); kind {
	case "checkpoint":
		ctype, cache = "text/plain; charset=utf-8", "no-cache"
		data, err = h.checkpoint(r.Context())
	case "tile":
		if data, err = h.tile(r.Context(), level, index, width); err == nil {
			data, err = cutTile(data, width)
		}
	case "entries":
		if data, err = h.bundle(r.Context(), index, width); err == nil {
			data, err = cutBundle(data, width)
		}
	default:
		http.NotFound(w, r)
		return
	}
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, ErrNotIntegrated) {
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

// classify accepts the tlog-tiles paths: "checkpoint", "tile" or
// "entries" (with level, index and partial width), or "".
func classify(p string) (kind string, level, index uint64, width uint8) {
	if p == layout.CheckpointPath {
		return "checkpoint", 0, 0, 0
	}
	if !tilePathRE.MatchString(p) {
		return "", 0, 0, 0
	}
	rest := strings.TrimPrefix(p, "tile/")
	if idx, ok := strings.CutPrefix(rest, "entries/"); ok {
		n, w, err := layout.ParseTileIndexPartial(idx)
		if err != nil || layout.EntriesPath(n, w) != p {
			return "", 0, 0, 0
		}
		return "entries", 0, n, w
	}
	lv, idx, _ := strings.Cut(rest, "/")
	l, n, w, err := layout.ParseTileLevelIndexPartial(lv, idx)
	if err != nil || layout.TilePath(l, n, w) != p {
		return "", 0, 0, 0
	}
	return "tile", l, n, w
}

// cutTile returns the first width hashes of a tile (all of a full one).
func cutTile(data []byte, width uint8) ([]byte, error) {
	n := layout.TileWidth
	if width > 0 {
		n = int(width)
	}
	if len(data)%32 != 0 || len(data) < 32*n {
		return nil, os.ErrNotExist
	}
	return data[:32*n], nil
}

// cutBundle returns the first width entries of an entry bundle (all of a
// full one).
func cutBundle(data []byte, width uint8) ([]byte, error) {
	var b api.EntryBundle
	if err := b.UnmarshalText(data); err != nil {
		return nil, err
	}
	n := uint64(layout.EntryBundleWidth)
	if width > 0 {
		n = uint64(width)
	}
	if uint64(len(b.Entries)) < n {
		return nil, os.ErrNotExist
	}
	var out bytes.Buffer
	for _, e := range b.Entries[:n] {
		out.Write(binary.BigEndian.AppendUint16(nil, uint16(len(e))))
		out.Write(e)
	}
	return out.Bytes(), nil
}
