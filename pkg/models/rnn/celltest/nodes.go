package celltest

import (
	"fmt"
	"math/rand/v2"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// GraphCost is how a cell's unrolled graph grows with the sequence length.
type GraphCost struct {
	Forward  int // nodes added per time step to the forward graph (rnn.Sequence and its readout)
	Training int // nodes added per time step to the graph of the loss and its gradient
}

// NodesPerStep measures GraphCost for cell (initialised here from a fixed seed, batch 2)
// by building its graphs at T = 2, 3 and 4 and counting their nodes: the cost is the
// growth from T = 3 to 4. It returns an error if the growth from T = 2 to 3 differs (a
// graph that does not grow linearly in T). On the Go backend each node costs ~10–20 µs
// per step, so this is the cost that matters there.
func NodesPerStep(backend compute.Backend, cell rnn.Cell) (GraphCost, error) {
	store := model.NewStore()
	if err := cell.Init(store.RootScope(), rand.New(rand.NewPCG(1, 1))); err != nil {
		return GraphCost{}, err
	}
	count := func(T int, withGrad bool) (int, error) {
		n := 0
		_, err := model.ExecOnce(backend, store, func(scope *model.Scope, g *Graph) *Node {
			x := Zeros(g, shapeOf(cell, T))
			out, _ := rnn.Sequence(cell, scope, x)
			loss := ReduceAllSum(Mul(out, out))
			if withGrad {
				var vars []*Node
				for v := range store.RootScope().IterVariables() {
					if v.Trainable {
						vars = append(vars, v.NodeValue(g))
					}
				}
				for _, gr := range Gradient(loss, vars...) {
					loss = Add(loss, ReduceAllSum(gr))
				}
			}
			n = len(g.Nodes())
			return loss
		})
		return n, err
	}
	var cost GraphCost
	for i, withGrad := range []bool{false, true} {
		var n [3]int
		for k, T := range []int{2, 3, 4} {
			var err error
			if n[k], err = count(T, withGrad); err != nil {
				return GraphCost{}, err
			}
		}
		if n[2]-n[1] != n[1]-n[0] {
			return GraphCost{}, fmt.Errorf("celltest: NodesPerStep: %T grows by %d nodes from T=2 to 3 but %d from 3 to 4", cell, n[1]-n[0], n[2]-n[1])
		}
		if i == 0 {
			cost.Forward = n[2] - n[1]
		} else {
			cost.Training = n[2] - n[1]
		}
	}
	return cost, nil
}

func shapeOf(cell rnn.Cell, T int) shapes.Shape {
	return shapes.Make(cell.DType(), 2, T, cell.Sizes().In)
}
