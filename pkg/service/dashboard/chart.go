package dashboard

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"

	"github.com/svc-gov/svc/pkg/core/profile"
)

// BoundsChart draws a profile's drift bounds as an inline SVG bar chart:
// one group per operator class, one bar per percentile (p99, p99.9,
// p99.99), on a logarithmic axis (bounds span orders of magnitude), each
// bar labelled with its value. Every text is escaped; numbers are
// formatted by the server. The chart has a title and description for
// screen readers, and the page shows the same numbers in a table.
func BoundsChart(p *profile.Profile) template.HTML {
	type bar struct {
		class, pct string
		v          float64
	}
	var bars []bar
	lo, hi := math.Inf(1), math.Inf(-1)
	var classes []string
	for _, c := range profile.OperatorClasses() {
		b, ok := p.Operators[c]
		if !ok {
			continue
		}
		classes = append(classes, c)
		for _, x := range []struct {
			n string
			v float64
		}{{"p99", b.P99}, {"p99.9", b.P99_9}, {"p99.99", b.P9999}} {
			bars = append(bars, bar{c, x.n, x.v})
			if x.v > 0 {
				lo, hi = math.Min(lo, x.v), math.Max(hi, x.v)
			}
		}
	}
	const rowH, barH, left, width, plot = 18.0, 14.0, 150.0, 760.0, 480.0
	height := 40 + float64(len(bars))*rowH + float64(len(classes))*8
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="chart-title chart-desc" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" class="chart">`, width, height, width, height)
	fmt.Fprintf(&sb, `<title id="chart-title">Drift bounds of %s</title>`, html.EscapeString(p.ProfileID))
	sb.WriteString(`<desc id="chart-desc">Bar chart: for each operator class, the p99, p99.9 and p99.99 drift bounds on a logarithmic scale; the table below lists the same values.</desc>`)
	if len(bars) == 0 || math.IsInf(lo, 1) {
		sb.WriteString(`<text x="10" y="24">No operator bounds in this profile.</text></svg>`)
		return template.HTML(sb.String())
	}
	lmin, lmax := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if lmax <= lmin {
		lmax = lmin + 1
	}
	scale := func(v float64) float64 {
		if v <= 0 {
			return 0
		}
		return (math.Log10(v) - lmin) / (lmax - lmin) * plot
	}
	// Axis with a tick per power of ten.
	for e := lmin; e <= lmax; e++ {
		x := left + (e-lmin)/(lmax-lmin)*plot
		fmt.Fprintf(&sb, `<line x1="%.1f" y1="18" x2="%.1f" y2="%.0f" class="grid"/><text x="%.1f" y="12" class="tick">1e%d</text>`, x, x, height-4, x-10, int(e))
	}
	fill := map[string]string{"p99": "bar99", "p99.9": "bar999", "p99.99": "bar9999"}
	y := 26.0
	prev := ""
	for _, b := range bars {
		if b.class != prev {
			if prev != "" {
				y += 8
			}
			fmt.Fprintf(&sb, `<text x="4" y="%.1f" class="cls">%s</text>`, y+barH-3, html.EscapeString(b.class))
			prev = b.class
		}
		w := math.Max(scale(b.v), 1)
		fmt.Fprintf(&sb, `<text x="%.0f" y="%.1f" class="pct">%s</text>`, left-8, y+barH-3, html.EscapeString(b.pct))
		fmt.Fprintf(&sb, `<rect x="%.0f" y="%.1f" width="%.1f" height="%.0f" class="%s"><title>%s %s = %s</title></rect>`,
			left, y, w, barH, fill[b.pct], html.EscapeString(b.class), html.EscapeString(b.pct), formatBound(b.v))
		fmt.Fprintf(&sb, `<text x="%.1f" y="%.1f" class="val">%s</text>`, left+w+4, y+barH-3, formatBound(b.v))
		y += rowH
	}
	sb.WriteString(`</svg>`)
	return template.HTML(sb.String())
}

func formatBound(v float64) string { return fmt.Sprintf("%.4g", v) }
