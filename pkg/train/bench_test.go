package train

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// BenchmarkGradientsTanh80 times Runner.Gradients (forward, chunked backward) of a tanh RNN
// 80 on the copy task T = 100, batch 20: `go test -bench Gradients -cpuprofile` shows where
// a training step's time goes.
func BenchmarkGradientsTanh80(b *testing.B) {
	store := model.NewStore()
	cell := rnn.NewTanh(10, 80, 9)
	if err := cell.Init(store.Scope(ModelScope), rand.New(rand.NewPCG(1, 1))); err != nil {
		b.Fatal(err)
	}
	r, err := NewRunner(backend.MustNew(), store, cell, 50)
	if err != nil {
		b.Fatal(err)
	}
	batch, err := tasks.Copy{T: 100}.Sample(rand.New(rand.NewPCG(1, 1)), 20)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := r.Gradients(batch); err != nil { // compile
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := r.Gradients(batch); err != nil {
			b.Fatal(err)
		}
	}
}
