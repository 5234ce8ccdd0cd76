package fcurnn

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"

	"gonum.org/v1/gonum/dsp/fourier"
	"gonum.org/v1/gonum/mat"
)

// CayleyStep returns the Cayley step of [1] §4 (package doc) for the n×n complex matrix
// W = wre + i·wim and the gradient G = gre + i·gim (row-major, (W h)_k = Σ_j W[k][j] h_j):
//
//	A = G W^H − W G^H,   W' = (I + (λ/2)A)^{-1} (I − (λ/2)A) W = 2 (I + (λ/2)A)^{-1} W − W
//
// solved by an LU factorisation of the real 2n×2n embedding of I + (λ/2)A. It returns an
// error naming the value when n < 1, λ is not a finite number > 0, a slice does not hold
// n² values, or the solve fails.
func CayleyStep(n int, lambda float64, wre, wim, gre, gim []float64) (re, im []float64, err error) {
	if n < 1 {
		return nil, nil, fmt.Errorf("fcurnn: CayleyStep: N = %d, want >= 1", n)
	}
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return nil, nil, fmt.Errorf("fcurnn: CayleyStep: λ = %g, want a finite value > 0", lambda)
	}
	for i, x := range [][]float64{wre, wim, gre, gim} {
		if len(x) != n*n {
			return nil, nil, fmt.Errorf("fcurnn: CayleyStep: %s has %d entries, want n² = %d", []string{"Re W", "Im W", "Re G", "Im G"}[i], len(x), n*n)
		}
	}
	wr, wi := mat.NewDense(n, n, wre), mat.NewDense(n, n, wim)
	gr, gi := mat.NewDense(n, n, gre), mat.NewDense(n, n, gim)
	// B = G W^H = (Gr + iGi)(Wrᵀ − iWiᵀ) = (Gr Wrᵀ + Gi Wiᵀ) + i (Gi Wrᵀ − Gr Wiᵀ).
	var br, bi, t mat.Dense
	br.Mul(gr, wr.T())
	t.Mul(gi, wi.T())
	br.Add(&br, &t)
	bi.Mul(gi, wr.T())
	t.Mul(gr, wi.T())
	bi.Sub(&bi, &t)
	// I + αA = P + iQ with A = B − B^H: Re A = Br − Brᵀ, Im A = Bi + Biᵀ; embedded as
	// [[P, −Q], [Q, P]] acting on [Re; Im].
	alpha := lambda / 2
	m := mat.NewDense(2*n, 2*n, nil)
	for i := range n {
		for j := range n {
			p := alpha * (br.At(i, j) - br.At(j, i))
			q := alpha * (bi.At(i, j) + bi.At(j, i))
			if i == j {
				p++
			}
			m.Set(i, j, p)
			m.Set(i, n+j, -q)
			m.Set(n+i, j, q)
			m.Set(n+i, n+j, p)
		}
	}
	rhs := mat.NewDense(2*n, n, append(append(make([]float64, 0, 2*n*n), wre...), wim...))
	var lu mat.LU
	lu.Factorize(m)
	var y mat.Dense
	if err := lu.SolveTo(&y, false, rhs); err != nil {
		return nil, nil, fmt.Errorf("fcurnn: CayleyStep: solving (I + λ/2 A) Y = W: %w", err)
	}
	re, im = make([]float64, n*n), make([]float64, n*n)
	for i := range n {
		for j := range n {
			re[i*n+j] = 2*y.At(i, j) - wre[i*n+j]
			im[i*n+j] = 2*y.At(n+i, j) - wim[i*n+j]
		}
	}
	return re, im, nil
}

// RestrictedW returns the recurrent matrix of the restricted-capacity uRNN of [2],
// W = D3 R2 F⁻¹ D2 Π R1 F D1, at [2]'s random initialisation (§3.4: θ U[−π, π], reflection
// vectors U[−1, 1], Π uniform), drawn from rng in that order and multiplied out into a
// dense n×n matrix (row-major, W[k][j] = re[k·n+j] + i·im[k·n+j]): the initial W of the
// full-capacity uRNN in the authors' code (package doc). The factors follow package urnn's
// conventions exactly (TestRestrictedWMatchesURNN).
func RestrictedW(rng *rand.Rand, n int) (re, im []float64) {
	theta := make([]float64, 3*n)
	for i := range theta {
		theta[i] = -math.Pi + 2*math.Pi*rng.Float64()
	}
	refl := make([]float64, 4*n)
	for i := range refl {
		refl[i] = -1 + 2*rng.Float64()
	}
	return restrictedProduct(n, theta, refl, rng.Perm(n))
}

// restrictedProduct multiplies out W = D3 R2 F⁻¹ D2 Π R1 F D1 for θ [3, n], reflection
// vectors [2, 2, n] (reflection[k] = [Re v_k; Im v_k]) and (Π z)_j = z_{perm[j]}, as package
// urnn stores them, one column W e_j at a time with FFTs (O(n² log n)).
func restrictedProduct(n int, theta, refl []float64, perm []int) (re, im []float64) {
	d := func(z []complex128, k int) {
		for j := range z {
			z[j] *= cmplx.Exp(complex(0, theta[k*n+j]))
		}
	}
	v := make([][]complex128, 2) // unit reflection vectors
	for k := range v {
		v[k] = make([]complex128, n)
		var norm float64
		for j := range n {
			v[k][j] = complex(refl[k*2*n+j], refl[k*2*n+n+j])
			norm += real(v[k][j])*real(v[k][j]) + imag(v[k][j])*imag(v[k][j])
		}
		for j := range n {
			v[k][j] /= complex(math.Sqrt(norm), 0)
		}
	}
	r := func(z []complex128, k int) { // z − 2 v (v* z)
		var dot complex128
		for j := range z {
			dot += cmplx.Conj(v[k][j]) * z[j]
		}
		for j := range z {
			z[j] -= 2 * v[k][j] * dot
		}
	}
	fft := fourier.NewCmplxFFT(n)
	scale := complex(1/math.Sqrt(float64(n)), 0)
	re, im = make([]float64, n*n), make([]float64, n*n)
	z, tmp := make([]complex128, n), make([]complex128, n)
	for col := range n {
		clear(z)
		z[col] = 1
		d(z, 0)
		fft.Coefficients(z, z) // Σ_j e^{−2πi jk/n} z_j
		for j := range z {
			z[j] *= scale
		}
		r(z, 0)
		for j, p := range perm {
			tmp[j] = z[p]
		}
		z, tmp = tmp, z
		d(z, 1)
		fft.Sequence(z, z) // Σ_k e^{+2πi jk/n} z_k
		for j := range z {
			z[j] *= scale
		}
		r(z, 1)
		d(z, 2)
		for k := range n {
			re[k*n+col], im[k*n+col] = real(z[k]), imag(z[k])
		}
	}
	return re, im
}
