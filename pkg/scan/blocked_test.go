package scan_test

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/scan"
)

// diagonal is a diagonal recurrence x_t = λ ⊙ x_{t−1} + u_t·P, y_t = x_t·R with its inputs
// drawn: λ [N] with |λ| in [0.8, 1) and any phase, P [In, 2N], R [2N, Out], u [B, T, In], x_0
// [B, 2N], all from U[−1, 1]. Its tensors, in this order, are the inputs of DiagonalFilter;
// DiagonalComplex takes λ, p = u·P and x_0.
type diagonal struct {
	B, T, N, In, Out int
	lr, li, in, out  []float64
	u, x0            []float64
}

func newDiagonal(seed uint64, B, T, N, In, Out int) *diagonal {
	rng := rand.New(rand.NewPCG(seed, 17))
	u := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = 2*rng.Float64() - 1
		}
		return v
	}
	d := &diagonal{B: B, T: T, N: N, In: In, Out: Out, lr: make([]float64, N), li: make([]float64, N)}
	for j := range N {
		z := cmplx.Rect(0.8+0.2*rng.Float64(), 2*math.Pi*rng.Float64())
		d.lr[j], d.li[j] = real(z), imag(z)
	}
	d.in, d.out, d.u, d.x0 = u(In*2*N), u(2*N*Out), u(B*T*In), u(B*2*N)
	return d
}

// p returns u·P, [B, T, 2N].
func (d *diagonal) p() []float64 {
	p := make([]float64, d.B*d.T*2*d.N)
	for bt := range d.B * d.T {
		for i := range d.In {
			for k := range 2 * d.N {
				p[bt*2*d.N+k] += d.u[bt*d.In+i] * d.in[i*2*d.N+k]
			}
		}
	}
	return p
}

// reference returns the states [B, T, 2N] and the outputs [B, T, Out] in plain Go.
func (d *diagonal) reference() (states, outputs []float64) {
	p, n := d.p(), d.N
	states, outputs = make([]float64, d.B*d.T*2*n), make([]float64, d.B*d.T*d.Out)
	for b := range d.B {
		for j := range n {
			x, lam := complex(d.x0[b*2*n+j], d.x0[b*2*n+n+j]), complex(d.lr[j], d.li[j])
			for t := range d.T {
				i := (b*d.T + t) * 2 * n
				x = lam*x + complex(p[i+j], p[i+n+j])
				states[i+j], states[i+n+j] = real(x), imag(x)
			}
		}
	}
	for bt := range d.B * d.T {
		for k := range 2 * n {
			for o := range d.Out {
				outputs[bt*d.Out+o] += states[bt*2*n+k] * d.out[k*d.Out+o]
			}
		}
	}
	return states, outputs
}

// tensors returns λ's parts, P, R, u and x_0 as Float64 tensors (or, for DiagonalComplex,
// λ's parts, p and x_0).
func (d *diagonal) tensors(filter bool) []any {
	ft := func(v []float64, dims ...int) any { return tensors.FromFlatDataAndDimensions(v, dims...) }
	if !filter {
		return []any{ft(d.lr, d.N), ft(d.li, d.N), ft(d.p(), d.B, d.T, 2*d.N), ft(d.x0, d.B, 2*d.N)}
	}
	return []any{ft(d.lr, d.N), ft(d.li, d.N), ft(d.in, d.In, 2*d.N), ft(d.out, 2*d.N, d.Out), ft(d.u, d.B, d.T, d.In), ft(d.x0, d.B, 2*d.N)}
}

// filterOf returns DiagonalFilter's outputs and last state for the inputs of tensors(true).
func filterOf(in []*Node) []*Node {
	y, last := scan.DiagonalFilter(in[0], in[1], in[2], in[3], in[4], in[5])
	return []*Node{y, last}
}

// unrolled returns the states x_1 … x_T of x_t = λ ⊙ x_{t−1} + p(t) from x_0, unrolled step by
// step in the graph as rnn.DiagonalStep.Next does, [B, State] each.
func unrolled(lr, li *Node, p func(t int) *Node, x0 *Node, T int) []*Node {
	n := lr.Shape().Size()
	rowRe := InsertAxes(Concatenate([]*Node{lr, lr}, 0), 0)
	rowIm := InsertAxes(Concatenate([]*Node{Neg(li), li}, 0), 0)
	x, xs := x0, make([]*Node, T)
	for t := range T {
		swapped := Concatenate([]*Node{SliceAxis(x, 1, AxisRange(n, 2*n)), SliceAxis(x, 1, AxisRange(0, n))}, 1)
		x = Add(Add(Mul(x, rowRe), Mul(swapped, rowIm)), p(t))
		xs[t] = x
	}
	return xs
}

// step returns x[:, t], [B, …], of x [B, T, …].
func step(x *Node, t int) *Node { return Squeeze(SliceAxis(x, 1, AxisElem(t)), 1) }

// unrolledFilter returns the outputs and last state of the recurrence unrolled step by step in
// the graph, from the inputs of tensors(true).
func unrolledFilter(in []*Node) []*Node {
	T := in[4].Shape().Dim(1)
	xs := unrolled(in[0], in[1], func(t int) *Node { return MatMul(step(in[4], t), in[2]) }, in[5], T)
	return []*Node{MatMul(Stack(xs, 1), in[3]), xs[T-1]}
}

// unrolledStates returns the states of the recurrence unrolled step by step in the graph, from
// the inputs of tensors(false).
func unrolledStates(in []*Node) []*Node {
	return []*Node{Stack(unrolled(in[0], in[1], func(t int) *Node { return step(in[2], t) }, in[3], in[2].Shape().Dim(1)), 1)}
}

// withBlock runs f with scan.Block set to c.
func withBlock(c int, f func()) {
	old := scan.Block
	scan.Block = c
	defer func() { scan.Block = old }()
	f()
}

// blockCases are sequence lengths and block lengths: one block, whole blocks, a partial last
// block, and enough blocks for two and three levels of blocks; 60 and 96 fill whole blocks at
// every level (blockLen: blocks of 6, then 5; of 8, then 6).
var blockCases = []struct{ T, block int }{{1, 4}, {3, 4}, {8, 4}, {7, 2}, {37, 4}, {100, 3}, {150, 32}, {60, 8}, {96, 8}}

// TestDiagonalValues checks DiagonalComplex's states and DiagonalFilter's outputs and last
// state against the recurrence in plain Go, to 1e-12.
func TestDiagonalValues(t *testing.T) {
	for _, tc := range blockCases {
		t.Run(fmt.Sprintf("T=%d/block=%d", tc.T, tc.block), func(t *testing.T) {
			d := newDiagonal(uint64(tc.T), 2, tc.T, 3, 2, 4)
			states, outputs := d.reference()
			withBlock(tc.block, func() {
				got := run(t, func(in []*Node) []*Node { return []*Node{scan.DiagonalComplex(in[0], in[1], in[2], in[3])} }, d.tensors(false)...)
				compare(t, "DiagonalComplex states", got[0], states, 1e-12)
				got = run(t, filterOf, d.tensors(true)...)
				compare(t, "DiagonalFilter outputs", got[0], outputs, 1e-12)
				last := make([]float64, 0, d.B*2*d.N)
				for b := range d.B {
					last = append(last, states[(b*d.T+d.T-1)*2*d.N:(b*d.T+d.T)*2*d.N]...)
				}
				compare(t, "DiagonalFilter last state", got[1], last, 1e-12)
			})
		})
	}
}

// TestDiagonalGradients checks the gradients of Σ w ⊙ y + Σ w' ⊙ x_T with respect to λ, P, R,
// u and x_0 (DiagonalFilter), and of Σ w ⊙ h with respect to λ, p and x_0 (DiagonalComplex),
// against those of the recurrence unrolled step by step in the graph, to 1e-10.
func TestDiagonalGradients(t *testing.T) {
	for _, tc := range blockCases {
		t.Run(fmt.Sprintf("T=%d/block=%d", tc.T, tc.block), func(t *testing.T) {
			d := newDiagonal(50+uint64(tc.T), 2, tc.T, 3, 2, 4)
			withBlock(tc.block, func() {
				got := run(t, withGradient(filterOf, 3), d.tensors(true)...)
				want := run(t, withGradient(unrolledFilter, 3), d.tensors(true)...)
				compare(t, "filter loss", got[0], want[0], 1e-12)
				for k, name := range []string{"Re λ", "Im λ", "P", "R", "u", "x_0"} {
					compare(t, "filter gradient wrt "+name, got[1+k], want[1+k], 1e-10)
				}
				states := func(in []*Node) []*Node { return []*Node{scan.DiagonalComplex(in[0], in[1], in[2], in[3])} }
				got = run(t, withGradient(states, 4), d.tensors(false)...)
				want = run(t, withGradient(unrolledStates, 4), d.tensors(false)...)
				for k, name := range []string{"Re λ", "Im λ", "p", "x_0"} {
					compare(t, "DiagonalComplex gradient wrt "+name, got[1+k], want[1+k], 1e-10)
				}
			})
		})
	}
}

// TestDiagonalFilterChunks checks that filtering steps [0, T1) and then [T1, T) from the first
// chunk's last state gives the outputs, last state and gradients of one filter over [0, T), as
// the trainer's chunks use it.
func TestDiagonalFilterChunks(t *testing.T) {
	const T = 50
	d := newDiagonal(9, 2, T, 3, 2, 4)
	for _, T1 := range []int{1, 13, 32, 49} {
		t.Run(fmt.Sprintf("T1=%d", T1), func(t *testing.T) {
			chunked := func(in []*Node) []*Node {
				first := slicesReplace(in, 4, SliceAxis(in[4], 1, AxisRange(0, T1)))
				out1 := filterOf(first)
				second := slicesReplace(slicesReplace(in, 4, SliceAxis(in[4], 1, AxisRange(T1, T))), 5, out1[1])
				out2 := filterOf(second)
				return []*Node{Concatenate([]*Node{out1[0], out2[0]}, 1), out2[1]}
			}
			withBlock(8, func() {
				whole := run(t, withGradient(filterOf, 5), d.tensors(true)...)
				chunks := run(t, withGradient(chunked, 5), d.tensors(true)...)
				for k := range whole {
					compare(t, fmt.Sprintf("chunked output %d", k), chunks[k], whole[k], 1e-10)
				}
			})
		})
	}
}

// slicesReplace returns a copy of in with in[i] = x.
func slicesReplace(in []*Node, i int, x *Node) []*Node {
	out := append([]*Node(nil), in...)
	out[i] = x
	return out
}

// TestDiagonalNodeCount checks that the graphs of DiagonalComplex and DiagonalFilter, with
// their gradients, grow with T by at most a fixed number of nodes per level of blocks
// (⌈log_C T⌉ levels): T = 1000, 10 000 and 100 000 at the default block length differ by one
// level each.
func TestDiagonalNodeCount(t *testing.T) {
	be := backend.MustNew()
	count := func(filter bool, T int) int {
		g := NewGraph(be, "count")
		const B, N, In, Out = 2, 3, 2, 4
		param := func(name string, dims ...int) *Node {
			return Parameter(g, name, shapes.Make(dtypes.Float64, dims...))
		}
		in := []*Node{param("lr", N), param("li", N)}
		var outs []*Node
		if filter {
			in = append(in, param("P", In, 2*N), param("R", 2*N, Out), param("u", B, T, In), param("x0", B, 2*N))
			outs = filterOf(in)
		} else {
			in = append(in, param("p", B, T, 2*N), param("x0", B, 2*N))
			outs = []*Node{scan.DiagonalComplex(in[0], in[1], in[2], in[3])}
		}
		loss := lossOf(outs, 1)
		for _, gr := range Gradient(loss, in...) {
			loss = Add(loss, ReduceAllSum(gr))
		}
		return len(g.Nodes())
	}
	const perLevel = 450 // nodes a level of blocks adds, forward and gradient (measured: 270–414, the most with a padded level)
	for _, filter := range []bool{false, true} {
		var n []int
		for _, T := range []int{1000, 10000, 100000} {
			n = append(n, count(filter, T))
		}
		t.Logf("filter %v: %v nodes with the gradient at T = 1000, 10 000, 100 000", filter, n)
		if n[1]-n[0] > perLevel || n[2]-n[1] > perLevel {
			t.Errorf("filter %v: %v nodes at T = 1000, 10 000, 100 000: grows by more than %d a tenfold T", filter, n, perLevel)
		}
	}
}

// TestDiagonalLongFloat32 filters T = 10 000 steps in float32 and compares the outputs with
// the recurrence in plain Go (float64 on the same float32 inputs), to 1e-5 of the largest |y|.
func TestDiagonalLongFloat32(t *testing.T) {
	d := newDiagonal(77, 2, 10000, 8, 3, 4)
	args := d.tensors(true)
	for k, a := range args {
		v := tensors.MustCopyFlatData[float64](a.(*tensors.Tensor))
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = float32(x)
			v[i] = float64(f[i])
		}
		args[k] = tensors.FromFlatDataAndDimensions(f, a.(*tensors.Tensor).Shape().Dimensions...)
	}
	*d = diagonal{B: d.B, T: d.T, N: d.N, In: d.In, Out: d.Out,
		lr: flat(args[0].(*tensors.Tensor)), li: flat(args[1].(*tensors.Tensor)), in: flat(args[2].(*tensors.Tensor)),
		out: flat(args[3].(*tensors.Tensor)), u: flat(args[4].(*tensors.Tensor)), x0: flat(args[5].(*tensors.Tensor))}
	_, want := d.reference()
	got := run(t, filterOf, args...)
	scale, worst := 0.0, 0.0
	for _, w := range want {
		scale = max(scale, math.Abs(w))
	}
	for i := range want {
		worst = max(worst, math.Abs(got[0][i]-want[i])/scale)
	}
	t.Logf("largest error relative to the largest |y| (%.3g): %.3g", scale, worst)
	if !(worst <= 1e-5) {
		t.Errorf("float32 filter of %d steps: error %.3g of the largest |y|, want <= 1e-5", d.T, worst)
	}
}
