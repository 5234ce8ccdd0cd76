package runs

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/experiments"
)

// Bookkeeping are the preset's fields a resumed run may change freely: they do not change
// what the steps compute (Diff leaves them out). The BPTT chunk is one: backpropagation is
// exact across chunks (celltest's Chunking check), so it changes the cost of a step and the
// rounding of its sums, not the step; so is the scan of a linear recurrence (Train.Scan). (A
// model that normalises by batch statistics, Model.BatchNorm, needs both at their one value,
// the scan of the whole sequence: train.New refuses the others, so they cannot change either.)
var Bookkeeping = map[string]bool{"Name": true, "Paper": true, "Train.Steps": true, "Train.EvalEvery": true,
	"Train.CheckpointEvery": true, "Train.Chunk": true, "Train.Scan": true}

// Fields calls visit with the path ("Train.Optimizer.LR") and the value of each exported
// field of struct v, nested structs flattened, in declaration order.
func Fields(v reflect.Value, visit func(path string, f reflect.Value)) { fields("", v, visit) }

func fields(prefix string, v reflect.Value, visit func(path string, f reflect.Value)) {
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		f, name := v.Field(i), v.Type().Field(i).Name
		if prefix != "" {
			name = prefix + "." + name
		}
		if f.Kind() == reflect.Struct {
			fields(name, f, visit)
		} else {
			visit(name, f)
		}
	}
}

// Change is a setting that differs between two presets.
type Change struct {
	Field    string // its path, as Fields gives it
	Was, Now any
}

// Diff returns the fields of now that differ from was, Bookkeeping aside, sorted by path;
// both are compared with their training defaults applied (train.Config.WithDefaults), and
// an EvalBatch of 0 (its default depends on the task) matches any.
func Diff(was, now experiments.Preset) []Change {
	norm := func(p experiments.Preset) map[string]any {
		if c, err := p.Train.WithDefaults(); err == nil {
			c.EvalBatch = p.Train.EvalBatch
			p.Train = c
		}
		out := map[string]any{}
		Fields(reflect.ValueOf(p), func(name string, f reflect.Value) { out[name] = f.Interface() })
		return out
	}
	a, b := norm(was), norm(now)
	var out []Change
	for k, v := range a {
		if Bookkeeping[k] || (k == "Train.EvalBatch" && (v == 0 || b[k] == 0)) || reflect.DeepEqual(v, b[k]) {
			continue
		}
		out = append(out, Change{Field: k, Was: v, Now: b[k]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out
}

// KeyVersion is the format of Key's text; it changes only when the format does.
const KeyVersion = 1

// Key describes what p trains, for naming the run directory of a preset (the notebooks'
// RunDir): "preset/1" then "Path=value" for each field that is not the zero value of its
// type, in declaration order, with Name, Paper, Train.Chunk and Train.Scan left out (where the run lives
// is not part of a preset: train.Trainer.CheckpointDir; the chunk changes the cost, not what
// is trained). A field added to the preset's types with a zero default leaves every key as
// it was.
func Key(p experiments.Preset) string {
	parts := []string{fmt.Sprintf("preset/%d", KeyVersion)}
	Fields(reflect.ValueOf(p), func(name string, f reflect.Value) {
		if name == "Name" || name == "Paper" || name == "Train.Chunk" || name == "Train.Scan" || f.IsZero() {
			return
		}
		parts = append(parts, fmt.Sprintf("%s=%v", name, f.Interface()))
	})
	return strings.Join(parts, " ")
}
