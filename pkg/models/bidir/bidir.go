// Package bidir is the bidirectional RNN of Barber's slides ("Bidirectional RNNs": "the
// encoder model traverses the input sequence in both directions"; Schuster & Paliwal 1997):
// a forward cell f reads x_1 … x_T, a backward cell b reads x_T … x_1, and the output at
// step t reads both states,
//
//	→h_t = f(→h_{t−1}, x_t),   ←h_t = b(←h_{t+1}, x_t),   y_t = g_f(→h_t) + g_b(←h_t),
//
// g_f and g_b the two cells' readouts. For the cells of this project a readout is affine in
// the state, g(h) = h U + b_o, so y_t = [→h_t | ←h_t] [U_f; U_b] + (b_f + b_b): Schuster &
// Paliwal's output layer on the joined states (with its bias written as two).
//
// A Cell is an rnn.Cell, so that the trainer, the losses and the checkpoints treat it as any
// other, through one trick: the forward pass is the recurrence (Next), and the state carries
// each step's input beside →h_t, [→h_t | x_t], so that Readout, which receives the states of
// every step at once, runs the backward cell over their inputs from the last step to the first
// before reading out. Readout of the last state alone (the trainer's ReadLast, for losses at
// the last step only) is then right as it stands: ←h_T has read x_T alone.
//
// The price is that a sequence cannot be cut into chunks: the backward pass over a chunk
// would start at the chunk's end, blind to the chunks after it. Cell implements
// rnn.WholeSequence, and seq.Walker and train.New refuse a chunk shorter than the sequence
// (seq.CheckChunk); chunked BPTT carrying the state across chunks applies to the forward
// direction only, so it is not offered. Package stack refuses a Cell as a layer (its layers
// are read step by step); stack each direction instead (Forward and Backward may be stacks).
// The gradient analysis sees the state [→h_t | x_t]: its x part carries no parameters.
//
// References:
//
//	[1] Barber, lecture slides on RNNs, "Bidirectional RNNs" (docs/REFERENCES.md, [Barber]).
//	[2] Schuster, Paliwal, "Bidirectional Recurrent Neural Networks", IEEE Trans. Signal
//	    Processing 45(11), 1997.
//
// Full entries: docs/REFERENCES.md ([Barber], [Schuster1997]).
package bidir

import (
	"fmt"
	"math/rand/v2"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/support/exceptions"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// Cell is a bidirectional RNN of two cells of the same inputs and outputs.
type Cell struct {
	Forward, Backward rnn.Cell
}

// New returns the bidirectional RNN of forward and backward.
func New(forward, backward rnn.Cell) *Cell { return &Cell{Forward: forward, Backward: backward} }

var _ rnn.WholeSequence = (*Cell)(nil)

// WholeSequence implements rnn.WholeSequence.
func (c *Cell) WholeSequence() {}

// Sizes implements rnn.Cell: the inputs and outputs of both cells; the state is the forward
// cell's and one step's inputs.
func (c *Cell) Sizes() rnn.Sizes {
	if c.Forward == nil {
		return rnn.Sizes{}
	}
	s := c.Forward.Sizes()
	s.State += s.In
	return s
}

// DType implements rnn.Cell: the cells' (Init checks that they agree).
func (c *Cell) DType() dtypes.DType {
	if c.Forward == nil {
		return dtypes.Float32
	}
	return c.Forward.DType()
}

// NumParams returns the two cells' trainable parameters added up.
func (c *Cell) NumParams() int {
	f, _ := rnn.Params(c.Forward)
	b, _ := rnn.Params(c.Backward)
	return f + b
}

// directions are the scopes of the two cells under the Cell's.
var directions = [2]string{"forward", "backward"}

// check returns an error naming the first thing that does not fit.
func (c *Cell) check() error {
	cells := [2]rnn.Cell{c.Forward, c.Backward}
	for i, cell := range cells {
		if cell == nil {
			return fmt.Errorf("bidir.Cell: %s cell is nil", directions[i])
		}
		if _, ok := cell.(rnn.Constrained); ok {
			return fmt.Errorf("bidir.Cell: the %s cell (%T) moves its matrices by a rule of its own (rnn.Constrained), which a bidirectional RNN does not carry", directions[i], cell)
		}
		if _, ok := cell.(rnn.WholeSequence); ok {
			return fmt.Errorf("bidir.Cell: the %s cell (%T) reads its sequences backwards already (rnn.WholeSequence)", directions[i], cell)
		}
	}
	f, b := c.Forward.Sizes(), c.Backward.Sizes()
	switch {
	case f.In != b.In || f.Out != b.Out:
		return fmt.Errorf("bidir.Cell: forward cell has %d inputs and %d outputs, backward %d and %d: want the same", f.In, f.Out, b.In, b.Out)
	case c.Forward.DType() != c.Backward.DType():
		return fmt.Errorf("bidir.Cell: forward cell is %s, backward %s: want one dtype", c.Forward.DType(), c.Backward.DType())
	}
	return nil
}

// Init implements rnn.Cell: each cell's own initialisation under scope/forward and
// scope/backward, from a seed drawn from rng for it; both are first initialised in a scratch
// store, so that a cell that refuses its configuration leaves no variable behind.
func (c *Cell) Init(scope *model.Scope, rng *rand.Rand) error {
	if err := c.check(); err != nil {
		return err
	}
	cells := [2]rnn.Cell{c.Forward, c.Backward}
	seeds := [2]uint64{rng.Uint64(), rng.Uint64()}
	for _, scratch := range []bool{true, false} {
		for i, cell := range cells {
			s := scope.At("%s", directions[i])
			if scratch {
				s = model.NewStore().Scope("/scratch")
			}
			if err := cell.Init(s, rand.New(rand.NewPCG(seeds[i], uint64(i)))); err != nil {
				return fmt.Errorf("bidir.Cell: %s cell: %w", directions[i], err)
			}
		}
	}
	return nil
}

// Build implements rnn.Cell.
func (c *Cell) Build(scope *model.Scope, g *Graph) rnn.Step {
	return &step{
		fwd: c.Forward.Build(scope.At("%s", directions[0]), g), bwd: c.Backward.Build(scope.At("%s", directions[1]), g),
		n: c.Forward.Sizes().State, in: c.Forward.Sizes().In,
	}
}

type step struct {
	fwd, bwd rnn.Step
	n, in    int // the forward state's width, the inputs'
}

func (s *step) Initial(batch int) *Node {
	h := s.fwd.Initial(batch)
	return Concatenate([]*Node{h, Zeros(h.Graph(), shapes.Make(h.DType(), batch, s.in))}, -1)
}

// Project passes the inputs on: each cell projects them itself.
func (s *step) Project(x *Node) *Node { return x }

// Next is [→h_t | x_t] from [→h_{t−1} | x_{t−1}] and x_t.
func (s *step) Next(h, x *Node) *Node {
	next := s.fwd.Next(SliceAxis(h, -1, AxisRange(0, s.n)), s.fwd.Project(x))
	return Concatenate([]*Node{next, x}, -1)
}

// Readout runs the backward cell over the inputs the states [B, T, State] carry, from the last
// step to the first, and returns g_f(→h_t) + g_b(←h_t), [B, T, Out]; states [B, State] are one
// step.
func (s *step) Readout(states *Node) *Node {
	switch states.Rank() {
	case 2:
		return Squeeze(s.Readout(InsertAxes(states, 1)), 1)
	case 3:
	default:
		exceptions.Panicf("bidir.Cell: Readout of states %s, want [batch, State] or [batch, T, State]", states.Shape())
	}
	T := states.Shape().Dim(1)
	// The inputs are data: no gradient goes back into them (which spares the backward pass
	// the zero-padded adjoint of every step's slice).
	xs := StopGradient(SliceAxis(states, -1, AxisRange(s.n, s.n+s.in)))
	back := make([]*Node, T)
	h := s.bwd.Initial(states.Shape().Dim(0))
	for t := T - 1; t >= 0; t-- {
		h = s.bwd.Next(h, s.bwd.Project(Squeeze(SliceAxis(xs, 1, AxisElem(t)), 1)))
		back[t] = h
	}
	return Add(s.fwd.Readout(SliceAxis(states, -1, AxisRange(0, s.n))), s.bwd.Readout(Stack(back, 1)))
}
