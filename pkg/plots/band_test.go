package plots

import (
	"image"
	"image/color"
	"math"
	"strings"
	"testing"
)

func TestBandQuantiles(t *testing.T) {
	nan := math.NaN()
	same := func(a, b float64) bool { return math.IsNaN(a) && math.IsNaN(b) || math.Abs(a-b) <= 1e-12 }
	for _, tc := range []struct {
		name        string
		replicas    [][]float64 // one value each, at x = 0
		q           float64
		med, lo, hi float64
	}{
		// Odd count: sorted 1 2 3.
		{"odd, min–max", [][]float64{{3}, {1}, {2}}, 0, 2, 1, 3},
		{"odd, IQR", [][]float64{{3}, {1}, {2}}, 0.25, 2, 1.5, 2.5},
		// Even count: sorted 1 2 3 4; median (2+3)/2, h = 0.75 and 2.25.
		{"even, min–max", [][]float64{{4}, {1}, {3}, {2}}, 0, 2.5, 1, 4},
		{"even, IQR", [][]float64{{4}, {1}, {3}, {2}}, 0.25, 2.5, 1.75, 3.25},
		// Eight seeds 1…8: h = 1.75 and 5.25 (definition 7; definition 6 would give 2.25, 6.75).
		{"eight, IQR", [][]float64{{8}, {3}, {5}, {1}, {7}, {2}, {6}, {4}}, 0.25, 4.5, 2.75, 6.25},
		// NaN and ±Inf replicas are left out: sorted 1 5.
		{"NaN ignored", [][]float64{{nan}, {5}, {1}, {math.Inf(1)}}, 0.25, 3, 2, 4},
		{"one value", [][]float64{{nan}, {7}}, 0, 7, 7, 7},
		{"no value", [][]float64{{nan}, {nan}}, 0.25, nan, nan, nan},
		{"short replica counts as NaN", [][]float64{{}, {2}, {6}}, 0, 4, 2, 6},
		{"no replicas", nil, 0, nan, nan, nan},
	} {
		s := Band("b", []float64{10}, tc.replicas, tc.q)
		if len(s.Y) != 1 || len(s.Lo) != 1 || len(s.Hi) != 1 || s.Name != "b" || s.X[0] != 10 {
			t.Fatalf("%s: series %+v, want one point at x = 10 named b", tc.name, s)
		}
		if !same(s.Y[0], tc.med) || !same(s.Lo[0], tc.lo) || !same(s.Hi[0], tc.hi) {
			t.Errorf("%s: median %g, band %g…%g; want %g, %g…%g", tc.name, s.Y[0], s.Lo[0], s.Hi[0], tc.med, tc.lo, tc.hi)
		}
	}
	// Several points, replicas as curves; xs nil means 0, 1, 2 up to the longest replica.
	s := Band("", nil, [][]float64{{1, 10, nan}, {3, 20}, {2, nan, nan, 4}}, 0)
	want := struct{ y, lo, hi []float64 }{
		[]float64{2, 15, nan, 4}, []float64{1, 10, nan, 4}, []float64{3, 20, nan, 4}}
	if s.X != nil || len(s.Y) != 4 {
		t.Fatalf("xs nil: X %v, %d points; want nil and 4", s.X, len(s.Y))
	}
	for i := range 4 {
		if !same(s.Y[i], want.y[i]) || !same(s.Lo[i], want.lo[i]) || !same(s.Hi[i], want.hi[i]) {
			t.Errorf("point %d: %g, %g…%g; want %g, %g…%g", i, s.Y[i], s.Lo[i], s.Hi[i], want.y[i], want.lo[i], want.hi[i])
		}
	}
	for _, q := range []float64{-0.1, 0.6, math.NaN()} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Band with q = %g did not panic", q)
				}
			}()
			Band("", []float64{0}, [][]float64{{1}}, q)
		}()
	}
}

// tint is what a band of colour c looks like over white.
func tint(c color.NRGBA) color.NRGBA {
	m := func(v uint8) uint8 { return uint8(math.Round(255 - float64(bandAlpha)/255*float64(255-int(v)))) }
	return color.NRGBA{m(c.R), m(c.G), m(c.B), 255}
}

func isTint(c color.Color) bool { return near(c, tint(magenta), 8) }

// at returns the PNG-pixel rectangle of data coordinates x0..x1, y0..y1 of c's data area.
func at(c Chart, x0, x1, y0, y1 float64) image.Rectangle {
	pl := c.plan()
	d := px(pl.data)
	u0, v1, _ := pl.norm(x0, y1)
	u1, v0, _ := pl.norm(x1, y0)
	return image.Rect(d.Min.X+int(u0*float64(d.Dx())), d.Max.Y-int(v1*float64(d.Dy())),
		d.Min.X+int(u1*float64(d.Dx())), d.Max.Y-int(v0*float64(d.Dy())))
}

// TestBandDrawn: the band's tint fills the space between Lo and Hi, not above or below it,
// and breaks where Lo or Hi is NaN.
func TestBandDrawn(t *testing.T) {
	c := Chart{Width: 320, Height: 220, XMin: ptr(0), XMax: ptr(4), YMin: ptr(0), YMax: ptr(10), Series: []Series{{
		Name: "band", X: []float64{0, 1, 2, 3, 4}, Y: []float64{5, 5, 5, 5, 5},
		Lo: []float64{3, 3, 3, 3, 3}, Hi: []float64{7, 7, 7, 7, 7}, Color: "#ff00ff"}}}
	img := decode(t, c)
	in := at(c, 0.5, 3.5, 5.6, 6.6) // between the line and Hi, away from grid lines at 6
	if n, all := count(img, in, isTint), in.Dx()*in.Dy(); n < all*3/4 {
		t.Errorf("%d of %d pixels between the line and Hi have the band's tint %v", n, all, tint(magenta))
	}
	if n := count(img, at(c, 0.5, 3.5, 3.2, 4.4), isTint); n == 0 {
		t.Error("no band between Lo and the line")
	}
	for _, r := range []image.Rectangle{at(c, 0.2, 3.8, 7.4, 9.8), at(c, 0.2, 3.8, 0.2, 2.6)} {
		if n := count(img, r, isTint); n > 0 {
			t.Errorf("%d band pixels above Hi or below Lo in %v", n, r)
		}
	}
	// The legend shows the line, not the band: it looks as without the band.
	plain := c
	plain.Series = []Series{c.Series[0]}
	plain.Series[0].Lo, plain.Series[0].Hi = nil, nil
	l := px(c.plan().legend)
	if l != px(plain.plan().legend) || count(img, l, isMagenta) < 20 {
		t.Fatalf("legend at %v without the band at %v, or no swatch", l, px(plain.plan().legend))
	}
	imgPlain := decode(t, plain)
	diff := 0
	for y := l.Min.Y; y < l.Max.Y; y++ {
		for x := l.Min.X; x < l.Max.X; x++ {
			if img.At(x, y) != imgPlain.At(x, y) {
				diff++
			}
		}
	}
	if diff > 0 {
		t.Errorf("legend: %d pixels differ from the legend of the line without a band", diff)
	}
	svg := c.SVG()
	elements(t, svg)
	if !strings.Contains(svg, "fill-opacity:0.2") {
		t.Error("SVG has no translucent band")
	}

	// NaN in Lo at x = 2 breaks the band between x = 1 and x = 3.
	c.Series[0].Lo = []float64{3, 3, math.NaN(), 3, 3}
	img = decode(t, c)
	for _, r := range []image.Rectangle{at(c, 1.2, 2.8, 3.2, 4.6), at(c, 1.2, 2.8, 5.4, 6.8)} { // above and below the line
		if n := count(img, r, isTint); n > 0 {
			t.Errorf("%d band pixels around a NaN Lo in %v", n, r)
		}
	}
	if count(img, at(c, 0.1, 0.9, 5.6, 6.6), isTint) == 0 || count(img, at(c, 3.1, 3.9, 5.6, 6.6), isTint) == 0 {
		t.Error("band missing either side of a NaN Lo")
	}
}

// TestBandClipped: a band reaching beyond the axes is cut at the data area, on linear and log
// axes; on a log axis Lo ≤ 0 is drawn at the bottom of the axis, not dropped.
func TestBandClipped(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Chart
	}{
		{"linear", Chart{YScale: ScaleLinear, XMin: ptr(0), XMax: ptr(4), YMin: ptr(0), YMax: ptr(10), Series: []Series{{
			X: []float64{-2, 0, 1, 2, 3, 4, 6}, Y: []float64{5, 5, 5, 5, 5, 5, 5},
			Lo: []float64{-1e9, 3, -1e300, 3, 3, -50, 3}, Hi: []float64{1e9, 7, 7, 1e300, 7, 20, 7}, Color: "#ff00ff"}}}},
		{"log", Chart{LogY: true, YMax: ptr(1000), XMin: ptr(0), XMax: ptr(4), Series: []Series{{
			X: []float64{-1, 0, 1, 2, 3, 4, 5}, Y: []float64{1, 1, 10, 100, 10, 1, 1},
			Lo: []float64{0.5, 0.5, 5, 0, 5, 0.5, -1}, Hi: []float64{2, 2, 20, 1e6, 20, 2, 2}, Color: "#ff00ff"}}}},
	} {
		c := tc.c
		c.Width, c.Height = 320, 220
		img := decode(t, c)
		d := px(c.plan().data)
		inside, all := count(img, d, isTint), count(img, img.Bounds(), isTint)
		if inside == 0 {
			t.Errorf("%s: no band drawn", tc.name)
		}
		if all != inside {
			t.Errorf("%s: %d band pixels outside the data area %v", tc.name, all-inside, d)
		}
		if tc.name != "log" {
			continue
		}
		// Lo = 0 at x = 2: the band reaches down to the bottom of the data area there.
		pl := c.plan()
		u := (2 - pl.x0) / (pl.x1 - pl.x0)
		col := d.Min.X + int(u*float64(d.Dx()))
		if n := count(img, image.Rect(col-2, d.Max.Y-6, col+3, d.Max.Y-1), isTint); n == 0 {
			t.Errorf("log: band does not reach the bottom of the axis where Lo = 0")
		}
	}
}

// TestBandRange: Lo and Hi take part in the auto log-scale decision and in the y range.
func TestBandRange(t *testing.T) {
	y := []float64{1, 2, 5, 10} // one decade: linear by itself
	for _, tc := range []struct {
		name string
		c    Chart
		log  bool
	}{
		{"line only", Chart{Series: []Series{{Y: y}}}, false},
		{"Hi spans decades", Chart{Series: []Series{{Y: y, Lo: y, Hi: []float64{1, 2, 5, 1e4}}}}, true},
		{"Lo spans decades", Chart{Series: []Series{{Y: y, Lo: []float64{1e-3, 2, 5, 10}, Hi: y}}}, true},
		{"Hi beyond YMax", Chart{YMax: ptr(20), Series: []Series{{Y: y, Lo: y, Hi: []float64{1, 2, 5, 1e4}}}}, false},
		{"Lo zero", Chart{Series: []Series{{Y: y, Lo: []float64{0, 2, 5, 10}, Hi: []float64{1, 2, 5, 1e4}}}}, false},
		{"Hi without Lo: no band", Chart{Series: []Series{{Y: y, Hi: []float64{1, 2, 5, 1e4}}}}, false},
	} {
		if got := tc.c.LogScale(); got != tc.log {
			t.Errorf("%s: LogScale() = %v, want %v", tc.name, got, tc.log)
		}
	}
	pl := Chart{Series: []Series{{Y: y, Lo: y, Hi: []float64{1, 2, 5, 1e4}}}}.plan()
	if !pl.logY || pl.y1 < 4 {
		t.Errorf("log axis up to 10^%g, want Hi 1e4 in view", pl.y1)
	}
	pl = Chart{YScale: ScaleLinear, Series: []Series{{Y: y, Lo: []float64{-3, 2, 5, 10}, Hi: []float64{1, 2, 50, 10}}}}.plan()
	if pl.y0 > -3 || pl.y1 < 50 {
		t.Errorf("linear axis %g…%g, want Lo −3 and Hi 50 in view", pl.y0, pl.y1)
	}
}
