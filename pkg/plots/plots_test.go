package plots

import (
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

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
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok {
			counts[se.Name.Local]++
		}
	}
}

func TestChartMapsDataToPixels(t *testing.T) {
	lo, hi := 0.0, 10.0
	c := Chart{Width: 200 + marginL + marginR, Height: 100 + marginT + marginB, XMin: &lo, XMax: &hi, YMin: &lo, YMax: &hi,
		Series: []Series{{Name: "a<b", X: []float64{0, 5, 10}, Y: []float64{0, 5, 10}}}}
	svg := c.SVG()
	elements(t, svg)
	// x = 5 → marginL + 100, y = 5 → marginT + 50.
	if want := "64.00,132.00 164.00,82.00 264.00,32.00"; !strings.Contains(svg, want) {
		t.Errorf("polyline points: want %q in\n%s", want, svg)
	}
	if !strings.Contains(svg, "a&lt;b") {
		t.Error("legend name not escaped")
	}
}

func TestChartLogDropsNonPositive(t *testing.T) {
	c := Chart{LogY: true, Series: []Series{{Y: []float64{1, 0, -1, 100}}}}
	svg := c.SVG()
	elements(t, svg)
	poly := svg[strings.Index(svg, "<polyline"):]
	poly = poly[:strings.Index(poly, "/>")]
	if n := strings.Count(poly, ","); n != 2 {
		t.Errorf("log chart kept %d points, want 2 (0 and −1 dropped): %s", n, poly)
	}
	for _, want := range []string{">1<", ">10<", ">100<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("log axis misses tick %s", want)
		}
	}
}

func TestHeatmapCells(t *testing.T) {
	m := Heatmap{Values: [][]float64{{0, 1, 2}, {3, 0, 1}}, Categories: []string{"blank", "a", "b", "c"}, Annotate: true}
	svg := m.SVG()
	counts := elements(t, svg)
	// 1 background + 6 cells + 1 frame + 4 legend swatches.
	if got := counts["rect"]; got != 12 {
		t.Errorf("%d rects, want 12", got)
	}
	if got := strings.Count(svg, `fill="`+Palette[2]+`"`); got != 2 { // category 3 in the data once + legend once
		t.Errorf("category 3 colour used %d times, want 2", got)
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
	for _, tc := range []struct{ lo, hi float64 }{{0, 2}, {-30, 0}, {-3, 12}, {-1, -0.3}} {
		got := logTicks(tc.lo, tc.hi)
		if len(got) == 0 || len(got) > 9 {
			t.Errorf("logTicks(%g, %g) = %v: want between 1 and 9 ticks", tc.lo, tc.hi, got)
		}
		for _, v := range got {
			if v < tc.lo-1e-9 || v > tc.hi+1e-9 {
				t.Errorf("logTicks(%g, %g) = %v: %g out of range", tc.lo, tc.hi, got, v)
			}
		}
	}
}
