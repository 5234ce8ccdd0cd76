package rnn

import (
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// NoiseKey names the variables of the cells that draw random numbers while they train
// (dropout, package dropout), or whose training pass differs from their evaluation otherwise
// (lru.Block's BatchNorm, through Training): an Int32 [2], not trained (NoiseVar), holding a 62-bit key in
// two halves of 31 bits, or 0, 0 for no noise. A cell reads it as a graph node and draws its
// numbers as a pure function of the key and the time step (a counter-based generator), so
// that a chunk recomputed in the backward pass draws what its forward pass drew.
//
// Noise is off unless the trainer turns it on: train.Trainer.Run sets every NoiseKey under
// the model's scope to a key derived from Config.Seed and the step (SetNoise) for the
// training pass of that step, and back to 0 after it, so that held-out evaluation, the
// analyses and a checkpoint see the cell without noise, and a resumed run draws what an
// uninterrupted one drew.
//
// GoMLX's own dropout (layers.Dropout) does not fit here: it acts when the graph is marked
// as training, which every graph of this project is (LiveVariables), and it draws from the
// store's generator state (#rngState), which advances at every execution, so the recomputed
// chunk of chunked BPTT would draw another mask than its forward pass.
const NoiseKey = "noise-key"

// Training returns a Bool scalar, true when key (a NoiseKey variable's node) is on: in the
// trainer's training pass. A cell whose training pass differs from its evaluation without
// drawing noise (lru.Block's BatchNorm: batch statistics) declares a NoiseKey to read it.
func Training(key *Node) *Node {
	return GreaterThan(ReduceAllMax(key), ScalarZero(key.Graph(), key.DType()))
}

// MomentumKey names the scalar variable of the cells that keep running averages of statistics
// of their batches (lru.Block's BatchNorm, MomentumVar): a pass with the noise key on moves each
// average s̄ to m s̄ + (1 − m) s, s the pass's statistic and m this variable's value. It is 1,
// which leaves the averages as they are, except while the trainer estimates them
// (train.Trainer.EstimateStatistics: m = 1 − 1/k on its k-th batch, so that they end as the mean
// of its batches' statistics).
const MomentumKey = "batch-momentum"

// MomentumVar is the declaration of a cell's MomentumKey variable, initially 1.
func MomentumVar() Var {
	return Var{Name: MomentumKey, Dims: []int{}, Frozen: true, Values: []float64{1}}
}

// SetMomentum sets every MomentumKey variable under scope (sub-scopes included) to m and
// returns the number of variables set.
func SetMomentum(scope *model.Scope, m float64) (int, error) {
	n := 0
	for v := range scope.IterVariables() {
		if v.Name() != MomentumKey {
			continue
		}
		x := tensors.FromScalar(m)
		if v.DType() == dtypes.Float32 {
			x = tensors.FromScalar(float32(m))
		}
		if err := v.SetValue(x); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// BatchStatistics is implemented by the cells that may normalise by statistics of the whole
// training batch (lru.Block's BatchNorm), over every step of its sequences: the trainer then
// needs the whole sequence in one graph and the cell's scan (train.Config.Scan, Chunk 0), so
// that the statistics are those of the whole batch and the running averages are updated once
// a step.
type BatchStatistics interface {
	BatchStatistics() bool
}

// NoiseVar is the declaration of a cell's NoiseKey variable, initially 0, 0 (no noise).
func NoiseVar() Var {
	return Var{Name: NoiseKey, Dims: []int{2}, DType: dtypes.Int32, Frozen: true, Values: []float64{0, 0}}
}

// noiseHalf is the mask of each half of a key: 31 bits, so that both halves are
// non-negative Int32s.
const noiseHalf = 1<<31 - 1

// SetNoise sets every NoiseKey variable under scope (sub-scopes included) to key: its low
// 62 bits, with key 0 meaning no noise (a nonzero key whose low 62 bits are 0 is taken as 1).
// It returns the number of variables set (0 for a cell without noise).
func SetNoise(scope *model.Scope, key uint64) (int, error) {
	hi, lo := int32(key>>31&noiseHalf), int32(key&noiseHalf)
	if key != 0 && hi == 0 && lo == 0 {
		lo = 1
	}
	n := 0
	for v := range scope.IterVariables() {
		if v.Name() != NoiseKey {
			continue
		}
		if err := v.SetValue(tensors.FromFlatDataAndDimensions([]int32{hi, lo}, 2)); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
