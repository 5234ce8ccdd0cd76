package scornn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// AuthorsLRA is the learning rate of A's RMSProp in the authors' copy and adding scripts
// (the other weights: 1e-3), for Cell.LRA.
const AuthorsLRA = 1e-4

// NoNegOnes, as Cell.NegOnes, gives D = I.
const NoNegOnes = -1

// RMSProp constants of the update of A: TensorFlow 1's RMSPropOptimizer defaults, which the
// authors' code uses (package doc).
const (
	RMSDecay = 0.9   // ρ
	RMSEps   = 1e-10 // ε, inside the square root
	RMSInit  = 1.0   // initial mean square
)

// Cell is the scoRNN of Helfrich, Willmott and Ye (2018) (package doc):
//
//	h_t = modReLU(W h_{t−1} + V x_t),  W = (I + A)^{-1}(I − A) D,  o_t = U h_t + b_o
//
// with a real state h of N units. It implements rnn.Cell, rnn.Constrained (W moves through
// A by Update) and rnn.Transition. Variables (shapes): "W" [N, N] (constrained), "V"
// [In, N], "b" [N], "U" [N, Out], "bo" [Out]; not trained and not read by the graph: "A"
// [N, N], "D" [N], "A_rms" [N, N].
type Cell struct {
	In, N, Out int
	Type       dtypes.DType // zero value: Float32
	// NegOnes is ρ, the number of −1 entries on D's diagonal (the last ρ; the others are
	// +1). The zero value means ⌊N/2⌋, the authors' choice for copy and adding; NoNegOnes
	// (−1) gives D = I.
	NegOnes int
	// LRA is η, the learning rate of A's RMSProp; the zero value means the learning rate the
	// trainer passes to Update. The authors use AuthorsLRA (1e-4) with 1e-3 for the rest.
	LRA float64
}

// New returns the scoRNN with in inputs, n hidden units and out outputs, D with ⌊n/2⌋
// entries −1 and A's learning rate that of the trainer.
func New(in, n, out int) *Cell { return &Cell{In: in, N: n, Out: out} }

// Sizes implements rnn.Cell.
func (c *Cell) Sizes() rnn.Sizes { return rnn.Sizes{In: c.In, State: c.N, Out: c.Out} }

// DType implements rnn.Cell.
func (c *Cell) DType() dtypes.DType { return rnn.OrFloat32(c.Type) }

// Rho returns ρ, the number of −1 entries of D (NegOnes with its default resolved).
func (c *Cell) Rho() int {
	switch c.NegOnes {
	case 0:
		return c.N / 2
	case NoNegOnes:
		return 0
	}
	return c.NegOnes
}

// NumParams returns the number of trainable values (package doc, "Parameters"):
//
//	In·N + N² + N + N·Out + Out
//
// (V, W, b, U, b_o): 18953 at In 10, N 128, Out 9 (copy) and 264193 at In 2, N 512, Out 1
// (adding).
func (c *Cell) NumParams() int { return c.In*c.N + c.N*c.N + c.N + c.N*c.Out + c.Out }

// FreeParams returns the model's degrees of freedom, with A's N(N−1)/2 free entries in
// place of W's N² values: NumParams() − N² + N(N−1)/2.
func (c *Cell) FreeParams() int { return c.NumParams() - c.N*c.N + c.N*(c.N-1)/2 }

// check returns an error naming the first invalid field.
func (c *Cell) check() error {
	if err := rnn.CheckSizes("scornn", "In", c.In, "N", c.N, "Out", c.Out); err != nil {
		return err
	}
	if c.NegOnes < NoNegOnes || c.NegOnes > c.N {
		return fmt.Errorf("scornn: NegOnes = %d, want a count in [0, N = %d] (0: N/2), or NoNegOnes (-1) for D = I", c.NegOnes, c.N)
	}
	if !(c.LRA >= 0) || math.IsInf(c.LRA, 0) {
		return fmt.Errorf("scornn: LRA = %g, want a finite value > 0, or 0 for the trainer's learning rate", c.LRA)
	}
	return rnn.CheckDType("scornn", c.DType())
}

// Init implements rnn.Cell with the initialisation of the authors' code (package doc): A
// block diagonal with rotation angles from U[0, π/2], D with Rho() entries −1 last,
// W = (I + A)^{-1}(I − A)D, V from U[−0.01, 0.01], U Glorot-uniform, b and b_o zero, and
// A's RMSProp mean square at 1. It returns an error naming the field when In, N or Out is
// < 1, NegOnes is outside [−1, N], LRA is negative or not finite, or Type is neither Float32
// nor Float64.
func (c *Cell) Init(scope *model.Scope, rng *rand.Rand) error {
	if err := c.check(); err != nil {
		return err
	}
	vars, err := c.variables(rng)
	if err != nil {
		return err
	}
	return rnn.CreateVariables(scope, c.DType(), vars)
}

// variables lists the cell's variables (see rnn.Var) in creation order, drawn from rng in
// the order A, V, U; with rng nil the values are left out.
func (c *Cell) variables(rng *rand.Rand) ([]rnn.Var, error) {
	n := c.N
	var a, d, w, ms []float64
	if rng != nil {
		a, d = InitialA(rng, n), DiagD(n, c.Rho())
		var err error
		if w, err = CayleyW(n, a, d); err != nil {
			return nil, err
		}
		ms = make([]float64, n*n)
		for i := range ms {
			ms[i] = RMSInit
		}
	}
	return []rnn.Var{
		{Name: "W", Dims: []int{n, n}, Values: w},
		{Name: "V", Dims: []int{c.In, n}, Values: rnn.Uniform(rng, c.In*n, -0.01, 0.01)},
		{Name: "b", Dims: []int{n}, Values: make([]float64, n)},
		{Name: "U", Dims: []int{n, c.Out}, Values: rnn.GlorotUniform(rng, n, c.Out)},
		{Name: "bo", Dims: []int{c.Out}, Values: make([]float64, c.Out)},
		{Name: "A", Dims: []int{n, n}, Values: a, Static: true},
		{Name: "D", Dims: []int{n}, Values: d, Static: true},
		{Name: "A_rms", Dims: []int{n, n}, Values: ms, Static: true},
	}, nil
}

// Build implements rnn.Cell: it reads the variables and hoists Wᵀ (the graph applies W to
// row states, h·Wᵀ), the broadcast bias and modReLU's zero out of the time loop. It panics
// if Init was not called or created variables of other shapes (another configuration).
func (c *Cell) Build(scope *model.Scope, g *Graph) rnn.Step {
	vars, _ := c.variables(nil)
	v := rnn.ReadVariables(scope, g, vars, c)
	return &step{
		cell: c, w: v["W"], V: v["V"], U: v["U"], bo: v["bo"],
		b: InsertAxes(v["b"], 0), zero: ScalarZero(g, c.DType()),
	}
}

// step is a Cell built into one graph.
type step struct {
	cell                 *Cell
	w, V, U, bo, b, zero *Node
}

// Initial is h_0 = 0 (the authors' code: TensorFlow's zero initial state).
func (s *step) Initial(batch int) *Node {
	return Zeros(s.w.Graph(), shapes.Make(s.cell.DType(), batch, s.cell.N))
}

// Project returns V x_t for every step of x (rnn.Step), [batch, T, N] or [batch, N].
func (s *step) Project(x *Node) *Node { return rnn.ProjectInputs(x, s.V) }

// Next is h_t = sign(z) ReLU(|z| + b) with z = W h_{t−1} + V x_t: one matmul and 6
// element-wise nodes.
func (s *step) Next(h, px *Node) *Node {
	z := Add(rnn.Times(h, s.w), px) // h·Wᵀ: rnn.Times takes the matrix transposed
	return Mul(Sign(z), Max(Add(Abs(z), s.b), s.zero))
}

// Readout is o_t = U h_t + b_o.
func (s *step) Readout(states *Node) *Node {
	return Add(MatMul(states, s.U), ExpandLeftToRank(s.bo, states.Rank()))
}

// TransitionMatrix implements rnn.Transition: ∂h_t/∂h_{t−1} = diag(σ'(z_t)) W with
// σ'(z) ∈ {0, 1} for the real modReLU (1 where |z| + b > 0), so σ' is nil.
func (c *Cell) TransitionMatrix() (string, func(h float64) float64) { return "W", nil }

// ConstrainedVariables implements rnn.Constrained: W moves only through A, by Update.
func (c *Cell) ConstrainedVariables() []string { return []string{"W"} }

// Update implements rnn.Constrained with the update of the package doc: ∇_A from ∇_W by
// [1]'s theorem (GradA), one RMSProp step on A with learning rate η = LRA (lr when LRA is
// zero), and W recomputed from A and D (CayleyW). It returns the new "W", "A" and "A_rms".
// It returns an error naming the value when η is not a finite number > 0, the
// configuration is invalid, a value or gradient is missing or has the wrong length, a D
// entry is not ±1, A is not skew-symmetric, or A_rms is not symmetric with finite entries >= 0.
func (c *Cell) Update(lr float64, values, grads map[string][]float64) (map[string][]float64, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	eta := lr
	if c.LRA != 0 {
		eta = c.LRA
	}
	if !(eta > 0) || math.IsInf(eta, 0) {
		return nil, fmt.Errorf("scornn: Update: η = %g (lr = %g, LRA = %g), want a finite value > 0", eta, lr, c.LRA)
	}
	n := c.N
	get := func(m map[string][]float64, kind, name string, size int) ([]float64, error) {
		x, ok := m[name]
		if !ok {
			return nil, fmt.Errorf("scornn: Update: no %s for %q", kind, name)
		}
		if len(x) != size {
			return nil, fmt.Errorf("scornn: Update: %s of %q has %d entries, want %d", kind, name, len(x), size)
		}
		return x, nil
	}
	var in [5][]float64
	for i, s := range []struct {
		m          map[string][]float64
		kind, name string
		size       int
	}{
		{values, "value", "A", n * n}, {values, "value", "D", n}, {values, "value", "W", n * n},
		{values, "value", "A_rms", n * n}, {grads, "gradient", "W", n * n},
	} {
		var err error
		if in[i], err = get(s.m, s.kind, s.name, s.size); err != nil {
			return nil, err
		}
	}
	a, d, w, ms, gw := in[0], in[1], in[2], in[3], in[4]
	for i, x := range ms {
		if !(x >= 0) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("scornn: Update: A_rms[%d][%d] = %g, want a finite value >= 0", i/n, i%n, x)
		}
		if y := ms[(i%n)*n+i/n]; x != y { // symmetric, so that the step keeps A skew-symmetric
			return nil, fmt.Errorf("scornn: Update: A_rms[%d][%d] = %g and A_rms[%d][%d] = %g, want A_rms symmetric", i/n, i%n, x, i%n, i/n, y)
		}
	}
	ga, err := GradA(n, a, d, w, gw)
	if err != nil {
		return nil, err
	}
	newA, newMS := make([]float64, n*n), make([]float64, n*n)
	for i, g := range ga {
		newMS[i] = RMSDecay*ms[i] + (1-RMSDecay)*g*g
		newA[i] = a[i] - eta*g/math.Sqrt(newMS[i]+RMSEps)
	}
	newW, err := CayleyW(n, newA, d)
	if err != nil {
		return nil, err
	}
	return map[string][]float64{"W": newW, "A": newA, "A_rms": newMS}, nil
}

var (
	_ rnn.Cell        = (*Cell)(nil)
	_ rnn.Constrained = (*Cell)(nil)
	_ rnn.Transition  = (*Cell)(nil)
)
