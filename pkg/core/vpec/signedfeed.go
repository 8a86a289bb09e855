package vpec

import (
	"bytes"
	"io"
	"sync/atomic"
)

// feedPiece is how much of the records the feed writes at a time, so that
// it can stop soon after it is told to.
const feedPiece = 256 << 10

// signedFeed gives a writer (ParseOptions.SignedTo's) the signed bytes of
// a VPEC whose records are read on several goroutines, beside the reading:
// the part before the records and the records as written first, then the
// part after them once it is written. The records are given before it is
// known whether each is in its canonical form (then they are their signed
// bytes as written); if one is not, or the read stops, the feed stops and
// the writer is not said to have the signed bytes.
type signedFeed struct {
	prefix []byte // the signed bytes before the records, '[' included
	stop   atomic.Bool
	suffix chan []byte
	done   chan struct{}
	whole  bool // the writer was given prefix, records and the suffix; read after done
}

// startSignedFeed starts giving w prefix and then records (the records
// as written: recordParts), on its own goroutine.
func startSignedFeed(w io.Writer, prefix []byte, records [][]byte) *signedFeed {
	f := &signedFeed{prefix: prefix, suffix: make(chan []byte, 1), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		w.Write(prefix)
		for _, r := range records {
			for len(r) > 0 {
				if f.stop.Load() {
					return
				}
				n := min(len(r), feedPiece)
				w.Write(r[:n])
				r = r[n:]
			}
		}
		if s, ok := <-f.suffix; ok {
			w.Write(s)
			f.whole = true
		}
	}()
	return f
}

// finish ends the feed. When the signed bytes are the feed's prefix, its
// records and suffix, in that order, the writer is given suffix; finish
// waits for it and reports whether the writer was given all of them.
// Otherwise (signed nil: they are something else) the feed stops.
func (f *signedFeed) finish(prefix, suffix []byte, same bool) bool {
	if same && bytes.Equal(prefix, f.prefix) {
		f.suffix <- suffix
	} else {
		f.stop.Store(true)
		close(f.suffix)
	}
	<-f.done
	return f.whole
}
