// Package s4d is the diagonal state-space model S4D of Gu, Gupta, Goel and Ré [1], one layer
// written as an rnn.Cell: a continuous-time linear system with a complex diagonal state
// matrix, discretised by zero-order hold and run as a linear recurrence over N complex modes
// shared by the inputs:
//
//	x'(t) = A x(t) + B u(t),   A = diag(a),  a_n = −exp(a^re-log_n) + i·a^im_n        ([1] §2, §3)
//	Ā = exp(Δ A),   B̄ = (Δ A)⁻¹ (exp(Δ A) − I) · Δ B                       (ZOH, [1] §2)
//	x_t = Ā x_{t−1} + B̄ u_t,    x ∈ ℂ^N
//	y_t = 2·Re(C x_t) + b_o
//
// with B ∈ ℂ^{N×In}, C ∈ ℂ^{Out×N} and one step Δ_n = exp(log Δ_n) per mode. A being diagonal,
// Ā = diag(exp(Δ_n a_n)) and B̄ has rows (exp(Δ_n a_n) − 1)/a_n · B_n (the Δ_n cancel). The
// real part of a_n is kept negative through its log ([1] §3: Re a = −exp(·), the
// parameterisation of the authors' code), so that |Ā_n| = exp(−Δ_n exp(a^re-log_n)) < 1 for
// every real value of the variables: no update makes the recurrence unstable (TestStable).
//
// # Conventions
//
// N counts the complex modes kept. [1] §3 (and its code) keeps one mode of each conjugate
// pair of a real SSM of state size 2N, the other being its conjugate, and reads the pair's
// output as 2·Re of the kept mode's: the factor 2 of y_t. So this cell with N modes is [1]'s
// S4D of state size 2N, and the formula of S4D-Inv below takes that 2N for [1]'s N.
//
// [1] builds S4D single-input single-output: H independent SSMs, one per channel, each with
// its own Δ shared by its modes, mixed by a position-wise linear layer. Here the modes are
// shared by all In inputs (B is N × In) and read by all Out outputs (C is Out × N), as an
// RNN's state is (the LRU of package lru likewise), and each mode has its own Δ_n (as S5 has,
// Smith et al. 2023), drawn as [1] draws the channels' Δ.
//
// # What is left out
//
// [1]'s y = C x + D u has a skip term D u_t (D real, In × Out here). rnn.Step's Readout sees only
// the states, not u_t, so D is left out, as in package lru: it could come back by carrying u_t
// in the state at the cost of a state that is not the recurrence's alone. In its place y_t has
// a bias b_o (zero at initialisation), as every other cell of this project. Nor is there the
// rest of [1]'s block (GELU, the GLU output layer, normalisation, residual, a deep stack): the
// whole model is one linear time-invariant filter of its inputs, which cannot, for one, form
// the products the adding task's target needs (see package lru).
//
// # Initialisation
//
// [1] §4 with the authors' code (state-spaces/s4, models/s4/s4d.py and the diagonal
// initialisations of src/models/sequence/kernels/dplr.py), for modes n = 0 … N−1:
//
//	S4D-Lin (Lin, the default):  a_n = −1/2 + i·π n
//	S4D-Inv (Inv):               a_n = −1/2 + i·(2N/π)·(2N/(2n+1) − 1)
//	log Δ_n uniform on [log Δ_min, log Δ_max], Δ_min = 0.001, Δ_max = 0.1   (DTMin, DTMax)
//	B_{n,k} = 1 (the "constant" B of the code: real parts 1, imaginary parts 0)
//	Re C_{k,n}, Im C_{k,n} ~ N(0, 1/2) (a standard complex normal, E|C_{k,n}|² = 1)
//	b_o = 0
//
// stored as a^re-log_n = log(1/2) and a^im_n. B = 1 makes every mode receive the same Σ_k u_k at
// initialisation; B is trained, and its gradient differs between inputs from the first step.
//
// # Layout
//
// Complex numbers are real pairs (the Go backend has no complex dtype): the state is
// [batch, 2N] = [Re x | Im x], x_0 = 0 (not learned). Variables, in the project's row-vector
// orientation (u·B):
//
//	"log_dt"       [N]       log Δ
//	"a_re_log"     [N]       log(−Re a)
//	"a_im"         [N]       Im a
//	"B_re", "B_im" [In, N]   Re Bᵀ, Im Bᵀ
//	"C_re", "C_im" [N, Out]  Re Cᵀ, Im Cᵀ
//	"bo"           [Out]     readout bias, 0
//
// Build discretises once per graph (Discretize): Ā, and the input matrix
// [Re B̄ᵀ | Im B̄ᵀ], [In, 2N] (Project, one matmul for all steps), and the readout
// [2 Re Cᵀ; −2 Im Cᵀ], [2N, Out] (2 Re(C x) = 2 (Re C Re x − Im C Im x)). Next multiplies by
// Ā element-wise as package lru multiplies by λ, O(N) work and 7 graph nodes a step:
//
//	[Re x | Im x] ⊙ [Re Ā | Re Ā] + [Im x | Re x] ⊙ [−Im Ā | Im Ā] + B̄ u_t
//
// exp(Δa) − 1 is computed as written (as the authors' code does), not with an expm1: in
// Float32 its relative error is about 6·10⁻⁸/(Δ_n |a_n|), at most ~10⁻⁴ for the slowest mode
// of the default initialisation (Δ = 0.001, a = −1/2), in B̄ only.
//
// Number of trainable parameters (NumParams): 3N + 2·In·N + 2·N·Out + Out, as the LRU.
//
// References:
//
//	[1] Gu, Gupta, Goel, Ré, "On the Parameterization and Initialization of Diagonal State
//	    Space Models", NeurIPS 2022, arXiv:2206.11893: §2 (the SSM x' = Ax + Bu, y = Cx + Du
//	    and its zero-order-hold discretisation), §3 (parameterising diagonal SSMs: the
//	    discretisation, Re A kept negative through −exp, conjugate symmetry and the factor 2),
//	    §4 (the initialisations S4D-Inv and S4D-Lin, B = 1, Δ log-uniform in
//	    [0.001, 0.1]); and the authors' code, state-spaces/s4 (models/s4/s4d.py,
//	    src/models/sequence/kernels/dplr.py), from which the values above were checked. The
//	    section numbers were not checked against the paper's text.
//	[2] Smith, Warrington, Linderman, "Simplified State Space Layers for Sequence Modeling"
//	    (S5), ICLR 2023: one SSM shared by all inputs, a Δ per state.
package s4d

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

// AInit names an initialisation of A ([1] §4).
type AInit int

const (
	// Lin is S4D-Lin, a_n = −1/2 + iπn: the default.
	Lin AInit = iota
	// Inv is S4D-Inv, a_n = −1/2 + i(2N/π)(2N/(2n+1) − 1), 2N being [1]'s state size.
	Inv
)

// String returns "S4D-Lin" or "S4D-Inv".
func (i AInit) String() string {
	switch i {
	case Lin:
		return "S4D-Lin"
	case Inv:
		return "S4D-Inv"
	}
	return fmt.Sprintf("AInit(%d)", int(i))
}

// Defaults of the Cell's optional fields, used where a field is zero ([1] §4, the authors'
// code).
const (
	DefaultDTMin = 0.001 // smallest Δ at initialisation
	DefaultDTMax = 0.1   // largest Δ at initialisation
)

// Cell is the S4D configuration; see the package doc for the equations.
type Cell struct {
	In, N, Out int
	// AInit chooses the initialisation of A: Lin (the zero value) or Inv.
	AInit AInit
	// DTMin and DTMax bound Δ at initialisation, 0 < DTMin ≤ DTMax; 0 means DefaultDTMin,
	// DefaultDTMax.
	DTMin, DTMax float64
	Type         dtypes.DType // zero value: Float32
}

// New returns an S4D with in inputs, n complex modes and out outputs, initialised as
// S4D-Lin with the default range of Δ.
func New(in, n, out int) *Cell { return &Cell{In: in, N: n, Out: out} }

// Sizes implements rnn.Cell: the state is [Re x | Im x], 2N floats.
func (c *Cell) Sizes() rnn.Sizes { return rnn.Sizes{In: c.In, State: 2 * c.N, Out: c.Out} }

// DType implements rnn.Cell.
func (c *Cell) DType() dtypes.DType { return rnn.OrFloat32(c.Type) }

func (c *Cell) dtMin() float64 { return rnn.OrDefault(c.DTMin, DefaultDTMin) }
func (c *Cell) dtMax() float64 { return rnn.OrDefault(c.DTMax, DefaultDTMax) }

// NumParams returns the number of trainable parameters, 3N + 2·In·N + 2·N·Out + Out (log Δ,
// log(−Re a), Im a; B; C; b_o): 289 for N = 32 on adding (In 2, Out 1), 5257 for N = 128 on
// copy (In 10, Out 9).
func (c *Cell) NumParams() int { return 3*c.N + 2*c.In*c.N + 2*c.N*c.Out + c.Out }

// Check returns an error naming the first invalid field and its accepted range.
func (c *Cell) Check() error {
	if err := rnn.CheckSizes("s4d.Cell", "In", c.In, "N", c.N, "Out", c.Out); err != nil {
		return err
	}
	if c.AInit != Lin && c.AInit != Inv {
		return fmt.Errorf("s4d.Cell: AInit = %d, want Lin (%d) or Inv (%d)", int(c.AInit), int(Lin), int(Inv))
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"DTMin", c.DTMin}, {"DTMax", c.DTMax}} {
		if !(f.v >= 0 && !math.IsInf(f.v, 1)) {
			return fmt.Errorf("s4d.Cell: %s = %g, want a finite step > 0 (0 means the default, DTMin %g, DTMax %g)", f.name, f.v, DefaultDTMin, DefaultDTMax)
		}
	}
	if lo, hi := c.dtMin(), c.dtMax(); lo > hi {
		return fmt.Errorf("s4d.Cell: DTMin = %g > DTMax = %g (with defaults applied), want DTMin <= DTMax", lo, hi)
	}
	return rnn.CheckDType("s4d.Cell", c.DType())
}

// Eigenvalue returns a_n of the initialisation init for mode n of a cell of N modes (package
// doc): −1/2 + iπn (Lin) or −1/2 + i(2N/π)(2N/(2n+1) − 1) (Inv).
func Eigenvalue(init AInit, n, N int) complex128 {
	var im float64
	switch init {
	case Lin:
		im = math.Pi * float64(n)
	case Inv:
		s := 2 * float64(N) // [1]'s state size: N modes and their conjugates
		im = s / math.Pi * (s/float64(2*n+1) - 1)
	default:
		panic(fmt.Sprintf("s4d: Eigenvalue of %v", init))
	}
	return complex(-0.5, im)
}

// Vars lists the cell's variables (see rnn.Var), the readout bias "bo" last; with rng nil the
// values are left out (used by Build to check shapes).
func (c *Cell) Vars(rng *rand.Rand) []rnn.Var {
	var logDT, aReLog, aIm, bRe, bIm []float64
	if rng != nil {
		lo, hi := math.Log(c.dtMin()), math.Log(c.dtMax())
		logDT, aReLog, aIm = make([]float64, c.N), make([]float64, c.N), make([]float64, c.N)
		for n := range c.N {
			logDT[n] = lo + rng.Float64()*(hi-lo)
			a := Eigenvalue(c.AInit, n, c.N)
			aReLog[n], aIm[n] = math.Log(-real(a)), imag(a)
		}
		bRe, bIm = make([]float64, c.In*c.N), make([]float64, c.In*c.N)
		for i := range bRe {
			bRe[i] = 1
		}
	}
	cStd := math.Sqrt(0.5)
	return []rnn.Var{
		{Name: "log_dt", Dims: []int{c.N}, Values: logDT},
		{Name: "a_re_log", Dims: []int{c.N}, Values: aReLog},
		{Name: "a_im", Dims: []int{c.N}, Values: aIm},
		{Name: "B_re", Dims: []int{c.In, c.N}, Values: bRe},
		{Name: "B_im", Dims: []int{c.In, c.N}, Values: bIm},
		{Name: "C_re", Dims: []int{c.N, c.Out}, Values: rnn.Gaussian(rng, c.N*c.Out, cStd)},
		{Name: "C_im", Dims: []int{c.N, c.Out}, Values: rnn.Gaussian(rng, c.N*c.Out, cStd)},
		{Name: "bo", Dims: []int{c.Out}, Values: zerosIf(rng, c.Out)},
	}
}

// zerosIf returns n zeros, or nil when rng is nil (shapes only).
func zerosIf(rng *rand.Rand, n int) []float64 {
	if rng == nil {
		return nil
	}
	return make([]float64, n)
}

// Init implements rnn.Cell: it creates the variables listed in the package doc. It returns an
// error naming the field when In, N or Out is < 1, AInit is neither Lin nor Inv, DTMin or
// DTMax is negative, infinite or NaN or DTMin > DTMax (0 meaning each one's default), or Type
// is neither Float32 nor Float64.
func (c *Cell) Init(scope *model.Scope, rng *rand.Rand) error {
	if err := c.Check(); err != nil {
		return err
	}
	return rnn.CreateVariables(scope, c.DType(), c.Vars(rng))
}

// Discretize returns the zero-order-hold discretisation of the variables log Δ, log(−Re a)
// and Im a ([N] each): Ā = exp(Δ a) and the input gain g = (Δ a)⁻¹ (exp(Δ a) − 1) Δ =
// (exp(Δ a) − 1)/a, so that B̄ = diag(g) B; real and imaginary parts, [N] each.
func Discretize(logDT, aReLog, aIm *Node) (abarRe, abarIm, gRe, gIm *Node) {
	dt := Exp(logDT)
	ar := Neg(Exp(aReLog))
	mod, phase := Exp(Mul(dt, ar)), Mul(dt, aIm)
	abarRe, abarIm = Mul(mod, Cos(phase)), Mul(mod, Sin(phase))
	// (Ā − 1)/a = (Ā − 1)·conj(a)/|a|², |a|² ≥ (Re a)² > 0.
	numRe := AddScalar(abarRe, -1)
	den := Add(Square(ar), Square(aIm))
	gRe = Div(Add(Mul(numRe, ar), Mul(abarIm, aIm)), den)
	gIm = Div(Sub(Mul(abarIm, ar), Mul(numRe, aIm)), den)
	return abarRe, abarIm, gRe, gIm
}

// Build implements rnn.Cell. It panics if Init was not called or created variables of other
// shapes (a different configuration). Hoisted out of the time loop: Ā, the input matrix
// [Re B̄ᵀ | Im B̄ᵀ] and the readout matrix [2 Re Cᵀ; −2 Im Cᵀ] (package doc).
func (c *Cell) Build(scope *model.Scope, g *Graph) rnn.Step {
	v := rnn.ReadVariables(scope, g, c.Vars(nil), c)
	ar, ai, in, out := c.Diagonal(v)
	return rnn.NewDiagonal(ar, ai, in, out, v["bo"])
}

// Diagonal returns Ā's parts, the input matrix [Re B̄ᵀ | Im B̄ᵀ] and the readout
// [2 Re Cᵀ; −2 Im Cᵀ] from the variables v (the Recurrence of a deep block, package lru).
func (c *Cell) Diagonal(v map[string]*Node) (lamRe, lamIm, in, readout *Node) {
	ar, ai, gr, gi := Discretize(v["log_dt"], v["a_re_log"], v["a_im"])
	gr, gi = InsertAxes(gr, 0), InsertAxes(gi, 0) // [1, N]
	bRe, bIm := v["B_re"], v["B_im"]
	in = Concatenate([]*Node{Sub(Mul(bRe, gr), Mul(bIm, gi)), Add(Mul(bRe, gi), Mul(bIm, gr))}, 1) // [Re B̄ᵀ | Im B̄ᵀ]
	return ar, ai, in, MulScalar(Concatenate([]*Node{v["C_re"], Neg(v["C_im"])}, 0), 2)
}

// RecurrentVars names the variables of Ā and of the input gain of B̄: log Δ, log(−Re a), Im a.
func (c *Cell) RecurrentVars() []string { return []string{"log_dt", "a_re_log", "a_im"} }

var _ rnn.DenseW = (*Cell)(nil)

// DenseW implements rnn.DenseW: W = Ā = diag(exp(Δ_n a_n)), complex and diagonal, from the
// variables (backend unused).
func (c *Cell) DenseW(_ compute.Backend, scope *model.Scope) (re, im [][]float64, err error) {
	vals := map[string][]float64{}
	for _, name := range []string{"log_dt", "a_re_log", "a_im"} {
		if vals[name], err = rnn.VariableValues(scope, name); err != nil {
			return nil, nil, err
		}
	}
	re, im = make([][]float64, c.N), make([][]float64, c.N)
	for n := range c.N {
		re[n], im[n] = make([]float64, c.N), make([]float64, c.N)
		dt := math.Exp(vals["log_dt"][n])
		mod, phase := math.Exp(-dt*math.Exp(vals["a_re_log"][n])), dt*vals["a_im"][n]
		re[n][n], im[n][n] = mod*math.Cos(phase), mod*math.Sin(phase)
	}
	return re, im, nil
}
