package gru_test

import (
	"fmt"

	"github.com/urnn-notebooks/longmemory/pkg/models/gru"
)

// GRUs at the sizes of the uRNN paper's LSTM baselines (§4): 40 units on copy, 128 on adding.
func ExampleCell_NumParams() {
	for _, c := range []*gru.Cell{gru.New(10, 40, 9), gru.New(2, 128, 1)} {
		fmt.Printf("In %2d, N %3d, Out %d: %d parameters\n", c.In, c.N, c.Out, c.NumParams())
	}
	// Output:
	// In 10, N  40, Out 9: 6529 parameters
	// In  2, N 128, Out 1: 50561 parameters
}
