package gfrnn_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/urnn-notebooks/longmemory/pkg/models/gfrnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn/celltest"
)

func TestCell(t *testing.T) {
	for _, layers := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d layers", layers), func(t *testing.T) {
			celltest.Test(t, celltest.Config{
				New:   func() rnn.Cell { return &gfrnn.Cell{In: 3, N: 4, Layers: layers, Out: 2, Type: dtypes.Float64} },
				Sizes: rnn.Sizes{In: 3, State: layers * 4, Out: 2},
				ParamCounts: []celltest.ParamCount{
					// Adding (In 2, Out 1), 3 layers of 32: the package doc's sum.
					{Name: "adding, 3 × 32", Cell: gfrnn.New(2, 32, 3, 1),
						Want: (2*32 + 32 + 3*32*32 + 2*3 + 3*32*3) + 2*(32*32+32+3*32*32+32*3+3*32*3) + 32 + 1},
				},
				Budget: celltest.GraphCost{Forward: 60, Training: 200},
				BadConfigs: []celltest.BadConfig{
					{Name: "zero layers", Cell: gfrnn.New(3, 4, 0, 2), Want: "gfrnn.Cell: Layers = 0"},
					{Name: "zero N", Cell: gfrnn.New(3, 0, 2, 2), Want: "gfrnn.Cell: N = 0"},
					{Name: "Int32", Cell: &gfrnn.Cell{In: 3, N: 4, Layers: 2, Out: 2, Type: dtypes.Int32}, Want: "Type = Int32"},
				},
				Mismatched: []celltest.BadConfig{
					{Name: "other N", Cell: &gfrnn.Cell{In: 3, N: 5, Layers: layers, Out: 2, Type: dtypes.Float64}, Want: "has shape"},
				},
				Step: step,
			})
		})
	}
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// step is the package doc's equations in plain Go, for one example: layer j from h^{j−1}_t
// (x for j = 1) and the previous states of every layer through the gates g^{i→j}.
func step(cell rnn.Cell, p map[string][]float64, h, x []float64) (next, y []float64) {
	c := cell.(*gfrnn.Cell)
	L, N := c.Layers, c.N
	below := x
	next = make([]float64, L*N)
	for j := range L {
		in := len(below)
		w, b, u := p[fmt.Sprintf("W%d", j+1)], p[fmt.Sprintf("b%d", j+1)], p[fmt.Sprintf("U%d", j+1)]
		wg, ug := p[fmt.Sprintf("wg%d", j+1)], p[fmt.Sprintf("ug%d", j+1)]
		gate := make([]float64, L)
		for i := range L {
			z := 0.0
			for k := range in {
				z += below[k] * wg[k*L+i]
			}
			for k := range L * N {
				z += h[k] * ug[k*L+i]
			}
			gate[i] = sigmoid(z)
		}
		out := make([]float64, N)
		for n := range N {
			z := b[n]
			for k := range in {
				z += below[k] * w[k*N+n]
			}
			for i := range L {
				for k := range N {
					z += gate[i] * h[i*N+k] * u[(i*N+k)*N+n]
				}
			}
			out[n] = math.Tanh(z)
		}
		copy(next[j*N:], out)
		below = out
	}
	y = make([]float64, c.Out)
	for o := range c.Out {
		y[o] = p["bo"][o]
		for k := range N {
			y[o] += below[k] * p["V"][k*c.Out+o]
		}
	}
	return next, y
}
