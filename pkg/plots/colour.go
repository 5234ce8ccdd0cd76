package plots

import "math"

// DeltaE is the CIE 1976 colour difference ΔE*ab between two "#rrggbb" colours: the Euclidean
// distance of their CIELAB coordinates (sRGB, D65 white point). About 2.3 is a just noticeable
// difference; the ten colours of d3's category10 are at least 27 apart.
func DeltaE(a, b string) float64 {
	la, aa, ba := lab(a)
	lb, ab, bb := lab(b)
	return math.Sqrt((la-lb)*(la-lb) + (aa-ab)*(aa-ab) + (ba-bb)*(ba-bb))
}

// lab converts a "#rrggbb" colour to CIELAB (L*, a*, b*): sRGB decoded to linear light, to
// CIE XYZ relative to the D65 white, then L* = 116 f(Y) − 16, a* = 500 (f(X) − f(Y)),
// b* = 200 (f(Y) − f(Z)).
func lab(s string) (l, a, b float64) {
	c := parseColor(s)
	lin := func(v uint8) float64 {
		x := float64(v) / 255
		if x <= 0.04045 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	r, g, bl := lin(c.R), lin(c.G), lin(c.B)
	x := (0.4124*r + 0.3576*g + 0.1805*bl) / 0.95047
	y := 0.2126*r + 0.7152*g + 0.0722*bl
	z := (0.0193*r + 0.1192*g + 0.9505*bl) / 1.08883
	f := func(t float64) float64 {
		if t > 216.0/24389 {
			return math.Cbrt(t)
		}
		return (24389.0/27*t + 16) / 116
	}
	return 116*f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))
}
