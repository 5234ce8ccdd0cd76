package urnn

import (
	"math"
	"math/cmplx"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// TestNonlinearities compares σ(z) = ReLU(|z| + b) z/(|z| + ε) ([1] §3.2), and the split ReLU
// ReLU(Re z + b) + i·ReLU(Im z + b), with their plain-Go definitions, on units that pass, units
// cut off (in one part or both) and z = 0.
func TestNonlinearities(t *testing.T) {
	z := [][]complex128{{0.3 - 0.4i, 1e-3 + 2e-3i, 0, -2 + 0.5i}, {-0.1 + 0.05i, 0.7i, 0.2, 3 - 3i}}
	b := []float64{0.1, -0.5, 0.2, -1}
	const eps = 1e-5
	for _, tc := range []struct {
		name  string
		apply func(re, im, b *Node) (*Node, *Node)
		ref   func(z []complex128) []complex128
	}{
		{"modReLU", func(re, im, b *Node) (*Node, *Node) { return ModReLU(re, im, b, eps) },
			func(z []complex128) []complex128 { return refModReLU(z, b, eps) }},
		{"split ReLU", SplitReLU, func(z []complex128) []complex128 { return refSplitReLU(z, b) }},
	} {
		out := MustExecOnceN(backend.MustNew(), func(g *Graph) []*Node {
			var re, im []float64
			for _, row := range z {
				for _, v := range row {
					re, im = append(re, real(v)), append(im, imag(v))
				}
			}
			oRe, oIm := tc.apply(Reshape(Const(g, re), 2, 4), Reshape(Const(g, im), 2, 4), Const(g, b))
			return []*Node{oRe, oIm}
		})
		re, im := tensors.MustCopyFlatData[float64](out[0]), tensors.MustCopyFlatData[float64](out[1])
		for r, row := range z {
			want := tc.ref(row)
			for j := range row {
				if got := complex(re[r*4+j], im[r*4+j]); cmplx.Abs(got-want[j]) > 1e-12 {
					t.Errorf("%s: σ(%v) with b = %g: got %v, want %v", tc.name, row[j], b[j], got, want[j])
				}
			}
		}
	}
}

// TestModReLUGradientAtZero checks that the gradient of σ is finite at z = 0, where
// σ(z) ≈ z ReLU(b)/ε: ∂Re σ/∂Re z = ∂Im σ/∂Im z = ReLU(b)/ε, ∂σ/∂b = 0.
func TestModReLUGradientAtZero(t *testing.T) {
	b := []float64{0.5, -0.2, 0}
	const eps = 1e-5
	for _, dtype := range []dtypes.DType{dtypes.Float32, dtypes.Float64} {
		out := MustExecOnceN(backend.MustNew(), func(g *Graph) []*Node {
			zero := Zeros(g, shapes.Make(dtype, 1, 3))
			re, im, bias := Identity(zero), Identity(zero), ConstAsDType(g, dtype, b)
			oRe, oIm := ModReLU(re, im, bias, eps)
			loss := ReduceAllSum(Add(oRe, MulScalar(oIm, 2)))
			grads := Gradient(loss, re, im, bias)
			for i := range grads {
				grads[i] = ConvertDType(grads[i], dtypes.Float64)
			}
			return grads
		})
		gRe, gIm, gB := tensors.MustCopyFlatData[float64](out[0]), tensors.MustCopyFlatData[float64](out[1]), tensors.MustCopyFlatData[float64](out[2])
		for j := range b {
			want := max(b[j], 0) / eps
			for _, c := range []struct {
				name      string
				got, want float64
			}{{"∂L/∂Re z", gRe[j], want}, {"∂L/∂Im z", gIm[j], 2 * want}, {"∂L/∂b", gB[j], 0}} {
				if math.IsNaN(c.got) || math.IsInf(c.got, 0) || math.Abs(c.got-c.want) > 1e-5*max(1, c.want) {
					t.Errorf("%s: %s[%d] at z = 0 (b = %g) = %g, want %g", dtype, c.name, j, b[j], c.got, c.want)
				}
			}
		}
	}
}

// TestNativeMatchesFourStep compares the Native implementation (graph.FFT on complex
// tensors) with FourStep: W, and the outputs and gradients of a short sequence. It runs
// only on a backend with complex FFT (e.g. GOMLX_BACKEND=xla:cpu with a PJRT plugin).
func TestNativeMatchesFourStep(t *testing.T) {
	be := backend.MustNew()
	if !NativeSupported(be, dtypes.Float64) {
		t.Skipf("backend %q has no complex dtypes or FFT (compute.OpTypeFFT, Complex128): nothing to compare; "+
			"set GOMLX_BACKEND=xla:cpu with a PJRT CPU plugin installed to run this test", be.Name())
	}
	c, store := newTestCell(t, 3, 12, 2, dtypes.Float64, Native, 4)
	run := func(impl Impl) ([][]float64, [][]float64, []*tensors.Tensor) {
		c.Impl = impl
		re, im, err := c.DenseW(be, store.RootScope())
		if err != nil {
			t.Fatal(err)
		}
		out := model.MustExecOnceN(be, store, func(scope *model.Scope, g *Graph) []*Node {
			o, _ := rnn.Sequence(c, scope, inputs(g, dtypes.Float64, 3, 2, 5, 3))
			loss := ReduceAllSum(Mul(o, o))
			return append([]*Node{o}, Gradient(loss, scope.GetVariable("theta").NodeValue(g), scope.GetVariable("reflection").NodeValue(g))...)
		})
		return re, im, out
	}
	nRe, nIm, nOut := run(Native)
	fRe, fIm, fOut := run(FourStep)
	for k := range nRe {
		for j := range nRe[k] {
			if math.Abs(nRe[k][j]-fRe[k][j]) > 1e-12 || math.Abs(nIm[k][j]-fIm[k][j]) > 1e-12 {
				t.Fatalf("W[%d][%d]: Native %g%+gi, FourStep %g%+gi", k, j, nRe[k][j], nIm[k][j], fRe[k][j], fIm[k][j])
			}
		}
	}
	for i, name := range []string{"outputs", "∂L/∂θ", "∂L/∂reflection"} {
		a, b := tensors.MustCopyFlatData[float64](nOut[i]), tensors.MustCopyFlatData[float64](fOut[i])
		for j := range a {
			if math.Abs(a[j]-b[j]) > 1e-10*max(1, math.Abs(b[j])) {
				t.Fatalf("%s[%d]: Native %g, FourStep %g", name, j, a[j], b[j])
			}
		}
	}
}
