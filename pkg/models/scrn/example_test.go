package scrn_test

import (
	"fmt"

	"github.com/urnn-notebooks/longmemory/pkg/models/scrn"
)

// SCRNs at the uRNN paper's task sizes (§4): the hidden width of its tanh RNN (80 on copy,
// 128 on adding) and 40 context units, α = 0.95.
func ExampleCell_NumParams() {
	for _, c := range []*scrn.Cell{scrn.New(10, 80, 40, 9), scrn.New(2, 128, 40, 1)} {
		fmt.Printf("In %2d, N %3d, S %d, Out %d: %d parameters, state %d floats\n", c.In, c.N, c.S, c.Out, c.NumParams(), c.Sizes().State)
	}
	// Output:
	// In 10, N  80, S 40, Out 9: 11889 parameters, state 120 floats
	// In  2, N 128, S 40, Out 1: 22009 parameters, state 168 floats
}
