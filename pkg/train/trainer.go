package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"syscall"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/urnn-notebooks/longmemory/pkg/hessianfree"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/seq"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// Config is one training run, as plain data (print it with %+v, copy and change it in a
// notebook cell). The zero value of each field means the default given.
type Config struct {
	Steps     int     // optimisation steps in all (Run stops there); required
	Batch     int     // sequences per step; default 20 (Arjovsky et al. §4)
	Optimizer RMSProp // default: RMSProp{LR: 1e-3, Decay: 0.9}
	Chunk     int     // BPTT chunk length in time steps; 0: the whole sequence in one graph
	Seed      uint64  // model initialisation, training batches and the evaluation batch derive from it
	EvalEvery int     // evaluate on the held-out batch every EvalEvery steps; default max(1, Steps/50)
	// EvalBatch is the number of sequences in the held-out batch; default 100, or fewer
	// when 100 sequences of the task would exceed tasks.MaxElements (at least 1).
	EvalBatch int
	// CheckpointEvery is the period, in steps, of the checkpoints Run writes into
	// Trainer.CheckpointDir (when that is set); default 100.
	CheckpointEvery int
	// Orthogonality adds Henaff et al.'s soft orthogonality step on an LT-RNN's V (off by default).
	Orthogonality Orthogonality
	// Scan computes the chunks of a cell whose steps are an rnn.Filter (the LRU, S4D) by its
	// filter, the outputs and last state of a chunk by blocks of matrix products without the
	// states (package scan), in a graph whose size grows with log T, instead of a Next per
	// step (seq.Walker.Parallel). The same gradients to rounding; several times faster (make
	// bench, the "scan" rows), and then best with the whole sequence in one graph (Chunk 0: the
	// memory is that of the inputs and outputs, not of T states). Off by default.
	Scan bool `json:",omitempty"`
	// ScaleHiddenGrad divides the gradients with respect to the hidden activations by the
	// sequence length T (Henaff et al. §4, "for all experiments"): Runner.HiddenGradScale = 1/T.
	ScaleHiddenGrad bool
	// AdamW, when its LR is set, trains instead of RMSProp (Optimizer's clipping and Nesterov
	// must then be unset; adamw.go). Left out of run.json when off.
	AdamW AdamW `json:",omitzero"`
	// HessianFree, when its CGIters is set, trains by Martens & Sutskever 2011's Hessian-free
	// optimisation (Galvan §2.2.2; package hessianfree) instead of Optimizer. Left out of
	// run.json when off.
	HessianFree hessianfree.Settings `json:",omitzero"`
}

// WithDefaults returns c with each zero field replaced by its default (the Optimizer's
// too; EvalBatch's depends on the task and is left to New), or an error naming the first
// bad field and its accepted range.
func (c Config) WithDefaults() (Config, error) {
	if c.Steps < 1 {
		return c, fmt.Errorf("train: Config.Steps = %d, want >= 1", c.Steps)
	}
	if c.Batch == 0 {
		c.Batch = 20
	}
	if c.EvalEvery == 0 {
		c.EvalEvery = max(1, c.Steps/50)
	}
	if c.EvalBatch == 0 {
		c.EvalBatch = 100
	}
	if c.CheckpointEvery == 0 {
		c.CheckpointEvery = 100
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"Batch", c.Batch}, {"EvalEvery", c.EvalEvery}, {"EvalBatch", c.EvalBatch}, {"CheckpointEvery", c.CheckpointEvery}} {
		if f.v < 1 {
			return c, fmt.Errorf("train: Config.%s = %d, want >= 1", f.name, f.v)
		}
	}
	if c.Chunk < 0 {
		return c, fmt.Errorf("train: Config.Chunk = %d, want >= 0 (0 means the whole sequence)", c.Chunk)
	}
	if c.Orthogonality.Points == 0 && c.Orthogonality.LR != 0 {
		return c, fmt.Errorf("train: Config.Orthogonality.LR = %g with Points = 0: the orthogonality penalty is off (Henaff's pooling presets turn it on)", c.Orthogonality.LR)
	}
	if c.Orthogonality.Points == 0 && c.Orthogonality.Norm {
		return c, fmt.Errorf("train: Config.Orthogonality.Norm with Points = 0: the orthogonality penalty is off (Henaff's pooling presets turn it on)")
	}
	var err error
	if c.HessianFree, err = c.HessianFree.WithDefaults(); err != nil {
		return c, fmt.Errorf("train: Config.HessianFree: %w", err)
	}
	if c.Optimizer, err = c.Optimizer.withDefaults(); err != nil {
		return c, err
	}
	if c.AdamW, err = c.AdamW.withDefaults(); err != nil {
		return c, err
	}
	return c, c.checkAdamW()
}

// withTaskDefaults sizes the default held-out batch for task, and checks that one training
// batch and the held-out batch fit in tasks.MaxElements, so that a long task fails here with
// an error naming Batch and its accepted range rather than later, in Sample.
func (c Config) withTaskDefaults(task tasks.Task) (Config, error) {
	perSeq := task.SeqLen() * task.NumInputs() // both <= 2^24 after Validate: no overflow
	maxBatch := tasks.MaxElements / max(perSeq, 1)
	if maxBatch < 1 {
		return c, fmt.Errorf("train: one sequence of %s holds %d steps × %d inputs, more than tasks.MaxElements = %d",
			task, task.SeqLen(), task.NumInputs(), tasks.MaxElements)
	}
	if c.EvalBatch == 0 {
		c.EvalBatch = min(100, maxBatch)
	}
	if c.Batch > maxBatch {
		return c, fmt.Errorf("train: Config.Batch = %d sequences of %s (%d steps × %d inputs each), want 1..%d (tasks.MaxElements = %d inputs per batch)",
			c.Batch, task, task.SeqLen(), task.NumInputs(), maxBatch, tasks.MaxElements)
	}
	if c.EvalBatch > maxBatch {
		return c, fmt.Errorf("train: Config.EvalBatch = %d sequences of %s, want 1..%d (tasks.MaxElements = %d inputs per batch)",
			c.EvalBatch, task, maxBatch, tasks.MaxElements)
	}
	return c, nil
}

// Record is one line of a training log.
type Record struct {
	Step         int     // optimisation steps done
	Loss         float64 // training loss of the step's batch, before the update
	GradNorm     float64 // global gradient norm before clipping
	EvalLoss     float64 // loss on the held-out batch; NaN when not evaluated at this step; +Inf on the step where the run diverged (Run's last record then)
	EvalAccuracy float64 // share of masked steps predicted right (classification); NaN otherwise
	Seconds      float64 // wall time of the run so far, resumed runs included
	Penalty      float64 // soft orthogonality penalty before its step; NaN when Config.Orthogonality is off
}

// StopSignals end a training run with a checkpoint of the last completed step (the CLI's
// `train` and the notebooks' Train listen for them): Ctrl-C, and the signals of `timeout`,
// `docker stop`, Slurm, a closing terminal or notebook kernel.
var StopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// Trainer trains one cell on one task.
type Trainer struct {
	Config Config
	Cell   rnn.Cell
	Task   tasks.Task
	Store  *model.Store
	Runner *Runner
	Step   int      // optimisation steps done
	Log    []Record // every step's record
	// CheckpointDir is where the run lives, not how it trains (set it after New; "" for
	// none): if set, Run writes a checkpoint into it every Config.CheckpointEvery steps, at
	// the end and when interrupted; Save writes one there and Resume continues from the
	// latest one there.
	CheckpointDir string
	// LastCheckpoint is the path of the latest checkpoint written or restored ("" if none).
	LastCheckpoint string
	// SaveLog, if set, writes the log where the run keeps it; Save calls it before each
	// checkpoint, which then holds no log, and LoadLog reads it back for Resume (which
	// keeps the records up to the checkpoint's step). Both nil: the checkpoints hold the log.
	SaveLog func([]Record) error
	LoadLog func() ([]Record, error)
	// Skipped holds an error naming each corrupted checkpoint that Resume passed over for
	// an older, intact one (nil if none).
	Skipped []error
	// ResumedFinal is set when Resume restored a final checkpoint (Finish): the weights of
	// its step, the optimizer's state as New made it.
	ResumedFinal bool

	updater     optimizer        // RMSProp or AdamW
	constrained *constrainedStep // nil unless the cell is rnn.Constrained
	ortho       *orthoStep       // nil when Config.Orthogonality is off
	eval        *tasks.Batch

	hf *hessianfree.Optimizer // nil unless Config.HessianFree is on (updater is nil then)

	batchStats bool // the cell normalises by batch statistics (rnn.BatchStatistics)
}

// Salts that separate the random streams derived from Config.Seed.
const (
	saltInit  = 0x696e6974 // "init"
	saltBatch = 0x62617463 // "batc"
	saltEval  = 0x6576616c // "eval"
	saltNoise = 0x6e6f6973 // "nois"
	saltStats = 0x73746174 // "stat"
)

// New initialises cell from cfg.Seed and returns a Trainer for task, without a checkpoint
// directory (set Trainer.CheckpointDir). Use Resume to continue from the latest checkpoint
// there instead of starting afresh.
func New(backend compute.Backend, cell rnn.Cell, task tasks.Task, cfg Config) (*Trainer, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	if err := task.Validate(); err != nil {
		return nil, err
	}
	if s := cell.Sizes(); s.In != task.NumInputs() || s.Out != task.NumOutputs() {
		return nil, fmt.Errorf("train: cell %T has %d inputs and %d outputs, task %s needs %d and %d",
			cell, s.In, s.Out, task, task.NumInputs(), task.NumOutputs())
	}
	if cfg, err = cfg.withTaskDefaults(task); err != nil {
		return nil, err
	}
	if err := seq.CheckChunk(cell, cfg.Chunk, task.SeqLen()); err != nil {
		return nil, fmt.Errorf("train: Config.Chunk: %w", err)
	}
	if s, ok := cell.(rnn.BatchStatistics); ok && s.BatchStatistics() && (!cfg.Scan || (cfg.Chunk > 0 && cfg.Chunk < task.SeqLen())) {
		return nil, fmt.Errorf("train: %T normalises by the statistics of the whole batch (rnn.BatchStatistics), which needs Config.Scan on and Chunk 0 (or >= T = %d); got Scan %t, Chunk %d",
			cell, task.SeqLen(), cfg.Scan, cfg.Chunk)
	}
	if err := checkMemory(cell, task, cfg); err != nil {
		return nil, err
	}
	_, batchStats := cell.(rnn.BatchStatistics)
	batchStats = batchStats && cell.(rnn.BatchStatistics).BatchStatistics()
	store := model.NewStore()
	if err := cell.Init(store.Scope(ModelScope), rand.New(rand.NewPCG(cfg.Seed, saltInit))); err != nil {
		return nil, err
	}
	t := &Trainer{Config: cfg, Cell: cell, Task: task, Store: store, batchStats: batchStats}
	if t.Runner, err = NewRunner(backend, store, cell, cfg.Chunk); err != nil {
		return nil, err
	}
	t.Runner.Parallel = cfg.Scan
	if cfg.ScaleHiddenGrad {
		t.Runner.HiddenGradScale = 1 / float64(task.SeqLen())
	}
	if t.constrained, err = newConstrainedStep(cell, store.Scope(ModelScope), t.Runner.Vars, cfg.Optimizer.LR); err != nil {
		return nil, err
	}
	scale, err := lrScales(cell, store.Scope(ModelScope), t.Runner.Vars)
	if err != nil {
		return nil, err
	}
	if cfg.HessianFree.On() {
		if t.hf, err = newHessianFree(backend, t); err != nil {
			return nil, err
		}
	} else if t.updater, err = newOptimizer(backend, store, t.Runner.Vars, t.constrained.skip(t.Runner.Vars), scale, cfg); err != nil {
		return nil, err
	}
	// Held out: fresh sequences also when the training batches come from a fixed set (tasks.Pool).
	if t.eval, err = tasks.HeldOut(task).Sample(rand.New(rand.NewPCG(cfg.Seed, saltEval)), cfg.EvalBatch); err != nil {
		return nil, err
	}
	if cfg.Orthogonality.Points != 0 {
		if t.ortho, err = newOrthoStep(t, cfg.Optimizer.LR); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// lrScales returns each of vars' learning-rate scale for an rnn.LRScaled cell (nil otherwise:
// one rate), checking that every name it gives is a trainable variable and every scale > 0.
func lrScales(cell rnn.Cell, scope *model.Scope, vars []*model.Variable) ([]float64, error) {
	c, ok := cell.(rnn.LRScaled)
	if !ok || len(c.LRScales()) == 0 {
		return nil, nil
	}
	scale := make([]float64, len(vars))
	for i := range scale {
		scale[i] = 1
	}
	for name, s := range c.LRScales() {
		i := varIndex(vars, scope, name)
		if i < 0 {
			return nil, fmt.Errorf("train: %T scales the learning rate of %q, which is not a trainable variable under %s", cell, name, scope.Scope())
		}
		if !(s > 0) || math.IsInf(s, 1) {
			return nil, fmt.Errorf("train: %T scales the learning rate of %q by %g, want a number > 0", cell, name, s)
		}
		scale[i] = s
	}
	return scale, nil
}

// Batch returns the training batch of step s (0-based): a pure function of Config.Seed
// and s, so that a resumed run sees the same batches as an uninterrupted one.
func (t *Trainer) Batch(s int) (*tasks.Batch, error) {
	return t.Task.Sample(rand.New(rand.NewPCG(t.Config.Seed^saltBatch, uint64(s))), t.Config.Batch)
}

// Evaluate returns the loss and accuracy (NaN for regression) on the held-out batch.
func (t *Trainer) Evaluate() (loss, accuracy float64, err error) {
	return t.EvaluateBatch(t.eval)
}

// StatisticsBatches is the number of training batches over which EstimateStatistics averages
// the statistics of a cell that normalises by them: 5 of the presets' 20 sequences, as many
// sequences as their held-out batch.
const StatisticsBatches = 5

// StatisticsBatch returns the k-th batch (0 ≤ k < StatisticsBatches) of EstimateStatistics at
// the current step: training sequences of Config.Batch, drawn from a stream of their own, so
// that estimating the statistics does not change the training batches.
func (t *Trainer) StatisticsBatch(k int) (*tasks.Batch, error) {
	return t.Task.Sample(rand.New(rand.NewPCG(t.Config.Seed^saltStats, uint64(t.Step)*StatisticsBatches+uint64(k))), t.Config.Batch)
}

// EstimateStatistics sets the statistics by which a cell that normalises by batch statistics
// (rnn.BatchStatistics: lru.Block's BatchNorm) evaluates to the mean of those of
// StatisticsBatches training batches under the current weights: a forward pass with the noise
// key on over batch k = 1, 2, … with the momentum (rnn.MomentumKey) 1 − 1/k, then the noise
// key off and the momentum 1 again. The population statistics of Wu & Johnson 2021 §3 ("precise
// BN"), in place of running averages over the training steps, which lag behind the weights.
// EvaluateBatch calls it first; it does nothing for other cells.
func (t *Trainer) EstimateStatistics() error {
	if !t.batchStats {
		return nil
	}
	scope := t.Store.Scope(ModelScope)
	reset := func(err error) error {
		if _, serr := rnn.SetMomentum(scope, 1); serr != nil && err == nil {
			err = serr
		}
		if _, serr := rnn.SetNoise(scope, 0); serr != nil && err == nil {
			err = serr
		}
		return err
	}
	if _, err := rnn.SetNoise(scope, 1); err != nil {
		return reset(err)
	}
	for k := range StatisticsBatches {
		b, err := t.StatisticsBatch(k)
		if err != nil {
			return reset(err)
		}
		if _, err := rnn.SetMomentum(scope, 1-1/float64(k+1)); err != nil {
			return reset(err)
		}
		if _, err := t.Runner.Forward(b); err != nil {
			return reset(fmt.Errorf("train: estimating the batch statistics: %w", err))
		}
	}
	return reset(nil)
}

// EvaluateBatch returns the loss and accuracy (share of masked steps predicted right; NaN
// for regression) of the current model on b, e.g. a test set, after EstimateStatistics. It
// evaluates b in slices of at
// most Config.Batch sequences (tasks.Batch.Rows), so that evaluation never holds more
// activations than a training step: a slice's loss, Σ Mask·loss / Σ Mask over its rows, is
// weighted by its share of b's masked steps,
//
//	loss = Σ_k loss_k · M_k / M,   M_k = Σ Mask over slice k,   M = Σ_k M_k.
//
// A slice without masked steps is skipped (it adds nothing to either sum).
func (t *Trainer) EvaluateBatch(b *tasks.Batch) (loss, accuracy float64, err error) {
	if err := t.EstimateStatistics(); err != nil {
		return 0, 0, err
	}
	var correct, masked float64
	size := max(1, t.Config.Batch)
	for i := 0; i < b.Size; i += size {
		s := b.Rows(i, min(i+size, b.Size))
		m := seq.Masked(s)
		if m == 0 {
			continue
		}
		res, err := t.Runner.Forward(s)
		if err != nil {
			return 0, 0, err
		}
		loss += res.Loss * m
		correct += res.Correct
		masked += m
	}
	if masked == 0 {
		return 0, 0, fmt.Errorf("train: batch has an all-zero mask: no step to compute a loss on")
	}
	accuracy = math.NaN()
	if b.Labels != nil {
		accuracy = correct / masked
	}
	return loss / masked, accuracy, nil
}

// Run trains until Config.Steps steps are done or ctx is cancelled, calling onRecord (if
// not nil) after every step. On cancellation it writes a checkpoint of the last completed
// step (if t.CheckpointDir is set) and returns ctx.Err(); a step under way is abandoned at
// its next chunk boundary, so a slow step is not waited out. A NaN or Inf loss or gradient
// stops the run with an error naming the step, the model and the last good checkpoint; the
// variables are left as they were before that step. A NaN or Inf held-out loss is a
// divergence too: the step's record is logged, no checkpoint is written for it, and the
// run stops with an error naming the last good checkpoint (one written before that step).
func (t *Trainer) Run(ctx context.Context, onRecord func(Record)) error {
	start := time.Now()
	var before float64
	if n := len(t.Log); n > 0 {
		before = t.Log[n-1].Seconds
	}
	interrupted := func(err error) error {
		if t.CheckpointDir != "" {
			if cerr := t.save(1); cerr != nil {
				return fmt.Errorf("%w (and the checkpoint failed: %v)", err, cerr)
			}
		}
		return err
	}
	lastGood := func() string {
		if t.LastCheckpoint == "" {
			return "none"
		}
		return t.LastCheckpoint
	}
	for t.Step < t.Config.Steps {
		if err := ctx.Err(); err != nil {
			return interrupted(err)
		}
		b, err := t.Batch(t.Step)
		if err != nil {
			return err
		}
		frozen, err := t.frozenValues()
		if err != nil {
			return err
		}
		res, err := t.noisyRun(ctx, b)
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return interrupted(err)
		}
		if err != nil {
			return fmt.Errorf("train: step %d: %w", t.Step+1, err)
		}
		if bad := nonFinite(res, t.Runner); bad != "" || math.IsNaN(res.Loss) || math.IsInf(res.Loss, 0) {
			if bad == "" {
				bad = fmt.Sprintf("loss = %g", res.Loss)
			}
			if err := restoreFrozen(frozen); err != nil {
				return err
			}
			// The log ends with the step that diverged, held-out loss +Inf, so that a run that
			// stopped this way says so (package runs and the CLI's verdict read it).
			rec := Record{Step: t.Step + 1, Loss: res.Loss, GradNorm: math.NaN(), EvalLoss: math.Inf(1), EvalAccuracy: math.NaN(),
				Penalty: math.NaN(), Seconds: before + time.Since(start).Seconds()}
			t.Log = append(t.Log, rec)
			if onRecord != nil {
				onRecord(rec)
			}
			return fmt.Errorf("train: step %d of %T on %s: %s; stopped before updating the variables; last good checkpoint: %s",
				t.Step+1, t.Cell, t.Task, bad, lastGood())
		}
		var norm float64
		if t.hf != nil {
			norm, err = t.hessianFreeStep(b, res)
		} else {
			norm, err = t.updater.apply(res.Grads)
		}
		if err != nil {
			return err
		}
		if t.constrained != nil {
			if err := t.constrained.apply(res.Grads); err != nil {
				return fmt.Errorf("train: step %d: %w", t.Step+1, err)
			}
		}
		penalty := math.NaN()
		if t.ortho != nil {
			if penalty, err = t.ortho.apply(t.Config.Seed, t.Step); err != nil {
				return err
			}
		}
		t.Step++
		rec := Record{Step: t.Step, Loss: res.Loss, GradNorm: norm, EvalLoss: math.NaN(), EvalAccuracy: math.NaN(), Penalty: penalty}
		if t.evaluated(t.Step) {
			if rec.EvalLoss, rec.EvalAccuracy, err = t.Evaluate(); err != nil {
				return err
			}
		}
		rec.Seconds = before + time.Since(start).Seconds()
		measured := rec.EvalLoss
		diverged := t.evaluated(rec.Step) && (math.IsNaN(measured) || math.IsInf(measured, 0))
		if diverged {
			rec.EvalLoss = math.Inf(1) // as above: the log says the run diverged at this step
		}
		t.Log = append(t.Log, rec)
		if onRecord != nil {
			onRecord(rec)
		}
		if diverged {
			return fmt.Errorf("train: step %d of %T on %s: held-out loss = %g: the run diverged; stopped without a checkpoint of this step; last good checkpoint: %s",
				t.Step, t.Cell, t.Task, measured, lastGood())
		}
		if t.CheckpointDir != "" && (t.Step%t.Config.CheckpointEvery == 0 || t.Step == t.Config.Steps) {
			keep := checkpointsKept
			if t.Step == t.Config.Steps {
				keep = 1
			}
			if err := t.save(keep); err != nil {
				return err
			}
		}
	}
	return nil
}

// noisyRun is the training pass of step t.Step on b: with the cell's training noise
// (rnn.NoiseKey: dropout) on, keyed by Config.Seed and the step, so that a resumed run draws
// what an uninterrupted one drew, and off again after it, so that everything else (held-out
// evaluation, analyses, checkpoints) sees the cell without noise. A cell without noise is
// run as it is.
func (t *Trainer) noisyRun(ctx context.Context, b *tasks.Batch) (*Result, error) {
	scope := t.Store.Scope(ModelScope)
	key := rand.New(rand.NewPCG(t.Config.Seed^saltNoise, uint64(t.Step))).Uint64() | 1
	if n, err := rnn.SetNoise(scope, key); err != nil || n == 0 {
		if err != nil {
			return nil, err
		}
		return t.Runner.run(ctx, b, true)
	}
	res, err := t.Runner.run(ctx, b, true)
	if _, serr := rnn.SetNoise(scope, 0); serr != nil && err == nil {
		err = serr
	}
	return res, err
}

// frozenValues returns copies of the non-trainable variables under the model's scope when the
// cell normalises by batch statistics, whose training pass moves their running averages in its
// graph (nil for other cells), so that restoreFrozen can put them back when the pass diverges.
func (t *Trainer) frozenValues() (map[*model.Variable]*tensors.Tensor, error) {
	if !t.batchStats {
		return nil, nil
	}
	out := map[*model.Variable]*tensors.Tensor{}
	for v := range t.Store.Scope(ModelScope).IterVariables() {
		if v.Trainable {
			continue
		}
		c, err := v.MustValue().LocalClone()
		if err != nil {
			return nil, fmt.Errorf("train: copying %s: %w", v.Path(), err)
		}
		out[v] = c
	}
	return out, nil
}

// restoreFrozen sets each variable of values (frozenValues) back to its copy.
func restoreFrozen(values map[*model.Variable]*tensors.Tensor) error {
	for v, x := range values {
		if err := v.SetValue(x); err != nil {
			return fmt.Errorf("train: restoring %s: %w", v.Path(), err)
		}
	}
	return nil
}

// evaluated reports whether Run scores the held-out batch after step s.
func (t *Trainer) evaluated(s int) bool { return s%t.Config.EvalEvery == 0 || s == t.Config.Steps }

// nonFinite describes the first gradient holding a NaN or Inf, or returns "".
func nonFinite(res *Result, r *Runner) string {
	for i, g := range res.Grads {
		bad := false
		g.MustConstFlatData(func(flat any) {
			switch f := flat.(type) {
			case []float32:
				for _, v := range f {
					if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
						bad = true
						return
					}
				}
			case []float64:
				for _, v := range f {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						bad = true
						return
					}
				}
			}
		})
		if bad {
			return fmt.Sprintf("the gradient of %s holds NaN or Inf", r.Vars[i].Path())
		}
	}
	return ""
}
