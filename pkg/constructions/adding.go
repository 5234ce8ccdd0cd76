package constructions

import (
	"fmt"
	"math/rand/v2"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/analysis"
	"github.com/urnn-notebooks/longmemory/pkg/models/lstm"
	"github.com/urnn-notebooks/longmemory/pkg/models/ltrnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// markerGain is the weight of the marker channel and minus the bias of the adding
// solution's ReLU unit (Henaff et al. 2016 §3.2.1: U = (1, 1000), b = −1000; docs/REFERENCES.md):
// ReLU(x + 1000·m − 1000) is x when the marker m is 1 and 0 when it is 0, for x ∈ [0, 1).
const markerGain = 1000

// AddingLTRNN returns the adding solution of Henaff et al. §3.2.1 as an LT-RNN with
// σ = ReLU and one hidden unit:
//
//	h_t = 1 · h_{t−1} + ReLU(x_t + 1000·m_t − 1000),   y_t = 1 · h_t,   h_0 = 0
//
// (U = (1, 1000) on (value, marker), b = −1000, V = 1, W = 1), so h_T = x_i + x_j exactly,
// for any T. It runs in Float64: in float32, 1000 + x is rounded to a multiple of 2⁻¹⁴
// (6.1e-5), which alone gives an MSE of about 1e-9. Init(scope, nil) stores the weights.
func AddingLTRNN() (*ltrnn.Cell, error) {
	cell, err := ltrnn.FromWeights(ltrnn.ReLU, ltrnn.Weights{
		U: []float64{1, markerGain}, B: []float64{-markerGain}, V: []float64{1}, W: []float64{1},
	})
	if err != nil {
		return nil, err
	}
	cell.Type = dtypes.Float64
	return cell, nil
}

// Constants of the LSTM form of the adding solution.
const (
	// gateGain saturates the sigmoid gates: σ(±500) is 1 or 0 to within e^{−500}, which
	// rounds to exactly 1 and 0 (well below 1e-200) in float64.
	gateGain = 500.0
	// smallSignal is a, the scale at which the tanh of the candidate and of the cell are
	// used in their linear range: tanh(u) = u − u³/3 + …, so the readout tanh(c)/a is
	// x_i + x_j to within a²(x_i³ + x_j³ + (x_i+x_j)³)/3 ≤ 3.4·a² = 3.4e-8 (MSE ≤ 1.1e-15).
	smallSignal = 1e-4
)

// AddingLSTMCell is the adding solution written as an LSTM (Henaff et al. §3.2.1: "it
// can be seen as a very simple LSTM model"): an lstm.Cell with one unit and hand-set
// weights (gate order of package lstm; all recurrent weights W and the peephole zero):
//
//	i_t = σ(1000·m_t − 500)     input gate, driven by the marker: 1 on a marked step, 0 else
//	f_t = σ(500) = 1            forget gate: never forget
//	o_t = σ(500) = 1            output gate: always read
//	g_t = tanh(a·x_t)           candidate: the value, scaled by a = 1e-4
//	c_t = c_{t−1} + i_t g_t,    h_t = o_t tanh(c_t),    y_t = h_t / a
//
// so c_T = tanh(a x_i) + tanh(a x_j) and y_T = tanh(c_T)/a = x_i + x_j − O(a²). The
// package's LSTM has tanh on g and c (Henaff's version uses none), so the scale a keeps
// both in their linear range; the error is at most 3.4e-8 (see smallSignal). Init
// creates the variables with lstm.Cell.Init and overwrites them (rng is not used).
type AddingLSTMCell struct {
	lstm.Cell
}

// AddingLSTM returns the LSTM form of the adding solution in Float64.
func AddingLSTM() *AddingLSTMCell {
	return &AddingLSTMCell{lstm.Cell{In: 2, N: 1, Out: 1, Type: dtypes.Float64}}
}

// Init implements rnn.Cell: it creates lstm.Cell's variables (names and shapes of the
// lstm package doc) with the values of the type doc; rng is not used.
func (c *AddingLSTMCell) Init(scope *model.Scope, _ *rand.Rand) error {
	if c.In != 2 || c.N != 1 || c.Out != 1 || c.Peephole {
		return fmt.Errorf("constructions: AddingLSTMCell (In, N, Out, Peephole) = (%d, %d, %d, %v), want (2, 1, 1, false)", c.In, c.N, c.Out, c.Peephole)
	}
	v := make([]float64, 4*2) // [4 gates, In 2, N 1]: (value, marker) weights per gate
	v[lstm.GateI*2+1] = 2 * gateGain
	v[lstm.GateG*2+0] = smallSignal
	b := make([]float64, 4) // [4, N 1]
	b[lstm.GateI], b[lstm.GateF], b[lstm.GateO] = -gateGain, gateGain, gateGain
	return rnn.CreateVariables(scope, c.DType(), []rnn.Var{
		{Name: "V", Dims: []int{4, 2, 1}, Values: v}, {Name: "W", Dims: []int{4, 1, 1}, Values: make([]float64, 4)},
		{Name: "b", Dims: []int{4, 1}, Values: b}, {Name: "U", Dims: []int{1, 1}, Values: []float64{1 / smallSignal}},
		{Name: "bo", Dims: []int{1}, Values: []float64{0}},
		{Name: "h0", Dims: []int{1}, Values: []float64{0}}, {Name: "c0", Dims: []int{1}, Values: []float64{0}},
	})
}

// AddingMSE initialises cell in a fresh store (Init with an rng seeded by seed), draws
// `batch` sequences of tasks.Adding{T} from seed and returns the mean squared error of
// the output at the last step against x_i + x_j, running the graph in chunks of chunk
// steps (analysis.Run; 0: one graph). The target is the exact float64 sum of the two
// marked inputs (tasks.Batch.Y holds it rounded to float32, an error up to 1.2e-7 that
// would hide the construction's own).
func AddingMSE(backend compute.Backend, cell rnn.Cell, T, batch int, seed uint64, chunk int) (float64, error) {
	task := tasks.Adding{T: T}
	b, err := task.Sample(rand.New(rand.NewPCG(seed, saltSequences)), batch)
	if err != nil {
		return 0, err
	}
	scope := model.NewStore().RootScope()
	if err := cell.Init(scope, rand.New(rand.NewPCG(seed, 0))); err != nil {
		return 0, err
	}
	tr, err := analysis.Run(backend, scope, cell, b, analysis.RunOptions{Chunk: chunk})
	if err != nil {
		return 0, err
	}
	mse := 0.0
	for i := range b.Size {
		want := 0.0
		for t := range b.Len {
			if b.At(i, t, 1) == 1 {
				want += float64(b.At(i, t, 0))
			}
		}
		d := tr.Output(i, b.Len-1)[0] - want
		mse += d * d / float64(b.Size)
	}
	return mse, nil
}
