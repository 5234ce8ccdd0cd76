// Package plots draws the project's figures as self-contained SVG from plain slices:
// line charts (loss against iteration with the baseline, ‖∂C/∂h_t‖ against t, on linear
// or log axes), heat maps (one-hot sequences, success-rate tables) and scatter plots
// (eigenvalues in the complex plane with the unit circle). SVG survives saving a notebook
// and renders on GitHub; a notebook shows it with gonbui.DisplaySvg. The output is
// deterministic, so figures can be compared byte for byte.
package plots

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// Palette is the colour cycle of series (Tableau 10).
var Palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

// Series is one line (or set of points) of a chart.
type Series struct {
	Name   string
	X, Y   []float64 // X nil means 0, 1, 2, …
	Dashed bool
	Color  string // "" picks from Palette
	Points bool   // draw markers instead of a line
}

// Chart is a line or scatter chart. The zero value of each field means a documented default.
type Chart struct {
	Title, XLabel, YLabel string
	Width, Height         int  // pixels; default 640×360
	LogY                  bool // log10 y axis (non-positive values are dropped)
	XMin, XMax            *float64
	YMin, YMax            *float64
	Equal                 bool // same scale on both axes (complex-plane plots)
	UnitCircle            bool // draw the unit circle (eigenvalue plots)
	Series                []Series
}

const (
	marginL, marginR, marginT, marginB = 64, 16, 32, 44
)

func f(v float64) string { return fmt.Sprintf("%.2f", v) }

// niceTicks returns about n round tick values covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if !(hi > lo) {
		return []float64{lo}
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []float64
	for k := math.Ceil(lo / step); k*step <= hi+step*1e-9; k++ {
		v, _ := strconv.ParseFloat(fmt.Sprintf("%.12g", k*step), 64) // 3·0.2 → 0.6, not 0.6000000000000001
		ticks = append(ticks, v)
	}
	return ticks
}

// logTicks returns the log10 of round values 1, 2, 5 × 10^k in [10^lo, 10^hi], keeping only
// the powers of ten when the range spans many decades.
func logTicks(lo, hi float64) []float64 {
	var all, decades []float64
	for e := math.Floor(lo); e <= math.Ceil(hi); e++ {
		for _, m := range []float64{1, 2, 5} {
			if t := e + math.Log10(m); t >= lo-1e-9 && t <= hi+1e-9 {
				all = append(all, t)
				if m == 1 {
					decades = append(decades, t)
				}
			}
		}
	}
	if len(decades) >= 3 {
		// At most about 8 labels: every k-th decade on wide ranges.
		k := (len(decades) + 7) / 8
		var out []float64
		for i, d := range decades {
			if int(math.Round(d))%k == 0 || (i == 0 && k == 1) {
				out = append(out, d)
			}
		}
		return out
	}
	return all
}

func tickLabel(v float64, _ bool) string {
	if v == 0 {
		return "0"
	}
	if a := math.Abs(v); a >= 1e5 || a < 1e-3 {
		return fmt.Sprintf("%.1e", v)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.4f", v), "0"), ".")
}

// SVG renders the chart.
func (c Chart) SVG() string {
	w, h := c.Width, c.Height
	if w == 0 {
		w = 640
	}
	if h == 0 {
		h = 360
	}
	ty := func(y float64) (float64, bool) {
		if c.LogY {
			if !(y > 0) {
				return 0, false
			}
			return math.Log10(y), true
		}
		return y, !math.IsNaN(y) && !math.IsInf(y, 0)
	}
	// Data range.
	x0, x1, y0, y1 := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for i, yv := range s.Y {
			y, ok := ty(yv)
			if !ok {
				continue
			}
			x := float64(i)
			if s.X != nil {
				x = s.X[i]
			}
			x0, x1, y0, y1 = min(x0, x), max(x1, x), min(y0, y), max(y1, y)
		}
	}
	if c.UnitCircle {
		x0, x1, y0, y1 = min(x0, -1.1), max(x1, 1.1), min(y0, -1.1), max(y1, 1.1)
	}
	if math.IsInf(x0, 1) {
		x0, x1, y0, y1 = 0, 1, 0, 1
	}
	if c.XMin != nil {
		x0 = *c.XMin
	}
	if c.XMax != nil {
		x1 = *c.XMax
	}
	if c.YMin != nil {
		y0, _ = ty(*c.YMin)
	}
	if c.YMax != nil {
		y1, _ = ty(*c.YMax)
	}
	if x1 == x0 {
		x0, x1 = x0-1, x1+1
	}
	if y1 == y0 {
		y0, y1 = y0-1, y1+1
	}
	if !c.LogY && c.YMin == nil && c.YMax == nil && !c.Equal {
		pad := 0.04 * (y1 - y0)
		y0, y1 = y0-pad, y1+pad
	}
	pw, ph := float64(w-marginL-marginR), float64(h-marginT-marginB)
	if c.Equal {
		// Same units per pixel on both axes: widen the tighter range.
		sx, sy := (x1-x0)/pw, (y1-y0)/ph
		if sx > sy {
			m := (y0 + y1) / 2
			y0, y1 = m-sx*ph/2, m+sx*ph/2
		} else {
			m := (x0 + x1) / 2
			x0, x1 = m-sy*pw/2, m+sy*pw/2
		}
	}
	px := func(x float64) float64 { return marginL + (x-x0)/(x1-x0)*pw }
	py := func(y float64) float64 { return marginT + (1-(y-y0)/(y1-y0))*ph }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`, w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`, w, h)
	if c.Title != "" {
		fmt.Fprintf(&b, `<text x="%d" y="18" text-anchor="middle" font-size="13" font-weight="bold">%s</text>`, w/2, html.EscapeString(c.Title))
	}
	// Grid and ticks.
	for _, t := range niceTicks(x0, x1, 6) {
		X := px(t)
		fmt.Fprintf(&b, `<line x1="%s" y1="%d" x2="%s" y2="%s" stroke="#e5e5e5"/>`, f(X), marginT, f(X), f(marginT+ph))
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`, f(X), f(marginT+ph+14), tickLabel(t, false))
	}
	yt := niceTicks(y0, y1, 5)
	if c.LogY {
		yt = logTicks(y0, y1)
	}
	for _, t := range yt {
		Y := py(t)
		label := tickLabel(t, false)
		if c.LogY {
			label = strconv.FormatFloat(math.Pow(10, t), 'g', 3, 64)
		}
		fmt.Fprintf(&b, `<line x1="%d" y1="%s" x2="%s" y2="%s" stroke="#e5e5e5"/>`, marginL, f(Y), f(marginL+pw), f(Y))
		fmt.Fprintf(&b, `<text x="%d" y="%s" text-anchor="end">%s</text>`, marginL-4, f(Y+4), label)
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%s" height="%s" fill="none" stroke="#333"/>`, marginL, marginT, f(pw), f(ph))
	if c.XLabel != "" {
		fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle">%s</text>`, f(marginL+pw/2), h-6, html.EscapeString(c.XLabel))
	}
	if c.YLabel != "" {
		fmt.Fprintf(&b, `<text x="14" y="%s" text-anchor="middle" transform="rotate(-90 14 %s)">%s</text>`, f(marginT+ph/2), f(marginT+ph/2), html.EscapeString(c.YLabel))
	}
	fmt.Fprintf(&b, `<clipPath id="plotarea"><rect x="%d" y="%d" width="%s" height="%s"/></clipPath><g clip-path="url(#plotarea)">`, marginL, marginT, f(pw), f(ph))
	if c.UnitCircle {
		fmt.Fprintf(&b, `<ellipse cx="%s" cy="%s" rx="%s" ry="%s" fill="none" stroke="#888" stroke-dasharray="4 3"/>`,
			f(px(0)), f(py(0)), f(px(1)-px(0)), f(py(0)-py(1)))
	}
	for si, s := range c.Series {
		color := s.Color
		if color == "" {
			color = Palette[si%len(Palette)]
		}
		var pts []string
		for i, yv := range s.Y {
			y, ok := ty(yv)
			if !ok {
				continue
			}
			x := float64(i)
			if s.X != nil {
				x = s.X[i]
			}
			if s.Points {
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="2.5" fill="%s" fill-opacity="0.8"/>`, f(px(x)), f(py(y)), color)
				continue
			}
			pts = append(pts, f(px(x))+","+f(py(y)))
		}
		if len(pts) > 0 {
			dash := ""
			if s.Dashed {
				dash = ` stroke-dasharray="6 4"`
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.6"%s points="%s"/>`, color, dash, strings.Join(pts, " "))
		}
	}
	b.WriteString(`</g>`)
	// Legend, on a white box.
	ly := marginT + 6
	if n := countNamed(c.Series); n > 0 {
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="146" height="%d" fill="white" fill-opacity="0.85" stroke="#ccc"/>`, marginL+int(pw)-154, ly-2, 14*n+4)
	}
	for si, s := range c.Series {
		if s.Name == "" {
			continue
		}
		color := s.Color
		if color == "" {
			color = Palette[si%len(Palette)]
		}
		lx := marginL + int(pw) - 150
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="3" fill="%s"/><text x="%d" y="%d">%s</text>`, lx, ly+4, color, lx+16, ly+9, html.EscapeString(s.Name))
		ly += 14
	}
	b.WriteString(`</svg>`)
	return b.String()
}

func countNamed(series []Series) int {
	n := 0
	for _, s := range series {
		if s.Name != "" {
			n++
		}
	}
	return n
}
