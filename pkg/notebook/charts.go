package notebook

import (
	"math"

	"github.com/urnn-notebooks/longmemory/pkg/plots"
	"github.com/urnn-notebooks/longmemory/pkg/runs"
)

// TimeChart draws the held-out loss of each run against the wall time of its training (the
// log's seconds, held-out evaluations included), on a log axis, with the memoryless baseline
// dashed: the view in which methods whose steps cost very different times (a Hessian-free
// step against a first-order one) compare at equal seconds, as the claims judged at a budget
// of seconds do (claims.Claim.Seconds). Each model keeps its colour (runs.ColorByModel).
func TimeChart(title string, baseline float64, rs ...*Run) plots.Chart {
	c := plots.Chart{Title: title, XLabel: "seconds of training", YLabel: "held-out loss", Width: 720, Height: 380, LogY: true}
	for _, r := range rs {
		s := plots.Series{Name: r.Name}
		for _, rec := range r.Trainer.Log {
			if !math.IsNaN(rec.EvalLoss) {
				s.X, s.Y = append(s.X, rec.Seconds), append(s.Y, rec.EvalLoss)
			}
		}
		c.Series = append(c.Series, s)
	}
	runs.ColorByModel(&c)
	runs.AddBaseline(&c, baseline)
	return c
}

// GradNormPoints is the most points GradNormChart draws of one run.
const GradNormPoints = 1000

// GradNormChart draws the global gradient norm of each run's training steps before clipping
// (train.Record.GradNorm) against the iteration, on a log axis: a norm that grows by orders of
// magnitude within a few steps is an exploding gradient. Steps whose norm is not finite (the
// step a run diverged on) are left out. A run of more than GradNormPoints steps is drawn as the
// largest norm of each of at most GradNormPoints windows of consecutive steps, at the window's
// last step, so that a spike stays in the figure (and the figure stays small): the window
// ending at step ⌊n^{k/GradNormPoints}⌉ for k = 1, 2, …, n the run's steps, which keeps the
// first steps one by one and gives the windows equal widths on a log axis (Chart.LogX). Each
// model keeps its colour (runs.ColorByModel).
func GradNormChart(title string, rs ...*Run) plots.Chart {
	c := plots.Chart{Title: title, XLabel: "iteration", YLabel: "‖∂C/∂θ‖ before clipping", Width: 720, Height: 380, LogY: true}
	for _, r := range rs {
		s := plots.Series{Name: r.Name}
		log := r.Trainer.Log
		start := 0
		for _, end := range windowEnds(len(log), GradNormPoints) {
			top := math.Inf(-1)
			for _, rec := range log[start:end] {
				if g := rec.GradNorm; !math.IsNaN(g) && !math.IsInf(g, 0) && g > top {
					top = g
				}
			}
			if !math.IsInf(top, -1) {
				s.X, s.Y = append(s.X, float64(log[end-1].Step)), append(s.Y, top)
			}
			start = end
		}
		c.Series = append(c.Series, s)
	}
	runs.ColorByModel(&c)
	return c
}

// windowEnds returns the ends (exclusive) of at most points windows that cover n records in
// order: 1, 2, …, n when n ≤ points, else the distinct values of ⌊n^{k/points}⌉, k = 1 … points
// (the last is n).
func windowEnds(n, points int) []int {
	var ends []int
	for k := 1; k <= min(n, points); k++ {
		end := k
		if n > points {
			end = int(math.Round(math.Pow(float64(n), float64(k)/float64(points))))
		}
		if len(ends) == 0 || end > ends[len(ends)-1] {
			ends = append(ends, end)
		}
	}
	return ends
}

// LogX puts c's x axis (the iteration) on a log scale and starts its dashed reference lines
// (the baseline, the timing plateau), which runs.AddBaseline draws from 0, at the smallest x
// of its data instead: a log axis has no 0, and a line from 0 would be left out. It suits
// ShowRecordedWith, for runs whose lengths differ by orders of magnitude (200 Hessian-free
// steps beside 60 000 first-order ones).
func LogX(c *plots.Chart) {
	c.LogX = true
	first := math.Inf(1)
	for _, s := range c.Series {
		for _, x := range s.X {
			if x > 0 && !s.Dashed {
				first = math.Min(first, x)
			}
		}
	}
	if math.IsInf(first, 1) {
		return
	}
	for i, s := range c.Series {
		if s.Dashed && len(s.X) > 0 && s.X[0] <= 0 {
			c.Series[i].X = append([]float64{first}, s.X[1:]...)
		}
	}
}
