package stack_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/fcurnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn/celltest"
	"github.com/urnn-notebooks/longmemory/pkg/models/stack"
)

// tanh and lstm64 are small float64 cells for the suite and the finite-difference checks.
var (
	tanh   = celltest.Tanh64
	lstm64 = celltest.LSTM64
)

// TestCell runs the shared cell suite on a stack of a tanh RNN under an LSTM. (Its Step check
// does not apply: the layers' variables share names; TestComposes checks the equations.)
func TestCell(t *testing.T) {
	celltest.Test(t, celltest.Config{
		New:   func() rnn.Cell { return stack.New(tanh(3, 4, 5), lstm64(5, 3, 2)) },
		Sizes: rnn.Sizes{In: 3, State: 4 + 2*3, Out: 2},
		ParamCounts: []celltest.ParamCount{
			// Two tanh RNNs of 80 on copy: the first reads 10 inputs and gives 80 to the second.
			{Name: "2 × tanh 80, copy", Cell: stack.New(rnn.NewTanh(10, 80, 80), rnn.NewTanh(80, 80, 9)),
				Want: rnn.NewTanh(10, 80, 80).NumParams() + rnn.NewTanh(80, 80, 9).NumParams()},
		},
		Budget: celltest.GraphCost{Forward: 40, Training: 130},
		BadConfigs: []celltest.BadConfig{
			{Name: "no layers", Cell: stack.New(), Want: "Layers is empty"},
			{Name: "mismatched widths", Cell: stack.New(tanh(3, 4, 5), tanh(6, 4, 2)), Want: "Layers[1].In = 6, want Layers[0].Out = 5"},
			{Name: "bad layer", Cell: stack.New(tanh(3, 4, 5), tanh(5, 0, 2)), Want: "Layers[1]: rnn.Simple: N = 0"},
			{Name: "dtypes", Cell: stack.New(tanh(3, 4, 5), rnn.NewTanh(5, 4, 2)), Want: "Layers[1] is Float32, Layers[0] Float64"},
			{Name: "constrained", Cell: stack.New(tanh(3, 4, 5), &fcurnn.Cell{In: 5, N: 4, Out: 2, Type: dtypes.Float64}), Want: "rnn.Constrained"},
		},
		Mismatched: []celltest.BadConfig{
			{Name: "other width", Cell: stack.New(tanh(3, 6, 5), lstm64(5, 3, 2)), Want: "has shape"},
		},
	})
}

// TestComposes: a stack's outputs are its last layer's outputs on the readouts of the layer
// below, each layer run alone over the whole sequence with the same variables; and a stack
// of one layer is that layer.
func TestComposes(t *testing.T) {
	be := backend.MustNew()
	const batch, T = 2, 7
	lower, upper := tanh(3, 4, 5), lstm64(5, 3, 2)
	st := stack.New(lower, upper)
	store := model.NewStore()
	scope := store.Scope("/s")
	if err := st.Init(scope, rand.New(rand.NewPCG(3, 4))); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	x := make([]float64, batch*T*3)
	for i := range x {
		x[i] = rng.Float64()*2 - 1
	}
	xt := tensors.FromFlatDataAndDimensions(x, batch, T, 3)
	run := func(fn func(g *Graph, x *Node) *Node) []float64 {
		exec := model.MustNewExec(be, store, func(_ *model.Scope, x *Node) *Node {
			rnn.LiveVariables(store, x.Graph())
			return fn(x.Graph(), x)
		})
		return tensors.MustCopyFlatData[float64](exec.MustCall(xt)[0])
	}
	whole := run(func(g *Graph, x *Node) *Node { out, _ := rnn.Sequence(st, scope, x); return out })
	composed := run(func(g *Graph, x *Node) *Node {
		mid, _ := rnn.Sequence(lower, scope.At("layer0"), x)
		out, _ := rnn.Sequence(upper, scope.At("layer1"), mid)
		return out
	})
	if len(whole) != batch*T*2 {
		t.Fatalf("%d outputs, want %d", len(whole), batch*T*2)
	}
	for i := range whole {
		if math.Abs(whole[i]-composed[i]) > 1e-12 {
			t.Fatalf("output %d: stack %v, layers one after the other %v", i, whole[i], composed[i])
		}
	}
	one := stack.New(lower)
	single := run(func(g *Graph, x *Node) *Node { out, _ := rnn.Sequence(one, scope, x); return out })
	alone := run(func(g *Graph, x *Node) *Node { out, _ := rnn.Sequence(lower, scope.At("layer0"), x); return out })
	for i := range single {
		if single[i] != alone[i] {
			t.Fatalf("a stack of one layer: output %d is %v, the layer's %v", i, single[i], alone[i])
		}
	}
}
