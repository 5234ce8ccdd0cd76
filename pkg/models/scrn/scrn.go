// Package scrn is the structurally constrained recurrent network (SCRN) of Mikolov, Joulin,
// Chopra, Mathieu and Ranzato [1] §3, as presented in Galvan's thesis [2] §2.1.3 (eqs.
// 2.11–2.14), written as an rnn.Cell. Beside a sigmoid hidden layer h of N units it keeps S
// context units s that change slowly: their recurrent matrix is fixed to αI and they have
// no nonlinearity, so the gradient through them decays as α^k and neither vanishes through
// σ' nor mixes with other units:
//
//	s_t = (1 − α) B x_t + α s_{t−1}            context (slow) units, α fixed
//	h_t = σ(P s_t + A x_t + R h_{t−1})         hidden units, σ the logistic sigmoid
//	y_t = U h_t + V s_t + b_o                  readout (logits or regression values)
//
// [2] eq. 2.15, after [1], also lets each context unit learn its own α through a sigmoid;
// this cell keeps α fixed, one value for all units, α = 0.95 by default as in [1] (the
// authors' code [3] likewise keeps the 0.95·I block fixed by zeroing its gradient). The
// papers' y_t has no bias; b_o is added (zero at initialisation), as in every other cell of
// this project. The hidden layer has no bias, as in [1] and [3].
//
// Seen as one recurrent layer over [h; s] ([2] eq. 2.14) the SCRN is a sigmoid RNN whose
// recurrent matrix is constrained to a block form. In this package's row-vector code
// (h·R), with P s_t = α P s_{t−1} + (1 − α) P B x_t:
//
//	[z_t | s_t] = [h_{t−1} | s_{t−1}] · ⎡ R    0  ⎤ + x_t · [A + (1 − α) B P | (1 − α) B]
//	                                   ⎣ α P  α I ⎦
//	h_t = σ(z_t)
//
// which is how the graph computes it: the input term for every step in one einsum
// (Project), one [N+S, N+S] matrix product per step (Next).
//
// State: one [batch, N+S] node, [h | s], starting at h_0 = s_0 = 0 (not learned; the
// authors' code [3] starts both at the constant 0.1).
//
// Variables (row-vector orientation, x·A):
//
//	"A" [In, N]    input to hidden        "B" [In, S]    input to context
//	"P" [S, N]     context to hidden      "R" [N, N]     hidden to hidden
//	"U" [N, Out]   hidden to output       "V" [S, Out]   context to output
//	"bo" [Out]     readout bias, 0
//
// Initialisation: A, B, P, R, U and V Glorot-uniform [4], each with its own fan-in and
// fan-out, b_o zero: as the uRNN paper's code [5] initialises the tanh RNN and the LSTM that
// the SCRN is compared with here, so that the comparisons on copy and adding differ in the
// architecture and not in the initialisation. The authors' code [3] (util.lua, initSCRNN)
// instead draws every weight from N(0, 0.05²) and starts the decoder (U, V) at zero, for
// language models with one-hot inputs over a vocabulary.
//
// Number of parameters (NumParams):
//
//	In·(N + S) + S·N + N² + (N + S)·Out + Out
//
// The uRNN paper [5] has no SCRN baseline. With N as its tanh RNN (80 on copy, 128 on
// adding) and S = 40 context units: copy (In 10, Out 9) 11889, adding (In 2, Out 1) 22009.
//
// References:
//
//	[1] Mikolov, Joulin, Chopra, Mathieu, Ranzato, "Learning Longer Memory in Recurrent
//	    Neural Networks", ICLR 2015 workshop, arXiv:1412.7753, §3.
//	[2] Galvan, "On Recurrent Neural Networks", thesis, 2015, §2.1.3.
//	[3] The authors' Torch code, github.com/facebookarchive/SCRNNs (mfactory.lua, util.lua,
//	    options.lua).
//	[4] Glorot, Bengio, "Understanding the Difficulty of Training Deep Feedforward Neural
//	    Networks", AISTATS 2010.
//	[5] Arjovsky, Shah, Bengio, "Unitary Evolution Recurrent Neural Networks", ICML 2016,
//	    §4; code github.com/amarshah/complex_RNN.
//
// Full entries: docs/REFERENCES.md ([Mikolov2015], [Galvan2015], [Mikolov2015code],
// [Glorot2010], [Arjovsky2016], [Arjovsky2016code]).
package scrn

import (
	"fmt"
	"math/rand/v2"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// DefaultAlpha is α, the fixed self-connection of the context units in the experiments of
// [1]; a zero Cell.Alpha means this value.
const DefaultAlpha = 0.95

// Cell is the SCRN configuration; see the package doc for the equations.
type Cell struct {
	In  int // input features per step
	N   int // hidden (fast, sigmoid) units
	S   int // context (slow, linear) units
	Out int // outputs per step
	// Alpha is α, the fixed decay of the context units, in (0, 1); 0 means DefaultAlpha.
	// It is a constant of the graph, not a variable.
	Alpha float64
	Type  dtypes.DType // zero value: Float32
}

// New returns an SCRN with in inputs, n hidden units, s context units, out outputs and
// α = DefaultAlpha.
func New(in, n, s, out int) *Cell { return &Cell{In: in, N: n, S: s, Out: out} }

// Sizes implements rnn.Cell: the state is [h | s], N + S wide.
func (c *Cell) Sizes() rnn.Sizes { return rnn.Sizes{In: c.In, State: c.N + c.S, Out: c.Out} }

// DType implements rnn.Cell.
func (c *Cell) DType() dtypes.DType { return rnn.OrFloat32(c.Type) }

// alpha returns α with the default applied.
func (c *Cell) alpha() float64 {
	if c.Alpha == 0 {
		return DefaultAlpha
	}
	return c.Alpha
}

// NumParams returns the number of trainable parameters,
//
//	In·(N + S) + S·N + N² + (N + S)·Out + Out
//
// (A and B, P, R, U and V, b_o): 11889 for N 80, S 40 on copy (In 10, Out 9), 22009 for
// N 128, S 40 on adding (In 2, Out 1).
func (c *Cell) NumParams() int {
	return c.In*(c.N+c.S) + c.S*c.N + c.N*c.N + (c.N+c.S)*c.Out + c.Out
}

// variables lists the cell's variables (see rnn.Var); with rng nil the values are left
// out (used by Build to check shapes).
func (c *Cell) variables(rng *rand.Rand) []rnn.Var {
	return []rnn.Var{
		{Name: "A", Dims: []int{c.In, c.N}, Values: rnn.GlorotUniform(rng, c.In, c.N)},
		{Name: "B", Dims: []int{c.In, c.S}, Values: rnn.GlorotUniform(rng, c.In, c.S)},
		{Name: "P", Dims: []int{c.S, c.N}, Values: rnn.GlorotUniform(rng, c.S, c.N)},
		{Name: "R", Dims: []int{c.N, c.N}, Values: rnn.GlorotUniform(rng, c.N, c.N)},
		{Name: "U", Dims: []int{c.N, c.Out}, Values: rnn.GlorotUniform(rng, c.N, c.Out)},
		{Name: "V", Dims: []int{c.S, c.Out}, Values: rnn.GlorotUniform(rng, c.S, c.Out)},
		{Name: "bo", Dims: []int{c.Out}, Values: make([]float64, c.Out)},
	}
}

// check returns an error naming the first invalid field.
func (c *Cell) check() error {
	if err := rnn.CheckSizes("scrn.Cell", "In", c.In, "N", c.N, "S", c.S, "Out", c.Out); err != nil {
		return err
	}
	if a := c.Alpha; !(a >= 0 && a < 1) {
		return fmt.Errorf("scrn.Cell: Alpha = %g, want 0 < Alpha < 1 (0 means DefaultAlpha = %g)", a, DefaultAlpha)
	}
	return rnn.CheckDType("scrn.Cell", c.DType())
}

// Init implements rnn.Cell: it creates the variables listed in the package doc. It returns
// an error naming the field when In, N, S or Out is < 1, Alpha is outside [0, 1) (0 meaning
// DefaultAlpha) or Type is neither Float32 nor Float64.
func (c *Cell) Init(scope *model.Scope, rng *rand.Rand) error {
	if err := c.check(); err != nil {
		return err
	}
	return rnn.CreateVariables(scope, c.DType(), c.variables(rng))
}

// Build implements rnn.Cell. It panics if Init was not called or created variables of
// other shapes (a different configuration). Hoisted out of the time loop (package doc):
// the input matrix [A + (1 − α) B P | (1 − α) B], [In, N+S]; the recurrent matrix
// [[R, 0], [α P, α I]], [N+S, N+S]; the readout matrix [U; V], [N+S, Out].
func (c *Cell) Build(scope *model.Scope, g *Graph) rnn.Step {
	v := rnn.ReadVariables(scope, g, c.variables(nil), c)
	alpha, dt := c.alpha(), c.DType()
	a, b, p, r := v["A"], v["B"], v["P"], v["R"]
	bIn := MulScalar(b, 1-alpha) // (1 − α) B, [In, S]
	alphaI := make([]float64, c.S*c.S)
	for i := range c.S {
		alphaI[i*c.S+i] = alpha
	}
	return &step{
		n:  c.N,
		s:  c.S,
		in: Concatenate([]*Node{Add(a, MatMul(bIn, p)), bIn}, 1), // [In, N+S]
		wT: Transpose(Concatenate([]*Node{
			Concatenate([]*Node{r, Zeros(g, shapes.Make(dt, c.N, c.S))}, 1),
			Concatenate([]*Node{MulScalar(p, alpha), Reshape(ConstAsDType(g, dt, alphaI), c.S, c.S)}, 1),
		}, 0), 0, 1), // the [N+S, N+S] block matrix, transposed for rnn.Times
		u:      Concatenate([]*Node{v["U"], v["V"]}, 0), // [N+S, Out]
		bo:     v["bo"],
		hidden: LessThan(Iota(g, shapes.Make(dtypes.Int32, 1, c.N+c.S), 1), Const(g, int32(c.N))),
	}
}

type step struct {
	n, s          int
	in, wT, u, bo *Node
	hidden        *Node // [1, N+S] bool, true for the hidden units h
}

// Initial returns h_0 = s_0 = 0, [batch, N+S].
func (st *step) Initial(batch int) *Node {
	return Zeros(st.in.Graph(), shapes.Make(st.in.DType(), batch, st.n+st.s))
}

// Project returns x_t · [A + (1 − α) B P | (1 − α) B] for every step of x (rnn.Step),
// [batch, T, N+S] or [batch, N+S]: the input part of the hidden pre-activation and of the new
// context.
func (st *step) Project(x *Node) *Node {
	return rnn.ProjectInputs(x, st.in)
}

// Next returns [h_t | s_t] from [h_{t−1} | s_{t−1}] and px [batch, N+S] from Project:
// [z_t | s_t] in one product with the block matrix, then σ on the first N columns only
// (a Where on a constant mask, fewer nodes per step than slicing and concatenating).
func (st *step) Next(state, px *Node) *Node {
	zs := Add(rnn.Times(state, st.wT), px) // [z_t | s_t]
	return Where(st.hidden, Sigmoid(zs), zs)
}

// Readout returns U h + V s + b_o for states [..., N+S], [..., Out].
func (st *step) Readout(states *Node) *Node {
	return Add(MatMul(states, st.u), ExpandLeftToRank(st.bo, states.Rank()))
}

var _ rnn.DenseW = (*Cell)(nil)

// DenseW implements rnn.DenseW: the recurrent matrix over the state [h | s] of the package
// doc's block form, in the row-vector orientation of the step,
//
//	⎡ R    0  ⎤   (N + S) × (N + S); its eigenvalues are R's and α (S times),
//	⎣ α P  α I ⎦
//
// read from the variables (backend unused). The sigmoid acts on the h columns between steps.
func (c *Cell) DenseW(_ compute.Backend, scope *model.Scope) (re, im [][]float64, err error) {
	r, err := rnn.VariableValues(scope, "R")
	if err != nil {
		return nil, nil, err
	}
	p, err := rnn.VariableValues(scope, "P")
	if err != nil {
		return nil, nil, err
	}
	n, m, alpha := c.N, c.N+c.S, c.alpha()
	w := make([]float64, m*m)
	for i := range n {
		copy(w[i*m:i*m+n], r[i*n:(i+1)*n])
	}
	for k := range c.S {
		for j := range n {
			w[(n+k)*m+j] = alpha * p[k*n+j]
		}
		w[(n+k)*m+n+k] = alpha
	}
	return rnn.Rows(w, m), nil, nil
}
