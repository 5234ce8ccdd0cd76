package plots

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// Heatmap draws a matrix as coloured cells: Values[r][c] is row r (top to bottom),
// column c (left to right). Categorical heat maps (one symbol per cell, as in a copy-task
// sequence) set Categories; otherwise values map linearly from Min..Max onto a
// white-to-blue scale.
type Heatmap struct {
	Title, XLabel, YLabel string
	Values                [][]float64
	RowLabels, ColLabels  []string // optional; ColLabels may be sparse ("" skips)
	Min, Max              *float64 // default: the data range
	Categories            []string // value k is drawn in Palette colour k−1 and 0 in white; names go in the legend
	Annotate              bool     // write each value in its cell (use for small tables)
	Format                string   // Printf format of annotations; default "%.3g"
	CellW, CellH          int      // pixels per cell; default chosen to fit ~720 px wide
}

// color returns a colour for v in [0, 1] on a white → dark blue ramp.
func ramp(v float64) string {
	v = math.Max(0, math.Min(1, v))
	lerp := func(a, b float64) int { return int(math.Round(a + (b-a)*v)) }
	return fmt.Sprintf("#%02x%02x%02x", lerp(247, 8), lerp(251, 48), lerp(255, 107))
}

// SVG renders the heat map.
func (m Heatmap) SVG() string {
	rows := len(m.Values)
	cols := 0
	for _, r := range m.Values {
		cols = max(cols, len(r))
	}
	cw, ch := m.CellW, m.CellH
	if cw == 0 {
		cw = max(2, min(40, 640/max(cols, 1)))
	}
	if ch == 0 {
		ch = max(8, min(32, cw))
	}
	left := marginL
	for _, l := range m.RowLabels {
		left = max(left, 12+7*len(l))
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range m.Values {
		for _, v := range r {
			if !math.IsNaN(v) {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	if m.Min != nil {
		lo = *m.Min
	}
	if m.Max != nil {
		hi = *m.Max
	}
	if !(hi > lo) {
		hi = lo + 1
	}
	legendW := 0
	if len(m.Categories) > 0 {
		legendW = 110
	}
	w := left + cols*cw + marginR + legendW
	h := max(marginT+rows*ch+marginB, marginT+14*len(m.Categories)+8)
	format := m.Format
	if format == "" {
		format = "%.3g"
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`, w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`, w, h)
	if m.Title != "" {
		fmt.Fprintf(&b, `<text x="%d" y="18" text-anchor="middle" font-size="13" font-weight="bold">%s</text>`, left+cols*cw/2, html.EscapeString(m.Title))
	}
	for r, row := range m.Values {
		for c, v := range row {
			fill := "#ffffff"
			switch {
			case math.IsNaN(v):
				fill = "#dddddd"
			case len(m.Categories) > 0:
				if k := int(v); k > 0 {
					fill = Palette[(k-1)%len(Palette)]
				}
			default:
				fill = ramp((v - lo) / (hi - lo))
			}
			x, y := left+c*cw, marginT+r*ch
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`, x, y, cw, ch, fill)
			if m.Annotate && !math.IsNaN(v) {
				tc := "black"
				if len(m.Categories) == 0 && (v-lo)/(hi-lo) > 0.6 {
					tc = "white"
				}
				fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" font-size="10" fill="%s">%s</text>`, x+cw/2, y+ch/2+4, tc, fmt.Sprintf(format, v))
			}
		}
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`, left, marginT, cols*cw, rows*ch)
	for r, l := range m.RowLabels {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`, left-4, marginT+r*ch+ch/2+4, html.EscapeString(l))
	}
	colLabels := m.ColLabels
	if colLabels == nil && cols > 1 {
		// Label about ten evenly spaced columns with their index.
		step := niceTicks(0, float64(cols-1), 10)
		colLabels = make([]string, cols)
		for _, t := range step {
			if i := int(t); i >= 0 && i < cols {
				colLabels[i] = strconv.Itoa(i)
			}
		}
	}
	for c, l := range colLabels {
		if l != "" {
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`, left+c*cw+cw/2, marginT+rows*ch+14, html.EscapeString(l))
		}
	}
	if m.XLabel != "" {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`, left+cols*cw/2, h-6, html.EscapeString(m.XLabel))
	}
	if m.YLabel != "" {
		fmt.Fprintf(&b, `<text x="14" y="%d" text-anchor="middle" transform="rotate(-90 14 %d)">%s</text>`, marginT+rows*ch/2, marginT+rows*ch/2, html.EscapeString(m.YLabel))
	}
	for k, name := range m.Categories {
		x, y := left+cols*cw+12, marginT+k*14
		fill := "#ffffff"
		if k > 0 {
			fill = Palette[(k-1)%len(Palette)]
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s" stroke="#999"/><text x="%d" y="%d">%s</text>`, x, y, fill, x+14, y+9, html.EscapeString(name))
	}
	b.WriteString(`</svg>`)
	return b.String()
}
