package fcurnn_test

import (
	"fmt"

	"github.com/urnn-notebooks/longmemory/pkg/models/fcurnn"
)

// The full-capacity uRNN at the uRNN paper's sizes (Arjovsky et al. §4): 128 complex units
// on copy, 512 on adding. NumParams counts the stored values (Re W and Im W: 2N²),
// FreeParams the real dimension of the model (U(N) has dimension N²).
func ExampleCell_NumParams() {
	for _, c := range []*fcurnn.Cell{fcurnn.New(10, 128, 9), fcurnn.New(2, 512, 1)} {
		fmt.Printf("In %2d, N %3d, Out %d: %d parameters, %d degrees of freedom\n", c.In, c.N, c.Out, c.NumParams(), c.FreeParams())
	}
	// Output:
	// In 10, N 128, Out 9: 38025 parameters, 21641 degrees of freedom
	// In  2, N 512, Out 1: 528897 parameters, 266753 degrees of freedom
}

// One Cayley step (Update, the rnn.Constrained method the trainer calls after each
// optimiser step) from W = I with a gradient that asks for W[0][1] to fall and W[1][0] to
// rise: A = G W^H − W G^H = [[0, 2], [−2, 0]], and with λ = 0.1 W turns into the rotation
// by 2·atan(λ/2 · 2) ≈ 0.1993 rad, still unitary.
func ExampleCell_Update() {
	c := fcurnn.New(1, 2, 1)
	values := map[string][]float64{"Wre": {1, 0, 0, 1}, "Wim": {0, 0, 0, 0}}
	grads := map[string][]float64{"Wre": {0, 1, -1, 0}, "Wim": {0, 0, 0, 0}}
	w, err := c.Update(0.1, values, grads)
	if err != nil {
		panic(err)
	}
	fmt.Printf("Re W = %.4f\nIm W = %.4f\n", w["Wre"], w["Wim"])
	// Output:
	// Re W = [0.9802 -0.1980 0.1980 0.9802]
	// Im W = [0.0000 0.0000 0.0000 0.0000]
}
