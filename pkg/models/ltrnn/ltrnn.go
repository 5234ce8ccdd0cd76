package ltrnn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// Sigma selects σ, the nonlinearity between the input and the state ([1] §2.1).
type Sigma int

const (
	// Linear is σ(z) = z: "no nonlinearity", the LT-RNN for categorical inputs ([1] §2.1)
	// and the copy construction of [1] §3.1.1.
	Linear Sigma = iota
	// ReLU is σ(z) = max(z, 0), as in the adding construction of [1] §3.2.1.
	ReLU
	// Tanh is σ(z) = tanh(z).
	Tanh
)

func (s Sigma) String() string {
	switch s {
	case Linear:
		return "Linear"
	case ReLU:
		return "ReLU"
	case Tanh:
		return "Tanh"
	}
	return fmt.Sprintf("Sigma(%d)", int(s))
}

// VInit selects the initialisation of the transition matrix V ([1] §4.1).
type VInit int

const (
	// Orthogonal gives the LT-ORNN: V ~ N(0, 1/N) element-wise, projected to the nearest
	// orthogonal matrix (Orthogonalize).
	Orthogonal VInit = iota
	// Identity gives the LT-IRNN: V = I.
	Identity
)

func (v VInit) String() string {
	switch v {
	case Orthogonal:
		return "Orthogonal"
	case Identity:
		return "Identity"
	}
	return fmt.Sprintf("VInit(%d)", int(v))
}

// Variance selects the variance of the Gaussian initialisation of U, W and W_P, in terms of
// their fan-in n ([1] §4.1: "variance 1/√n").
type Variance int

const (
	// VarianceOneOverN draws N(0, 1/n): standard deviation 1/√n (the default; see Cell).
	VarianceOneOverN Variance = iota
	// VarianceOneOverSqrtN draws N(0, 1/√n), [1]'s words read literally: standard deviation
	// n^(−1/4), n^(1/4) times wider (3.0× for W at N = 80, 1.8× for U on copy, In = 10).
	VarianceOneOverSqrtN
)

// std returns the standard deviation of the Gaussian for fan-in n.
func (v Variance) std(n int) float64 {
	if v == VarianceOneOverSqrtN {
		return math.Pow(float64(n), -0.25)
	}
	return 1 / math.Sqrt(float64(n))
}

// DefaultClipNorm is l, the activation-clipping radius of [1] §4.1 ("In our experiments we
// chose l = 1000"); a zero Cell.ClipNorm means this value.
const DefaultClipNorm = 1000.0

// NoClip as Cell.ClipNorm turns activation clipping off (so does any negative value or +Inf).
const NoClip = -1.0

// Cell is an LT-RNN (see the package doc for the equations):
//
//	h_t = clip_l(V h_{t−1} + σ(U x_t + b)),   y_t = W h_t [+ W_P pool(h_t)] [+ b_y]
//
// where clip_l(h) = h · l / max(‖h‖, l) per example. Shapes (paper orientation): U [N, In],
// b [N], V [N, N], W [Out, N], W_P [Out, N/2], b_y [Out]; the state is h, [batch, N], and
// h_0 = 0. Variables: "U", "b", "V", "W", and "WP" with Pooling, "by" with OutputBias.
//
// Initialisation ([1] §4.1: "The transformation matrices for all models were initialized
// using a Gaussian distribution with mean 0 and variance 1/√n (where n is the number of
// incoming connections to each hidden unit)"): U, W and W_P are drawn from N(0, 1/n) with
// n their fan-in (In, N and N/2), i.e. standard deviation 1/√n. We read the paper's
// "variance 1/√n" as that standard deviation, as this project does for V (a Gaussian of
// variance 1/n before the projection; one text rendering of [1] lost the symbol); Variance
// VarianceOneOverSqrtN reads it literally instead (the ablation D2 of docs/SETTINGS.md). b and
// b_y start at zero. V follows VInit; the Gaussian's
// scale does not matter for Orthogonal, whose projection sets every singular value to 1.
// When Preset is not nil, Init copies its weights instead and ignores VInit and the rng.
type Cell struct {
	In, N, Out int
	Sigma      Sigma // zero value: Linear
	VInit      VInit // zero value: Orthogonal (LT-ORNN)
	// Pooling adds the l2-pooled decoder W_P pool(h_t) ([1] §2.3); it needs an even N.
	Pooling bool
	// OutputBias adds b_y to the readout. [1] eq. 2 has none (and neither do the explicit
	// solutions of [1] §3), so it is off by default; the uRNN paper's baselines have one
	// (rnn.Simple), and a bias lets an LT-RNN output the copy task's blank class without
	// spending a hidden direction on it.
	OutputBias bool
	// ClipNorm is l of the activation clipping ([1] §4.1): 0 means DefaultClipNorm (1000);
	// NoClip, any negative value or +Inf turns clipping off.
	ClipNorm float64
	// Variance is the variance of the Gaussian that draws U, W and W_P, given their fan-in n.
	Variance Variance     // zero value: VarianceOneOverN
	Type     dtypes.DType // zero value: Float32
	// Preset, when not nil, holds the weights Init stores (see FromWeights).
	Preset *Weights
}

// Weights are preset LT-RNN parameters, row-major in the paper's orientation
// (h_t = V h_{t−1} + σ(U x_t + b), y_t = W h_t + W_P pool(h_t) + b_y), for hand-set
// solutions such as those of [1] §3.1.1 and §3.2.1.
type Weights struct {
	U  []float64 // [N, In]
	V  []float64 // [N, N]
	W  []float64 // [Out, N]
	B  []float64 // [N]; nil means zero
	WP []float64 // [Out, N/2]; not nil turns Pooling on
	BY []float64 // [Out]; not nil turns OutputBias on
}

// NewORNN returns the LT-ORNN of [1] §4.1 (V initialised to a random orthogonal matrix)
// with σ = Linear; set Sigma for ReLU or tanh inputs, Pooling for the l2-pooled decoder.
func NewORNN(in, n, out int) *Cell { return &Cell{In: in, N: n, Out: out, VInit: Orthogonal} }

// NewIRNN returns the LT-IRNN of [1] §4.1 (V initialised to the identity) with σ = Linear.
func NewIRNN(in, n, out int) *Cell { return &Cell{In: in, N: n, Out: out, VInit: Identity} }

// FromWeights returns an LT-RNN that runs the given weights (paper orientation, see
// Weights): N comes from len(V) = N², In from len(U) = N·In, Out from len(W) = Out·N;
// Pooling is on when w.WP is not nil and OutputBias when w.BY is not nil. Clipping is off
// (ClipNorm = NoClip), since the explicit solutions of [1] §3 are exact linear maps whose
// states exceed norm 1000 at long T; set ClipNorm to turn it on. Init stores the weights
// (the rng may be nil). It returns an error naming the first field of w whose length fits
// no size.
func FromWeights(sigma Sigma, w Weights) (*Cell, error) {
	n := int(math.Round(math.Sqrt(float64(len(w.V)))))
	if n < 1 || n*n != len(w.V) {
		return nil, fmt.Errorf("ltrnn: FromWeights: Weights.V has %d values, want N·N for some N >= 1", len(w.V))
	}
	if len(w.U) == 0 || len(w.U)%n != 0 {
		return nil, fmt.Errorf("ltrnn: FromWeights: Weights.U has %d values, want N·In = %d·In with In >= 1", len(w.U), n)
	}
	if len(w.W) == 0 || len(w.W)%n != 0 {
		return nil, fmt.Errorf("ltrnn: FromWeights: Weights.W has %d values, want Out·N = Out·%d with Out >= 1", len(w.W), n)
	}
	c := &Cell{
		In: len(w.U) / n, N: n, Out: len(w.W) / n, Sigma: sigma,
		Pooling: w.WP != nil, OutputBias: w.BY != nil, ClipNorm: NoClip, Preset: &w,
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return c, nil
}

// Sizes implements rnn.Cell: the state is h, N floats.
func (c *Cell) Sizes() rnn.Sizes { return rnn.Sizes{In: c.In, State: c.N, Out: c.Out} }

// DType implements rnn.Cell.
func (c *Cell) DType() dtypes.DType { return rnn.OrFloat32(c.Type) }

// TransitionMatrix implements rnn.Transition: W^rec is V, and σ' = 1 (nil): the transition
// h ↦ V h + σ(U x + b) is linear in h (σ acts on the input), and activation clipping only
// shrinks it (its Jacobian has norm l/‖h‖ < 1 where it acts).
func (c *Cell) TransitionMatrix() (string, func(h float64) float64) { return "V", nil }

var _ rnn.Transition = (*Cell)(nil)

// NumParams returns the number of trainable parameters (the formula of the package doc):
// N·In + N + N² + Out·N, plus Out·N/2 with Pooling and Out with OutputBias.
func (c *Cell) NumParams() int {
	p := c.N*c.In + c.N + c.N*c.N + c.Out*c.N
	if c.Pooling {
		p += c.Out * (c.N / 2)
	}
	if c.OutputBias {
		p += c.Out
	}
	return p
}

// clipNorm returns l and whether clipping is on.
func (c *Cell) clipNorm() (float64, bool) {
	switch l := c.ClipNorm; {
	case l == 0:
		return DefaultClipNorm, true
	case l < 0 || math.IsInf(l, 1):
		return 0, false
	default:
		return l, true
	}
}

// check returns an error naming the first invalid field.
func (c *Cell) check() error {
	if err := rnn.CheckSizes("ltrnn", "In", c.In, "N", c.N, "Out", c.Out); err != nil {
		return err
	}
	if c.Sigma < Linear || c.Sigma > Tanh {
		return fmt.Errorf("ltrnn: Sigma = %d, want Linear (0), ReLU (1) or Tanh (2)", int(c.Sigma))
	}
	if c.VInit < Orthogonal || c.VInit > Identity {
		return fmt.Errorf("ltrnn: VInit = %d, want Orthogonal (0) or Identity (1)", int(c.VInit))
	}
	if c.Variance < VarianceOneOverN || c.Variance > VarianceOneOverSqrtN {
		return fmt.Errorf("ltrnn: Variance = %d, want VarianceOneOverN (0) or VarianceOneOverSqrtN (1)", int(c.Variance))
	}
	if c.Pooling && c.N%2 != 0 {
		return fmt.Errorf("ltrnn: N = %d is odd, want an even N with Pooling (pool size and stride 2)", c.N)
	}
	if math.IsNaN(c.ClipNorm) {
		return fmt.Errorf("ltrnn: ClipNorm = NaN, want > 0, 0 (default %g) or NoClip", DefaultClipNorm)
	}
	if err := rnn.CheckDType("ltrnn", c.DType()); err != nil {
		return err
	}
	if c.Preset == nil {
		return nil
	}
	w := c.Preset
	for _, f := range []struct {
		name     string
		values   []float64
		want     int
		optional bool // nil allowed
		allowed  bool // may be set at all
	}{
		{"U", w.U, c.N * c.In, false, true},
		{"V", w.V, c.N * c.N, false, true},
		{"W", w.W, c.Out * c.N, false, true},
		{"B", w.B, c.N, true, true},
		{"WP", w.WP, c.Out * (c.N / 2), true, c.Pooling},
		{"BY", w.BY, c.Out, true, c.OutputBias},
	} {
		switch {
		case f.values == nil && f.optional:
		case f.values != nil && !f.allowed:
			return fmt.Errorf("ltrnn: Preset.%s has %d values but the cell has no %s (set Pooling or OutputBias)",
				f.name, len(f.values), f.name)
		case len(f.values) != f.want:
			return fmt.Errorf("ltrnn: Preset.%s has %d values, want %d (In = %d, N = %d, Out = %d)",
				f.name, len(f.values), f.want, c.In, c.N, c.Out)
		}
	}
	return nil
}

// Init implements rnn.Cell: it validates the configuration (errors name the bad field)
// and creates the variables, drawn from rng as the type doc says, or copied from Preset.
func (c *Cell) Init(scope *model.Scope, rng *rand.Rand) error {
	if err := c.check(); err != nil {
		return err
	}
	var w Weights
	if c.Preset != nil {
		w = *c.Preset
	} else {
		if rng == nil {
			return fmt.Errorf("ltrnn: Init: rng is nil, want a seeded *rand.Rand (or a Preset)")
		}
		w = c.draw(rng)
	}
	if w.B == nil {
		w.B = make([]float64, c.N)
	}
	if c.Pooling && w.WP == nil {
		w.WP = make([]float64, c.Out*(c.N/2))
	}
	if c.OutputBias && w.BY == nil {
		w.BY = make([]float64, c.Out)
	}
	return rnn.CreateVariables(scope, c.DType(), c.variables(w))
}

// variables lists the cell's variables (see rnn.Var) with their values taken from w (nil
// values when only the shapes are needed, as in Build).
func (c *Cell) variables(w Weights) []rnn.Var {
	vars := []rnn.Var{
		{Name: "U", Dims: []int{c.N, c.In}, Values: w.U},
		{Name: "b", Dims: []int{c.N}, Values: w.B},
		{Name: "V", Dims: []int{c.N, c.N}, Values: w.V},
		{Name: "W", Dims: []int{c.Out, c.N}, Values: w.W},
	}
	if c.Pooling {
		vars = append(vars, rnn.Var{Name: "WP", Dims: []int{c.Out, c.N / 2}, Values: w.WP})
	}
	if c.OutputBias {
		vars = append(vars, rnn.Var{Name: "by", Dims: []int{c.Out}, Values: w.BY})
	}
	return vars
}

// draw returns the random initial weights of the type doc; b, WP of a non-pooling cell
// and BY stay nil (zero).
func (c *Cell) draw(rng *rand.Rand) Weights {
	var w Weights
	switch c.VInit {
	case Identity:
		w.V = rnn.IdentityMatrix(c.N)
	default:
		w.V = Orthogonalize(rnn.Gaussian(rng, c.N*c.N, 1/math.Sqrt(float64(c.N))), c.N)
	}
	w.U = rnn.Gaussian(rng, c.N*c.In, c.Variance.std(c.In))
	w.W = rnn.Gaussian(rng, c.Out*c.N, c.Variance.std(c.N))
	if c.Pooling {
		w.WP = rnn.Gaussian(rng, c.Out*(c.N/2), c.Variance.std(c.N/2))
	}
	return w
}
