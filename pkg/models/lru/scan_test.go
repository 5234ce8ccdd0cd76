package lru

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// TestScanMatchesSteps checks that the LRU's States (scan.DiagonalComplex) give the states,
// outputs and gradients (with respect to every trainable variable) of rnn.Unroll's
// step-by-step Next, to 1e-12 and 1e-10, and that its Filter (scan.DiagonalFilter) gives the
// same outputs, last state and gradients.
func TestScanMatchesSteps(t *testing.T) {
	const B, T = 2, 150
	c := &Cell{In: 3, N: 5, Out: 2, Type: dtypes.Float64}
	store := model.NewStore()
	scope := store.RootScope()
	if err := c.Init(scope, rand.New(rand.NewPCG(3, 1))); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 1))
	x := tensors.FromFlatDataAndDimensions(rnn.Uniform(rng, B*T*c.In, -1, 1), B, T, c.In)
	w := tensors.FromFlatDataAndDimensions(rnn.Uniform(rng, B*T*c.Out, -1, 1), B, T, c.Out)
	var names []string
	res, err := model.ExecOnceN(backend.MustNew(), store, func(scope *model.Scope, g *Graph) []*Node {
		rnn.LiveVariables(store, g)
		st := c.Build(scope, g).(*rnn.DiagonalStep)
		u := Const(g, x)
		stepped := rnn.Unroll(st, u, nil)
		scanned := st.States(Zeros(g, shapes.Make(c.DType(), B, 2*c.N)), u)
		var vars []*Node
		names = names[:0]
		for v := range scope.IterVariables() {
			if v.Trainable {
				names = append(names, v.Name())
				vars = append(vars, v.NodeValue(g))
			}
		}
		filtered, last := st.Filter(Zeros(g, shapes.Make(c.DType(), B, 2*c.N)), u)
		out := []*Node{stepped, scanned, st.Readout(stepped), filtered, SliceAxis(stepped, 1, AxisElem(T-1)), InsertAxes(last, 1)}
		for _, outputs := range []*Node{st.Readout(stepped), st.Readout(scanned), filtered} {
			loss := ReduceAllSum(Mul(outputs, Const(g, w)))
			out = append(out, Gradient(loss, vars...)...)
		}
		return out
	})
	if err != nil {
		t.Fatal(err)
	}
	compare := func(what string, got, want *tensors.Tensor, tol float64) {
		g, w := tensors.MustCopyFlatData[float64](got), tensors.MustCopyFlatData[float64](want)
		for i := range w {
			if math.Abs(g[i]-w[i]) > tol*max(1, math.Abs(w[i])) {
				t.Errorf("%s[%d]: scan %.17g, steps %.17g", what, i, g[i], w[i])
				return
			}
		}
	}
	compare("states", res[1], res[0], 1e-12)
	compare("filter outputs", res[3], res[2], 1e-12)
	compare("filter last state", res[5], res[4], 1e-12)
	nv := len(names)
	for k, name := range names {
		compare(fmt.Sprintf("scan gradient wrt %s", name), res[6+nv+k], res[6+k], 1e-10)
		compare(fmt.Sprintf("filter gradient wrt %s", name), res[6+2*nv+k], res[6+k], 1e-10)
	}
}
