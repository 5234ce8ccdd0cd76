// Package lstm is the long short-term memory network of the uRNN paper's baselines [4], in
// the variant of Zaremba et al. [1] §3.1, written as an rnn.Cell. All four gates are
// computed from [x_t, h_{t−1}], with input weights V, recurrent weights W, readout U:
//
//	i_t = σ(V_i x_t + W_i h_{t−1} + b_i)           input gate
//	f_t = σ(V_f x_t + W_f h_{t−1} + b_f)           forget gate
//	g_t = tanh(V_g x_t + W_g h_{t−1} + b_g)        candidate ([2] "C̃_t")
//	c_t = f_t ⊙ c_{t−1} + i_t ⊙ g_t                memory cell
//	o_t = σ(V_o x_t + W_o h_{t−1} [+ P c_t] + b_o) output gate ([P c_t] with Peephole)
//	h_t = o_t ⊙ tanh(c_t)
//	y_t = U h_t + b_y                              readout (logits or regression values)
//
// These are the equations of Barber's slides [2] ("Long Short Term Memory", with
// W·[h_{t−1}, x_t] split into W h_{t−1} + V x_t) and of [1]. Galvan [3] §2.1.1 eqs.
// 2.1–2.5 give the 1997 LSTM [5], which has no forget gate (f ≡ 1).
//
// Peephole: the uRNN authors' code [4] (models.py, LSTM) feeds the new cell c_t into the
// output gate through a full n×n matrix P ("V_o" there), Glorot-initialised like the other
// matrices; Peephole enables it. (Gers' peepholes [6] are diagonal and reach all gates;
// this is not that.)
//
// Forget-gate bias: b_f starts at ForgetBias, all other biases at 0. The zero value, 0,
// is the default because [1] and the slides [2] give the forget gate no special bias; the
// uRNN code [4] uses 1, which keeps f_t ≈ σ(1) ≈ 0.73 at the start so memory decays more
// slowly than with σ(0) = 0.5. NewURNNCode sets Peephole and ForgetBias = 1, as [4].
//
// State: one [batch, 2n] node, [h | c]. The readout uses h only.
//
// Variables (gate order i, f, o, g along the leading axis of V, W, b):
//
//	"V"  [4, In, N]   input weights, one Glorot-uniform [In, N] matrix per gate ([4] §4, code)
//	"W"  [4, N, N]    recurrent weights, one Glorot-uniform [N, N] matrix per gate
//	"b"  [4, N]       gate biases: 0, except b_f = ForgetBias
//	"P"  [N, N]       output-gate peephole (only with Peephole), Glorot-uniform
//	"U"  [N, Out]     readout, Glorot-uniform;  "bo" [Out] readout bias b_y, 0
//	"h0" [N], "c0" [N]  initial state, learned, starting at 0 (as [4])
//
// Number of parameters (NumParams):
//
//	4·N·(In + N + 1) + N·Out + Out + 2·N   (+ N² with Peephole)
//
// Copy (In 10, N 40, Out 9): 8609, or 10209 with the peephole. Adding (In 2, N 128, Out 1):
// 67457, or 83841 with the peephole. The paper's rough counts (≈ 6.5k for the copy LSTM in
// the ICML version, "about 40K" for adding in the draft's §4.2, [4]) match neither; for
// copy, 4·N² = 6400 is close to 6.5k, so the estimate may count the recurrent matrices only.
//
// Unlike GoMLX's ml/layers/lstm, which keeps h and c as separate nodes (ONNX layout), this
// cell keeps the whole state in one node so that rnn.Unroll, chunked training and the
// gradient analysis treat it like every other model.
//
// References:
//
//	[1] Zaremba, Sutskever, Vinyals, "Recurrent Neural Network Regularization",
//	    arXiv:1409.2329, §3.1.
//	[2] Barber, "Recurrent Neural Nets", lecture slides, "Long Short Term Memory".
//	[3] Galvan, "On Recurrent Neural Networks", thesis, 2015, §2.1.1.
//	[4] Arjovsky, Shah, Bengio, "Unitary Evolution Recurrent Neural Networks", ICML 2016,
//	    §4; code github.com/amarshah/complex_RNN, models.py, LSTM().
//	[5] Hochreiter, Schmidhuber, "Long Short-Term Memory", Neural Computation, 1997.
//	[6] Gers, Schmidhuber, "Recurrent nets that time and count", IJCNN 2000.
//
// Full entries: docs/REFERENCES.md ([Zaremba2014], [Barber], [Galvan2015], [Arjovsky2016],
// [Arjovsky2016code], [Hochreiter1997], [Gers2000]).
package lstm

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// Gate indices along the leading axis of the variables V, W and b.
const (
	GateI    = iota // input gate i
	GateF           // forget gate f
	GateO           // output gate o
	GateG           // candidate g (tanh)
	numGates        // 4
)

// Cell is the LSTM configuration; see the package doc for the equations. The zero value of
// Type means Float32.
type Cell struct {
	In, N, Out int
	Peephole   bool    // output gate also reads c_t through a full N×N matrix P ([4] code)
	ForgetBias float64 // initial value of b_f (0: Zaremba [1]; 1: uRNN code [4])
	// Gaussian draws V, W, P and U from N(0, 1/√n), n the fan-in of each matrix, instead of
	// Glorot-uniform: Henaff et al. §4.1's "The transformation matrices for all models were
	// intialized using a Gaussian distribution with mean 0 and variance 1/√n (where n is the
	// number of incoming connections to each hidden unit)", read literally (the ablation D3 of
	// docs/SETTINGS.md).
	Gaussian bool
	Type     dtypes.DType // zero value: Float32
}

// New returns the Zaremba-variant LSTM [1]: no peephole, forget bias 0.
func New(in, n, out int) *Cell { return &Cell{In: in, N: n, Out: out} }

// NewURNNCode returns the LSTM of the uRNN authors' code [4]: output-gate peephole and
// forget-gate bias 1.
func NewURNNCode(in, n, out int) *Cell {
	return &Cell{In: in, N: n, Out: out, Peephole: true, ForgetBias: 1}
}

// Sizes implements rnn.Cell: the state is [h | c], 2N wide.
func (c *Cell) Sizes() rnn.Sizes { return rnn.Sizes{In: c.In, State: 2 * c.N, Out: c.Out} }

// DType implements rnn.Cell.
func (c *Cell) DType() dtypes.DType { return rnn.OrFloat32(c.Type) }

// NumParams returns 4·N·(In + N + 1) + N·Out + Out + 2·N, plus N² with Peephole.
func (c *Cell) NumParams() int {
	p := numGates*c.N*(c.In+c.N+1) + c.N*c.Out + c.Out + 2*c.N
	if c.Peephole {
		p += c.N * c.N
	}
	return p
}

// check returns an error naming the first invalid field.
func (c *Cell) check() error {
	if err := rnn.CheckSizes("lstm.Cell", "In", c.In, "N", c.N, "Out", c.Out); err != nil {
		return err
	}
	if math.IsNaN(c.ForgetBias) || math.IsInf(c.ForgetBias, 0) {
		return fmt.Errorf("lstm.Cell: ForgetBias = %g, want a finite value", c.ForgetBias)
	}
	return rnn.CheckDType("lstm.Cell", c.DType())
}

// variables lists the cell's variables (see rnn.Var); with rng nil the values are left
// out (used by Build to check shapes).
func (c *Cell) variables(rng *rand.Rand) []rnn.Var {
	n := c.N
	// matrix draws k fanIn × fanOut matrices one after the other (gate-major for k = numGates).
	matrix := func(k, fanIn, fanOut int) []float64 {
		if c.Gaussian {
			return rnn.Gaussian(rng, k*fanIn*fanOut, math.Pow(float64(fanIn), -0.25))
		}
		return rnn.GlorotUniformStack(rng, k, fanIn, fanOut)
	}
	perGate := func(fanIn int) []float64 { return matrix(numGates, fanIn, n) }
	vars := []rnn.Var{
		{Name: "V", Dims: []int{numGates, c.In, n}, Values: perGate(c.In)},
		{Name: "W", Dims: []int{numGates, n, n}, Values: perGate(n)},
	}
	if c.Peephole {
		vars = append(vars, rnn.Var{Name: "P", Dims: []int{n, n}, Values: matrix(1, n, n)})
	}
	b := make([]float64, numGates*n)
	for j := range n {
		b[GateF*n+j] = c.ForgetBias
	}
	return append(vars,
		rnn.Var{Name: "b", Dims: []int{numGates, n}, Values: b},
		rnn.Var{Name: "U", Dims: []int{n, c.Out}, Values: matrix(1, n, c.Out)},
		rnn.Var{Name: "bo", Dims: []int{c.Out}, Values: make([]float64, c.Out)},
		rnn.Var{Name: "h0", Dims: []int{n}, Values: make([]float64, n)},
		rnn.Var{Name: "c0", Dims: []int{n}, Values: make([]float64, n)},
	)
}

// Init implements rnn.Cell: it creates the variables listed in the package doc. It returns
// an error naming the field when In, N or Out is < 1, ForgetBias is not finite, or Type is
// neither Float32 nor Float64.
func (c *Cell) Init(scope *model.Scope, rng *rand.Rand) error {
	if err := c.check(); err != nil {
		return err
	}
	return rnn.CreateVariables(scope, c.DType(), c.variables(rng))
}

// Build implements rnn.Cell. It panics if Init was not called or created variables of
// other shapes (a different configuration). Hoisted out of the time loop: V and W
// rearranged to [In, 4N] and [N, 4N] (gate blocks i|f|o|g side by side), b flattened to
// [4N], and the initial state [h0 | c0].
func (c *Cell) Build(scope *model.Scope, g *Graph) rnn.Step {
	nodes := rnn.ReadVariables(scope, g, c.variables(nil), c)
	n := c.N
	s := &step{
		n:  n,
		v:  Reshape(TransposeAllAxes(nodes["V"], 1, 0, 2), c.In, numGates*n),
		w:  Reshape(TransposeAllAxes(nodes["W"], 1, 0, 2), n, numGates*n),
		b:  Reshape(nodes["b"], numGates*n),
		p:  nodes["P"],
		u:  nodes["U"],
		bo: nodes["bo"],
		s0: Concatenate([]*Node{nodes["h0"], nodes["c0"]}, 0),
	}
	s.wT = Transpose(s.w, 0, 1)
	if s.p != nil {
		s.pT = Transpose(s.p, 0, 1)
	}
	return s
}

type step struct {
	n                     int
	v, w, b, p, u, bo, s0 *Node // p is nil without Peephole
	wT, pT                *Node // Wᵀ and Pᵀ, for rnn.Times
}

// Initial returns [h0 | c0] broadcast to [batch, 2N].
func (s *step) Initial(batch int) *Node {
	return BroadcastToDims(InsertAxes(s.s0, 0), batch, 2*s.n)
}

// Project returns V x_t + b for every step of x (rnn.Step) and gate, [batch, T, 4N] or
// [batch, 4N] (blocks i|f|o|g).
func (s *step) Project(x *Node) *Node {
	return Add(rnn.ProjectInputs(x, s.v), ExpandLeftToRank(s.b, x.Rank()))
}

// Next advances [h | c] by one step; px is [batch, 4N] from Project.
func (s *step) Next(state, px *Node) *Node {
	n := s.n
	h := SliceAxis(state, 1, AxisRange(0, n))
	c := SliceAxis(state, 1, AxisRange(n, 2*n))
	z := Add(px, rnn.Times(h, s.wT)) // [batch, 4N]: pre-activations of i, f, o, g
	var gates *Node                  // sigmoid of i, f (and o without peephole)
	if s.p == nil {
		gates = Sigmoid(SliceAxis(z, 1, AxisRange(0, 3*n)))
	} else {
		gates = Sigmoid(SliceAxis(z, 1, AxisRange(0, 2*n)))
	}
	i := SliceAxis(gates, 1, AxisRange(GateI*n, GateI*n+n))
	f := SliceAxis(gates, 1, AxisRange(GateF*n, GateF*n+n))
	g := Tanh(SliceAxis(z, 1, AxisRange(GateG*n, GateG*n+n)))
	c = Add(Mul(f, c), Mul(i, g))
	var o *Node
	if s.p == nil {
		o = SliceAxis(gates, 1, AxisRange(GateO*n, GateO*n+n))
	} else {
		o = Sigmoid(Add(SliceAxis(z, 1, AxisRange(GateO*n, GateO*n+n)), rnn.Times(c, s.pT)))
	}
	h = Mul(o, Tanh(c))
	return Concatenate([]*Node{h, c}, 1)
}

// Readout returns U h + b_y for states [..., 2N] (h is the first half), [..., Out].
func (s *step) Readout(states *Node) *Node {
	h := SliceAxis(states, -1, AxisRange(0, s.n))
	return Add(MatMul(h, s.u), ExpandLeftToRank(s.bo, states.Rank()))
}
