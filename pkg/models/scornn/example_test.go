package scornn_test

import (
	"fmt"

	"github.com/urnn-notebooks/longmemory/pkg/models/scornn"
)

// The scoRNN at the uRNN paper's sizes (Arjovsky et al. §4: 128 units on copy, 512 on
// adding) and at the sizes of the scoRNN authors' copy (190) and adding (170) scripts.
// NumParams counts the trainable values (W: N²), FreeParams the model's degrees of freedom
// (A: N(N−1)/2).
func ExampleCell_NumParams() {
	for _, c := range []*scornn.Cell{scornn.New(10, 128, 9), scornn.New(2, 512, 1), scornn.New(10, 190, 9), scornn.New(2, 170, 1)} {
		fmt.Printf("In %2d, N %3d, Out %d, ρ %3d: %6d parameters, %6d degrees of freedom\n", c.In, c.N, c.Out, c.Rho(), c.NumParams(), c.FreeParams())
	}
	// Output:
	// In 10, N 128, Out 9, ρ  64:  18953 parameters,  10697 degrees of freedom
	// In  2, N 512, Out 1, ρ 256: 264193 parameters, 132865 degrees of freedom
	// In 10, N 190, Out 9, ρ  95:  39909 parameters,  21764 degrees of freedom
	// In  2, N 170, Out 1, ρ  85:  29581 parameters,  15046 degrees of freedom
}

// The scaled Cayley transform for N = 2: A = [[0, a], [−a, 0]] gives the rotation by
// 2·atan(a) (here a = −tan(π/8), a rotation by −π/4), and D = diag(1, −1) flips its
// second column.
func ExampleCayleyW() {
	a := -0.41421356237309503 // −tan(π/8)
	for _, d := range [][]float64{{1, 1}, {1, -1}} {
		w, err := scornn.CayleyW(2, []float64{0, a, -a, 0}, d)
		if err != nil {
			panic(err)
		}
		fmt.Printf("D = %v: W = %.4f\n", d, w)
	}
	// Output:
	// D = [1 1]: W = [0.7071 0.7071 -0.7071 0.7071]
	// D = [1 -1]: W = [0.7071 -0.7071 -0.7071 -0.7071]
}
