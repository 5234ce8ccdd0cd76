package constructions_test

import (
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/constructions"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// TestAddingExact checks that both forms of the adding solution (Henaff et al. §3.2.1)
// are exact for any T: MSE < 1e-10 at T = 100 and T = 10000 (run in chunks of 1000 steps).
func TestAddingExact(t *testing.T) {
	lt, err := constructions.AddingLTRNN()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cell rnn.Cell
	}{{"LT-RNN", lt}, {"LSTM", constructions.AddingLSTM()}} {
		for _, T := range []int{100, 10000} {
			mse, err := constructions.AddingMSE(backend.MustNew(), tc.cell, T, 20, 1, 1000)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s, T = %d: MSE %.3g", tc.name, T, mse)
			if !(mse < 1e-10) {
				t.Errorf("%s, T = %d: MSE %.3g, want < 1e-10", tc.name, T, mse)
			}
		}
	}
	// The same weights in float32 lose the value in 1000 + x (see AddingLTRNN).
	lt32, _ := constructions.AddingLTRNN()
	lt32.Type = dtypes.Float32
	mse, err := constructions.AddingMSE(backend.MustNew(), lt32, 100, 200, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("LT-RNN in float32, T = 100: MSE %.3g", mse)
	if !(mse > 1e-12 && mse < 1e-8) {
		t.Errorf("LT-RNN in float32: MSE %.3g, want about 1e-9 (rounding of 1000 + x to 2⁻¹⁴)", mse)
	}
}
