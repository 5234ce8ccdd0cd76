// Package plots draws the project's figures from plain slices: line charts (loss against
// iteration with the baseline, ‖∂C/∂h_t‖ against t, on linear, log or log–log axes), heat maps
// (one-hot sequences, success-rate tables) and scatter plots (eigenvalues in the complex
// plane with the unit circle). A figure is drawn once with gonum.org/v1/plot and encoded
// twice: as PNG, which every notebook viewer shows (also a notebook opened unrun, which
// Jupyter does not trust with SVG or HTML), and as SVG, which a trusted notebook and the
// HTML export prefer. notebook.Show sends both. Rendering is deterministic, so figures can
// be compared byte for byte.
//
// Charts choose their y scale (a log axis when the values are positive and span more than
// two decades), clip what lies outside the axes at the data area, and put the legend in a
// column of its own to the right, so it never covers a curve.
package plots

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure is a drawing as PNG and as SVG: a Chart or a Heatmap.
type Figure interface {
	PNG() ([]byte, error)
	SVG() string
	// DataPoints counts the data the figure draws (reference lines left out): a figure with
	// none is an empty chart, which the notebooks neither show nor save.
	DataPoints() int
}

var (
	_ Figure = Chart{}
	_ Figure = Heatmap{}
)

// Palette is the colour cycle of series (Tableau 10).
var Palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

// Scale is how a chart's y axis maps values.
type Scale int

const (
	// ScaleAuto (the default) is log10 when every value in view is positive and the largest
	// is more than 100 times the smallest, linear otherwise.
	ScaleAuto Scale = iota
	ScaleLinear
	ScaleLog
)

// Series is one line (or set of points) of a chart. NaN and ±Inf values (and, on a log
// axis, values ≤ 0) are left out, breaking the line.
//
// Points draws a marker at each point instead of a line: a filled dot, or with Hollow an open
// ring a little larger than the dot, so that dots of a series drawn later (series are drawn in
// order) show inside the rings where the two sets coincide instead of hiding them.
//
// Lo and Hi, when both are set, shade a band from Lo[i] to Hi[i] at X[i] beneath the line,
// in the series' colour at 20% opacity (Band fills them with quantiles over replicated
// runs). The band is cut at the data area like lines are, and is left out, breaking it,
// where Lo[i] or Hi[i] is NaN (or missing: beyond the slice's end) or ±Inf on a linear axis.
// On a log axis a Lo or Hi that is ≤ 0 (including -Inf) is not left out but drawn at the
// bottom of the axis, so that a band whose lower quantile touches zero stays continuous.
// The bands of all series lie beneath all lines, and the legend shows the line only. Lo and
// Hi count as values of the series for the y range and for the ScaleAuto decision.
type Series struct {
	Name   string
	X, Y   []float64 // X nil means 0, 1, 2, …
	Lo, Hi []float64 // band beneath the line, same length as Y; nil: no band
	Dashed bool
	Color  string // "#rrggbb"; "" picks from Palette
	Points bool   // draw markers instead of a line
	Hollow bool   // with Points: open rings instead of filled dots
}

// bandAlpha is the opacity of a series' band.
const bandAlpha = 51 // 0.2

// hasBand reports whether s shades a band.
func (s Series) hasBand() bool { return s.Lo != nil && s.Hi != nil }

// yValues calls f with each y value of s and its index: Y, then Lo and Hi of a band.
func (s Series) yValues(f func(i int, y float64)) {
	for i, y := range s.Y {
		f(i, y)
	}
	if s.hasBand() {
		for _, b := range [2][]float64{s.Lo, s.Hi} {
			for i, y := range b {
				f(i, y)
			}
		}
	}
}

// Chart is a line or scatter chart. The zero value of each field means a documented default.
// What lies beyond XMin..XMax or YMin..YMax is cut at the edge of the data area; a title
// wider than the chart is wrapped; named series are listed right of the data area.
type Chart struct {
	Title, XLabel, YLabel string
	Width, Height         int   // pixels; default 640×360
	LogY                  bool  // force a log10 y axis (as YScale: ScaleLog)
	YScale                Scale // default ScaleAuto
	LogX                  bool  // log10 x axis (with LogY: log–log); x ≤ 0 is left out. Not with Equal
	XMin, XMax            *float64
	YMin, YMax            *float64
	Equal                 bool // same scale on both axes (complex-plane plots)
	UnitCircle            bool // draw the unit circle, dashed (eigenvalue plots)
	Series                []Series
}

// Drawing constants, in figure pixels.
const (
	lineWidth   = 1.6
	markerR     = 2.5
	ringR       = 4 // radius of a Hollow marker: a dot of markerR fits inside with a gap
	ringWidth   = 1.2
	swatchW     = 22
	legendGap   = 12 // between the data area and the legend box
	legendPad   = 6
	legendLineH = 16
	outerPad    = 6
)

var (
	frameColor = color.NRGBA{0x33, 0x33, 0x33, 0xff}
	gridColor  = color.NRGBA{0xe5, 0xe5, 0xe5, 0xff}
	dashes     = []vg.Length{6, 4}
)

func (c Chart) size() (w, h float64) {
	w, h = float64(c.Width), float64(c.Height)
	if w <= 0 {
		w = 640
	}
	if h <= 0 {
		h = 360
	}
	return w, h
}

func (s Series) x(i int) float64 {
	if s.X != nil {
		if i < len(s.X) {
			return s.X[i]
		}
		return math.NaN()
	}
	return float64(i)
}

func (c Chart) color(i int) color.NRGBA {
	if s := c.Series[i].Color; s != "" {
		return parseColor(s)
	}
	return parseColor(Palette[i%len(Palette)])
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// LogScale reports whether the chart's y axis is log10: LogY or YScale force it; by default
// (ScaleAuto) it is when the finite values in view (within YMin..YMax where set), bands'
// Lo and Hi included, are all positive and the largest is more than 100 times the
// smallest. Complex-plane charts (Equal or UnitCircle) stay linear unless forced.
func (c Chart) LogScale() bool {
	switch {
	case c.LogY || c.YScale == ScaleLog:
		return true
	case c.YScale == ScaleLinear || c.Equal || c.UnitCircle:
		return false
	case c.YMin != nil && !(*c.YMin > 0):
		return false
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	nonPositive := false
	for _, s := range c.Series {
		s.yValues(func(_ int, y float64) {
			if !finite(y) || (c.YMin != nil && y < *c.YMin) || (c.YMax != nil && y > *c.YMax) {
				return
			}
			if y <= 0 {
				nonPositive = true
			}
			lo, hi = min(lo, y), max(hi, y)
		})
	}
	return !nonPositive && hi > 100*lo
}

// chartPlan is a chart laid out: the gonum plot (axes, title, series), the axis ranges (y in
// log10 units on a log axis) and where the data area and the legend lie.
type chartPlan struct {
	w, h           float64
	logX, logY     bool
	x0, x1, y0, y1 float64
	p              *plot.Plot
	plotArea       rect // what the gonum plot draws into: title, axes, data area
	data, legend   rect // legend is empty without named series
	names          []int
	labels         []string
}

// tx maps a value to the x axis' units (log10 on a log axis); ok is false for values the
// axis cannot show.
func (pl *chartPlan) tx(x float64) (float64, bool) {
	if pl.logX {
		if !(x > 0) || math.IsInf(x, 1) {
			return 0, false
		}
		return math.Log10(x), true
	}
	return x, finite(x)
}

// ty maps a value to the y axis' units (log10 on a log axis); ok is false for values the
// axis cannot show.
func (pl *chartPlan) ty(y float64) (float64, bool) {
	if pl.logY {
		if !(y > 0) || math.IsInf(y, 1) {
			return 0, false
		}
		return math.Log10(y), true
	}
	return y, finite(y)
}

func (c Chart) plan() *chartPlan {
	w, h := c.size()
	pl := &chartPlan{w: w, h: h, logX: c.LogX && !c.Equal, logY: c.LogScale()}
	// Data range.
	x0, x1, y0, y1 := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		s.yValues(func(i int, yv float64) {
			y, ok := pl.ty(yv)
			x, okX := pl.tx(s.x(i))
			if !ok || !okX {
				return
			}
			x0, x1, y0, y1 = min(x0, x), max(x1, x), min(y0, y), max(y1, y)
		})
	}
	if c.UnitCircle {
		x0, x1, y0, y1 = min(x0, -1.1), max(x1, 1.1), min(y0, -1.1), max(y1, 1.1)
	}
	if math.IsInf(x0, 1) {
		x0, x1, y0, y1 = 0, 1, 0, 1
	}
	if c.XMin != nil {
		if v, ok := pl.tx(*c.XMin); ok {
			x0 = v
		}
	}
	if c.XMax != nil {
		if v, ok := pl.tx(*c.XMax); ok {
			x1 = v
		}
	}
	yMinSet, yMaxSet := false, false
	if c.YMin != nil {
		if v, ok := pl.ty(*c.YMin); ok {
			y0, yMinSet = v, true
		}
	}
	if c.YMax != nil {
		if v, ok := pl.ty(*c.YMax); ok {
			y1, yMaxSet = v, true
		}
	}
	if !(x1 > x0) {
		x0, x1 = x0-1, x0+1
	}
	if !(y1 > y0) {
		y0, y1 = y0-1, y0+1
	}
	if !c.Equal {
		// Room for markers at the ends of the x range, and a margin above and below the data.
		for _, s := range c.Series {
			if s.Points {
				if pad := 0.02 * (x1 - x0); c.XMin == nil && c.XMax == nil {
					x0, x1 = x0-pad, x1+pad
				}
				break
			}
		}
		pad := 0.04 * (y1 - y0)
		if !yMinSet {
			y0 -= pad
		}
		if !yMaxSet {
			y1 += pad
		}
	}
	pl.x0, pl.x1, pl.y0, pl.y1 = x0, x1, y0, y1

	// Legend column: swatch and name of each named series.
	lw := 0.0
	for i, s := range c.Series {
		if s.Name == "" {
			continue
		}
		name := fit(labelStyle, s.Name, 0.22*w)
		pl.names, pl.labels = append(pl.names, i), append(pl.labels, name)
		lw = max(lw, textWidth(labelStyle, name))
	}
	legendW := 0.0
	if len(pl.names) > 0 {
		legendW = legendGap + 2*legendPad + swatchW + 6 + lw
	}
	pl.plotArea = rect{outerPad, outerPad, w - outerPad - legendW, h - outerPad}

	p := plot.New()
	p.BackgroundColor = nil
	p.Title.Text = wrap(titleStyle, c.Title, pl.plotArea.X1-pl.plotArea.X0)
	p.Title.TextStyle.Font = titleStyle.Font
	p.Title.Padding = 8
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = labelStyle.Font
		a.Label.Padding = 4
		a.Tick.Label.Font = tickStyle.Font
		a.Tick.Length = 4
		a.Tick.LineStyle = draw.LineStyle{Color: frameColor, Width: 1}
		a.LineStyle = draw.LineStyle{Color: frameColor, Width: 0} // framePlot draws the frame
		a.Padding = 0
	}
	p.X.Label.Text, p.Y.Label.Text = c.XLabel, c.YLabel
	if pl.logY {
		p.Y.Scale = plot.LogScale{}
	}
	if pl.logX {
		p.X.Scale = plot.LogScale{}
	}
	pl.p = p
	pl.setAxes()
	p.Add(gridPlot{pl})
	p.Add(bandPlot{pl, c})
	if c.UnitCircle {
		n := 128
		xs, ys := make([]float64, n+1), make([]float64, n+1)
		for i := range xs {
			xs[i], ys[i] = math.Cos(2*math.Pi*float64(i)/float64(n)), math.Sin(2*math.Pi*float64(i)/float64(n))
		}
		p.Add(seriesPlot{pl, Chart{Series: []Series{{X: xs, Y: ys, Dashed: true, Color: "#888888"}}}, 1})
	}
	p.Add(seriesPlot{pl, c, 0})
	p.Add(framePlot{})
	pl.layoutData()
	if c.Equal {
		// Same units per pixel on both axes: widen the tighter range. The tick labels (and so
		// the data area) change with the ranges, so settle in a few rounds.
		for range 3 {
			dw, dh := pl.data.X1-pl.data.X0, pl.data.Y1-pl.data.Y0
			sx, sy := (pl.x1-pl.x0)/dw, (pl.y1-pl.y0)/dh
			if sx > sy {
				m := (pl.y0 + pl.y1) / 2
				pl.y0, pl.y1 = m-sx*dh/2, m+sx*dh/2
			} else {
				m := (pl.x0 + pl.x1) / 2
				pl.x0, pl.x1 = m-sy*dw/2, m+sy*dw/2
			}
			pl.setAxes()
			pl.layoutData()
		}
	}
	if len(pl.names) > 0 {
		x0 := pl.data.X1 + legendGap
		pl.legend = rect{x0, pl.data.Y0, min(w-outerPad, x0+2*legendPad+swatchW+6+lw), pl.data.Y0 + 2*legendPad + legendLineH*float64(len(pl.names))}
	}
	return pl
}

// setAxes sets the gonum axes' ranges and ticks from the plan's.
func (pl *chartPlan) setAxes() {
	p := pl.p
	if pl.logX {
		p.X.Min, p.X.Max = math.Pow(10, pl.x0), math.Pow(10, pl.x1)
		p.X.Tick.Marker = plot.ConstantTicks(logAxisTicks(pl.x0, pl.x1))
	} else {
		p.X.Min, p.X.Max = pl.x0, pl.x1
		p.X.Tick.Marker = plot.ConstantTicks(linearTicks(pl.x0, pl.x1, 6))
	}
	if pl.logY {
		p.Y.Min, p.Y.Max = math.Pow(10, pl.y0), math.Pow(10, pl.y1)
		p.Y.Tick.Marker = plot.ConstantTicks(logAxisTicks(pl.y0, pl.y1))
	} else {
		p.Y.Min, p.Y.Max = pl.y0, pl.y1
		p.Y.Tick.Marker = plot.ConstantTicks(linearTicks(pl.y0, pl.y1, 5))
	}
}

// layoutData finds the data area of the plot.
func (pl *chartPlan) layoutData() {
	c := draw.Canvas{Rectangle: pl.plotArea.vgRect(pl.h)}
	pl.data = fromVG(pl.p.DataCanvas(c).Rectangle, pl.h)
}

// norm maps a point to the data area's unit square (u right, v up); ok is false for points
// the axes cannot show.
func (pl *chartPlan) norm(x, y float64) (u, v float64, ok bool) {
	ty, ok := pl.ty(y)
	tx, okX := pl.tx(x)
	if !ok || !okX {
		return 0, 0, false
	}
	u, v = (tx-pl.x0)/(pl.x1-pl.x0), (ty-pl.y0)/(pl.y1-pl.y0)
	return u, v, finite(u) && finite(v)
}

// clipSegment clips the segment a–b to the box [lo, hi] (Liang–Barsky): ok is false when
// nothing of it lies inside.
func clipSegment(a, b, lo, hi [2]float64) (ca, cb [2]float64, ok bool) {
	t0, t1 := 0.0, 1.0
	d := [2]float64{b[0] - a[0], b[1] - a[1]}
	for k := range 2 {
		for _, e := range [2]struct{ p, q float64 }{{-d[k], a[k] - lo[k]}, {d[k], hi[k] - a[k]}} {
			if e.p == 0 {
				if e.q < 0 {
					return ca, cb, false
				}
				continue
			}
			r := e.q / e.p
			if e.p < 0 {
				t0 = max(t0, r)
			} else {
				t1 = min(t1, r)
			}
		}
	}
	if t0 > t1 || !finite(t0) || !finite(t1) {
		return ca, cb, false
	}
	return [2]float64{a[0] + t0*d[0], a[1] + t0*d[1]}, [2]float64{a[0] + t1*d[0], a[1] + t1*d[1]}, true
}

// polylines returns the visible parts of s in the unit square inset by (ex, ey): runs of
// consecutive showable points, each segment clipped to the box, and the showable points
// that have no showable neighbour (drawn as dots, or they would vanish).
func (pl *chartPlan) polylines(s Series, ex, ey float64) (lines [][][2]float64, dots [][2]float64) {
	lo, hi := [2]float64{ex, ey}, [2]float64{1 - ex, 1 - ey}
	var cur [][2]float64
	flush := func() {
		if len(cur) > 1 {
			lines = append(lines, cur)
		}
		cur = nil
	}
	var prev [2]float64
	run := 0 // showable points in a row
	endRun := func() {
		if run == 1 && prev[0] >= lo[0] && prev[0] <= hi[0] && prev[1] >= lo[1] && prev[1] <= hi[1] {
			dots = append(dots, prev)
		}
		run = 0
	}
	for i, yv := range s.Y {
		u, v, ok := pl.norm(s.x(i), yv)
		if !ok {
			flush()
			endRun()
			continue
		}
		p := [2]float64{u, v}
		if run > 0 {
			a, b, in := clipSegment(prev, p, lo, hi)
			switch {
			case !in:
				flush()
			case len(cur) > 0 && cur[len(cur)-1] == a:
				cur = append(cur, b)
			default:
				flush()
				cur = [][2]float64{a, b}
			}
			if in && b != p { // left the box
				flush()
			}
		}
		prev = p
		run++
	}
	flush()
	endRun()
	return lines, dots
}

// decimate keeps, of a polyline with far more points than the data area has pixel columns,
// the first, lowest, highest and last point of each column (in order), which draws the same
// picture.
func decimate(line [][2]float64, columns int) [][2]float64 {
	if len(line) <= 4*columns {
		return line
	}
	var out [][2]float64
	for i := 0; i < len(line); {
		col := int(line[i][0] * float64(columns))
		j, lo, hi := i, i, i
		for j < len(line) && int(line[j][0]*float64(columns)) == col {
			if line[j][1] < line[lo][1] {
				lo = j
			}
			if line[j][1] > line[hi][1] {
				hi = j
			}
			j++
		}
		keep := []int{i, lo, hi, j - 1}
		if lo > hi {
			keep[1], keep[2] = hi, lo
		}
		last := -1
		for _, k := range keep {
			if k != last {
				out = append(out, line[k])
				last = k
			}
		}
		i = j
	}
	return out
}

// markerStyle is the marker of a Points series of colour col: a translucent dot, or with Hollow
// an open ring around where a dot would be.
func markerStyle(s Series, col color.NRGBA) draw.GlyphStyle {
	if s.Hollow {
		return draw.GlyphStyle{Color: col, Radius: ringR, Shape: ring{}}
	}
	col.A = 204
	return draw.GlyphStyle{Color: col, Radius: markerR, Shape: draw.CircleGlyph{}}
}

// ring draws an open circle of ringWidth (gonum's RingGlyph is a hairline).
type ring struct{}

func (ring) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: ringWidth})
	r := sty.Radius - ringWidth/2
	var p vg.Path
	p.Move(vg.Point{X: pt.X + r, Y: pt.Y})
	p.Arc(pt, r, 0, 2*math.Pi)
	p.Close()
	c.Stroke(p)
}

// seriesPlot draws a chart's series into the data area, clipped to it.
type seriesPlot struct {
	pl    *chartPlan
	c     Chart
	width float64 // of lines; 0 means lineWidth
}

func (sp seriesPlot) Plot(dc draw.Canvas, _ *plot.Plot) {
	W, H := float64(dc.Max.X-dc.Min.X), float64(dc.Max.Y-dc.Min.Y)
	pt := func(q [2]float64) vg.Point {
		return vg.Point{X: dc.Min.X + vg.Length(q[0]*W), Y: dc.Min.Y + vg.Length(q[1]*H)}
	}
	for i, s := range sp.c.Series {
		col := sp.c.color(i)
		if s.Points {
			sty := markerStyle(s, col)
			r := float64(sty.Radius)
			for k, yv := range s.Y {
				u, v, ok := sp.pl.norm(s.x(k), yv)
				if rx, ry := r/W, r/H; ok && u >= rx && u <= 1-rx && v >= ry && v <= 1-ry {
					dc.DrawGlyphNoClip(sty, pt([2]float64{u, v}))
				}
			}
			continue
		}
		width := lineWidth
		if sp.width > 0 {
			width = sp.width
		}
		ls := draw.LineStyle{Color: col, Width: vg.Length(width)}
		if s.Dashed {
			ls.Dashes = dashes
		}
		var lines [][]vg.Point
		visible, dots := sp.pl.polylines(s, width/2/W, width/2/H)
		for _, q := range dots {
			if r := width; q[0] >= r/W && q[0] <= 1-r/W && q[1] >= r/H && q[1] <= 1-r/H {
				dc.DrawGlyphNoClip(draw.GlyphStyle{Color: col, Radius: vg.Length(r), Shape: draw.CircleGlyph{}}, pt(q))
			}
		}
		for _, line := range visible {
			line = decimate(line, int(W))
			vl := make([]vg.Point, len(line))
			for k, q := range line {
				vl[k] = pt(q)
			}
			lines = append(lines, vl)
		}
		if len(lines) > 0 {
			dc.StrokeLines(ls, lines...)
		}
	}
}

// bandPolygons returns the visible parts of s's band in the unit square: for each run of
// consecutive points where the band can be drawn, the polygon along Hi forward and Lo back,
// cut at the square (Sutherland–Hodgman). Runs of far more points than the data area has
// pixel columns are thinned as lines are. A run of one point has no area and is left out.
func (pl *chartPlan) bandPolygons(s Series, columns int) [][][2]float64 {
	if !s.hasBand() {
		return nil
	}
	// bv maps a band edge to the unit square's v; on a log axis values ≤ 0 go to the bottom.
	bv := func(y float64) (float64, bool) {
		if pl.logY && y <= 0 {
			return 0, true
		}
		ty, ok := pl.ty(y)
		if !ok {
			return 0, false
		}
		v := (ty - pl.y0) / (pl.y1 - pl.y0)
		return v, finite(v)
	}
	var polys [][][2]float64
	var upper, lower [][2]float64
	flush := func() {
		if len(upper) > 1 {
			upper, lower = decimate(upper, columns), decimate(lower, columns)
			ring := make([][2]float64, 0, len(upper)+len(lower))
			ring = append(ring, upper...)
			for k := len(lower) - 1; k >= 0; k-- {
				ring = append(ring, lower[k])
			}
			if ring = clipPolygon(ring, [2]float64{0, 0}, [2]float64{1, 1}); len(ring) > 2 {
				polys = append(polys, ring)
			}
		}
		upper, lower = nil, nil
	}
	for i := range min(len(s.Lo), len(s.Hi)) {
		tx, okX := pl.tx(s.x(i))
		u := (tx - pl.x0) / (pl.x1 - pl.x0)
		lo, okLo := bv(s.Lo[i])
		hi, okHi := bv(s.Hi[i])
		if !okLo || !okHi || !okX || !finite(u) {
			flush()
			continue
		}
		if lo > hi {
			lo, hi = hi, lo
		}
		upper, lower = append(upper, [2]float64{u, hi}), append(lower, [2]float64{u, lo})
	}
	flush()
	return polys
}

// clipPolygon cuts the polygon poly at the box [lo, hi] (Sutherland–Hodgman; the box is
// convex, so any polygon is cut right, at worst with edges of no area along the box).
func clipPolygon(poly [][2]float64, lo, hi [2]float64) [][2]float64 {
	for k := range 2 {
		for side := range 2 {
			edge := lo[k]
			inside := func(p [2]float64) bool { return p[k] >= edge }
			if side == 1 {
				edge = hi[k]
				inside = func(p [2]float64) bool { return p[k] <= edge }
			}
			cross := func(a, b [2]float64) [2]float64 {
				t := (edge - a[k]) / (b[k] - a[k])
				p := [2]float64{a[0] + t*(b[0]-a[0]), a[1] + t*(b[1]-a[1])}
				p[k] = edge
				return p
			}
			var out [][2]float64
			for i, cur := range poly {
				prev := poly[(i+len(poly)-1)%len(poly)]
				switch in, prevIn := inside(cur), inside(prev); {
				case in && !prevIn:
					out = append(out, cross(prev, cur), cur)
				case in:
					out = append(out, cur)
				case prevIn:
					out = append(out, cross(prev, cur))
				}
			}
			if poly = out; len(poly) == 0 {
				return nil
			}
		}
	}
	return poly
}

// bandPlot fills the bands of a chart's series, beneath all lines.
type bandPlot struct {
	pl *chartPlan
	c  Chart
}

func (bp bandPlot) Plot(dc draw.Canvas, _ *plot.Plot) {
	W, H := float64(dc.Max.X-dc.Min.X), float64(dc.Max.Y-dc.Min.Y)
	for i, s := range bp.c.Series {
		polys := bp.pl.bandPolygons(s, int(W))
		if len(polys) == 0 {
			continue
		}
		col := bp.c.color(i)
		col.A = bandAlpha
		dc.SetColor(col)
		for _, poly := range polys { // one fill each: overlapping runs (X not sorted) leave no hole
			var path vg.Path
			for k, q := range poly {
				p := vg.Point{X: dc.Min.X + vg.Length(q[0]*W), Y: dc.Min.Y + vg.Length(q[1]*H)}
				if k == 0 {
					path.Move(p)
				} else {
					path.Line(p)
				}
			}
			path.Close()
			dc.Fill(path)
		}
	}
}

// gridPlot draws light lines at the labelled ticks.
type gridPlot struct{ pl *chartPlan }

func (g gridPlot) Plot(dc draw.Canvas, p *plot.Plot) {
	ls := draw.LineStyle{Color: gridColor, Width: 1}
	for _, t := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
		tx, ok := g.pl.tx(t.Value)
		if u := (tx - g.pl.x0) / (g.pl.x1 - g.pl.x0); ok && t.Label != "" && u > 0 && u < 1 {
			x := dc.Min.X + vg.Length(u)*(dc.Max.X-dc.Min.X)
			dc.StrokeLine2(ls, x, dc.Min.Y, x, dc.Max.Y)
		}
	}
	for _, t := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		if _, v, ok := g.pl.norm(g.pl.x0, t.Value); ok && t.Label != "" && v > 0 && v < 1 {
			y := dc.Min.Y + vg.Length(v)*(dc.Max.Y-dc.Min.Y)
			dc.StrokeLine2(ls, dc.Min.X, y, dc.Max.X, y)
		}
	}
}

// framePlot outlines the data area.
type framePlot struct{}

func (framePlot) Plot(dc draw.Canvas, _ *plot.Plot) {
	dc.SetLineStyle(draw.LineStyle{Color: frameColor, Width: 1})
	dc.Stroke(dc.Rectangle.Path())
}

func (c Chart) render(t target) {
	pl := c.plan()
	pl.p.Draw(draw.Canvas{Canvas: t.dc.Canvas, Rectangle: pl.plotArea.vgRect(pl.h)})
	if len(pl.names) == 0 {
		return
	}
	// Legend box in its own column, top-aligned with the data area.
	box := pl.legend.vgRect(pl.h)
	t.dc.SetColor(color.White)
	t.dc.Fill(box.Path())
	t.dc.SetLineStyle(draw.LineStyle{Color: color.NRGBA{0xcc, 0xcc, 0xcc, 0xff}, Width: 1})
	t.dc.Stroke(box.Path())
	sty := labelStyle
	sty.YAlign = draw.YCenter
	for k, i := range pl.names {
		s := c.Series[i]
		col := c.color(i)
		x := box.Min.X + legendPad
		y := box.Max.Y - legendPad - vg.Length(legendLineH*(float64(k)+0.5))
		if s.Points {
			sty := markerStyle(s, col)
			sty.Radius = max(sty.Radius, 3.5)
			t.dc.DrawGlyphNoClip(sty, vg.Point{X: x + swatchW/2, Y: y})
		} else {
			ls := draw.LineStyle{Color: col, Width: 3}
			if s.Dashed {
				ls.Dashes = []vg.Length{5, 3}
			}
			t.dc.StrokeLine2(ls, x, y, x+swatchW, y)
		}
		t.dc.FillText(sty, vg.Point{X: x + swatchW + 6, Y: y}, pl.labels[k])
	}
}

// DataPoints counts the finite points of the series that are not Dashed (a baseline or another
// reference line is dashed).
func (c Chart) DataPoints() int {
	n := 0
	for _, s := range c.Series {
		if s.Dashed {
			continue
		}
		for i, y := range s.Y {
			if finite(s.x(i)) && finite(y) {
				n++
			}
		}
	}
	return n
}

// PNG renders the chart as a PNG of Width·PNGScale × Height·PNGScale pixels.
func (c Chart) PNG() ([]byte, error) {
	w, h := c.size()
	return renderPNG(w, h, c.render)
}

// SVG renders the chart as SVG, Width × Height pixels.
func (c Chart) SVG() string {
	w, h := c.size()
	return renderSVG(w, h, c.render)
}
