package seq2seq_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/models/bidir"
	"github.com/urnn-notebooks/longmemory/pkg/models/fcurnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/lstm"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn/celltest"
	"github.com/urnn-notebooks/longmemory/pkg/models/seq2seq"
)

// tanh and lstm64 are small float64 cells for the suite and the finite-difference checks.
var (
	tanh   = celltest.Tanh64
	lstm64 = celltest.LSTM64
)

// TestCell runs the shared cell suite on a tanh RNN encoder and an LSTM decoder. The suite's
// inputs are uniform in [−1, 1], the phase channel too: the step is then a blend of encoding
// and decoding, as smooth, which the gradient and chunking checks cover as well as the
// task's 0s and 1s (TestEquations checks those).
func TestCell(t *testing.T) {
	celltest.Test(t, celltest.Config{
		New:   func() rnn.Cell { return seq2seq.New(tanh(4, 3, 6), lstm64(4, 3, 2)) },
		Sizes: rnn.Sizes{In: 4, State: 3 + 6, Out: 2},
		ParamCounts: []celltest.ParamCount{
			// LSTM 64 both sides on Translate{N: 8} (14 inputs, 11 classes): the encoder's
			// readout maps its 64 units to the decoder's 128 state values.
			{Name: "LSTM 64 → LSTM 64, translate", Cell: seq2seq.New(lstm.New(14, 64, 128), lstm.New(14, 64, 11)),
				Want: lstm.New(14, 64, 128).NumParams() + lstm.New(14, 64, 11).NumParams()},
		},
		Budget: celltest.GraphCost{Forward: 55, Training: 170},
		BadConfigs: []celltest.BadConfig{
			{Name: "no decoder", Cell: &seq2seq.Cell{Encoder: tanh(4, 3, 6)}, Want: "decoder is nil"},
			{Name: "bridge", Cell: seq2seq.New(tanh(4, 3, 5), lstm64(4, 3, 2)), Want: "encoder has 5 outputs, decoder a state of 6"},
			{Name: "inputs", Cell: seq2seq.New(tanh(3, 3, 6), lstm64(4, 3, 2)), Want: "encoder has 3 inputs, decoder 4"},
			{Name: "no phase", Cell: seq2seq.New(tanh(1, 3, 3), tanh(1, 3, 2)), Want: "1 inputs, want >= 2"},
			{Name: "dtypes", Cell: seq2seq.New(tanh(4, 3, 6), lstm.New(4, 3, 2)), Want: "encoder is Float64, decoder Float32"},
			{Name: "bad cell", Cell: seq2seq.New(tanh(4, 0, 6), lstm64(4, 3, 2)), Want: "encoder: rnn.Simple: N = 0"},
			{Name: "constrained", Cell: seq2seq.New(&fcurnn.Cell{In: 4, N: 3, Out: 6, Type: dtypes.Float64}, lstm64(4, 3, 2)), Want: "rnn.Constrained"},
			{Name: "bidirectional", Cell: seq2seq.New(bidir.New(tanh(4, 3, 6), tanh(4, 3, 6)), lstm64(4, 3, 2)), Want: "rnn.WholeSequence"},
		},
		Mismatched: []celltest.BadConfig{
			{Name: "other width", Cell: seq2seq.New(tanh(4, 4, 6), lstm64(4, 3, 2)), Want: "has shape"},
		},
	})
}

// TestEquations: on a sequence whose phase is 0 for M steps and 1 after, the outputs of the
// target side are those of the encoder run alone over the source, its readout of h_M plus the
// decoder's h′_init as the decoder's first state, and the decoder run alone over the target
// side; changing a source input changes them, changing a later target input does not change
// an earlier output.
func TestEquations(t *testing.T) {
	const batch, M, N, in = 2, 4, 3, 4
	enc, dec := tanh(in, 3, 6), lstm64(in, 3, 2)
	cell := seq2seq.New(enc, dec)
	store := model.NewStore()
	scope := store.Scope("/s")
	if err := cell.Init(scope, rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Fatal(err)
	}
	rnn.RandomizeVariables(scope, rand.New(rand.NewPCG(3, 4)), -1, 1)
	x := rnn.Uniform(rand.New(rand.NewPCG(5, 6)), batch*(M+N)*in, -1, 1)
	for b := range batch {
		for s := range M + N {
			x[(b*(M+N)+s)*in+in-1] = map[bool]float64{true: 1, false: 0}[s >= M]
		}
	}
	run := func(x []float64, fn func(x *Node) *Node) []float64 {
		exec := model.MustNewExec(backend.MustNew(), store, func(_ *model.Scope, x *Node) *Node {
			rnn.LiveVariables(store, x.Graph())
			return fn(x)
		})
		return tensors.MustCopyFlatData[float64](exec.MustCall(tensors.FromFlatDataAndDimensions(x, batch, M+N, in))[0])
	}
	whole := func(x *Node) *Node {
		out, _ := rnn.Sequence(cell, scope, x)
		return SliceAxis(out, 1, AxisRange(M, M+N))
	}
	got := run(x, whole)
	want := run(x, func(x *Node) *Node {
		es := enc.Build(scope.At("encoder"), x.Graph())
		hM := rnn.UnrollStates(es, SliceAxis(x, 1, AxisRange(0, M)), nil)[M-1]
		ds := dec.Build(scope.At("decoder"), x.Graph())
		h0 := Add(ds.Initial(batch), es.Readout(hM))
		return ds.Readout(rnn.Unroll(ds, SliceAxis(x, 1, AxisRange(M, M+N)), h0))
	})
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12*max(1, math.Abs(want[i])) {
			t.Fatalf("target-side output %d = %.15g, encoder then decoder alone %.15g", i, got[i], want[i])
		}
	}
	changed := func(step int) []float64 {
		x2 := append([]float64(nil), x...)
		x2[step*in] += 0.5 // sequence 0, first channel
		return run(x2, whole)
	}
	if c := changed(0); c[0] == got[0] {
		t.Error("changing the first source input left the first target output as it was")
	}
	if c := changed(M + N - 1); c[0] != got[0] || c[2*(N-2)] != got[2*(N-2)] {
		t.Error("changing the last target input changed an earlier output")
	}
}
