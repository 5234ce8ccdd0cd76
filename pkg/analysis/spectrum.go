package analysis

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// Spectrum is a named set of eigenvalues, for plotting several matrices in one complex
// plane (SpectraChart).
type Spectrum struct {
	Name   string
	Values []complex128
}

// Eigenvalues returns the n eigenvalues of the n×n row-major matrix a (gonum mat.Eigen,
// LAPACK dgeev), sorted by angle arg λ ∈ (−π, π] and then by modulus. Complex
// eigenvalues of a real matrix come in conjugate pairs. It returns an error if
// len(a) ≠ n² or the factorisation does not converge.
func Eigenvalues(a []float64, n int) ([]complex128, error) {
	if n < 1 || len(a) != n*n {
		return nil, fmt.Errorf("analysis: Eigenvalues: %d values for a %d×%d matrix, want %d", len(a), n, n, n*n)
	}
	var e mat.Eigen
	if !e.Factorize(mat.NewDense(n, n, slices.Clone(a)), mat.EigenNone) {
		return nil, fmt.Errorf("analysis: Eigenvalues: the eigendecomposition of the %d×%d matrix did not converge", n, n)
	}
	v := e.Values(nil)
	slices.SortFunc(v, func(x, y complex128) int {
		if c := cmpFloat(cmplx.Phase(x), cmplx.Phase(y)); c != 0 {
			return c
		}
		return cmpFloat(cmplx.Abs(x), cmplx.Abs(y))
	})
	return v, nil
}

func cmpFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// Angles returns arg λ ∈ (−π, π] of each eigenvalue, in the order given.
func Angles(values []complex128) []float64 {
	out := make([]float64, len(values))
	for i, v := range values {
		out[i] = cmplx.Phase(v)
	}
	return out
}

// SingularValues returns the singular values of the rows×cols row-major matrix a in
// decreasing order (gonum mat.SVD). The first is the spectral norm ‖a‖₂ = μmax of Galvan
// eq. 1.69. It returns an error if len(a) ≠ rows·cols or the SVD does not converge.
func SingularValues(a []float64, rows, cols int) ([]float64, error) {
	if rows < 1 || cols < 1 || len(a) != rows*cols {
		return nil, fmt.Errorf("analysis: SingularValues: %d values for a %d×%d matrix, want %d", len(a), rows, cols, rows*cols)
	}
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(rows, cols, slices.Clone(a)), mat.SVDNone) {
		return nil, fmt.Errorf("analysis: SingularValues: the SVD of the %d×%d matrix did not converge", rows, cols)
	}
	return svd.Values(nil), nil
}

// Realify returns the real 2n×2n matrix of the complex n×n matrix W = re + i·im acting on
// states stored as real pairs [Re h | Im h] (the uRNN state layout, urnn.Cell.DenseW):
//
//	[Re Wh]   [re  −im] [Re h]
//	[Im Wh] = [im   re] [Im h]
//
// Its eigenvalues are those of W together with their conjugates (each λ of W gives λ and
// λ̄), its singular values those of W, each twice; a unitary W gives an orthogonal matrix.
// It returns an error if the rows of re and im do not all have length n.
func Realify(re, im [][]float64) ([]float64, error) {
	n := len(re)
	if len(im) != n {
		return nil, fmt.Errorf("analysis: Realify: %d real rows and %d imaginary rows, want the same", n, len(im))
	}
	out := make([]float64, 4*n*n)
	for k := range n {
		if len(re[k]) != n || len(im[k]) != n {
			return nil, fmt.Errorf("analysis: Realify: row %d has %d real and %d imaginary values, want %d", k, len(re[k]), len(im[k]), n)
		}
		for j := range n {
			out[k*2*n+j] = re[k][j]
			out[k*2*n+n+j] = -im[k][j]
			out[(n+k)*2*n+j] = im[k][j]
			out[(n+k)*2*n+n+j] = re[k][j]
		}
	}
	return out, nil
}

// VariableMatrix returns the value of the variable name under scope as float64 (row-major)
// with its dimensions, e.g. the recurrent matrix "W" of rnn.Simple or "V" of an LT-RNN.
func VariableMatrix(scope *model.Scope, name string) ([]float64, []int, error) {
	v := scope.GetVariable(name)
	if v == nil {
		return nil, nil, fmt.Errorf("analysis: no variable %s/%s: call the cell's Init first", scope.Scope(), name)
	}
	t, err := v.Value()
	if err != nil {
		return nil, nil, err
	}
	return floats(t), slices.Clone(t.Shape().Dimensions), nil
}

// SpectralRadius returns max |λ| over values.
func SpectralRadius(values []complex128) float64 {
	r := 0.0
	for _, v := range values {
		r = math.Max(r, cmplx.Abs(v))
	}
	return r
}

// ModulusRange returns the smallest and the largest |λ| over values (+Inf and 0 when there are
// none): how far a spectrum strays from the unit circle on either side, which a unitary or
// orthogonal W keeps at 1 and 1 to rounding.
func ModulusRange(values []complex128) (lo, hi float64) {
	lo = math.Inf(1)
	for _, v := range values {
		lo, hi = math.Min(lo, cmplx.Abs(v)), math.Max(hi, cmplx.Abs(v))
	}
	return lo, hi
}

// RelativeChange returns ‖b − a‖_F / ‖a‖_F for two matrices of the same shape, row-major:
// how far training moved a recurrent matrix from its initialisation a to b (0 for a matrix
// that did not move, such as an echo state network's reservoir). It panics if the lengths
// differ.
func RelativeChange(a, b []float64) float64 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("analysis: RelativeChange of %d and %d values", len(a), len(b)))
	}
	var d, n float64
	for i := range a {
		d += (b[i] - a[i]) * (b[i] - a[i])
		n += a[i] * a[i]
	}
	return math.Sqrt(d / n)
}

// PowerNorms returns ‖Wⁿ h‖₂ for n = 0, 1, …, steps, where W is the r×r row-major matrix w
// and h a random unit vector drawn from seed: how a linear recurrence h_t = W h_{t−1}
// amplifies or forgets its initial state (Barber, "memory decay"). It panics if
// len(w) ≠ r².
func PowerNorms(w []float64, r, steps int, seed uint64) []float64 {
	if len(w) != r*r {
		panic(fmt.Sprintf("analysis: PowerNorms: %d values for a %d×%d matrix", len(w), r, r))
	}
	rng := rand.New(rand.NewPCG(seed, seed))
	h := make([]float64, r)
	for i := range h {
		h[i] = rng.NormFloat64()
	}
	v := mat.NewVecDense(r, h)
	v.ScaleVec(1/mat.Norm(v, 2), v)
	W := mat.NewDense(r, r, w)
	out := []float64{1}
	next := mat.NewVecDense(r, nil)
	for range steps {
		next.MulVec(W, v)
		v, next = next, v
		out = append(out, mat.Norm(v, 2))
	}
	return out
}

// RecurrentMatrix returns the square recurrent matrix W of cell (variables under scope) as a
// real r×r row-major matrix: from rnn.DenseW where the cell has it (the uRNN, full-capacity
// uRNN, expRNN, SCRN), else the variable rnn.Transition names (tanh RNN, IRNN, LT-RNNs,
// scoRNN, ESN). A complex W is given in its real form (Realify: r = 2N, the eigenvalues of W
// and their conjugates, the singular values of W twice). Cells with neither (the LSTM, GRU)
// get an error naming them.
func RecurrentMatrix(backend compute.Backend, scope *model.Scope, cell rnn.Cell) (w []float64, r int, err error) {
	if d, ok := cell.(rnn.DenseW); ok {
		re, im, err := d.DenseW(backend, scope)
		if err != nil {
			return nil, 0, err
		}
		if im != nil {
			w, err := Realify(re, im)
			return w, 2 * len(re), err
		}
		for _, row := range re {
			w = append(w, row...)
		}
		return w, len(re), nil
	}
	if tc, ok := cell.(rnn.Transition); ok {
		name, _ := tc.TransitionMatrix()
		w, dims, err := VariableMatrix(scope, name)
		if err != nil {
			return nil, 0, err
		}
		if len(dims) != 2 || dims[0] != dims[1] {
			return nil, 0, fmt.Errorf("analysis: RecurrentMatrix: %T's %s has shape %v, want a square matrix", cell, name, dims)
		}
		return w, dims[0], nil
	}
	return nil, 0, fmt.Errorf("analysis: RecurrentMatrix: %T has no single recurrent matrix (neither rnn.DenseW nor rnn.Transition)", cell)
}
