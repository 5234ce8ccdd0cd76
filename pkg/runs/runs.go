// Package runs is the run directory: what `longmemory train`, the notebooks' Train and the
// scripts write and what `longmemory plot`, `summary`, `eval` and `verdict` read. A run
// directory DIR holds
//
//	DIR/run.json      Meta: the preset (defaults applied), the task, its baseline, the backend, the spans
//	DIR/log.gz        every step's train.Record in the compact format (EncodeLog)
//	DIR/checkpoints/  the trainer's checkpoints (train.Trainer.Save, Resume)
//	DIR/lock          held while a process trains into DIR (Open)
//
// A multi-seed run is a directory of replica run directories DIR/seed-<seed> (Replicas).
// Nothing here deletes a run: checkpoints that cannot be resumed are moved aside (SetAside).
package runs

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/experiments"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// The names inside a run directory.
const (
	MetaFile      = "run.json"
	LogFile       = "log.gz"
	Checkpoints   = "checkpoints"
	LockFile      = "lock"
	ReplicaPrefix = "seed-" // DIR/seed-<seed>: a replica of a multi-seed run
)

// MaxAtOnce is the most replicas of a multi-seed run trained at once by default (the CLI's
// train -seeds, the notebooks' TrainSeeds): goroutines sharing one backend in one process.
//
// A single run leaves part of the two cores idle (its graph is mostly one chain of small
// products), and replicas at once fill it: cmd/bench's model:hidden:task:T:xR rows time R
// replicas at once against R runs in turn, and at R = 8 the step is at the bound that two
// cores set, R times a run's time on one core over 2. A graph with a leading replica axis is
// slower than runs in turn (train.BenchmarkReplicaLayouts), and so are processes at once.
const MaxAtOnce = 8

// AtOnce is how many of n replicas train at once by default: all of them, up to MaxAtOnce.
func AtOnce(n int) int { return max(1, min(n, MaxAtOnce)) }

// Meta is DIR/run.json: what was trained, so that plot can label the run and draw the
// baseline. Preset holds the latest settings, with the defaults applied; Spans the settings
// of each span of steps and the machine that trained it (a resumed run whose settings or
// machine changed starts a new span).
type Meta struct {
	Preset   experiments.Preset
	Task     string
	Baseline float64
	Backend  string
	Spans    []Span
}

// Span is the settings a run used from step From + 1 on, and the machine that trained those
// steps (Host; empty in runs recorded before it was): the seconds of its log, and so the
// verdicts' budgets of seconds, depend on it. FreshOptimizer marks a span that continued a
// finished run from its final weights (Finish), the optimizer's state started afresh.
type Span struct {
	From           int
	Preset         experiments.Preset
	Host           string `json:",omitempty"`
	FreshOptimizer bool   `json:",omitempty"`
}

// Host describes this machine for Span.Host: the CPU's model name, then in brackets the widest
// vector extension among those the Go backend's matmul kernels pick from at run time (avx512f,
// avx2, or "no avx2") and the logical CPUs Go uses, as "AMD EPYC (avx2, 2 CPUs)" (the
// architecture instead of the model, and no extension, where /proc/cpuinfo does not say).
func Host() string {
	model, ext := runtime.GOARCH, ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			key, value, ok := strings.Cut(line, ":")
			key, value = strings.TrimSpace(key), strings.TrimSpace(value)
			switch {
			case !ok:
			case key == "model name" && model == runtime.GOARCH:
				model = value
			case key == "flags" && ext == "":
				ext = "no avx2"
				for _, f := range []string{"avx512f", "avx2"} {
					if slices.Contains(strings.Fields(value), f) {
						ext = f
						break
					}
				}
			}
		}
	}
	if ext != "" {
		ext += ", "
	}
	return fmt.Sprintf("%s (%s%d CPUs)", model, ext, runtime.NumCPU())
}

// CheckpointDir is the checkpoint directory of run directory dir.
func CheckpointDir(dir string) string { return filepath.Join(dir, Checkpoints) }

// HasCheckpoints reports whether dir holds checkpoints: a run that stopped before its first
// one (its log and run.json only) can be started again.
func HasCheckpoints(dir string) bool {
	entries, _ := os.ReadDir(CheckpointDir(dir))
	return len(entries) > 0
}

// Finish keeps of run directory dir's checkpoints what a finished run keeps (train.Finish:
// the newest, its weights only), holding dir's lock; it returns the bytes they took before
// and after. A directory without checkpoints is left as it is.
func Finish(dir string) (before, after int64, err error) {
	if !HasCheckpoints(dir) {
		return 0, 0, nil
	}
	d, err := Open(dir)
	if err != nil {
		return 0, 0, err
	}
	defer d.Close()
	return train.Finish(CheckpointDir(dir))
}

// LostSteps returns the steps DIR's log records when DIR holds no checkpoint to continue
// them from, and 0 when it holds one, has no log, or its log ends in a divergence (held-out
// loss +Inf) at a step no later than the run's first checkpoint (run.json's CheckpointEvery):
// that run never had a checkpoint and may be trained afresh. Steps are lost when the
// checkpoints are, for instance in a clone of a repository that committed the logs but not
// the checkpoints: training there from step 0 would replace the log. A log that cannot be
// read is an error.
func LostSteps(dir string) (int, error) {
	if HasCheckpoints(dir) {
		return 0, nil
	}
	log, err := ReadLog(LogPath(dir))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return 0, nil
	case err != nil:
		return 0, err
	case len(log) == 0:
		return 0, nil
	}
	last := log[len(log)-1]
	if math.IsInf(last.EvalLoss, 1) {
		if meta, err := ReadMeta(dir); err == nil && last.Step <= meta.Preset.Train.CheckpointEvery {
			return 0, nil
		}
	}
	return last.Step, nil
}

// ReadMeta reads DIR/run.json; the error wraps os.ErrNotExist when there is none.
func ReadMeta(dir string) (Meta, error) {
	var meta Meta
	b, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if err != nil {
		return meta, fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return meta, fmt.Errorf("%s: %w", filepath.Join(dir, MetaFile), err)
	}
	return meta, nil
}

// LogPath is the log of run directory dir: DIR/log.gz.
func LogPath(dir string) string { return filepath.Join(dir, LogFile) }

// Read reads DIR/run.json and DIR's log (LogPath).
func Read(dir string) (Meta, []train.Record, error) {
	meta, err := ReadMeta(dir)
	if err != nil {
		return meta, nil, err
	}
	log, err := ReadLog(LogPath(dir))
	return meta, log, err
}

// Replicas returns the replica directories of a multi-seed run directory (DIR/seed-<seed>,
// seed a decimal number), ordered by seed, or nil if dir is a single run.
func Replicas(dir string) []string {
	matches, _ := filepath.Glob(filepath.Join(dir, ReplicaPrefix+"*"))
	var dirs []string
	for _, m := range matches {
		if _, err := strconv.ParseUint(strings.TrimPrefix(filepath.Base(m), ReplicaPrefix), 10, 64); err == nil {
			if st, err := os.Stat(m); err == nil && st.IsDir() {
				dirs = append(dirs, m)
			}
		}
	}
	sort.Slice(dirs, func(i, j int) bool { return ReplicaSeed(dirs[i]) < ReplicaSeed(dirs[j]) })
	return dirs
}

// ReplicaSeed is the seed in a replica directory's name (0 if it has none).
func ReplicaSeed(dir string) uint64 {
	s, _ := strconv.ParseUint(strings.TrimPrefix(filepath.Base(dir), ReplicaPrefix), 10, 64)
	return s
}

// ReplicaDir is the directory of the replica of seed seed in multi-seed run directory dir.
func ReplicaDir(dir string, seed uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%s%d", ReplicaPrefix, seed))
}

// RunDirs returns dir's replicas, or dir itself if it is a single run.
func RunDirs(dir string) []string {
	if reps := Replicas(dir); len(reps) > 0 {
		return reps
	}
	return []string{dir}
}

// AddHosts returns hosts with each machine that m's spans name (Span.Host) appended once, in
// span order; "a machine not recorded" for spans recorded before run.json named them.
func AddHosts(hosts []string, m Meta) []string {
	for _, sp := range m.Spans {
		if h := cmp.Or(sp.Host, "a machine not recorded"); !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

// TrainedSeconds is the wall time a run has trained: the longest of its replicas' logs
// (train.Record.Seconds, resumes included), the replicas training at once.
func TrainedSeconds(logs ...[]train.Record) float64 {
	longest := 0.0
	for _, l := range logs {
		if n := len(l); n > 0 {
			longest = max(longest, l[n-1].Seconds)
		}
	}
	return longest
}
