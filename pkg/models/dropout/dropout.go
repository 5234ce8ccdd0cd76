// Package dropout is dropout for any recurrent cell (Galvan §2.2.5; Srivastava et al. 2014;
// Zaremba, Sutskever & Vinyals 2014 §3.2): while training, each unit of a connection is
// zeroed with probability p, independently at every time step and for every sequence,
//
//	D(v) = m ⊙ v / (1 − p),   m_i ~ Bernoulli(1 − p),
//
// and at evaluation D(v) = v. (Galvan's eq. 2.33–2.36 keep units with probability p and
// scale the weights by p at test time; dividing by 1 − p while training instead is the
// same network in expectation, with nothing to rescale afterwards.)
//
// Zaremba et al. drop only the non-recurrent connections: of a cell f with readout g,
//
//	h_t = f(h_{t−1}, D(x_t)),   y_t = g(D(h_t)),
//
// and, between stacked layers, the state of layer l − 1 on its way up, h^l_t =
// f^l(h^l_{t−1}, D(h^{l−1}_t)) (Zaremba §3.2, Fig. 2). Galvan §2.2.5 gives the reason: the
// recurrence "amplifies too much the noise introduced by dropout"; dropping recurrent units
// "corrupts the variables of the program". For contrast, Cell.Recurrent drops the state
// carried from one step to the next as well,
//
//	h_t = f(D_r(h_{t−1}), D(x_t)),
//
// all of it: for the LSTM, whose state is [h | c], the memory cells too.
//
// Cell wraps any rnn.Cell. Its variables are the inner cell's, under the same scope, and the
// noise key rnn.NoiseKey, which the trainer sets for each training pass (see rnn.NoiseKey):
// dropout is off unless the trainer turns it on. The masks are drawn by GoMLX's
// RandomUniform from a generator state built from the key, the time step t and the site
// (which connection, and the scope's path, so that stacked layers draw apart) and not
// carried on: a pure function of them, so that the forward pass of a chunk and its
// recomputation in chunked BPTT drop the same units, whatever the chunk length. The step
// t rides in the state as one more column (State = the inner cell's + 1), carried across
// chunks like the rest and holding no gradient. The numbers depend on the backend's
// generator (the Go backend's PCG, XLA's Philox): a seed gives the same masks on one backend.
//
// A cell whose matrices move by a rule of their own (rnn.Constrained), or at scaled learning
// rates (rnn.LRScaled), or that reads its sequences backwards (rnn.WholeSequence), is refused:
// the wrapper does not carry those interfaces (wrap each direction of a bidirectional RNN).
//
// References:
//
//	[1] Galvan, "On Recurrent Neural Networks", thesis, 2015, §2.2.5.
//	[2] Zaremba, Sutskever, Vinyals, "Recurrent Neural Network Regularization", 2014, §3.2.
//	[3] Srivastava, Hinton, Krizhevsky, Sutskever, Salakhutdinov, "Dropout: a simple way to
//	    prevent neural networks from overfitting", JMLR 15, 2014.
//
// Full entries: docs/REFERENCES.md ([Galvan2015], [Zaremba2014], [Srivastava2014]).
package dropout

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/support/exceptions"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// Cell is Inner with dropout on its connections; a rate of 0 leaves a connection alone.
type Cell struct {
	Inner rnn.Cell
	// Input is the rate on the inputs x_t, Output the rate on the states h_t on their way to
	// the readout (the non-recurrent connections, Zaremba et al.), Recurrent the rate on the
	// state h_{t−1} carried into step t (for contrast). Each in [0, 1).
	Input, Output, Recurrent float64
}

// New returns inner with dropout of rate p on its non-recurrent connections (inputs and
// readout), as Zaremba et al. do.
func New(inner rnn.Cell, p float64) *Cell { return &Cell{Inner: inner, Input: p, Output: p} }

// Sizes implements rnn.Cell: the inner cell's, with one more state column, the time step.
func (c *Cell) Sizes() rnn.Sizes {
	if c.Inner == nil {
		return rnn.Sizes{}
	}
	s := c.Inner.Sizes()
	s.State++
	return s
}

// DType implements rnn.Cell: the inner cell's.
func (c *Cell) DType() dtypes.DType {
	if c.Inner == nil {
		return dtypes.Float32
	}
	return c.Inner.DType()
}

// NumParams returns the inner cell's trainable parameters: dropout has none.
func (c *Cell) NumParams() int {
	n, _ := rnn.Params(c.Inner)
	return n
}

// check returns an error naming the first field that does not fit.
func (c *Cell) check() error {
	if c.Inner == nil {
		return fmt.Errorf("dropout.Cell: Inner is nil")
	}
	for _, r := range []struct {
		name string
		p    float64
	}{{"Input", c.Input}, {"Output", c.Output}, {"Recurrent", c.Recurrent}} {
		if !(r.p >= 0 && r.p < 1) {
			return fmt.Errorf("dropout.Cell: %s = %g, want a rate in [0, 1)", r.name, r.p)
		}
	}
	if _, ok := c.Inner.(rnn.WholeSequence); ok {
		return fmt.Errorf("dropout.Cell: Inner (%T) reads its sequences backwards too (rnn.WholeSequence): wrap each direction instead", c.Inner)
	}
	if _, ok := c.Inner.(rnn.Constrained); ok {
		return fmt.Errorf("dropout.Cell: Inner (%T) moves its matrices by a rule of its own (rnn.Constrained), which dropout does not carry", c.Inner)
	}
	if l, ok := c.Inner.(rnn.LRScaled); ok && len(l.LRScales()) > 0 {
		return fmt.Errorf("dropout.Cell: Inner (%T) trains some variables at scaled learning rates (rnn.LRScaled), which dropout does not carry", c.Inner)
	}
	return nil
}

// Init implements rnn.Cell: the inner cell's Init under the same scope, then the noise key
// (rnn.NoiseVar, no noise).
func (c *Cell) Init(scope *model.Scope, rng *rand.Rand) error {
	if err := c.check(); err != nil {
		return err
	}
	if err := c.Inner.Init(scope, rng); err != nil {
		return err
	}
	return rnn.CreateVariables(scope, c.DType(), []rnn.Var{rnn.NoiseVar()})
}

// Build implements rnn.Cell. It panics if Init was not called.
func (c *Cell) Build(scope *model.Scope, g *Graph) rnn.Step {
	h := fnv.New64a()
	h.Write([]byte(scope.Scope()))
	s := &step{cell: c, inner: c.Inner.Build(scope, g), n: c.Inner.Sizes().State, salt: h.Sum64()}
	// The key's two 31-bit halves as one uint64 [1], and whether the noise is on (key ≠ 0), once.
	k := rnn.ReadVariables(scope, g, []rnn.Var{rnn.NoiseVar()}, c)[rnn.NoiseKey]
	s.on = ConvertDType(NotEqual(ReduceAllMax(k), Scalar(g, dtypes.Int32, 0)), c.DType())
	k = ConvertDType(k, dtypes.Uint64)
	s.key = BitwiseOr(BitwiseShiftLeftScalar(SliceAxis(k, 0, AxisElem(0)), uint64(31)), SliceAxis(k, 0, AxisElem(1)))
	return s
}

// The sites of a cell, which separate its masks.
const (
	siteInput uint64 = iota + 1
	siteRecurrent
	siteOutput
)

// golden is 2⁶⁴/φ, odd: multiplying the step counter by it spreads neighbouring steps over
// the generator's state (Knuth's multiplicative hashing).
const golden uint64 = 0x9e3779b97f4a7c15

type step struct {
	cell  *Cell
	inner rnn.Step
	n     int    // the inner state's width; column n is the time step
	key   *Node  // rnn.NoiseKey as one Uint64 [1]
	on    *Node  // 1 when the key is not 0 (training), else 0; a scalar of the cell's dtype
	salt  uint64 // from the scope's path
}

func (s *step) Initial(batch int) *Node {
	h := s.inner.Initial(batch)
	return Concatenate([]*Node{h, Zeros(h.Graph(), shapes.Make(h.DType(), batch, 1))}, -1)
}

// Project passes the inputs on: they are dropped, step by step, in Next.
func (s *step) Project(x *Node) *Node { return x }

// Next is h_t = f(D_r(h_{t−1}), D(x_t)), and the step column plus 1.
func (s *step) Next(h, x *Node) *Node {
	inner, t := s.split(h)
	now := Squeeze(SliceAxis(t, 0, AxisElem(0)), 0, 1) // every sequence of the batch is at the same step
	if s.cell.Recurrent > 0 {
		inner = Mul(inner, s.mask(now, siteRecurrent, s.cell.Recurrent, inner.Shape().Dimensions))
	}
	if s.cell.Input > 0 {
		x = Mul(x, s.mask(now, siteInput, s.cell.Input, x.Shape().Dimensions))
	}
	next := s.inner.Next(inner, s.inner.Project(x))
	return Concatenate([]*Node{next, StopGradient(OnePlus(t))}, -1)
}

// Readout is g(D(h_t)) of states [B, State] or [B, T, State], each step with its own mask.
func (s *step) Readout(states *Node) *Node {
	inner, t := s.split(states)
	if s.cell.Output > 0 {
		switch states.Rank() {
		case 2:
			inner = Mul(inner, s.mask(Squeeze(SliceAxis(t, 0, AxisElem(0)), 0, 1), siteOutput, s.cell.Output, inner.Shape().Dimensions))
		case 3:
			masks := make([]*Node, states.Shape().Dim(1))
			for k := range masks {
				now := Reshape(SliceAxis(SliceAxis(t, 0, AxisElem(0)), 1, AxisElem(k)))
				masks[k] = s.mask(now, siteOutput, s.cell.Output, []int{states.Shape().Dim(0), s.n})
			}
			inner = Mul(inner, Stack(masks, 1))
		default:
			exceptions.Panicf("dropout.Cell: Readout of states %s, want [batch, State] or [batch, T, State]", states.Shape())
		}
	}
	return s.inner.Readout(inner)
}

// split returns the inner cell's part of states [..., State] and the time-step column [..., 1].
func (s *step) split(states *Node) (inner, t *Node) {
	return SliceAxis(states, -1, AxisRange(0, s.n)), SliceAxis(states, -1, AxisRange(s.n, s.n+1))
}

// mask returns the dropout factors of rate p for the step now (a scalar): m/(1 − p), m ~
// Bernoulli(1 − p) per element, drawn from the generator state (key, (now + 1)·golden)
// offset by the site and the scope, shaped dims in the cell's dtype; all ones while the key
// is 0 (no noise).
func (s *step) mask(now *Node, site uint64, p float64, dims []int) *Node {
	g, dt := now.Graph(), now.DType()
	counter := Mul(Reshape(OnePlus(ConvertDType(Round(now), dtypes.Uint64)), 1), Const(g, []uint64{golden}))
	state := Concatenate([]*Node{Add(s.key, Const(g, []uint64{s.salt + site*golden})), counter, Const(g, []uint64{0})}, 0)
	_, u := RandomUniform(state, shapes.Make(dt, dims...))
	keep := DivScalar(ConvertDType(GreaterOrEqual(u, Scalar(g, dt, p)), dt), 1-p)
	return StopGradient(Add(Mul(s.on, keep), OneMinus(s.on))) // on·m/(1 − p) + (1 − on)
}
