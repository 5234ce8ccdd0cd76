package urnn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/support/exceptions"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// DefaultEps is the ε of modReLU, σ(z) = ReLU(|z| + b) z/(|z| + ε), as in the authors' code.
const DefaultEps = 1e-5

// Impl selects how the step applies W to the state. All give the same function (up to
// rounding); they differ in speed and graph size.
type Impl int

const (
	// Auto (the zero value) uses Native when the backend supports complex numbers and
	// FFT; otherwise DenseW up to N = 128 (DenseWMaxN) and FourStep above.
	Auto Impl = iota
	// FourStep applies the factors every step with the real-arithmetic four-step DFT:
	// the diagonals as elementwise products, Π as one gather and each reflection as a
	// rank-2 real update, O(n^1.5) per step (package doc, "Implementation").
	FourStep
	// DenseW builds the real 2n×2n matrix of W once per graph (by applying the FourStep
	// factors to the identity) and applies it with one matmul per step: O(n²) per step and
	// the fewest graph nodes.
	DenseW
	// Native applies the factors with graph.FFT on complex tensors. It needs a backend
	// with complex dtypes and FFT (XLA; not the Go backend): Build panics otherwise.
	Native
)

// DenseWMaxN is the largest N for which Auto chooses DenseW on a backend without complex FFT.
const DenseWMaxN = 128

// String implements fmt.Stringer.
func (i Impl) String() string {
	switch i {
	case Auto:
		return "Auto"
	case FourStep:
		return "FourStep"
	case DenseW:
		return "DenseW"
	case Native:
		return "Native"
	}
	return fmt.Sprintf("Impl(%d)", int(i))
}

// Cell is the unitary evolution RNN of Arjovsky, Shah and Bengio (2016) (package doc):
//
//	h_t = modReLU(W h_{t−1} + V x_t),  W = D3 R2 F⁻¹ D2 Π R1 F D1,  o_t = U [Re h_t; Im h_t] + b_o
//
// with a complex hidden state h of N units stored as the real state [Re h | Im h]
// ([batch, 2N]). It implements rnn.Cell. Variables (shapes): "theta" [3, N],
// "reflection" [2, 2, N] (reflection[k] = [Re v_k; Im v_k]), "perm" [N] int32
// (non-trainable), "V" [In, 2N], "b" [N], "U" [2N, Out], "bo" [Out], "h0" [2N].
type Cell struct {
	In, N, Out int
	Type       dtypes.DType // zero value: Float32
	Eps        float64      // modReLU ε; zero value: DefaultEps
	Impl       Impl         // how W is applied; zero value: Auto
	// CodeBound draws V from U[−a, a] with the authors' code's a = √(6/(In + N)) (its V_re and
	// V_im are each an In × N Glorot matrix) instead of [1] §3.4's Glorot bound for the real
	// In × 2N matrix, √(6/(In + 2N)) (0.72× narrower on copy; the ablation D9 of
	// docs/SETTINGS.md).
	CodeBound bool
	// SplitReLU puts σ(z) = ReLU(Re z + b) + i·ReLU(Im z + b) in modReLU's place: ReLU on the
	// real and imaginary parts separately, with the same bias b on both, the nonlinearity of
	// earlier complex-valued networks that [1] §3.2 found "tended to lead to poor performance"
	// (the claim arjovsky-modrelu). Its output lies in the closed first quadrant: it changes
	// arg z wherever Re z + b < 0 or Im z + b < 0, where modReLU only rescales |z|.
	SplitReLU bool
}

// New returns the uRNN with in inputs, n complex hidden units and out outputs.
func New(in, n, out int) *Cell { return &Cell{In: in, N: n, Out: out} }

// Sizes implements rnn.Cell: the state holds 2N floats.
func (c *Cell) Sizes() rnn.Sizes { return rnn.Sizes{In: c.In, State: 2 * c.N, Out: c.Out} }

// DType implements rnn.Cell.
func (c *Cell) DType() dtypes.DType { return rnn.OrFloat32(c.Type) }

func (c *Cell) eps() float64 {
	if c.Eps == 0 {
		return DefaultEps
	}
	return c.Eps
}

// NumParams returns the number of trainable parameters (package doc, "Parameters"):
//
//	2N·In + 2N·Out + 10N + Out
//
// (V, U, then θ 3N, reflections 4N, b N, h_0 2N, and b_o).
func (c *Cell) NumParams() int { return 2*c.N*c.In + 2*c.N*c.Out + 10*c.N + c.Out }

// Init implements rnn.Cell with the initialisation of [1] §3.4: V and U Glorot-uniform,
// b and b_o zero, reflection vectors U[−1, 1], θ U[−π, π], h_0 U[−√(3/2N), √(3/2N)]
// (so that E‖h_0‖² = 1), and Π a uniformly random permutation, all drawn from rng.
func (c *Cell) Init(scope *model.Scope, rng *rand.Rand) error {
	if err := rnn.CheckSizes("urnn", "In", c.In, "N", c.N, "Out", c.Out); err != nil {
		return err
	}
	if c.eps() < 0 {
		return fmt.Errorf("urnn: Eps = %g, want >= 0", c.Eps)
	}
	if c.Impl < Auto || c.Impl > Native {
		return fmt.Errorf("urnn: Impl = %d, want Auto, FourStep, DenseW or Native", int(c.Impl))
	}
	if err := rnn.CheckDType("urnn", c.DType()); err != nil {
		return err
	}
	return rnn.CreateVariables(scope, c.DType(), c.variables(rng))
}

// inputMatrix draws V, [In, 2N] (see CodeBound).
func (c *Cell) inputMatrix(rng *rand.Rand) []float64 {
	if c.CodeBound {
		a := math.Sqrt(6 / float64(c.In+c.N))
		return rnn.Uniform(rng, c.In*2*c.N, -a, a)
	}
	return rnn.GlorotUniform(rng, c.In, 2*c.N)
}

// variables lists the cell's variables (see rnn.Var) in creation order, drawn from rng in
// the order θ, reflections, V, U, h_0, Π; with rng nil the values are left out (used by
// Build to check shapes). Π is an Int32 variable that Build reads as a Go value (Static).
func (c *Cell) variables(rng *rand.Rand) []rnn.Var {
	n := c.N
	h0 := math.Sqrt(3 / float64(2*n))
	return []rnn.Var{
		{Name: "theta", Dims: []int{3, n}, Values: rnn.Uniform(rng, 3*n, -math.Pi, math.Pi)},
		{Name: "reflection", Dims: []int{2, 2, n}, Values: rnn.Uniform(rng, 4*n, -1, 1)},
		{Name: "V", Dims: []int{c.In, 2 * n}, Values: c.inputMatrix(rng)},
		{Name: "b", Dims: []int{n}, Values: make([]float64, n)},
		{Name: "U", Dims: []int{2 * n, c.Out}, Values: rnn.GlorotUniform(rng, 2*n, c.Out)},
		{Name: "bo", Dims: []int{c.Out}, Values: make([]float64, c.Out)},
		{Name: "h0", Dims: []int{2 * n}, Values: rnn.Uniform(rng, 2*n, -h0, h0)},
		{Name: "perm", Dims: []int{n}, Values: permutation(rng, n), DType: dtypes.Int32, Static: true},
	}
}

// permutation returns a uniformly random permutation of 0..n−1 drawn from rng (nil for a
// nil rng).
func permutation(rng *rand.Rand, n int) []float64 {
	if rng == nil {
		return nil
	}
	p := make([]float64, n)
	for i, x := range rng.Perm(n) {
		p[i] = float64(x)
	}
	return p
}

// Perm returns the permutation Π stored under scope by Init: (Π h)_j = h_{perm[j]}.
// It panics if Init was not called or the variable is not a permutation of 0..N−1.
func (c *Cell) Perm(scope *model.Scope) []int {
	v := scope.GetVariable("perm")
	if v == nil {
		exceptions.Panicf("urnn: variable %s/perm does not exist: call the cell's Init before Build", scope.Scope())
	}
	p := tensors.MustCopyFlatData[int32](v.MustValue())
	if len(p) != c.N {
		exceptions.Panicf("urnn: variable perm has %d entries, want N = %d", len(p), c.N)
	}
	seen := make([]bool, c.N)
	out := make([]int, c.N)
	for i, x := range p {
		if x < 0 || int(x) >= c.N || seen[x] {
			exceptions.Panicf("urnn: perm[%d] = %d is out of [0, %d) or repeated: not a permutation", i, x, c.N)
		}
		seen[x] = true
		out[i] = int(x)
	}
	return out
}

// Build implements rnn.Cell: it reads the variables, computes cos θ, sin θ and the
// normalised reflection vectors once, and prepares the implementation of W chosen by
// c.Impl (for DenseW, the 2N×2N matrix of W). It panics if Init was not called, or if
// Impl is Native on a backend without complex FFT.
func (c *Cell) Build(scope *model.Scope, g *Graph) rnn.Step {
	impl, err := c.resolveImpl(g.Backend())
	if err != nil {
		exceptions.Panicf("%v", err) // through exceptions, so that an Exec reports it instead of hanging
	}
	v := rnn.ReadVariables(scope, g, c.variables(nil), c)
	s := &step{cell: c, impl: impl, U: v["U"], bo: v["bo"], h0: v["h0"]}
	s.w = newUnitary(c.N, v["theta"], v["reflection"], v["V"], c.Perm(scope), impl)
	if c.SplitReLU {
		s.act = splitReLU(v["b"])
	} else {
		s.act = newModReLU(v["b"], c.eps()).apply
	}
	return s
}

// resolveImpl returns the implementation Build uses on backend.
func (c *Cell) resolveImpl(backend compute.Backend) (Impl, error) {
	native := NativeSupported(backend, c.DType())
	switch {
	case c.Impl == Native && !native:
		return c.Impl, fmt.Errorf("urnn: Impl = Native, but backend %q has no complex FFT for %s; use Auto, FourStep or DenseW",
			backend.Name(), c.DType())
	case c.Impl == Auto && native:
		return Native, nil
	case c.Impl == Auto && c.N <= DenseWMaxN:
		return DenseW, nil
	case c.Impl == Auto:
		return FourStep, nil
	}
	return c.Impl, nil
}

// step is a Cell built into one graph.
type step struct {
	cell      *Cell
	impl      Impl
	U, bo, h0 *Node
	w         *unitary
	act       func(z *Node) *Node // σ: modReLU, or the split ReLU (Cell.SplitReLU)
}

func (s *step) Initial(batch int) *Node {
	return BroadcastToDims(InsertAxes(s.h0, 0), batch, 2*s.cell.N)
}

// Project returns the inputs x unchanged (rnn.Step): Next applies V ([1] §3.2: V is complex
// N×In, stored as the real In×2N matrix [Re Vᵀ | Im Vᵀ]) together with W.
func (s *step) Project(x *Node) *Node { return x }

// Next is h_t = σ(W h_{t−1} + V x_t) ([1] §3.1–3.2), σ modReLU (or the split ReLU), for x_t
// [batch, In].
func (s *step) Next(h, x *Node) *Node { return s.act(s.w.apply(h, x)) }

// Readout is o_t = U [Re h_t; Im h_t] + b_o ([1] §3.3).
func (s *step) Readout(states *Node) *Node {
	return Add(MatMul(states, s.U), ExpandLeftToRank(s.bo, states.Rank()))
}
