package hessianfree

import (
	"math"
	"math/rand/v2"
	"testing"
)

// spd returns the product of a random n×n symmetric positive definite matrix A = MᵀM + I.
func spd(n int, seed uint64) func([]float64) ([]float64, error) {
	rng := rand.New(rand.NewPCG(seed, 1))
	m := make([][]float64, n)
	for i := range m {
		m[i] = make([]float64, n)
		for j := range m[i] {
			m[i][j] = rng.NormFloat64()
		}
	}
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n)
		for j := range a[i] {
			for k := range n {
				a[i][j] += m[k][i] * m[k][j]
			}
		}
		a[i][i]++
	}
	return func(v []float64) ([]float64, error) {
		out := make([]float64, n)
		for i := range a {
			for j := range a[i] {
				out[i] += a[i][j] * v[j]
			}
		}
		return out, nil
	}
}

// TestCGSolves checks that CG solves a small SPD system A x = b to rounding within n
// iterations (exact arithmetic takes at most n), from zero and from a warm start, and that
// φ(x) = ½ xᵀAx − bᵀx is the value it reports.
func TestCGSolves(t *testing.T) {
	const n = 8
	times := spd(n, 3)
	want := []float64{1, -2, 0.5, 3, 0, -1, 2, 0.25}
	b, _ := times(want)
	for _, tc := range []struct {
		name string
		x0   []float64
	}{{"zero", nil}, {"warm", []float64{0.9, -1.8, 0.4, 2.7, 0.1, -0.9, 1.8, 0.2}}} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := CG(times, b, tc.x0, 2*n)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if math.Abs(res.X[i]-want[i]) > 1e-8 {
					t.Errorf("x[%d] = %.12g, want %g (%d iterations)", i, res.X[i], want[i], res.Iters)
				}
			}
			if res.Iters > n+1 {
				t.Errorf("%d iterations, want <= %d", res.Iters, n+1)
			}
			ax, _ := times(res.X)
			phi := 0.0
			for i := range b {
				phi += 0.5*res.X[i]*ax[i] - b[i]*res.X[i]
			}
			if math.Abs(res.Phi-phi) > 1e-9*math.Abs(phi) {
				t.Errorf("Phi = %.12g, ½xᵀAx − bᵀx = %.12g", res.Phi, phi)
			}
		})
	}
	res, err := CG(times, b, nil, 3)
	if err != nil || res.Iters != 3 {
		t.Errorf("maxIter 3: %d iterations, %v; want 3", res.Iters, err)
	}
	if _, err := CG(func(v []float64) ([]float64, error) { return make([]float64, len(v)), nil }, b, nil, n); err == nil {
		t.Errorf("CG with A = 0 returned no error")
	}
}
