package exprnn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"gonum.org/v1/gonum/mat"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
)

// randomOrthogonal returns a random n×n orthogonal matrix: the Q of the QR factorisation of a
// Gaussian matrix.
func randomOrthogonal(rng *rand.Rand, n int) *mat.Dense {
	g := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	return &q
}

// skewWithSpectrum returns a random n×n skew-symmetric A = Q Λ Qᵀ of spectral norm rho (Λ
// block-diagonal with blocks [[0, θ_k], [−θ_k, 0]], θ_0 = rho and the others from
// U[−rho, rho], Q random orthogonal) and its exact exponential Q R(θ) Qᵀ (R(θ) the rotations
// cos θ_k, sin θ_k): the reference of the accuracy tests, exact up to float64 rounding.
func skewWithSpectrum(rng *rand.Rand, n int, rho float64) (a, expA *mat.Dense) {
	q := randomOrthogonal(rng, n)
	lam, rot := mat.NewDense(n, n, nil), mat.NewDense(n, n, nil)
	for i := range n {
		rot.Set(i, i, 1)
	}
	for k := range n / 2 {
		th := rho
		if k > 0 {
			th = rho * (2*rng.Float64() - 1)
		}
		i, j := 2*k, 2*k+1
		lam.Set(i, j, th)
		lam.Set(j, i, -th)
		rot.Set(i, i, math.Cos(th))
		rot.Set(j, j, math.Cos(th))
		rot.Set(i, j, math.Sin(th))
		rot.Set(j, i, -math.Sin(th))
	}
	conj := func(m *mat.Dense) *mat.Dense {
		var t, r mat.Dense
		t.Mul(q, m)
		r.Mul(&t, q.T())
		return &r
	}
	a, expA = conj(lam), conj(rot)
	// Exactly skew-symmetric: the upper triangle is what the cell stores.
	for i := range n {
		a.Set(i, i, 0)
		for j := i + 1; j < n; j++ {
			a.Set(j, i, -a.At(i, j))
		}
	}
	return a, expA
}

// upper returns the strictly upper triangle of a, row by row (the layout of "A").
func upper(a *mat.Dense) []float64 {
	n, _ := a.Dims()
	v := make([]float64, 0, NumSkew(n))
	for i := range n {
		for j := i + 1; j < n; j++ {
			v = append(v, a.At(i, j))
		}
	}
	return v
}

// expmExec returns a function computing Expm(Skew(a)) for n×n in dtype with one compiled
// graph, converted to float64 (row-major).
func expmExec(t *testing.T, dtype dtypes.DType, n int) func(a []float64) []float64 {
	t.Helper()
	exec, err := NewExec(backend.MustNew(), func(a *Node) *Node {
		return ConvertDType(Expm(Skew(a, n)), dtypes.Float64)
	})
	if err != nil {
		t.Fatal(err)
	}
	return func(a []float64) []float64 {
		in := tensors.FromFlatDataAndDimensions(a, len(a))
		if dtype == dtypes.Float32 {
			f := make([]float32, len(a))
			for i, x := range a {
				f[i] = float32(x)
			}
			in = tensors.FromFlatDataAndDimensions(f, len(f))
		}
		out, err := exec.Call1(in)
		if err != nil {
			t.Fatal(err)
		}
		return tensors.MustCopyFlatData[float64](out)
	}
}

// maxDiff returns max_ij |got_ij − want_ij|.
func maxDiff(got []float64, want mat.Matrix) float64 {
	_, n := want.Dims()
	d := 0.0
	for i, g := range got {
		d = max(d, math.Abs(g-want.At(i/n, i%n)))
	}
	return d
}

// orthoErr returns max_ij |(WᵀW − I)_ij| for W n×n row-major.
func orthoErr(w []float64, n int) float64 {
	W := mat.NewDense(n, n, w)
	var p mat.Dense
	p.Mul(W.T(), W)
	d := 0.0
	for i := range n {
		for j := range n {
			want := 0.0
			if i == j {
				want = 1
			}
			d = max(d, math.Abs(p.At(i, j)-want))
		}
	}
	return d
}
