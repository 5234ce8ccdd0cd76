package train

import (
	"crypto/sha256"
	"fmt"
	"reflect"
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
)

// DescriptionVersion is the format of Describe's and DescribeTask's text; it starts the text
// ("cell/1 …", "task/1 …") and changes only when the format does, never when a cell or a
// task gains a field.
const DescriptionVersion = 1

// longValue is the length past which a description gives a field's value as a hash.
const longValue = 80

// Describe returns the identity of cell that checkpoints record: the format
// version, the cell's type and its fields that are not the zero value of their type, in
// declaration order, e.g. "cell/1 *rnn.Simple{In:2 N:4 Out:1 Act:1 Identity:true}".
// Zero-valued fields are left out, so that a field added to a cell type with a zero
// default does not change the identity of existing cells (nor make their checkpoints
// unreadable). A pointer field is described by what it points to; a value longer than 80
// characters by the first 16 hex digits of its SHA-256 ("#…").
func Describe(cell rnn.Cell) string { return describe("cell", cell) }

// DescribeTask returns the identity of task that checkpoints record, as
// Describe does a cell's, e.g. "task/1 tasks.Copy{T:100 Symbols:8 Recall:10}": its fields
// as set, not its String (whose format may change) nor its defaults applied.
func DescribeTask(task tasks.Task) string { return describe("task", task) }

// describe returns "<kind>/<DescriptionVersion> <type>{<fields>}" for x (see Describe).
func describe(kind string, x any) string {
	return fmt.Sprintf("%s/%d %s", kind, DescriptionVersion, describeValue(x))
}

// describeValue returns "<type>{<fields>}" for a struct or a pointer to one (see Describe),
// "<type>(<%+v>)" for anything else.
func describeValue(x any) string {
	v := reflect.ValueOf(x)
	typ := fmt.Sprintf("%T", x)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return fmt.Sprintf("%s(%+v)", typ, x)
	}
	var parts []string
	for i := range v.NumField() {
		f := v.Field(i)
		if f.IsZero() {
			continue
		}
		for f.Kind() == reflect.Pointer && !f.IsNil() {
			f = f.Elem()
		}
		val := fmt.Sprintf("%+v", f)
		if f.CanInterface() {
			val = fmt.Sprintf("%+v", f.Interface()) // with the field's String method, if any
		}
		if (f.Kind() == reflect.Slice || f.Kind() == reflect.Array) && f.CanInterface() {
			val = describeElements(f)
		}
		if len(val) > longValue {
			sum := sha256.Sum256([]byte(val))
			val = fmt.Sprintf("#%x", sum[:8])
		}
		parts = append(parts, v.Type().Field(i).Name+":"+val)
	}
	return fmt.Sprintf("%s{%s}", typ, strings.Join(parts, " "))
}

// describeElements returns "[e₀ e₁ …]": a struct element, or a pointer to one (the layers of
// a stack.Cell), as describeValue gives it, where %+v of the slice would give the pointer's
// address, which differs from run to run; any other element as %+v gives it.
func describeElements(f reflect.Value) string {
	parts := make([]string, f.Len())
	for i := range parts {
		e := f.Index(i)
		for e.Kind() == reflect.Interface && !e.IsNil() {
			e = e.Elem()
		}
		d := e
		for d.Kind() == reflect.Pointer && !d.IsNil() {
			d = d.Elem()
		}
		if d.Kind() == reflect.Struct {
			parts[i] = describeValue(e.Interface())
		} else {
			parts[i] = fmt.Sprintf("%+v", e.Interface())
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}
