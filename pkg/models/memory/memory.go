// Package memory is Barber's gated running memory [1] ("Mitigating Memory Decay"), the
// simplest RNN with a copying mechanism, from which the LSTM is built up:
//
//	α_t = σ(W_in x_t + B_in)              (a scalar gate per example)
//	m_t = α_t x_t + (1 − α_t) m_{t−1}     (store x_t when α_t ≈ 1, hold m when α_t ≈ 0)
//	y_t = α_t m_{t−1}                     (output the previous memory when storing)
//
// with σ the logistic sigmoid. As in [1], W_in is a row vector and B_in a scalar, so one
// gate decides for the whole vector ("is x_t a dog?"), and x_t, m_t and y_t all have the
// same width In: the model has no readout matrix and In + 1 parameters.
//
// The recurrent state is [m_t | m_{t−1} | α_t], [batch, 2·In + 1]: [1] names the hidden
// units h(t) = (α(t), m(t)), and m_{t−1} is kept beside them so that Readout computes
// y_t = α_t m_{t−1} from the state alone. Only the m_t part feeds the next step. The
// initial state is 0 (m_0 = 0, and y_1 = α_1 m_0 = 0).
//
// References:
//
//	[1] Barber, "Recurrent Neural Nets", lecture slides, "Mitigating Memory Decay" and
//	    "Simple Memory Storage" ([Barber] in docs/REFERENCES.md).
package memory

import (
	"fmt"
	"math/rand/v2"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// Cell is the gated running memory of the package doc. Variables: "Win" [In] and the
// scalar "Bin". Initialisation ([1] gives none): W_in Glorot-uniform with fan-in In and
// fan-out 1, U[−√(6/(In+1)), √(6/(In+1))]; B_in = 0, so α starts near 1/2.
type Cell struct {
	In   int          // width of x_t, m_t and y_t
	Type dtypes.DType // zero value: Float32
}

// New returns a running memory over vectors of width in.
func New(in int) *Cell { return &Cell{In: in} }

// Sizes implements rnn.Cell: In inputs and outputs, 2·In + 1 floats of state.
func (c *Cell) Sizes() rnn.Sizes { return rnn.Sizes{In: c.In, State: 2*c.In + 1, Out: c.In} }

// DType implements rnn.Cell.
func (c *Cell) DType() dtypes.DType { return rnn.OrFloat32(c.Type) }

// NumParams returns the number of trainable parameters, In + 1 (W_in and B_in).
func (c *Cell) NumParams() int { return c.In + 1 }

// variables lists the cell's variables (see rnn.Var); with rng nil the values are left
// out (used by Build to check shapes).
func (c *Cell) variables(rng *rand.Rand) []rnn.Var {
	return []rnn.Var{
		{Name: "Win", Dims: []int{c.In}, Values: rnn.GlorotUniform(rng, c.In, 1)},
		{Name: "Bin", Values: []float64{0}}, // a scalar
	}
}

// Init implements rnn.Cell; it returns an error naming In when In < 1 and Type when it is
// not Float32 or Float64.
func (c *Cell) Init(scope *model.Scope, rng *rand.Rand) error {
	if err := rnn.CheckSizes("memory", "In", c.In); err != nil {
		return err
	}
	if err := rnn.CheckDType("memory", c.DType()); err != nil {
		return err
	}
	if rng == nil {
		return fmt.Errorf("memory: Init: rng is nil, want a seeded *rand.Rand")
	}
	return rnn.CreateVariables(scope, c.DType(), c.variables(rng))
}

// Build implements rnn.Cell. It panics if Init was not called or created W_in of another
// width.
func (c *Cell) Build(scope *model.Scope, g *Graph) rnn.Step {
	v := rnn.ReadVariables(scope, g, c.variables(nil), c)
	return &step{in: c.In, win: v["Win"], bin: v["Bin"]}
}

type step struct {
	in       int
	win, bin *Node
}

// Initial returns the zero state, [batch, 2·In + 1].
func (s *step) Initial(batch int) *Node {
	return Zeros(s.win.Graph(), shapes.Make(s.win.DType(), batch, 2*s.in+1))
}

// Project returns [α_t | x_t] for all t, [batch, T, 1 + In] (or for one step, [batch, 1 + In]):
// the gate depends on x_t only.
func (s *step) Project(x *Node) *Node {
	logit := Add(rnn.ProjectInputs(x, s.win), s.bin) // [batch, T] or [batch]
	return Concatenate([]*Node{InsertAxes(Sigmoid(logit), -1), x}, -1)
}

// Next returns [m_t | m_{t−1} | α_t] with m_t = α_t x_t + (1 − α_t) m_{t−1}.
func (s *step) Next(state, px *Node) *Node {
	alpha := SliceAxis(px, 1, AxisRange(0, 1))
	x := SliceAxis(px, 1, AxisRangeToEnd(1))
	m := SliceAxis(state, 1, AxisRange(0, s.in))
	next := Add(Mul(alpha, x), Mul(OneMinus(alpha), m))
	return Concatenate([]*Node{next, m, alpha}, 1)
}

// Readout returns y_t = α_t m_{t−1} for states [..., 2·In + 1].
func (s *step) Readout(states *Node) *Node {
	prev := SliceAxis(states, -1, AxisRange(s.in, 2*s.in))
	alpha := SliceAxis(states, -1, AxisRange(2*s.in, 2*s.in+1))
	return Mul(alpha, prev)
}
