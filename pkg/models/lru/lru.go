// Package lru is the Linear Recurrent Unit of Orvieto, Smith, Gu, Fernando, Gulcehre, Pascanu
// and De [1] §3, one layer written as an rnn.Cell: a linear recurrence with a complex diagonal
// transition, so that information decays (or persists) per unit at a rate set by |λ_j|:
//
//	x_t = Λ x_{t−1} + γ ⊙ (B u_t),      Λ = diag(λ),  x ∈ ℂ^N       ([1] §3)
//	y_t = Re(C x_t) + b_o
//	λ_j = exp(−ν_j + i·θ_j),   ν_j = exp(ν^log_j),  θ_j = exp(θ^log_j),  γ_j = exp(γ^log_j)
//
// The trained parameters of Λ are ν^log_j = log ν_j and θ^log_j = log θ_j ([1] §3.3, the
// "stable exponential parameterisation": |λ_j| = exp(−exp(ν^log_j)) lies in (0, 1) for every
// real ν^log_j, so no update can make the recurrence unstable), and γ^log_j, the log of the
// input normalisation γ_j of [1] §3.4, trained as in the authors' code ([1] appendix A).
//
// # What is left out
//
// The paper's y_t = Re(C x_t) + D u_t has a skip term D u_t (D real; in the authors' code a
// vector multiplying u_t element-wise, the layer mapping H features to H). rnn.Step's Readout
// sees only the states, not u_t, so D is left out. It could come back by carrying u_t in the
// state ([Re x | Im x | u], 2N + In wide, Next copying the projected u_t through), at the cost
// of a state that is not the recurrence's alone (the gradient analysis and chunked training
// read the whole state). In its place y_t has a bias b_o (zero at initialisation), as every
// other cell of this project.
//
// The LRU of [1] is one block of a deep network (a linear encoder, then layers of
// normalisation, LRU, a position-wise MLP or GLU and a skip connection): Cell is the
// recurrent layer alone, with a linear readout, so the whole model is a linear time-invariant
// filter of its inputs; Block is the network's layer (block.go), and package stack stacks
// blocks into the deep network. On the adding task the Cell cannot form the product of marker
// and value that the target needs: the best such filter predicts each half's marked value by
// the mean of that half's values, an MSE of (1/6)(1 − 2/T), 0.160 at T = 50 against the
// baseline 1/6.
//
// # Initialisation
//
// [1] §3.3 (Lemma 3.2, "ring initialisation"), with u1, u2 independent and uniform on [0, 1]:
//
//	ν_j = −½ log(u1 (r_max² − r_min²) + r_min²),   θ_j = max_phase · u2,
//
// so that |λ_j| = exp(−ν_j) = r_j with r_j² uniform on [r_min², r_max²] — λ uniform over the
// area of the ring r_min ≤ |λ| ≤ r_max — and arg λ_j uniform on [0, max_phase]; stored as
// ν^log = log ν, θ^log = log θ. Defaults r_min = 0.9, r_max = 0.999 (eigenvalues near the unit
// circle, as [1] §3.4 asks for long-range reasoning) and max_phase = 2π (the full circle; [1]
// §3.4 restricts it to π/10 on PathX). γ_j = √(1 − |λ_j|²) ([1] §3.4: the normalisation that
// keeps E|x_t|² at the scale of E|B u_t|² for white-noise inputs), stored as
// γ^log_j = ½ log(1 − r_j²).
//
// B and C are complex (real pairs) with Glorot-like normal entries as in [1] appendix A:
// Re B, Im B ~ N(0, 1/(2·In)) (a Glorot-like 1/fan-in variance for the complex entry, halved
// for each part: the authors' note says the factor 2 makes up for the state variance lost when
// the readout takes a real part), Re C, Im C ~ N(0, 1/N). b_o = 0.
//
// # Layout
//
// Complex numbers are real pairs (the Go backend has no complex dtype): the state is
// [batch, 2N] = [Re x | Im x], x_0 = 0 (not learned). Variables, in the project's row-vector
// orientation (u·B):
//
//	"nu_log"    [N]        ν^log = log ν
//	"theta_log" [N]        θ^log = log θ
//	"gamma_log" [N]        γ^log = log γ
//	"B_re", "B_im" [In, N] Re Bᵀ, Im Bᵀ
//	"C_re", "C_im" [N, Out] Re Cᵀ, Im Cᵀ
//	"bo"        [Out]      readout bias, 0
//
// Build computes λ, γ and the two matrices once per graph: the input matrix
// [γ ⊙ Re Bᵀ | γ ⊙ Im Bᵀ], [In, 2N] (Project, one matmul for all steps), and the readout
// [Re Cᵀ; −Im Cᵀ], [2N, Out] (Re(C x) = Re C Re x − Im C Im x). Next multiplies by λ
// element-wise, O(N) work a step:
//
//	[Re x | Im x] ⊙ [Re λ | Re λ] + [Im x | Re x] ⊙ [−Im λ | Im λ] + γ ⊙ B u_t
//
// in 7 graph nodes with the half swap; one matmul by the real 2N×2N form of Λ would take 2
// nodes but O(N²) work a step (which of the two is faster on the Go backend at which N was not
// measured).
//
// Number of trainable parameters (NumParams): 3N + 2·In·N + 2·N·Out + Out.
//
// The cell steps through time (rnn.Step), like every other cell, so that chunked training,
// the gradient analysis and the shared tests apply unchanged; its built step is an
// rnn.DiagonalStep, whose Filter computes a chunk's outputs at once (package scan), as the
// trainer does with train.Config.Scan.
//
// References:
//
//	[1] Orvieto, Smith, Gu, Fernando, Gulcehre, Pascanu, De, "Resurrecting Recurrent Neural
//	    Networks for Long Sequences", ICML 2023, arXiv:2303.06349: §3 (the LRU), §3.3
//	    (exponential parameterisation, Lemma 3.2 ring initialisation), §3.4 (γ normalisation,
//	    r_min near 1, small phases), appendix A (the authors' JAX code: initialisation of B,
//	    C, ν^log, θ^log, γ^log).
//	[2] Glorot, Bengio, "Understanding the Difficulty of Training Deep Feedforward Neural
//	    Networks", AISTATS 2010.
package lru

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// Defaults of the Cell's optional fields, used where a field is zero.
const (
	DefaultRMin     = 0.9         // smallest |λ| at initialisation
	DefaultRMax     = 0.999       // largest |λ| at initialisation
	DefaultMaxPhase = 2 * math.Pi // arg λ drawn from [0, MaxPhase]
)

// Cell is the LRU configuration; see the package doc for the equations.
type Cell struct {
	In, N, Out int
	// RMin and RMax bound |λ| at initialisation, 0 < RMin ≤ RMax < 1; 0 means DefaultRMin,
	// DefaultRMax.
	RMin, RMax float64
	// MaxPhase bounds arg λ at initialisation, in (0, 2π]; 0 means DefaultMaxPhase.
	MaxPhase float64
	// NoGamma leaves out the input normalisation: γ ≡ 1, no variable γ^log ([1] §3.4's
	// ablation: without it, the states of units with |λ| near 1 grow as 1/√(1 − |λ|²)).
	NoGamma bool
	Type    dtypes.DType // zero value: Float32
}

// New returns an LRU with in inputs, n complex units and out outputs, initialised with the
// default ring and phases.
func New(in, n, out int) *Cell { return &Cell{In: in, N: n, Out: out} }

// Sizes implements rnn.Cell: the state is [Re x | Im x], 2N floats.
func (c *Cell) Sizes() rnn.Sizes { return rnn.Sizes{In: c.In, State: 2 * c.N, Out: c.Out} }

// DType implements rnn.Cell.
func (c *Cell) DType() dtypes.DType { return rnn.OrFloat32(c.Type) }

func (c *Cell) rMin() float64     { return rnn.OrDefault(c.RMin, DefaultRMin) }
func (c *Cell) rMax() float64     { return rnn.OrDefault(c.RMax, DefaultRMax) }
func (c *Cell) maxPhase() float64 { return rnn.OrDefault(c.MaxPhase, DefaultMaxPhase) }

// NumParams returns the number of trainable parameters, 3N + 2·In·N + 2·N·Out + Out (ν^log,
// θ^log, γ^log; B; C; b_o): 289 for N = 32 on adding (In 2, Out 1), 5257 for N = 128 on copy
// (In 10, Out 9); N fewer with NoGamma.
func (c *Cell) NumParams() int { return c.recurrentParams() + 2*c.In*c.N + 2*c.N*c.Out + c.Out }

// recurrentParams counts ν^log, θ^log and γ^log: 3N, or 2N with NoGamma.
func (c *Cell) recurrentParams() int {
	if c.NoGamma {
		return 2 * c.N
	}
	return 3 * c.N
}

// Check returns an error naming the first invalid field and its accepted range.
func (c *Cell) Check() error {
	if err := rnn.CheckSizes("lru.Cell", "In", c.In, "N", c.N, "Out", c.Out); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"RMin", c.RMin}, {"RMax", c.RMax}} {
		if !(f.v >= 0 && f.v < 1) {
			return fmt.Errorf("lru.Cell: %s = %g, want a modulus in (0, 1) (0 means the default, RMin %g, RMax %g)", f.name, f.v, DefaultRMin, DefaultRMax)
		}
	}
	if lo, hi := c.rMin(), c.rMax(); lo > hi {
		return fmt.Errorf("lru.Cell: RMin = %g > RMax = %g (with defaults applied), want RMin <= RMax", lo, hi)
	}
	if p := c.MaxPhase; !(p >= 0 && p <= 2*math.Pi) {
		return fmt.Errorf("lru.Cell: MaxPhase = %g, want a phase in (0, 2π] (0 means DefaultMaxPhase = 2π)", p)
	}
	return rnn.CheckDType("lru.Cell", c.DType())
}

// ring draws (ν^log, θ^log, γ^log) for N units by [1] Lemma 3.2 (package doc). u1 and u2 are
// drawn from (0, 1], so that θ > 0 and its log is finite.
func (c *Cell) ring(rng *rand.Rand) (nuLog, thetaLog, gammaLog []float64) {
	if rng == nil {
		return nil, nil, nil
	}
	lo, hi := c.rMin(), c.rMax()
	nuLog, thetaLog, gammaLog = make([]float64, c.N), make([]float64, c.N), make([]float64, c.N)
	for j := range c.N {
		u1 := 1 - rng.Float64()
		r2 := u1*(hi*hi-lo*lo) + lo*lo // |λ|², uniform on [r_min², r_max²]
		nuLog[j] = math.Log(-0.5 * math.Log(r2))
		gammaLog[j] = 0.5 * math.Log(1-r2)
	}
	for j := range c.N {
		thetaLog[j] = math.Log(c.maxPhase() * (1 - rng.Float64()))
	}
	return nuLog, thetaLog, gammaLog
}

// Vars lists the cell's variables (see rnn.Var), the readout bias "bo" last; with rng nil the
// values are left out (used by Build to check shapes).
func (c *Cell) Vars(rng *rand.Rand) []rnn.Var {
	nuLog, thetaLog, gammaLog := c.ring(rng)
	bStd, cStd := 1/math.Sqrt(2*float64(c.In)), 1/math.Sqrt(float64(c.N))
	vars := []rnn.Var{
		{Name: "nu_log", Dims: []int{c.N}, Values: nuLog},
		{Name: "theta_log", Dims: []int{c.N}, Values: thetaLog},
	}
	if !c.NoGamma {
		vars = append(vars, rnn.Var{Name: "gamma_log", Dims: []int{c.N}, Values: gammaLog})
	}
	return append(vars, []rnn.Var{
		{Name: "B_re", Dims: []int{c.In, c.N}, Values: rnn.Gaussian(rng, c.In*c.N, bStd)},
		{Name: "B_im", Dims: []int{c.In, c.N}, Values: rnn.Gaussian(rng, c.In*c.N, bStd)},
		{Name: "C_re", Dims: []int{c.N, c.Out}, Values: rnn.Gaussian(rng, c.N*c.Out, cStd)},
		{Name: "C_im", Dims: []int{c.N, c.Out}, Values: rnn.Gaussian(rng, c.N*c.Out, cStd)},
		{Name: "bo", Dims: []int{c.Out}, Values: make([]float64, c.Out)},
	}...)
}

// Init implements rnn.Cell: it creates the variables listed in the package doc. It returns an
// error naming the field when In, N or Out is < 1, RMin or RMax is outside [0, 1) or RMin >
// RMax (0 meaning each one's default), MaxPhase is outside [0, 2π], a value is NaN, or Type is
// neither Float32 nor Float64.
func (c *Cell) Init(scope *model.Scope, rng *rand.Rand) error {
	if err := c.Check(); err != nil {
		return err
	}
	return rnn.CreateVariables(scope, c.DType(), c.Vars(rng))
}

// Lambda returns Re λ and Im λ, [N] each, from the variables ν^log and θ^log in g:
// λ = exp(−exp(ν^log)) · (cos exp(θ^log) + i sin exp(θ^log)).
func Lambda(nuLog, thetaLog *Node) (re, im *Node) {
	mod, theta := Exp(Neg(Exp(nuLog))), Exp(thetaLog)
	return Mul(mod, Cos(theta)), Mul(mod, Sin(theta))
}

// Build implements rnn.Cell. It panics if Init was not called or created variables of other
// shapes (a different configuration). Hoisted out of the time loop: λ, the input matrix
// [γ ⊙ Re Bᵀ | γ ⊙ Im Bᵀ] and the readout matrix [Re Cᵀ; −Im Cᵀ] (package doc).
func (c *Cell) Build(scope *model.Scope, g *Graph) rnn.Step {
	v := rnn.ReadVariables(scope, g, c.Vars(nil), c)
	lr, li, in, out := c.Diagonal(v)
	return rnn.NewDiagonal(lr, li, in, out, v["bo"])
}

var _ Recurrence = (*Cell)(nil)

// Diagonal implements Recurrence: λ, the input matrix [γ ⊙ Re Bᵀ | γ ⊙ Im Bᵀ] and the readout
// [Re Cᵀ; −Im Cᵀ] from the variables v.
func (c *Cell) Diagonal(v map[string]*Node) (lamRe, lamIm, in, readout *Node) {
	lamRe, lamIm = Lambda(v["nu_log"], v["theta_log"])
	return lamRe, lamIm, inputMatrix(v), Concatenate([]*Node{v["C_re"], Neg(v["C_im"])}, 0)
}

// RecurrentVars implements Recurrence: ν^log, θ^log and γ^log (not with NoGamma).
func (c *Cell) RecurrentVars() []string {
	if c.NoGamma {
		return []string{"nu_log", "theta_log"}
	}
	return []string{"nu_log", "theta_log", "gamma_log"}
}

// inputMatrix returns [γ ⊙ Re Bᵀ | γ ⊙ Im Bᵀ], [In, 2N], from the variables v; γ ≡ 1 when
// there is no "gamma_log" (NoGamma).
func inputMatrix(v map[string]*Node) *Node {
	re, im := v["B_re"], v["B_im"]
	if gl, ok := v["gamma_log"]; ok {
		gamma := InsertAxes(Exp(gl), 0) // [1, N]
		re, im = Mul(re, gamma), Mul(im, gamma)
	}
	return Concatenate([]*Node{re, im}, 1)
}

var _ rnn.DenseW = (*Cell)(nil)

// DenseW implements rnn.DenseW: W = Λ = diag(λ), complex and diagonal, from the variables
// (backend unused).
func (c *Cell) DenseW(_ compute.Backend, scope *model.Scope) (re, im [][]float64, err error) {
	nuLog, err := rnn.VariableValues(scope, "nu_log")
	if err != nil {
		return nil, nil, err
	}
	thetaLog, err := rnn.VariableValues(scope, "theta_log")
	if err != nil {
		return nil, nil, err
	}
	re, im = make([][]float64, c.N), make([][]float64, c.N)
	for j := range c.N {
		re[j], im[j] = make([]float64, c.N), make([]float64, c.N)
		mod, theta := math.Exp(-math.Exp(nuLog[j])), math.Exp(thetaLog[j])
		re[j][j], im[j][j] = mod*math.Cos(theta), mod*math.Sin(theta)
	}
	return re, im, nil
}
