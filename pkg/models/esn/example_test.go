package esn_test

import (
	"fmt"

	"github.com/urnn-notebooks/longmemory/pkg/models/esn"
)

// A reservoir of 128 units at the uRNN paper's task sizes (§4): only the readout is trained.
func ExampleCell_NumParams() {
	for _, c := range []*esn.Cell{esn.New(10, 128, 9), esn.New(2, 128, 1)} {
		fmt.Printf("In %2d, N %d, Out %d: %d trainable parameters\n", c.In, c.N, c.Out, c.NumParams())
	}
	// Output:
	// In 10, N 128, Out 9: 1161 trainable parameters
	// In  2, N 128, Out 1: 129 trainable parameters
}
