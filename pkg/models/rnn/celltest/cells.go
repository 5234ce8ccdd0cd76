package celltest

import (
	"github.com/gomlx/compute/dtypes"

	"github.com/urnn-notebooks/longmemory/pkg/models/lstm"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
)

// Tanh64 returns a tanh RNN in float64, In → N → Out: a small cell for the suites and
// finite-difference checks of the models built from other cells (stacks, dropout,
// bidirectional and encoder–decoder RNNs).
func Tanh64(in, n, out int) *rnn.Simple {
	return &rnn.Simple{In: in, N: n, Out: out, Act: rnn.TanhAct, Type: dtypes.Float64}
}

// LSTM64 returns an LSTM in float64, In → N → Out, as Tanh64 a tanh RNN.
func LSTM64(in, n, out int) *lstm.Cell {
	c := lstm.New(in, n, out)
	c.Type = dtypes.Float64
	return c
}
