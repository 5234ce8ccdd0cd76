package rnn_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/analysis"
	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// randomInputs returns a constant [batch, T, in] input with entries in [−1, 1].
func randomInputs(g *Graph, dtype dtypes.DType, seed uint64, batch, T, in int) *Node {
	rng := rand.New(rand.NewPCG(seed, 1))
	return Reshape(ConstAsDType(g, dtype, rnn.Uniform(rng, batch*T*in, -1, 1)), batch, T, in)
}

func TestSimpleGradients(t *testing.T) {
	for _, tc := range []struct {
		name string
		cell *rnn.Simple
	}{
		{"tanh", rnn.NewTanh(3, 4, 2)},
		{"irnn", rnn.NewIRNN(3, 4, 2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cell.Type = dtypes.Float64
			store := model.NewStore()
			if err := tc.cell.Init(store.RootScope(), rand.New(rand.NewPCG(1, 2))); err != nil {
				t.Fatal(err)
			}
			// Perturb the zero-initialised biases so their gradients are generic, and
			// keep ReLU pre-activations away from 0 where the derivative jumps.
			loss := func(scope *model.Scope, g *Graph) *Node {
				x := randomInputs(g, dtypes.Float64, 3, 2, 5, 3)
				out, _ := rnn.Sequence(tc.cell, scope, x)
				return ReduceAllSum(Mul(out, out))
			}
			if err := analysis.CheckGradient(backend.MustNew(), store, loss, analysis.FD{}); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestSimpleStepByHand checks one step of the tanh RNN and the IRNN against the
// equation h_1 = σ(W h_0 + V x + b), o = U h_1 + b_o computed in plain Go.
func TestSimpleStepByHand(t *testing.T) {
	for _, cell := range []*rnn.Simple{rnn.NewTanh(2, 3, 2), rnn.NewIRNN(2, 3, 2)} {
		cell.Type = dtypes.Float64
		store := model.NewStore()
		scope := store.RootScope()
		if err := cell.Init(scope, rand.New(rand.NewPCG(7, 7))); err != nil {
			t.Fatal(err)
		}
		h0 := []float64{0.5, -0.25, 1}
		b := []float64{0.1, -0.2, 0.3}
		bo := []float64{0.05, -0.05}
		scope.GetVariable("h0").MustSetValue(tensors.FromFlatDataAndDimensions(h0, 3))
		scope.GetVariable("b").MustSetValue(tensors.FromFlatDataAndDimensions(b, 3))
		scope.GetVariable("bo").MustSetValue(tensors.FromFlatDataAndDimensions(bo, 2))
		V := tensors.MustCopyFlatData[float64](scope.GetVariable("V").MustValue())
		W := tensors.MustCopyFlatData[float64](scope.GetVariable("W").MustValue())
		U := tensors.MustCopyFlatData[float64](scope.GetVariable("U").MustValue())
		x := []float64{0.7, -1.3}
		out := model.MustExecOnce(backend.MustNew(), store, func(scope *model.Scope, g *Graph) *Node {
			o, _ := rnn.Sequence(cell, scope, Const(g, [][][]float64{{x}}))
			return o
		})
		got := tensors.MustCopyFlatData[float64](out)
		var h [3]float64
		for j := range 3 {
			z := b[j]
			for i := range 3 {
				z += h0[i] * W[i*3+j]
			}
			for i := range 2 {
				z += x[i] * V[i*3+j]
			}
			if cell.Act == rnn.ReLUAct {
				h[j] = max(z, 0)
			} else {
				h[j] = math.Tanh(z)
			}
		}
		for k := range 2 {
			want := bo[k]
			for j := range 3 {
				want += h[j] * U[j*2+k]
			}
			if math.Abs(got[k]-want) > 1e-12 {
				t.Errorf("Act %d: o[%d] = %.15g, want %.15g", cell.Act, k, got[k], want)
			}
		}
	}
}

func TestSimpleInit(t *testing.T) {
	store := model.NewStore()
	scope := store.RootScope()
	if err := rnn.NewIRNN(10, 80, 9).Init(scope, rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Fatal(err)
	}
	W := tensors.MustCopyFlatData[float32](scope.GetVariable("W").MustValue())
	for i := range 80 {
		for j := range 80 {
			want := float32(0)
			if i == j {
				want = 1
			}
			if W[i*80+j] != want {
				t.Fatalf("IRNN W[%d,%d] = %g, want %g", i, j, W[i*80+j], want)
			}
		}
	}
	if err := rnn.NewTanh(10, 0, 9).Init(model.NewStore().RootScope(), rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("Init with N = 0: no error")
	}
}

func TestSimpleParamCount(t *testing.T) {
	for _, tc := range []struct {
		name string
		cell *rnn.Simple
		want int
	}{
		{"tanh RNN 80, copy", rnn.NewTanh(10, 80, 9), 8089},
		{"IRNN 80, copy", rnn.NewIRNN(10, 80, 9), 8089},
		{"tanh RNN 128, adding", rnn.NewTanh(2, 128, 1), 17025},
	} {
		store := model.NewStore()
		if err := tc.cell.Init(store.RootScope(), rand.New(rand.NewPCG(1, 1))); err != nil {
			t.Fatal(err)
		}
		got := store.RootScope().NumParameters()
		t.Logf("%s: %d parameters", tc.name, got)
		if got != tc.want || tc.cell.NumParams() != tc.want {
			t.Errorf("%s: %d parameters in the store, NumParams %d, want %d", tc.name, got, tc.cell.NumParams(), tc.want)
		}
	}
}
