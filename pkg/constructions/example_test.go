package constructions_test

import (
	"fmt"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/constructions"
)

// The copy construction of Henaff et al. §3.1.1 with the paper's sizes, scored on 100
// sequences of tasks.Copy{T: 100, Symbols: 8, Recall: 10}.
func ExampleEvaluateCopyRandom() {
	r, err := constructions.EvaluateCopyRandom(8, 10, 100, 128, 100, 1, constructions.DefaultScale)
	if err != nil {
		panic(err)
	}
	fmt.Printf("recalled symbols right: %.1f%%, blank steps right: %.0f%%\n", 100*r.RecallAccuracy, 100*r.BlankAccuracy)
	// Output: recalled symbols right: 100.0%, blank steps right: 100%
}

// The one-unit ReLU solution of the adding problem (Henaff et al. §3.2.1) is exact at any T.
func ExampleAddingLTRNN() {
	cell, err := constructions.AddingLTRNN()
	if err != nil {
		panic(err)
	}
	mse, err := constructions.AddingMSE(backend.MustNew(), cell, 1000, 10, 1, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println("MSE below 1e-20:", mse < 1e-20)
	// Output: MSE below 1e-20: true
}
