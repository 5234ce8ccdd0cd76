package lru

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/scan"
)

// Block is one layer of the deep LRU of [1] §3 and appendix A (the authors' SequenceLayer): a
// normalisation, the LRU, a gated linear unit and a skip connection, all of width H,
//
//	v_t = LayerNorm(e_t)                                      (over the H features, gain g, bias β)
//	x_t = λ ⊙ x_{t−1} + γ ⊙ (B v_t)                           (the LRU of the package doc)
//	y_t = Re(C x_t) + D ⊙ v_t
//	z_t = e_t + (y_t W_1 + b_1) ⊙ σ(y_t W_2 + b_2)
//
// with e_t the block's input u_t when In = H, else u_t E + b_e (the network's linear encoder,
// in its first block), and the output z_t when Out = H, else z_t W_o + b_o (its decoder, in the
// last block). A deep LRU is a stack of blocks (package stack: stack.New(b_1, …, b_L), b_1 with
// In the task's inputs, b_L with Out its outputs). Here the skip term D v_t is back: the state
// carries e_t beside x, [Re x | Im x | e], 2N + H floats, so that the readout sees it.
//
// [1] trains the network with AdamW and a smaller learning rate, without weight decay, for the
// recurrent parameters ν^log, θ^log and γ^log: RecurrentLR gives their rate as a multiple of
// the others' (rnn.LRScaled), and train.AdamW leaves the variables so scaled undecayed (its doc
// says why it is the project's own update and not GoMLX's optimizer.Adam). LayerNorm(e) =
// (e − mean e) / √(var e + ε) ⊙ g + β, ε = 1e-5 as in Flax's LayerNorm, which the authors'
// code uses.
//
// Initialisation: λ, γ, B and C as the Cell's (package doc, with H inputs and outputs), D ~
// N(0, 1) and g = 1, β = 0, b = 0 as in the authors' code; W_1, W_2, E and W_o Glorot-uniform.
//
// BatchNorm puts batch normalisation (Ioffe & Szegedy 2015) in LayerNorm's place: each feature
// k of e_t normalised by its mean μ_k and variance σ²_k over the batch and the time steps,
//
//	v_t = (e_t − μ) / √(σ² + ε) ⊙ g + β,
//
// the default normalisation of minimal-LRU (github.com/NicolasZucchet/minimal-LRU, lru/model.py,
// norm "batch"; [1] Figure 1 allows "batch/layer normalization"). While the block trains, μ and
// σ² (biased, as in Flax) are those of the training batch over all its steps, and the gradient
// flows through them; the training pass is the one with the cell's noise key on (rnn.Training).
// Elsewhere (held-out evaluation, analyses, a step-by-step graph) the frozen variables bn_mean
// and bn_var, μ̄ and σ̄², stand for them: the population's statistics under the current weights,
// which the trainer estimates before each evaluation as the mean of the statistics of a few
// training batches (train.Trainer.EstimateStatistics: "precise BN", Wu & Johnson 2021 §3), a pass
// with the noise key on moving them to m μ̄ + (1 − m) μ for the momentum m of rnn.MomentumKey. They
// are not the running averages over the training steps of minimal-LRU (Flax's, m = 0.99): those
// lag behind the weights, and the LRU's units near |λ| = 1 sum a lag in μ̄ over up to
// 1/(1 − |λ|) steps.
//
// Where LayerNorm, scale-invariant, maps u E at every unmarked step of the adding problem to the
// same vector, which units with λ near 1 sum into an offset of up to 1/(1 − |λ|) times it,
// BatchNorm removes each feature's mean over time and keeps the value's size.
//
// Recurrence puts another diagonal linear recurrence in the LRU's place, with the rest of the
// block unchanged: S4D's (package s4d: Ā = exp(Δ a), B̄ = (Ā − 1)/a · B, y = 2 Re(C x)), so
// that the deep LRU and a deep S4D differ in the recurrence alone.
//
// The block's Step is an rnn.Sequencer and an rnn.Filter: a chunk's states x by
// scan.DiagonalComplex beside e, and its outputs from them, so that a stack of blocks trains
// by whole-chunk operations, layer after layer (train.Config.Scan; package stack's Filter).
type Block struct {
	In, H, N, Out int
	// RMin, RMax, MaxPhase and NoGamma are the Cell's (0, false: the defaults).
	RMin, RMax, MaxPhase float64
	NoGamma              bool
	Type                 dtypes.DType // zero value: Float32
	// RecurrentLR trains ν^log, θ^log and γ^log (a Recurrence's RecurrentVars) at this
	// multiple of the learning rate (rnn.LRScaled; [1]: a smaller one, PaperRecurrentLR); 0
	// keeps one rate for all.
	RecurrentLR float64
	// Recurrence, when set, replaces the LRU: its sizes must be H inputs, N units and H
	// outputs, and RMin, RMax, MaxPhase and NoGamma, which are the LRU's, zero.
	Recurrence Recurrence
	// BatchNorm normalises e by batch statistics instead of LayerNorm (see above). Training
	// then needs the whole sequence in one graph computed by the block's scan
	// (rnn.BatchStatistics).
	BatchNorm bool
}

var _ rnn.BatchStatistics = (*Block)(nil)

// BatchStatistics implements rnn.BatchStatistics: a block with BatchNorm normalises by the
// statistics of the whole training batch.
func (b *Block) BatchStatistics() bool { return b.BatchNorm }

// Recurrence is a diagonal linear recurrence x_t = λ ⊙ x_{t−1} + u_t·P, y_t = x_t·R + b_o
// (rnn.NewDiagonal) as a block holds it: the LRU's Cell, or S4D's (package s4d).
type Recurrence interface {
	// Sizes are the inputs, the state [Re x | Im x] (2N) and the outputs.
	Sizes() rnn.Sizes
	// NumParams counts the trainable values of Vars.
	NumParams() int
	// Check returns an error naming an invalid field and its accepted range.
	Check() error
	// Vars lists the variables (rnn.Var; rng nil: shapes only), the readout bias "bo" last.
	Vars(rng *rand.Rand) []rnn.Var
	// Diagonal returns Re λ and Im λ [N], P [In, 2N] and R [2N, Out] from the variables v.
	Diagonal(v map[string]*Node) (lamRe, lamIm, in, readout *Node)
	// RecurrentVars names the variables of λ and of the input's gain, which Block.RecurrentLR
	// scales.
	RecurrentVars() []string
}

// PaperRecurrentLR is the rate of the recurrent parameters ν, θ, γ as a multiple of the base
// rate, 0.5: the default lr_factor ("ssm lr = lr_factor * lr_base") of minimal-LRU
// (github.com/NicolasZucchet/minimal-LRU, run_train.py), the public reproduction that follows
// [1]'s design choices, with its base rate 1e-3 and weight decay 0.05.
const PaperRecurrentLR = 0.5

var _ rnn.LRScaled = (*Block)(nil)

// LRScales implements rnn.LRScaled: ν^log, θ^log and γ^log (the Recurrence's
// RecurrentVars) at RecurrentLR, when set.
func (b *Block) LRScales() map[string]float64 {
	if b.RecurrentLR == 0 {
		return nil
	}
	out := map[string]float64{}
	for _, name := range b.core().RecurrentVars() {
		out[name] = b.RecurrentLR
	}
	return out
}

// layerNormEps is ε of LayerNorm (Flax's default, the authors' code's normalisation).
const layerNormEps = 1e-5

// core returns the recurrence inside the block: Recurrence, or the LRU as a Cell of H inputs
// and outputs.
func (b *Block) core() Recurrence {
	if b.Recurrence != nil {
		return b.Recurrence
	}
	return &Cell{In: b.H, N: b.N, Out: b.H, RMin: b.RMin, RMax: b.RMax, MaxPhase: b.MaxPhase, NoGamma: b.NoGamma, Type: b.Type}
}

// Sizes implements rnn.Cell: the state is [Re x | Im x | e], 2N + H floats.
func (b *Block) Sizes() rnn.Sizes { return rnn.Sizes{In: b.In, State: 2*b.N + b.H, Out: b.Out} }

// DType implements rnn.Cell.
func (b *Block) DType() dtypes.DType { return rnn.OrFloat32(b.Type) }

// NumParams returns the number of trainable parameters: the LRU's 3N (2N with NoGamma) + 4HN
// (the Recurrence's without its readout bias), D and the LayerNorm's gain and bias 3H, the
// gates 2H² + 2H, and In·H + H for the encoder when In ≠ H, H·Out + Out for the decoder when
// Out ≠ H.
func (b *Block) NumParams() int {
	n := b.core().NumParams() - b.H + 3*b.H + 2*b.H*b.H + 2*b.H
	if b.In != b.H {
		n += b.In*b.H + b.H
	}
	if b.Out != b.H {
		n += b.H*b.Out + b.Out
	}
	return n
}

// variables lists the block's variables (rnn.Var); with rng nil the values are left out.
func (b *Block) variables(rng *rand.Rand) []rnn.Var {
	vars := b.core().Vars(rng)
	lruVars := vars[:len(vars)-1] // the recurrence's without its output bias "bo"
	var out []rnn.Var
	if b.In != b.H {
		out = append(out,
			rnn.Var{Name: "E", Dims: []int{b.In, b.H}, Values: rnn.GlorotUniform(rng, b.In, b.H)},
			rnn.Var{Name: "be", Dims: []int{b.H}, Values: zeros(rng, b.H)})
	}
	ones := zeros(rng, b.H)
	for i := range ones {
		ones[i] = 1
	}
	out = append(out, rnn.Var{Name: "ln_g", Dims: []int{b.H}, Values: ones}, rnn.Var{Name: "ln_b", Dims: []int{b.H}, Values: zeros(rng, b.H)})
	if b.BatchNorm {
		out = append(out,
			rnn.Var{Name: "bn_mean", Dims: []int{b.H}, Values: zeros(rng, b.H), Frozen: true},
			rnn.Var{Name: "bn_var", Dims: []int{b.H}, Values: slices.Clone(ones), Frozen: true},
			rnn.NoiseVar(), rnn.MomentumVar())
	}
	out = append(out, lruVars...)
	out = append(out,
		rnn.Var{Name: "D", Dims: []int{b.H}, Values: rnn.Gaussian(rng, b.H, 1)},
		rnn.Var{Name: "W1", Dims: []int{b.H, b.H}, Values: rnn.GlorotUniform(rng, b.H, b.H)},
		rnn.Var{Name: "b1", Dims: []int{b.H}, Values: zeros(rng, b.H)},
		rnn.Var{Name: "W2", Dims: []int{b.H, b.H}, Values: rnn.GlorotUniform(rng, b.H, b.H)},
		rnn.Var{Name: "b2", Dims: []int{b.H}, Values: zeros(rng, b.H)})
	if b.Out != b.H {
		out = append(out,
			rnn.Var{Name: "Wo", Dims: []int{b.H, b.Out}, Values: rnn.GlorotUniform(rng, b.H, b.Out)},
			rnn.Var{Name: "bo", Dims: []int{b.Out}, Values: zeros(rng, b.Out)})
	}
	return out
}

// zeros returns n zeros, or nil when rng is nil (the shapes-only listing of variables).
func zeros(rng *rand.Rand, n int) []float64 {
	if rng == nil {
		return nil
	}
	return make([]float64, n)
}

// Init implements rnn.Cell. It returns an error naming the field when In, H, N or Out is < 1,
// or when the LRU's fields are out of range (Cell.Init's errors).
func (b *Block) Init(scope *model.Scope, rng *rand.Rand) error {
	if err := rnn.CheckSizes("lru.Block", "In", b.In, "H", b.H, "N", b.N, "Out", b.Out); err != nil {
		return err
	}
	if r := b.Recurrence; r != nil {
		if got, want := r.Sizes(), (rnn.Sizes{In: b.H, State: 2 * b.N, Out: b.H}); got != want {
			return fmt.Errorf("lru.Block: Recurrence has sizes %+v, want In = Out = H = %d and State = 2N = %d", got, b.H, 2*b.N)
		}
		if b.RMin != 0 || b.RMax != 0 || b.MaxPhase != 0 || b.NoGamma {
			return fmt.Errorf("lru.Block: RMin = %g, RMax = %g, MaxPhase = %g, NoGamma = %t with a Recurrence, want the LRU's fields zero (they do not apply to it)",
				b.RMin, b.RMax, b.MaxPhase, b.NoGamma)
		}
	}
	if err := b.core().Check(); err != nil {
		return fmt.Errorf("lru.Block: %w", err)
	}
	if r := b.RecurrentLR; !(r >= 0) || math.IsInf(r, 1) {
		return fmt.Errorf("lru.Block: RecurrentLR = %g, want a number > 0, or 0 for one learning rate", r)
	}
	return rnn.CreateVariables(scope, b.DType(), b.variables(rng))
}

// Build implements rnn.Cell. It panics if Init was not called or created variables of other
// shapes (a different configuration).
func (b *Block) Build(scope *model.Scope, g *Graph) rnn.Step {
	v := rnn.ReadVariables(scope, g, b.variables(nil), b)
	lr, li, in, readout := b.core().Diagonal(v)
	s := &blockStep{b: b, v: v, lr: lr, li: li, in: in, readout: readout, lru: rnn.NewDiagonal(lr, li, in, readout, ZerosLike(v["D"]))}
	if b.BatchNorm {
		s.scope = scope
		s.mean, s.variance = v["bn_mean"], v["bn_var"]
	}
	return s
}

type blockStep struct {
	b       *Block
	v       map[string]*Node
	lr, li  *Node             // λ's parts, [N] each
	in      *Node             // the input matrix P, [H, 2N] (the LRU's [γ ⊙ Re Bᵀ | γ ⊙ Im Bᵀ])
	readout *Node             // the readout R, [2N, H] (the LRU's [Re Cᵀ; −Im Cᵀ])
	lru     *rnn.DiagonalStep // its Next: the recurrence of x
	// With BatchNorm: the statistics norm uses, [H] each (the running averages, until
	// batchStats sets those of a whole chunk), and the scope of bn_mean and bn_var.
	mean, variance *Node
	scope          *model.Scope
}

var (
	_ rnn.Sequencer = (*blockStep)(nil)
	_ rnn.Filter    = (*blockStep)(nil)
)

// dense returns x·w + bias for x [..., K], w [K, M] and bias [M] (nil: none), as one matrix
// product of x's rows, [rows, K]·[K, M]: its gradient with respect to w then contracts the rows
// of two matrices, which the Go backend lays out with its fast 2-D transposes (a rank-3 x has its
// generic transpose).
func dense(x, w, bias *Node) *Node {
	dims := x.Shape().Dimensions
	k, m := dims[len(dims)-1], w.Shape().Dim(1)
	y := DotGeneral(Reshape(x, x.Shape().Size()/k, k), []int{1}, nil, w, []int{0}, nil)
	if bias != nil {
		y = Add(y, InsertAxes(bias, 0))
	}
	return Reshape(y, append(dims[:len(dims)-1:len(dims)-1], m)...)
}

// Initial returns [x_0 | e_0] = 0, [batch, 2N + H].
func (s *blockStep) Initial(batch int) *Node {
	return Zeros(s.v["D"].Graph(), shapes.Make(s.v["D"].DType(), batch, 2*s.b.N+s.b.H))
}

// encode returns e = u or u E + b_e, [..., H].
func (s *blockStep) encode(u *Node) *Node {
	if s.b.In == s.b.H {
		return u
	}
	return dense(u, s.v["E"], s.v["be"])
}

// norm returns LayerNorm(e) over the last axis, or with BatchNorm (e − μ)/√(σ² + ε) by the
// statistics s.mean and s.variance; then ⊙ g + β.
func (s *blockStep) norm(e *Node) *Node {
	r := e.Rank()
	var v *Node
	if s.b.BatchNorm {
		v = Div(Sub(e, ExpandLeftToRank(s.mean, r)), ExpandLeftToRank(Sqrt(AddScalar(s.variance, layerNormEps)), r))
	} else {
		mean := ReduceAndKeep(e, ReduceMean, -1)
		d := Sub(e, mean)
		v = Div(d, Sqrt(AddScalar(ReduceAndKeep(Square(d), ReduceMean, -1), layerNormEps)))
	}
	return Add(Mul(v, ExpandLeftToRank(s.v["ln_g"], r)), ExpandLeftToRank(s.v["ln_b"], r))
}

// batchStats, with BatchNorm, sets the statistics of norm from e [batch, T, H], a whole
// chunk: in a pass with the noise key on (rnn.Training) the mean and biased variance of each
// feature over the batch and the steps, and bn_mean and bn_var become m μ̄ + (1 − m) μ and
// m σ̄² + (1 − m) σ², m the rnn.MomentumKey variable (in the graph: the Exec writes them back;
// m = 1 keeps them); elsewhere it leaves bn_mean and bn_var in place. Without BatchNorm it does
// nothing.
func (s *blockStep) batchStats(e *Node) {
	if !s.b.BatchNorm {
		return
	}
	training := rnn.Training(s.v[rnn.NoiseKey])
	mean := ReduceMean(e, 0, 1)
	variance := ReduceMean(Square(Sub(e, ExpandLeftToRank(mean, 3))), 0, 1)
	for _, x := range []struct {
		name        string
		stat, store *Node
	}{{"bn_mean", mean, s.v["bn_mean"]}, {"bn_var", variance, s.v["bn_var"]}} {
		m := s.v[rnn.MomentumKey]
		avg := Add(Mul(StopGradient(x.store), m), Mul(StopGradient(x.stat), OneMinus(m)))
		s.scope.GetVariable(x.name).SetNodeValue(Where(training, avg, x.store))
	}
	s.mean, s.variance = Where(training, mean, s.v["bn_mean"]), Where(training, variance, s.v["bn_var"])
}

// drive returns γ ⊙ B v, the LRU's input, [..., 2N].
func (s *blockStep) drive(v *Node) *Node { return dense(v, s.in, nil) }

// Project returns [γ ⊙ B v | e] for every step of u, [..., 2N + H].
func (s *blockStep) Project(u *Node) *Node {
	e := s.encode(u)
	return Concatenate([]*Node{s.drive(s.norm(e)), e}, -1)
}

// split returns x and e of states [..., 2N + H].
func (s *blockStep) split(h *Node) (x, e *Node) {
	n := 2 * s.b.N
	return SliceAxis(h, -1, AxisRange(0, n)), SliceAxis(h, -1, AxisRange(n, n+s.b.H))
}

// Next returns [λ ⊙ x + γ ⊙ B v | e] from the state and Project's row.
func (s *blockStep) Next(h, px *Node) *Node {
	x, _ := s.split(h)
	p, e := s.split(px)
	return Concatenate([]*Node{s.lru.Next(x, p), e}, -1)
}

// states returns x_1 … x_T, [batch, T, 2N], by scan.DiagonalComplex, and e, [batch, T, H],
// for the inputs u [batch, T, In] from h0.
func (s *blockStep) states(h0, u *Node) (x, e *Node) {
	x0, _ := s.split(h0)
	e = s.encode(u)
	s.batchStats(e)
	return scan.DiagonalComplex(s.lr, s.li, s.drive(s.norm(e)), x0), e
}

// States implements rnn.Sequencer: [x_t | e_t] for the inputs u [batch, T, In] from h0.
func (s *blockStep) States(h0, u *Node) *Node {
	x, e := s.states(h0, u)
	return Concatenate([]*Node{x, e}, -1)
}

// Filter implements rnn.Filter: the outputs and the last state [x_T | e_T] for the inputs u
// [batch, T, In] from h0. The LRU's part of the outputs, Re(C x_t), is linear in the inputs
// LayerNorm(e_t) given x_0, so scan.DiagonalFilter computes it as a filter from them, without
// forming the states x_t, [batch, T, 2N]; the rest of the block acts on it step by step.
func (s *blockStep) Filter(h0, u *Node) (outputs, last *Node) {
	x0, _ := s.split(h0)
	e := s.encode(u)
	s.batchStats(e)
	v := s.norm(e)
	y, xT := scan.DiagonalFilter(s.lr, s.li, s.in, s.readout, v, x0)
	T := u.Shape().Dim(1)
	eT := Squeeze(SliceAxis(e, 1, AxisElem(T-1)), 1)
	return s.gate(y, v, e), Concatenate([]*Node{xT, eT}, -1)
}

// Readout returns z (or z W_o + b_o) for states [..., 2N + H]; with BatchNorm, by the
// statistics of the chunk whose States the graph computed, else by the running averages.
func (s *blockStep) Readout(states *Node) *Node {
	return s.output(s.split(states))
}

// output returns z (or z W_o + b_o) from x [..., 2N] and e [..., H].
func (s *blockStep) output(x, e *Node) *Node {
	return s.gate(dense(x, s.readout, nil), s.norm(e), e)
}

// gate returns z (or z W_o + b_o) from the LRU's readout Re(C x), [..., H], its input v =
// LayerNorm(e) and e, [..., H] each: y = Re(C x) + D ⊙ v, z = e + (y W_1 + b_1) ⊙ σ(y W_2 + b_2).
// The callers pass v they have computed (the graph does not merge equal subexpressions).
func (s *blockStep) gate(cx, v, e *Node) *Node {
	r := e.Rank()
	y := Add(cx, Mul(v, ExpandLeftToRank(s.v["D"], r)))
	z := Add(e, Mul(dense(y, s.v["W1"], s.v["b1"]), Sigmoid(dense(y, s.v["W2"], s.v["b2"]))))
	if s.b.Out == s.b.H {
		return z
	}
	return dense(z, s.v["Wo"], s.v["bo"])
}
