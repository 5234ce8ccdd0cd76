package tasks

import (
	"fmt"
	"math/rand/v2"

	"github.com/gomlx/gomlx/core/tensors"
)

// Limits that keep every allocation bounded, so that Validate and Sample return an error instead of
// overflowing an int or running out of memory.
const (
	// MaxSteps bounds T and S of the synthetic tasks.
	MaxSteps = 1 << 24
	// MaxSymbols bounds the copy tasks' alphabet size K.
	MaxSymbols = 1 << 16
	// MaxElements bounds Size·Len·NumIn of one Batch (2^28 float32 inputs = 1 GiB).
	MaxElements = 1 << 28
)

// Task is implemented by every task of the package.
//
// For a configuration that fails Validate, SeqLen, NumInputs and NumOutputs are meaningless and
// Baseline returns NaN; Sample calls Validate first and returns its error.
type Task interface {
	// Validate returns an error naming the first bad parameter and its valid range, or nil.
	Validate() error
	// SeqLen is the number of time steps L of every sequence.
	SeqLen() int
	// NumInputs is the input width per step (number of one-hot classes, or channels).
	NumInputs() int
	// NumOutputs is the number of target classes, or 1 for regression.
	NumOutputs() int
	// Baseline is the loss of the best memoryless predictor, in the units of the task's loss
	// (mean cross-entropy in nats over the masked steps, or MSE).
	Baseline() float64
	// Sample draws a batch of the given size from rng; the same rng state gives the same batch.
	Sample(rng *rand.Rand, batch int) (*Batch, error)
	// String describes the task and its parameters, e.g. "Copy(T=100, K=8, S=10)".
	String() string
}

// Batch is a minibatch as plain row-major slices. Exactly one of Labels (classification) and
// Y (regression) is non-nil.
//
//	X      [Size][Len][NumIn] float32   inputs: one-hot (copy), (value, marker) (adding), pixel (MNIST)
//	Labels [Size][Len] int32            class per step in 0..NumClasses-1 (0 where Mask is 0)
//	Y      [Size] float32               regression target, compared with the output at the last step
//	Mask   [Size][Len] float32          1 where the loss applies, else 0
//
// The loss of a batch is Σ Mask·loss / Σ Mask: the mean over all steps for the copy tasks and the
// last step for adding and MNIST.
type Batch struct {
	Size, Len, NumIn int
	X                []float32
	Labels           []int32
	NumClasses       int
	Y                []float32
	Mask             []float32
}

// At returns input channel k of sample i at step t, X[i][t][k]. It panics if an index is out of range.
func (b *Batch) At(i, t, k int) float32 {
	b.checkIndex(i, t)
	if k < 0 || k >= b.NumIn {
		panic(fmt.Sprintf("tasks: Batch.At k = %d, want 0..%d", k, b.NumIn-1))
	}
	return b.X[(i*b.Len+t)*b.NumIn+k]
}

// Label returns the target class of sample i at step t. It panics if an index is out of range or
// the batch is a regression batch.
func (b *Batch) Label(i, t int) int32 {
	b.checkIndex(i, t)
	return b.Labels[i*b.Len+t]
}

// MaskAt returns the loss weight of sample i at step t. It panics if an index is out of range.
func (b *Batch) MaskAt(i, t int) float32 {
	b.checkIndex(i, t)
	return b.Mask[i*b.Len+t]
}

// Series returns channel k of sample i over time, a fresh slice of length Len (e.g. the adding
// markers: Series(i, 1)). It panics if an index is out of range.
func (b *Batch) Series(i, k int) []float32 {
	out := make([]float32, b.Len)
	for t := range out {
		out[t] = b.At(i, t, k)
	}
	return out
}

// Symbols returns the input class of sample i at every step, argmax over the one-hot channels
// (for the copy tasks: 0 blank, 1..K data, K+1 marker). It panics if i is out of range.
func (b *Batch) Symbols(i int) []int32 {
	out := make([]int32, b.Len)
	for t := range out {
		best := 0
		for k := 1; k < b.NumIn; k++ {
			if b.At(i, t, k) > b.At(i, t, best) {
				best = k
			}
		}
		out[t] = int32(best)
	}
	return out
}

func (b *Batch) checkIndex(i, t int) {
	if i < 0 || i >= b.Size || t < 0 || t >= b.Len {
		panic(fmt.Sprintf("tasks: Batch index (i=%d, t=%d) out of range [0,%d)×[0,%d)", i, t, b.Size, b.Len))
	}
}

// Check returns an error if the slice lengths disagree with Size, Len and NumIn, or if a label is
// outside 0..NumClasses-1. Batches from Sample always pass.
func (b *Batch) Check() error {
	if b.Size < 1 || b.Len < 1 || b.NumIn < 1 {
		return fmt.Errorf("tasks: Batch (Size, Len, NumIn) = (%d, %d, %d), want all >= 1", b.Size, b.Len, b.NumIn)
	}
	if b.Size > MaxElements/b.Len/b.NumIn {
		return fmt.Errorf("tasks: Batch Size·Len·NumIn = %d·%d·%d, want <= MaxElements = %d", b.Size, b.Len, b.NumIn, MaxElements)
	}
	steps := b.Size * b.Len
	if len(b.X) != steps*b.NumIn {
		return fmt.Errorf("tasks: Batch len(X) = %d, want Size·Len·NumIn = %d", len(b.X), steps*b.NumIn)
	}
	if len(b.Mask) != steps {
		return fmt.Errorf("tasks: Batch len(Mask) = %d, want Size·Len = %d", len(b.Mask), steps)
	}
	switch {
	case (b.Labels == nil) == (b.Y == nil):
		return fmt.Errorf("tasks: Batch has Labels nil = %v and Y nil = %v, want exactly one set", b.Labels == nil, b.Y == nil)
	case b.Y != nil && len(b.Y) != b.Size:
		return fmt.Errorf("tasks: Batch len(Y) = %d, want Size = %d", len(b.Y), b.Size)
	case b.Labels != nil && len(b.Labels) != steps:
		return fmt.Errorf("tasks: Batch len(Labels) = %d, want Size·Len = %d", len(b.Labels), steps)
	}
	for j, c := range b.Labels {
		if c < 0 || int(c) >= b.NumClasses {
			return fmt.Errorf("tasks: Batch Labels[%d] = %d, want 0..NumClasses-1 = 0..%d", j, c, b.NumClasses-1)
		}
	}
	return nil
}

// Tensors converts the batch to GoMLX tensors (copies):
//
//	x       [Size, Len, NumIn] float32
//	targets [Size, Len] int32 (classification) or [Size, 1] float32 (regression)
//	mask    [Size, Len] float32
//
// It panics if the slice lengths disagree with the sizes (see Check); batches from Sample never do.
func (b *Batch) Tensors() (x, targets, mask *tensors.Tensor) {
	x = tensors.FromFlatDataAndDimensions(b.X, b.Size, b.Len, b.NumIn)
	if b.Labels != nil {
		targets = tensors.FromFlatDataAndDimensions(b.Labels, b.Size, b.Len)
	} else {
		targets = tensors.FromFlatDataAndDimensions(b.Y, b.Size, 1)
	}
	mask = tensors.FromFlatDataAndDimensions(b.Mask, b.Size, b.Len)
	return x, targets, mask
}

// Rows returns sequences i … j−1 of b as a batch of their own, sharing b's slices (no copy).
// It panics unless 0 ≤ i < j ≤ b.Size.
func (b *Batch) Rows(i, j int) *Batch {
	if i < 0 || j <= i || j > b.Size {
		panic(fmt.Sprintf("tasks: Batch.Rows(%d, %d), want 0 <= i < j <= Size = %d", i, j, b.Size))
	}
	steps := b.Len
	r := &Batch{Size: j - i, Len: b.Len, NumIn: b.NumIn, NumClasses: b.NumClasses,
		X: b.X[i*steps*b.NumIn : j*steps*b.NumIn], Mask: b.Mask[i*steps : j*steps]}
	if b.Labels != nil {
		r.Labels = b.Labels[i*steps : j*steps]
	}
	if b.Y != nil {
		r.Y = b.Y[i:j]
	}
	return r
}

// checkRNG returns an error if the rng passed to name.Sample is nil.
func checkRNG(name string, rng *rand.Rand) error {
	if rng == nil {
		return fmt.Errorf("tasks: %s.Sample rng is nil, want a *rand.Rand (e.g. rand.New(rand.NewPCG(seed, 0)))", name)
	}
	return nil
}

// newBatch checks the batch size asked of task name and allocates a zeroed batch: Labels when
// numClasses > 0, Y otherwise.
func newBatch(name string, size, seqLen, numIn, numClasses int) (*Batch, error) {
	if size < 1 {
		return nil, fmt.Errorf("tasks: %s.Sample batch = %d, want >= 1", name, size)
	}
	if size > MaxElements/seqLen/numIn {
		return nil, fmt.Errorf("tasks: %s.Sample batch = %d, want <= %d (batch·%d steps·%d inputs <= MaxElements = %d)",
			name, size, MaxElements/seqLen/numIn, seqLen, numIn, MaxElements)
	}
	b := &Batch{
		Size: size, Len: seqLen, NumIn: numIn, NumClasses: numClasses,
		X:    make([]float32, size*seqLen*numIn),
		Mask: make([]float32, size*seqLen),
	}
	if numClasses > 0 {
		b.Labels = make([]int32, size*seqLen)
	} else {
		b.Y = make([]float32, size)
	}
	return b, nil
}
