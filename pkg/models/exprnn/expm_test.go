package exprnn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/mat"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn/celltest"
)

// TestSkew checks the layout of Skew: A_ij = a[SkewIndex(n, i, j)] = −A_ji, A_ii = 0.
func TestSkew(t *testing.T) {
	const n = 5
	a := make([]float64, NumSkew(n))
	for k := range a {
		a[k] = float64(k + 1)
	}
	got := tensors.MustCopyFlatData[float64](MustExecOnce(backend.MustNew(), func(g *Graph) *Node {
		return Skew(Const(g, a), n)
	}))
	k := 0
	for i := range n {
		if got[i*n+i] != 0 {
			t.Errorf("A[%d,%d] = %g, want 0", i, i, got[i*n+i])
		}
		for j := i + 1; j < n; j++ {
			if SkewIndex(n, i, j) != k {
				t.Errorf("SkewIndex(%d, %d, %d) = %d, want %d (row by row)", n, i, j, SkewIndex(n, i, j), k)
			}
			if got[i*n+j] != a[k] || got[j*n+i] != -a[k] {
				t.Errorf("A[%d,%d], A[%d,%d] = %g, %g, want %g, %g", i, j, j, i, got[i*n+j], got[j*n+i], a[k], -a[k])
			}
			k++
		}
	}
}

// tolerances of TestExpmAccuracy: max-entry error against the exact exponential (relative,
// since ‖exp(A)‖₂ = 1) and max |WᵀW − I|.
var expmTol = map[dtypes.DType]float64{dtypes.Float32: 1e-5, dtypes.Float64: 1e-12}

// TestExpmAccuracy compares Expm with the exact exponential Q R(θ) Qᵀ of random
// skew-symmetric A = Q Λ Qᵀ whose spectral norm runs up to MaxNorm, in Float32 and Float64,
// and checks that the result is orthogonal.
func TestExpmAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tc := range []struct {
		n    int
		rhos []float64
	}{
		{2, []float64{0.5, math.Pi, MaxNorm}},
		{7, []float64{1e-3, 1, math.Pi, 16, MaxNorm}},
		{64, []float64{0.1, math.Pi, 16, 32, MaxNorm}},
		{190, []float64{math.Pi, MaxNorm}},
		{512, []float64{math.Pi, MaxNorm}},
	} {
		var worst [2][2]float64 // [dtype][error, orthogonality]
		execs := []func([]float64) []float64{expmExec(t, dtypes.Float32, tc.n), expmExec(t, dtypes.Float64, tc.n)}
		for _, rho := range tc.rhos {
			a, e := skewWithSpectrum(rng, tc.n, rho)
			av := upper(a)
			for d, dt := range []dtypes.DType{dtypes.Float32, dtypes.Float64} {
				w := execs[d](av)
				errE, errO := maxDiff(w, e), orthoErr(w, tc.n)
				worst[d][0], worst[d][1] = max(worst[d][0], errE), max(worst[d][1], errO)
				if errE > expmTol[dt] || errO > expmTol[dt] {
					t.Errorf("n %d, ‖A‖₂ = %g, %s: max |Expm(A) − exp(A)| = %.3g, max |WᵀW − I| = %.3g, want ≤ %g",
						tc.n, rho, dt, errE, errO, expmTol[dt])
				}
			}
		}
		t.Logf("n %3d, ‖A‖₂ up to %g: Float32 error %.2g, orthogonality %.2g; Float64 %.2g, %.2g",
			tc.n, tc.rhos[len(tc.rhos)-1], worst[0][0], worst[0][1], worst[1][0], worst[1][1])
	}
}

// TestExpmTruncation checks the truncation bound of the doc of TaylorDegree beyond MaxNorm,
// where it dominates Float64 rounding: error ≤ 2^s (ρ/2^s)^{m+1}/(m+1)! (plus rounding).
func TestExpmTruncation(t *testing.T) {
	const n = 16
	rng := rand.New(rand.NewPCG(13, 14))
	exec := expmExec(t, dtypes.Float64, n)
	scale := math.Ldexp(1, Squarings)
	for _, rho := range []float64{48, 64, 80, 96} {
		a, e := skewWithSpectrum(rng, n, rho)
		bound := scale * math.Pow(rho/scale, TaylorDegree+1) / math.Gamma(TaylorDegree+2)
		got := maxDiff(exec(upper(a)), e)
		t.Logf("‖A‖₂ = %g: error %.3g, bound %.3g", rho, got, bound)
		if got > bound+1e-13 {
			t.Errorf("‖A‖₂ = %g: error %.3g above the bound %.3g", rho, got, bound)
		}
	}
}

// TestExpmGonum compares Expm with gonum's Dense.Exp (Higham's Padé scaling and squaring) on
// skew-symmetric matrices with entries from U[−1, 1], scaled to Frobenius norms up to
// MaxNorm (‖A‖₂ ≤ ‖A‖_F).
func TestExpmGonum(t *testing.T) {
	const n = 40
	rng := rand.New(rand.NewPCG(15, 16))
	exec := expmExec(t, dtypes.Float64, n)
	for _, norm := range []float64{0.01, 1, 10, MaxNorm} {
		a := rnn.Uniform(rng, NumSkew(n), -1, 1)
		ss := 0.0
		for _, x := range a {
			ss += 2 * x * x
		}
		A := mat.NewDense(n, n, nil)
		for i := range n {
			for j := i + 1; j < n; j++ {
				k := SkewIndex(n, i, j)
				a[k] *= norm / math.Sqrt(ss)
				A.Set(i, j, a[k])
				A.Set(j, i, -a[k])
			}
		}
		var want mat.Dense
		want.Exp(A)
		if d := maxDiff(exec(a), &want); d > 1e-12 {
			t.Errorf("‖A‖_F = %g: max |Expm(A) − gonum Exp(A)| = %.3g, want ≤ 1e-12", norm, d)
		}
	}
}

// TestExpmGradient checks GoMLX's gradient through Skew and Expm against central differences,
// for A of spectral norm 10 (so that the squarings matter).
func TestExpmGradient(t *testing.T) {
	const n = 6
	rng := rand.New(rand.NewPCG(17, 18))
	a, _ := skewWithSpectrum(rng, n, 10)
	store := model.NewStore()
	if err := rnn.NewVariable(store.RootScope(), "A", dtypes.Float64, upper(a), NumSkew(n)); err != nil {
		t.Fatal(err)
	}
	weights := rnn.Uniform(rng, n*n, -1, 1)
	loss := func(scope *model.Scope, g *Graph) *Node {
		w := Expm(Skew(rnn.Variable(scope, g, "A"), n))
		return ReduceAllSum(Mul(w, Reshape(Const(g, weights), n, n)))
	}
	if err := celltest.CheckGradient(backend.MustNew(), store, loss, celltest.FD{}); err != nil {
		t.Error(err)
	}
}
