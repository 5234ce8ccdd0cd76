package plots

import (
	"fmt"
	"math"
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
	if hi-lo <= 4 && decades { // labels at the powers of ten only: mark 2…9 × 10^k
		for e := math.Floor(lo); e <= math.Ceil(hi); e++ {
			for m := 2.0; m <= 9; m++ {
				if t := e + math.Log10(m); t >= lo && t <= hi {
					out = append(out, plot.Tick{Value: m * math.Pow10(int(e))})
				}
			}
		}
	}
	return out
}
