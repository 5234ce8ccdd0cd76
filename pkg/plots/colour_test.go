package plots

import (
	"math"
	"testing"
)

// TestDeltaE: CIELAB coordinates of sRGB reference colours (white (100, 0, 0); red
// (53.24, 80.09, 67.20), the standard conversion's values) and the distances they imply.
func TestDeltaE(t *testing.T) {
	for _, c := range []struct {
		hex     string
		l, a, b float64
	}{{"#ffffff", 100, 0, 0}, {"#000000", 0, 0, 0}, {"#ff0000", 53.24, 80.09, 67.20}, {"#0000ff", 32.30, 79.19, -107.86}} {
		l, a, b := lab(c.hex)
		if math.Abs(l-c.l) > 0.05 || math.Abs(a-c.a) > 0.05 || math.Abs(b-c.b) > 0.05 {
			t.Errorf("lab(%s) = (%.2f, %.2f, %.2f), want (%.2f, %.2f, %.2f)", c.hex, l, a, b, c.l, c.a, c.b)
		}
	}
	if d := DeltaE("#000000", "#ffffff"); math.Abs(d-100) > 0.05 {
		t.Errorf("ΔE(black, white) = %.2f, want 100", d)
	}
	if d := DeltaE("#1f77b4", "#1f77b4"); d != 0 {
		t.Errorf("ΔE of a colour with itself = %g, want 0", d)
	}
	if d, e := DeltaE("#1f77b4", "#3182bd"), DeltaE("#1f77b4", "#ff7f0e"); !(d < 10 && e > 50) {
		t.Errorf("ΔE(two blues) = %.1f, ΔE(blue, orange) = %.1f: want under 10 and over 50", d, e)
	}
}
