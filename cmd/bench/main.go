// Command bench measures training-step time, graph build time and peak memory of the
// project's models on the pure-Go backend (or whatever GOMLX_BACKEND selects), next to the
// project's PyTorch reference bench/torch_reference.py when Debian's python3-torch is
// installed, and prints one table with the ratios. `make bench` runs it. The reference times
// the uRNN two ways, its factors applied at every step ("torch ms") and W materialised once
// per training step ("torch W ms"); the uRNN's ratio is to the faster of the two.
//
// Each configuration runs in its own process, so that its peak resident memory (VmHWM) is
// its own. A configuration is model:hidden:task:T with the model kinds of pkg/experiments
// (experiments.Kinds), built as the presets build them (Preset.Build; an LT-RNN has σ = ReLU
// on adding, none on copy); the PyTorch reference takes the same names and has urnn, lstm,
// tanh and lt-ornn, timed up to T = torchMaxT. A training step is: forward over the whole
// sequence, backward (chunked BPTT), RMSProp update (pkg/train's defaults: no clipping), batch
// 20, as in the reference.
//
//	bench [-configs urnn:128:copy:100,...] [-steps 5] [-chunk N] [-json build/bench.json]
//	bench -one lru-deep:64:copy:10000:scan [-steps 2] [-cpuprofile f] [-eval-batch 100] [-block 32]
//	bench -against build/bench-REF [-configs urnn:512:adding:750,...] [-pairs 3]
//
// With -against, each configuration is timed by another build of bench (make bench-against
// REF=commit builds the one of that commit) and by this one, alternately, and the table gives
// the ratios: a change's speed-up measured on one machine in one run.
//
// The BPTT chunk is the one training chooses for the configuration's replicas at once
// (experiments.ChunkFor: the whole sequence up to T = 500, and up to 1000 while the states of
// the replicas at once are few, T/2 up to 1000 for the others, 128 steps beyond; the whole
// sequence for a "scan" configuration) unless -chunk sets one for every configuration.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/experiments"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn/celltest"
	"github.com/urnn-notebooks/longmemory/pkg/scan"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// DefaultConfigs are the configurations of issue "Performance": the papers' copy models at
// T = 100, 500 and 2000, and the uRNN 512 on adding at T = 750 (alone, and 8 seeds at once as the
// sweeps train it); then the uRNN's successors
// and Galvan's SCRN and ESN at the sizes of the successors/copy and successors/adding presets
// (notebook 11: copy T = 100 and 500, adding T = 400), which the PyTorch reference does not
// have; last, seeds trained at once (a fifth field xR: R replicas with seeds 0…R−1 in one
// process, as `longmemory train -seeds R -jobs R` runs them),
// whose "vs in turn" column is their time against R single runs one after the other (the
// median of seedPairs alternating pairs). The LSTM is "lstm" (torch.nn.LSTM's, no peephole)
// rather than the presets' "lstm-peephole", to match the reference. Then the LRU of issue 37
// (one layer, 64 complex units, Orvieto et al. 2023) on copy: step by step at T = 1000, and
// through its filter (an option field "scan": train.Config.Scan, scan.DiagonalFilter, the whole
// sequence in one graph) at T = 1000, 2000, 5000 and 10 000, for the step time and peak
// memory against T; S4D (64 complex modes) through its filter at the same lengths; the deep LRU
// of the orvieto presets (two lru.Block layers of 64 features and 64 complex units, through
// their filter) at T = 1000 … 10 000; and beside them the uRNN 128 and the LSTM 40, step by
// step with chunked BPTT, at T = 1000, 5000 and 10 000 (with the rows at 2000 above). The
// table ends with the growth of each such series in T (growth).
const DefaultConfigs = "urnn:128:copy:100,urnn:128:copy:500,urnn:128:copy:2000," +
	"lstm:40:copy:100,lstm:40:copy:500,lstm:40:copy:2000," +
	"tanh:80:copy:100,tanh:80:copy:500,tanh:80:copy:2000," +
	"lt-ornn:80:copy:100,lt-ornn:80:copy:500,lt-ornn:80:copy:2000," +
	"urnn:512:adding:750,urnn:512:adding:750:x8," +
	"fc-urnn:61:copy:100,fc-urnn:61:copy:500,exprnn:93:copy:100,exprnn:93:copy:500," +
	"scornn:93:copy:100,scornn:93:copy:500,scrn:61:copy:100,scrn:61:copy:500,esn:128:copy:100,esn:128:copy:500," +
	"fc-urnn:86:adding:400,exprnn:125:adding:400,scornn:125:adding:400,scrn:80:adding:400,esn:512:adding:400," +
	"urnn:128:copy:100:x2,urnn:128:copy:100:x8,lstm:40:copy:100:x2,lstm:40:copy:100:x8," +
	"tanh:80:copy:100:x2,tanh:80:copy:100:x8,lt-ornn:80:copy:100:x2,lt-ornn:80:copy:100:x8," +
	"lru:64:copy:1000,lru:64:copy:1000:scan,lru:64:copy:2000:scan,lru:64:copy:5000:scan,lru:64:copy:10000:scan," +
	"s4d:64:copy:1000:scan,s4d:64:copy:2000:scan,s4d:64:copy:5000:scan,s4d:64:copy:10000:scan," +
	"lru-deep:64:copy:1000:scan,lru-deep:64:copy:2000:scan,lru-deep:64:copy:5000:scan,lru-deep:64:copy:10000:scan," +
	"urnn:128:copy:1000,urnn:128:copy:5000,urnn:128:copy:10000,lstm:40:copy:1000,lstm:40:copy:5000,lstm:40:copy:10000"

// torchModels names, for each model kind the PyTorch reference has, the reference's models
// that time it: the uRNN twice, "urnn-dense" with W materialised once per step. The one place
// where our names meet the script's (which takes ours).
var torchModels = map[string][]string{"urnn": {"urnn", "urnn-dense"}, "lstm": {"lstm"}, "tanh": {"tanh"}, "lt-ornn": {"lt-ornn"}}

// Result is one configuration's measurement (one JSON object of the output file).
type Result struct {
	Model     string  `json:"model"`
	Hidden    int     `json:"hidden"`
	Task      string  `json:"task"`
	T         int     `json:"T"`
	Batch     int     `json:"batch"`
	Replicas  int     `json:"replicas"` // trained at once; StepMs is then the wall time of one step of all of them
	Chunk     int     `json:"chunk"`
	Scan      bool    `json:"scan,omitempty"` // the chunks computed at once, by the cell's filter (train.Config.Scan)
	Backend   string  `json:"backend"`
	StepMs    float64 `json:"step_ms"`  // median over the timed steps
	BuildMs   float64 `json:"build_ms"` // first step minus the median: graph building and compilation
	StepsPerS float64 `json:"steps_per_s"`
	PeakMiB   float64 `json:"peak_rss_mib"`                  // VmHWM of the process
	NodesFwd  int     `json:"nodes_per_step_forward"`        // graph nodes a time step adds: forward
	NodesGrad int     `json:"nodes_per_step_training"`       // and with the gradient (celltest.NodesPerStep)
	TorchMs   float64 `json:"torch_step_ms,omitempty"`       // the same model in PyTorch (uRNN: factors at every step)
	TorchWMs  float64 `json:"torch_dense_step_ms,omitempty"` // uRNN only: W materialised once per step (urnn-dense)
	Ratio     float64 `json:"ratio_to_torch,omitempty"`      // StepMs / the faster of TorchMs and TorchWMs
	InTurn    float64 `json:"ratio_to_in_turn,omitempty"`    // replicas: StepMs / (Replicas × the single run's StepMs)
	Loss      float64 `json:"loss"`
}

func main() {
	configs := flag.String("configs", DefaultConfigs, "comma-separated model:hidden:task:T[:xR][:scan], model in "+
		strings.Join(experiments.Kinds, "|")+" (PyTorch reference: "+strings.Join(slices.Sorted(maps.Keys(torchModels)), "|")+"), task in copy|adding")
	steps := flag.Int("steps", 5, "timed steps per configuration (after one untimed first step)")
	longSteps := flag.Int("long-steps", 2, "timed steps for configurations with T > 500 (they take seconds per step)")
	chunk := flag.Int("chunk", -1, "BPTT chunk length (0: whole sequence in one graph; -1: experiments.ChunkFor for the replicas at once, 0 with scan)")
	jsonOut := flag.String("json", "build/bench.json", "file to write the results to")
	torchScript := flag.String("torch", "bench/torch_reference.py", "PyTorch reference script, run by /usr/bin/python3 ('' to skip)")
	one := flag.String("one", "", "measure one configuration and print its JSON (no table, no PyTorch)")
	evalBatch := flag.Int("eval-batch", 20, "with -one: sequences in the held-out batch, evaluated once, on the last step (train.Config.EvalBatch; the presets' default is 100)")
	block := flag.Int("block", scan.Block, "with -one: the block length C of package scan (scan.Block)")
	ref := flag.String("against", "", "another build of bench (the build before a change): time each configuration with it and with this one in alternating pairs and print the ratios (no PyTorch); make bench-against builds it")
	pairs := flag.Int("pairs", 3, "with -against: alternating pairs per configuration")
	cpuProfile := flag.String("cpuprofile", "", "with -one: write a CPU profile of the timed steps (of all replicas, from the step every one has compiled) to this file (go tool pprof)")
	flag.Parse()
	if *one != "" {
		if *cpuProfile != "" {
			f, err := os.Create(*cpuProfile)
			if err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
				os.Exit(1)
			}
			profileFile = f
		}
		scan.Block = *block
		r, err := measure(*one, *steps, *chunk, *evalBatch)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		json.NewEncoder(os.Stdout).Encode(r)
		return
	}
	if *ref != "" {
		cs, err := against(os.Stdout, *ref, strings.Split(*configs, ","), *steps, *longSteps, *chunk, *pairs)
		if err == nil {
			err = writeJSON(*jsonOut, cs)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(strings.Split(*configs, ","), *steps, *longSteps, *chunk, *jsonOut, *torchScript); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(configs []string, steps, longSteps, chunk int, jsonOut, torchScript string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	for _, cfg := range configs {
		if _, _, err := parse(cfg); err != nil {
			return err
		}
	}
	torch, note := newTorchRef(torchScript)
	// Ours and the reference alternate, configuration by configuration, so that each ratio
	// comes from adjacent measurements: PyTorch's thread pool slows down several times when
	// anything else runs on a 2-core machine, and the load changes over a long bench.
	// measureOne runs one configuration in a process of its own (so that each starts from a
	// fresh heap and its peak memory is its own).
	measureOne := func(cfg string) (Result, error) {
		var out bytes.Buffer
		cmd := exec.Command(self, "-one", cfg, "-steps", strconv.Itoa(stepsFor(cfg, steps, longSteps)), "-chunk", strconv.Itoa(chunk))
		cmd.Stdout, cmd.Stderr = &out, os.Stderr
		if err := cmd.Run(); err != nil {
			return Result{}, fmt.Errorf("%s: %w", cfg, err)
		}
		var r Result
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			return Result{}, fmt.Errorf("%s: %w", cfg, err)
		}
		fmt.Fprintf(os.Stderr, "bench: %-26s %9.1f ms/step  build %8.1f ms  peak %6.0f MiB\n", cfg, r.StepMs, r.BuildMs, r.PeakMiB)
		return r, nil
	}
	var results []Result
	for _, cfg := range configs {
		r, err := measureOne(cfg)
		if err != nil {
			return err
		}
		if r.Replicas > 1 {
			// Against the same configuration trained alone, measured next to it (right after
			// the first replicas' run, right before the others), in seedPairs alternating
			// pairs: the row keeps the pair of the median ratio (the machine's load moves the
			// ratio of one pair by ±15%).
			single := strings.Join(slices.DeleteFunc(strings.Split(cfg, ":"), func(f string) bool { return strings.HasPrefix(f, "x") }), ":")
			type pair struct{ at, alone Result }
			var pairs []pair
			for k := range seedPairs {
				alone, err := measureOne(single)
				if err != nil {
					return err
				}
				if k > 0 {
					if r, err = measureOne(cfg); err != nil {
						return err
					}
				}
				r.InTurn = r.StepMs / (float64(r.Replicas) * alone.StepMs)
				pairs = append(pairs, pair{r, alone})
			}
			slices.SortFunc(pairs, func(a, b pair) int { return cmp.Compare(a.at.InTurn, b.at.InTurn) })
			r = pairs[len(pairs)/2].at
		} else if p, _, _ := parse(cfg); torch != nil && p.Task.T <= torchMaxT {
			// Ours times stepsFor(…) steps after the compiling one and drops the last (it also
			// evaluates); the reference gets the same number of timed steps (it adds a warm-up).
			ms, err := torch.times(cfg, max(1, stepsFor(cfg, steps, longSteps)-1))
			if err != nil {
				note, torch = err.Error(), nil
			} else if len(ms) > 0 {
				r.TorchMs = ms[0]
				if len(ms) > 1 {
					r.TorchWMs = ms[1]
				}
			}
		}
		if best := fastest(r.TorchMs, r.TorchWMs); best > 0 {
			r.Ratio = r.StepMs / best
		}
		results = append(results, r)
	}
	if torch != nil {
		note = torch.note()
	}
	printTable(results, note)
	return writeJSON(jsonOut, results)
}

// writeJSON writes v to path, indented, making its directory.
func writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return os.WriteFile(path, b, 0o644)
}

// fastest returns the smallest positive time of ms, or 0 if there is none.
func fastest(ms ...float64) float64 {
	best := 0.0
	for _, m := range ms {
		if m > 0 && (best == 0 || m < best) {
			best = m
		}
	}
	return best
}

// parse reads configuration model:hidden:task:T[:xR][:scan] as a preset's model and task, the
// number of replicas trained at once (1 without an xR field) and whether the chunks are
// computed at once, by the cell's filter (train.Config.Scan; the LRU and S4D).
func parse(cfg string) (p experiments.Preset, replicas int, err error) {
	f := strings.Split(cfg, ":")
	if len(f) < 4 || len(f) > 6 {
		return p, 0, fmt.Errorf("config %q: want model:hidden:task:T, then optionally xR and scan", cfg)
	}
	replicas = 1
	var err3 error
	for _, opt := range f[4:] {
		if opt == "scan" {
			p.Train.Scan = true
			continue
		}
		r, ok := strings.CutPrefix(opt, "x")
		replicas, err3 = strconv.Atoi(r)
		if !ok || replicas < 1 || replicas > 16 {
			err3 = fmt.Errorf("bad replicas")
		}
	}
	hidden, err1 := strconv.Atoi(f[1])
	T, err2 := strconv.Atoi(f[3])
	p.Model, p.Task = experiments.Model{Kind: f[0], Hidden: hidden}, experiments.Task{Kind: f[2], T: T}
	switch {
	case !slices.Contains(experiments.Kinds, f[0]):
		renamed := map[string]string{"rnn": " (rnn is now tanh)", "ltrnn": " (ltrnn is now lt-ornn)"}[f[0]]
		err = fmt.Errorf("config %q: model %q, want one of %s%s", cfg, f[0], strings.Join(experiments.Kinds, ", "), renamed)
	case f[2] != "copy" && f[2] != "adding":
		err = fmt.Errorf("config %q: task %q, want copy or adding", cfg, f[2])
	case err1 != nil || hidden < 1:
		err = fmt.Errorf("config %q: hidden %q, want a positive integer", cfg, f[1])
	case err2 != nil || T < 1:
		err = fmt.Errorf("config %q: T %q, want a positive integer", cfg, f[3])
	case err3 != nil:
		err = fmt.Errorf("config %q: options %q, want x1 … x16 (replicas) or scan", cfg, f[4:])
	}
	return p, replicas, err
}

// measure trains one configuration for steps+1 steps and reports the median step time;
// with R replicas, R trainers (seeds 0…R−1) run at once, each in its own goroutine, and the
// step time is the wall time from the end of the last one's first (compiling) step to the
// end of the last one, divided by steps. The last step also evaluates evalBatch held-out
// sequences (in slices of the batch, train.Trainer.EvaluateBatch), whose memory the peak counts.
// profileFile, when set (-cpuprofile), receives a CPU profile of measure's timed steps.
var profileFile *os.File

func measure(cfg string, steps, chunk, evalBatch int) (Result, error) {
	p, replicas, err := parse(cfg)
	if err != nil {
		return Result{}, err
	}
	if chunk < 0 {
		state, err := p.Model.State()
		if err != nil {
			return Result{}, err
		}
		chunk = experiments.ChunkFor(p.Task.T, state, replicas)
		if p.Train.Scan {
			chunk = 0 // the filter's graph hardly grows with T, its memory is the inputs' and outputs' (package scan)
		}
	}
	b, err := backend.New()
	if err != nil {
		return Result{}, err
	}
	trainers := make([]*train.Trainer, replicas)
	for r := range trainers {
		cell, task, err := p.Build()
		if err != nil {
			return Result{}, err
		}
		trainers[r], err = train.New(b, cell, task, train.Config{Steps: steps + 1, Batch: 20, Chunk: chunk, EvalEvery: steps + 1, EvalBatch: evalBatch, Seed: uint64(r),
			Scan: p.Train.Scan})
		if err != nil {
			return Result{}, err
		}
	}
	times := make([][]float64, replicas)
	firstDone, end := make([]time.Time, replicas), make([]time.Time, replicas)
	var loss float64
	var wg sync.WaitGroup
	var mu sync.Mutex
	compiled := 0 // replicas past their first (compiling) step: the profile starts with the last
	errs := make([]error, replicas)
	for r, tr := range trainers {
		wg.Go(func() {
			last := time.Now()
			errs[r] = tr.Run(context.Background(), func(rec train.Record) {
				now := time.Now()
				times[r] = append(times[r], float64(now.Sub(last).Microseconds())/1000)
				if r == 0 {
					loss = rec.Loss
				}
				if len(times[r]) == 1 {
					firstDone[r] = now
					mu.Lock()
					if compiled++; compiled == replicas && profileFile != nil {
						pprof.StartCPUProfile(profileFile)
					}
					mu.Unlock()
				}
				last = time.Now()
			})
			end[r] = time.Now()
		})
	}
	wg.Wait()
	if profileFile != nil {
		pprof.StopCPUProfile()
		profileFile.Close()
	}
	if err := errors.Join(errs...); err != nil {
		return Result{}, err
	}
	// The last step also evaluates the held-out batch: leave it out of the median.
	timed := slices.Clone(times[0][1 : len(times[0])-1])
	if len(timed) == 0 {
		timed = times[0][1:]
	}
	slices.Sort(timed)
	med := timed[len(timed)/2]
	first := times[0][0]
	if replicas > 1 {
		med = float64(slices.MaxFunc(end, time.Time.Compare).Sub(slices.MaxFunc(firstDone, time.Time.Compare)).Microseconds()) / 1000 / float64(steps)
		first = 0
		for _, t := range times {
			first = max(first, t[0])
		}
	}
	peak := peakMiB() // before counting nodes, which builds graphs of its own
	fresh, _, err := p.Build()
	if err != nil {
		return Result{}, err
	}
	nodes, err := celltest.NodesPerStep(b, fresh)
	if err != nil {
		return Result{}, err
	}
	return Result{Model: p.Model.Kind, Hidden: p.Model.Hidden, Task: p.Task.Kind, T: p.Task.T, Batch: 20, Replicas: replicas, Chunk: chunk, Scan: p.Train.Scan, Backend: b.Name(),
		StepMs: med, BuildMs: max(0, first-med), StepsPerS: 1000 / med, PeakMiB: peak, NodesFwd: nodes.Forward,
		NodesGrad: nodes.Training, Loss: loss}, nil
}

// peakMiB returns the process's peak resident set size (VmHWM) in MiB, or 0 if unknown.
func peakMiB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// torchMaxT is the longest task length at which the PyTorch reference is timed: its uRNN takes
// about a minute and a half a step at copy T = 2000 (docs/bench.txt) and grows with T, so that
// the rows of the growth in T (T = 5000 and 10 000) would add over an hour to a bench and say
// nothing the T = 2000 rows do not.
const torchMaxT = 2000

// seedPairs is how many alternating pairs (the configuration alone, then its replicas at once)
// give a seeds row its ratio to the runs in turn.
const seedPairs = 3

// stepsFor returns the number of timed steps for cfg: longSteps when T > 500, 4 × steps for
// replicas trained at once.
func stepsFor(cfg string, steps, longSteps int) int {
	p, replicas, err := parse(cfg)
	switch {
	case err == nil && p.Task.T > 500:
		return longSteps
	case replicas > 1:
		// Replicas start and end apart (each compiles its own graphs): a longer window
		// keeps the ragged edges a small part of the time measured.
		return 4 * steps
	}
	return steps
}

// torchRef is the project's PyTorch reference, bench/torch_reference.py, run by Debian's
// /usr/bin/python3 (one process per configuration and reference model of torchModels).
type torchRef struct {
	script, version string
}

// newTorchRef returns the reference, or nil and a note saying why there is none.
func newTorchRef(script string) (*torchRef, string) {
	if script == "" {
		return nil, "PyTorch reference skipped (-torch '')"
	}
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Sprintf("PyTorch reference not run: %s not found", script)
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import torch").Run(); err != nil {
		return nil, "PyTorch reference not run: /usr/bin/python3 has no torch (apt-get install python3-torch)"
	}
	return &torchRef{script: script}, ""
}

// times runs the reference on cfg with timed steps and returns its step times in
// torchModels' order (none for a model the reference lacks), or an error naming the failure.
func (t *torchRef) times(cfg string, timed int) ([]float64, error) {
	kind, rest, _ := strings.Cut(cfg, ":")
	models := torchModels[kind]
	ms := make([]float64, len(models))
	for j, model := range models {
		tc := model + ":" + rest
		cmd := exec.Command("/usr/bin/python3", t.script, "--configs", tc, "--steps", strconv.Itoa(timed), "--threads", "2")
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("PyTorch reference failed on %s: %v", tc, err)
		}
		for line := range strings.Lines(string(out)) { // the configuration's JSON line
			var r struct {
				StepMs float64 `json:"step_ms"`
				Torch  string  `json:"torch"`
			}
			if json.Unmarshal(bytes.TrimSpace([]byte(line)), &r) == nil && r.StepMs > 0 {
				ms[j], t.version = r.StepMs, r.Torch
			}
		}
		if ms[j] == 0 {
			return nil, fmt.Errorf("PyTorch reference gave no step time on %s", tc)
		}
		fmt.Fprintf(os.Stderr, "bench: torch %-26s %9.1f ms/step\n", tc, ms[j])
	}
	return ms, nil
}

// note names the reference for the table's last line.
func (t *torchRef) note() string {
	version := ""
	if t.version != "" {
		version = " (PyTorch " + t.version + ")"
	}
	return "PyTorch reference: bench/torch_reference.py" + version + ", CPU, 2 threads, each configuration right after ours (" +
		strings.Join(slices.Sorted(maps.Keys(torchModels)), ", ") + "); " +
		"torch W ms: the uRNN with W materialised once per step; the uRNN's ratio is to the faster of the two"
}

func printTable(results []Result, note string) {
	fmt.Printf("%-13s %6s %-7s %5s %8s %6s %10s %10s %8s %9s %10s %10s %11s %7s %10s\n", "model", "hidden", "task", "T", "replicas", "chunk",
		"step ms", "build ms", "steps/s", "peak MiB", "nodes/step", "torch ms", "torch W ms", "ratio", "vs in turn")
	ms := func(v float64) string {
		if v > 0 {
			return fmt.Sprintf("%.1f", v)
		}
		return "-"
	}
	for _, r := range results {
		ratio := "-"
		if r.Ratio > 0 {
			ratio = fmt.Sprintf("%.2f×", r.Ratio)
		}
		inTurn := "-"
		if r.InTurn > 0 {
			inTurn = fmt.Sprintf("%.2f×", r.InTurn)
		}
		name := r.Model
		if r.Scan {
			name += " scan"
		}
		fmt.Printf("%-13s %6d %-7s %5d %8d %6d %10.1f %10.1f %8.2f %9.0f %10s %10s %11s %7s %10s\n", name, r.Hidden, r.Task, r.T, r.Replicas, r.Chunk,
			r.StepMs, r.BuildMs, r.StepsPerS, r.PeakMiB, fmt.Sprintf("%d/%d", r.NodesFwd, r.NodesGrad), ms(r.TorchMs), ms(r.TorchWMs), ratio, inTurn)
	}
	fmt.Println(note)
	for _, g := range growth(results) {
		fmt.Println(g)
	}
}

// longT is the shortest T of the series whose growth in T the table reports (issue 37:
// 1000 … 10 000).
const longT = 1000

// growth returns, for each series of single-replica rows of one model, size, task and way of
// computing (step by step or its filter) measured at two or more T ≥ longT, a line with the
// exponents a and b of step time ∝ T^a and peak memory ∝ T^b, each the slope of the
// least-squares line through (log T, log value) (gonum's stat.LinearRegression), and the
// ratios of the longest T's values to the shortest's. Peak memory includes the process's
// fixed part (the runtime, the compiled graphs), so b understates the growth of the
// activations.
func growth(results []Result) []string {
	type key struct {
		model, task string
		hidden      int
		scan        bool
	}
	series := map[key][]Result{}
	var order []key
	for _, r := range results {
		if r.Replicas != 1 || r.T < longT || r.StepMs <= 0 {
			continue
		}
		k := key{r.Model, r.Task, r.Hidden, r.Scan}
		if series[k] == nil {
			order = append(order, k)
		}
		series[k] = append(series[k], r)
	}
	var out []string
	for _, k := range order {
		rs := series[k]
		slices.SortFunc(rs, func(a, b Result) int { return cmp.Compare(a.T, b.T) })
		if rs[0].T == rs[len(rs)-1].T {
			continue
		}
		logT, logMs, logMiB := make([]float64, len(rs)), make([]float64, len(rs)), make([]float64, len(rs))
		for i, r := range rs {
			logT[i], logMs[i], logMiB[i] = math.Log(float64(r.T)), math.Log(r.StepMs), math.Log(max(r.PeakMiB, 1))
		}
		_, a := stat.LinearRegression(logT, logMs, nil, false)
		_, b := stat.LinearRegression(logT, logMiB, nil, false)
		name := k.model
		if k.scan {
			name += " scan"
		}
		first, last := rs[0], rs[len(rs)-1]
		out = append(out, fmt.Sprintf("growth in T: %s %d %s, T %d–%d (%d rows): step time ∝ T^%.2f (×%.1f), peak memory ∝ T^%.2f (×%.1f)",
			name, k.hidden, k.task, first.T, last.T, len(rs), a, last.StepMs/first.StepMs, b, last.PeakMiB/max(first.PeakMiB, 1)))
	}
	return out
}
