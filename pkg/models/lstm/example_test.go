package lstm_test

import (
	"fmt"

	"github.com/urnn-notebooks/longmemory/pkg/models/lstm"
)

// The LSTMs of the uRNN paper's experiments (§4): 40 units on copy, 128 on adding.
func ExampleCell_NumParams() {
	for _, c := range []*lstm.Cell{lstm.New(10, 40, 9), lstm.NewURNNCode(10, 40, 9), lstm.New(2, 128, 1), lstm.NewURNNCode(2, 128, 1)} {
		fmt.Printf("In %2d, N %3d, Out %d, Peephole %-5v: %d parameters\n", c.In, c.N, c.Out, c.Peephole, c.NumParams())
	}
	// Output:
	// In 10, N  40, Out 9, Peephole false: 8609 parameters
	// In 10, N  40, Out 9, Peephole true : 10209 parameters
	// In  2, N 128, Out 1, Peephole false: 67457 parameters
	// In  2, N 128, Out 1, Peephole true : 83841 parameters
}
