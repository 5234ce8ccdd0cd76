package rnn

import (
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
)

// TestProductPlan checks that the gradient of Product with respect to b is built by Product's
// plan, not by GoMLX's generic one: for a [20, 2]·b [2, 30] it is aᵀ·v (plan A: 40 elements
// copied against 660), for a [7, 5]·b [2, 5]ᵀ it is vᵀ·a (plan B: 14 against 45).
func TestProductPlan(t *testing.T) {
	for _, tc := range []struct {
		aDims, bDims []int
		cb           int
		planA        bool
	}{{[]int{20, 2}, []int{2, 30}, 0, true}, {[]int{7, 5}, []int{2, 5}, 1, false}} {
		g := NewGraph(backend.MustNew(), "plan")
		a := Parameter(g, "a", shapes.Make(dtypes.Float32, tc.aDims...))
		b := Parameter(g, "b", shapes.Make(dtypes.Float32, tc.bDims...))
		y := Product(a, 1, b, tc.cb)
		v := Parameter(g, "v", y.Shape())
		gb := Gradient(ReduceAllSum(Mul(y, v)), b)[0]
		for gb.Type() != NodeTypeDotGeneral && len(gb.Inputs()) == 1 {
			gb = gb.Inputs()[0] // the transpose back to b's layout, if any
		}
		first := gb.Inputs()[0]
		if gb.Type() != NodeTypeDotGeneral || first.Type() != NodeTypeTranspose {
			t.Fatalf("a %v, b %v: ∂L/∂b is %s, want a DotGeneral of a transposed operand", tc.aDims, tc.bDims, gb)
		}
		if isA := first.Inputs()[0] == a; isA != tc.planA {
			t.Errorf("a %v, b %v: ∂L/∂b transposes %s, want plan A (aᵀ·v) = %v", tc.aDims, tc.bDims, first.Inputs()[0], tc.planA)
		}
	}
}
