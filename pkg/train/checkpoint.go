package train

import (
	"encoding/gob"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
)

// checkpoint is what Save writes: every variable (model and optimizer), the step, the
// log, and what the run was, so that Resume can refuse a checkpoint of another run.
type checkpoint struct {
	Version int
	Model   string // the cell's type and configuration
	Task    string
	Seed    uint64
	Step    int
	Log     []Record
	Vars    []savedVar
}

// savedVar is one variable; exactly one of the value slices is set, by dtype.
type savedVar struct {
	Path  string
	DType string
	Dims  []int
	F32   []float32
	F64   []float64
	I32   []int32
	I64   []int64
}

// save returns the variable's value as a savedVar.
func save(path string, val *tensors.Tensor) (savedVar, error) {
	sv := savedVar{Path: path, DType: val.DType().String(), Dims: val.Shape().Dimensions}
	switch val.DType() {
	case dtypes.Float32:
		sv.F32 = tensors.MustCopyFlatData[float32](val)
	case dtypes.Float64:
		sv.F64 = tensors.MustCopyFlatData[float64](val)
	case dtypes.Int32:
		sv.I32 = tensors.MustCopyFlatData[int32](val)
	case dtypes.Int64:
		sv.I64 = tensors.MustCopyFlatData[int64](val)
	default:
		return sv, fmt.Errorf("train: checkpoint: variable %s has dtype %s, which checkpoints do not support", path, val.DType())
	}
	return sv, nil
}

// tensor returns the saved value as a tensor.
func (sv savedVar) tensor() *tensors.Tensor {
	switch {
	case sv.F32 != nil:
		return tensors.FromFlatDataAndDimensions(sv.F32, sv.Dims...)
	case sv.F64 != nil:
		return tensors.FromFlatDataAndDimensions(sv.F64, sv.Dims...)
	case sv.I32 != nil:
		return tensors.FromFlatDataAndDimensions(sv.I32, sv.Dims...)
	default:
		return tensors.FromFlatDataAndDimensions(sv.I64, sv.Dims...)
	}
}

const (
	checkpointVersion = 2
	checkpointPrefix  = "ckpt-"
	checkpointSuffix  = ".gob"
	checkpointsKept   = 2
)

func (t *Trainer) identity() (modelID, taskID string) {
	return fmt.Sprintf("%T%+v", t.Cell, t.Cell), t.Task.String()
}

// Save writes a checkpoint of the current step into Config.CheckpointDir (created if
// needed) atomically (a temporary file renamed into place) and keeps the latest two.
func (t *Trainer) Save() error {
	dir := t.Config.CheckpointDir
	if dir == "" {
		return fmt.Errorf("train: Save: Config.CheckpointDir is empty")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("train: checkpoint directory: %w", err)
	}
	modelID, taskID := t.identity()
	ck := checkpoint{Version: checkpointVersion, Model: modelID, Task: taskID, Seed: t.Config.Seed, Step: t.Step, Log: t.Log}
	for v := range t.Store.RootScope().IterVariables() {
		sv, err := save(v.Path(), v.MustValue())
		if err != nil {
			return err
		}
		ck.Vars = append(ck.Vars, sv)
	}
	sort.Slice(ck.Vars, func(i, j int) bool { return ck.Vars[i].Path < ck.Vars[j].Path })
	f, err := os.CreateTemp(dir, ".tmp-"+checkpointPrefix)
	if err != nil {
		return fmt.Errorf("train: checkpoint directory %s is not writable: %w", dir, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after the rename
	if err := gob.NewEncoder(f).Encode(&ck); err != nil {
		f.Close()
		return fmt.Errorf("train: writing checkpoint: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	path := filepath.Join(dir, fmt.Sprintf("%s%09d%s", checkpointPrefix, t.Step, checkpointSuffix))
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("train: writing checkpoint: %w", err)
	}
	t.LastCheckpoint = path
	all, _ := checkpoints(dir)
	for len(all) > checkpointsKept {
		os.Remove(all[0])
		all = all[1:]
	}
	return nil
}

// checkpoints lists the checkpoint files of dir, oldest first.
func checkpoints(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, checkpointPrefix) && strings.HasSuffix(n, checkpointSuffix) {
			out = append(out, filepath.Join(dir, n))
		}
	}
	sort.Strings(out) // zero-padded step numbers sort in order
	return out, nil
}

// Resume restores the latest checkpoint of Config.CheckpointDir and reports whether there
// was one. A checkpoint of another model, task or seed, or an unreadable one, is an error
// that names the file; nothing is changed then, on disk or in the Trainer.
func (t *Trainer) Resume() (bool, error) {
	if t.Config.CheckpointDir == "" {
		return false, fmt.Errorf("train: Resume: Config.CheckpointDir is empty")
	}
	all, err := checkpoints(t.Config.CheckpointDir)
	if os.IsNotExist(err) || (err == nil && len(all) == 0) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	path := all[len(all)-1]
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var ck checkpoint
	if err := gob.NewDecoder(f).Decode(&ck); err != nil {
		return false, fmt.Errorf("train: checkpoint %s is corrupted or not a checkpoint: %v", path, err)
	}
	modelID, taskID := t.identity()
	switch {
	case ck.Version != checkpointVersion:
		return false, fmt.Errorf("train: checkpoint %s has version %d, want %d", path, ck.Version, checkpointVersion)
	case ck.Model != modelID:
		return false, fmt.Errorf("train: checkpoint %s is of model %s, this run is %s", path, ck.Model, modelID)
	case ck.Task != taskID:
		return false, fmt.Errorf("train: checkpoint %s is of task %s, this run is %s", path, ck.Task, taskID)
	case ck.Seed != t.Config.Seed:
		return false, fmt.Errorf("train: checkpoint %s has seed %d, this run %d", path, ck.Seed, t.Config.Seed)
	case ck.Step > t.Config.Steps:
		return false, fmt.Errorf("train: checkpoint %s is at step %d, beyond Config.Steps = %d", path, ck.Step, t.Config.Steps)
	}
	// Check everything before changing anything.
	values := make([]*tensors.Tensor, len(ck.Vars))
	for i, sv := range ck.Vars {
		v := t.Store.GetVariable(sv.Path)
		if v == nil {
			return false, fmt.Errorf("train: checkpoint %s has variable %s, which this run does not", path, sv.Path)
		}
		if fmt.Sprint(v.Shape().Dimensions) != fmt.Sprint(sv.Dims) {
			return false, fmt.Errorf("train: checkpoint %s: variable %s has shape %v, this run %v", path, sv.Path, sv.Dims, v.Shape().Dimensions)
		}
		if sv.DType != v.DType().String() {
			return false, fmt.Errorf("train: checkpoint %s: variable %s is %s, this run's is %s", path, sv.Path, sv.DType, v.DType())
		}
		values[i] = sv.tensor()
	}
	for i, sv := range ck.Vars {
		t.Store.GetVariable(sv.Path).MustSetValue(values[i])
	}
	t.Step, t.Log, t.LastCheckpoint = ck.Step, ck.Log, path
	return true, nil
}
