package rnn_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/seq"
)

// TestProduct checks Product's value and both gradients against DotGeneral's and against
// central finite differences of the loss Σ c⊙(a·b), for every placement of the contracting
// axes and shapes where each of the two plans for ∂L/∂b is the cheaper one (N = 7 rows of a
// against a 3-column or a 40-column b), a of rank 3 included.
func TestProduct(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		a  []int
		ca int
		b  []int
		cb int
	}{
		{[]int{7, 5}, 1, []int{5, 3}, 0}, {[]int{7, 5}, 1, []int{3, 5}, 1},
		{[]int{5, 7}, 0, []int{5, 3}, 0}, {[]int{5, 7}, 0, []int{3, 5}, 1},
		{[]int{7, 5}, 1, []int{5, 40}, 0}, {[]int{7, 5}, 1, []int{40, 5}, 1},
		{[]int{5, 7}, 0, []int{40, 5}, 1}, {[]int{40, 3}, 0, []int{2, 40}, 1}, {[]int{7, 30}, 1, []int{30, 2}, 0},
		{[]int{2, 4, 5}, 2, []int{5, 3}, 0}, {[]int{2, 4, 5}, 2, []int{30, 5}, 1}, {[]int{2, 4, 5}, 2, []int{2, 5}, 1},
		{[]int{3, 1}, 1, []int{1, 4}, 0}, {[]int{1, 6}, 1, []int{2, 6}, 1},
	} {
		t.Run(fmt.Sprintf("%v·%d·%v·%d", tc.a, tc.ca, tc.b, tc.cb), func(t *testing.T) {
			size := func(d []int) int {
				n := 1
				for _, x := range d {
					n *= x
				}
				return n
			}
			av, bv := rnn.Uniform(rng, size(tc.a), -1, 1), rnn.Uniform(rng, size(tc.b), -1, 1)
			var outDims []int
			for i, d := range tc.a {
				if i != tc.ca {
					outDims = append(outDims, d)
				}
			}
			outDims = append(outDims, tc.b[1-tc.cb])
			cv := rnn.Uniform(rng, size(outDims), -1, 1)
			loss := func(a, b, c *Node, product bool) *Node {
				if product {
					return ReduceAllSum(Mul(c, rnn.Product(a, tc.ca, b, tc.cb)))
				}
				return ReduceAllSum(Mul(c, DotGeneral(a, []int{tc.ca}, nil, b, []int{tc.cb}, nil)))
			}
			run := func(product bool) []float64 {
				out := MustExecOnceN(backend.MustNew(), func(a, b, c *Node) (*Node, *Node, *Node) {
					l := loss(a, b, c, product)
					g := Gradient(l, a, b)
					return l, g[0], g[1]
				}, seq.FloatTensor(dtypes.Float64, av, tc.a...), seq.FloatTensor(dtypes.Float64, bv, tc.b...),
					seq.FloatTensor(dtypes.Float64, cv, outDims...))
				return append(append(seq.Floats(out[0]), seq.Floats(out[1])...), seq.Floats(out[2])...)
			}
			got, want := run(true), run(false)
			for i := range want {
				if math.Abs(got[i]-want[i]) > 1e-12 {
					t.Fatalf("value or gradient entry %d: Product gives %g, DotGeneral %g", i, got[i], want[i])
				}
			}
			// ∂L/∂b by central differences, L linear in b: exact up to rounding.
			lossAt := func(b []float64) float64 {
				out := MustExecOnceN(backend.MustNew(), func(a, b, c *Node) *Node { return loss(a, b, c, true) },
					seq.FloatTensor(dtypes.Float64, av, tc.a...), seq.FloatTensor(dtypes.Float64, b, tc.b...),
					seq.FloatTensor(dtypes.Float64, cv, outDims...))
				return seq.Floats(out[0])[0]
			}
			gb := got[1+len(av):]
			for _, i := range []int{0, len(bv) / 2, len(bv) - 1} {
				plus, minus := append([]float64(nil), bv...), append([]float64(nil), bv...)
				plus[i] += 1e-4
				minus[i] -= 1e-4
				if fd := (lossAt(plus) - lossAt(minus)) / 2e-4; math.Abs(fd-gb[i]) > 1e-8 {
					t.Errorf("∂L/∂b[%d] = %g, finite differences %g", i, gb[i], fd)
				}
			}
		})
	}
}

// TestProductBadAxes checks that Product names the shapes it cannot contract: a's middle axis,
// a vector a, a vector b.
func TestProductBadAxes(t *testing.T) {
	for _, tc := range []struct {
		a  []int
		ca int
		b  []int
		cb int
	}{{[]int{2, 3, 4}, 1, []int{3, 2}, 0}, {[]int{3}, 0, []int{3, 2}, 0}, {[]int{2, 3}, 1, []int{3}, 0}} {
		func() {
			defer func() {
				want := fmt.Sprintf("contracting axis %d of", tc.ca)
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), want) {
					t.Errorf("Product(%v, %d, %v, %d): got %v, want an error naming the axes", tc.a, tc.ca, tc.b, tc.cb, r)
				}
			}()
			size := func(d []int) int {
				n := 1
				for _, x := range d {
					n *= x
				}
				return n
			}
			MustExecOnceN(backend.MustNew(), func(a, b *Node) *Node { return rnn.Product(a, tc.ca, b, tc.cb) },
				seq.FloatTensor(dtypes.Float64, make([]float64, size(tc.a)), tc.a...),
				seq.FloatTensor(dtypes.Float64, make([]float64, size(tc.b)), tc.b...))
		}()
	}
}
