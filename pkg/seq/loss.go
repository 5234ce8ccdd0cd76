// Package train trains the project's recurrent cells (rnn.Cell) on its tasks with the
// papers' settings: RMSProp (Arjovsky et al. §4; Henaff et al. §4), element-wise and
// global-norm gradient clipping, and exact backpropagation through time over fixed-size
// chunks of the sequence, so that graph size and build time do not grow with T.
//
// Chunked BPTT: the sequence of length L is cut into chunks of C steps. The forward pass
// runs one chunk graph per chunk and keeps only the boundary states h_{kC}. The backward
// pass walks the chunks in reverse; for chunk k it recomputes the chunk from h_{kC} and
// returns ∂ℒ/∂h_{kC} and the chunk's contribution to ∂ℒ/∂θ, given ∂ℒ/∂h_{(k+1)C}:
//
//	∂ℒ/∂h_in, ∂ℒ/∂θ |chunk = ∇_{h_in, θ} [ ℒ_chunk(h_in, θ) + ⟨h_out(h_in, θ), ∂ℒ/∂h_out⟩ ]
//
// which is the chain rule, so the gradients equal those of the fully unrolled graph
// (tested). The price is one extra forward pass per chunk.
package train

import (
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
)

// SequenceLoss is the masked loss of outputs [B, C, Out] against targets, divided by norm
// (the total mask of the whole sequence batch, so that chunk losses add up to the mean):
//
//	classification (targets int32 [B, C]):   ℒ = −Σ_{b,t} m_{bt} log softmax(o_{bt})[y_{bt}] / norm
//	regression     (targets float [B, 1]):   ℒ = Σ_{b,t} m_{bt} (o_{bt,0} − y_b)² / norm
//
// mask is [B, C]. Arjovsky et al. §4.1 average the cross-entropy over all T+20 steps of
// the copy task; §4.2 take the MSE at the last step of the adding problem (mask 1 there).
func SequenceLoss(outputs, targets, mask, norm *Node) *Node {
	var perStep *Node // [B, C]
	if targets.DType().IsInt() {
		logp := LogSoftmax(outputs, -1)
		oneHot := OneHot(targets, outputs.Shape().Dim(-1), outputs.DType())
		perStep = Neg(ReduceSum(Mul(logp, oneHot), -1))
	} else {
		o := Squeeze(SliceAxis(outputs, -1, AxisElem(0)), -1)
		d := Sub(o, BroadcastToShape(ConvertDType(targets, outputs.DType()), o.Shape()))
		perStep = Mul(d, d)
	}
	return Div(ReduceAllSum(Mul(perStep, ConvertDType(mask, outputs.DType()))), ConvertDType(norm, outputs.DType()))
}

// Accuracy returns the number of masked steps whose arg-max output equals the target
// (classification only) as a scalar of dtype.
func Accuracy(outputs, targets, mask *Node, dtype dtypes.DType) *Node {
	pred := ConvertDType(ArgMax(outputs, -1), targets.DType())
	right := ConvertDType(Equal(pred, targets), dtype)
	return ReduceAllSum(Mul(right, ConvertDType(mask, dtype)))
}
