package lstm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
)

// TestGatesReproduceStates checks the returned gates against the states they produced:
// h_t = o_t ⊙ tanh(c_t), and c_t − f_t ⊙ c_{t−1} = i_t ⊙ g_t lies in (−i_t, i_t).
func TestGatesReproduceStates(t *testing.T) {
	for _, peephole := range []bool{false, true} {
		c := &Cell{In: 3, N: 4, Out: 2, Peephole: peephole, Type: dtypes.Float64}
		store := model.NewStore()
		if err := c.Init(store.RootScope(), rand.New(rand.NewPCG(1, 2))); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		xs := make([]float64, 2*5*3)
		for k := range xs {
			xs[k] = rng.NormFloat64()
		}
		out := model.MustExecOnceN(backend.MustNew(), store, func(scope *model.Scope, g *Graph) []*Node {
			i, f, o, s := c.Gates(scope, Reshape(Const(g, xs), 2, 5, 3))
			return []*Node{i, f, o, s}
		})
		I, F, O, S := tensors.MustCopyFlatData[float64](out[0]), tensors.MustCopyFlatData[float64](out[1]),
			tensors.MustCopyFlatData[float64](out[2]), tensors.MustCopyFlatData[float64](out[3])
		for b := range 2 {
			for tt := range 5 {
				for j := range 4 {
					k := (b*5+tt)*4 + j
					h, cell := S[(b*5+tt)*8+j], S[(b*5+tt)*8+4+j]
					if want := O[k] * math.Tanh(cell); math.Abs(h-want) > 1e-12 {
						t.Fatalf("peephole %v: h[%d,%d,%d] = %g, o·tanh(c) = %g", peephole, b, tt, j, h, want)
					}
					cPrev := 0.0 // c0 starts at zero
					if tt > 0 {
						cPrev = S[(b*5+tt-1)*8+4+j]
					}
					if ig := cell - F[k]*cPrev; math.Abs(ig) >= I[k] {
						t.Fatalf("peephole %v: |c − f·c_prev| = %g not below i = %g at [%d,%d,%d]", peephole, math.Abs(ig), I[k], b, tt, j)
					}
				}
			}
		}
	}
}
