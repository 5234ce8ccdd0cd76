package plots

import (
	"bytes"
	"encoding/xml"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
)

func ptr(v float64) *float64 { return &v }

// decode renders fig as PNG and decodes it, failing the test if it is not a PNG.
func decode(t *testing.T, fig Figure) image.Image {
	t.Helper()
	b, err := fig.PNG()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("PNG does not decode: %v", err)
	}
	return img
}

// elements parses svg as XML (failing the test if it is not well formed) and counts its
// elements by name.
func elements(t *testing.T, svg string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return counts
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%.2000s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok {
			counts[se.Name.Local]++
		}
	}
}

// near reports whether pixel colour c is within tol of want in every channel.
func near(c color.Color, want color.NRGBA, tol int) bool {
	r, g, b, _ := c.RGBA()
	d := func(x uint32, y uint8) bool { return math.Abs(float64(int(x>>8)-int(y))) <= float64(tol) }
	return d(r, want.R) && d(g, want.G) && d(b, want.B)
}

// count returns how many pixels of img in the PNG-pixel rectangle r satisfy f.
func count(img image.Image, r image.Rectangle, f func(color.Color) bool) int {
	n := 0
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if f(img.At(x, y)) {
				n++
			}
		}
	}
	return n
}

// px converts a layout rectangle (figure pixels) to PNG pixels.
func px(r rect) image.Rectangle {
	s := float64(PNGScale)
	return image.Rect(int(math.Round(r.X0*s)), int(math.Round(r.Y0*s)), int(math.Round(r.X1*s)), int(math.Round(r.Y1*s)))
}

var magenta = color.NRGBA{0xff, 0x00, 0xff, 0xff}

func isMagenta(c color.Color) bool {
	r, g, b, _ := c.RGBA()
	return r>>8 > 0xa0 && b>>8 > 0xa0 && g>>8 < 0x60
}

func isWhite(c color.Color) bool { return near(c, color.NRGBA{255, 255, 255, 255}, 0) }

func TestPNGSize(t *testing.T) {
	for _, tc := range []struct {
		fig  Figure
		w, h int
	}{
		{Chart{}, 640, 360},
		{Chart{Width: 300, Height: 200, Series: []Series{{Y: []float64{1, 2}}}}, 300, 200},
	} {
		img := decode(t, tc.fig)
		if b := img.Bounds(); b.Dx() != tc.w*PNGScale || b.Dy() != tc.h*PNGScale {
			t.Errorf("PNG is %v, want %d×%d", b.Size(), tc.w*PNGScale, tc.h*PNGScale)
		}
		if svg := tc.fig.SVG(); !strings.Contains(svg, `width="`) || elements(t, svg)["svg"] != 1 {
			t.Errorf("SVG without its size")
		}
	}
	m := Heatmap{Values: [][]float64{{0, 1}, {2, 3}}, CellW: 20, CellH: 10}
	pl := m.plan()
	if b := decode(t, m).Bounds(); b.Dx() != int(math.Round(pl.w*PNGScale)) || b.Dy() != int(math.Round(pl.h*PNGScale)) {
		t.Errorf("heat map PNG is %v, want %g×%g scaled by %d", b.Size(), pl.w, pl.h, PNGScale)
	}
}

// TestChartMapsDataToPixels: the middle of the data range lands in the middle of the data
// area, where the diagonal's pixels are coloured.
func TestChartMapsDataToPixels(t *testing.T) {
	c := Chart{Width: 300, Height: 220, XMin: ptr(0), XMax: ptr(10), YMin: ptr(0), YMax: ptr(10),
		Series: []Series{{Name: "a<b", X: []float64{0, 5, 10}, Y: []float64{0, 5, 10}, Color: "#ff00ff"}}}
	img := decode(t, c)
	d := px(c.plan().data)
	mid := image.Pt((d.Min.X+d.Max.X)/2, (d.Min.Y+d.Max.Y)/2)
	if n := count(img, image.Rectangle{Min: mid.Sub(image.Pt(2, 2)), Max: mid.Add(image.Pt(3, 3))}, isMagenta); n == 0 {
		t.Errorf("no series pixel at the data area's centre %v (data area %v)", mid, d)
	}
	// The line runs from corner to corner: many coloured pixels inside, in both halves.
	left := image.Rect(d.Min.X, d.Min.Y, mid.X, d.Max.Y)
	right := image.Rect(mid.X, d.Min.Y, d.Max.X, d.Max.Y)
	if count(img, left, isMagenta) < 50 || count(img, right, isMagenta) < 50 {
		t.Errorf("diagonal not drawn across the data area")
	}
	if svg := c.SVG(); !strings.Contains(svg, ">a&lt;b<") {
		t.Error("legend name not escaped in the SVG")
	}
}

func TestAutoLogScale(t *testing.T) {
	decades := func(lo, hi float64) []float64 {
		var y []float64
		for e := lo; e <= hi; e += 0.25 {
			y = append(y, math.Pow(10, e))
		}
		return y
	}
	spike := []float64{0.2, 0.21, 40, 0.19, 0.2, 0.18}
	for _, tc := range []struct {
		name string
		c    Chart
		log  bool
	}{
		{"4 decades", Chart{Series: []Series{{Y: decades(-4, 0)}}}, true},
		{"1 decade", Chart{Series: []Series{{Y: decades(-1, 0)}}}, false},
		{"spike 40 over 0.2", Chart{Series: []Series{{Y: spike}}}, true},
		{"spike clipped by YMax", Chart{YMax: ptr(1), Series: []Series{{Y: spike}}}, false},
		{"a zero", Chart{Series: []Series{{Y: append(decades(-4, 0), 0)}}}, false},
		{"negative YMin", Chart{YMin: ptr(-1), Series: []Series{{Y: decades(-4, 0)}}}, false},
		{"forced linear", Chart{YScale: ScaleLinear, Series: []Series{{Y: decades(-4, 0)}}}, false},
		{"LogY", Chart{LogY: true, Series: []Series{{Y: decades(-1, 0)}}}, true},
		{"ScaleLog", Chart{YScale: ScaleLog, Series: []Series{{Y: decades(-1, 0)}}}, true},
		{"complex plane", Chart{Equal: true, UnitCircle: true, Series: []Series{{X: []float64{0.001, 1}, Y: []float64{0.001, 1}, Points: true}}}, false},
	} {
		if got := tc.c.LogScale(); got != tc.log {
			t.Errorf("%s: LogScale() = %v, want %v", tc.name, got, tc.log)
		}
	}
	// The auto log axis is labelled with powers of ten, at most 8 of them.
	svg := Chart{Series: []Series{{Y: decades(-12, 0)}}}.SVG()
	elements(t, svg)
	for _, want := range []string{">1e-12<", ">1e-06<", ">1<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("log axis misses the label %s", want)
		}
	}
	n := 0
	for _, e := range []string{"1e-12", "1e-11", "1e-10", "1e-09", "1e-08", "1e-07", "1e-06", "1e-05", "0.0001", "0.001", "0.01", "0.1", "1"} {
		if strings.Contains(svg, ">"+e+"<") {
			n++
		}
	}
	if n > 8 {
		t.Errorf("%d log-axis labels, want at most 8", n)
	}
}

// TestClipping: values beyond the axes are cut at the data area; nothing is drawn outside it.
func TestClipping(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Chart
	}{
		{"spike above YMax", Chart{YScale: ScaleLinear, YMin: ptr(0), YMax: ptr(1),
			Series: []Series{{Y: []float64{0.5, 0.5, 1e300, 0.5, 0.5}, Color: "#ff00ff"}}}},
		{"below YMin and beyond XMin/XMax", Chart{XMin: ptr(0.5), XMax: ptr(3.5), YMin: ptr(0), YMax: ptr(1),
			Series: []Series{{Y: []float64{0.5, 0.9, -1e9, 0.2, 0.7, 0.1}, Color: "#ff00ff"}}}},
		{"huge values on a log axis", Chart{LogY: true, YMax: ptr(10),
			Series: []Series{{Y: []float64{1, 2, 1e308, 3, 0.5}, Color: "#ff00ff"}}}},
		{"markers", Chart{XMin: ptr(0), XMax: ptr(1), YMin: ptr(0), YMax: ptr(1),
			Series: []Series{{X: []float64{0, 0.5, 1, 2, 0.5}, Y: []float64{0.5, 0.5, 1, 0.5, 5}, Points: true, Color: "#ff00ff"}}}},
	} {
		c := tc.c
		c.Width, c.Height = 320, 220
		img := decode(t, c)
		d := px(c.plan().data)
		inside := count(img, d, isMagenta)
		all := count(img, img.Bounds(), isMagenta)
		if inside == 0 {
			t.Errorf("%s: nothing drawn in the data area", tc.name)
		}
		if all != inside {
			t.Errorf("%s: %d series pixels outside the data area %v", tc.name, all-inside, d)
		}
		// In particular the rows above the frame are background.
		if n := count(img, image.Rect(d.Min.X, 0, d.Max.X, d.Min.Y-1), func(c color.Color) bool { return !isWhite(c) && !near(c, color.NRGBA{0, 0, 0, 255}, 200) }); n > 0 && tc.name == "spike above YMax" {
			t.Errorf("%s: %d coloured pixels above the frame", tc.name, n)
		}
	}
	// The spike is drawn up to the top edge of the data area.
	c := Chart{Width: 320, Height: 220, YScale: ScaleLinear, YMin: ptr(0), YMax: ptr(1), Series: []Series{{Y: []float64{0.5, 0.5, 1e300, 0.5, 0.5}, Color: "#ff00ff"}}}
	d := px(c.plan().data)
	if count(decode(t, c), image.Rect(d.Min.X, d.Min.Y, d.Max.X, d.Min.Y+6), isMagenta) == 0 {
		t.Error("clipped spike does not reach the top of the data area")
	}
}

// TestLogDropsNonPositive: on a log axis values ≤ 0 are left out, never drawn to the bottom
// corner; the line breaks there.
func TestLogDropsNonPositive(t *testing.T) {
	c := Chart{Width: 320, Height: 220, LogY: true, Series: []Series{{Y: []float64{10, 100, 0, -5, 100, 1000}, Color: "#ff00ff"}}}
	img := decode(t, c)
	d := px(c.plan().data)
	if n := count(img, image.Rect(d.Min.X, d.Max.Y-8, d.Max.X, d.Max.Y), isMagenta); n > 0 {
		t.Errorf("%d series pixels along the bottom edge: a value ≤ 0 was drawn", n)
	}
	if count(img, d, isMagenta) == 0 {
		t.Error("positive values not drawn")
	}
	// Between x = 2 and x = 3 (both dropped) nothing is drawn.
	pl := c.plan()
	x2, x3 := (2-pl.x0)/(pl.x1-pl.x0), (3-pl.x0)/(pl.x1-pl.x0)
	gap := image.Rect(d.Min.X+int(float64(d.Dx())*x2)+4, d.Min.Y, d.Min.X+int(float64(d.Dx())*x3)-4, d.Max.Y)
	if n := count(img, gap, isMagenta); n > 0 {
		t.Errorf("%d series pixels between dropped points", n)
	}
	// A series with nothing to show on a log axis draws nothing and does not panic.
	if _, err := (Chart{LogY: true, Series: []Series{{Y: []float64{0, -1}}}}).PNG(); err != nil {
		t.Error(err)
	}
	for _, want := range []string{">10<", ">100<", ">1000<"} {
		if !strings.Contains(c.SVG(), want) {
			t.Errorf("log axis misses tick %s", want)
		}
	}
}

// TestLegendOutside: the legend has a column of its own right of the data area, and a
// curve along the top right corner stays visible.
func TestLegendOutside(t *testing.T) {
	green := color.NRGBA{0x00, 0xc0, 0x00, 0xff}
	isGreen := func(c color.Color) bool { return near(c, green, 40) }
	c := Chart{Width: 400, Height: 240, Series: []Series{
		{Name: "flat at the top", Y: []float64{0, 1, 1, 1, 1, 1, 1, 1, 1, 1}, Color: "#00c000"},
		{Name: "other", Y: []float64{0, 0.1, 0.2, 0.3}},
	}}
	pl := c.plan()
	if pl.legend.X0 < pl.data.X1 || pl.legend.X1 > pl.w || pl.legend.Y1 <= pl.legend.Y0 {
		t.Fatalf("legend %+v not right of the data area %+v within width %g", pl.legend, pl.data, pl.w)
	}
	img := decode(t, c)
	d, l := px(pl.data), px(pl.legend)
	if count(img, l, isGreen) < 20 {
		t.Error("no legend swatch right of the data area")
	}
	topRight := image.Rect(d.Min.X+d.Dx()*2/3, d.Min.Y, d.Max.X, d.Min.Y+d.Dy()/4)
	if count(img, topRight, isGreen) < 50 {
		t.Error("curve in the top right corner hidden")
	}
	// No legend: the data area takes the width.
	c.Series[0].Name, c.Series[1].Name = "", ""
	if p2 := c.plan(); p2.data.X1 <= pl.data.X1 || p2.legend != (rect{}) {
		t.Errorf("without names the data area ends at %g (with a legend %g)", p2.data.X1, pl.data.X1)
	}
}

func TestEqualAspectAndUnitCircle(t *testing.T) {
	c := Chart{Width: 640, Height: 360, Equal: true, UnitCircle: true,
		Series: []Series{{Name: "λ", X: []float64{0.5}, Y: []float64{0.5}, Points: true, Color: "#ff00ff"}}}
	pl := c.plan()
	sx := (pl.x1 - pl.x0) / (pl.data.X1 - pl.data.X0)
	sy := (pl.y1 - pl.y0) / (pl.data.Y1 - pl.data.Y0)
	if math.Abs(sx/sy-1) > 0.01 {
		t.Errorf("units per pixel: x %g, y %g", sx, sy)
	}
	img := decode(t, c)
	// The dashed circle passes through (0, 1): grey pixels near it.
	grey := func(c color.Color) bool { return near(c, color.NRGBA{0x88, 0x88, 0x88, 0xff}, 40) }
	u, v, _ := pl.norm(0, 1)
	d := px(pl.data)
	at := image.Pt(d.Min.X+int(u*float64(d.Dx())), d.Max.Y-int(v*float64(d.Dy())))
	if count(img, image.Rectangle{Min: at.Sub(image.Pt(12, 3)), Max: at.Add(image.Pt(12, 4))}, grey) == 0 {
		t.Errorf("no unit circle near %v", at)
	}
	if count(img, d, isMagenta) == 0 {
		t.Error("marker not drawn")
	}
}

func TestDeterministic(t *testing.T) {
	figs := []Figure{
		Chart{Title: "t", LogY: true, Series: []Series{{Name: "a", Y: []float64{1, 10, 100}}, {Name: "b", Y: []float64{3, 2, 1}, Dashed: true}}},
		Chart{Equal: true, UnitCircle: true, Series: []Series{{Name: "p", X: []float64{0.3}, Y: []float64{-0.2}, Points: true}}},
		Chart{Title: "band", Series: []Series{Band("seeds", []float64{0, 1, 2, 3}, [][]float64{{1, 3, 2, 5}, {2, math.NaN(), 1, 4}, {4, 2, 3, 8}}, 0.25)}},
		Heatmap{Title: "h", Values: [][]float64{{0, 1}, {2, math.NaN()}}, Annotate: true},
		Heatmap{Values: [][]float64{make([]float64, 5000)}, CellW: 1},
	}
	for i, f := range figs {
		a, err1 := f.PNG()
		b, err2 := f.PNG()
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("figure %d: PNG differs between renders (%v, %v)", i, err1, err2)
		}
		if f.SVG() != f.SVG() {
			t.Errorf("figure %d: SVG differs between renders", i)
		}
	}
}

func TestHeatmapAnnotations(t *testing.T) {
	lo, hi := 0.0, 100.0
	m := Heatmap{Title: "Success %", Values: [][]float64{{100, 12.1}}, RowLabels: []string{"S=1"}, ColLabels: []string{"4", "32"},
		Min: &lo, Max: &hi, Annotate: true, Format: "%.1f", CellW: 56, CellH: 28}
	svg := m.SVG()
	elements(t, svg)
	for _, want := range []string{">100.0<", ">12.1<", ">S=1<", ">32<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG misses %q", want)
		}
	}
	img := decode(t, m)
	pl := m.plan()
	cell := func(c int) image.Rectangle {
		x := pl.grid.X0 + float64(c)*pl.cw
		return px(rect{x + 2, pl.grid.Y0 + 2, x + pl.cw - 2, pl.grid.Y1 - 2})
	}
	// The dark cell (100) carries white text, the light one (12.1) dark text.
	dark := ramp(1)
	if count(img, cell(0), func(c color.Color) bool { return near(c, dark, 4) }) == 0 ||
		count(img, cell(0), func(c color.Color) bool { return near(c, color.NRGBA{255, 255, 255, 255}, 30) }) < 20 {
		t.Error("cell 100: want a dark fill with white digits")
	}
	light := ramp(0.121)
	if count(img, cell(1), func(c color.Color) bool { return near(c, light, 4) }) == 0 ||
		count(img, cell(1), func(c color.Color) bool { return near(c, color.NRGBA{0, 0, 0, 255}, 60) }) < 20 {
		t.Error("cell 12.1: want a light fill with black digits")
	}
}

func TestHeatmapCategories(t *testing.T) {
	names := []string{"blank", "a", "b", "c"}
	m := Heatmap{Values: [][]float64{{0, 1, 2}, {3, 0, 1}}, Categories: names, CellW: 12, CellH: 14}
	svg := m.SVG()
	elements(t, svg)
	for _, n := range names {
		if !strings.Contains(svg, ">"+n+"<") {
			t.Errorf("legend misses %q", n)
		}
	}
	img := decode(t, m)
	pl := m.plan()
	for r, row := range m.Values {
		for c, v := range row {
			want := color.NRGBA{255, 255, 255, 255}
			if v > 0 {
				want = parseColor(Palette[int(v)-1])
			}
			x := int((pl.grid.X0 + (float64(c)+0.5)*pl.cw) * PNGScale)
			y := int((pl.grid.Y0 + (float64(r)+0.5)*pl.ch) * PNGScale)
			if got := img.At(x, y); !near(got, want, 0) {
				t.Errorf("cell (%d, %d) = %v: colour %v, want %v", r, c, v, got, want)
			}
		}
	}
	// The key lies right of the cells and shows category 3's colour.
	k := px(pl.key)
	if pl.key.X0 < pl.grid.X1 || count(img, k, func(c color.Color) bool { return near(c, parseColor(Palette[2]), 0) }) == 0 {
		t.Errorf("key %+v: want it right of the cells %+v with category 3's swatch", pl.key, pl.grid)
	}
	// A large heat map embeds its cells as one image in the SVG.
	big := Heatmap{Values: [][]float64{make([]float64, maxRectCells+1)}, CellW: 1}
	if n := elements(t, big.SVG())["image"]; n != 1 {
		t.Errorf("large heat map: %d <image> elements, want 1", n)
	}
}

// TestTitlesFit: a title never gets cut: a heat map widens, a chart wraps it.
func TestTitlesFit(t *testing.T) {
	long := "Success % of the explicit copy solution (d = 16, T = 40, 60 draws per cell)"
	m := Heatmap{Title: long, Values: [][]float64{{1, 2}}, CellW: 20, CellH: 20}
	pl := m.plan()
	if tw := textWidth(titleStyle, long); pl.w < tw {
		t.Errorf("heat map %g wide, title %g", pl.w, tw)
	}
	if b := decode(t, m).Bounds(); float64(b.Dx()) < textWidth(titleStyle, long)*PNGScale {
		t.Errorf("heat map PNG %d px wide, narrower than its title", b.Dx())
	}
	c := Chart{Width: 300, Height: 200, Title: long + " " + long}
	cp := c.plan()
	lines := strings.Split(cp.p.Title.Text, "\n")
	if len(lines) < 2 {
		t.Fatalf("long chart title not wrapped: %q", cp.p.Title.Text)
	}
	for _, l := range lines {
		if w := textWidth(titleStyle, l); w > cp.plotArea.X1-cp.plotArea.X0 {
			t.Errorf("title line %q is %g wide, the plot %g", l, w, cp.plotArea.X1-cp.plotArea.X0)
		}
	}
}

func TestSeriesStyles(t *testing.T) {
	c := Chart{Series: []Series{{Name: "solid", Y: []float64{1, 2}}, {Name: "dashed", Y: []float64{2, 1}, Dashed: true}, {Name: "pts", Y: []float64{1, 1.5}, Points: true}}}
	svg := c.SVG()
	elements(t, svg)
	if !strings.Contains(svg, "stroke-dasharray") {
		t.Error("dashed series not dashed")
	}
	for _, col := range Palette[:2] { // lines; markers are translucent
		if !strings.Contains(strings.ToLower(svg), col) {
			t.Errorf("palette colour %s missing", col)
		}
	}
}

func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   []float64
	}{
		{0, 1, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}},
		{0, 1000, []float64{0, 200, 400, 600, 800, 1000}},
		{-3, 3, []float64{-2, 0, 2}},
	} {
		got := niceTicks(tc.lo, tc.hi, 5)
		if len(got) != len(tc.want) {
			t.Errorf("niceTicks(%g, %g) = %v, want %v", tc.lo, tc.hi, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("niceTicks(%g, %g) = %v, want %v", tc.lo, tc.hi, got, tc.want)
				break
			}
		}
	}
}

func TestLogTicksStayFew(t *testing.T) {
	for _, tc := range []struct{ lo, hi float64 }{{0, 2}, {-30, 0}, {-3, 12}, {-1, -0.3}, {-0.6, -0.35}} {
		labelled := 0
		for _, tk := range logAxisTicks(tc.lo, tc.hi) {
			if tk.Value < math.Pow(10, tc.lo)*(1-1e-9) || tk.Value > math.Pow(10, tc.hi)*(1+1e-9) {
				t.Errorf("logAxisTicks(%g, %g): %g out of range", tc.lo, tc.hi, tk.Value)
			}
			if tk.Label != "" {
				labelled++
			}
		}
		if labelled < 2 || labelled > 8 {
			t.Errorf("logAxisTicks(%g, %g): %d labels, want 2 to 8", tc.lo, tc.hi, labelled)
		}
	}
	if got := logLabel(1e-5); got != "1e-05" {
		t.Errorf("logLabel(1e-5) = %q", got)
	}
	if got := logLabel(1000); got != "1000" {
		t.Errorf("logLabel(1000) = %q", got)
	}
}

// TestDataPoints: a chart counts the finite points of its data series, not its dashed reference
// lines; a chart of the baseline alone is empty.
func TestDataPoints(t *testing.T) {
	base := Series{Name: "baseline", X: []float64{0, 10}, Y: []float64{1, 1}, Dashed: true}
	for _, tc := range []struct {
		fig  Figure
		want int
	}{
		{Chart{Series: []Series{base}}, 0},
		{Chart{Series: []Series{base, {Name: "run", Y: []float64{1, math.NaN(), 0.5}}}}, 2},
		{Chart{Series: []Series{{Name: "one", X: []float64{50}, Y: []float64{0.3}}}}, 1},
		{Heatmap{Values: [][]float64{{1, math.Inf(1)}, {0, 2}}}, 3},
		{Heatmap{}, 0},
	} {
		if got := tc.fig.DataPoints(); got != tc.want {
			t.Errorf("%T %+v: DataPoints() = %d, want %d", tc.fig, tc.fig, got, tc.want)
		}
	}
}

// TestGrid: figures side by side, Cols to a row, each at its own size; the data counts add up.
func TestGrid(t *testing.T) {
	a := Chart{Width: 300, Height: 200, Series: []Series{{Name: "a", Y: []float64{1, 2, 3}}}}
	b := Chart{Width: 200, Height: 100, Series: []Series{{Name: "b", Y: []float64{3, 2}}}}
	g := Grid{Cols: 2, Figures: []Figure{a, b, b}}
	if n := g.DataPoints(); n != 7 {
		t.Errorf("DataPoints = %d, want 7", n)
	}
	p, err := g.PNG()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(p))
	if err != nil {
		t.Fatal(err)
	}
	// Columns 300 and 200 wide, rows 200 and 100 high, in figure pixels.
	if cfg.Width != 500*PNGScale || cfg.Height != 300*PNGScale {
		t.Errorf("PNG %d×%d, want %d×%d", cfg.Width, cfg.Height, 500*PNGScale, 300*PNGScale)
	}
	s := g.SVG()
	if !strings.HasPrefix(s, `<svg xmlns="http://www.w3.org/2000/svg"`) || !strings.Contains(s, `width="500" height="300"`) ||
		strings.Count(s, "<svg") != 4 || !strings.Contains(s, `<svg x="300" y="0"`) || !strings.Contains(s, `<svg x="0" y="200"`) {
		t.Errorf("SVG: %.300s", s)
	}
	if _, err := (Grid{}).PNG(); err == nil {
		t.Error("an empty grid: no error")
	}
}

// TestLogX: on a log x axis (a log–log chart with LogY) the points 1, 10, 100, 1000 lie evenly
// spaced across the data area, the ticks are labelled at powers of ten, and x ≤ 0 is left out.
func TestLogX(t *testing.T) {
	c := Chart{Width: 400, Height: 260, LogX: true, LogY: true, Series: []Series{{Name: "n²",
		X: []float64{0, 1, 10, 100, 1000}, Y: []float64{0, 1, 100, 1e4, 1e6}, Color: "#ff00ff"}}}
	pl := c.plan()
	var us []float64
	for _, x := range []float64{1, 10, 100, 1000} {
		u, v, ok := pl.norm(x, x*x)
		if !ok {
			t.Fatalf("norm(%g) not showable", x)
		}
		if math.Abs(u-v) > 0.05 {
			t.Errorf("x = %g: u %.3f, v %.3f: a slope-2 line on equal decades should run corner to corner", x, u, v)
		}
		us = append(us, u)
	}
	for i := 2; i < len(us); i++ {
		if d0, d1 := us[i-1]-us[i-2], us[i]-us[i-1]; math.Abs(d0-d1) > 1e-9 {
			t.Errorf("decades not evenly spaced: %v", us)
		}
	}
	if _, _, ok := pl.norm(0, 1); ok {
		t.Error("x = 0 showable on a log axis")
	}
	svg := c.SVG()
	for _, want := range []string{">1<", ">10<", ">100<", ">1000<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG misses the tick label %q", want)
		}
	}
	img := decode(t, c)
	d := px(pl.data)
	left := image.Rect(d.Min.X, d.Min.Y, (d.Min.X+d.Max.X)/2, d.Max.Y)
	if count(img, left, isMagenta) < 50 || count(img, d, isMagenta) < 120 {
		t.Error("line not drawn across the data area")
	}
}

// TestHollowMarkers: a Hollow marker is a ring with a white centre, and a filled dot drawn at the
// same point by a later series shows inside it.
func TestHollowMarkers(t *testing.T) {
	ringOnly := Chart{Width: 200, Height: 200, Equal: true, UnitCircle: true,
		Series: []Series{{Name: "ring", X: []float64{0.3}, Y: []float64{0.2}, Points: true, Hollow: true, Color: "#ff00ff"}}}
	both := ringOnly
	both.Series = append(slices.Clone(ringOnly.Series), Series{Name: "dot", X: []float64{0.3}, Y: []float64{0.2}, Points: true, Color: "#00aa00"})
	centre := func(c Chart) (image.Image, image.Point) {
		pl := c.plan()
		u, v, _ := pl.norm(0.3, 0.2)
		d := px(pl.data)
		return decode(t, c), image.Pt(d.Min.X+int(math.Round(u*float64(d.Dx()))), d.Max.Y-int(math.Round(v*float64(d.Dy()))))
	}
	img, at := centre(ringOnly)
	if !isWhite(img.At(at.X, at.Y)) {
		t.Errorf("ring centre %v is %v, want white", at, img.At(at.X, at.Y))
	}
	r := int(ringR * PNGScale)
	if n := count(img, image.Rect(at.X-r-2, at.Y-r-2, at.X+r+3, at.Y+r+3), isMagenta); n < 20 {
		t.Errorf("ring: %d magenta pixels around %v", n, at)
	}
	img, at = centre(both)
	green := func(c color.Color) bool { r, g, b, _ := c.RGBA(); return g>>8 > 0x80 && r>>8 < 0x90 && b>>8 < 0x90 }
	if count(img, image.Rect(at.X-2, at.Y-2, at.X+3, at.Y+3), green) == 0 {
		t.Error("the later dot does not show inside the ring")
	}
	if count(img, image.Rect(at.X-r-2, at.Y-r-2, at.X+r+3, at.Y+r+3), isMagenta) < 10 {
		t.Error("the dot hides the ring")
	}
}

// TestHeatmapDiverging: signed data on the diverging scale: 0 white, negative values blue,
// positive red, the range symmetric about 0 (the colour bar's ends are −3 and 3), with 0 marked.
func TestHeatmapDiverging(t *testing.T) {
	m := Heatmap{Values: [][]float64{{-3, 0, 1.5}}, Diverging: true, CellW: 30, CellH: 30}
	pl := m.plan()
	if pl.lo != -3 || pl.hi != 3 {
		t.Errorf("range %g..%g, want -3..3", pl.lo, pl.hi)
	}
	img := decode(t, m)
	cell := func(c int) image.Rectangle {
		x := pl.grid.X0 + float64(c)*pl.cw
		return px(rect{x + 3, pl.grid.Y0 + 3, x + pl.cw - 3, pl.grid.Y1 - 3})
	}
	is := func(want color.NRGBA) func(color.Color) bool {
		return func(c color.Color) bool { return near(c, want, 3) }
	}
	area := cell(0).Dx() * cell(0).Dy()
	for i, want := range []color.NRGBA{divergingRamp(0), divergingRamp(0.5), divergingRamp(0.75)} {
		if n := count(img, cell(i), is(want)); n < area*9/10 {
			t.Errorf("cell %d: %d of %d pixels %v", i, n, area, want)
		}
	}
	if b, w, r := divergingRamp(0), divergingRamp(0.5), divergingRamp(1); !(b.B > b.R) || !(r.R > r.B) || w.R < 240 || w.G < 240 || w.B < 240 {
		t.Errorf("ends %v %v %v: want blue, white, red", b, w, r)
	}
	svg := m.SVG()
	for _, want := range []string{">-3<", ">3<", ">0<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("colour bar misses %q", want)
		}
	}
	// A set range is kept as it is.
	lo, hi := -1.0, 5.0
	if pl := (Heatmap{Values: [][]float64{{0, 1}}, Diverging: true, Min: &lo, Max: &hi}).plan(); pl.lo != -1 || pl.hi != 5 {
		t.Errorf("set range became %g..%g", pl.lo, pl.hi)
	}
}

// TestLogEndTicks: a log axis whose data reach more than half a decade below its lowest power
// of ten gets a labelled round value there (the losses of the models that end lowest stay
// readable); one that ends near a power of ten gets none.
func TestLogEndTicks(t *testing.T) {
	labels := func(lo, hi float64) []float64 {
		var out []float64
		for _, tk := range logAxisTicks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Value)
			}
		}
		slices.Sort(out)
		return out
	}
	got := labels(math.Log10(0.015), math.Log10(400))
	if len(got) == 0 || got[0] >= 0.1 || got[0] < 0.015 {
		t.Errorf("0.015..400: labels %v, want one below 0.1", got)
	}
	if got := labels(-1.1, 2); got[0] != 0.1 {
		t.Errorf("0.079..100: labels %v, want 0.1 the lowest", got)
	}
}
