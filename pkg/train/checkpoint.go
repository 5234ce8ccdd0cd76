package train

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/urnn-notebooks/longmemory/pkg/shuffle"
)

// checkpoint is what Save writes: every variable (model and optimizer), the step, and what
// the run was, so that Resume can refuse a checkpoint of another run; the log only for a
// trainer without Trainer.SaveLog. A final checkpoint (Finish) holds the variables outside
// OptimizerScope only.
type checkpoint struct {
	Version int
	Model   string // the cell's type and configuration (Describe)
	Task    string // the task (DescribeTask)
	Seed    uint64
	Step    int
	Log     []Record
	Vars    []savedVar
	Final   bool
}

// savedVar is one variable: floating-point values in Shuffled (package shuffle), which gzip
// compresses, integers in I32 or I64. Reading moves Shuffled into F32 or F64 (unshuffle).
type savedVar struct {
	Path     string
	DType    string
	Dims     []int
	Shuffled []byte
	F32      []float32
	F64      []float64
	I32      []int32
	I64      []int64
}

// save returns the variable's value as a savedVar.
func save(path string, val *tensors.Tensor) (savedVar, error) {
	sv := savedVar{Path: path, DType: val.DType().String(), Dims: val.Shape().Dimensions}
	switch val.DType() {
	case dtypes.Float32:
		sv.Shuffled = shuffle.Encode(nil, tensors.MustCopyFlatData[float32](val))
	case dtypes.Float64:
		sv.Shuffled = shuffle.Encode(nil, tensors.MustCopyFlatData[float64](val))
	case dtypes.Int32:
		sv.I32 = tensors.MustCopyFlatData[int32](val)
	case dtypes.Int64:
		sv.I64 = tensors.MustCopyFlatData[int64](val)
	default:
		return sv, fmt.Errorf("train: checkpoint: variable %s has dtype %s, which checkpoints do not support", path, val.DType())
	}
	return sv, nil
}

// unshuffle moves Shuffled into F32 or F64; the error says the sizes disagree.
func (sv *savedVar) unshuffle() error {
	if sv.Shuffled == nil {
		return nil
	}
	n := 1
	for _, d := range sv.Dims {
		n *= d
	}
	var err error
	var rest []byte
	switch sv.DType {
	case dtypes.Float32.String():
		sv.F32, rest, err = shuffle.Decode[float32](sv.Shuffled, n)
	case dtypes.Float64.String():
		sv.F64, rest, err = shuffle.Decode[float64](sv.Shuffled, n)
	default:
		return fmt.Errorf("variable %s of dtype %s holds shuffled floats", sv.Path, sv.DType)
	}
	if err == nil && len(rest) > 0 {
		err = fmt.Errorf("%d bytes more than its shape %v holds", len(rest), sv.Dims)
	}
	if err != nil {
		return fmt.Errorf("variable %s: %w", sv.Path, err)
	}
	sv.Shuffled = nil
	return nil
}

// len returns the number of saved values.
func (sv savedVar) len() int { return len(sv.F32) + len(sv.F64) + len(sv.I32) + len(sv.I64) }

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

// A checkpoint file is the gzip'd gob encoding of a checkpoint followed by a trailer: the 8
// bytes of checksumMagic and the SHA-256 of the gzip stream. It holds no log when the trainer
// keeps the log elsewhere (Trainer.SaveLog, LoadLog). Versions before 6 (ungzip'd, holding
// the log, the model and task recorded in older forms) are no longer read: every run was
// rewritten in version 6 once.
const (
	checkpointVersion = 6
	checkpointPrefix  = "ckpt-"
	checkpointSuffix  = ".gob"
	checkpointsKept   = 2 // while a run trains: the newest and, should it be cut short, the one before
	checksumMagic     = "LMSHA256"
	trailerSize       = len(checksumMagic) + sha256.Size
	// TempPrefix starts the names of checkpoints being written; a killed run can leave
	// such files behind, which RemoveStaleTemp deletes.
	TempPrefix = ".tmp-" + checkpointPrefix
)

// identity returns what a checkpoint of t records of its model (Describe) and task
// (DescribeTask).
func (t *Trainer) identity() (modelID, taskID string) {
	return Describe(t.Cell), DescribeTask(t.Task)
}

// Save writes a checkpoint of the current step into t.CheckpointDir (created if needed)
// atomically (a temporary file renamed into place) and keeps the latest two. With SaveLog set,
// it first writes the log there, so that a checkpoint never runs ahead of its log.
func (t *Trainer) Save() error { return t.save(checkpointsKept) }

// SaveNewest writes a checkpoint of the current step as Save does and removes every older one.
func (t *Trainer) SaveNewest() error { return t.save(1) }

// save is Save keeping the latest keep checkpoints: Run keeps only the newest when it ends
// (at Config.Steps or stopped), since that one was written whole.
func (t *Trainer) save(keep int) error {
	dir := t.CheckpointDir
	if dir == "" {
		return fmt.Errorf("train: Save: Trainer.CheckpointDir is empty")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("train: checkpoint directory: %w", err)
	}
	modelID, taskID := t.identity()
	ck := checkpoint{Version: checkpointVersion, Model: modelID, Task: taskID, Seed: t.Config.Seed, Step: t.Step}
	if t.SaveLog == nil {
		ck.Log = t.Log
	} else if err := t.SaveLog(t.Log); err != nil {
		return fmt.Errorf("train: the log, written before the checkpoint: %w", err)
	}
	for v := range t.Store.RootScope().IterVariables() {
		sv, err := save(v.Path(), v.MustValue())
		if err != nil {
			return err
		}
		ck.Vars = append(ck.Vars, sv)
	}
	sort.Slice(ck.Vars, func(i, j int) bool { return ck.Vars[i].Path < ck.Vars[j].Path })
	path, err := writeCheckpoint(dir, &ck)
	if err != nil {
		return err
	}
	t.LastCheckpoint = path
	all, _ := checkpoints(dir)
	for len(all) > keep {
		os.Remove(all[0])
		all = all[1:]
	}
	return nil
}

// writeCheckpoint writes ck into dir as the checkpoint of its step, atomically (a temporary
// file renamed into place), and returns its path.
func writeCheckpoint(dir string, ck *checkpoint) (string, error) {
	var payload bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&payload, gzip.BestCompression)
	if err := errors.Join(gob.NewEncoder(zw).Encode(ck), zw.Close()); err != nil {
		return "", fmt.Errorf("train: encoding checkpoint: %w", err)
	}
	sum := sha256.Sum256(payload.Bytes())
	payload.WriteString(checksumMagic)
	payload.Write(sum[:])
	f, err := os.CreateTemp(dir, TempPrefix)
	if err != nil {
		return "", fmt.Errorf("train: checkpoint directory %s is not writable: %w", dir, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after the rename
	if _, err := wrapWriter(f).Write(payload.Bytes()); err != nil {
		f.Close()
		return "", fmt.Errorf("train: writing checkpoint: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("%s%09d%s", checkpointPrefix, ck.Step, checkpointSuffix))
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("train: writing checkpoint: %w", err)
	}
	return path, nil
}

// Finish rewrites the newest intact checkpoint of dir (a run's checkpoint directory) as a
// final one, what a finished run keeps: its step and the variables outside OptimizerScope
// (the model's weights), without the optimizer's state, and removes every other checkpoint
// of dir. It returns the bytes the directory's checkpoints took before and after; a
// directory whose newest checkpoint is final already is left as it is. A run resumed from a
// final checkpoint continues from its weights with the optimizer's state as New makes it
// (Trainer.ResumedFinal): training on past a finished run's horizon is not the run an
// unbroken one would have been.
func Finish(dir string) (before, after int64, err error) {
	all, err := checkpoints(dir)
	if err != nil {
		return 0, 0, fmt.Errorf("train: Finish: %w", err)
	}
	if len(all) == 0 {
		return 0, 0, fmt.Errorf("train: Finish: %s holds no checkpoint", dir)
	}
	size := func(paths []string) (n int64) {
		for _, p := range paths {
			if fi, err := os.Stat(p); err == nil {
				n += fi.Size()
			}
		}
		return n
	}
	before = size(all)
	var ck *checkpoint
	var skipped []error
	newest := len(all) - 1
	for ; newest >= 0; newest-- {
		if ck, err = readCheckpoint(all[newest]); err == nil {
			break
		}
		skipped = append(skipped, err)
	}
	if ck == nil {
		return before, before, fmt.Errorf("train: Finish: no intact checkpoint in %s: %w", dir, errors.Join(skipped...))
	}
	path := all[newest]
	if !ck.Final || len(all) > 1 {
		kept := ck.Vars[:0]
		for _, sv := range ck.Vars {
			if !strings.HasPrefix(sv.Path, OptimizerScope+"/") {
				if sv.F32 != nil || sv.F64 != nil { // as save wrote them
					sv.Shuffled = encodeFloats(sv)
					sv.F32, sv.F64 = nil, nil
				}
				kept = append(kept, sv)
			}
		}
		ck.Vars, ck.Final = kept, true
		if path, err = writeCheckpoint(dir, ck); err != nil {
			return before, before, fmt.Errorf("train: Finish: %w", err)
		}
		for _, p := range all {
			if p != path {
				os.Remove(p)
			}
		}
	}
	return before, size([]string{path}), nil
}

// encodeFloats returns sv's float values shuffled, as save encodes them.
func encodeFloats(sv savedVar) []byte {
	if sv.F32 != nil {
		return shuffle.Encode(nil, sv.F32)
	}
	return shuffle.Encode(nil, sv.F64)
}

// wrapWriter is the identity; tests replace it with a writer that fails part-way, as a
// full disk does.
var wrapWriter = func(w io.Writer) io.Writer { return w }

// RemoveStaleTemp deletes the temporary files of checkpoints that were being written when
// a run was killed (names starting with TempPrefix) from dir, and returns their paths. Call
// it only while no other process writes to dir.
func RemoveStaleTemp(dir string) ([]string, error) {
	stale, err := filepath.Glob(filepath.Join(dir, TempPrefix+"*"))
	if err != nil {
		return nil, err
	}
	for _, p := range stale {
		if err := os.Remove(p); err != nil {
			return nil, err
		}
	}
	return stale, nil
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

// Resume restores the latest intact checkpoint of t.CheckpointDir and reports whether
// there was one. A checkpoint that is corrupted (its checksum does not match, it is
// truncated, or it does not decode) is passed over for the previous one and recorded in
// Skipped; if none is intact, the error names every file. A checkpoint of another model,
// task or seed is an error that names the file. Nothing is changed on disk, nor in the
// Trainer when Resume fails.
func (t *Trainer) Resume() (bool, error) {
	if t.CheckpointDir == "" {
		return false, fmt.Errorf("train: Resume: Trainer.CheckpointDir is empty")
	}
	all, err := checkpoints(t.CheckpointDir)
	if os.IsNotExist(err) || (err == nil && len(all) == 0) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var skipped []error
	for i := len(all) - 1; i >= 0; i-- {
		ck, err := readCheckpoint(all[i])
		if err == nil && ck.Log == nil {
			ck.Log, err = t.loadLog(all[i], ck.Step)
		}
		if err != nil {
			skipped = append(skipped, err)
			continue
		}
		if err := t.restore(all[i], ck); err != nil {
			return false, err
		}
		t.Skipped = skipped
		return true, nil
	}
	return false, fmt.Errorf("train: no intact checkpoint in %s: %w", t.CheckpointDir, errors.Join(skipped...))
}

// loadLog returns the records of LoadLog's log up to step, the step of the checkpoint at path
// that holds no log; the error says when the log does not reach it (as when a copy of the run
// took a newer checkpoint than its log), so that Resume passes over that checkpoint.
func (t *Trainer) loadLog(path string, step int) ([]Record, error) {
	if t.LoadLog == nil {
		return nil, fmt.Errorf("train: checkpoint %s keeps its log apart, and Trainer.LoadLog is not set to read it", path)
	}
	log, err := t.LoadLog()
	if err != nil {
		return nil, fmt.Errorf("train: the log of checkpoint %s: %w", path, err)
	}
	n := 0
	for n < len(log) && log[n].Step <= step {
		n++
	}
	if step > 0 && (n == 0 || log[n-1].Step != step) {
		last := 0
		if len(log) > 0 {
			last = log[len(log)-1].Step
		}
		return nil, fmt.Errorf("train: checkpoint %s is at step %d, which its log (to step %d) does not record", path, step, last)
	}
	return slices.Clip(log[:n]), nil
}

// readCheckpoint reads and decodes the checkpoint file at path, checking its checksum; the
// error says the file is corrupted and names it.
func readCheckpoint(path string) (*checkpoint, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("train: checkpoint %s is unreadable: %w", path, err)
	}
	corrupted := func(why string, args ...any) error {
		return fmt.Errorf("train: checkpoint %s is corrupted or not a checkpoint: %s", path, fmt.Sprintf(why, args...))
	}
	n := len(data) - trailerSize
	if n < 0 || string(data[n:n+len(checksumMagic)]) != checksumMagic {
		return nil, corrupted("without its checksum trailer (truncated?)")
	}
	payload := data[:n]
	if sum := sha256.Sum256(payload); !bytes.Equal(sum[:], data[n+len(checksumMagic):]) {
		return nil, corrupted("SHA-256 checksum mismatch")
	}
	zr, err := gzip.NewReader(bytes.NewReader(payload))
	if err != nil {
		return nil, corrupted("%v", err)
	}
	var ck checkpoint
	if err := gob.NewDecoder(zr).Decode(&ck); err != nil {
		return nil, corrupted("%v", err)
	}
	if ck.Version != checkpointVersion {
		return nil, fmt.Errorf("train: checkpoint %s has version %d, this build reads version %d only", path, ck.Version, checkpointVersion)
	}
	for i := range ck.Vars {
		if err := ck.Vars[i].unshuffle(); err != nil {
			return nil, corrupted("%v", err)
		}
	}
	return &ck, nil
}

// restore checks that ck (read from path) is a checkpoint of this run and loads it.
func (t *Trainer) restore(path string, ck *checkpoint) error {
	modelID, taskID := t.identity()
	switch {
	case ck.Model != modelID:
		return fmt.Errorf("train: checkpoint %s is of model %s, this run is %s", path, ck.Model, modelID)
	case ck.Task != taskID:
		return fmt.Errorf("train: checkpoint %s is of task %s, this run is %s", path, ck.Task, taskID)
	case ck.Seed != t.Config.Seed:
		return fmt.Errorf("train: checkpoint %s has seed %d, this run %d", path, ck.Seed, t.Config.Seed)
	case ck.Step > t.Config.Steps:
		return fmt.Errorf("train: checkpoint %s is at step %d, beyond Config.Steps = %d", path, ck.Step, t.Config.Steps)
	}
	// Check everything before changing anything.
	values := make([]*tensors.Tensor, len(ck.Vars))
	for i, sv := range ck.Vars {
		v := t.Store.GetVariable(sv.Path)
		if v == nil {
			return fmt.Errorf("train: checkpoint %s has variable %s, which this run does not", path, sv.Path)
		}
		if fmt.Sprint(v.Shape().Dimensions) != fmt.Sprint(sv.Dims) {
			return fmt.Errorf("train: checkpoint %s: variable %s has shape %v, this run %v", path, sv.Path, sv.Dims, v.Shape().Dimensions)
		}
		if sv.DType != v.DType().String() {
			return fmt.Errorf("train: checkpoint %s: variable %s is %s, this run's is %s", path, sv.Path, sv.DType, v.DType())
		}
		if n := v.Shape().Size(); sv.len() != n {
			return fmt.Errorf("train: checkpoint %s is corrupted: variable %s holds %d values, its shape %v %d", path, sv.Path, sv.len(), sv.Dims, n)
		}
		values[i] = sv.tensor()
	}
	for i, sv := range ck.Vars {
		t.Store.GetVariable(sv.Path).MustSetValue(values[i])
	}
	t.Step, t.Log, t.LastCheckpoint, t.ResumedFinal = ck.Step, ck.Log, path, ck.Final
	return nil
}
