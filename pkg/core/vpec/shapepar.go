package vpec

import (
	"bytes"
	"runtime"
	"sync/atomic"
)

// aheadMinimum is the size from which a records array is scanned in two
// halves at once: the first by the scan, the second by a recordsAhead.
const aheadMinimum = 1 << 20

// recordsAhead scans the second half of a records array beside the scan
// of the first: from a guess of where an element begins, the first '{'
// after the middle of the rest of the document that follows a '}' and a
// ','. The guess may be wrong (those bytes inside a string, or past the
// array): its result is used only when the scan of the first half reaches
// exactly that offset as the start of an element, in the state the scan
// ahead started from (in the records array, at its depth), and only when
// it reached the array's end with nothing to report; the scan then goes
// on past the array as it would have. Otherwise the scan reads the second
// half itself, and reports what it finds there exactly as without it.
type recordsAhead struct {
	at    int // the guessed start of an element
	stop  atomic.Bool
	done  chan struct{}
	elems []uint32 // each element's start and end offsets, from at
	end   int      // after its last element
	ok    bool     // it reached the array's ']' with nothing to report
}

// startRecordsAhead starts a recordsAhead for the records array whose
// first element is at from in d, the scan at depth there; nil when fewer
// than minimum bytes follow (0: aheadMinimum; below 0: never), only one
// goroutine runs at a time, or no guess can be made.
func startRecordsAhead(d []byte, from, depth, minimum int) *recordsAhead {
	if minimum == 0 {
		minimum = aheadMinimum
	}
	if minimum < 0 || len(d)-from < minimum || runtime.GOMAXPROCS(0) < 2 {
		return nil
	}
	at := guessElement(d, from+(len(d)-from)/2)
	if at < 0 {
		return nil
	}
	a := &recordsAhead{at: at, done: make(chan struct{})}
	go a.scan(d, depth)
	return a
}

// guessElement returns the offset of the first '{' at or after from that
// follows a ',' which follows a '}' (whitespace allowed between them), or
// -1.
func guessElement(d []byte, from int) int {
	back := func(i int) int {
		for i >= 0 && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r') {
			i--
		}
		return i
	}
	for i := from; i < len(d); {
		j := bytes.IndexByte(d[i:], '{')
		if j < 0 {
			return -1
		}
		k := i + j
		if p := back(k - 1); p > 0 && d[p] == ',' {
			if q := back(p - 1); q >= 0 && d[q] == '}' {
				return k
			}
		}
		i = k + 1
	}
	return -1
}

// scan walks elements of a records array from a.at as the scan would
// (arrayOfObjects with record), until the array's ']', anything it would
// report, or stop.
func (a *recordsAhead) scan(d []byte, depth int) {
	defer close(a.done)
	t := shapeScanner{d: d, pos: a.at, depth: depth}
	for i := 0; ; i++ {
		if a.stop.Load() || t.pos >= len(d) || d[t.pos] != '{' {
			return
		}
		start := t.pos
		if err := t.record(i); err != nil || t.bad {
			return
		}
		a.elems = append(a.elems, uint32(start), uint32(t.pos))
		a.end = t.pos
		if !t.sep(']') {
			a.ok = !t.bad
			return
		}
		t.ws()
	}
}

// join waits for the scan ahead and reports whether its result can be
// taken.
func (a *recordsAhead) join() bool {
	<-a.done
	return a.ok
}

// cancel stops the scan ahead and waits for it.
func (a *recordsAhead) cancel() {
	a.stop.Store(true)
	<-a.done
}
