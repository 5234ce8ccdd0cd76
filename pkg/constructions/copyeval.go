package constructions

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/analysis"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// DefaultScale is the default α of CopyResult's cross-entropy: the construction's logits
// separate the right symbol by a margin of about 1 (ũ·ũ = 1 against overlaps of order
// √(S/2d)), so softmax(y) itself is far from one-hot; α = 10 sharpens it. (The paper gives
// no scale: its construction is judged by arg max, [1] Figure 1.)
const DefaultScale = 10.0

// saltSequences separates the evaluation sequences from the construction's draws.
const saltSequences = 0x73657173 // "seqs"

// CopyResult is how well a copy construction does on a set of sequences of
// tasks.Copy{T, Symbols: K, Recall: S} (L = T + 2S steps; 0-based, the marker at step
// T + S − 1 and the recalled symbols at steps T + S … T + 2S − 1).
type CopyResult struct {
	Sequences int
	Scale     float64 // α of the cross-entropies
	// RecallAccuracy is the share of recalled symbols (the last S steps) whose arg max
	// output is the right data symbol.
	RecallAccuracy float64
	// Perfect is the share of sequences with all S recalled symbols right.
	Perfect float64
	// BlankAccuracy is the share of the other T + S − 1 steps, whose target is blank,
	// output as blank; the marker step is left out (its output is wrong by construction:
	// the last hidden coordinate is S + 1 there and the blank row's last weight −(S + 1),
	// so the blank logit is −(S+1)²).
	BlankAccuracy float64
	// CrossEntropy is the task's loss with logits α·y_t: the mean over all L steps of
	// −log softmax(α y_t)[target]; the marker step dominates it for large α.
	CrossEntropy float64
	// CrossEntropyNoMarker is the same mean over the L − 1 steps other than the marker.
	CrossEntropyNoMarker float64
	// RecallCrossEntropy is the mean over the S recall steps.
	RecallCrossEntropy float64
}

// copyCounts accumulates CopyResult over batches.
type copyCounts struct {
	seqs, recallRight, perfect, blankRight, blankSteps int
	ce, ceMarker, ceRecall                             float64
}

// add scores example i of b, whose logits at step t are logits(t).
func (c *copyCounts) add(task tasks.Copy, b *tasks.Batch, i int, logits func(t int) []float64, scale float64) {
	marker := task.T + task.S() - 1
	allRight := true
	for t := range b.Len {
		y := logits(t)
		target := int(b.Label(i, t))
		right := argmax(y) == target
		ce := crossEntropy(y, target, scale)
		c.ce += ce
		switch {
		case t == marker:
			c.ceMarker += ce
		case t > marker:
			c.ceRecall += ce
			if right {
				c.recallRight++
			} else {
				allRight = false
			}
		default:
			c.blankSteps++
			if right {
				c.blankRight++
			}
		}
	}
	c.seqs++
	if allRight {
		c.perfect++
	}
}

// result turns the counts into a CopyResult.
func (c *copyCounts) result(task tasks.Copy, scale float64) CopyResult {
	n, L, S := float64(c.seqs), float64(task.SeqLen()), float64(task.S())
	return CopyResult{
		Sequences: c.seqs, Scale: scale,
		RecallAccuracy:       float64(c.recallRight) / (n * S),
		Perfect:              float64(c.perfect) / n,
		BlankAccuracy:        float64(c.blankRight) / float64(c.blankSteps),
		CrossEntropy:         c.ce / (n * L),
		CrossEntropyNoMarker: (c.ce - c.ceMarker) / (n * (L - 1)),
		RecallCrossEntropy:   c.ceRecall / (n * S),
	}
}

// argmax returns the index of the largest value (the first on ties).
func argmax(y []float64) int {
	best := 0
	for k, v := range y {
		if v > y[best] {
			best = k
		}
	}
	return best
}

// crossEntropy returns −log softmax(α y)[target], computed as logsumexp(α y) − α y_target.
func crossEntropy(y []float64, target int, alpha float64) float64 {
	m := math.Inf(-1)
	for _, v := range y {
		m = max(m, alpha*v)
	}
	s := 0.0
	for _, v := range y {
		s += math.Exp(alpha*v - m)
	}
	return m + math.Log(s) - alpha*y[target]
}

// checkBatch returns an error unless b is a batch of the construction's task.
func (c *CopySolution) checkBatch(b *tasks.Batch) error {
	task := c.Task()
	if err := b.Check(); err != nil {
		return err
	}
	if b.Labels == nil || b.NumIn != task.NumInputs() || b.Len != task.SeqLen() {
		return fmt.Errorf("constructions: batch of %d steps × %d inputs (labels %v), want %s: %d steps × %d inputs with labels",
			b.Len, b.NumIn, b.Labels != nil, task, task.SeqLen(), task.NumInputs())
	}
	return nil
}

// EvaluateCopy scores the construction on batch b (tasks.Copy{T, K, S} sequences) by
// running its linear recurrence in plain Go float64 (see linear), with cross-entropies at
// scale α = scale (0 means DefaultScale).
func (c *CopySolution) EvaluateCopy(b *tasks.Batch, scale float64) (CopyResult, error) {
	var cnt copyCounts
	if err := c.evaluateInto(&cnt, b, scale); err != nil {
		return CopyResult{}, err
	}
	return cnt.result(c.Task(), orScale(scale)), nil
}

func (c *CopySolution) evaluateInto(cnt *copyCounts, b *tasks.Batch, scale float64) error {
	if err := c.checkBatch(b); err != nil {
		return err
	}
	net, err := newLinear(c.Weights)
	if err != nil {
		return err
	}
	y := make([]float64, net.out)
	for i := range b.Size {
		net.reset()
		t0 := 0
		cnt.add(c.Task(), b, i, func(t int) []float64 {
			for ; t0 <= t; t0++ { // logits is called for t = 0, 1, … in order
				net.step(b.X[(i*b.Len+t0)*b.NumIn : (i*b.Len+t0+1)*b.NumIn])
			}
			return net.output(y)
		}, orScale(scale))
	}
	return nil
}

// EvaluateCopyGraph scores the construction on batch b by running it as a GoMLX graph:
// the Float64 ltrnn.Cell of Cell() through analysis.Run on backend (rnn.Unroll over the
// whole sequence, or with chunk > 0 one chunk of steps at a time). It is the check that the
// weights run as an LT-RNN; EvaluateCopy is the fast path and agrees with it (tested).
func (c *CopySolution) EvaluateCopyGraph(backend compute.Backend, b *tasks.Batch, scale float64, chunk int) (CopyResult, error) {
	if err := c.checkBatch(b); err != nil {
		return CopyResult{}, err
	}
	cell, err := c.Cell()
	if err != nil {
		return CopyResult{}, err
	}
	scope := model.NewStore().RootScope()
	if err := cell.Init(scope, nil); err != nil {
		return CopyResult{}, err
	}
	tr, err := analysis.Run(backend, scope, cell, b, analysis.RunOptions{Chunk: chunk})
	if err != nil {
		return CopyResult{}, err
	}
	var cnt copyCounts
	for i := range b.Size {
		cnt.add(c.Task(), b, i, func(t int) []float64 { return tr.Output(i, t) }, orScale(scale))
	}
	return cnt.result(c.Task(), orScale(scale)), nil
}

func orScale(s float64) float64 {
	if s == 0 {
		return DefaultScale
	}
	return s
}

// EvaluateCopyRandom draws the construction Copy(K, S, T, d, seed) and scores it in plain
// Go on `sequences` fresh sequences of tasks.Copy{T, K, S} drawn from seed (sampled 50 at
// a time, so T = 10000 needs no large batch).
func EvaluateCopyRandom(K, S, T, d, sequences int, seed uint64, scale float64) (CopyResult, error) {
	if sequences < 1 {
		return CopyResult{}, fmt.Errorf("constructions: sequences = %d, want >= 1", sequences)
	}
	c, err := Copy(K, S, T, d, seed)
	if err != nil {
		return CopyResult{}, err
	}
	rng := rand.New(rand.NewPCG(seed, saltSequences))
	var cnt copyCounts
	for done := 0; done < sequences; {
		n := min(50, sequences-done)
		b, err := c.Task().Sample(rng, n)
		if err != nil {
			return CopyResult{}, err
		}
		if err := c.evaluateInto(&cnt, b, scale); err != nil {
			return CopyResult{}, err
		}
		done += n
	}
	return cnt.result(c.Task(), orScale(scale)), nil
}
