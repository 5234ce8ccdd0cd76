package claims

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/urnn-notebooks/longmemory/pkg/runs"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// Load reads the run directory dir (its replicas, or dir itself as one seed) into a Run named
// for the directory; nil, nil when dir does not exist. A replica with no run.json yet (just
// starting) counts as a seed with an empty log. Replicas that disagree on the task, its
// baseline or the held-out set's size are an error: they are not seeds of one run.
func Load(dir string) (*Run, error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	r := &Run{Name: filepath.Base(dir), Plateau: math.NaN()}
	for _, rep := range runs.RunDirs(dir) {
		meta, log, err := runs.Read(rep)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		seed := Seed{Seed: runs.ReplicaSeed(rep), Log: log}
		switch t, err := runs.ReadTest(rep); {
		case err == nil:
			seed.Test = &t
		case !errors.Is(err, os.ErrNotExist):
			return nil, err
		}
		r.Seeds = append(r.Seeds, seed)
		if meta.Preset.Task.Kind == "" {
			continue
		}
		if r.Task != "" && (r.Task != meta.Preset.Task.Kind || r.Baseline != meta.Baseline || r.EvalBatch != meta.Preset.Train.EvalBatch) {
			return nil, fmt.Errorf("claims: %s: task %q, baseline %g, %d held-out sequences; its other replicas: %q, %g, %d",
				rep, meta.Preset.Task.Kind, meta.Baseline, meta.Preset.Train.EvalBatch, r.Task, r.Baseline, r.EvalBatch)
		}
		r.Task, r.Baseline, r.EvalBatch = meta.Preset.Task.Kind, meta.Baseline, meta.Preset.Train.EvalBatch
		if meta.Preset.Task.Kind == "varcopy" && math.IsNaN(r.Plateau) {
			task, err := meta.Preset.Task.Build()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", rep, err)
			}
			r.Plateau = task.(tasks.VariableCopy).RecallBaseline()
		}
		r.Hosts = runs.AddHosts(r.Hosts, meta)
	}
	return r, nil
}

// LoadAll reads every run the claims name from runsDir, once each.
func LoadAll(runsDir string, cs ...[]Claim) (map[string]*Run, error) {
	out := map[string]*Run{}
	for _, list := range cs {
		for _, c := range list {
			for _, name := range slices.Concat(c.Learn, c.Fail) {
				if _, ok := out[name]; ok {
					continue
				}
				r, err := Load(filepath.Join(runsDir, name))
				if err != nil {
					return nil, err
				}
				out[name] = r
			}
		}
	}
	return out, nil
}
