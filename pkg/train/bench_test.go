package train

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
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

// BenchmarkReplicaLayouts times one forward and backward pass of the recurrence of 8 tanh RNNs
// 80 (copy T = 100, batch 20 each; h_t = tanh(h_{t−1} W + x_t V), gradients of W and V) laid out
// five ways, to decide how train -seeds runs its replicas (issue "Speed" §2):
//
//   - InTurn: one replica's graph (2-D products), executed 8 times in turn;
//   - AtOnce: that graph, 8 executables run by 8 goroutines at once (what -seeds does);
//   - Axis: one graph with a leading replica axis on states and weights (batched DotGeneral);
//   - Subgraphs: one graph holding the 8 replicas' recurrences side by side (2-D products);
//   - Batch160: one replica at batch 160, the bound for fewer, larger ops (not 8 models).
//
// Measured (`go test -bench ReplicaLayouts -benchtime 20x ./pkg/train`, 2 cores, GoMLX v0.28.15,
// compute v0.1.13, nothing else running, two runs), per pass of all 8: InTurn 29.2–29.5 ms,
// AtOnce 17.9–18.9 ms (0.61–0.64×), Axis 33.7–35.0 ms (1.15–1.19×: the Go backend's batched
// DotGeneral and its gradients are slower than 8 two-dimensional ones), Subgraphs 20.2–22.9 ms
// (0.69–0.78×), Batch160 16.3–17.1 ms (0.55–0.58×). A replica axis does not pay on this backend,
// and side-by-side replicas in one graph gain less than replicas trained at once.
func BenchmarkReplicaLayouts(b *testing.B) {
	const R, B, T, N, In = 8, 20, 100, 80, 10
	f32 := func(dims ...int) *tensors.Tensor {
		return tensors.FromShape(shapes.Make(dtypes.Float32, dims...))
	}
	// recurrence returns the sum of h_T of one replica: x [B, T, In], wT = Wᵀ [N, N], v [In, N].
	recurrence := func(x, wT, v *Node) *Node {
		h := Zeros(x.Graph(), shapes.Make(x.DType(), B, N))
		for t := range T {
			h = Tanh(Add(rnn.Times(h, wT), MatMul(Squeeze(SliceAxis(x, 1, AxisElem(t)), 1), v)))
		}
		return ReduceAllSum(h)
	}
	replica := func(n *Node, r int) *Node { return Squeeze(SliceAxis(n, 0, AxisElem(r)), 0) }
	layouts := []struct {
		name    string
		batch   int // per replica
		r, runs int // replicas in the graph, executions per pass
		fn      func(x, wT, v *Node) []*Node
	}{
		{"InTurn", B, 1, R, func(x, wT, v *Node) []*Node {
			return Gradient(recurrence(replica(x, 0), replica(wT, 0), replica(v, 0)), wT, v)
		}},
		{"Axis", B, R, 1, func(x, wT, v *Node) []*Node {
			h := Zeros(x.Graph(), shapes.Make(x.DType(), R, B, N))
			for t := range T {
				px := DotGeneral(Squeeze(SliceAxis(x, 2, AxisElem(t)), 2), []int{2}, []int{0}, v, []int{1}, []int{0})
				h = Tanh(Add(DotGeneral(h, []int{2}, []int{0}, wT, []int{2}, []int{0}), px))
			}
			return Gradient(ReduceAllSum(h), wT, v)
		}},
		{"Subgraphs", B, R, 1, func(x, wT, v *Node) []*Node {
			sum := ScalarZero(x.Graph(), x.DType())
			for r := range R {
				sum = Add(sum, recurrence(replica(x, r), replica(wT, r), replica(v, r)))
			}
			return Gradient(sum, wT, v)
		}},
		{"Batch160", R * B, 1, 1, func(x, wT, v *Node) []*Node {
			h := Zeros(x.Graph(), shapes.Make(x.DType(), R*B, N))
			x0, wT0, v0 := replica(x, 0), replica(wT, 0), replica(v, 0)
			for t := range T {
				h = Tanh(Add(rnn.Times(h, wT0), MatMul(Squeeze(SliceAxis(x0, 1, AxisElem(t)), 1), v0)))
			}
			return Gradient(ReduceAllSum(h), wT, v)
		}},
	}
	for _, l := range layouts {
		b.Run(l.name, func(b *testing.B) {
			exec := MustNewExec(backend.MustNew(), l.fn)
			x, wT, v := f32(l.r, l.batch, T, In), f32(l.r, N, N), f32(l.r, In, N)
			exec.MustExec(x, wT, v) // compile
			b.ResetTimer()
			for range b.N {
				for range l.runs {
					exec.MustExec(x, wT, v)
				}
			}
		})
	}
	b.Run("AtOnce", func(b *testing.B) { // InTurn's graph, 8 executables run by 8 goroutines at once
		be := backend.MustNew()
		x, wT, v := f32(1, B, T, In), f32(1, N, N), f32(1, In, N)
		execs := make([]*Exec, R)
		for r := range execs {
			execs[r] = MustNewExec(be, layouts[0].fn)
			execs[r].MustExec(x, wT, v)
		}
		b.ResetTimer()
		for range b.N {
			var wg sync.WaitGroup
			for _, e := range execs {
				wg.Go(func() { e.MustExec(x, wT, v) })
			}
			wg.Wait()
		}
	})
}
