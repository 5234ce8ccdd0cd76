package plots

import (
	"fmt"
	"image"
	"image/color"
	imgdraw "image/draw"
	"math"
	"strconv"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Heatmap draws a matrix as coloured cells: Values[r][c] is row r (top to bottom),
// column c (left to right). Categorical heat maps (one symbol per cell, as in a copy-task
// sequence) set Categories; otherwise values map linearly from Min..Max onto a
// white-to-blue scale, shown by a colour bar, or with Diverging (signed data) onto a
// blue–white–red scale whose white is 0. NaN cells are grey. The figure is as wide as its
// cells, labels and key need, and wider when the title needs it.
type Heatmap struct {
	Title, XLabel, YLabel string
	Values                [][]float64
	RowLabels, ColLabels  []string // optional; both may be sparse ("" skips); ColLabels nil labels about ten column indices
	Min, Max              *float64 // default: the data range (Diverging: −m..m, m the largest |value|)
	Diverging             bool     // signed data: blue below 0, white at 0, red above; the range symmetric about 0
	Categories            []string // value k is drawn in Palette colour k−1 and 0 in white; names go in the legend
	Annotate              bool     // write each value in its cell (use for small tables)
	Format                string   // Printf format of annotations; default "%.3g"
	CellW, CellH          int      // pixels per cell; default chosen to fit ~720 px wide
}

// ramp returns a colour for v in [0, 1] on a white → dark blue ramp.
func ramp(v float64) color.NRGBA {
	v = math.Max(0, math.Min(1, v))
	lerp := func(a, b float64) uint8 { return uint8(math.Round(a + (b-a)*v)) }
	return color.NRGBA{lerp(247, 8), lerp(251, 48), lerp(255, 107), 255}
}

// divergingRamp returns a colour for v in [0, 1] on a dark blue → white → dark red ramp
// (ColorBrewer's RdBu ends), white at v = 0.5.
func divergingRamp(v float64) color.NRGBA {
	v = math.Max(0, math.Min(1, v))
	lerp := func(a, b, f float64) uint8 { return uint8(math.Round(a + (b-a)*f)) }
	if v < 0.5 {
		f := v / 0.5
		return color.NRGBA{lerp(33, 247, f), lerp(102, 247, f), lerp(172, 247, f), 255}
	}
	f := (v - 0.5) / 0.5
	return color.NRGBA{lerp(247, 178, f), lerp(247, 24, f), lerp(247, 43, f), 255}
}

// scale returns the colour of f in [0, 1] on m's continuous scale, and whether text on it
// should be white.
func (m Heatmap) scale(f float64) (color.NRGBA, bool) {
	if m.Diverging {
		return divergingRamp(f), math.Abs(f-0.5) > 0.35
	}
	return ramp(f), f > 0.6
}

var nanColor = color.NRGBA{0xdd, 0xdd, 0xdd, 0xff}

// heatPlan is a heat map laid out, in figure pixels (y down).
type heatPlan struct {
	w, h       float64
	rows, cols int
	cw, ch     float64
	grid       rect // the cells
	key        rect // category legend or colour bar
	lo, hi     float64
	format     string
	colLabels  []string
	ylabel     string // YLabel wrapped
}

func (m Heatmap) plan() *heatPlan {
	pl := &heatPlan{rows: len(m.Values)}
	for _, r := range m.Values {
		pl.cols = max(pl.cols, len(r))
	}
	cw, ch := m.CellW, m.CellH
	if cw <= 0 {
		cw = max(2, min(40, 640/max(pl.cols, 1)))
	}
	if ch <= 0 {
		ch = max(8, min(32, cw))
	}
	pl.cw, pl.ch = float64(cw), float64(ch)
	pl.lo, pl.hi = math.Inf(1), math.Inf(-1)
	for _, r := range m.Values {
		for _, v := range r {
			if finite(v) {
				pl.lo, pl.hi = min(pl.lo, v), max(pl.hi, v)
			}
		}
	}
	if m.Diverging && m.Min == nil && m.Max == nil && !math.IsInf(pl.lo, 0) {
		r := math.Max(math.Abs(pl.lo), math.Abs(pl.hi))
		pl.lo, pl.hi = -r, r
	}
	if m.Min != nil {
		pl.lo = *m.Min
	}
	if m.Max != nil {
		pl.hi = *m.Max
	}
	if math.IsInf(pl.lo, 0) {
		pl.lo = 0
	}
	if !(pl.hi > pl.lo) {
		pl.hi = pl.lo + 1
	}
	pl.format = m.Format
	if pl.format == "" {
		pl.format = "%.3g"
	}
	pl.colLabels = m.ColLabels
	if pl.colLabels == nil && pl.cols > 1 {
		// Label about ten evenly spaced columns with their index.
		pl.colLabels = make([]string, pl.cols)
		for _, t := range niceTicks(0, float64(pl.cols-1), 10) {
			if i := int(t); i >= 0 && i < pl.cols {
				pl.colLabels[i] = strconv.Itoa(i)
			}
		}
	}

	lineH := func(sty float64) float64 { return math.Ceil(sty * 1.25) }
	top := float64(outerPad)
	if m.Title != "" {
		top += float64(titleStyle.Height(m.Title)) + 8
	}
	left := float64(outerPad)
	gw, gh := float64(pl.cols)*pl.cw, float64(pl.rows)*pl.ch
	// The y label runs up the left side, wrapped to about the cells' height; a longer one
	// pushes the cells down (and the figure's bottom edge out) so that it fits.
	ylabelOver := 0.0
	if m.YLabel != "" {
		pl.ylabel = wrap(labelStyle, m.YLabel, max(gh, 120))
		left += float64(labelStyle.Height(pl.ylabel)) + 4
		ylabelOver = max(0, (textWidth(labelStyle, pl.ylabel)-gh)/2)
		top += ylabelOver
	}
	rw := 0.0
	for _, l := range m.RowLabels {
		rw = max(rw, textWidth(tickStyle, l))
	}
	if rw > 0 {
		left += rw + 6
	}
	bottom := float64(outerPad)
	for _, l := range pl.colLabels {
		if l != "" {
			bottom += lineH(10) + 4
			break
		}
	}
	if m.XLabel != "" {
		bottom += lineH(11) + 4
	}
	left, top = math.Ceil(left), math.Ceil(top)
	pl.grid = rect{left, top, left + gw, top + gh}
	kw, kh := 0.0, 0.0
	if len(m.Categories) > 0 {
		for _, name := range m.Categories {
			kw = max(kw, textWidth(tickStyle, name))
		}
		kw, kh = 14+kw, 14*float64(len(m.Categories))-4
	} else if pl.rows > 0 {
		kw = 12 + 4 + max(textWidth(tickStyle, fmt.Sprintf(pl.format, pl.lo)), textWidth(tickStyle, fmt.Sprintf(pl.format, pl.hi)))
		kh = min(max(gh, 60), 240)
	}
	if kw > 0 {
		pl.key = rect{pl.grid.X1 + 12, top, pl.grid.X1 + 12 + kw, top + kh}
	}
	pl.w = max(pl.grid.X1, pl.key.X1) + outerPad
	pl.h = max(pl.grid.Y1+bottom, pl.key.Y1+bottom, pl.grid.Y1+ylabelOver+outerPad)
	if tw := textWidth(titleStyle, m.Title) + 2*outerPad; tw > pl.w {
		pl.w = math.Ceil(tw) // never cut the title
	}
	return pl
}

// color returns the fill of value v and whether annotations on it should be white.
func (m Heatmap) color(pl *heatPlan, v float64) (color.NRGBA, bool) {
	switch {
	case math.IsNaN(v):
		return nanColor, false
	case len(m.Categories) > 0:
		if k := int(v); k > 0 {
			return parseColor(Palette[(k-1)%len(Palette)]), false
		}
		return color.NRGBA{255, 255, 255, 255}, false
	default:
		return m.scale((v - pl.lo) / (pl.hi - pl.lo))
	}
}

// maxRectCells is the most cells an SVG draws as rectangles; larger heat maps embed their
// cells as an image (one pixel per cell, shown pixelated), which keeps the SVG small.
const maxRectCells = 4000

func (m Heatmap) render(t target) {
	pl := m.plan()
	dc := t.dc
	H := pl.h
	at := func(x, y float64) vg.Point { return vg.Point{X: vg.Length(x), Y: vg.Length(H - y)} }
	if m.Title != "" {
		sty := titleStyle
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		dc.FillText(sty, at(pl.w/2, outerPad), m.Title)
	}
	// Cells.
	switch {
	case t.img != nil:
		for r, row := range m.Values {
			for c, v := range row {
				col, _ := m.color(pl, v)
				x, y := pl.grid.X0+float64(c)*pl.cw, pl.grid.Y0+float64(r)*pl.ch
				imgdraw.Draw(t.img, t.pixelRect(x, H-y-pl.ch, x+pl.cw, H-y), image.NewUniform(col), image.Point{}, imgdraw.Src)
			}
		}
	case pl.rows*pl.cols > maxRectCells:
		img := image.NewNRGBA(image.Rect(0, 0, pl.cols, pl.rows))
		for r, row := range m.Values {
			for c, v := range row {
				col, _ := m.color(pl, v)
				img.SetNRGBA(c, r, col)
			}
		}
		dc.DrawImage(pl.grid.vgRect(H), img)
	default:
		for r, row := range m.Values {
			for c := 0; c < len(row); {
				col, _ := m.color(pl, row[c])
				e := c + 1
				for e < len(row) && !m.Annotate {
					if next, _ := m.color(pl, row[e]); next != col {
						break
					}
					e++
				}
				x0, y0 := pl.grid.X0+float64(c)*pl.cw, pl.grid.Y0+float64(r)*pl.ch
				dc.SetColor(col)
				dc.Fill(rectPath(vg.Length(x0), vg.Length(H-y0-pl.ch), vg.Length(x0+float64(e-c)*pl.cw), vg.Length(H-y0)))
				c = e
			}
		}
	}
	if pl.rows > 0 && pl.cols > 0 {
		dc.SetLineStyle(draw.LineStyle{Color: frameColor, Width: 1})
		dc.Stroke(pl.grid.vgRect(H).Path())
	}
	if m.Annotate {
		sty := annotStyle
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
		for r, row := range m.Values {
			for c, v := range row {
				if math.IsNaN(v) {
					continue
				}
				sty.Color = color.Black
				if _, white := m.color(pl, v); white {
					sty.Color = color.White
				}
				dc.FillText(sty, at(pl.grid.X0+(float64(c)+0.5)*pl.cw, pl.grid.Y0+(float64(r)+0.5)*pl.ch), fmt.Sprintf(pl.format, v))
			}
		}
	}
	// Row labels right of the cells' left edge, column labels under the cells; a label that
	// would overlap the previous one is skipped.
	sty := tickStyle
	sty.XAlign, sty.YAlign = draw.XRight, draw.YCenter
	last := math.Inf(-1)
	for r, l := range m.RowLabels {
		y := pl.grid.Y0 + (float64(r)+0.5)*pl.ch
		if l == "" || y-last < 11 {
			continue
		}
		dc.FillText(sty, at(pl.grid.X0-4, y), l)
		last = y
	}
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
	last = math.Inf(-1)
	labelled := false
	for c, l := range pl.colLabels {
		if l == "" || c >= pl.cols {
			continue
		}
		x, w := pl.grid.X0+(float64(c)+0.5)*pl.cw, textWidth(tickStyle, l)
		if x-w/2 < last+4 {
			continue
		}
		dc.FillText(sty, at(x, pl.grid.Y1+4), l)
		last, labelled = x+w/2, true
	}
	if m.XLabel != "" {
		y := pl.grid.Y1 + 4
		if labelled {
			y += 17
		}
		ls := labelStyle
		ls.XAlign, ls.YAlign = draw.XCenter, draw.YTop
		dc.FillText(ls, at((pl.grid.X0+pl.grid.X1)/2, y), m.XLabel)
	}
	if m.YLabel != "" {
		ls := labelStyle
		ls.Rotation, ls.XAlign, ls.YAlign = math.Pi/2, draw.XCenter, draw.YTop
		dc.FillText(ls, at(outerPad, (pl.grid.Y0+pl.grid.Y1)/2), pl.ylabel)
	}
	m.drawKey(t, pl)
}

// drawKey draws the category legend or the colour bar right of the cells.
func (m Heatmap) drawKey(t target, pl *heatPlan) {
	dc, H := t.dc, pl.h
	k := pl.key
	if k.X1 <= k.X0 {
		return
	}
	sty := tickStyle
	sty.YAlign = draw.YCenter
	border := draw.LineStyle{Color: color.NRGBA{0x99, 0x99, 0x99, 0xff}, Width: 1}
	if len(m.Categories) > 0 {
		for i, name := range m.Categories {
			y := k.Y0 + 14*float64(i)
			col := color.NRGBA{255, 255, 255, 255}
			if i > 0 {
				col = parseColor(Palette[(i-1)%len(Palette)])
			}
			p := rectPath(vg.Length(k.X0), vg.Length(H-y-10), vg.Length(k.X0+10), vg.Length(H-y))
			dc.SetColor(col)
			dc.Fill(p)
			dc.SetLineStyle(border)
			dc.Stroke(p)
			dc.FillText(sty, vg.Point{X: vg.Length(k.X0 + 14), Y: vg.Length(H - y - 5)}, name)
		}
		return
	}
	const steps = 48
	bh := (k.Y1 - k.Y0) / steps
	for i := range steps {
		y := k.Y0 + float64(i)*bh
		col, _ := m.scale(1 - (float64(i)+0.5)/steps)
		dc.SetColor(col)
		bottom := min(y+bh+1, k.Y1) // overlap the next step: no seams between them
		dc.Fill(rectPath(vg.Length(k.X0), vg.Length(H-bottom), vg.Length(k.X0+12), vg.Length(H-y)))
	}
	dc.SetLineStyle(border)
	dc.Stroke(rectPath(vg.Length(k.X0), vg.Length(H-k.Y1), vg.Length(k.X0+12), vg.Length(H-k.Y0)))
	sty.YAlign = draw.YTop
	dc.FillText(sty, vg.Point{X: vg.Length(k.X0 + 16), Y: vg.Length(H - k.Y0)}, fmt.Sprintf(pl.format, pl.hi))
	sty.YAlign = draw.YBottom
	dc.FillText(sty, vg.Point{X: vg.Length(k.X0 + 16), Y: vg.Length(H - k.Y1)}, fmt.Sprintf(pl.format, pl.lo))
	if m.Diverging && pl.lo < 0 && pl.hi > 0 && k.Y1-k.Y0 >= 60 { // where white is: 0
		y := k.Y0 + (k.Y1-k.Y0)*pl.hi/(pl.hi-pl.lo)
		sty.YAlign = draw.YCenter
		dc.FillText(sty, vg.Point{X: vg.Length(k.X0 + 16), Y: vg.Length(H - y)}, "0")
		dc.StrokeLine2(border, vg.Length(k.X0+9), vg.Length(H-y), vg.Length(k.X0+12), vg.Length(H-y))
	}
}

// DataPoints counts the finite cells.
func (m Heatmap) DataPoints() int {
	n := 0
	for _, row := range m.Values {
		for _, v := range row {
			if finite(v) {
				n++
			}
		}
	}
	return n
}

// PNG renders the heat map as PNG, PNGScale pixels per figure pixel.
func (m Heatmap) PNG() ([]byte, error) {
	pl := m.plan()
	return renderPNG(pl.w, pl.h, m.render)
}

// SVG renders the heat map as SVG.
func (m Heatmap) SVG() string {
	pl := m.plan()
	return renderSVG(pl.w, pl.h, m.render)
}
