package hessianfree

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
)

// CGResult is the outcome of CG.
type CGResult struct {
	X     []float64 // the last iterate
	Iters int       // iterations run (products with A, besides the one at x0)
	Phi   float64   // φ(X) = ½ Xᵀ A X − bᵀ X
}

// Martens 2010 §4.4's truncation of CG: stop at iteration i once i > k, φ(x_i) < 0 and
// (φ(x_i) − φ(x_{i−k})) / φ(x_i) < k·ε, with k = max(minWindow, windowShare·i), ε = progressEps.
const (
	minWindow   = 10
	windowShare = 0.1
	progressEps = 5e-4
	// residualTol ends CG once ‖r‖ ≤ residualTol·‖b‖: solved to rounding.
	residualTol = 1e-10
)

// CG minimises φ(x) = ½ xᵀ A x − bᵀ x, that is solves A x = b, for a symmetric positive
// definite A given by its products (times), by the conjugate gradient method from x0 (nil:
// zero), for at most maxIter iterations, and fewer when φ stops falling by Martens 2010
// §4.4's relative criterion (k = max(10, 0.1 i) iterations back, ε = 5·10⁻⁴) or the residual
// falls to 10⁻¹⁰ ‖b‖. Per iteration, with r = b − A x and p the search direction:
//
//	α = rᵀr / pᵀAp,   x ← x + α p,   r' = r − α A p,   p ← r' + (r'ᵀr' / rᵀr) p
//
// and φ(x) = −½ xᵀ(b + r). It returns an error if pᵀAp ≤ 0 (A not positive definite along p)
// or a product fails.
func CG(times func([]float64) ([]float64, error), b, x0 []float64, maxIter int) (CGResult, error) {
	n := len(b)
	x := make([]float64, n)
	if x0 != nil {
		copy(x, x0)
	}
	r := append([]float64(nil), b...)
	if floats.Norm(x, 2) > 0 {
		ax, err := times(x)
		if err != nil {
			return CGResult{}, err
		}
		floats.Sub(r, ax)
	}
	phi := func() float64 { // −½ xᵀ(b + r)
		return -0.5 * (floats.Dot(x, b) + floats.Dot(x, r))
	}
	p := append([]float64(nil), r...)
	rr := floats.Dot(r, r)
	phis := []float64{phi()}
	i := 0
	stop := residualTol * residualTol * floats.Dot(b, b)
	for i < maxIter && rr > stop {
		ap, err := times(p)
		if err != nil {
			return CGResult{}, err
		}
		pap := floats.Dot(p, ap)
		if !(pap > 0) {
			return CGResult{}, fmt.Errorf("hessianfree: CG iteration %d: pᵀAp = %g, want > 0 (A is not positive definite)", i+1, pap)
		}
		alpha := rr / pap
		floats.AddScaled(x, alpha, p)
		floats.AddScaled(r, -alpha, ap)
		next := floats.Dot(r, r)
		floats.AddScaledTo(p, r, next/rr, p)
		rr = next
		i++
		phis = append(phis, phi())
		k := int(math.Max(minWindow, windowShare*float64(i)))
		if cur := phis[i]; i > k && cur < 0 && (cur-phis[i-k])/cur < float64(k)*progressEps {
			break
		}
	}
	return CGResult{X: x, Iters: i, Phi: phis[i]}, nil
}
