// Package httpbody writes large HTTP response bodies with progress
// deadlines: before each chunk the connection's write deadline is moved to
// now plus a stall allowance (http.ResponseController.SetWriteDeadline),
// so a client that keeps reading gets the whole body however long it
// takes, and one that stops is cut after the allowance, whatever the
// server's WriteTimeout.
package httpbody

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// ChunkBytes is the size of the chunks a Writer hands to the connection,
// each with its own write deadline.
const ChunkBytes = 256 << 10

// DefaultStall is how long a client may take to accept one chunk unless
// the caller says otherwise: a client slower than ChunkBytes per
// DefaultStall (about 8.5 KiB/s) is cut.
const DefaultStall = 30 * time.Second

// Writer writes to an http.ResponseWriter in chunks of at most ChunkBytes,
// setting the write deadline to now + Stall before each. Writes are not
// buffered: wrap it in a bufio.Writer for many small writes.
type Writer struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	stall time.Duration
	now   func() time.Time
	// N counts the bytes written.
	N int64
}

// NewWriter returns a Writer on w; stall <= 0 means DefaultStall.
func NewWriter(w http.ResponseWriter, stall time.Duration) *Writer {
	if stall <= 0 {
		stall = DefaultStall
	}
	return &Writer{w: w, rc: http.NewResponseController(w), stall: stall, now: time.Now}
}

// Write implements io.Writer.
func (bw *Writer) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n := min(len(p), ChunkBytes)
		// A writer that cannot take deadlines (a recorder in tests, an
		// HTTP/2 stream without support) keeps the server's.
		if err := bw.rc.SetWriteDeadline(bw.now().Add(bw.stall)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return written, fmt.Errorf("set write deadline: %w", err)
		}
		k, err := bw.w.Write(p[:n])
		written += k
		bw.N += int64(k)
		if err != nil {
			return written, err
		}
		p = p[n:]
	}
	return written, nil
}

// Write sends body as the response: status, Content-Type ctype and
// Content-Length, then the body in chunks with progress deadlines (stall
// <= 0: DefaultStall). It returns the write error of a cut response (the
// client went away or stalled); the caller cannot answer anything else by
// then, only log it.
func Write(w http.ResponseWriter, status int, ctype string, body []byte, stall time.Duration) error {
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if _, err := NewWriter(w, stall).Write(body); err != nil {
		return fmt.Errorf("response cut: %w", err)
	}
	return nil
}

var _ io.Writer = (*Writer)(nil)
