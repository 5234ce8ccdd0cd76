// Package seq runs a recurrent cell (rnn.Cell) over a batch of sequences one chunk of time
// steps at a time, forward carrying the state and backward carrying its adjoint, so that
// graph size and build time do not grow with the sequence length. It holds the chunk
// boundaries (Chunks), the inputs of one chunk (ChunkTensors), the sequence losses
// (SequenceLoss, Accuracy) and the one chunk walker (Walker) on which training (package
// train), the forward analysis (analysis.Run) and the measurement of ‖∂C/∂h_t‖
// (analysis.HiddenGradNorms) are built.
//
// Chunked exact BPTT: a sequence of length L is cut into chunks of C steps, chunk k covering
// steps [kC, min((k+1)C, L)). The forward pass runs one chunk graph per chunk from h_0 and
// keeps only the boundary states h_{kC}. The backward pass walks the chunks in reverse from
// ∂ℒ/∂h_L = 0; for chunk k it recomputes the chunk from h_{kC} and, given ∂ℒ/∂h_out =
// ∂ℒ/∂h_{(k+1)C} (held constant), differentiates
//
//	f_k(h_in, θ) = ℒ_k(h_in, θ) + ⟨h_out(h_in, θ), ∂ℒ/∂h_out⟩,
//
// ℒ_k the chunk's share of the loss, which gives
//
//	∂ℒ/∂h_{kC} = ∂f_k/∂h_in,   ∂ℒ/∂h_t = ∂f_k/∂h_t for every state h_t of chunk k,
//	∂ℒ/∂θ = Σ_k ∂f_k/∂θ + (∂h_0/∂θ)ᵀ ∂ℒ/∂h_0.
//
// This is the chain rule, so the gradients equal those of the fully unrolled graph (tested
// in packages train and analysis). The price is one extra forward pass per chunk (but the
// last, whose forward pass is left to its backward graph, which computes it anyway).
package seq

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// Chunks returns the [start, end) step ranges of a sequence of length L cut into chunks
// of c steps (c ≤ 0 or c ≥ L: one chunk).
func Chunks(L, c int) [][2]int {
	if c <= 0 || c > L {
		c = L
	}
	var out [][2]int
	for s := 0; s < L; s += c {
		out = append(out, [2]int{s, min(s+c, L)})
	}
	return out
}

// ChunkTensors returns the inputs x [B, C, NumIn], targets (int32 labels [B, C] or
// regression targets [B, 1]) and mask [B, C] of steps [start, end) of b, C = end − start,
// floats in dtype (Float32 or Float64).
func ChunkTensors(b *tasks.Batch, start, end int, dtype dtypes.DType) (x, targets, mask *tensors.Tensor) {
	C := end - start
	xs := make([]float64, 0, b.Size*C*b.NumIn)
	ms := make([]float64, 0, b.Size*C)
	var labels []int32
	for i := 0; i < b.Size; i++ {
		xs = append(xs, toF64(b.X[(i*b.Len+start)*b.NumIn:(i*b.Len+end)*b.NumIn])...)
		ms = append(ms, toF64(b.Mask[i*b.Len+start:i*b.Len+end])...)
		if b.Labels != nil {
			labels = append(labels, b.Labels[i*b.Len+start:i*b.Len+end]...)
		}
	}
	x = FloatTensor(dtype, xs, b.Size, C, b.NumIn)
	mask = FloatTensor(dtype, ms, b.Size, C)
	if b.Labels != nil {
		targets = tensors.FromFlatDataAndDimensions(labels, b.Size, C)
	} else {
		targets = FloatTensor(dtype, toF64(b.Y), b.Size, 1)
	}
	return
}

// LastStepTensors returns the targets and the mask of step end − 1 of b alone: int32 labels
// [B, 1] (or the regression targets [B, 1]) and mask [B, 1] in dtype. A chunk ending at end
// that reads out its last state only takes them (Walker.ReadLast).
func LastStepTensors(b *tasks.Batch, end int, dtype dtypes.DType) (targets, mask *tensors.Tensor) {
	_, targets, mask = ChunkTensors(b, end-1, end, dtype)
	return targets, mask
}

// LastStepOnly reports whether b's mask is zero at every step but the last (the adding
// problem, pixel MNIST): the batches whose chunks can read out their last state only.
func LastStepOnly(b *tasks.Batch) bool {
	for i := range b.Size {
		for _, m := range b.Mask[i*b.Len : (i+1)*b.Len-1] {
			if m != 0 {
				return false
			}
		}
	}
	return true
}

// Masked returns Σ b.Mask, the number of steps the loss of b applies to (the norm of
// SequenceLoss).
func Masked(b *tasks.Batch) float64 {
	s := 0.0
	for _, m := range b.Mask {
		s += float64(m)
	}
	return s
}

func toF64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, f := range v {
		out[i] = float64(f)
	}
	return out
}

// Floats returns the values of a Float32 or Float64 tensor as float64 (row-major).
func Floats(t *tensors.Tensor) []float64 {
	if t.DType() == dtypes.Float64 {
		return tensors.MustCopyFlatData[float64](t)
	}
	return toF64(tensors.MustCopyFlatData[float32](t))
}

// FloatTensor returns values shaped dims as a tensor of dtype: Float64, or else Float32.
func FloatTensor(dtype dtypes.DType, values []float64, dims ...int) *tensors.Tensor {
	if dtype == dtypes.Float64 {
		return tensors.FromFlatDataAndDimensions(values, dims...)
	}
	f := make([]float32, len(values))
	for i, x := range values {
		f[i] = float32(x)
	}
	return tensors.FromFlatDataAndDimensions(f, dims...)
}
