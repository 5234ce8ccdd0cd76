package exprnn_test

import (
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/exprnn"
)

// The expRNN at the uRNN paper's copy and adding sizes (§4: In 10, Out 9; In 2, Out 1), with
// 128 units, the 190 of the expRNN paper's copy experiment and the uRNN's 512 on adding.
func ExampleCell_NumParams() {
	for _, c := range []*exprnn.Cell{exprnn.New(10, 128, 9), exprnn.New(10, 190, 9), exprnn.New(2, 128, 1), exprnn.New(2, 512, 1)} {
		fmt.Printf("In %2d, N %3d, Out %d: %6d parameters, %6d of them in A\n", c.In, c.N, c.Out, c.NumParams(), exprnn.NumSkew(c.N))
	}
	// Output:
	// In 10, N 128, Out 9:  10697 parameters,   8128 of them in A
	// In 10, N 190, Out 9:  21764 parameters,  17955 of them in A
	// In  2, N 128, Out 1:   8641 parameters,   8128 of them in A
	// In  2, N 512, Out 1: 132865 parameters, 130816 of them in A
}

// The exponential of the 2×2 skew-symmetric matrix with upper entry θ is the rotation by θ.
func ExampleExpm() {
	theta := math.Pi / 3
	w := MustExecOnce(backend.MustNew(), func(g *Graph) *Node {
		return exprnn.Expm(exprnn.Skew(Const(g, []float64{theta}), 2))
	})
	fmt.Printf("%.6f\n", tensors.MustCopyFlatData[float64](w))
	fmt.Printf("cos θ = %.6f, sin θ = %.6f\n", math.Cos(theta), math.Sin(theta))
	// Output:
	// [0.500000 0.866025 -0.866025 0.500000]
	// cos θ = 0.500000, sin θ = 0.866025
}
