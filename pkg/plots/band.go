package plots

import (
	"fmt"
	"math"
	"slices"
)

// Band summarises replicated runs (the seeds of one model) as a Series: at each x its Y is
// the median over the replicas and its band runs from the q to the 1−q quantile, so q = 0
// shades min–max and q = 0.25 the interquartile range. Each replica holds one curve sampled
// at xs (replicas[r][i] at xs[i]), NaN where it has no value; a replica shorter than xs
// counts as NaN beyond its end, and xs nil means 0, 1, 2, … up to the longest replica.
// Values that are NaN or ±Inf are left out at their point, so the statistics there are
// those of the replicas that have a value; where none has, Y, Lo and Hi are NaN (the line
// and the band break). The series has no colour: the chart picks it from Palette.
//
// Quantiles interpolate linearly between order statistics (Hyndman and Fan's definition 7,
// R's default and NumPy's "linear"): of n sorted values v₀ ≤ … ≤ vₙ₋₁, the p quantile is
// v_⌊h⌋ + (h − ⌊h⌋)(v_⌊h⌋₊₁ − v_⌊h⌋) with h = p(n − 1). The median is the middle value, or
// the mean of the two middle ones. Band panics unless 0 ≤ q ≤ 0.5.
func Band(name string, xs []float64, replicas [][]float64, q float64) Series {
	if !(q >= 0 && q <= 0.5) {
		panic(fmt.Sprintf("plots.Band: q = %g, want 0 ≤ q ≤ 0.5", q))
	}
	n := len(xs)
	if xs == nil {
		for _, r := range replicas {
			n = max(n, len(r))
		}
	}
	s := Series{Name: name, X: xs, Y: make([]float64, n), Lo: make([]float64, n), Hi: make([]float64, n)}
	vals := make([]float64, 0, len(replicas))
	for i := range n {
		vals = vals[:0]
		for _, r := range replicas {
			if i < len(r) && finite(r[i]) {
				vals = append(vals, r[i])
			}
		}
		if len(vals) == 0 {
			s.Y[i], s.Lo[i], s.Hi[i] = math.NaN(), math.NaN(), math.NaN()
			continue
		}
		slices.Sort(vals)
		s.Y[i], s.Lo[i], s.Hi[i] = quantile(vals, 0.5), quantile(vals, q), quantile(vals, 1-q)
	}
	return s
}

// quantile returns the p quantile of the sorted, non-empty values v by linear interpolation
// between order statistics (Hyndman–Fan definition 7).
func quantile(v []float64, p float64) float64 {
	h := p * float64(len(v)-1)
	k := int(math.Floor(h))
	if k >= len(v)-1 {
		return v[len(v)-1]
	}
	if k < 0 {
		return v[0]
	}
	f := h - float64(k)
	if f == 0 {
		return v[k]
	}
	return v[k] + f*(v[k+1]-v[k])
}
