package analysis

import (
	"fmt"
	"math"

	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// Activations are the hidden activations of one example over time, as in Henaff et al.
// 2016 §4.3, Figure 5 ("Activation patterns of pooling network"):
//
//	States[t]  h_{t+1}, the N hidden units after reading x_t
//	Pooled[t]  the l2 pooling of h_{t+1} with pool size and stride 2 (ltrnn.Pool):
//	           p_j = √(h_{2j}² + h_{2j+1}²), computed here without ltrnn.PoolEps
//	Markers    the steps whose marker channel (input channel 1 of the adding task) is on
type Activations struct {
	States, Pooled [][]float64
	Markers        []int
}

// PoolingActivations runs cell (variables under scope; an LT-RNN with pooling in the
// paper, but any cell with an even state size works) on example i of batch b and returns
// its Activations. Markers are read from input channel 1 when the batch has two input
// channels (the adding task's layout), and are empty otherwise.
func PoolingActivations(backend compute.Backend, scope *model.Scope, cell rnn.Cell, b *tasks.Batch, i int) (*Activations, error) {
	if i < 0 || i >= b.Size {
		return nil, fmt.Errorf("analysis: PoolingActivations: example %d, want 0..%d", i, b.Size-1)
	}
	if n := cell.Sizes().State; n%2 != 0 {
		return nil, fmt.Errorf("analysis: PoolingActivations: state size %d is odd, want even (pool size and stride 2)", n)
	}
	one := Example(b, i)
	tr, err := Run(backend, scope, cell, one, RunOptions{States: true})
	if err != nil {
		return nil, err
	}
	a := &Activations{}
	for t := range one.Len {
		h := append([]float64(nil), tr.StateAt(0, t)...)
		p := make([]float64, len(h)/2)
		for j := range p {
			p[j] = math.Hypot(h[2*j], h[2*j+1])
		}
		a.States = append(a.States, h)
		a.Pooled = append(a.Pooled, p)
		if one.NumIn == 2 && one.At(0, t, 1) > 0 {
			a.Markers = append(a.Markers, t)
		}
	}
	return a, nil
}

// Example returns example i of b as a batch of one (copies). It panics if i is out of range.
func Example(b *tasks.Batch, i int) *tasks.Batch {
	if i < 0 || i >= b.Size {
		panic(fmt.Sprintf("analysis: Example %d of a batch of %d", i, b.Size))
	}
	one := &tasks.Batch{Size: 1, Len: b.Len, NumIn: b.NumIn, NumClasses: b.NumClasses,
		X:    append([]float32(nil), b.X[i*b.Len*b.NumIn:(i+1)*b.Len*b.NumIn]...),
		Mask: append([]float32(nil), b.Mask[i*b.Len:(i+1)*b.Len]...),
	}
	if b.Labels != nil {
		one.Labels = append([]int32(nil), b.Labels[i*b.Len:(i+1)*b.Len]...)
	} else {
		one.Y = []float32{b.Y[i]}
	}
	return one
}

// MeanStateNorms returns the mean over the examples of ‖h_t‖ for each step, from
// Trajectory.StateNorms (index t is h_{t+1}).
func MeanStateNorms(tr *Trajectory) []float64 {
	out := make([]float64, tr.Len)
	for b := range tr.Batch {
		for t := range tr.Len {
			out[t] += tr.StateNorms[b*tr.Len+t] / float64(tr.Batch)
		}
	}
	return out
}
