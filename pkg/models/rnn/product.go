package rnn

import (
	"runtime"
	"sync"
	"weak"

	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/support/exceptions"
)

// Product returns the product of a and b contracting axis ca of a with axis cb of b: a is
// [N…, K] (ca = a.Rank()−1) or [K, N] (ca = 0), b is [K, M] (cb = 0) or [M, K] (cb = 1), and
// the result is [N…, M]. It is DotGeneral(a, {ca}, nil, b, {cb}, nil) with a gradient laid out
// for the Go backend's matmul kernels, which take the first operand's contracting axis last
// and the second's first or last, and transpose both operands otherwise.
//
// For y = a·b with adjoint v = ∂L/∂y [N, M], the gradient with respect to b contracts N, the
// first axis of both a and v. GoMLX builds it as DotGeneral(v, {0}, a, {0}), which the backend
// runs after transposing v and a. Product instead transposes one operand itself, the cheaper of
//
//	A: aᵀ [K, N] · v [N, M] → [K, M]    (a transposed unless ca = 0; the result unless cb = 0)
//	B: vᵀ [M, N] · a        → [M, K]    (v transposed; the result unless cb = 1)
//
// counted in elements copied. The products of the recurrent cells are of this kind, with N the
// data batch: a state or input times a parameter matrix, or a projection of the state onto a
// few directions (the uRNN's reflections) times their rows. The gradient with respect to a is
// GoMLX's own, whose operands are already in the kernels' layouts.
func Product(a *Node, ca int, b *Node, cb int) *Node {
	if b.Rank() != 2 || (ca != a.Rank()-1 && (ca != 0 || a.Rank() != 2)) || (cb != 0 && cb != 1) {
		exceptions.Panicf("rnn.Product: contracting axis %d of %s with axis %d of %s: want a [N…, K] (last axis) or [K, N] (axis 0) and b [K, M] or [M, K]",
			ca, a.Shape(), cb, b.Shape())
	}
	y := DotGeneral(a, []int{ca}, nil, b, []int{cb}, nil)
	key := weak.Make(y)
	dots.Store(key, [2]int{ca, cb})
	runtime.AddCleanup(y, func(k weak.Pointer[Node]) { dots.Delete(k) }, key)
	return y
}

// dots holds the contracting axes of the nodes Product made, by a weak pointer to the node (an
// entry goes when its node does).
var dots sync.Map

func init() {
	generic := VJPRegistration[NodeTypeDotGeneral]
	VJPRegistration[NodeTypeDotGeneral] = func(node *Node, vs []*Node, s shapes.Shape) []*Node {
		axes, ok := dots.Load(weak.Make(node))
		if !ok {
			return generic(node, vs, s)
		}
		grads := generic(node, vs, s) // the gradient with respect to a, and b's if it is cheaper
		ax := axes.([2]int)
		if gb := dotGradB(node.Inputs()[0], ax[0], ax[1], vs[0]); gb != nil {
			grads[1] = gb
		}
		return grads
	}
}

// dotGradB returns ∂L/∂b for y = Product(a, ca, b, cb) and v = ∂L/∂y by plan A or B (see Product).
func dotGradB(a *Node, ca, cb int, v *Node) *Node {
	k := a.Shape().Dim(ca)
	n := a.Shape().Size() / k
	m := v.Shape().Size() / n
	a2, v2 := a, v
	if a.Rank() > 2 {
		a2, v2 = Reshape(a, n, k), Reshape(v, n, m) // [N, K], [N, M]
	}
	costA, costB := 0, n*m
	if ca != 0 {
		costA += n * k
	}
	if cb != 0 {
		costA += k * m
	} else {
		costB += k * m
	}
	var g *Node
	if costA <= costB {
		aT := a2 // [K, N]
		if ca != 0 {
			aT = Transpose(a2, 0, 1)
		}
		g = DotGeneral(aT, []int{1}, nil, v2, []int{0}, nil) // [K, M]
		if cb != 0 {
			g = Transpose(g, 0, 1)
		}
		return g
	}
	caB := 0 // a2's axis N
	if ca == 0 {
		caB = 1
	}
	g = DotGeneral(Transpose(v2, 0, 1), []int{1}, nil, a2, []int{caB}, nil) // [M, K]
	if cb == 0 {
		g = Transpose(g, 0, 1)
	}
	return g
}
