package analysis

import (
	"fmt"
	"math"
	"slices"

	"github.com/urnn-notebooks/longmemory/pkg/plots"
)

// Named is one labelled curve of a figure.
type Named struct {
	Name   string
	Values []float64
}

// GradNormsChart draws ‖∂C/∂h_t‖ against t = 0..L on a log axis (Arjovsky et al. 2016's
// figure of the gradient norms): measured curves solid (e.g. GradNorms.Total at
// initialisation and after training), bounds dashed (Curve with Bounds.Tau or Bounds.SV).
// Zeros and values beyond the float range are left out by the log axis (the curve breaks
// there).
func GradNormsChart(title string, measured, bounds []Named) plots.Chart {
	c := plots.Chart{Title: title, XLabel: "t", YLabel: "‖∂C/∂h_t‖", LogY: true}
	for _, m := range measured {
		c.Series = append(c.Series, plots.Series{Name: m.Name, Y: finite(m.Values)})
	}
	for _, b := range bounds {
		c.Series = append(c.Series, plots.Series{Name: b.Name, Y: finite(b.Values), Dashed: true})
	}
	return c
}

// finite replaces ±Inf by NaN, which the charts skip.
func finite(v []float64) []float64 {
	out := slices.Clone(v)
	for i, x := range out {
		if math.IsInf(x, 0) {
			out[i] = math.NaN()
		}
	}
	return out
}

// SpectraChart draws eigenvalues in the complex plane with the unit circle, one colour per
// spectrum (e.g. a random orthogonal matrix, I and V of the copy construction, or a recurrent
// matrix at initialisation and after training). The last spectrum is drawn as dots over the
// others, which are drawn as open rings: where its eigenvalues coincide with theirs, a dot shows
// inside a ring rather than one set hiding the other. Put the spectrum the figure is about last.
func SpectraChart(title string, spectra ...Spectrum) plots.Chart {
	c := plots.Chart{Title: title, XLabel: "Re λ", YLabel: "Im λ", Equal: true, UnitCircle: true, Height: 480}
	for k, s := range spectra {
		x, y := make([]float64, len(s.Values)), make([]float64, len(s.Values))
		for i, v := range s.Values {
			x[i], y[i] = real(v), imag(v)
		}
		c.Series = append(c.Series, plots.Series{Name: s.Name, X: x, Y: y, Points: true, Hollow: k < len(spectra)-1})
	}
	return c
}

// AnglesChart draws the sorted eigenvalue angles arg λ / 2π ∈ (−½, ½] against their rank
// divided by the number of eigenvalues, one line per spectrum: eigenvalues spread
// uniformly around the circle (a "clock", Henaff et al. §3.1.1) give the diagonal, the
// identity gives a flat line at 0.
func AnglesChart(title string, spectra ...Spectrum) plots.Chart {
	c := plots.Chart{Title: title, XLabel: "rank / n", YLabel: "arg λ / 2π"}
	for _, s := range spectra {
		a := Angles(s.Values)
		slices.Sort(a)
		x := make([]float64, len(a))
		for i := range a {
			a[i] /= 2 * math.Pi
			x[i] = (float64(i) + 0.5) / float64(len(a))
		}
		c.Series = append(c.Series, plots.Series{Name: s.Name, X: x, Y: a})
	}
	return c
}

// SingularValuesChart draws singular values (decreasing, as SingularValues returns them)
// against their index, one line per matrix; an orthogonal matrix is flat at 1.
func SingularValuesChart(title string, sets ...Named) plots.Chart {
	c := plots.Chart{Title: title, XLabel: "index", YLabel: "singular value"}
	for _, s := range sets {
		c.Series = append(c.Series, plots.Series{Name: s.Name, Y: s.Values})
	}
	return c
}

// StateNormsChart draws hidden-state norms ‖h_t‖ against t (e.g. MeanStateNorms of several
// models), on a log axis when logY and otherwise on the scale the chart chooses (log when
// the norms span more than two decades).
func StateNormsChart(title string, logY bool, curves ...Named) plots.Chart {
	c := plots.Chart{Title: title, XLabel: "t", YLabel: "‖h_t‖", LogY: logY}
	for _, s := range curves {
		c.Series = append(c.Series, plots.Series{Name: s.Name, Y: s.Values})
	}
	return c
}

// ActivationsChart draws the pooled activations p_j(t) of the units pooled units whose
// activations vary most over time (Henaff et al. Figure 5), with dashed vertical lines
// at the marked steps.
func ActivationsChart(title string, a *Activations, units int) plots.Chart {
	if len(a.Pooled) == 0 {
		return plots.Chart{Title: title}
	}
	n := len(a.Pooled[0])
	type unit struct {
		j      int
		spread float64
	}
	var us []unit
	lo, hi := math.Inf(1), math.Inf(-1)
	for j := range n {
		mn, mx := math.Inf(1), math.Inf(-1)
		for _, p := range a.Pooled {
			mn, mx = min(mn, p[j]), max(mx, p[j])
		}
		us = append(us, unit{j, mx - mn})
	}
	slices.SortStableFunc(us, func(x, y unit) int { return cmpFloat(y.spread, x.spread) })
	c := plots.Chart{Title: title, XLabel: "t", YLabel: "pooled activation"}
	for _, u := range us[:min(units, len(us))] {
		y := make([]float64, len(a.Pooled))
		for t, p := range a.Pooled {
			y[t] = p[u.j]
			lo, hi = min(lo, y[t]), max(hi, y[t])
		}
		c.Series = append(c.Series, plots.Series{Name: fmt.Sprintf("p%d", u.j), Y: y})
	}
	for _, m := range a.Markers {
		c.Series = append(c.Series, plots.Series{X: []float64{float64(m), float64(m)}, Y: []float64{lo, hi}, Dashed: true, Color: "#333333"})
	}
	return c
}

// ActivationsHeatmap draws the activations of a as a heat map, one column per step and
// one row per unit (Henaff et al. Figure 6): the hidden state h_t, signed, on a diverging
// scale (blue below 0, white at 0, red above), or with pooled its l2-pooled version p_t, a
// modulus, on the white-to-blue scale. Columns at the markers are labelled "m".
func ActivationsHeatmap(title string, a *Activations, pooled bool) plots.Heatmap {
	rows, ylabel := a.States, "hidden unit"
	if pooled {
		rows, ylabel = a.Pooled, "pooled unit"
	}
	if len(rows) == 0 {
		return plots.Heatmap{Title: title}
	}
	n, L := len(rows[0]), len(rows)
	vals := make([][]float64, n)
	for j := range n {
		vals[j] = make([]float64, L)
		for t := range L {
			vals[j][t] = rows[t][j]
		}
	}
	cols := make([]string, L)
	for _, m := range a.Markers {
		cols[m] = "m"
	}
	return plots.Heatmap{Title: title, XLabel: "t", YLabel: ylabel, Values: vals, ColLabels: cols, Diverging: !pooled,
		CellW: max(1, min(12, 720/L)), CellH: max(2, min(6, 400/n))}
}
