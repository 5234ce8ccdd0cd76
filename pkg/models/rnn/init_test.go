package rnn_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// TestVarKinds checks the three kinds of Var: a plain one is trainable and read as a node,
// a Static one is non-trainable and read as no node, a Frozen one is non-trainable and read
// as a node whose value is the stored one (and that the gradient does not reach), and a Var
// that is both is rejected before any variable is created.
func TestVarKinds(t *testing.T) {
	vars := []rnn.Var{
		{Name: "plain", Dims: []int{2}, Values: []float64{1, 2}},
		{Name: "static", Dims: []int{2}, Values: []float64{3, 4}, DType: dtypes.Int32, Static: true},
		{Name: "frozen", Dims: []int{2}, Values: []float64{5, 6}, Frozen: true},
	}
	store := model.NewStore()
	scope := store.Scope("/cell")
	if err := rnn.CreateVariables(scope, dtypes.Float64, vars); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		trainable bool
		node      bool
	}{
		{"plain", true, true}, {"static", false, false}, {"frozen", false, true},
	} {
		v := scope.GetVariable(tc.name)
		if v == nil {
			t.Fatalf("variable %q not created", tc.name)
		}
		if v.Trainable != tc.trainable {
			t.Errorf("%s: Trainable = %v, want %v", tc.name, v.Trainable, tc.trainable)
		}
	}
	// The frozen variable enters the graph as a node holding its value; the gradient of a
	// loss on both nodes is taken with respect to the plain one only, as a trainer does.
	var got map[string]bool
	res, err := model.ExecOnceN(backend.MustNew(), store, func(_ *model.Scope, g *Graph) []*Node {
		rnn.LiveVariables(store, g)
		nodes := rnn.ReadVariables(scope, g, vars, "test")
		got = map[string]bool{}
		for name := range nodes {
			got[name] = true
		}
		loss := ReduceAllSum(Mul(nodes["plain"], nodes["frozen"]))
		return []*Node{nodes["frozen"], Gradient(loss, nodes["plain"])[0]}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !got["plain"] || !got["frozen"] || got["static"] || len(got) != 2 {
		t.Errorf("ReadVariables returned nodes for %v, want plain and frozen", got)
	}
	if v := tensors.MustCopyFlatData[float64](res[0]); v[0] != 5 || v[1] != 6 {
		t.Errorf("frozen node = %v, want [5 6]", v)
	}
	if g := tensors.MustCopyFlatData[float64](res[1]); g[0] != 5 || g[1] != 6 {
		t.Errorf("∂(plain·frozen)/∂plain = %v, want the frozen values [5 6]", g)
	}
	// RandomizeVariables leaves the frozen variable alone.
	rnn.RandomizeVariables(scope, rand.New(rand.NewPCG(1, 1)), -1, 1)
	if v := tensors.MustCopyFlatData[float64](scope.GetVariable("frozen").MustValue()); v[0] != 5 || v[1] != 6 {
		t.Errorf("after RandomizeVariables frozen = %v, want [5 6]", v)
	}

	both := model.NewStore()
	err = rnn.CreateVariables(both.RootScope(), dtypes.Float64, []rnn.Var{
		{Name: "first", Dims: []int{1}, Values: []float64{1}},
		{Name: "both", Dims: []int{1}, Values: []float64{1}, Static: true, Frozen: true},
	})
	if err == nil || !strings.Contains(err.Error(), `"both" is both Static`) {
		t.Errorf("CreateVariables with Static and Frozen: error %v, want one naming the variable", err)
	}
	if n := both.RootScope().NumVariables(); n != 0 {
		t.Errorf("CreateVariables failed after creating %d variables, want none", n)
	}
}
