package plots

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

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
// the powers of ten when the range spans many decades, and at most 8 of those.
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
		// Every k-th decade on wide ranges.
		k := (len(decades) + 7) / 8
		var out []float64
		for _, d := range decades {
			if int(math.Round(d))%k == 0 {
				out = append(out, d)
			}
		}
		return out
	}
	return all
}

// tickLabel formats a linear-axis tick.
func tickLabel(v float64) string {
	if v == 0 {
		return "0"
	}
	if a := math.Abs(v); a >= 1e5 || a < 1e-3 {
		return fmt.Sprintf("%.1e", v)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.4f", v), "0"), ".")
}

// logLabel formats a log-axis tick: 0.001, 0.01, …, 10000, 1e-05, 1e+06, …
func logLabel(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return strconv.FormatFloat(r, 'g', -1, 64)
}

// linearTicks returns labelled ticks for [lo, hi].
func linearTicks(lo, hi float64, n int) []plot.Tick {
	var out []plot.Tick
	for _, t := range niceTicks(lo, hi, n) {
		out = append(out, plot.Tick{Value: t, Label: tickLabel(t)})
	}
	return out
}

// logAxisTicks returns labelled ticks for a log axis over [10^lo, 10^hi] (lo, hi in
// decades), with unlabelled minor ticks at 2…9 × 10^k when the range spans at most four
// decades. Too narrow a range for two round values gets linear ticks.
func logAxisTicks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	decades := true
	for _, t := range logTicks(lo, hi) {
		v := math.Pow(10, t)
		if math.Abs(t-math.Round(t)) < 1e-9 {
			v = math.Pow10(int(math.Round(t)))
		} else {
			decades = false
		}
		out = append(out, plot.Tick{Value: v, Label: logLabel(v)})
	}
	if len(out) < 2 {
		out = out[:0]
		for _, v := range niceTicks(math.Pow(10, lo), math.Pow(10, hi), 4) {
			if v > 0 {
				out = append(out, plot.Tick{Value: v, Label: logLabel(v)})
			}
		}
		return out
	}
	out = append(out, endTicks(lo, hi, out)...)
	if hi-lo <= 4 && decades { // labels at the powers of ten only: mark 2…9 × 10^k
		for e := math.Floor(lo); e <= math.Ceil(hi); e++ {
			for m := 2.0; m <= 9; m++ {
				if t := e + math.Log10(m); t >= lo && t <= hi && !slices.ContainsFunc(out, func(k plot.Tick) bool { return k.Value == m*math.Pow10(int(e)) }) {
					out = append(out, plot.Tick{Value: m * math.Pow10(int(e))})
				}
			}
		}
	}
	return out
}

// endTicks returns a labelled tick for each end of a log axis over [10^lo, 10^hi] that lies
// more than half a decade, and more than half the labels' spacing, beyond the labelled ticks:
// the round value (1, 2 or 5 × 10^k) nearest the middle of that gap, at least 0.3 decades from
// the label beside it, so that the values at the bottom (or top) of the axis can be read.
func endTicks(lo, hi float64, labelled []plot.Tick) []plot.Tick {
	if len(labelled) == 0 {
		return nil
	}
	var at []float64
	for _, t := range labelled {
		at = append(at, math.Log10(t.Value))
	}
	slices.Sort(at)
	first, last, spacing := at[0], at[len(at)-1], 1.0
	for i := 1; i < len(at); i++ {
		if i == 1 || at[i]-at[i-1] < spacing {
			spacing = at[i] - at[i-1]
		}
	}
	var out []plot.Tick
	for _, gap := range [2][2]float64{{lo, first}, {last, hi}} {
		if gap[1]-gap[0] <= max(0.5, spacing/2)+1e-6 {
			continue
		}
		best, dist := math.NaN(), math.Inf(1)
		mid := (gap[0] + gap[1]) / 2
		for e := math.Floor(gap[0]); e <= math.Ceil(gap[1]); e++ {
			for _, m := range []float64{1, 2, 5} {
				t := e + math.Log10(m)
				if t < gap[0]-1e-9 || t > gap[1]+1e-9 || math.Abs(t-first) < 0.3 || math.Abs(t-last) < 0.3 {
					continue
				}
				if d := math.Abs(t - mid); d < dist {
					best, dist = m*math.Pow10(int(e)), d
				}
			}
		}
		if !math.IsNaN(best) {
			out = append(out, plot.Tick{Value: best, Label: logLabel(best)})
		}
	}
	return out
}
