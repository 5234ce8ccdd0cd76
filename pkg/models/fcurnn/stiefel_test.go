package fcurnn

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/urnn"
)

// Plain-Go complex128 matrices for the slow references.
type cmat [][]complex128

func newCmat(n, m int) cmat {
	a := make(cmat, n)
	for i := range a {
		a[i] = make([]complex128, m)
	}
	return a
}

func fromParts(n int, re, im []float64) cmat {
	a := newCmat(n, n)
	for i := range n {
		for j := range n {
			a[i][j] = complex(re[i*n+j], im[i*n+j])
		}
	}
	return a
}

func (a cmat) parts() (re, im []float64) {
	for _, row := range a {
		for _, x := range row {
			re, im = append(re, real(x)), append(im, imag(x))
		}
	}
	return re, im
}

func (a cmat) mul(b cmat) cmat {
	c := newCmat(len(a), len(b[0]))
	for i := range a {
		for k := range b {
			for j := range b[0] {
				c[i][j] += a[i][k] * b[k][j]
			}
		}
	}
	return c
}

func (a cmat) h() cmat { // conjugate transpose
	c := newCmat(len(a[0]), len(a))
	for i := range a {
		for j := range a[0] {
			c[j][i] = cmplx.Conj(a[i][j])
		}
	}
	return c
}

func (a cmat) add(b cmat, s complex128) cmat { // a + s·b
	c := newCmat(len(a), len(a[0]))
	for i := range a {
		for j := range a[0] {
			c[i][j] = a[i][j] + s*b[i][j]
		}
	}
	return c
}

func eye(n int) cmat {
	a := newCmat(n, n)
	for i := range n {
		a[i][i] = 1
	}
	return a
}

// inverse is Gauss–Jordan elimination with partial pivoting.
func (a cmat) inverse() cmat {
	n := len(a)
	m := newCmat(n, 2*n)
	for i := range n {
		copy(m[i], a[i])
		m[i][n+i] = 1
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if cmplx.Abs(m[r][c]) > cmplx.Abs(m[p][c]) {
				p = r
			}
		}
		m[c], m[p] = m[p], m[c]
		piv := m[c][c]
		for j := range 2 * n {
			m[c][j] /= piv
		}
		for r := range n {
			if r != c && m[r][c] != 0 {
				f := m[r][c]
				for j := range 2 * n {
					m[r][j] -= f * m[c][j]
				}
			}
		}
	}
	inv := newCmat(n, n)
	for i := range n {
		copy(inv[i], m[i][n:])
	}
	return inv
}

func maxAbsDiff(a, b cmat) float64 {
	d := 0.0
	for i := range a {
		for j := range a[i] {
			d = max(d, cmplx.Abs(a[i][j]-b[i][j]))
		}
	}
	return d
}

func unitarityErr(w cmat) float64 { return maxAbsDiff(w.h().mul(w), eye(len(w))) }

func randomCmat(rng *rand.Rand, n, m int, sigma float64) cmat {
	a := newCmat(n, m)
	for i := range a {
		for j := range a[i] {
			a[i][j] = complex(sigma*rng.NormFloat64(), sigma*rng.NormFloat64())
		}
	}
	return a
}

func randomUnitary(rng *rand.Rand, n int) cmat {
	re, im := RestrictedW(rng, n)
	return fromParts(n, re, im)
}

// cayleyRef is the Cayley step written as in the package doc, with a dense inverse.
func cayleyRef(w, g cmat, lambda float64) cmat {
	a := g.mul(w.h()).add(w.mul(g.h()), -1)
	n := len(w)
	alpha := complex(lambda/2, 0)
	return eye(n).add(a, alpha).inverse().mul(eye(n).add(a, -alpha)).mul(w)
}

// TestRestrictedWMatchesURNN checks the initial W against package urnn's W with the same
// factors (its DenseW runs the uRNN's own graph on the basis vectors).
func TestRestrictedWMatchesURNN(t *testing.T) {
	for _, n := range []int{4, 6} {
		rng := rand.New(rand.NewPCG(uint64(n), 7))
		theta := make([]float64, 3*n)
		for i := range theta {
			theta[i] = -math.Pi + 2*math.Pi*rng.Float64()
		}
		refl := make([]float64, 4*n)
		for i := range refl {
			refl[i] = -1 + 2*rng.Float64()
		}
		perm := rng.Perm(n)
		re, im := restrictedProduct(n, theta, refl, perm)

		c := &urnn.Cell{In: 1, N: n, Out: 1, Type: dtypes.Float64, Impl: urnn.FourStep}
		store := model.NewStore()
		scope := store.RootScope()
		if err := c.Init(scope, rand.New(rand.NewPCG(1, 1))); err != nil {
			t.Fatal(err)
		}
		scope.GetVariable("theta").MustSetValue(tensors.FromFlatDataAndDimensions(theta, 3, n))
		scope.GetVariable("reflection").MustSetValue(tensors.FromFlatDataAndDimensions(refl, 2, 2, n))
		p := make([]int32, n)
		for i, x := range perm {
			p[i] = int32(x)
		}
		scope.GetVariable("perm").MustSetValue(tensors.FromFlatDataAndDimensions(p, n))
		wantRe, wantIm, err := c.DenseW(backend.MustNew(), scope)
		if err != nil {
			t.Fatal(err)
		}
		for k := range n {
			for j := range n {
				if d := cmplx.Abs(complex(re[k*n+j]-wantRe[k][j], im[k*n+j]-wantIm[k][j])); d > 1e-12 {
					t.Fatalf("n = %d: W[%d][%d] = %v, urnn's DenseW %v", n, k, j,
						complex(re[k*n+j], im[k*n+j]), complex(wantRe[k][j], wantIm[k][j]))
				}
			}
		}
		if e := unitarityErr(fromParts(n, re, im)); e > 1e-13 {
			t.Errorf("n = %d: max |W^H W − I| = %.3g", n, e)
		}
	}
}

// TestCayleyStepMatchesReference compares CayleyStep with the dense-inverse formula, at a
// step large enough for the inverse to matter.
func TestCayleyStepMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 5} {
		w, g := randomUnitary(rng, n), randomCmat(rng, n, n, 1)
		for _, lambda := range []float64{1e-3, 0.3, 2} {
			wre, wim := w.parts()
			gre, gim := g.parts()
			re, im, err := CayleyStep(n, lambda, wre, wim, gre, gim)
			if err != nil {
				t.Fatal(err)
			}
			want := cayleyRef(w, g, lambda)
			if d := maxAbsDiff(fromParts(n, re, im), want); d > 1e-13 {
				t.Errorf("n = %d, λ = %g: max |CayleyStep − (I + λA/2)⁻¹(I − λA/2)W| = %.3g", n, lambda, d)
			}
		}
	}
}

// TestUnitaryAfter1000Updates applies 1000 Cayley steps with random gradients and checks
// that W stays unitary. Gradients: complex Gaussian entries with standard deviation σ per
// part; λ = 1e-3 is the papers' learning rate.
func TestUnitaryAfter1000Updates(t *testing.T) {
	const n, steps = 64, 1000
	for _, tc := range []struct {
		sigma, lambda float64
		float32       bool // round W to float32 after each step, as a Float32 variable stores it
	}{
		{0.1, 1e-3, false},
		{1, 1e-2, false},
		{0.1, 1e-3, true},
	} {
		rng := rand.New(rand.NewPCG(3, 3))
		wre, wim := RestrictedW(rng, n)
		start := time.Now()
		for range steps {
			g := randomCmat(rng, n, n, tc.sigma)
			gre, gim := g.parts()
			var err error
			if wre, wim, err = CayleyStep(n, tc.lambda, wre, wim, gre, gim); err != nil {
				t.Fatal(err)
			}
			if tc.float32 {
				for i := range wre {
					wre[i], wim[i] = float64(float32(wre[i])), float64(float32(wim[i]))
				}
			}
		}
		e := unitarityErr(fromParts(n, wre, wim))
		t.Logf("n = %d, σ = %g, λ = %g, float32 storage %v: max |W^H W − I| = %.3g after %d updates (%v)",
			n, tc.sigma, tc.lambda, tc.float32, e, steps, time.Since(start).Round(time.Millisecond))
		if e > 1e-5 {
			t.Errorf("σ = %g, λ = %g, float32 %v: max |W^H W − I| = %.3g after %d updates, want ≤ 1e-5", tc.sigma, tc.lambda, tc.float32, e, steps)
		}
	}
}

// TestDescent checks the sign of the step: for the smooth loss f(W) = ‖W X − Y‖²_F, with
// G = ∂f/∂Re W + i ∂f/∂Im W = 2 (W X − Y) X^H, a small step lowers f, by −(λ/2)‖A‖²_F to
// first order (package doc).
func TestDescent(t *testing.T) {
	const n, m = 6, 4
	rng := rand.New(rand.NewPCG(5, 5))
	x, y := randomCmat(rng, n, m, 1), randomCmat(rng, n, m, 1)
	f := func(w cmat) float64 {
		r := w.mul(x).add(y, -1)
		s := 0.0
		for _, row := range r {
			for _, v := range row {
				s += real(v)*real(v) + imag(v)*imag(v)
			}
		}
		return s
	}
	for trial := range 5 {
		w := randomUnitary(rng, n)
		g := w.mul(x).add(y, -1).mul(x.h())
		for i := range g {
			for j := range g[i] {
				g[i][j] *= 2
			}
		}
		a := g.mul(w.h()).add(w.mul(g.h()), -1)
		normA2 := 0.0
		for _, row := range a {
			for _, v := range row {
				normA2 += real(v)*real(v) + imag(v)*imag(v)
			}
		}
		wre, wim := w.parts()
		gre, gim := g.parts()
		for _, lambda := range []float64{1e-3, 1e-4} {
			re, im, err := CayleyStep(n, lambda, wre, wim, gre, gim)
			if err != nil {
				t.Fatal(err)
			}
			got, want := f(fromParts(n, re, im))-f(w), -lambda/2*normA2
			if got >= 0 || math.Abs(got-want) > 20*lambda*math.Abs(want) {
				t.Errorf("trial %d, λ = %g: f changed by %.6g, want a decrease ≈ −(λ/2)‖A‖² = %.6g", trial, lambda, got, want)
			}
		}
	}
}

// BenchmarkCayleyStep times one Update at the uRNN paper's sizes (128 on copy, 512 on adding).
func BenchmarkCayleyStep(b *testing.B) {
	for _, n := range []int{128, 512} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			wre, wim := RestrictedW(rng, n)
			gre, gim := randomCmat(rng, n, n, 0.1).parts()
			for b.Loop() {
				if _, _, err := CayleyStep(n, 1e-3, wre, wim, gre, gim); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
