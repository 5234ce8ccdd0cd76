package celltest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// mutant is a tanh RNN (rnn.Simple) with one deliberate defect, to check that each check
// of the suite can fail.
type mutant struct {
	*rnn.Simple
	numParamsOff  int     // NumParams reports this many more
	sizesOff      int     // Sizes reports this many more outputs
	initSeed      *uint64 // Init ignores its rng and draws from a PCG with this seed
	seedStep      uint64  // added to *initSeed after each Init (0: every Init draws the same)
	extraVariable bool    // Init creates a trainable variable the outputs do not use
	varThenError  bool    // Init creates a variable, then fails
	gradScale     float64 // ≠ 0: the gradient through Next is multiplied by it
	extraNodes    int     // Next adds this many nodes
	growingNodes  bool    // Next adds one more node at every step
	timeDependent bool    // Next adds 0.01·(steps so far in this graph): the result depends on where a chunk starts
	readoutOffset float64 // Readout adds it: the graph disagrees with the equations
}

func (m *mutant) NumParams() int { return m.Simple.NumParams() + m.numParamsOff }

func (m *mutant) Sizes() rnn.Sizes {
	s := m.Simple.Sizes()
	s.Out += m.sizesOff
	return s
}

func (m *mutant) Init(scope *model.Scope, rng *rand.Rand) error {
	if m.initSeed != nil {
		rng = rand.New(rand.NewPCG(*m.initSeed, 0))
		*m.initSeed += m.seedStep
	}
	if m.varThenError {
		if err := rnn.NewVariable(scope, "x", m.DType(), []float64{1}); err != nil {
			return err
		}
		return fmt.Errorf("mutant: N = %d is bad", m.N)
	}
	if err := m.Simple.Init(scope, rng); err != nil {
		return err
	}
	if m.extraVariable {
		return rnn.NewVariable(scope, "unused", m.DType(), []float64{1})
	}
	return nil
}

func (m *mutant) Build(scope *model.Scope, g *Graph) rnn.Step {
	return &mutantStep{Step: m.Simple.Build(scope, g), m: m}
}

type mutantStep struct {
	rnn.Step
	m     *mutant
	steps int
}

func (s *mutantStep) Next(h, px *Node) *Node {
	h = s.Step.Next(h, px)
	if s.m.gradScale != 0 {
		h = IdentityWithCustomGradient(h, func(_, v *Node) *Node { return MulScalar(v, s.m.gradScale) })
	}
	extra := s.m.extraNodes
	if s.m.growingNodes {
		extra += s.steps
	}
	for range extra {
		h = Neg(h)
	}
	if extra%2 == 1 {
		h = Neg(h) // keep the value
	}
	if s.m.timeDependent {
		h = AddScalar(h, 0.01*float64(s.steps))
	}
	s.steps++
	return h
}

func (s *mutantStep) Readout(states *Node) *Node {
	y := s.Step.Readout(states)
	if s.m.readoutOffset != 0 {
		y = AddScalar(y, s.m.readoutOffset)
	}
	return y
}

// simpleStep is the tanh RNN's step in plain Go: h_t = tanh(W h_{t−1} + V x_t + b),
// y_t = U h_t + b_o.
func simpleStep(cell rnn.Cell, p map[string][]float64, h, x []float64) (next, y []float64) {
	c := cell.(*mutant).Simple
	next = make([]float64, c.N)
	for j := range c.N {
		z := p["b"][j]
		for i := range c.N {
			z += h[i] * p["W"][i*c.N+j]
		}
		for i := range c.In {
			z += x[i] * p["V"][i*c.N+j]
		}
		next[j] = math.Tanh(z)
	}
	y = slices.Clone(p["bo"])
	for k := range c.Out {
		for j := range c.N {
			y[k] += next[j] * p["U"][j*c.Out+k]
		}
	}
	return next, y
}

// config returns the suite's configuration for a tanh RNN (In 3, N 4, Out 2) with the
// defects of m.
func config(m mutant) Config {
	return Config{
		New: func() rnn.Cell {
			c := m
			c.Simple = &rnn.Simple{In: 3, N: 4, Out: 2, Type: dtypes.Float64}
			return &c
		},
		Sizes:       rnn.Sizes{In: 3, State: 4, Out: 2},
		ParamCounts: []ParamCount{{Name: "copy", Cell: rnn.NewTanh(10, 80, 9), Want: 8089}},
		Budget:      GraphCost{Forward: 9, Training: 30},
		BadConfigs:  []BadConfig{{Name: "zero N", Cell: rnn.NewTanh(3, 0, 2), Want: "N = 0"}},
		Mismatched:  []BadConfig{{Name: "other N", Cell: rnn.NewTanh(3, 5, 2), Want: "/V has shape"}},
		Initial:     func(_ rnn.Cell, p map[string][]float64) []float64 { return p["h0"] },
		Step:        simpleStep,
	}
}

// run returns the error of the check called name on cfg.
func run(t *testing.T, cfg Config, name string) error {
	t.Helper()
	for _, c := range checks {
		if c.name == name {
			return c.run(cfg, t.Logf)
		}
	}
	t.Fatalf("no check %q", name)
	return nil
}

// TestSuitePasses runs every check on the sound tanh RNN.
func TestSuitePasses(t *testing.T) {
	Test(t, config(mutant{}))
}

// TestChecksFail gives each check a cell (or Config) with one defect it must report.
func TestChecksFail(t *testing.T) {
	seed := func() *uint64 { s := uint64(1); return &s }
	for _, tc := range []struct {
		name  string
		check string
		cfg   func() Config
		want  string // in the error
	}{
		{"Init not deterministic", "Init", func() Config { return config(mutant{initSeed: seed(), seedStep: 1}) }, "same seed"},
		{"Init ignores the rng", "Init", func() Config { return config(mutant{initSeed: seed()}) }, "the rng is not used"},
		{"bad config accepted", "BadConfigs", func() Config {
			cfg := config(mutant{})
			cfg.BadConfigs = append(cfg.BadConfigs, BadConfig{Name: "fine", Cell: rnn.NewTanh(3, 4, 2), Want: "N = 4"})
			return cfg
		}, "returned no error"},
		{"error not naming the value", "BadConfigs", func() Config {
			cfg := config(mutant{})
			cfg.BadConfigs[0].Want = "N = -7"
			return cfg
		}, `want one containing "N = -7"`},
		{"variable created before the error", "BadConfigs", func() Config {
			cfg := config(mutant{})
			cfg.BadConfigs = []BadConfig{{Name: "late", Cell: &mutant{Simple: rnn.NewTanh(3, 4, 2), varThenError: true}, Want: "N = 4"}}
			return cfg
		}, "after creating 1 variables"},
		{"mismatch not detected", "BadConfigs", func() Config {
			cfg := config(mutant{})
			cfg.Mismatched[0].Cell = rnn.NewTanh(3, 4, 2) // same shapes
			return cfg
		}, "other N: Build after Init"},
		{"NumParams off by one", "ParamCount", func() Config { return config(mutant{numParamsOff: 1}) }, "NumParams() = 47"},
		{"documented count wrong", "ParamCount", func() Config {
			cfg := config(mutant{})
			cfg.ParamCounts[0].Want = 8090
			return cfg
		}, "want 8090"},
		{"Sizes wrong", "Shapes", func() Config { return config(mutant{sizesOff: 1}) }, "Sizes()"},
		{"gradient 1% off", "Gradient", func() Config { return config(mutant{gradScale: 1.01}) }, "finite differences"},
		{"variable not used", "Gradient", func() Config { return config(mutant{extraVariable: true}) }, "unused is not used"},
		{"over budget", "NodesPerStep", func() Config { return config(mutant{extraNodes: 3}) }, "budget"},
		{"nonlinear growth", "NodesPerStep", func() Config { return config(mutant{growingNodes: true}) }, "grows by"},
		{"depends on the chunk start", "Chunking", func() Config { return config(mutant{timeDependent: true}) }, "whole sequence"},
		{"disagrees with the equations", "Step", func() Config { return config(mutant{readoutOffset: 1e-9}) }, "by hand"},
		{"leaves the group", "Constrained", func() Config { return constrainedConfig(drifting{}) }, "want ≤"},
		{"moves the optimiser's variable", "Constrained", func() Config { return constrainedConfig(drifting{alsoV: true}) }, "does not constrain"},
		{"takes a missing gradient as zero", "Constrained", func() Config { return constrainedConfig(drifting{still: true, lenient: true}) }, "without the gradient"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(t, tc.cfg(), tc.check)
			if err == nil || errors.Is(err, errSkip) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("check %s: error %v, want one containing %q", tc.check, err, tc.want)
			} else {
				t.Logf("%s: %v", tc.check, err)
			}
		})
	}
}

// drifting is an IRNN (W = I, orthogonal) that claims to keep W orthogonal but takes plain
// gradient steps W − λ g (leaving the group), or none (still), and may also move V or accept
// a missing gradient.
type drifting struct {
	*rnn.Simple
	alsoV, still, lenient bool
}

func (d drifting) ConstrainedVariables() []string { return []string{"W"} }

func (d drifting) Update(lr float64, values, grads map[string][]float64) (map[string][]float64, error) {
	g, ok := grads["W"]
	if !ok {
		if !d.lenient {
			return nil, fmt.Errorf("no gradient for %q", "W")
		}
		g = make([]float64, len(values["W"]))
	}
	if len(values["W"]) != len(g) {
		return nil, fmt.Errorf("value of %q has %d entries, want %d", "W", len(values["W"]), len(g))
	}
	w := slices.Clone(values["W"])
	for i := range w {
		if !d.still {
			w[i] -= lr * g[i]
		}
	}
	out := map[string][]float64{"W": w}
	if d.alsoV {
		out["V"] = values["V"]
	}
	return out, nil
}

func constrainedConfig(d drifting) Config {
	cfg := config(mutant{})
	cfg.New = func() rnn.Cell {
		c := rnn.NewIRNN(3, 4, 2)
		c.Type = dtypes.Float64
		d.Simple = c
		return d
	}
	return cfg
}
