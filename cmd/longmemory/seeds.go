package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/urnn-notebooks/longmemory/pkg/experiments"
	"github.com/urnn-notebooks/longmemory/pkg/runs"
)

// trainSeeds runs n replicas of the run that fs describes (its flags as set, -seeds and
// -jobs aside): replica r trains with seed base + r in DIR/seed-<base + r>, a run directory
// of its own (run.json, log.csv, checkpoints, lock), jobs replicas at a time. With -resume
// every replica continues from its checkpoints and a replica that never had any starts afresh
// (so -seeds 8 -resume adds four replicas to a run of four), while one whose log records steps
// its checkpoints no longer hold is refused, or trained again with -restart (runs.LostSteps);
// base is then the lowest seed found. A
// replica that diverges or fails is reported by index and seed; the others go on. A stop
// signal ends every running replica with a checkpoint and starts no new one.
//
// jobs defaults to runs.AtOnce(n) (see there for the measurements behind it).
func trainSeeds(fs *flag.FlagSet, out string, n, jobs int, resume bool, stdout, stderr io.Writer) error {
	var args []string
	var base uint64
	seedSet := false
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "seeds", "jobs", "out", "seed", "quiet":
		default:
			args = append(args, "-"+f.Name+"="+f.Value.String())
		}
		if f.Name == "seed" {
			base, seedSet = f.Value.(flag.Getter).Get().(uint64), true
		}
	})
	if !seedSet {
		if dirs := runs.Replicas(out); resume && len(dirs) > 0 {
			base = runs.ReplicaSeed(dirs[0])
		} else if p := fs.Lookup("preset").Value.String(); p != "" {
			preset, err := experiments.Lookup(p)
			if err != nil {
				return err
			}
			base = preset.Train.Seed
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("train: -out: %w", err)
	}
	type result struct {
		r    int
		seed uint64
		err  error
	}
	results := make([]result, n)
	var (
		mu      sync.Mutex
		stopErr error
		wg      sync.WaitGroup
	)
	next := make(chan int)
	for range jobs {
		wg.Go(func() {
			for r := range next {
				mu.Lock()
				stopped := stopErr != nil
				mu.Unlock()
				if stopped { // handed over before the stop signal ended another replica
					continue
				}
				seed := base + uint64(r)
				dir := runs.ReplicaDir(out, seed)
				rargs := append(slices.Clone(args), "-out="+dir, "-seed="+strconv.FormatUint(seed, 10), "-quiet")
				if lost, err := runs.LostSteps(dir); resume && !runs.HasCheckpoints(dir) && err == nil && lost == 0 { // never checkpointed: from step 0
					rargs = slices.DeleteFunc(rargs, func(a string) bool { return a == "-resume=true" })
				}
				var rout strings.Builder
				err := trainCmd(rargs, &rout, stderr)
				mu.Lock()
				results[r] = result{r, seed, err}
				var stop interface{ exitCode() int }
				if errors.As(err, &stop) && stopErr == nil {
					stopErr = err
				}
				if err == nil {
					fmt.Fprintf(stdout, "replica %d (seed %d): %s", r, seed, rout.String())
				} else {
					fmt.Fprintf(stderr, "replica %d (seed %d): %v\n", r, seed, err)
				}
				mu.Unlock()
			}
		})
	}
	for r := range n {
		mu.Lock()
		stop := stopErr != nil
		mu.Unlock()
		if stop {
			break
		}
		next <- r
	}
	close(next)
	wg.Wait()
	if stopErr != nil {
		return stopErr
	}
	var failed []string
	for _, res := range results {
		if res.err != nil {
			failed = append(failed, fmt.Sprintf("%d (seed %d)", res.r, res.seed))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("train: %d of %d replicas did not finish: %s; the others did (see above)", len(failed), n,
			strings.Join(failed, ", "))
	}
	fmt.Fprintf(stdout, "%d replicas (seeds %d…%d) in %s\n", n, base, base+uint64(n)-1, out)
	return nil
}
