// Package seq2seq is the encoder–decoder of Barber's slides ("Sequence to Sequence models",
// after Sutskever, Vinyals & Le 2014): an encoder RNN reads the source x_1 … x_M into its last
// state, "a fixed length vector", from which a second RNN, the decoder, writes the target
// y_1 … y_N, reading the previous target symbol at each step ("one can also add inputs to
// recursively generate the translation, so that y_{t−1} is an additional input to h′_t"):
//
//	h_t = e(h_{t−1}, x_t),  t ≤ M;   h′_0 = h′_init + g_e(h_M);   h′_j = d(h′_{j−1}, y_{j−1}),
//	o_j = g_d(h′_j),
//
// e and d any two cells, g_e and g_d their readouts and h′_init the decoder's own initial
// state. The encoder's readout, an affine map of its state for every cell here, is the bridge
// from the fixed vector into the decoder's state (so the encoder's Out is the decoder's State,
// and the two may be of different kinds and sizes); h′_init adds a second bias to it.
//
// A Cell is an rnn.Cell over one sequence holding both sides, as tasks.Translate lays them
// out: the last input channel is the phase, p_t = 0 on the source side and 1 on the target
// side. The state is [h_t | h′_t], and each step computes
//
//	h_t = (1 − p_t) e(h_{t−1}, x_t) + p_t h_{t−1},
//	h′_t = (1 − p_t) (h′_init + g_e(h_t)) + p_t d(h′_{t−1}, x_t),
//
// so that the encoder stops at the first target step and the decoder starts there from the
// fixed vector; the outputs are g_d(h′_t) at every step (the task masks the source side). With
// p_t in {0, 1} this is the encoder–decoder exactly; both cells run at every step, so a step
// costs what one of each does. As the state is carried from step to step like any cell's,
// chunked BPTT (train.Config.Chunk) cuts a sequence anywhere, the switch included.
//
// Both cells read every input channel, but the encoder is frozen on the target side and the
// decoder is overwritten on the source side: the decoder sees the source only through h_M, the
// fixed vector. A cell that moves
// its matrices by a rule of its own (rnn.Constrained) or reads its sequence backwards
// (rnn.WholeSequence) is refused; wrapping a Cell in dropout is not offered (input dropout
// would drop the phase).
//
// References:
//
//	[1] Barber, lecture slides on RNNs, "Sequence to Sequence models" (docs/REFERENCES.md, [Barber]).
//	[2] Sutskever, Vinyals, Le, "Sequence to Sequence Learning with Neural Networks", NIPS 2014.
//
// Full entries: docs/REFERENCES.md ([Barber], [Sutskever2014]).
package seq2seq

import (
	"fmt"
	"math/rand/v2"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// Cell is an encoder–decoder of two cells reading the same inputs, the last channel the phase.
type Cell struct {
	// Encoder reads the source; its Out must be Decoder's State (its readout is the bridge).
	Encoder rnn.Cell
	// Decoder writes the target; its Out is the Cell's.
	Decoder rnn.Cell
}

// New returns the encoder–decoder of encoder and decoder.
func New(encoder, decoder rnn.Cell) *Cell { return &Cell{Encoder: encoder, Decoder: decoder} }

// Sizes implements rnn.Cell: the inputs of both, the states of both, the decoder's outputs.
func (c *Cell) Sizes() rnn.Sizes {
	if c.Encoder == nil || c.Decoder == nil {
		return rnn.Sizes{}
	}
	e, d := c.Encoder.Sizes(), c.Decoder.Sizes()
	return rnn.Sizes{In: e.In, State: e.State + d.State, Out: d.Out}
}

// DType implements rnn.Cell: the cells' (Init checks that they agree).
func (c *Cell) DType() dtypes.DType {
	if c.Encoder == nil {
		return dtypes.Float32
	}
	return c.Encoder.DType()
}

// NumParams returns the two cells' trainable parameters added up.
func (c *Cell) NumParams() int {
	e, _ := rnn.Params(c.Encoder)
	d, _ := rnn.Params(c.Decoder)
	return e + d
}

// parts are the scopes of the two cells under the Cell's.
var parts = [2]string{"encoder", "decoder"}

// check returns an error naming the first thing that does not fit.
func (c *Cell) check() error {
	for i, cell := range []rnn.Cell{c.Encoder, c.Decoder} {
		if cell == nil {
			return fmt.Errorf("seq2seq.Cell: %s is nil", parts[i])
		}
		if _, ok := cell.(rnn.Constrained); ok {
			return fmt.Errorf("seq2seq.Cell: the %s (%T) moves its matrices by a rule of its own (rnn.Constrained), which an encoder–decoder does not carry", parts[i], cell)
		}
		if _, ok := cell.(rnn.WholeSequence); ok {
			return fmt.Errorf("seq2seq.Cell: the %s (%T) reads its sequences backwards (rnn.WholeSequence), which a cell read step by step cannot", parts[i], cell)
		}
	}
	e, d := c.Encoder.Sizes(), c.Decoder.Sizes()
	switch {
	case e.In != d.In:
		return fmt.Errorf("seq2seq.Cell: encoder has %d inputs, decoder %d: want the same (the last one the phase)", e.In, d.In)
	case e.In < 2:
		return fmt.Errorf("seq2seq.Cell: %d inputs, want >= 2 (symbols and the phase)", e.In)
	case e.Out != d.State:
		return fmt.Errorf("seq2seq.Cell: encoder has %d outputs, decoder a state of %d: want the same (the encoder's readout starts the decoder)", e.Out, d.State)
	case c.Encoder.DType() != c.Decoder.DType():
		return fmt.Errorf("seq2seq.Cell: encoder is %s, decoder %s: want one dtype", c.Encoder.DType(), c.Decoder.DType())
	}
	return nil
}

// Init implements rnn.Cell: each cell's own initialisation under scope/encoder and
// scope/decoder, from a seed drawn from rng for it; both are first initialised in a scratch
// store, so that a cell that refuses its configuration leaves no variable behind.
func (c *Cell) Init(scope *model.Scope, rng *rand.Rand) error {
	if err := c.check(); err != nil {
		return err
	}
	cells := [2]rnn.Cell{c.Encoder, c.Decoder}
	seeds := [2]uint64{rng.Uint64(), rng.Uint64()}
	for _, scratch := range []bool{true, false} {
		for i, cell := range cells {
			s := scope.At("%s", parts[i])
			if scratch {
				s = model.NewStore().Scope("/scratch")
			}
			if err := cell.Init(s, rand.New(rand.NewPCG(seeds[i], uint64(i)))); err != nil {
				return fmt.Errorf("seq2seq.Cell: %s: %w", parts[i], err)
			}
		}
	}
	return nil
}

// Build implements rnn.Cell.
func (c *Cell) Build(scope *model.Scope, g *Graph) rnn.Step {
	return &step{
		enc: c.Encoder.Build(scope.At("%s", parts[0]), g), dec: c.Decoder.Build(scope.At("%s", parts[1]), g),
		n: c.Encoder.Sizes().State, in: c.Encoder.Sizes().In,
	}
}

type step struct {
	enc, dec rnn.Step
	n, in    int // the encoder's state width, the inputs'
}

// start is h′_init + g_e(h): the decoder's state from the encoder's.
func (s *step) start(h *Node) *Node { return Add(s.dec.Initial(h.Shape().Dim(0)), s.enc.Readout(h)) }

func (s *step) Initial(batch int) *Node {
	h := s.enc.Initial(batch)
	return Concatenate([]*Node{h, s.start(h)}, -1)
}

// Project passes the inputs on: each cell projects them itself.
func (s *step) Project(x *Node) *Node { return x }

// Next is the package doc's step: encode while p_t = 0, decode while p_t = 1.
func (s *step) Next(h, x *Node) *Node {
	he, hd := SliceAxis(h, -1, AxisRange(0, s.n)), SliceAxis(h, -1, AxisRange(s.n, h.Shape().Dim(-1)))
	p := SliceAxis(x, -1, AxisElem(s.in-1)) // [batch, 1]
	q := OneMinus(p)
	e := s.enc.Next(he, s.enc.Project(x))
	nextE := Add(Mul(q, e), Mul(p, he))
	nextD := Add(Mul(q, s.start(nextE)), Mul(p, s.dec.Next(hd, s.dec.Project(x))))
	return Concatenate([]*Node{nextE, nextD}, -1)
}

// Readout is the decoder's, of its part of the states.
func (s *step) Readout(states *Node) *Node {
	return s.dec.Readout(SliceAxis(states, -1, AxisRange(s.n, states.Shape().Dim(-1))))
}
