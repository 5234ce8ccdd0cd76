package exprnn_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"gonum.org/v1/gonum/mat"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/exprnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn/celltest"
)

// TestCell runs the shared cell suite on the expRNN, with both initialisations of A.
func TestCell(t *testing.T) {
	for _, init := range []exprnn.SkewInit{exprnn.Henaff, exprnn.Cayley} {
		t.Run(init.String(), func(t *testing.T) {
			newCell := func(in, n, out int) *exprnn.Cell {
				return &exprnn.Cell{In: in, N: n, Out: out, SkewInit: init}
			}
			celltest.Test(t, celltest.Config{
				New: func() rnn.Cell {
					c := newCell(3, 4, 2)
					c.Type = dtypes.Float64
					return c
				},
				Sizes: rnn.Sizes{In: 3, State: 4, Out: 2},
				// In·N + N(N−1)/2 + N + N·Out + Out (the doc of NumParams).
				ParamCounts: []celltest.ParamCount{
					{Name: "copy, 128 units", Cell: newCell(10, 128, 9), Want: 10697},
					{Name: "copy, 190 units", Cell: newCell(10, 190, 9), Want: 21764},
					{Name: "adding, 128 units", Cell: newCell(2, 128, 1), Want: 8641},
					{Name: "adding, 512 units", Cell: newCell(2, 512, 1), Want: 132865},
				},
				// One matmul per step, as the tanh RNN (6 and 20 nodes): its Tanh becomes the
				// modReLU's Sign, Mul, Add, Relu, Mul.
				Budget: celltest.GraphCost{Forward: 11, Training: 34},
				BadConfigs: []celltest.BadConfig{
					{Name: "zero In", Cell: exprnn.New(0, 4, 2), Want: "exprnn.Cell: In = 0"},
					{Name: "negative N", Cell: exprnn.New(3, -1, 2), Want: "exprnn.Cell: N = -1"},
					{Name: "one unit", Cell: exprnn.New(3, 1, 2), Want: "exprnn.Cell: N = 1, want >= 2"},
					{Name: "zero Out", Cell: exprnn.New(3, 4, 0), Want: "exprnn.Cell: Out = 0"},
					{Name: "unknown SkewInit", Cell: &exprnn.Cell{In: 3, N: 4, Out: 2, SkewInit: 7}, Want: "SkewInit = SkewInit(7)"},
					{Name: "Int32 Type", Cell: &exprnn.Cell{In: 3, N: 4, Out: 2, Type: dtypes.Int32}, Want: "Type = Int32"},
				},
				Mismatched: []celltest.BadConfig{
					{Name: "other N", Cell: newCell(3, 5, 2), Want: "/V has shape"},
					{Name: "other Out", Cell: newCell(3, 4, 3), Want: "/U has shape"},
				},
				Step: step, // h_0 = 0: no Config.Initial
			})
		})
	}
}

func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// expSkew returns exp(A) for the n×n skew-symmetric A whose strictly upper triangle is a,
// row-major, computed by gonum (Higham's Padé scaling and squaring): a reference independent
// of the graph's Taylor polynomial.
func expSkew(a []float64, n int) []float64 {
	A := mat.NewDense(n, n, nil)
	for i := range n {
		for j := i + 1; j < n; j++ {
			v := a[exprnn.SkewIndex(n, i, j)]
			A.Set(i, j, v)
			A.Set(j, i, -v)
		}
	}
	var W mat.Dense
	W.Exp(A)
	return W.RawMatrix().Data
}

// step is one step of the package doc's equations in plain Go, for one example with the
// variables p (flat, row-major): h_t = σ(h_{t−1} W + x_t V), W = exp(A), σ(z) =
// sign(z) ReLU(|z| + b), y_t = h_t U + b_o.
func step(cell rnn.Cell, p map[string][]float64, h, x []float64) (next, y []float64) {
	c := cell.(*exprnn.Cell)
	n := c.N
	W := expSkew(p["A"], n)
	next = make([]float64, n)
	for j := range n {
		z := 0.0
		for i := range n {
			z += h[i] * W[i*n+j]
		}
		for i := range c.In {
			z += x[i] * p["V"][i*n+j]
		}
		next[j] = sign(z) * max(math.Abs(z)+p["b"][j], 0)
	}
	y = slices.Clone(p["bo"])
	for k := range c.Out {
		for j := range n {
			y[k] += next[j] * p["U"][j*c.Out+k]
		}
	}
	return next, y
}

// TestInit checks the initialisation of the package doc: A block-diagonal with the angles of
// Henaff's or the Cayley initialisation, W = exp(A) the matching plane rotations (computed
// by the graph), V and U He-normal, b in [−0.01, 0.01], b_o = 0.
func TestInit(t *testing.T) {
	const in, n, out = 10, 191, 9 // odd n: the last row and column of A stay zero
	for _, tc := range []struct {
		init   exprnn.SkewInit
		lo, hi float64 // range of the angles s_k
	}{
		{exprnn.Henaff, -math.Pi, math.Pi},
		{exprnn.Cayley, -1, 0}, // −tan(t/2), t ∈ [0, π/2]
	} {
		t.Run(tc.init.String(), func(t *testing.T) {
			c := &exprnn.Cell{In: in, N: n, Out: out, SkewInit: tc.init, Type: dtypes.Float64}
			store := model.NewStore()
			scope := store.RootScope()
			if err := c.Init(scope, rand.New(rand.NewPCG(3, 4))); err != nil {
				t.Fatal(err)
			}
			get := func(name string) []float64 {
				return tensors.MustCopyFlatData[float64](scope.GetVariable(name).MustValue())
			}
			a := get("A")
			angles := map[int]float64{} // row 2k → s_k
			for i := range n {
				for j := i + 1; j < n; j++ {
					v := a[exprnn.SkewIndex(n, i, j)]
					if i%2 == 0 && j == i+1 {
						angles[i] = v
						if v < tc.lo || v > tc.hi {
							t.Errorf("A[%d,%d] = %g, want in [%g, %g]", i, j, v, tc.lo, tc.hi)
						}
					} else if v != 0 {
						t.Errorf("A[%d,%d] = %g, want 0 off the 2×2 blocks", i, j, v)
					}
				}
			}
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, s := range angles {
				lo, hi = min(lo, s), max(hi, s)
			}
			if span := tc.hi - tc.lo; lo > tc.lo+0.1*span || hi < tc.hi-0.1*span {
				t.Errorf("%d angles span [%.3g, %.3g], want to fill [%g, %g]", len(angles), lo, hi, tc.lo, tc.hi)
			}
			w := model.MustExecOnce(backend.MustNew(), store, func(scope *model.Scope, g *Graph) *Node {
				rnn.LiveVariables(store, g)
				return c.RecurrentMatrix(scope, g)
			})
			W := tensors.MustCopyFlatData[float64](w)
			for i := range n {
				for j := range n {
					want := 0.0
					switch s, k := angles[i-i%2], i-i%2; {
					case i == n-1 && n%2 == 1:
						if j == i {
							want = 1
						}
					case j == i:
						want = math.Cos(s)
					case i == k && j == k+1:
						want = math.Sin(s)
					case i == k+1 && j == k:
						want = -math.Sin(s)
					}
					if math.Abs(W[i*n+j]-want) > 1e-14 {
						t.Fatalf("W[%d,%d] = %.17g, want %.17g (the rotation by A's angle)", i, j, W[i*n+j], want)
					}
				}
			}
			for _, tc := range []struct {
				name  string
				fanIn int
			}{{"V", in}, {"U", n}} {
				v := get(tc.name)
				ss := 0.0
				for _, x := range v {
					ss += x * x
				}
				if got, want := ss/float64(len(v)), 2/float64(tc.fanIn); math.Abs(got/want-1) > 0.2 {
					t.Errorf("%s: mean square %.4g, want 2/fan-in = %.4g (He-normal)", tc.name, got, want)
				}
			}
			for i, x := range get("b") {
				if math.Abs(x) > 0.01 {
					t.Errorf("b[%d] = %g, want in [−0.01, 0.01]", i, x)
				}
			}
			for i, x := range get("bo") {
				if x != 0 {
					t.Errorf("bo[%d] = %g, want 0", i, x)
				}
			}
		})
	}
}

// TestOrthogonalAfterUpdates moves A by 1000 RMSProp steps on random gradients (plain Go on
// the Float32 values of the variable) and checks, with one compiled graph executed as the
// variable changes, that W = exp(A) stays orthogonal to 1e-5: it is by construction, as
// long as ‖A‖₂ stays within MaxNorm, which the test also checks.
func TestOrthogonalAfterUpdates(t *testing.T) {
	const n, steps, lr, decay = 64, 1000, 0.05, 0.9
	c := exprnn.New(2, n, 1) // Float32
	store := model.NewStore()
	scope := store.RootScope()
	if err := c.Init(scope, rand.New(rand.NewPCG(5, 6))); err != nil {
		t.Fatal(err)
	}
	exec, err := model.NewExec(backend.MustNew(), store, func(scope *model.Scope, g *Graph) *Node {
		rnn.LiveVariables(store, g)
		w := c.RecurrentMatrix(scope, g)
		// max |WᵀW − I|, in the graph's Float32.
		id := Reshape(ConstAsDType(g, dtypes.Float32, rnn.IdentityMatrix(n)), n, n)
		return ReduceAllMax(Abs(Sub(MatMul(Transpose(w, 0, 1), w), id)))
	})
	if err != nil {
		t.Fatal(err)
	}
	v := scope.GetVariable("A")
	rng := rand.New(rand.NewPCG(7, 8))
	ms := make([]float64, exprnn.NumSkew(n))
	for i := range ms {
		ms[i] = 1
	}
	for k := 1; k <= steps; k++ {
		a := tensors.MustCopyFlatData[float32](v.MustValue())
		for i := range a {
			g := rng.NormFloat64()
			ms[i] = decay*ms[i] + (1-decay)*g*g
			a[i] -= float32(lr * g / math.Sqrt(ms[i]))
		}
		v.MustSetValue(tensors.FromFlatDataAndDimensions(a, len(a)))
		if k%100 != 0 {
			continue
		}
		res, err := exec.Call()
		if err != nil {
			t.Fatal(err)
		}
		rho := spectralNorm(a, n)
		ortho := tensors.ToScalar[float32](res[0])
		if k == steps {
			t.Logf("after %d updates: ‖A‖₂ = %.3g, max |WᵀW − I| = %.3g", k, rho, ortho)
		}
		if rho > exprnn.MaxNorm {
			t.Fatalf("after %d updates ‖A‖₂ = %.3g > MaxNorm: lower the test's learning rate", k, rho)
		}
		if ortho > 1e-5 {
			t.Errorf("after %d updates (‖A‖₂ = %.3g): max |WᵀW − I| = %.3g, want ≤ 1e-5", k, rho, ortho)
		}
	}
}

// spectralNorm returns ‖A‖₂ for the skew-symmetric A with strictly upper triangle a: the
// largest singular value.
func spectralNorm(a []float32, n int) float64 {
	A := mat.NewDense(n, n, nil)
	for i := range n {
		for j := i + 1; j < n; j++ {
			x := float64(a[exprnn.SkewIndex(n, i, j)])
			A.Set(i, j, x)
			A.Set(j, i, -x)
		}
	}
	var svd mat.SVD
	if !svd.Factorize(A, mat.SVDNone) {
		panic("exprnn_test: SVD did not converge")
	}
	return svd.Values(nil)[0]
}
