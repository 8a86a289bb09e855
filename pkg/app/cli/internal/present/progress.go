package present

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Progress draws a one-line progress bar of inference passes ("label
// [####    ] 12/30 passes eta 3s"), redrawn at most every 100 ms and at
// the end; when off (not a terminal, or TERM=dumb) it draws nothing.
type Progress struct {
	w     io.Writer
	label string
	start time.Time
	last  time.Time
	on    bool
}

// NewProgress returns a bar labelled label drawing on w when on.
func NewProgress(w io.Writer, on bool, label string) *Progress {
	return &Progress{w: w, label: label, start: time.Now(), on: on}
}

// Update redraws the bar at done of total passes.
func (b *Progress) Update(done, total int) {
	if !b.on || (done < total && time.Since(b.last) < 100*time.Millisecond) {
		return
	}
	b.last = time.Now()
	const width = 30
	filled := width * min(max(done, 0), max(total, 1)) / max(total, 1)
	eta := ""
	if done > 0 && done < total {
		left := time.Duration(float64(time.Since(b.start)) / float64(done) * float64(total-done))
		eta = " eta " + left.Round(time.Second).String()
	}
	fmt.Fprintf(b.w, "\r%s [%s%s] %d/%d passes%s\033[K", b.label, strings.Repeat("#", filled), strings.Repeat(" ", width-filled), done, total, eta)
}

// Done clears the bar's line.
func (b *Progress) Done() {
	if b.on {
		fmt.Fprint(b.w, "\r\033[K")
	}
}
