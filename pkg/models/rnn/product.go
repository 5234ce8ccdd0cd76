package rnn

import (
	"runtime"
	"slices"
	"sync"
	"weak"

	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/compute/support/xslices"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/support/exceptions"
)

// Product returns the product of a and b contracting axis ca of a with axis cb of b: a is
// [N…, K] (ca = a.Rank()−1, rank ≥ 2) or [K, N] (ca = 0, rank 2), b is [K, M] (cb = 0) or
// [M, K] (cb = 1), and the result is [N…, M]. It is DotGeneral(a, {ca}, nil, b, {cb}, nil)
// with gradients laid out for the Go backend's matmul kernels, which take the first operand's
// contracting axes last and the second's first or last, and transpose both operands otherwise.
//
// For y = a·b with adjoint v = ∂L/∂y [N…, M], the gradient with respect to b contracts the
// axes N… of a and v. GoMLX's generic gradient puts v first, contracting its leading axes,
// so that the backend transposes v, and a too when ca is last. Product transposes one
// operand itself, the one that copies fewer elements:
//
//	A: aᵀ [K, N…] · v [N…, M] → [K, M]    (a transposed unless ca = 0; the result unless cb = 0)
//	B: vᵀ [M, N…] · a         → [M, K]    (v transposed; the result unless cb = 1)
//
// The products of the recurrent cells are of this kind, with N the data batch: a state or an
// input times a parameter matrix, or a projection of the state onto a few directions (the
// uRNN's reflections) times their rows. The gradient with respect to a, v·bᵀ contracting M,
// is GoMLX's: v [N…, M] · b, whose operands are already in the kernels' layouts.
func Product(a *Node, ca int, b *Node, cb int) *Node {
	if b.Rank() != 2 || a.Rank() < 2 || (ca != a.Rank()-1 && (ca != 0 || a.Rank() != 2)) || (cb != 0 && cb != 1) {
		exceptions.Panicf("rnn.Product: contracting axis %d of %s with axis %d of %s: want a [N…, K] (its last axis, rank ≥ 2) or [K, N] (axis 0) and b [K, M] or [M, K]",
			ca, a.Shape(), cb, b.Shape())
	}
	y := DotGeneral(a, []int{ca}, nil, b, []int{cb}, nil)
	key := weak.Make(y)
	productNodes.Store(key, [2]int{ca, cb})
	runtime.AddCleanup(y, func(k weak.Pointer[Node]) { productNodes.Delete(k) }, key)
	return y
}

// productNodes holds the contracting axes of the nodes Product made, by a weak pointer to the
// node (an entry goes when its node does). Their gradients are productVJP's; every other
// DotGeneral keeps GoMLX's.
var productNodes sync.Map

func init() {
	generic := VJPRegistration[NodeTypeDotGeneral]
	VJPRegistration[NodeTypeDotGeneral] = func(node *Node, vs []*Node, s shapes.Shape) []*Node {
		if axes, ok := productNodes.Load(weak.Make(node)); ok {
			ax := axes.([2]int)
			return productVJP(node.Inputs()[0], ax[0], node.Inputs()[1], ax[1], vs[0])
		}
		return generic(node, vs, s)
	}
}

// productVJP returns ∂L/∂a and ∂L/∂b for y = Product(a, ca, b, cb) and v = ∂L/∂y, ∂L/∂b by
// plan A or B (see Product).
func productVJP(a *Node, ca int, b *Node, cb int, v *Node) []*Node {
	r := a.Rank()
	free := slices.Delete(xslices.Iota(0, r), ca, ca+1)           // a's axes N…
	vFree := xslices.Iota(0, r-1)                                 // v's axes N…
	ga := DotGeneral(v, []int{r - 1}, nil, b, []int{1 - cb}, nil) // [N…, K]
	if ca == 0 {
		ga = Transpose(ga, 0, 1) // [K, N]
	}
	k, m := b.Shape().Dim(cb), b.Shape().Dim(1-cb)
	n := a.Shape().Size() / max(k, 1)
	costA, costB := 0, n*m
	if ca != 0 {
		costA += n * k
	}
	if cb != 0 {
		costA += k * m
	} else {
		costB += k * m
	}
	var gb *Node
	if costA <= costB {
		aT := a // [K, N…]
		if ca != 0 {
			aT = TransposeAllAxes(a, append([]int{ca}, free...)...)
		}
		gb = DotGeneral(aT, xslices.Iota(1, r-1), nil, v, vFree, nil) // [K, M]
		if cb != 0 {
			gb = Transpose(gb, 0, 1)
		}
	} else {
		vT := TransposeAllAxes(v, append([]int{r - 1}, vFree...)...) // [M, N…]
		gb = DotGeneral(vT, xslices.Iota(1, r-1), nil, a, free, nil) // [M, K]
		if cb == 0 {
			gb = Transpose(gb, 0, 1)
		}
	}
	return []*Node{ga, gb}
}
