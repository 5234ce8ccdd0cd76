package seq

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
