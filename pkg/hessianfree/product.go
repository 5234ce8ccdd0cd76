package hessianfree

import (
	"fmt"

	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/seq"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// Curvature computes the products of HF's curvature matrices with a vector of parameters, for
// a cell on one batch: the Gauss–Newton matrix G = J_Fᵀ H_L J_F of the loss ℒ(θ) = L(F(θ))
// (F the outputs of every step, [B, T, Out]; H_L = ∂²L/∂F², which is positive semidefinite
// for seq.SequenceLoss's squared error and softmax cross-entropy; Galvan §2.2.2 eq. 2.23) and
// structural damping's S = J_hᵀ J_h / norm (h the states of every step, [B, T, State]; norm
// = Σ mask, SequenceLoss's), the Gauss–Newton matrix of the distance
// D(θ') = ½ Σ_{b,t} ‖h_{bt}(θ') − h_{bt}(θ)‖² / norm (Martens & Sutskever 2011;
// Galvan eq. 2.27). Each product is three differentiations of one whole-sequence graph (the
// package doc): no matrix is formed.
//
// Vectors are the trainable variables Vars flattened and concatenated (row-major, in Vars'
// order), in float64; the products are computed in the cell's dtype at the variables'
// current values.
type Curvature struct {
	Vars []*model.Variable
	Cell rnn.Cell
	exec *model.Exec
	in   []any // the batch's x, targets, mask, norm and the zero cotangents u_F, u_h
}

// NewCurvature returns the curvature products of cell, whose variables vars (the trainable
// ones, in the order of the vectors) live under scope.
func NewCurvature(backend compute.Backend, scope *model.Scope, cell rnn.Cell, vars []*model.Variable) (*Curvature, error) {
	c := &Curvature{Vars: vars, Cell: cell}
	var err error
	// in = [x, targets, mask, norm, u_F, u_h, μ, v_1 … v_n] → [(G + μ S) v]_1 … n.
	c.exec, err = model.NewExec(backend, scope.Store(), func(_ *model.Scope, g *Graph, in []*Node) []*Node {
		rnn.LiveVariables(scope.Store(), g)
		x, targets, mask, norm, uF, uH, mu, v := in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7:]
		theta := make([]*Node, len(vars))
		for i, vr := range vars {
			theta[i] = vr.NodeValue(g)
		}
		step := cell.Build(scope, g)
		states := Stack(rnn.UnrollStates(step, x, step.Initial(x.Shape().Dim(0))), 1) // [B, T, State]
		outputs := step.Readout(states)                                               // [B, T, Out]
		// J_θᵀ u = ∇_θ (⟨F, u_F⟩ + ⟨h, u_h⟩), linear in u; its gradient with respect to u along
		// v is J v = (J_F v, J_h v).
		jt := Gradient(Add(ReduceAllSum(Mul(outputs, uF)), ReduceAllSum(Mul(states, uH))), theta...)
		along := ReduceAllSum(Mul(jt[0], v[0]))
		for i := 1; i < len(v); i++ {
			along = Add(along, ReduceAllSum(Mul(jt[i], v[i])))
		}
		jv := Gradient(along, uF, uH)
		jvF, jvH := StopGradient(jv[0]), StopGradient(jv[1])
		// H_L J_F v = ∇_F ⟨∇_F L, J_F v⟩.
		gradF := Gradient(seq.SequenceLoss(outputs, targets, mask, norm), outputs)[0]
		hjv := StopGradient(Gradient(ReduceAllSum(Mul(gradF, jvF)), outputs)[0])
		// J_Fᵀ (H_L J_F v) + μ J_hᵀ (J_h v) / norm.
		back := ReduceAllSum(Mul(outputs, hjv))
		back = Add(back, Mul(Div(mu, norm), ReduceAllSum(Mul(states, jvH))))
		return Gradient(back, theta...)
	})
	return c, err
}

// SetBatch makes b the batch of the products that follow.
func (c *Curvature) SetBatch(b *tasks.Batch) error {
	if err := b.Check(); err != nil {
		return err
	}
	if s := c.Cell.Sizes(); b.NumIn != s.In {
		return fmt.Errorf("hessianfree: batch has %d inputs per step, cell %T expects %d", b.NumIn, c.Cell, s.In)
	}
	dt, s := c.Cell.DType(), c.Cell.Sizes()
	x, targets, mask := seq.ChunkTensors(b, 0, b.Len, dt)
	norm := seq.Masked(b)
	if norm == 0 {
		return fmt.Errorf("hessianfree: batch has an all-zero mask: no loss")
	}
	c.in = []any{x, targets, mask, seq.FloatTensor(dt, []float64{norm}),
		seq.FloatTensor(dt, make([]float64, b.Size*b.Len*s.Out), b.Size, b.Len, s.Out),
		seq.FloatTensor(dt, make([]float64, b.Size*b.Len*s.State), b.Size, b.Len, s.State)}
	return nil
}

// Times returns (G + μ S) v on the batch of SetBatch.
func (c *Curvature) Times(v []float64, mu float64) ([]float64, error) {
	if c.in == nil {
		return nil, fmt.Errorf("hessianfree: Curvature.Times before SetBatch")
	}
	if n := Size(c.Vars); len(v) != n {
		return nil, fmt.Errorf("hessianfree: vector of %d values, the variables hold %d", len(v), n)
	}
	args := append(append([]any{}, c.in...), seq.FloatTensor(c.Cell.DType(), []float64{mu}))
	for _, t := range Tensors(c.Vars, v) {
		args = append(args, t)
	}
	out, err := c.exec.Call(args...)
	if err != nil {
		return nil, err
	}
	return Flatten(out), nil
}

// Size returns the number of values the variables hold.
func Size(vars []*model.Variable) int {
	n := 0
	for _, v := range vars {
		n += v.Shape().Size()
	}
	return n
}

// Flatten concatenates the values of tensors (float32 or float64) into one vector.
func Flatten(ts []*tensors.Tensor) []float64 {
	var out []float64
	for _, t := range ts {
		out = append(out, seq.Floats(t)...)
	}
	return out
}

// Values returns the current values of vars as one vector.
func Values(vars []*model.Variable) []float64 {
	ts := make([]*tensors.Tensor, len(vars))
	for i, v := range vars {
		ts[i] = v.MustValue()
	}
	return Flatten(ts)
}

// Tensors cuts vector v into tensors shaped and typed as vars.
func Tensors(vars []*model.Variable, v []float64) []*tensors.Tensor {
	out := make([]*tensors.Tensor, len(vars))
	for i, vr := range vars {
		n := vr.Shape().Size()
		out[i] = seq.FloatTensor(vr.DType(), v[:n], vr.Shape().Dimensions...)
		v = v[n:]
	}
	return out
}

// SetValues sets vars to the values of vector v.
func SetValues(vars []*model.Variable, v []float64) {
	for i, t := range Tensors(vars, v) {
		vars[i].MustSetValue(t)
	}
}
