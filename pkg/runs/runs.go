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
// train -seeds, the notebooks' TrainSeeds).
//
// Measured (cmd/bench rows model:hidden:task:T:xR, 2 cores, GoMLX v0.28.15): 8 replicas at
// once in one process (goroutines sharing the backend) took 0.53–0.57× (LSTM 40),
// 0.63–0.80× (uRNN 128), 0.74–0.85× (LT-ORNN 80) and 0.61–0.82× (tanh RNN 80) of the time of
// 8 runs in turn at copy T = 100 (two bench runs), 2 at once 0.71–0.94×; 8 uRNN 128 at T =
// 2000 peaked at 755 MiB (790 MiB after the uRNN's DenseW went through rnn.Times: cmd/bench
// -one urnn:128:copy:2000:x8). On an AVX2 host without AVX-512 (make bench, docs/bench.txt of
// 2026-11-25) the single runs are slower and use the two cores less well, and 8 at once took
// 0.69× (uRNN), 0.49× (LSTM), 0.50× (tanh) and 0.54× (LT-ORNN) of in turn; a uRNN 128 pair
// right after, 0.72×, and 8 uRNN 128 at T = 2000 peaked at 829 MiB. Profiled there (cmd/bench
// -one -cpuprofile, copy T = 100), a single uRNN 128 step keeps 1.6 cores busy and 8 at once
// 2.0, at 86 and 71 ms of CPU a replica-step: 43% of it in the AVX2 matmul kernels, 16% in
// transposes, 6% in slices, the rest in element-wise ops and the executor.
//
// One graph with a leading replica axis was measured too and is slower than runs in turn
// (train.BenchmarkReplicaLayouts). The uRNN's FourStep could share its DFT matrices across
// replicas (the diagonals applied to the states), so that 8 replicas would be one recurrence at
// batch 160, but that alone already costs more than 8 of Auto's DenseW in turn: 2571 µs a step
// against 8 × 303 µs, forward and backward (N = 128, the method of urnn.BenchmarkDFT). 8
// processes at once (cmd/bench -one, 20 steps each) took 1.36× (LT-ORNN 80) and 1.02× (uRNN
// 128) the time of 8 replicas in one process. At once, the replicas can gain at most what a
// single run leaves of the two cores: measured with cmd/bench -one (copy T = 100, taskset), a run on one
// core takes 1.55× (LT-ORNN 80), 1.56× (uRNN 128), 1.24× (LSTM 40), 1.46× (tanh 80) its time on
// two, so 8 at once need at least half that, 0.78×, 0.78×, 0.62×, 0.73× of 8 in turn, unless
// the replicas interleave better than one run alone. They do not: with the Go backend's options
// that make a run use one core (GOMLX_BACKEND=go:parallelism=1, with or without ops_sequential)
// a uRNN 128 step (copy T = 100) took 63–65 ms, and 8 replicas at once 254–268 ms (268–279 ms
// with the defaults): 8 × 64 ms / 2 cores, the bound, is where 8 at once already are.
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
