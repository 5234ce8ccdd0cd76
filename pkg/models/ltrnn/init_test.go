package ltrnn_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/ltrnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn/celltest"
)

// maxAbsGramMinusI returns max |(QᵀQ − I)_ij| for the n×n row-major q.
func maxAbsGramMinusI(q []float64, n int) float64 {
	worst := 0.0
	for i := range n {
		for j := range n {
			s := 0.0
			for k := range n {
				s += q[k*n+i] * q[k*n+j]
			}
			if i == j {
				s--
			}
			worst = max(worst, math.Abs(s))
		}
	}
	return worst
}

// TestOrthogonalize checks the polar factor: Q = Orthogonalize(A) is orthogonal and
// QᵀA is symmetric positive definite (A = Q P, the definition of the nearest orthogonal
// matrix); an orthogonal input is returned unchanged and scaling does not matter.
func TestOrthogonalize(t *testing.T) {
	const n = 6
	rng := rand.New(rand.NewPCG(2, 3))
	a := rnn.Uniform(rng, n*n, -1, 1)
	q := ltrnn.Orthogonalize(a, n)
	if e := maxAbsGramMinusI(q, n); e > 1e-12 {
		t.Errorf("‖QᵀQ − I‖max = %g, want < 1e-12", e)
	}
	p := make([]float64, n*n) // P = QᵀA
	for i := range n {
		for j := range n {
			for k := range n {
				p[i*n+j] += q[k*n+i] * a[k*n+j]
			}
		}
	}
	for i := range n {
		for j := range i {
			if math.Abs(p[i*n+j]-p[j*n+i]) > 1e-12 {
				t.Errorf("QᵀA[%d,%d] = %g, QᵀA[%d,%d] = %g, want symmetric", i, j, p[i*n+j], j, i, p[j*n+i])
			}
		}
	}
	// Positive definite: xᵀ P x > 0 for random x (and the diagonal is positive).
	for trial := range 20 {
		x := rnn.Uniform(rng, n, -1, 1)
		s := 0.0
		for i := range n {
			for j := range n {
				s += x[i] * p[i*n+j] * x[j]
			}
		}
		if s <= 0 {
			t.Errorf("trial %d: xᵀ QᵀA x = %g, want > 0", trial, s)
		}
	}
	scaled := make([]float64, n*n)
	for i, v := range q {
		scaled[i] = 3 * v
	}
	for i, v := range ltrnn.Orthogonalize(scaled, n) {
		if math.Abs(v-q[i]) > 1e-12 {
			t.Fatalf("Orthogonalize(3Q)[%d] = %g, want Q[%d] = %g", i, v, i, q[i])
		}
	}
}

// TestInit checks the LT-ORNN and LT-IRNN initialisations of [1] §4.1 in float32 at the
// copy-task size: V orthogonal (and not the identity) or exactly I, U and W with
// standard deviation 1/√fan-in, b zero.
func TestInit(t *testing.T) {
	const in, n, out = 10, 80, 9
	for _, cell := range []*ltrnn.Cell{ltrnn.NewORNN(in, n, out), ltrnn.NewIRNN(in, n, out)} {
		t.Run(cell.VInit.String(), func(t *testing.T) {
			scope := model.NewStore().RootScope()
			if err := cell.Init(scope, rand.New(rand.NewPCG(1, 1))); err != nil {
				t.Fatal(err)
			}
			if got := scope.GetVariable("V").MustValue().DType(); got != dtypes.Float32 {
				t.Fatalf("V dtype %s, want Float32 (the zero Type)", got)
			}
			v32 := tensors.MustCopyFlatData[float32](scope.GetVariable("V").MustValue())
			v := make([]float64, len(v32))
			offDiag := 0.0
			for i, x := range v32 {
				v[i] = float64(x)
				if i/n != i%n {
					offDiag = max(offDiag, math.Abs(v[i]))
				}
			}
			switch cell.VInit {
			case ltrnn.Orthogonal:
				if e := maxAbsGramMinusI(v, n); e >= 1e-5 {
					t.Errorf("LT-ORNN ‖VᵀV − I‖max = %g, want < 1e-5", e)
				}
				if offDiag < 0.1 {
					t.Errorf("LT-ORNN max off-diagonal |V_ij| = %g, want a random orthogonal matrix (> 0.1)", offDiag)
				}
			case ltrnn.Identity:
				for i, x := range v32 {
					if want := float32(rnn.IdentityMatrix(n)[i]); x != want {
						t.Fatalf("LT-IRNN V[%d,%d] = %g, want %g", i/n, i%n, x, want)
					}
				}
			}
			for _, m := range []struct {
				name  string
				fanIn int
			}{{"U", in}, {"W", n}} {
				w := tensors.MustCopyFlatData[float32](scope.GetVariable(m.name).MustValue())
				var mean, sq float64
				for _, x := range w {
					mean += float64(x) / float64(len(w))
					sq += float64(x) * float64(x) / float64(len(w))
				}
				std, want := math.Sqrt(sq-mean*mean), 1/math.Sqrt(float64(m.fanIn))
				if math.Abs(std/want-1) > 0.1 || math.Abs(mean) > 4*want/math.Sqrt(float64(len(w))) {
					t.Errorf("%s: mean %.4f, std %.4f, want mean 0 and std 1/√%d = %.4f", m.name, mean, std, m.fanIn, want)
				}
			}
			for i, x := range tensors.MustCopyFlatData[float32](scope.GetVariable("b").MustValue()) {
				if x != 0 {
					t.Fatalf("b[%d] = %g, want 0", i, x)
				}
			}
		})
	}
}

// TestFromWeightsErrors checks that FromWeights rejects weights whose lengths fit no
// sizes, naming the field (Init's errors are in TestCell).
func TestFromWeightsErrors(t *testing.T) {
	w := func(n int) []float64 { return make([]float64, n) }
	for _, tc := range []struct {
		name string
		w    ltrnn.Weights
		want string
	}{
		{"V not square", ltrnn.Weights{U: w(4), V: w(5), W: w(2)}, "Weights.V has 5 values"},
		{"U not N·In", ltrnn.Weights{U: w(3), V: w(4), W: w(2)}, "Weights.U has 3 values"},
		{"W empty", ltrnn.Weights{U: w(4), V: w(4)}, "Weights.W has 0 values"},
		{"odd N with WP", ltrnn.Weights{U: w(3), V: w(9), W: w(3), WP: w(1)}, "N = 3"},
		{"short WP", ltrnn.Weights{U: w(4), V: w(4), W: w(2), WP: w(2)}, "Preset.WP has 2 values, want 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ltrnn.FromWeights(ltrnn.Linear, tc.w); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("FromWeights error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestOrthogonalityPenalty checks L(V) = (1/m) Σ ‖VᵀV x_i − x_i‖² on cases with known
// values, its gradient, and the cell's OrthogonalityLoss at fresh random points.
func TestOrthogonalityPenalty(t *testing.T) {
	const n = 4
	rng := rand.New(rand.NewPCG(8, 8))
	q := ltrnn.Orthogonalize(rnn.Uniform(rng, n*n, -1, 1), n)
	x := [][]float64{{1, 0, 0, 0}, {0.6, 0, 0.8, 0}, {0.5, 0.5, 0.5, 0.5}}
	diag := []float64{1, 2, 0.5, 1} // V = diag(d): VᵀV x − x = (d² − 1) ⊙ x
	wantDiag := 0.0
	for _, xi := range x {
		for k := range n {
			e := (diag[k]*diag[k] - 1) * xi[k]
			wantDiag += e * e / float64(len(x))
		}
	}
	for _, tc := range []struct {
		name string
		v    []float64
		want float64
	}{
		{"orthogonal", q, 0},
		{"2I", []float64{2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2}, 9}, // ‖3x‖² = 9
		{"diagonal", []float64{1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 1}, wantDiag},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tensors.ToScalar[float64](MustExecOnce(backend.MustNew(), func(g *Graph) *Node {
				return ltrnn.OrthogonalityPenalty(Reshape(Const(g, tc.v), n, n), Const(g, x))
			}))
			if math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("penalty = %.15g, want %.15g", got, tc.want)
			}
		})
	}

	// Gradient with respect to V, and E[L] = ‖VᵀV − I‖²_F / n at many random points.
	cell := &ltrnn.Cell{In: 1, N: n, Out: 1, Type: dtypes.Float64}
	store := model.NewStore()
	scope := store.RootScope()
	if err := cell.Init(scope, rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Fatal(err)
	}
	if err := store.SetRNGStateFromSeed(42); err != nil {
		t.Fatal(err)
	}
	l0 := tensors.ToScalar[float64](model.MustExecOnce(backend.MustNew(), store, func(scope *model.Scope, g *Graph) *Node {
		return cell.OrthogonalityLoss(scope, g, ltrnn.PenaltyPoints)
	}))
	if l0 > 1e-20 {
		t.Errorf("OrthogonalityLoss of the LT-ORNN init = %g, want 0", l0)
	}
	v := rnn.Uniform(rng, n*n, -1, 1)
	setValues(scope, "V", v)
	frob := 0.0
	for i := range n {
		for j := range n {
			s := 0.0
			for k := range n {
				s += v[k*n+i] * v[k*n+j]
			}
			if i == j {
				s--
			}
			frob += s * s
		}
	}
	const m = 20000
	got := tensors.ToScalar[float64](model.MustExecOnce(backend.MustNew(), store, func(scope *model.Scope, g *Graph) *Node {
		return cell.OrthogonalityLoss(scope, g, m)
	}))
	if want := frob / n; math.Abs(got/want-1) > 0.05 {
		t.Errorf("OrthogonalityLoss at %d points = %g, want ≈ ‖VᵀV − I‖²_F/n = %g (±5%%)", m, got, want)
	}
	points := inputs(6, 1, ltrnn.PenaltyPoints, n)[0]
	for _, p := range points {
		norm := math.Sqrt(p[0]*p[0] + p[1]*p[1] + p[2]*p[2] + p[3]*p[3])
		for k := range p {
			p[k] /= norm
		}
	}
	loss := func(scope *model.Scope, g *Graph) *Node {
		return ltrnn.OrthogonalityPenalty(rnn.Variable(scope, g, "V"), Const(g, points))
	}
	if err := celltest.CheckGradient(backend.MustNew(), store, loss, celltest.FD{}); err != nil {
		t.Error(err)
	}
	norm := func(scope *model.Scope, g *Graph) *Node {
		return ltrnn.OrthogonalityNorm(rnn.Variable(scope, g, "V"), Const(g, points))
	}
	if err := celltest.CheckGradient(backend.MustNew(), store, norm, celltest.FD{}); err != nil {
		t.Errorf("OrthogonalityNorm: %v", err)
	}
}

// TestOrthogonalityNorm checks L₁(V) = (1/m) Σ ‖VᵀV x_i − x_i‖ on cases with known values,
// and that its gradient at an orthogonal V is zero, not NaN.
func TestOrthogonalityNorm(t *testing.T) {
	const n = 4
	x := [][]float64{{1, 0, 0, 0}, {0.6, 0, 0.8, 0}, {0.5, 0.5, 0.5, 0.5}}
	diag := []float64{1, 2, 0.5, 1}
	wantDiag := 0.0
	for _, xi := range x {
		s := 0.0
		for k := range n {
			e := (diag[k]*diag[k] - 1) * xi[k]
			s += e * e
		}
		wantDiag += math.Sqrt(s) / float64(len(x))
	}
	for _, tc := range []struct {
		name string
		v    []float64
		want float64
	}{
		{"identity", []float64{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, 0},
		{"2I", []float64{2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2}, 3}, // ‖3x‖ = 3
		{"diagonal", []float64{1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 1}, wantDiag},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := MustExecOnceN(backend.MustNew(), func(g *Graph) []*Node {
				v := Reshape(Const(g, tc.v), n, n)
				l := ltrnn.OrthogonalityNorm(v, Const(g, x))
				return []*Node{l, ReduceAllSum(Abs(Gradient(l, v)[0]))}
			})
			got, grad := tensors.ToScalar[float64](out[0]), tensors.ToScalar[float64](out[1])
			if math.Abs(got-tc.want) > 2e-12 { // ε = 1e-12 a point at a residual of zero
				t.Errorf("norm penalty = %.15g, want %.15g", got, tc.want)
			}
			if tc.want == 0 && grad != 0 {
				t.Errorf("gradient at an orthogonal V sums to %g in absolute value, want 0", grad)
			}
			if math.IsNaN(grad) {
				t.Errorf("gradient is NaN")
			}
		})
	}
}

// TestRandomUnitVectors checks the points are unit vectors and change between executions.
func TestRandomUnitVectors(t *testing.T) {
	store := model.NewStore()
	if err := store.SetRNGStateFromSeed(7); err != nil {
		t.Fatal(err)
	}
	exec, err := model.NewExec(backend.MustNew(), store, func(scope *model.Scope, g *Graph) *Node {
		return ltrnn.RandomUnitVectors(scope, g, dtypes.Float64, 5, 3)
	})
	if err != nil {
		t.Fatal(err)
	}
	var draws [2][]float64
	for k := range draws {
		out, err := exec.Call()
		if err != nil {
			t.Fatal(err)
		}
		draws[k] = tensors.MustCopyFlatData[float64](out[0])
		for i := range 5 {
			r := draws[k][3*i : 3*i+3]
			if norm := math.Sqrt(r[0]*r[0] + r[1]*r[1] + r[2]*r[2]); math.Abs(norm-1) > 1e-12 {
				t.Errorf("draw %d, row %d: norm %g, want 1", k, i, norm)
			}
		}
	}
	if draws[0][0] == draws[1][0] && draws[0][1] == draws[1][1] {
		t.Errorf("two executions drew the same point %v: want fresh points each time", draws[0][:3])
	}
}

// TestVariance: U and W are drawn with standard deviation 1/√n by default and n^(−1/4) with
// VarianceOneOverSqrtN (n their fan-in: In for U, N for W); V's projection ignores the scale;
// a Variance out of range is an error naming it.
func TestVariance(t *testing.T) {
	for _, v := range []ltrnn.Variance{ltrnn.VarianceOneOverN, ltrnn.VarianceOneOverSqrtN} {
		c := &ltrnn.Cell{In: 10, N: 400, Out: 9, Variance: v}
		scope := model.NewStore().RootScope()
		if err := c.Init(scope, rand.New(rand.NewPCG(3, 3))); err != nil {
			t.Fatal(err)
		}
		for name, fanIn := range map[string]int{"U": c.In, "W": c.N} {
			vals, err := rnn.VariableValues(scope, name)
			if err != nil {
				t.Fatal(err)
			}
			var sum2 float64
			for _, x := range vals {
				sum2 += x * x
			}
			std, want := math.Sqrt(sum2/float64(len(vals))), 1/math.Sqrt(float64(fanIn))
			if v == ltrnn.VarianceOneOverSqrtN {
				want = math.Pow(float64(fanIn), -0.25)
			}
			if math.Abs(std/want-1) > 0.05 { // 3600 values or more: relative error of the estimate ≈ 1.2%
				t.Errorf("Variance %d: %s's standard deviation %.4f, want %.4f", v, name, std, want)
			}
		}
	}
	err := (&ltrnn.Cell{In: 1, N: 2, Out: 1, Variance: 2}).Init(model.NewStore().RootScope(), rand.New(rand.NewPCG(1, 1)))
	if err == nil || !strings.Contains(err.Error(), "Variance = 2, want VarianceOneOverN (0) or VarianceOneOverSqrtN (1)") {
		t.Errorf("Variance 2: %v", err)
	}
}
