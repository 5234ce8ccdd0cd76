package urnn

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// matrixOf is MatrixOf as [][]complex128, failing the test on error.
func matrixOf(t testing.TB, dtype dtypes.DType, n int, f func(re, im *Node) (*Node, *Node)) [][]complex128 {
	t.Helper()
	re, im, err := MatrixOf(backend.MustNew(), nil, n, dtype, nil, f)
	if err != nil {
		t.Fatal(err)
	}
	m := make([][]complex128, n)
	for k := range n {
		m[k] = make([]complex128, n)
		for j := range n {
			m[k][j] = complex(re[k][j], im[k][j])
		}
	}
	return m
}

// unitarityError returns ‖M*M − I‖max.
func unitarityError(m [][]complex128) float64 {
	n := len(m)
	var worst float64
	for i := range n {
		for j := range n {
			var s complex128
			for k := range n {
				s += cmplx.Conj(m[k][i]) * m[k][j]
			}
			if i == j {
				s--
			}
			worst = max(worst, cmplx.Abs(s))
		}
	}
	return worst
}

func complexOf(re, im [][]float64) [][]complex128 {
	m := make([][]complex128, len(re))
	for k := range re {
		m[k] = make([]complex128, len(re[k]))
		for j := range re[k] {
			m[k][j] = complex(re[k][j], im[k][j])
		}
	}
	return m
}

// TestDFTMatchesReference compares the real-arithmetic four-step DFT (F, Finv) with the
// O(n²) complex128 sum (F z)_k = n^{−1/2} Σ_j e^{∓2πi jk/n} z_j, for n = 1, 8, 12, 13
// (prime: n1 = 1) and 128, in float64 and float32.
func TestDFTMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		n     int
		dtype dtypes.DType
		tol   float64
	}{
		{1, dtypes.Float64, 1e-13}, {8, dtypes.Float64, 1e-13}, {12, dtypes.Float64, 1e-13},
		{13, dtypes.Float64, 1e-13}, {128, dtypes.Float64, 1e-12}, {128, dtypes.Float32, 1e-5},
	} {
		for _, inverse := range []bool{false, true} {
			t.Run(fmt.Sprintf("n=%d/%s/inverse=%v", tc.n, tc.dtype, inverse), func(t *testing.T) {
				f := F
				if inverse {
					f = Finv
				}
				got := matrixOf(t, tc.dtype, tc.n, f)
				for j := range tc.n {
					e := make([]complex128, tc.n)
					e[j] = 1
					want := refDFT(e, inverse)
					for k := range tc.n {
						if d := cmplx.Abs(got[k][j] - want[k]); d > tc.tol {
							t.Fatalf("F[%d][%d] = %v, want %v (|error| %.3g > %.3g)", k, j, got[k][j], want[k], d, tc.tol)
						}
					}
				}
			})
		}
	}
}

// TestFactors checks each factor of W ([1] §2) on its own: it is unitary in float32
// (‖M*M − I‖max < 1e-5) and equals its plain-Go definition in float64.
func TestFactors(t *testing.T) {
	for _, n := range []int{8, 12} {
		rng := rand.New(rand.NewPCG(uint64(n), 3))
		theta := rnn.Uniform(rng, n, -math.Pi, math.Pi)
		vRe, vIm := rnn.Uniform(rng, n, -1, 1), rnn.Uniform(rng, n, -1, 1)
		perm := rng.Perm(n)
		v := make([]complex128, n)
		for j := range n {
			v[j] = complex(vRe[j], vIm[j])
		}
		vec := func(x []float64, dt dtypes.DType, g *Graph) *Node { return ConstAsDType(g, dt, x) }
		for _, fc := range []struct {
			name  string
			apply func(dt dtypes.DType) func(re, im *Node) (*Node, *Node)
			ref   func(z []complex128) []complex128
		}{
			{"D", func(dt dtypes.DType) func(re, im *Node) (*Node, *Node) {
				return func(re, im *Node) (*Node, *Node) { return D(re, im, vec(theta, dt, re.Graph())) }
			}, func(z []complex128) []complex128 { return refD(z, theta) }},
			{"R", func(dt dtypes.DType) func(re, im *Node) (*Node, *Node) {
				return func(re, im *Node) (*Node, *Node) {
					return R(re, im, vec(vRe, dt, re.Graph()), vec(vIm, dt, re.Graph()))
				}
			}, func(z []complex128) []complex128 { return refR(z, v) }},
			{"F", func(dtypes.DType) func(re, im *Node) (*Node, *Node) { return F },
				func(z []complex128) []complex128 { return refDFT(z, false) }},
			{"Finv", func(dtypes.DType) func(re, im *Node) (*Node, *Node) { return Finv },
				func(z []complex128) []complex128 { return refDFT(z, true) }},
			{"Perm", func(dtypes.DType) func(re, im *Node) (*Node, *Node) {
				return func(re, im *Node) (*Node, *Node) { return Perm(re, im, perm) }
			}, func(z []complex128) []complex128 { return refPerm(z, perm) }},
		} {
			t.Run(fmt.Sprintf("n=%d/%s", n, fc.name), func(t *testing.T) {
				if e := unitarityError(matrixOf(t, dtypes.Float32, n, fc.apply(dtypes.Float32))); e > 1e-5 {
					t.Errorf("‖M*M − I‖max = %.3g in float32, want < 1e-5", e)
				}
				got := matrixOf(t, dtypes.Float64, n, fc.apply(dtypes.Float64))
				for j := range n {
					e := make([]complex128, n)
					e[j] = 1
					want := fc.ref(e)
					for k := range n {
						if cmplx.Abs(got[k][j]-want[k]) > 1e-13 {
							t.Fatalf("M[%d][%d] = %v, want %v", k, j, got[k][j], want[k])
						}
					}
				}
			})
		}
	}
}

// TestWUnitary checks ‖W*W − I‖max < 1e-5 for W of random parameters in float32.
func TestWUnitary(t *testing.T) {
	for _, tc := range []struct {
		n    int
		impl Impl
	}{{8, FourStep}, {12, FourStep}, {128, FourStep}, {128, DenseW}} {
		c, store := newTestCell(t, 2, tc.n, 1, dtypes.Float32, tc.impl, uint64(tc.n))
		re, im, err := c.DenseW(backend.MustNew(), store.RootScope())
		if err != nil {
			t.Fatal(err)
		}
		if e := unitarityError(complexOf(re, im)); e > 1e-5 {
			t.Errorf("n=%d %s: ‖W*W − I‖max = %.3g, want < 1e-5", tc.n, tc.impl, e)
		}
	}
}

// TestWUnitaryAfterRMSProp trains a small uRNN for 100 RMSProp steps (learning rate 1e-3,
// decay 0.9, accumulator started at 1e-3 and no ε, as the authors' code; [1] §4) on a
// regression loss, and checks that the loss went down, θ and the reflections moved, and W
// is still unitary: the parametrisation keeps W unitary whatever the parameters are.
func TestWUnitaryAfterRMSProp(t *testing.T) {
	if testing.Short() {
		t.Skip("100 training steps")
	}
	const n, in, out, batch, T, steps = 16, 3, 2, 4, 6, 100
	const lr, decay = 1e-3, 0.9
	c, store := newTestCell(t, in, n, out, dtypes.Float32, FourStep, 5)
	scope := store.RootScope()
	var names []string
	for v := range scope.IterVariables() {
		if v.Trainable {
			names = append(names, v.Name())
		}
	}
	exec := model.MustNewExec(backend.MustNew(), store, func(scope *model.Scope, g *Graph) []*Node {
		rnn.LiveVariables(store, g)
		o, _ := rnn.Sequence(c, scope, inputs(g, dtypes.Float32, 9, batch, T, in))
		target := inputs(g, dtypes.Float32, 10, batch, T, out)
		d := Sub(o, target)
		loss := ReduceAllMean(Mul(d, d))
		vars := make([]*Node, len(names))
		for i, name := range names {
			vars[i] = scope.GetVariable(name).NodeValue(g)
		}
		return append([]*Node{loss}, Gradient(loss, vars...)...)
	})
	acc := map[string][]float64{}
	before := map[string][]float64{}
	var firstLoss, lastLoss float64
	for step := range steps {
		res := exec.MustCall()
		lastLoss = float64(tensors.ToScalar[float32](res[0]))
		if step == 0 {
			firstLoss = lastLoss
		}
		for i, name := range names {
			w := readFloats(t, scope, name)
			if step == 0 {
				before[name] = append([]float64(nil), w...)
			}
			var grad []float64
			for _, x := range tensors.MustCopyFlatData[float32](res[1+i]) {
				grad = append(grad, float64(x))
			}
			if acc[name] == nil {
				acc[name] = make([]float64, len(w))
				for j := range acc[name] {
					acc[name][j] = 1e-3
				}
			}
			for j := range w {
				acc[name][j] = decay*acc[name][j] + (1-decay)*grad[j]*grad[j]
				w[j] -= lr * grad[j] / math.Sqrt(acc[name][j])
			}
			setVar(t, scope, name, w)
		}
	}
	t.Logf("loss %.4f → %.4f after %d RMSProp steps", firstLoss, lastLoss, steps)
	if !(lastLoss < firstLoss) {
		t.Errorf("loss %.4f → %.4f: RMSProp did not decrease it", firstLoss, lastLoss)
	}
	for _, name := range []string{"theta", "reflection"} {
		var moved float64
		for j, x := range readFloats(t, scope, name) {
			moved = max(moved, math.Abs(x-before[name][j]))
		}
		if moved < 1e-2 {
			t.Errorf("%s moved by at most %.3g in %d steps, want ≥ 1e-2", name, moved, steps)
		}
	}
	re, im, err := c.DenseW(backend.MustNew(), scope)
	if err != nil {
		t.Fatal(err)
	}
	if e := unitarityError(complexOf(re, im)); e > 1e-5 {
		t.Errorf("after %d RMSProp steps: ‖W*W − I‖max = %.3g, want < 1e-5", steps, e)
	}
}
