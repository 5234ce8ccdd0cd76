package scornn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// InitialA returns the authors' initial skew-symmetric A (n×n, row-major; package doc):
// blocks A[2k][2k+1] = a_k = −tan(θ_k/2) = −√((1 − cos θ_k)/(1 + cos θ_k)),
// A[2k+1][2k] = −a_k, with θ_k ~ U[0, π/2] drawn from rng for k < ⌊n/2⌋, zero elsewhere.
// (I + A)^{-1}(I − A) is then a block rotation with angles θ_k.
func InitialA(rng *rand.Rand, n int) []float64 {
	a := make([]float64, n*n)
	for k := range n / 2 {
		theta := math.Pi / 2 * rng.Float64()
		s := -math.Sqrt((1 - math.Cos(theta)) / (1 + math.Cos(theta)))
		i := 2 * k
		a[i*n+i+1], a[(i+1)*n+i] = s, -s
	}
	return a
}

// DiagD returns the diagonal of D: n−rho entries +1, then rho entries −1 (the authors'
// scripts: np.diag(np.concatenate([np.ones(n − ρ), −np.ones(ρ)]))).
func DiagD(n, rho int) []float64 {
	d := make([]float64, n)
	for i := range d {
		d[i] = 1
		if i >= n-rho {
			d[i] = -1
		}
	}
	return d
}

// checkInputs returns an error naming the value when a (n×n) is not skew-symmetric or d
// (n) has an entry other than ±1.
func checkInputs(n int, a, d []float64) error {
	if n < 1 {
		return fmt.Errorf("scornn: N = %d, want >= 1", n)
	}
	if len(a) != n*n || len(d) != n {
		return fmt.Errorf("scornn: A has %d entries and D %d, want N² = %d and N = %d", len(a), len(d), n*n, n)
	}
	for i, x := range d {
		if x != 1 && x != -1 {
			return fmt.Errorf("scornn: D[%d] = %g, want -1 or +1", i, x)
		}
	}
	for i := range n {
		for j := i; j < n; j++ {
			x, y := a[i*n+j], a[j*n+i]
			if !(math.Abs(x+y) <= 1e-9*max(1, math.Abs(x))) {
				return fmt.Errorf("scornn: A[%d][%d] = %g and A[%d][%d] = %g, want A skew-symmetric (A[j][i] = −A[i][j], zero diagonal)", i, j, x, j, i, y)
			}
		}
	}
	return nil
}

// luOf returns the LU factorisation of I + A.
func luOf(n int, a []float64) *mat.LU {
	m := mat.NewDense(n, n, append([]float64(nil), a...))
	for i := range n {
		m.Set(i, i, m.At(i, i)+1)
	}
	var lu mat.LU
	lu.Factorize(m)
	return &lu
}

// CayleyW returns W = (I + A)^{-1} (I − A) D = 2 (I + A)^{-1} D − D for a skew-symmetric
// n×n A (row-major) and the diagonal d of D. It returns an error naming the value when A
// is not skew-symmetric, an entry of d is not ±1, or the solve fails.
func CayleyW(n int, a, d []float64) ([]float64, error) {
	if err := checkInputs(n, a, d); err != nil {
		return nil, err
	}
	dm := mat.NewDiagDense(n, append([]float64(nil), d...))
	var y mat.Dense
	if err := luOf(n, a).SolveTo(&y, false, dm); err != nil {
		return nil, fmt.Errorf("scornn: solving (I + A) Y = D: %w", err)
	}
	w := make([]float64, n*n)
	for i := range n {
		for j := range n {
			w[i*n+j] = 2 * y.At(i, j)
		}
		w[i*n+i] -= d[i]
	}
	return w, nil
}

// GradA returns the gradient of the loss with respect to the skew-symmetric A behind
// W = (I + A)^{-1}(I − A)D, from gw = ∂L/∂W ([1]'s theorem, package doc):
//
//	K = (I + A)^{-T} ∂L/∂W (D + Wᵀ),   ∇_A = Kᵀ − K.
//
// ∇_A[i][j] (i < j) is the derivative of L along the direction that raises A[i][j] and
// lowers A[j][i] by the same amount. All matrices are n×n row-major, d the diagonal of D.
// It returns an error naming the value when A is not skew-symmetric, an entry of d is not
// ±1, a slice has the wrong length, or the solve fails.
func GradA(n int, a, d, w, gw []float64) ([]float64, error) {
	if err := checkInputs(n, a, d); err != nil {
		return nil, err
	}
	if len(w) != n*n || len(gw) != n*n {
		return nil, fmt.Errorf("scornn: W has %d entries and ∂L/∂W %d, want N² = %d", len(w), len(gw), n*n)
	}
	g := mat.NewDense(n, n, gw)
	var r mat.Dense // ∂L/∂W (D + Wᵀ)
	r.Mul(g, mat.NewDense(n, n, w).T())
	for i := range n {
		for j := range n {
			r.Set(i, j, r.At(i, j)+gw[i*n+j]*d[j])
		}
	}
	var k mat.Dense
	if err := luOf(n, a).SolveTo(&k, true, &r); err != nil {
		return nil, fmt.Errorf("scornn: solving (I + A)ᵀ K = ∂L/∂W (D + Wᵀ): %w", err)
	}
	out := make([]float64, n*n)
	for i := range n {
		for j := range n {
			out[i*n+j] = k.At(j, i) - k.At(i, j)
		}
	}
	return out, nil
}
