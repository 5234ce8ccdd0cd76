package ltrnn_test

import (
	"fmt"

	"github.com/urnn-notebooks/longmemory/pkg/models/ltrnn"
)

// The LT-RNNs of Henaff et al. §4: 80 units on copy, 128 on adding, with and without
// the l2-pooled decoder of §4.3.
func ExampleCell_NumParams() {
	for _, c := range []*ltrnn.Cell{
		ltrnn.NewORNN(10, 80, 9), {In: 10, N: 80, Out: 9, Pooling: true},
		ltrnn.NewIRNN(2, 128, 1), {In: 2, N: 128, Out: 1, Pooling: true},
	} {
		fmt.Printf("In %2d, N %3d, Out %d, Pooling %-5v: %d parameters\n", c.In, c.N, c.Out, c.Pooling, c.NumParams())
	}
	// Output:
	// In 10, N  80, Out 9, Pooling false: 8000 parameters
	// In 10, N  80, Out 9, Pooling true : 8360 parameters
	// In  2, N 128, Out 1, Pooling false: 16896 parameters
	// In  2, N 128, Out 1, Pooling true : 16960 parameters
}

// Henaff's adding solution (§3.2.1) as preset weights: one ReLU unit that adds the value
// channel while the marker is on.
func ExampleFromWeights() {
	cell, err := ltrnn.FromWeights(ltrnn.ReLU, ltrnn.Weights{
		U: []float64{1, 1000}, // [N = 1, In = 2]: (value, marker)
		V: []float64{1},
		W: []float64{1},
		B: []float64{-1000},
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("In %d, N %d, Out %d, Sigma %s, clipping off: %v\n", cell.In, cell.N, cell.Out, cell.Sigma, cell.ClipNorm == ltrnn.NoClip)
	// Output:
	// In 2, N 1, Out 1, Sigma ReLU, clipping off: true
}
