// Package exprnn is the expRNN of Lezcano-Casado and Martínez-Rubio [1], written as an
// rnn.Cell: a recurrent network whose recurrent matrix is orthogonal by construction, the
// matrix exponential of a skew-symmetric matrix A ([1] §3):
//
//	h_t = σ(W h_{t−1} + V x_t)                       ([1] §5)
//	W   = exp(A),   A = −Aᵀ                          ([1] §3)
//	y_t = U h_t + b_o
//
// with the real modReLU ([1] §5, the real case of the uRNN's modReLU [2] §3.2), per unit,
//
//	σ(z)_i = sign(z_i) · ReLU(|z_i| + b_i),   b ∈ ℝ^N trainable.
//
// There is no input bias: b plays its part, as in [1]'s code. h_0 = 0 and is not learned
// ([1]'s code starts every sequence from zeros). exp maps the skew-symmetric matrices onto
// SO(N) ([1] §3), so W stays orthogonal (det W = 1) whatever the optimiser does to A, and A
// is trained like any other variable, by plain gradient descent (RMSProp in [1]'s
// experiments): the cell is not rnn.Constrained.
//
// States are row vectors, as in [1]'s code (hidden.matmul(B), B = expm(A)) and every cell of
// this project: the graph computes h_{t−1}·W + x_t·V, so the W of the column form above is
// exp(A)ᵀ = exp(−A), the same parametrisation with A ↦ −A.
//
// # Variables
//
//	"V"  [In, N]      input matrix, He-normal N(0, 2/In) ([1]'s code: kaiming_normal_, ReLU gain)
//	"A"  [N(N−1)/2]   the strictly upper triangle of A, row by row (Skew, SkewIndex)
//	"b"  [N]          modReLU bias, U[−0.01, 0.01] ([1]'s code)
//	"U"  [N, Out]     readout, He-normal N(0, 2/N) ([1]'s copying code)
//	"bo" [Out]        readout bias, 0
//
// Only the strictly upper triangle of A is stored, so that the parameter count is the
// dimension of SO(N), N(N−1)/2 ([1]'s code stores a full N×N matrix and uses its upper
// triangle, leaving N(N+1)/2 entries without gradient). Build forms A = Skew(a) with one
// Gather and W = Expm(A) once per graph, outside the time loop; a step is one N×N matmul and
// the modReLU.
//
// A is initialised block-diagonal, with 2×2 blocks [[0, s_k], [−s_k, 0]] on rows and columns
// 2k, 2k+1 (k < ⌊N/2⌋; an odd N leaves the last row and column zero), so that W starts as
// ⌊N/2⌋ plane rotations by the angles s_k ([1] §5; Cell.SkewInit chooses s_k):
//
//   - Henaff (the zero value): s_k ~ U[−π, π], the initialisation [1] names after Henaff et
//     al. [3] (and the default of [1]'s copying code);
//   - Cayley: s_k = −√((1 − cos t_k)/(1 + cos t_k)) = −tan(t_k/2), t_k ~ U[0, π/2], the
//     scoRNN's initialisation [4] (the default of [1]'s MNIST code). Under the Cayley
//     transform of [4] these s_k give rotation angles t_k; under exp, as in [1], the angles
//     are s_k ∈ [−1, 0].
//
// # The exponential
//
// [1] §4 computes exp(A) with Padé approximants and scaling and squaring (its code follows
// Al-Mohy and Higham 2009, choosing the scaling from ‖A‖ at every call), and the gradient as
// a block of the exponential of a 2N×2N matrix. Here Expm is a Taylor polynomial of degree
// TaylorDegree evaluated with matmuls (Paterson–Stockmeyer), followed by a fixed number of
// squarings (Squarings), and GoMLX's autodiff differentiates through it. The number of
// squarings is fixed when the graph is built, so the accuracy holds for ‖A‖₂ ≤ MaxNorm = 40
// (see TaylorDegree for the error bound and the measured errors); both initialisations have
// ‖A‖₂ ≤ π.
//
// # Parameters
//
// Trainable parameters (Cell.NumParams):
//
//	In·N (V) + N(N−1)/2 (A) + N (b) + N·Out (U) + Out (b_o)
//
// At the uRNN paper's copy sizes (In 10, Out 9): 10697 for N = 128, 21764 for N = 190 (the
// size of [1] §5.1); on adding (In 2, Out 1): 8641 for N = 128, 132865 for N = 512.
//
// # Training
//
// [1]'s code trains A with RMSProp at a learning rate ten times smaller than the other
// parameters' (2e-5 against 2e-4 on copy, 7e-5 against 7e-4 on MNIST; its README recommends
// the ratio). Keep ‖A‖₂ within MaxNorm (see TaylorDegree).
//
// References:
//
//	[1] Lezcano-Casado, Martínez-Rubio, "Cheap Orthogonal Constraints in Neural Networks: A
//	    Simple Parametrization of the Orthogonal and Unitary Group", ICML 2019,
//	    arXiv:1901.08428; the authors' code, github.com/Lezcano/expRNN (orthogonal.py,
//	    initialization.py, 1_copying.py, 2_mnist.py).
//	[2] Arjovsky, Shah, Bengio, "Unitary Evolution Recurrent Neural Networks", ICML 2016.
//	[3] Henaff, Szlam, LeCun, "Recurrent Orthogonal Networks and Long-Memory Tasks", ICML 2016.
//	[4] Helfrich, Willmott, Ye, "Orthogonal Recurrent Neural Networks with Scaled Cayley
//	    Transform", ICML 2018, arXiv:1707.09520.
//
// Full entries: docs/REFERENCES.md ([LezcanoCasado2019], [LezcanoCasado2019code],
// [Arjovsky2016], [Henaff2016], [Helfrich2018]).
package exprnn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// SkewInit selects the initialisation of A (see the package doc).
type SkewInit int

const (
	// Henaff draws the rotation angles s_k from U[−π, π] ([1] §5).
	Henaff SkewInit = iota
	// Cayley sets s_k = −√((1 − cos t_k)/(1 + cos t_k)), t_k ~ U[0, π/2] ([1] §5, [4]).
	Cayley
)

func (s SkewInit) String() string {
	switch s {
	case Henaff:
		return "Henaff"
	case Cayley:
		return "Cayley"
	}
	return fmt.Sprintf("SkewInit(%d)", int(s))
}

// Cell is the expRNN configuration; see the package doc for the equations. The zero values of
// SkewInit and Type mean Henaff's initialisation and Float32.
type Cell struct {
	In, N, Out int
	SkewInit   SkewInit // zero value: Henaff
	// LRScaleA is A's learning rate as a multiple of the other variables' (rnn.LRScaled); 0
	// keeps one rate for all, as every model here. The authors' code trains A at a tenth.
	LRScaleA float64
	Type     dtypes.DType // zero value: Float32
}

var _ rnn.LRScaled = (*Cell)(nil)

// LRScales implements rnn.LRScaled: A at LRScaleA, when set.
func (c *Cell) LRScales() map[string]float64 {
	if c.LRScaleA == 0 {
		return nil
	}
	return map[string]float64{"A": c.LRScaleA}
}

// New returns an expRNN with In inputs, N units and Out outputs, with Henaff's initialisation.
func New(in, n, out int) *Cell { return &Cell{In: in, N: n, Out: out} }

// Sizes implements rnn.Cell: the state is h, N wide.
func (c *Cell) Sizes() rnn.Sizes { return rnn.Sizes{In: c.In, State: c.N, Out: c.Out} }

// DType implements rnn.Cell.
func (c *Cell) DType() dtypes.DType { return rnn.OrFloat32(c.Type) }

// NumParams returns the number of trainable parameters,
// In·N + N(N−1)/2 + N + N·Out + Out (V, A, b, U, b_o): 10697 for N = 128 and 21764 for
// N = 190 on copy (In 10, Out 9), 8641 for N = 128 and 132865 for N = 512 on adding (In 2,
// Out 1).
func (c *Cell) NumParams() int {
	return c.In*c.N + NumSkew(c.N) + c.N + c.N*c.Out + c.Out
}

// heNormal returns a fanIn×fanOut matrix (row-major) drawn from N(0, 2/fanIn), PyTorch's
// kaiming_normal_ with the ReLU gain, as [1]'s code draws its input and output matrices.
// A nil rng returns nil, as rnn.Uniform.
func heNormal(rng *rand.Rand, fanIn, fanOut int) []float64 {
	return rnn.Gaussian(rng, fanIn*fanOut, math.Sqrt(2/float64(fanIn)))
}

// skewInit returns the strictly upper triangle of the block-diagonal A of the package doc,
// with the angles s_k drawn as kind says. A nil rng returns nil.
func skewInit(rng *rand.Rand, n int, kind SkewInit) []float64 {
	if rng == nil {
		return nil
	}
	a := make([]float64, NumSkew(n))
	for k := range n / 2 {
		var s float64
		if kind == Cayley {
			t := rng.Float64() * math.Pi / 2
			s = -math.Sqrt((1 - math.Cos(t)) / (1 + math.Cos(t)))
		} else {
			s = -math.Pi + 2*math.Pi*rng.Float64()
		}
		a[SkewIndex(n, 2*k, 2*k+1)] = s
	}
	return a
}

// variables lists the cell's variables (see rnn.Var); with rng nil the values are left out
// (used by Build to check shapes).
func (c *Cell) variables(rng *rand.Rand) []rnn.Var {
	return []rnn.Var{
		{Name: "V", Dims: []int{c.In, c.N}, Values: heNormal(rng, c.In, c.N)},
		{Name: "A", Dims: []int{NumSkew(c.N)}, Values: skewInit(rng, c.N, c.SkewInit)},
		{Name: "b", Dims: []int{c.N}, Values: rnn.Uniform(rng, c.N, -0.01, 0.01)},
		{Name: "U", Dims: []int{c.N, c.Out}, Values: heNormal(rng, c.N, c.Out)},
		{Name: "bo", Dims: []int{c.Out}, Values: make([]float64, c.Out)},
	}
}

// Init implements rnn.Cell: it creates the variables listed in the package doc. It returns
// an error naming the field when In or Out is < 1, N < 2 (SO(1) has no parameter),
// SkewInit is unknown or Type is neither Float32 nor Float64.
func (c *Cell) Init(scope *model.Scope, rng *rand.Rand) error {
	if err := rnn.CheckSizes("exprnn.Cell", "In", c.In, "N", c.N, "Out", c.Out); err != nil {
		return err
	}
	if c.N < 2 {
		return fmt.Errorf("exprnn.Cell: N = %d, want >= 2 (exp(A) of a 1×1 skew-symmetric A is 1: no parameter)", c.N)
	}
	if c.SkewInit != Henaff && c.SkewInit != Cayley {
		return fmt.Errorf("exprnn.Cell: SkewInit = %s, want Henaff or Cayley", c.SkewInit)
	}
	if !(c.LRScaleA >= 0) || math.IsInf(c.LRScaleA, 1) {
		return fmt.Errorf("exprnn.Cell: LRScaleA = %g, want a number > 0, or 0 for one learning rate", c.LRScaleA)
	}
	if err := rnn.CheckDType("exprnn.Cell", c.DType()); err != nil {
		return err
	}
	return rnn.CreateVariables(scope, c.DType(), c.variables(rng))
}

// RecurrentMatrix returns W = exp(Skew(A)), [N, N], from the variable "A" under scope, as
// Build computes it (the step multiplies the state by it on the right, h·W). It panics as
// Build does when Init was not called or created variables of other shapes.
func (c *Cell) RecurrentMatrix(scope *model.Scope, g *Graph) *Node {
	nodes := rnn.ReadVariables(scope, g, c.variables(nil), c)
	return Expm(Skew(nodes["A"], c.N))
}

// Build implements rnn.Cell. It panics if Init was not called or created variables of other
// shapes (another configuration). Hoisted out of the time loop: A = Skew(a), W = Expm(A)
// and b as [1, N].
func (c *Cell) Build(scope *model.Scope, g *Graph) rnn.Step {
	nodes := rnn.ReadVariables(scope, g, c.variables(nil), c)
	return &step{
		n:  c.N,
		dt: c.DType(),
		v:  nodes["V"],
		wT: Transpose(Expm(Skew(nodes["A"], c.N)), 0, 1),
		b:  InsertAxes(nodes["b"], 0),
		u:  nodes["U"],
		bo: nodes["bo"],
	}
}

type step struct {
	n        int
	dt       dtypes.DType
	v, wT, b *Node // wT = Wᵀ, for rnn.Times
	u, bo    *Node
}

// Initial returns h_0 = 0, [batch, N].
func (s *step) Initial(batch int) *Node {
	return Zeros(s.wT.Graph(), shapes.Make(s.dt, batch, s.n))
}

// Project returns x_t·V for every step of x (rnn.Step), [batch, T, N] or [batch, N].
func (s *step) Project(x *Node) *Node { return rnn.ProjectInputs(x, s.v) }

// Next returns σ(h·W + px) with the real modReLU σ(z) = sign(z)·ReLU(|z| + b), computed as
// sign(z)·ReLU(sign(z)·z + b): one matmul and five element-wise nodes (|z| as sign(z)·z
// saves Abs and its gradient's own Sign). |z| needs no ε here (the uRNN's complex modReLU
// divides by |z| + ε and floors |z|² under its square root): nothing is divided, and GoMLX
// takes Sign's derivative as 0, so ∂σ/∂z = ReLU'(|z| + b) and ∂σ/∂b = sign(z)·ReLU'(|z| + b).
// At z_i = 0 the unit is 0 (sign(0) = 0, as torch.sign in [1]'s code), a jump of 2b_i when
// b_i > 0.
func (s *step) Next(h, px *Node) *Node {
	z := Add(rnn.Times(h, s.wT), px)
	sg := Sign(z)
	return Mul(sg, activation.Relu(Add(Mul(sg, z), s.b)))
}

// Readout returns h·U + b_o for states [..., N], [..., Out].
func (s *step) Readout(states *Node) *Node {
	return Add(MatMul(states, s.u), ExpandLeftToRank(s.bo, states.Rank()))
}

var _ rnn.DenseW = (*Cell)(nil)

// DenseW implements rnn.DenseW: W = exp(Skew(A)) as RecurrentMatrix computes it, in one
// graph on backend. (The step multiplies by it on the right, h·W: the transpose of the
// column convention, with the same eigenvalues.)
func (c *Cell) DenseW(backend compute.Backend, scope *model.Scope) (re, im [][]float64, err error) {
	out, err := model.ExecOnce(backend, scope.Store(), func(_ *model.Scope, g *Graph) *Node {
		rnn.LiveVariables(scope.Store(), g)
		return ConvertDType(c.RecurrentMatrix(scope, g), dtypes.Float64)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("exprnn: DenseW: %w", err)
	}
	return rnn.Rows(tensors.MustCopyFlatData[float64](out), c.N), nil, nil
}
