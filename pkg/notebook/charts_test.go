package notebook

import (
	"math"
	"slices"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// TestTimeChart: a run's held-out evaluations are drawn at their wall time (fakeRuns: 0.01 s a
// step, an evaluation every 10 steps), the baseline dashed from 0 to the last second.
func TestTimeChart(t *testing.T) {
	rs := fakeRuns("tanh 8", 1, func(seed, step int) float64 { return 1 / float64(step) })
	c := TimeChart("t", 1.0/6, rs...)
	if len(c.Series) != 2 {
		t.Fatalf("TimeChart has %d series, want the run and the baseline", len(c.Series))
	}
	s := c.Series[0]
	if s.Name != "tanh 8" || len(s.X) != 50 {
		t.Fatalf("series %q with %d points, want \"tanh 8\" with 50", s.Name, len(s.X))
	}
	for i, x := range s.X {
		step := 10 * (i + 1)
		if math.Abs(x-0.01*float64(step)) > 1e-12 || math.Abs(s.Y[i]-1/float64(step)) > 1e-12 {
			t.Fatalf("point %d = (%g, %g), want (%g, %g)", i, x, s.Y[i], 0.01*float64(step), 1/float64(step))
		}
	}
	if b := c.Series[1]; !b.Dashed || b.X[1] != 5 || b.Y[0] != 1.0/6 {
		t.Errorf("baseline %+v, want dashed at 1/6 up to 5 s", b)
	}
	if !c.LogY || c.DataPoints() != 50 {
		t.Errorf("LogY %v, %d data points; want a log axis and 50", c.LogY, c.DataPoints())
	}
}

// TestGradNormChart: every finite norm of a short run is drawn, the step it diverged on left
// out; a long run is drawn as the largest norm of each window, its first steps one by one, so
// that a one-step spike stays.
func TestGradNormChart(t *testing.T) {
	short := &Run{Name: "tanh 16", Trainer: &train.Trainer{Log: []train.Record{
		{Step: 1, GradNorm: 1}, {Step: 2, GradNorm: 10}, {Step: 3, GradNorm: 1e6}, {Step: 4, GradNorm: math.NaN()},
	}}}
	var log []train.Record
	for s := 1; s <= 5*GradNormPoints; s++ {
		g := 1.0
		if s == 2501 {
			g = 1e9
		}
		log = append(log, train.Record{Step: s, GradNorm: g})
	}
	long := &Run{Name: "tanh 16 ρ 1.1", Trainer: &train.Trainer{Log: log}}
	c := GradNormChart("g", short, long)
	if len(c.Series) != 2 {
		t.Fatalf("%d series, want 2", len(c.Series))
	}
	if got := c.Series[0]; !slices.Equal(got.X, []float64{1, 2, 3}) || !slices.Equal(got.Y, []float64{1, 10, 1e6}) {
		t.Errorf("short run drawn at %v: %v, want steps 1-3: 1, 10, 1e6", got.X, got.Y)
	}
	got := c.Series[1]
	if n := len(got.X); n > GradNormPoints || n < GradNormPoints/2 {
		t.Fatalf("long run drawn with %d points, want at most %d and not far fewer", n, GradNormPoints)
	}
	if !slices.Equal(got.X[:10], []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}) || got.X[len(got.X)-1] != float64(len(log)) {
		t.Errorf("drawn at steps %v … %g, want 1, 2, … 10 first and %d last", got.X[:10], got.X[len(got.X)-1], len(log))
	}
	i := slices.Index(got.Y, 1e9)
	if i < 1 || got.X[i-1] >= 2501 || got.X[i] < 2501 {
		t.Errorf("the spike at step 2501 is not drawn at the end of the window that holds it (max %g)", slices.Max(got.Y))
	}
	if c.Series[0].Color == "" || c.Series[0].Color == c.Series[1].Color {
		t.Errorf("colours %q and %q, want two different ones", c.Series[0].Color, c.Series[1].Color)
	}
}

// TestLogX: the baseline, drawn from step 0, starts at the first step of the data instead, and
// the data are left as they were.
func TestLogX(t *testing.T) {
	rs := fakeRuns("tanh 8", 1, func(seed, step int) float64 { return 0.1 })
	c := LossChart("t", 1.0/6, false, rs...)
	before := slices.Clone(c.Series[0].X)
	LogX(&c)
	if !c.LogX {
		t.Error("LogX did not set the log axis")
	}
	if !slices.Equal(c.Series[0].X, before) {
		t.Errorf("the data moved: %v, want %v", c.Series[0].X[:3], before[:3])
	}
	b := c.Series[len(c.Series)-1]
	if !b.Dashed || !slices.Equal(b.X, []float64{10, 500}) {
		t.Errorf("baseline at x = %v, want [10 500] (the first evaluation to the last)", b.X)
	}
}
