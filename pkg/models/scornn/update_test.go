package scornn_test

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/urnn-notebooks/longmemory/pkg/models/scornn"
)

// Plain-Go n×n real matrices (row-major slices) for the slow references.

func matMul(n int, a, b []float64) []float64 {
	c := make([]float64, n*n)
	for i := range n {
		for k := range n {
			for j := range n {
				c[i*n+j] += a[i*n+k] * b[k*n+j]
			}
		}
	}
	return c
}

func transpose(n int, a []float64) []float64 {
	t := make([]float64, n*n)
	for i := range n {
		for j := range n {
			t[j*n+i] = a[i*n+j]
		}
	}
	return t
}

func identity(n int) []float64 {
	a := make([]float64, n*n)
	for i := range n {
		a[i*n+i] = 1
	}
	return a
}

func addScaled(a, b []float64, s float64) []float64 { // a + s·b
	c := slices.Clone(a)
	for i := range c {
		c[i] += s * b[i]
	}
	return c
}

// inverse is Gauss–Jordan elimination with partial pivoting.
func inverse(n int, a []float64) []float64 {
	m := make([][]float64, n)
	for i := range n {
		m[i] = make([]float64, 2*n)
		copy(m[i], a[i*n:(i+1)*n])
		m[i][n+i] = 1
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[p][c]) {
				p = r
			}
		}
		m[c], m[p] = m[p], m[c]
		piv := m[c][c]
		for j := range 2 * n {
			m[c][j] /= piv
		}
		for r := range n {
			if f := m[r][c]; r != c && f != 0 {
				for j := range 2 * n {
					m[r][j] -= f * m[c][j]
				}
			}
		}
	}
	inv := make([]float64, 0, n*n)
	for i := range n {
		inv = append(inv, m[i][n:]...)
	}
	return inv
}

func diag(d []float64) []float64 {
	n := len(d)
	a := make([]float64, n*n)
	for i, x := range d {
		a[i*n+i] = x
	}
	return a
}

func maxAbsDiff(a, b []float64) float64 {
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(a[i]-b[i]))
	}
	return d
}

// randomSkew returns a random skew-symmetric n×n matrix with entries from U[−s, s].
func randomSkew(rng *rand.Rand, n int, s float64) []float64 {
	a := make([]float64, n*n)
	for i := range n {
		for j := i + 1; j < n; j++ {
			x := s * (2*rng.Float64() - 1)
			a[i*n+j], a[j*n+i] = x, -x
		}
	}
	return a
}

func randomMatrix(rng *rand.Rand, n, m int, sigma float64) []float64 {
	a := make([]float64, n*m)
	for i := range a {
		a[i] = sigma * rng.NormFloat64()
	}
	return a
}

// cayleyRef is W = (I + A)^{-1}(I − A)D with a dense inverse.
func cayleyRef(n int, a, d []float64) []float64 {
	return matMul(n, matMul(n, inverse(n, addScaled(identity(n), a, 1)), addScaled(identity(n), a, -1)), diag(d))
}

// smoothLoss is f(W) = ‖W X − Y‖²_F (X, Y n×n) and its gradient 2 (W X − Y) Xᵀ.
type smoothLoss struct {
	n    int
	x, y []float64
}

func (l smoothLoss) f(w []float64) float64 {
	r := addScaled(matMul(l.n, w, l.x), l.y, -1)
	s := 0.0
	for _, v := range r {
		s += v * v
	}
	return s
}

func (l smoothLoss) grad(w []float64) []float64 {
	g := matMul(l.n, addScaled(matMul(l.n, w, l.x), l.y, -1), transpose(l.n, l.x))
	for i := range g {
		g[i] *= 2
	}
	return g
}

// TestCayleyWMatchesReference compares CayleyW with the dense inverse.
func TestCayleyWMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{1, 2, 5, 8} {
		a, d := randomSkew(rng, n, 2), scornn.DiagD(n, n/2)
		w, err := scornn.CayleyW(n, a, d)
		if err != nil {
			t.Fatal(err)
		}
		if diff := maxAbsDiff(w, cayleyRef(n, a, d)); diff > 1e-13 {
			t.Errorf("n = %d: max |CayleyW − (I + A)⁻¹(I − A)D| = %.3g", n, diff)
		}
	}
}

// TestGradAFiniteDifferences checks [1]'s theorem, sign included: ∇_A[i][j] (i < j) is the
// derivative of f(W(A)) along E_ij − E_ji, by central differences.
func TestGradAFiniteDifferences(t *testing.T) {
	const n, h = 5, 1e-6
	rng := rand.New(rand.NewPCG(2, 2))
	l := smoothLoss{n, randomMatrix(rng, n, n, 1), randomMatrix(rng, n, n, 1)}
	a, d := randomSkew(rng, n, 1), scornn.DiagD(n, 2)
	w, err := scornn.CayleyW(n, a, d)
	if err != nil {
		t.Fatal(err)
	}
	ga, err := scornn.GradA(n, a, d, w, l.grad(w))
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if ga[i*n+i] != 0 {
			t.Errorf("∇_A[%d][%d] = %g, want 0", i, i, ga[i*n+i])
		}
		for j := i + 1; j < n; j++ {
			if ga[j*n+i] != -ga[i*n+j] {
				t.Errorf("∇_A[%d][%d] = %g, ∇_A[%d][%d] = %g: not skew-symmetric", i, j, ga[i*n+j], j, i, ga[j*n+i])
			}
			at := func(s float64) float64 {
				b := slices.Clone(a)
				b[i*n+j] += s
				b[j*n+i] -= s
				wb, err := scornn.CayleyW(n, b, d)
				if err != nil {
					t.Fatal(err)
				}
				return l.f(wb)
			}
			fd := (at(h) - at(-h)) / (2 * h)
			if math.Abs(fd-ga[i*n+j]) > 1e-6*max(1, math.Abs(fd)) {
				t.Errorf("∇_A[%d][%d] = %.9g, central difference %.9g", i, j, ga[i*n+j], fd)
			}
		}
	}
}

// TestUpdateMatchesReference compares one Update with the package doc's formulas written
// with dense inverses.
func TestUpdateMatchesReference(t *testing.T) {
	const n = 6
	rng := rand.New(rand.NewPCG(3, 3))
	a, d := randomSkew(rng, n, 1), scornn.DiagD(n, 3)
	w := cayleyRef(n, a, d)
	ms := make([]float64, n*n) // symmetric, as RMSProp keeps it
	for i := range n {
		for j := i; j < n; j++ {
			ms[i*n+j] = 0.5 + rng.Float64()
			ms[j*n+i] = ms[i*n+j]
		}
	}
	gw := randomMatrix(rng, n, n, 1)
	const eta = 0.05
	out, err := scornn.New(1, n, 1).Update(eta, map[string][]float64{"A": a, "D": d, "W": w, "A_rms": ms}, map[string][]float64{"W": gw})
	if err != nil {
		t.Fatal(err)
	}
	// K = (I + A)^{-T} ∇_W (D + Wᵀ), ∇_A = Kᵀ − K, RMSProp, W = (I + A)^{-1}(I − A)D.
	k := matMul(n, transpose(n, inverse(n, addScaled(identity(n), a, 1))), matMul(n, gw, addScaled(diag(d), transpose(n, w), 1)))
	ga := addScaled(transpose(n, k), k, -1)
	wantMS, wantA := make([]float64, n*n), make([]float64, n*n)
	for i, g := range ga {
		wantMS[i] = 0.9*ms[i] + 0.1*g*g
		wantA[i] = a[i] - eta*g/math.Sqrt(wantMS[i]+1e-10)
	}
	wantW := cayleyRef(n, wantA, d)
	for _, c := range []struct {
		name      string
		got, want []float64
	}{{"A_rms", out["A_rms"], wantMS}, {"A", out["A"], wantA}, {"W", out["W"], wantW}} {
		if diff := maxAbsDiff(c.got, c.want); diff > 1e-13 {
			t.Errorf("%s: max |Update − reference| = %.3g", c.name, diff)
		}
	}
}

// TestDescent checks that an Update lowers the smooth loss f(W) = ‖W X − Y‖²_F at a small
// learning rate, step after step.
func TestDescent(t *testing.T) {
	const n = 8
	rng := rand.New(rand.NewPCG(4, 4))
	l := smoothLoss{n, randomMatrix(rng, n, n, 1), randomMatrix(rng, n, n, 1)}
	c := scornn.New(1, n, 1)
	values := map[string][]float64{"A": scornn.InitialA(rng, n), "D": scornn.DiagD(n, c.Rho()), "A_rms": slices.Repeat([]float64{1}, n*n)}
	var err error
	if values["W"], err = scornn.CayleyW(n, values["A"], values["D"]); err != nil {
		t.Fatal(err)
	}
	prev := l.f(values["W"])
	first := prev
	for s := range 20 {
		out, err := c.Update(1e-3, values, map[string][]float64{"W": l.grad(values["W"])})
		if err != nil {
			t.Fatal(err)
		}
		maps.Copy(values, out)
		f := l.f(values["W"])
		if f >= prev {
			t.Fatalf("step %d: f went from %.9g to %.9g, want a decrease", s, prev, f)
		}
		prev = f
	}
	t.Logf("f(W) from %.6g to %.6g in 20 updates at η = 1e-3", first, prev)
}

// TestOrthogonalAfter1000Updates applies 1000 Updates with random gradients ∇_W (Gaussian
// entries, standard deviation σ) and checks that W stays orthogonal and A exactly
// skew-symmetric, with the values kept in float64 or rounded to float32 after each step
// (as Float32 variables store them).
func TestOrthogonalAfter1000Updates(t *testing.T) {
	const n, steps = 64, 1000
	for _, tc := range []struct {
		sigma, eta float64
		float32    bool
	}{
		{0.1, 1e-4, false},
		{1, 1e-2, false},
		{0.1, 1e-4, true},
	} {
		rng := rand.New(rand.NewPCG(5, 5))
		c := scornn.New(1, n, 1)
		values := map[string][]float64{"A": scornn.InitialA(rng, n), "D": scornn.DiagD(n, c.Rho()), "A_rms": slices.Repeat([]float64{1}, n*n)}
		var err error
		if values["W"], err = scornn.CayleyW(n, values["A"], values["D"]); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for range steps {
			out, err := c.Update(tc.eta, values, map[string][]float64{"W": randomMatrix(rng, n, n, tc.sigma)})
			if err != nil {
				t.Fatal(err)
			}
			if tc.float32 {
				for _, v := range out {
					for i, x := range v {
						v[i] = float64(float32(x))
					}
				}
			}
			maps.Copy(values, out)
		}
		a := values["A"]
		maxA := 0.0
		for i := range n {
			for j := range n {
				if a[i*n+j] != -a[j*n+i] {
					t.Fatalf("%s: A[%d][%d] = %g, A[%d][%d] = %g: not skew-symmetric", name(tc.sigma, tc.eta, tc.float32), i, j, a[i*n+j], j, i, a[j*n+i])
				}
				maxA = max(maxA, math.Abs(a[i*n+j]))
			}
		}
		e := orthogonalityError(n, values["W"])
		t.Logf("%s: max |WᵀW − I| = %.3g after %d updates, max |A_ij| = %.3g (%v)",
			name(tc.sigma, tc.eta, tc.float32), e, steps, maxA, time.Since(start).Round(time.Millisecond))
		if e > 1e-5 {
			t.Errorf("%s: max |WᵀW − I| = %.3g after %d updates, want ≤ 1e-5", name(tc.sigma, tc.eta, tc.float32), e, steps)
		}
	}
}

func name(sigma, eta float64, f32 bool) string {
	return fmt.Sprintf("n = 64, σ = %g, η = %g, float32 storage %v", sigma, eta, f32)
}
