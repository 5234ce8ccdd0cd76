package scornn_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn/celltest"
	"github.com/urnn-notebooks/longmemory/pkg/models/scornn"
)

// TestCell runs the shared cell suite on a small scoRNN.
func TestCell(t *testing.T) {
	const in, n, out = 3, 4, 2
	celltest.Test(t, celltest.Config{
		New: func() rnn.Cell {
			c := scornn.New(in, n, out)
			c.Type = dtypes.Float64
			return c
		},
		Sizes: rnn.Sizes{In: in, State: n, Out: out},
		// In·N + N² + N + N·Out + Out (the doc of NumParams), at the uRNN paper's sizes.
		ParamCounts: []celltest.ParamCount{
			{Name: "copy, 128 units", Cell: scornn.New(10, 128, 9), Want: 18953},
			{Name: "adding, 512 units", Cell: scornn.New(2, 512, 1), Want: 264193},
		},
		Budget: celltest.GraphCost{Forward: 11, Training: 43},
		BadConfigs: []celltest.BadConfig{
			{Name: "zero N", Cell: scornn.New(2, 0, 1), Want: "scornn: N = 0"},
			{Name: "negative In", Cell: scornn.New(-1, 4, 1), Want: "scornn: In = -1"},
			{Name: "zero Out", Cell: scornn.New(2, 4, 0), Want: "scornn: Out = 0"},
			{Name: "NegOnes > N", Cell: &scornn.Cell{In: 1, N: 4, Out: 1, NegOnes: 5}, Want: "NegOnes = 5, want a count in [0, N = 4]"},
			{Name: "NegOnes < -1", Cell: &scornn.Cell{In: 1, N: 4, Out: 1, NegOnes: -2}, Want: "NegOnes = -2"},
			{Name: "negative LRA", Cell: &scornn.Cell{In: 1, N: 4, Out: 1, LRA: -1e-4}, Want: "LRA = -0.0001, want a finite value > 0"},
			{Name: "infinite LRA", Cell: &scornn.Cell{In: 1, N: 4, Out: 1, LRA: math.Inf(1)}, Want: "LRA = +Inf"},
			{Name: "Int32 Type", Cell: &scornn.Cell{In: 1, N: 4, Out: 1, Type: dtypes.Int32}, Want: "Type = Int32"},
		},
		Mismatched: []celltest.BadConfig{{Name: "other N", Cell: scornn.New(in, n+1, out), Want: "/W has shape"}},
		// b < 0 keeps σ continuous (a dead zone |z| < −b instead of a jump at z = 0).
		Randomize: func(scope *model.Scope, rng *rand.Rand) {
			rnn.RandomizeVariables(scope, rng, -1, 1)
			v := scope.GetVariable("b")
			v.MustSetValue(tensors.FromFlatDataAndDimensions(rnn.Uniform(rng, n, -0.3, -0.05), n))
		},
		Step: step,
	})
}

// step is one step of the package doc's equations in plain Go, for one example:
// h_t = sign(z) max(|z| + b, 0) with z = W h_{t−1} + V x_t, y_t = U h_t + b_o.
func step(cell rnn.Cell, p map[string][]float64, h, x []float64) (next, y []float64) {
	c := cell.(*scornn.Cell)
	n := c.N
	next = make([]float64, n)
	for i := range n {
		z := 0.0
		for j := range n {
			z += p["W"][i*n+j] * h[j]
		}
		for k := range c.In {
			z += x[k] * p["V"][k*n+i]
		}
		sign := 0.0
		if z > 0 {
			sign = 1
		} else if z < 0 {
			sign = -1
		}
		next[i] = sign * max(math.Abs(z)+p["b"][i], 0)
	}
	y = slices.Clone(p["bo"])
	for q := range c.Out {
		for i := range n {
			y[q] += next[i] * p["U"][i*c.Out+q]
		}
	}
	return next, y
}

// orthogonalityError returns max |(WᵀW − I)_{ij}| for the n×n W (row-major).
func orthogonalityError(n int, w []float64) float64 {
	worst := 0.0
	for i := range n {
		for j := range n {
			s := 0.0
			for k := range n {
				s += w[k*n+i] * w[k*n+j]
			}
			if i == j {
				s--
			}
			worst = max(worst, math.Abs(s))
		}
	}
	return worst
}

// TestInit checks the initialisation against the authors' code: A block diagonal and
// skew-symmetric with rotation angles in [0, π/2], D with ρ = ⌊N/2⌋ entries −1 last, W the
// scaled Cayley transform of A (orthogonal), A_rms = 1, V within ±0.01, b and b_o zero; A,
// D and A_rms not trainable.
func TestInit(t *testing.T) {
	for _, tc := range []struct {
		cell *scornn.Cell
		rho  int
	}{
		{&scornn.Cell{In: 10, N: 7, Out: 9, Type: dtypes.Float64}, 3},
		{&scornn.Cell{In: 2, N: 8, Out: 1, Type: dtypes.Float64, NegOnes: scornn.NoNegOnes}, 0},
		{&scornn.Cell{In: 2, N: 8, Out: 1, Type: dtypes.Float64, NegOnes: 8}, 8},
	} {
		c, n := tc.cell, tc.cell.N
		store := model.NewStore()
		scope := store.RootScope()
		if err := c.Init(scope, rand.New(rand.NewPCG(2, 2))); err != nil {
			t.Fatal(err)
		}
		get := func(name string) []float64 {
			return tensors.MustCopyFlatData[float64](scope.GetVariable(name).MustValue())
		}
		a, d, w := get("A"), get("D"), get("W")
		for i := range n {
			for j := range n {
				x := a[i*n+j]
				switch {
				case i%2 == 0 && j == i+1:
					// a_k = −tan(θ_k/2) with θ_k in [0, π/2]: a_k in [−1, 0].
					if x < -1 || x > 0 || a[j*n+i] != -x {
						t.Errorf("N %d: A[%d][%d] = %g, A[%d][%d] = %g, want a ∈ [−1, 0] and −a", n, i, j, x, j, i, a[j*n+i])
					}
				case i%2 == 1 && j == i-1:
				default:
					if x != 0 {
						t.Errorf("N %d: A[%d][%d] = %g, want 0 outside the 2×2 blocks", n, i, j, x)
					}
				}
			}
		}
		if got := scornn.DiagD(n, tc.rho); !slices.Equal(d, got) || c.Rho() != tc.rho {
			t.Errorf("N %d: D = %v (Rho %d), want %v", n, d, c.Rho(), got)
		}
		if e := orthogonalityError(n, w); e > 1e-14 {
			t.Errorf("N %d: max |WᵀW − I| = %.3g", n, e)
		}
		want, err := scornn.CayleyW(n, a, d)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(w, want) {
			t.Errorf("N %d: W is not CayleyW(A, D)", n)
		}
		for i := range n / 2 { // the block's rotation (I + A)^{-1}(I − A) has cos θ_k ∈ [0, 1] on its diagonal
			if cos := w[2*i*n+2*i] * d[2*i]; cos < 0 || cos > 1 {
				t.Errorf("N %d: block %d has cos θ = %g, want θ ∈ [0, π/2]", n, i, cos)
			}
		}
		for _, x := range get("A_rms") {
			if x != scornn.RMSInit {
				t.Fatalf("N %d: A_rms entry %g, want %g", n, x, scornn.RMSInit)
			}
		}
		for _, x := range get("V") {
			if math.Abs(x) > 0.01 {
				t.Fatalf("N %d: V entry %g outside ±0.01", n, x)
			}
		}
		for _, name := range []string{"b", "bo"} {
			if slices.ContainsFunc(get(name), func(x float64) bool { return x != 0 }) {
				t.Errorf("N %d: %s = %v, want zeros", n, name, get(name))
			}
		}
		for _, name := range []string{"A", "D", "A_rms"} {
			if scope.GetVariable(name).Trainable {
				t.Errorf("N %d: %s is trainable, want not", n, name)
			}
		}
		if !scope.GetVariable("W").Trainable {
			t.Errorf("N %d: W is not trainable: the trainer needs its gradient", n)
		}
	}
	if got := scornn.New(1, 4, 1).DType(); got != dtypes.Float32 {
		t.Errorf("DType() = %s, want Float32 by default", got)
	}
}

// TestUpdateErrors checks that Update names the bad value and the accepted range.
func TestUpdateErrors(t *testing.T) {
	const n = 3
	ok := func() (map[string][]float64, map[string][]float64) {
		a := make([]float64, n*n)
		a[1], a[3] = 0.2, -0.2
		d := scornn.DiagD(n, 1)
		w, err := scornn.CayleyW(n, a, d)
		if err != nil {
			t.Fatal(err)
		}
		ms := slices.Repeat([]float64{1}, n*n)
		return map[string][]float64{"A": a, "D": d, "W": w, "A_rms": ms}, map[string][]float64{"W": rnn.Uniform(rand.New(rand.NewPCG(1, 1)), n*n, -1, 1)}
	}
	for _, tc := range []struct {
		name  string
		cell  *scornn.Cell
		lr    float64
		edit  func(values, grads map[string][]float64)
		wants []string
	}{
		{"zero lr", scornn.New(1, n, 1), 0, nil, []string{"η = 0", "want a finite value > 0"}},
		{"negative lr", scornn.New(1, n, 1), -1e-3, nil, []string{"η = -0.001", "want a finite value > 0"}},
		{"NaN lr", scornn.New(1, n, 1), math.NaN(), nil, []string{"η = NaN"}},
		{"negative LRA", &scornn.Cell{In: 1, N: n, Out: 1, LRA: -1}, 1e-3, nil, []string{"LRA = -1", "want a finite value > 0"}},
		{"zero N", scornn.New(1, 0, 1), 1e-3, nil, []string{"N = 0", "want >= 1"}},
		{"D entry not ±1", scornn.New(1, n, 1), 1e-3, func(v, _ map[string][]float64) { v["D"][2] = 0.5 }, []string{"D[2] = 0.5, want -1 or +1"}},
		{"A not skew-symmetric", scornn.New(1, n, 1), 1e-3, func(v, _ map[string][]float64) { v["A"][3] = 0.1 },
			[]string{"A[0][1] = 0.2 and A[1][0] = 0.1", "want A skew-symmetric"}},
		{"A diagonal", scornn.New(1, n, 1), 1e-3, func(v, _ map[string][]float64) { v["A"][4] = 0.1 }, []string{"A[1][1] = 0.1"}},
		{"negative A_rms", scornn.New(1, n, 1), 1e-3, func(v, _ map[string][]float64) { v["A_rms"][5] = -1 },
			[]string{"A_rms[1][2] = -1, want a finite value >= 0"}},
		{"A_rms not symmetric", scornn.New(1, n, 1), 1e-3, func(v, _ map[string][]float64) { v["A_rms"][1] = 2 },
			[]string{"A_rms[0][1] = 2 and A_rms[1][0] = 1, want A_rms symmetric"}},
		{"no gradient", scornn.New(1, n, 1), 1e-3, func(_, g map[string][]float64) { delete(g, "W") }, []string{`no gradient for "W"`}},
		{"no D", scornn.New(1, n, 1), 1e-3, func(v, _ map[string][]float64) { delete(v, "D") }, []string{`no value for "D"`}},
		{"short A", scornn.New(1, n, 1), 1e-3, func(v, _ map[string][]float64) { v["A"] = v["A"][:3] }, []string{`value of "A" has 3 entries, want 9`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			values, grads := ok()
			if tc.edit != nil {
				tc.edit(values, grads)
			}
			_, err := tc.cell.Update(tc.lr, values, grads)
			if err == nil {
				t.Fatalf("Update returned no error, want one containing %q", tc.wants)
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Update error %q, want one containing %q", err, w)
				}
			}
		})
	}
	// LRA, when set, replaces lr.
	values, grads := ok()
	out1, err := (&scornn.Cell{In: 1, N: n, Out: 1, LRA: 0.01}).Update(5, values, grads)
	if err != nil {
		t.Fatal(err)
	}
	out2, err := scornn.New(1, n, 1).Update(0.01, values, grads)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out1["A"], out2["A"]) {
		t.Errorf("LRA = 0.01 with lr = 5 gave A = %v, lr = 0.01 gave %v: want the same", out1["A"], out2["A"])
	}
}
