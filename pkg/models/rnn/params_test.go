package rnn_test

import (
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// constrained is a cell with a matrix on a group: it counts fewer free parameters than it
// stores.
type constrained struct{ *rnn.Simple }

func (c constrained) FreeParams() int { return c.NumParams() - 10 }

// bare is a cell that does not count its parameters.
type bare struct{ rnn.Cell }

func TestParams(t *testing.T) {
	tanh := rnn.NewTanh(10, 80, 9) // 8089 parameters (Simple.NumParams)
	for _, tc := range []struct {
		name         string
		cell         rnn.Cell
		stored, free int
	}{
		{"every value free", tanh, 8089, 8089},
		{"fewer degrees of freedom", constrained{tanh}, 8089, 8079},
		{"no NumParams", bare{tanh}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if stored, free := rnn.Params(tc.cell); stored != tc.stored || free != tc.free {
				t.Errorf("Params = %d, %d; want %d, %d", stored, free, tc.stored, tc.free)
			}
		})
	}
}
