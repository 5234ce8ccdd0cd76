package gru

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

// TestGatesReproduceStates checks the returned gates against the states: h_t lies between
// h_{t−1} and the candidate h̃_t ∈ (−1, 1) with weight z_t, so
// |h_t − (1 − z_t) h_{t−1}| < z_t; and both gates are in (0, 1).
func TestGatesReproduceStates(t *testing.T) {
	c := &Cell{In: 3, N: 4, Out: 2, Type: dtypes.Float64}
	store := model.NewStore()
	if err := c.Init(store.RootScope(), rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	xs := make([]float64, 2*5*3)
	for k := range xs {
		xs[k] = 2 * rng.NormFloat64()
	}
	out := model.MustExecOnceN(backend.MustNew(), store, func(scope *model.Scope, g *Graph) []*Node {
		z, r, s := c.Gates(scope, Reshape(Const(g, xs), 2, 5, 3))
		return []*Node{z, r, s}
	})
	Z, R, S := tensors.MustCopyFlatData[float64](out[0]), tensors.MustCopyFlatData[float64](out[1]), tensors.MustCopyFlatData[float64](out[2])
	for k := range Z {
		if !(Z[k] > 0 && Z[k] < 1 && R[k] > 0 && R[k] < 1) {
			t.Fatalf("gate %d: z = %g, r = %g, want both in (0, 1)", k, Z[k], R[k])
		}
		tt := (k / 4) % 5
		prev := 0.0 // h0 starts at zero
		if tt > 0 {
			prev = S[k-4]
		}
		if d := math.Abs(S[k] - (1-Z[k])*prev); d >= Z[k] {
			t.Fatalf("state %d: |h − (1−z) h_prev| = %g, want < z = %g", k, d, Z[k])
		}
	}
}
