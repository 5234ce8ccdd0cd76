package runs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/gomlx/compute"

	"github.com/urnn-notebooks/longmemory/pkg/experiments"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// Options are how Train treats what a run directory already holds, and its hooks, as GoMLX's
// train.Loop takes its progress bar: the CLI's progress line and the notebooks' live chart
// are OnRecord hooks.
type Options struct {
	Backend compute.Backend // required
	// Fresh refuses a directory that already holds checkpoints (the CLI's train without
	// -resume); otherwise such a run continues from its latest intact checkpoint.
	Fresh bool
	// Override accepts settings that differ from those run.json recorded (runs.Diff); the
	// run's spans record each. Without it such a resume is refused, naming the settings.
	Override bool
	// Restart trains a run whose log records steps its checkpoints no longer hold (a clone
	// without them) again from step 0, its log and run.json set aside; otherwise refused.
	Restart bool
	// SetAsideUnreadable moves checkpoints that cannot be resumed (another version of a
	// model wrote them) aside and starts afresh; otherwise that is an error.
	SetAsideUnreadable bool
	// OnStart is called once the trainer is built and resumed, before its first step.
	OnStart func(tr *train.Trainer, task tasks.Task)
	// OnRecord is called after every step.
	OnRecord func(train.Record)
	// Notice receives what Train found and did, one sentence each (nil: dropped).
	Notice func(string)
}

// Errors of Train that callers name their own remedies for (the CLI's -resume, -restart).
var (
	// ErrHoldsRun: Options.Fresh, and the directory already holds checkpoints.
	ErrHoldsRun = errors.New("already holds a run")
	// ErrLostCheckpoints: the log records steps that no checkpoint holds, without Options.Restart.
	ErrLostCheckpoints = errors.New("holds no checkpoint to continue its log from")
)

// ErrNothingToTrain is Train's error for a run whose log already reaches its steps although
// its checkpoints are gone: there is nothing to continue from and nothing left to do.
var ErrNothingToTrain = errors.New("its log already reaches its steps, and its checkpoints are gone")

// Train trains preset p in run directory dir, the one way every caller trains (the CLI's
// train and sweep, the notebooks): it checks p, takes dir's lock (Open), continues the run
// from its latest intact checkpoint or starts it (Options say how to treat what is there),
// writes run.json (WriteMeta), and trains until p.Train.Steps or until ctx is done; the log
// is written before every checkpoint, and a stopped run checkpoints its last step. It returns
// the trainer whatever Run returned (nil only when no trainer was built); the error is Run's
// (context.Canceled itself when ctx was cancelled) or what stopped it before training.
func Train(ctx context.Context, dir string, p experiments.Preset, opt Options) (*train.Trainer, tasks.Task, error) {
	notice := func(format string, args ...any) {
		if opt.Notice != nil {
			opt.Notice(fmt.Sprintf(format, args...))
		}
	}
	if opt.Backend == nil {
		return nil, nil, errors.New("runs: Train: Options.Backend is nil")
	}
	if _, _, err := p.Build(); err != nil { // before anything is written
		return nil, nil, err
	}
	if recorded, err := ReadMeta(dir); err == nil && HasCheckpoints(dir) && !opt.Fresh {
		if changed := Diff(recorded.Preset, p); len(changed) > 0 && !opt.Override {
			var s []string
			for _, c := range changed {
				s = append(s, fmt.Sprintf("%s: %v → %v", c.Field, c.Was, c.Now))
			}
			return nil, nil, fmt.Errorf("%s: settings differ from those the run used: %s; override them to change them from the resumed step on",
				dir, strings.Join(s, ", "))
		}
	}
	d, err := Open(dir)
	if err != nil {
		return nil, nil, err
	}
	defer d.Close()
	for _, n := range d.Notices {
		notice("%s", n)
	}
	if opt.Fresh && HasCheckpoints(dir) {
		return nil, nil, fmt.Errorf("%s %w: continue it, or choose another directory", dir, ErrHoldsRun)
	}
	switch n, err := LostSteps(dir); {
	case err != nil:
		return nil, nil, err
	case n >= p.Train.Steps:
		return nil, nil, fmt.Errorf("%s records %d steps: %w", dir, n, ErrNothingToTrain)
	case n > 0 && !opt.Restart:
		return nil, nil, fmt.Errorf("%s records %d steps, but %s %w (were the checkpoints left out of a copy or clone?): "+
			"bring them back to continue, or restart the run from step 0 (its log is set aside)", LogPath(dir), n, CheckpointDir(dir), ErrLostCheckpoints)
	case n > 0:
		aside, err := d.SetAside("no-checkpoint")
		if err != nil {
			return nil, nil, fmt.Errorf("restarting %s: setting the run aside: %w", dir, err)
		}
		notice("%s records %d steps but no checkpoint: its log moved into %s; it trains again from step 0", dir, n, aside)
	}
	tr, task, err := NewTrainer(opt.Backend, p, dir)
	if err != nil {
		return nil, nil, err
	}
	ok, err := tr.Resume()
	switch {
	case err != nil && opt.SetAsideUnreadable:
		aside, rerr := d.SetAside("unreadable")
		if rerr != nil {
			return nil, nil, fmt.Errorf("%s: cannot resume (%v) nor set the run aside: %w", dir, err, rerr)
		}
		notice("cannot resume (%v); the run moved to %s, starting afresh", err, aside)
		if tr, task, err = NewTrainer(opt.Backend, p, dir); err != nil {
			return nil, nil, err
		}
	case err != nil:
		return nil, nil, err
	case ok:
		for _, s := range tr.Skipped {
			notice("%v; continuing from an older checkpoint", s)
		}
		switch {
		case tr.Step < tr.Config.Steps && tr.ResumedFinal:
			notice("resumed %s at step %d from the final weights of a finished run: the optimizer's state starts afresh (run.json's span says so)", tr.LastCheckpoint, tr.Step)
		case tr.Step < tr.Config.Steps:
			notice("resumed %s at step %d", tr.LastCheckpoint, tr.Step)
		}
	}
	if err := d.WriteMeta(p, tr, opt.Backend.Name()); err != nil {
		return tr, task, err
	}
	if opt.OnStart != nil {
		opt.OnStart(tr, task)
	}
	runErr, logErr := d.Train(ctx, tr, opt.OnRecord)
	if runErr == nil && logErr != nil {
		runErr = logErr
	}
	return tr, task, runErr
}

// Replica is one replica's outcome in TrainReplicas.
type Replica struct {
	Seed    uint64
	Dir     string
	Trainer *train.Trainer // nil if none was built
	Task    tasks.Task
	Err     error
}

// TrainReplicas trains the replicas of p with seeds seeds in DIR/seed-<seed> (ReplicaDir),
// each through Train with opt (its hooks called from several goroutines at once), atOnce at a
// time (at most MaxAtOnce; 0: AtOnce), with p's chunk chosen for that many (Preset.ForAtOnce).
// When ctx is done the running replicas checkpoint and stop and no other starts. Every
// replica's outcome is returned in the order of seeds.
func TrainReplicas(ctx context.Context, dir string, p experiments.Preset, seeds []uint64, atOnce int, opt Options) []Replica {
	if atOnce <= 0 {
		atOnce = AtOnce(len(seeds))
	}
	p = p.ForAtOnce(min(atOnce, len(seeds)))
	out := make([]Replica, len(seeds))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(atOnce, len(seeds)) {
		wg.Go(func() {
			for i := range next {
				q := p
				q.Train.Seed = seeds[i]
				rd := ReplicaDir(dir, seeds[i])
				out[i] = Replica{Seed: seeds[i], Dir: rd}
				if err := ctx.Err(); err != nil {
					out[i].Err = err
					continue
				}
				out[i].Trainer, out[i].Task, out[i].Err = Train(ctx, rd, q, opt)
			}
		})
	}
	for i := range seeds {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// Seeds returns n seeds from base: base, base+1, …
func Seeds(base uint64, n int) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = base + uint64(i)
	}
	return s
}
