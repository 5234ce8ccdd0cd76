package s4d_test

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn/celltest"
	"github.com/urnn-notebooks/longmemory/pkg/models/s4d"
)

// TestCell runs the shared cell suite on S4D, with S4D-Lin and the default Δ range and with
// S4D-Inv and another.
func TestCell(t *testing.T) {
	for _, tc := range []struct {
		name string
		cell s4d.Cell
	}{
		{"S4D-Lin", s4d.Cell{In: 3, N: 4, Out: 2}},
		{"S4D-Inv, Δ in [0.01, 1]", s4d.Cell{In: 3, N: 4, Out: 2, AInit: s4d.Inv, DTMin: 0.01, DTMax: 1}},
	} {
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
					{Name: "adding, N 32", Cell: s4d.New(2, 32, 1), Want: 289},
					{Name: "copy, N 128", Cell: s4d.New(10, 128, 9), Want: 5257},
				},
				Budget: celltest.GraphCost{Forward: 11, Training: 37},
				BadConfigs: []celltest.BadConfig{
					{Name: "zero N", Cell: s4d.New(3, 0, 2), Want: "s4d.Cell: N = 0"},
					{Name: "negative In", Cell: s4d.New(-1, 4, 2), Want: "s4d.Cell: In = -1"},
					{Name: "zero Out", Cell: s4d.New(3, 4, 0), Want: "s4d.Cell: Out = 0"},
					{Name: "AInit 2", Cell: &s4d.Cell{In: 3, N: 4, Out: 2, AInit: 2}, Want: "AInit = 2, want Lin (0) or Inv (1)"},
					{Name: "negative DTMin", Cell: &s4d.Cell{In: 3, N: 4, Out: 2, DTMin: -0.1}, Want: "DTMin = -0.1"},
					{Name: "NaN DTMax", Cell: &s4d.Cell{In: 3, N: 4, Out: 2, DTMax: math.NaN()}, Want: "DTMax = NaN"},
					{Name: "infinite DTMax", Cell: &s4d.Cell{In: 3, N: 4, Out: 2, DTMax: math.Inf(1)}, Want: "DTMax = +Inf"},
					{Name: "DTMin above default DTMax", Cell: &s4d.Cell{In: 3, N: 4, Out: 2, DTMin: 0.5}, Want: "DTMin = 0.5 > DTMax = 0.1"},
					{Name: "Int32 Type", Cell: &s4d.Cell{In: 3, N: 4, Out: 2, Type: dtypes.Int32}, Want: "Type = Int32"},
				},
				Mismatched: []celltest.BadConfig{
					{Name: "other N", Cell: s4d.New(3, 5, 2), Want: "/log_dt has shape"},
					{Name: "other In", Cell: s4d.New(4, 4, 2), Want: "/B_re has shape"},
					{Name: "other Out", Cell: s4d.New(3, 4, 3), Want: "/C_re has shape"},
				},
				Step: step,
			})
		})
	}
}

// step is one step of S4D in complex128, for one example, from the equations of the package
// doc as [1] §2 writes them: with the state h = [Re x | Im x],
//
//	a_n = −exp(a_re_log_n) + i a_im_n,  Δ_n = exp(log_dt_n),
//	Ā = exp(ΔA),  B̄ = (ΔA)⁻¹ (exp(ΔA) − I) ΔB,
//	x_t = Ā x_{t−1} + B̄ u_t,  y_t = 2 Re(C x_t) + b_o,
//
// B_{nk} = B_re[k, n] + i B_im[k, n] and C_{kn} = C_re[n, k] + i C_im[n, k] (the variables hold
// Bᵀ and Cᵀ).
func step(cell rnn.Cell, p map[string][]float64, h, u []float64) (next, y []float64) {
	c := cell.(*s4d.Cell)
	N := c.N
	x := make([]complex128, N)
	for n := range N {
		a := complex(-math.Exp(p["a_re_log"][n]), p["a_im"][n])
		dt := complex(math.Exp(p["log_dt"][n]), 0)
		abar := cmplx.Exp(dt * a)
		x[n] = abar * complex(h[n], h[N+n])
		for k := range c.In {
			bbar := (abar - 1) / (dt * a) * dt * complex(p["B_re"][k*N+n], p["B_im"][k*N+n])
			x[n] += bbar * complex(u[k], 0)
		}
	}
	next = make([]float64, 2*N)
	for n, v := range x {
		next[n], next[N+n] = real(v), imag(v)
	}
	y = make([]float64, c.Out)
	for k := range c.Out {
		var cx complex128
		for n := range N {
			cx += complex(p["C_re"][n*c.Out+k], p["C_im"][n*c.Out+k]) * x[n]
		}
		y[k] = 2*real(cx) + p["bo"][k]
	}
	return next, y
}

// values returns the variable name under scope, failing t if it does not exist.
func values(t *testing.T, scope *model.Scope, name string) []float64 {
	t.Helper()
	v, err := rnn.VariableValues(scope, name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestInit checks the initialisations of [1] §4 on many modes, in Float32 storage: Re a_n =
// −1/2 and Im a_n = πn (S4D-Lin) or (2N/π)(2N/(2n+1) − 1) (S4D-Inv), written here from the
// formulas; Δ_n in [Δ_min, Δ_max] with log Δ uniform there (mean and variance of a uniform
// law); B = 1; C's real and imaginary parts of variance 1/2; b_o = 0.
func TestInit(t *testing.T) {
	const in, N, out = 3, 20000, 2
	for _, c := range []*s4d.Cell{
		s4d.New(in, N, out),
		{In: in, N: N, Out: out, AInit: s4d.Inv},
		{In: in, N: N, Out: out, AInit: s4d.Inv, DTMin: 0.05, DTMax: 2},
	} {
		t.Run(c.AInit.String(), func(t *testing.T) {
			store := model.NewStore()
			scope := store.RootScope()
			if err := c.Init(scope, rand.New(rand.NewPCG(1, 2))); err != nil {
				t.Fatal(err)
			}
			lo, hi := c.DTMin, c.DTMax
			if lo == 0 {
				lo, hi = s4d.DefaultDTMin, s4d.DefaultDTMax
			}
			aReLog, aIm, logDT := values(t, scope, "a_re_log"), values(t, scope, "a_im"), values(t, scope, "log_dt")
			const f32 = 1e-6 // float32 rounding
			for n := range N {
				var want float64
				if c.AInit == s4d.Lin {
					want = math.Pi * float64(n)
				} else {
					want = 2 * N / math.Pi * (2*N/(2*float64(n)+1) - 1)
				}
				if re := -math.Exp(aReLog[n]); math.Abs(re+0.5) > f32 || math.Abs(aIm[n]-want) > f32*max(1, math.Abs(want)) {
					t.Fatalf("mode %d: a = %g + %gi, want -0.5 + %gi", n, re, aIm[n], want)
				}
				if dt := math.Exp(logDT[n]); dt < lo*(1-f32) || dt > hi*(1+f32) {
					t.Fatalf("mode %d: Δ = %g, want it in [%g, %g]", n, dt, lo, hi)
				}
				if got, want := s4d.Eigenvalue(c.AInit, n, N), complex(-0.5, want); cmplx.Abs(got-want) > 1e-15*cmplx.Abs(want) {
					t.Fatalf("Eigenvalue(%v, %d, %d) = %v, want %v", c.AInit, n, N, got, want)
				}
			}
			a, b := math.Log(lo), math.Log(hi)
			mean, variance := moments(logDT)
			wantMean, wantVar := (a+b)/2, (b-a)*(b-a)/12
			if se := math.Sqrt(wantVar / N); math.Abs(mean-wantMean) > 5*se || math.Abs(variance-wantVar) > 0.05*wantVar {
				t.Errorf("log Δ: mean %g, variance %g; want %g ± %g and %g ± 5%% (uniform on [log %g, log %g])", mean, variance, wantMean, 5*se, wantVar, lo, hi)
			}
			for name, want := range map[string]float64{"B_re": 1, "B_im": 0, "bo": 0} {
				for i, v := range values(t, scope, name) {
					if v != want {
						t.Fatalf("%s[%d] = %g, want %g", name, i, v, want)
					}
				}
			}
			for _, name := range []string{"C_re", "C_im"} {
				v := values(t, scope, name)
				mean, variance := moments(v)
				if math.Abs(mean) > 5*math.Sqrt(0.5/float64(len(v))) || math.Abs(variance-0.5) > 0.05*0.5 {
					t.Errorf("%s: mean %g, variance %g, want 0 and 1/2", name, mean, variance)
				}
			}
		})
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

// TestStable checks that |Ā_n| < 1 for every mode, as the graph computes Ā (Discretize, in
// Float32 and Float64) and as DenseW does: after both initialisations (where |Ā_n| =
// exp(−Δ_n/2) ≤ exp(−Δ_min/2)), and with the variables log Δ and log(−Re a) drawn from
// U[−6, 4] and Im a from U[−100, 100], values that training could reach.
func TestStable(t *testing.T) {
	be := backend.MustNew()
	const N = 256
	for _, tc := range []struct {
		name      string
		cell      *s4d.Cell
		randomize bool
	}{
		{"S4D-Lin", &s4d.Cell{In: 2, N: N, Out: 1}, false},
		{"S4D-Inv", &s4d.Cell{In: 2, N: N, Out: 1, AInit: s4d.Inv}, false},
		{"S4D-Lin Float64", &s4d.Cell{In: 2, N: N, Out: 1, Type: dtypes.Float64}, false},
		{"random Float32", &s4d.Cell{In: 2, N: N, Out: 1}, true},
		{"random Float64", &s4d.Cell{In: 2, N: N, Out: 1, Type: dtypes.Float64}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := model.NewStore()
			scope := store.RootScope()
			if err := tc.cell.Init(scope, rand.New(rand.NewPCG(7, 1))); err != nil {
				t.Fatal(err)
			}
			bound := math.Exp(-s4d.DefaultDTMin / 2)
			if tc.randomize {
				rng := rand.New(rand.NewPCG(8, 1))
				for name, r := range map[string][2]float64{"log_dt": {-6, 4}, "a_re_log": {-6, 4}, "a_im": {-100, 100}} {
					vals := rnn.Uniform(rng, N, r[0], r[1])
					var x *tensors.Tensor
					if tc.cell.DType() == dtypes.Float32 {
						f := make([]float32, N)
						for i, v := range vals {
							f[i] = float32(v)
						}
						x = tensors.FromFlatDataAndDimensions(f, N)
					} else {
						x = tensors.FromFlatDataAndDimensions(vals, N)
					}
					if err := scope.GetVariable(name).SetValue(x); err != nil {
						t.Fatal(err)
					}
				}
				bound = 1
			}
			res, err := model.ExecOnceN(be, store, func(scope *model.Scope, g *Graph) []*Node {
				rnn.LiveVariables(store, g)
				re, im, _, _ := s4d.Discretize(scope.GetVariable("log_dt").NodeValue(g),
					scope.GetVariable("a_re_log").NodeValue(g), scope.GetVariable("a_im").NodeValue(g))
				return []*Node{ConvertDType(re, dtypes.Float64), ConvertDType(im, dtypes.Float64)}
			})
			if err != nil {
				t.Fatal(err)
			}
			re, im := tensors.MustCopyFlatData[float64](res[0]), tensors.MustCopyFlatData[float64](res[1])
			wre, wim, err := tc.cell.DenseW(be, scope)
			if err != nil {
				t.Fatal(err)
			}
			for n := range N {
				for _, m := range []struct {
					what string
					abs  float64
				}{{"graph", math.Hypot(re[n], im[n])}, {"DenseW", math.Hypot(wre[n][n], wim[n][n])}} {
					if !(m.abs < 1) || (!tc.randomize && m.abs > bound*(1+1e-6)) {
						t.Fatalf("mode %d: |Ā| = %.9g (%s), want < 1 (and <= %.9g)", n, m.abs, m.what, bound)
					}
				}
			}
		})
	}
}

// TestDenseW checks that DenseW is diag(Ā) of the variables, Ā_n = exp(Δ_n a_n), and that
// Build's Ā (Discretize) is the same.
func TestDenseW(t *testing.T) {
	c := &s4d.Cell{In: 2, N: 5, Out: 1, AInit: s4d.Inv, Type: dtypes.Float64}
	store := model.NewStore()
	scope := store.RootScope()
	if err := c.Init(scope, rand.New(rand.NewPCG(5, 5))); err != nil {
		t.Fatal(err)
	}
	re, im, err := c.DenseW(backend.MustNew(), scope)
	if err != nil {
		t.Fatal(err)
	}
	logDT, aReLog, aIm := values(t, scope, "log_dt"), values(t, scope, "a_re_log"), values(t, scope, "a_im")
	for k := range c.N {
		for n := range c.N {
			want := complex(0, 0)
			if n == k {
				want = cmplx.Exp(complex(math.Exp(logDT[n]), 0) * complex(-math.Exp(aReLog[n]), aIm[n]))
			}
			if got := complex(re[k][n], im[k][n]); cmplx.Abs(got-want) > 1e-14 {
				t.Errorf("W[%d][%d] = %v, want %v", k, n, got, want)
			}
		}
	}
}
