// Package gru is the gated recurrent unit of Barber's slides [1] ("Gated Recurrent Net") and
// Galvan's thesis [2] §2.1.2 (eqs. 2.6–2.10), written as an rnn.Cell. With input weights V,
// recurrent weights W and readout U:
//
//	z_t = σ(V_z x_t + W_z h_{t−1} + b_z)               update gate
//	r_t = σ(V_r x_t + W_r h_{t−1} + b_r)               reset gate
//	h̃_t = tanh(V_h x_t + W_h (r_t ⊙ h_{t−1}) + b_h)    candidate
//	h_t = (1 − z_t) ⊙ h_{t−1} + z_t ⊙ h̃_t
//	y_t = U h_t + b_y                                  readout (logits or regression values)
//
// Two choices differ between sources:
//
//   - Reset gate before the matrix product, W_h (r ⊙ h): Barber tanh(W·[r ∗ h_{t−1}, x_t]),
//     Galvan eq. 2.10, Chung et al. [3] §3.2 and Cho et al. [4] §2.3 in arXiv:1406.1078 v3.
//     Version v1 of [4], PyTorch and cuDNN apply it after: r ⊙ (W_h h + b).
//   - z is the share of the new candidate (Barber, Galvan eq. 2.9, [3] §3.2). Cho et al. [4]
//     write h_t = z ⊙ h_{t−1} + (1 − z) ⊙ h̃_t, the same model with z ↦ 1 − z (as PyTorch).
//
// Galvan eq. 2.10 writes σ for the candidate's activation; Barber and [3], [4] use tanh,
// as here. The slides and the thesis write no biases; b_z, b_r, b_h are added (zero at
// initialisation, so the cell starts as the papers' equations), as in the LSTM.
//
// State: h, one [batch, N] node. The graph computes h_t as h_{t−1} + z_t ⊙ (h̃_t − h_{t−1}).
//
// Variables (gate order z, r, h̃ along the leading axis of V, W, b), initialised as the
// uRNN paper's code [5] initialises its LSTM:
//
//	"V"  [3, In, N]   input weights, one Glorot-uniform [In, N] matrix per gate
//	"W"  [3, N, N]    recurrent weights, one Glorot-uniform [N, N] matrix per gate
//	"b"  [3, N]       biases, 0
//	"U"  [N, Out]     readout, Glorot-uniform;  "bo" [Out] readout bias b_y, 0
//	"h0" [N]          initial state, learned, starting at 0
//
// Number of parameters (NumParams):
//
//	3·N·(In + N + 1) + N·Out + Out + N
//
// The uRNN paper [5] has no GRU baseline. At the LSTM's sizes: copy (In 10, N 40, Out 9)
// 6529, adding (In 2, N 128, Out 1) 50561.
//
// References:
//
//	[1] Barber, "Recurrent Neural Nets", lecture slides, "Gated Recurrent Net".
//	[2] Galvan, "On Recurrent Neural Networks", thesis, 2015, §2.1.2.
//	[3] Chung, Gulcehre, Cho, Bengio, "Empirical Evaluation of Gated Recurrent Neural
//	    Networks on Sequence Modeling", arXiv:1412.3555, §3.2.
//	[4] Cho et al., "Learning Phrase Representations using RNN Encoder-Decoder for
//	    Statistical Machine Translation", arXiv:1406.1078 (v1 and v3), §2.3.
//	[5] Arjovsky, Shah, Bengio, "Unitary Evolution Recurrent Neural Networks", ICML 2016,
//	    §4; code github.com/amarshah/complex_RNN, models.py.
//
// Full entries: docs/REFERENCES.md ([Barber], [Galvan2015], [Chung2014], [Cho2014],
// [Arjovsky2016], [Arjovsky2016code]).
package gru

import (
	"math/rand/v2"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// Gate indices along the leading axis of the variables V, W and b.
const (
	GateZ    = iota // update gate z
	GateR           // reset gate r
	GateH           // candidate h̃ (tanh)
	numGates        // 3
)

// Cell is the GRU configuration; see the package doc for the equations. The zero value of
// Type means Float32.
type Cell struct {
	In, N, Out int
	Type       dtypes.DType // zero value: Float32
}

// New returns a GRU with In inputs, N units and Out outputs.
func New(in, n, out int) *Cell { return &Cell{In: in, N: n, Out: out} }

// Sizes implements rnn.Cell: the state is h, N wide.
func (c *Cell) Sizes() rnn.Sizes { return rnn.Sizes{In: c.In, State: c.N, Out: c.Out} }

// DType implements rnn.Cell.
func (c *Cell) DType() dtypes.DType { return rnn.OrFloat32(c.Type) }

// NumParams returns 3·N·(In + N + 1) + N·Out + Out + N.
func (c *Cell) NumParams() int {
	return numGates*c.N*(c.In+c.N+1) + c.N*c.Out + c.Out + c.N
}

// variables lists the cell's variables (see rnn.Var); with rng nil the values are left
// out (used by Build to check shapes).
func (c *Cell) variables(rng *rand.Rand) []rnn.Var {
	n := c.N
	perGate := func(fanIn int) []float64 { return rnn.GlorotUniformStack(rng, numGates, fanIn, n) } // gate-major
	// U is drawn first, before V and W: the draws of existing runs (same seed, same weights).
	u := rnn.GlorotUniform(rng, n, c.Out)
	return []rnn.Var{
		{Name: "V", Dims: []int{numGates, c.In, n}, Values: perGate(c.In)},
		{Name: "W", Dims: []int{numGates, n, n}, Values: perGate(n)},
		{Name: "b", Dims: []int{numGates, n}, Values: make([]float64, numGates*n)},
		{Name: "U", Dims: []int{n, c.Out}, Values: u},
		{Name: "bo", Dims: []int{c.Out}, Values: make([]float64, c.Out)},
		{Name: "h0", Dims: []int{n}, Values: make([]float64, n)},
	}
}

// Init implements rnn.Cell: it creates the variables listed in the package doc. It returns
// an error naming the field when In, N or Out is < 1 or Type is neither Float32 nor Float64.
func (c *Cell) Init(scope *model.Scope, rng *rand.Rand) error {
	if err := rnn.CheckSizes("gru.Cell", "In", c.In, "N", c.N, "Out", c.Out); err != nil {
		return err
	}
	if err := rnn.CheckDType("gru.Cell", c.DType()); err != nil {
		return err
	}
	return rnn.CreateVariables(scope, c.DType(), c.variables(rng))
}

// Build implements rnn.Cell. It panics if Init was not called or created variables of
// other shapes (a different configuration). Hoisted out of the time loop: V rearranged to
// [In, 3N] (blocks z|r|h̃), b flattened to [3N], W split into W_zr [N, 2N] (blocks z|r)
// and W_h [N, N].
func (c *Cell) Build(scope *model.Scope, g *Graph) rnn.Step {
	nodes := rnn.ReadVariables(scope, g, c.variables(nil), c)
	n, w := c.N, nodes["W"]
	s := &step{
		n:   n,
		v:   Reshape(TransposeAllAxes(nodes["V"], 1, 0, 2), c.In, numGates*n),
		b:   Reshape(nodes["b"], numGates*n),
		wzr: Reshape(TransposeAllAxes(SliceAxis(w, 0, AxisRange(GateZ, GateR+1)), 1, 0, 2), n, 2*n),
		wh:  Reshape(SliceAxis(w, 0, AxisElem(GateH)), n, n),
		u:   nodes["U"],
		bo:  nodes["bo"],
		h0:  nodes["h0"],
	}
	s.wzrT, s.whT = Transpose(s.wzr, 0, 1), Transpose(s.wh, 0, 1)
	return s
}

type step struct {
	n                        int
	v, b, wzr, wh, u, bo, h0 *Node
	wzrT, whT                *Node // W_zrᵀ and W_hᵀ, for rnn.Times
}

// Initial returns h0 broadcast to [batch, N].
func (s *step) Initial(batch int) *Node {
	return BroadcastToDims(InsertAxes(s.h0, 0), batch, s.n)
}

// Project returns V x_t + b for every step of x (rnn.Step) and gate, [batch, T, 3N] or
// [batch, 3N] (blocks z|r|h̃).
func (s *step) Project(x *Node) *Node {
	return Add(rnn.ProjectInputs(x, s.v), ExpandLeftToRank(s.b, x.Rank()))
}

// Next advances h by one step; px is [batch, 3N] from Project.
func (s *step) Next(h, px *Node) *Node {
	n := s.n
	zr := Sigmoid(Add(SliceAxis(px, 1, AxisRange(0, 2*n)), rnn.Times(h, s.wzrT)))
	z := SliceAxis(zr, 1, AxisRange(GateZ*n, GateZ*n+n))
	r := SliceAxis(zr, 1, AxisRange(GateR*n, GateR*n+n))
	hh := Tanh(Add(SliceAxis(px, 1, AxisRange(GateH*n, GateH*n+n)), rnn.Times(Mul(r, h), s.whT)))
	return Add(h, Mul(z, Sub(hh, h)))
}

// Readout returns U h + b_y for states [..., N], [..., Out].
func (s *step) Readout(states *Node) *Node {
	return Add(MatMul(states, s.u), ExpandLeftToRank(s.bo, states.Rank()))
}
