package rnn

import (
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
)

// TestProductPlan checks that the gradient of Product with respect to b is built by Product's
// plan, not by GoMLX's generic one: for a [7, 5]·b [5, 3] it is aᵀ·v (plan A), for a
// [7, 5]·b [2, 5]ᵀ it is vᵀ·a (plan B).
func TestProductPlan(t *testing.T) {
	for _, tc := range []struct {
		bDims []int
		cb    int
		planA bool
	}{{[]int{5, 3}, 0, true}, {[]int{2, 5}, 1, false}} {
		g := NewGraph(backend.MustNew(), "plan")
		a := Parameter(g, "a", shapes.Make(dtypes.Float32, 7, 5))
		b := Parameter(g, "b", shapes.Make(dtypes.Float32, tc.bDims...))
		y := Product(a, 1, b, tc.cb)
		v := Parameter(g, "v", y.Shape())
		gb := Gradient(ReduceAllSum(Mul(y, v)), b)[0]
		for gb.Type() != NodeTypeDotGeneral && len(gb.Inputs()) == 1 {
			gb = gb.Inputs()[0] // the transpose back to b's layout, if any
		}
		first := gb.Inputs()[0]
		if gb.Type() != NodeTypeDotGeneral || first.Type() != NodeTypeTranspose {
			t.Fatalf("b %v: ∂L/∂b is %s, want a DotGeneral of a transposed operand", tc.bDims, gb)
		}
		if isA := first.Inputs()[0] == a; isA != tc.planA {
			t.Errorf("b %v: ∂L/∂b transposes %s, want plan A (aᵀ·v) = %v", tc.bDims, first.Inputs()[0], tc.planA)
		}
	}
}
