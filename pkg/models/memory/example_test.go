package memory_test

import (
	"fmt"

	"github.com/urnn-notebooks/longmemory/pkg/models/memory"
)

// Barber's running memory over vectors of width 10: one gate row W_in and a scalar B_in.
func ExampleCell_NumParams() {
	c := memory.New(10)
	fmt.Printf("%+v: %d parameters, state %d floats\n", *c, c.NumParams(), c.Sizes().State)
	// Output:
	// {In:10 Type:InvalidDType}: 11 parameters, state 21 floats
}
