package lru_test

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/lru"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn/celltest"
)

// TestCell runs the shared cell suite on the LRU, with the default ring and with another.
func TestCell(t *testing.T) {
	for _, tc := range []struct {
		name string
		cell lru.Cell
	}{
		{"defaults", lru.Cell{In: 3, N: 4, Out: 2}},
		{"ring 0.5-0.8, phases to π/10", lru.Cell{In: 3, N: 4, Out: 2, RMin: 0.5, RMax: 0.8, MaxPhase: math.Pi / 10}},
		{"no γ", lru.Cell{In: 3, N: 4, Out: 2, NoGamma: true}},
	} {
		mismatched := []celltest.BadConfig{
			{Name: "other N", Cell: &lru.Cell{In: 3, N: 5, Out: 2, NoGamma: tc.cell.NoGamma}, Want: "/nu_log has shape"},
			{Name: "other In", Cell: &lru.Cell{In: 4, N: 4, Out: 2, NoGamma: tc.cell.NoGamma}, Want: "/B_re has shape"},
			{Name: "other Out", Cell: &lru.Cell{In: 3, N: 4, Out: 3, NoGamma: tc.cell.NoGamma}, Want: "/C_re has shape"},
		}
		if tc.cell.NoGamma {
			mismatched = append(mismatched, celltest.BadConfig{Name: "with γ", Cell: lru.New(3, 4, 2), Want: "/gamma_log does not exist"})
		}
		t.Run(tc.name, func(t *testing.T) {
			celltest.Test(t, celltest.Config{
				New: func() rnn.Cell {
					c := tc.cell
					c.Type = dtypes.Float64
					return &c
				},
				Sizes: rnn.Sizes{In: 3, State: 8, Out: 2},
				// 3N + 2·In·N + 2·N·Out + Out (the doc of NumParams).
				ParamCounts: []celltest.ParamCount{
					{Name: "adding, N 32", Cell: lru.New(2, 32, 1), Want: 289},
					{Name: "copy, N 128", Cell: lru.New(10, 128, 9), Want: 5257},
					{Name: "copy, N 128, no γ", Cell: &lru.Cell{In: 10, N: 128, Out: 9, NoGamma: true}, Want: 5257 - 128},
				},
				Budget: celltest.GraphCost{Forward: 11, Training: 37},
				BadConfigs: []celltest.BadConfig{
					{Name: "zero N", Cell: lru.New(3, 0, 2), Want: "lru.Cell: N = 0"},
					{Name: "negative In", Cell: lru.New(-1, 4, 2), Want: "lru.Cell: In = -1"},
					{Name: "zero Out", Cell: lru.New(3, 4, 0), Want: "lru.Cell: Out = 0"},
					{Name: "RMax 1", Cell: &lru.Cell{In: 3, N: 4, Out: 2, RMax: 1}, Want: "RMax = 1, want a modulus in (0, 1)"},
					{Name: "negative RMin", Cell: &lru.Cell{In: 3, N: 4, Out: 2, RMin: -0.1}, Want: "RMin = -0.1"},
					{Name: "NaN RMin", Cell: &lru.Cell{In: 3, N: 4, Out: 2, RMin: math.NaN()}, Want: "RMin = NaN"},
					{Name: "RMin above default RMax", Cell: &lru.Cell{In: 3, N: 4, Out: 2, RMin: 0.9995}, Want: "RMin = 0.9995 > RMax = 0.999"},
					{Name: "MaxPhase 7", Cell: &lru.Cell{In: 3, N: 4, Out: 2, MaxPhase: 7}, Want: "MaxPhase = 7"},
					{Name: "NaN MaxPhase", Cell: &lru.Cell{In: 3, N: 4, Out: 2, MaxPhase: math.NaN()}, Want: "MaxPhase = NaN"},
					{Name: "Int32 Type", Cell: &lru.Cell{In: 3, N: 4, Out: 2, Type: dtypes.Int32}, Want: "Type = Int32"},
				},
				Mismatched: mismatched,
				Step:       step,
			})
		})
	}
}

// step is one step of [1] §3 in complex128, for one example: with the state h = [Re x | Im x],
//
//	x_t = λ ⊙ x_{t−1} + γ ⊙ (B u_t),  λ_j = exp(−exp(ν^log_j) + i exp(θ^log_j)),  γ_j = exp(γ^log_j),
//	y_t = Re(C x_t) + b_o,
//
// B_{jk} = B_re[k, j] + i B_im[k, j] and C_{kj} = C_re[j, k] + i C_im[j, k] (the variables hold
// Bᵀ and Cᵀ).
func step(cell rnn.Cell, p map[string][]float64, h, u []float64) (next, y []float64) {
	c := cell.(*lru.Cell)
	n := c.N
	x := make([]complex128, n)
	for j := range n {
		lambda := cmplx.Exp(complex(-math.Exp(p["nu_log"][j]), math.Exp(p["theta_log"][j])))
		var bu complex128
		for k := range c.In {
			bu += complex(p["B_re"][k*n+j], p["B_im"][k*n+j]) * complex(u[k], 0)
		}
		x[j] = lambda*complex(h[j], h[n+j]) + gamma(p, j)*bu
	}
	next = make([]float64, 2*n)
	for j, v := range x {
		next[j], next[n+j] = real(v), imag(v)
	}
	y = make([]float64, c.Out)
	for k := range c.Out {
		var cx complex128
		for j := range n {
			cx += complex(p["C_re"][j*c.Out+k], p["C_im"][j*c.Out+k]) * x[j]
		}
		y[k] = real(cx) + p["bo"][k]
	}
	return next, y
}

// gamma returns γ_j = exp(γ^log_j), or 1 when the cell has no γ^log (NoGamma).
func gamma(p map[string][]float64, j int) complex128 {
	if gl, ok := p["gamma_log"]; ok {
		return complex(math.Exp(gl[j]), 0)
	}
	return 1
}

// TestInit checks the initialisation of [1] §3.3–3.4 and appendix A on many units: |λ| in
// [r_min, r_max] with |λ|² uniform there (mean and variance of a uniform law), arg λ in
// [0, max_phase] and uniform, γ = √(1 − |λ|²), B's parts of variance 1/(2·In), C's 1/N,
// b_o = 0.
func TestInit(t *testing.T) {
	const in, n, out = 4, 20000, 3
	for _, c := range []*lru.Cell{lru.New(in, n, out), {In: in, N: n, Out: out, RMin: 0.2, RMax: 0.6, MaxPhase: math.Pi / 10}} {
		store := model.NewStore()
		scope := store.RootScope()
		if err := c.Init(scope, rand.New(rand.NewPCG(1, 2))); err != nil {
			t.Fatal(err)
		}
		get := func(name string) []float64 {
			v, err := rnn.VariableValues(scope, name)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		lo, hi, maxPhase := c.RMin, c.RMax, c.MaxPhase
		if lo == 0 {
			lo, hi, maxPhase = lru.DefaultRMin, lru.DefaultRMax, lru.DefaultMaxPhase
		}
		nuLog, thetaLog, gammaLog := get("nu_log"), get("theta_log"), get("gamma_log")
		r2, phase := make([]float64, n), make([]float64, n)
		for j := range n {
			r := math.Exp(-math.Exp(nuLog[j]))
			r2[j], phase[j] = r*r, math.Exp(thetaLog[j])
			// float32 storage: the values are rounded to float32.
			if r < lo*(1-1e-6) || r > hi*(1+1e-6) || phase[j] <= 0 || phase[j] > maxPhase*(1+1e-6) {
				t.Fatalf("%+v: unit %d: |λ| = %g, arg λ = %g, want |λ| in [%g, %g] and arg λ in (0, %g]", c, j, r, phase[j], lo, hi, maxPhase)
			}
			if g := math.Exp(gammaLog[j]); math.Abs(g-math.Sqrt(1-r*r)) > 1e-5*math.Sqrt(1-r*r) {
				t.Fatalf("%+v: unit %d: γ = %g, want √(1 − |λ|²) = %g", c, j, g, math.Sqrt(1-r*r))
			}
		}
		// A uniform law on [a, b]: mean (a + b)/2, variance (b − a)²/12; 5 standard errors.
		uniform := func(what string, v []float64, a, b float64) {
			mean, variance := moments(v)
			wantMean, wantVar := (a+b)/2, (b-a)*(b-a)/12
			if se := math.Sqrt(wantVar / float64(len(v))); math.Abs(mean-wantMean) > 5*se {
				t.Errorf("%+v: %s: mean %g, want %g (uniform on [%g, %g]) ± %g", c, what, mean, wantMean, a, b, 5*se)
			}
			if math.Abs(variance-wantVar) > 0.05*wantVar {
				t.Errorf("%+v: %s: variance %g, want %g (uniform on [%g, %g]) ± 5%%", c, what, variance, wantVar, a, b)
			}
		}
		uniform("|λ|²", r2, lo*lo, hi*hi)
		uniform("arg λ", phase, 0, maxPhase)
		for _, v := range []struct {
			name     string
			variance float64
		}{{"B_re", 1.0 / (2 * in)}, {"B_im", 1.0 / (2 * in)}, {"C_re", 1.0 / n}, {"C_im", 1.0 / n}} {
			mean, variance := moments(get(v.name))
			if math.Abs(mean) > 5*math.Sqrt(v.variance/float64(len(get(v.name)))) || math.Abs(variance-v.variance) > 0.05*v.variance {
				t.Errorf("%+v: %s: mean %g, variance %g, want 0 and %g", c, v.name, mean, variance, v.variance)
			}
		}
		for _, b := range get("bo") {
			if b != 0 {
				t.Errorf("%+v: bo = %v, want zeros", c, get("bo"))
				break
			}
		}
	}
}

func moments(v []float64) (mean, variance float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(v))
}

// TestDenseW checks that DenseW is diag(λ) of the variables: |λ| and arg λ as Init drew them.
func TestDenseW(t *testing.T) {
	c := &lru.Cell{In: 2, N: 5, Out: 1, Type: dtypes.Float64}
	store := model.NewStore()
	scope := store.RootScope()
	if err := c.Init(scope, rand.New(rand.NewPCG(5, 5))); err != nil {
		t.Fatal(err)
	}
	re, im, err := c.DenseW(backend.MustNew(), scope)
	if err != nil {
		t.Fatal(err)
	}
	nuLog, _ := rnn.VariableValues(scope, "nu_log")
	thetaLog, _ := rnn.VariableValues(scope, "theta_log")
	for k := range c.N {
		for j := range c.N {
			want := complex(0, 0)
			if j == k {
				want = cmplx.Rect(math.Exp(-math.Exp(nuLog[j])), math.Exp(thetaLog[j]))
			}
			if got := complex(re[k][j], im[k][j]); cmplx.Abs(got-want) > 1e-15 {
				t.Errorf("W[%d][%d] = %v, want %v", k, j, got, want)
			}
		}
	}
}
