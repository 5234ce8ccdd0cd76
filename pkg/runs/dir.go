package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"
	"github.com/gomlx/compute"

	"github.com/urnn-notebooks/longmemory/pkg/experiments"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// Dir is a run directory opened for training: its lock is held until Close.
type Dir struct {
	Path string
	// Notices says what Open found and repaired, one sentence each: a stale lock taken over,
	// temporary files of a killed run removed.
	Notices []string
	lock    *flock.Flock
}

// Open creates run directory path if needed and takes its lock (an flock on path/lock,
// which holds the holder's PID and host). A lock held by a live process is an error naming
// its PID and host; one left by a process that died (the kernel released its flock) is
// taken over. With the lock held, Open removes the temporary files a killed run left
// (log.gz.tmp, run.json.tmp, checkpoints being written). Both are told in Notices.
func Open(path string) (*Dir, error) {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, err
	}
	lockPath := filepath.Join(path, LockFile)
	fl := flock.New(lockPath)
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	holder, _ := os.ReadFile(lockPath)
	who := strings.TrimSpace(string(holder))
	if !ok {
		if who == "" {
			who = "another process"
		}
		return nil, fmt.Errorf("%s is in use by %s (lock %s): wait for that run to end, or stop it", path, who, lockPath)
	}
	d := &Dir{Path: path, lock: fl}
	if who != "" {
		d.Notices = append(d.Notices, fmt.Sprintf("taking over the stale lock of %s (no longer running)", who))
	}
	host, _ := os.Hostname()
	if err := os.WriteFile(lockPath, []byte(fmt.Sprintf("PID %d on %s\n", os.Getpid(), host)), 0o644); err != nil {
		fl.Unlock()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	stale, _ := train.RemoveStaleTemp(CheckpointDir(path))
	for _, name := range []string{LogFile + ".tmp", MetaFile + ".tmp"} {
		if p := filepath.Join(path, name); os.Remove(p) == nil {
			stale = append(stale, p)
		}
	}
	for _, p := range stale {
		d.Notices = append(d.Notices, fmt.Sprintf("removed %s, left by a run that was killed", p))
	}
	return d, nil
}

// Close releases the lock, leaving the lock file empty (the last holder ended cleanly).
func (d *Dir) Close() {
	os.Truncate(filepath.Join(d.Path, LockFile), 0)
	d.lock.Unlock()
}

// NewTrainer builds p's cell and task and returns a trainer of them (not resumed; see
// train.Trainer.Resume) whose checkpoints go to run directory dir's, and its log to dir's
// log.gz, written before each checkpoint (which then holds none) and read back by Resume.
func NewTrainer(b compute.Backend, p experiments.Preset, dir string) (*train.Trainer, tasks.Task, error) {
	cell, task, err := p.Build()
	if err != nil {
		return nil, nil, err
	}
	tr, err := train.New(b, cell, task, p.Train)
	if err == nil {
		tr.CheckpointDir = CheckpointDir(dir)
		tr.SaveLog = func(log []train.Record) error { return (&Dir{Path: dir}).WriteLog(log) }
		tr.LoadLog = func() ([]train.Record, error) { return ReadLog(LogPath(dir)) }
	}
	return tr, task, err
}

// SetAside moves the run's checkpoints, log, run.json and the scores of its weights (TestFile,
// RidgeFile; those there are) into a new
// directory <why>-<time> inside it ("unreadable" checkpoints, "no-checkpoint" for a log whose
// checkpoints are gone) and returns that directory's path: the run can start afresh and
// nothing is deleted.
func (d *Dir) SetAside(why string) (string, error) {
	aside := filepath.Join(d.Path, why+"-"+time.Now().Format("20060102-150405.000"))
	if err := os.Mkdir(aside, 0o755); err != nil {
		return "", err
	}
	for _, name := range []string{Checkpoints, LogFile, MetaFile, TestFile, RidgeFile} {
		if err := os.Rename(filepath.Join(d.Path, name), filepath.Join(aside, name)); err != nil && !os.IsNotExist(err) {
			return aside, err
		}
	}
	return aside, nil
}

// WriteMeta writes run.json (atomically) for tr, a trainer of p at step tr.Step: the preset
// with tr.Config (defaults applied), the task, its baseline and the backend's name. The
// spans are [{0, p}] for a run at step 0 or without a run.json; for a resumed one, those of
// the run.json in place, cut at tr.Step, the last one updated if p's settings (Diff) and this
// machine (Host) are its own, and p's span on this machine appended otherwise; a trainer
// resumed from a final checkpoint (train.Finish) starts a span marked FreshOptimizer.
func (d *Dir) WriteMeta(p experiments.Preset, tr *train.Trainer, backend string) error {
	p.Train = tr.Config
	host := Host()
	spans := []Span{{From: 0, Preset: p, Host: host}}
	if recorded, err := ReadMeta(d.Path); err == nil && tr.Step > 0 {
		spans = recorded.Spans
		if len(spans) == 0 {
			spans = []Span{{From: 0, Preset: recorded.Preset}}
		}
		for len(spans) > 1 && spans[len(spans)-1].From >= tr.Step {
			spans = spans[:len(spans)-1]
		}
		if last := &spans[len(spans)-1]; last.From == tr.Step || (len(Diff(last.Preset, p)) == 0 && last.Host == host && !tr.ResumedFinal) {
			last.Preset, last.Host = p, host
			last.FreshOptimizer = last.FreshOptimizer || tr.ResumedFinal
		} else {
			spans = append(spans, Span{From: tr.Step, Preset: p, Host: host, FreshOptimizer: tr.ResumedFinal})
		}
	}
	meta, err := json.MarshalIndent(Meta{Preset: p, Task: tr.Task.String(), Baseline: tr.Task.Baseline(), Backend: backend, Spans: spans}, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(d.Path, MetaFile), func(w io.Writer) error { _, err := w.Write(meta); return err })
}

// WriteLog writes log to the run's log.gz (see WriteLog); the error says so.
func (d *Dir) WriteLog(log []train.Record) error {
	if err := WriteLog(filepath.Join(d.Path, LogFile), log); err != nil {
		return fmt.Errorf("writing the log: %w", err)
	}
	return nil
}

// Train runs tr (train.Trainer.Run, onRecord after every step if not nil). The log is written
// before every checkpoint (NewTrainer's SaveLog) and once more when Run returns, whatever it
// returned, so that a run that diverged after its last checkpoint says so. runErr is Run's
// error as is (context.Canceled itself when interrupted), logErr that of the last write.
func (d *Dir) Train(ctx context.Context, tr *train.Trainer, onRecord func(train.Record)) (runErr, logErr error) {
	runErr = tr.Run(ctx, onRecord)
	return runErr, d.WriteLog(tr.Log)
}
