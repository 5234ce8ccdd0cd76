package fcurnn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/urnn"
)

// Cell is the full-capacity uRNN of Wisdom et al. (2016) (package doc):
//
//	h_t = modReLU(W h_{t−1} + V x_t),  W unitary,  o_t = U [Re h_t; Im h_t] + b_o
//
// with a complex hidden state h of N units stored as the real state [Re h | Im h]
// ([batch, 2N]). It implements rnn.Cell and rnn.Constrained (W moves by the Cayley step of
// Update). Variables (shapes): "Wre", "Wim" [N, N] (Re W, Im W; constrained), "V" [In, 2N],
// "b" [N], "U" [2N, Out], "bo" [Out], "h0" [2N].
type Cell struct {
	In, N, Out int
	Type       dtypes.DType // zero value: Float32
	Eps        float64      // modReLU ε; zero value: urnn.DefaultEps (1e-5)
	// LRW is λ, the step size of the Cayley update of W; the zero value means the learning
	// rate the trainer passes to Update (the authors' choice: the optimiser's rate).
	LRW float64
}

// New returns the full-capacity uRNN with in inputs, n complex hidden units and out outputs.
func New(in, n, out int) *Cell { return &Cell{In: in, N: n, Out: out} }

// Sizes implements rnn.Cell: the state holds 2N floats.
func (c *Cell) Sizes() rnn.Sizes { return rnn.Sizes{In: c.In, State: 2 * c.N, Out: c.Out} }

// DType implements rnn.Cell.
func (c *Cell) DType() dtypes.DType { return rnn.OrFloat32(c.Type) }

func (c *Cell) eps() float64 {
	if c.Eps == 0 {
		return urnn.DefaultEps
	}
	return c.Eps
}

// NumParams returns the number of trainable values (package doc, "Parameters"):
//
//	2N·In + 2N·Out + 2N² + 3N + Out
//
// (V, U, Re W and Im W, then b N, h_0 2N, and b_o): 38025 at In 10, N 128, Out 9 (copy)
// and 528897 at In 2, N 512, Out 1 (adding).
func (c *Cell) NumParams() int {
	return 2*c.N*c.In + 2*c.N*c.Out + 2*c.N*c.N + 3*c.N + c.Out
}

// FreeParams returns the number of real degrees of freedom, NumParams() − N²: W ranges over
// U(N), whose dimension is N², not the 2N² values stored (21641 on copy, 266753 on adding).
func (c *Cell) FreeParams() int { return c.NumParams() - c.N*c.N }

// check returns an error naming the first invalid field.
func (c *Cell) check() error {
	if err := rnn.CheckSizes("fcurnn", "In", c.In, "N", c.N, "Out", c.Out); err != nil {
		return err
	}
	if !(c.eps() >= 0) || math.IsInf(c.Eps, 0) {
		return fmt.Errorf("fcurnn: Eps = %g, want a finite value >= 0", c.Eps)
	}
	if !(c.LRW >= 0) || math.IsInf(c.LRW, 0) {
		return fmt.Errorf("fcurnn: LRW = %g, want a finite value > 0, or 0 for the trainer's learning rate", c.LRW)
	}
	return rnn.CheckDType("fcurnn", c.DType())
}

// Init implements rnn.Cell: W is the restricted-capacity uRNN's W at its random
// initialisation, multiplied out (the authors' code; package doc), V and U Glorot-uniform,
// b and b_o zero, h_0 U[−√(3/2N), √(3/2N)] (as package urnn, [2] §3.4). It returns an error
// naming the field when In, N or Out is < 1, Eps or LRW is negative or not finite, or Type
// is neither Float32 nor Float64.
func (c *Cell) Init(scope *model.Scope, rng *rand.Rand) error {
	if err := c.check(); err != nil {
		return err
	}
	return rnn.CreateVariables(scope, c.DType(), c.variables(rng))
}

// variables lists the cell's variables (see rnn.Var) in creation order, drawn from rng in
// the order W's factors (θ, reflections, Π), V, U, h_0; with rng nil the values are left out.
func (c *Cell) variables(rng *rand.Rand) []rnn.Var {
	n := c.N
	var wre, wim []float64
	if rng != nil {
		wre, wim = RestrictedW(rng, n)
	}
	h0 := math.Sqrt(3 / float64(2*n))
	return []rnn.Var{
		{Name: "Wre", Dims: []int{n, n}, Values: wre},
		{Name: "Wim", Dims: []int{n, n}, Values: wim},
		{Name: "V", Dims: []int{c.In, 2 * n}, Values: rnn.GlorotUniform(rng, c.In, 2*n)},
		{Name: "b", Dims: []int{n}, Values: make([]float64, n)},
		{Name: "U", Dims: []int{2 * n, c.Out}, Values: rnn.GlorotUniform(rng, 2*n, c.Out)},
		{Name: "bo", Dims: []int{c.Out}, Values: make([]float64, c.Out)},
		{Name: "h0", Dims: []int{2 * n}, Values: rnn.Uniform(rng, 2*n, -h0, h0)},
	}
}

// Build implements rnn.Cell: it reads the variables and builds, once per graph, the real
// 2N×2N matrix M = [[Re Wᵀ, Im Wᵀ], [−Im Wᵀ, Re Wᵀ]] that applies W to [Re h | Im h] by
// one matmul (kept as Mᵀ = [[Re W, −Im W], [Im W, Re W]] for rnn.Times), and modReLU's constants. It panics if Init was not called or created
// variables of other shapes (another configuration).
func (c *Cell) Build(scope *model.Scope, g *Graph) rnn.Step {
	v := rnn.ReadVariables(scope, g, c.variables(nil), c)
	re, im := v["Wre"], v["Wim"]
	mT := Concatenate([]*Node{
		Concatenate([]*Node{re, Neg(im)}, 1),
		Concatenate([]*Node{im, re}, 1),
	}, 0)
	return &step{cell: c, mT: mT, V: v["V"], U: v["U"], bo: v["bo"], h0: v["h0"], act: urnn.NewModReLU(v["b"], c.eps())}
}

// step is a Cell built into one graph.
type step struct {
	cell             *Cell
	mT, V, U, bo, h0 *Node
	act              func(z *Node) *Node
}

func (s *step) Initial(batch int) *Node {
	return BroadcastToDims(InsertAxes(s.h0, 0), batch, 2*s.cell.N)
}

// Project returns V x_t for every step of x (rnn.Step), [batch, T, 2N] or [batch, 2N] (V complex N×In, stored as the real
// In×2N matrix [Re Vᵀ | Im Vᵀ], [2] §3.2).
func (s *step) Project(x *Node) *Node { return rnn.ProjectInputs(x, s.V) }

// Next is h_t = modReLU(W h_{t−1} + V x_t): one matmul by M, the add, and modReLU.
func (s *step) Next(h, px *Node) *Node { return s.act(Add(rnn.Times(h, s.mT), px)) }

// Readout is o_t = U [Re h_t; Im h_t] + b_o ([2] §3.3).
func (s *step) Readout(states *Node) *Node {
	return Add(MatMul(states, s.U), ExpandLeftToRank(s.bo, states.Rank()))
}

// ConstrainedVariables implements rnn.Constrained: Re W and Im W move by Update only.
func (c *Cell) ConstrainedVariables() []string { return []string{"Wre", "Wim"} }

// Update implements rnn.Constrained with the Cayley step of [1] §4 (package doc):
//
//	G = ∂L/∂Re W + i ∂L/∂Im W,   A = G W^H − W G^H,   W ← (I + (λ/2)A)^{-1} (I − (λ/2)A) W
//
// with λ = LRW, or lr when LRW is zero. It returns the new "Wre" and "Wim". It returns an
// error naming the value when λ is not a finite number > 0, the configuration is invalid,
// or a value or gradient is missing or has the wrong length.
func (c *Cell) Update(lr float64, values, grads map[string][]float64) (map[string][]float64, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	lambda := lr
	if c.LRW != 0 {
		lambda = c.LRW
	}
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return nil, fmt.Errorf("fcurnn: Update: λ = %g (lr = %g, LRW = %g), want a finite value > 0", lambda, lr, c.LRW)
	}
	n := c.N
	var in [4][]float64
	for i, src := range []struct {
		m    map[string][]float64
		kind string
		name string
	}{{values, "value", "Wre"}, {values, "value", "Wim"}, {grads, "gradient", "Wre"}, {grads, "gradient", "Wim"}} {
		x, ok := src.m[src.name]
		if !ok {
			return nil, fmt.Errorf("fcurnn: Update: no %s for %q", src.kind, src.name)
		}
		if len(x) != n*n {
			return nil, fmt.Errorf("fcurnn: Update: %s of %q has %d entries, want N² = %d", src.kind, src.name, len(x), n*n)
		}
		in[i] = x
	}
	re, im, err := CayleyStep(n, lambda, in[0], in[1], in[2], in[3])
	if err != nil {
		return nil, err
	}
	return map[string][]float64{"Wre": re, "Wim": im}, nil
}

var (
	_ rnn.Cell        = (*Cell)(nil)
	_ rnn.Constrained = (*Cell)(nil)
)

var _ rnn.DenseW = (*Cell)(nil)

// DenseW implements rnn.DenseW: W = Wre + i·Wim, read from the variables (backend unused).
func (c *Cell) DenseW(_ compute.Backend, scope *model.Scope) (re, im [][]float64, err error) {
	wre, err := rnn.VariableValues(scope, "Wre")
	if err != nil {
		return nil, nil, err
	}
	wim, err := rnn.VariableValues(scope, "Wim")
	if err != nil {
		return nil, nil, err
	}
	return rnn.Rows(wre, c.N), rnn.Rows(wim, c.N), nil
}
