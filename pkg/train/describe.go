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

// Describe returns the identity of cell that checkpoints record (version 4 on): the format
// version, the cell's type and its fields that are not the zero value of their type, in
// declaration order, e.g. "cell/1 *rnn.Simple{In:2 N:4 Out:1 Act:1 Identity:true}".
// Zero-valued fields are left out, so that a field added to a cell type with a zero
// default does not change the identity of existing cells (nor make their checkpoints
// unreadable). A pointer field is described by what it points to; a value longer than 80
// characters by the first 16 hex digits of its SHA-256 ("#…").
func Describe(cell rnn.Cell) string { return describe("cell", cell) }

// DescribeTask returns the identity of task that checkpoints record (version 5 on), as
// Describe does a cell's, e.g. "task/1 tasks.Copy{T:100 Symbols:8 Recall:10}": its fields
// as set, not its String (whose format may change) nor its defaults applied.
func DescribeTask(task tasks.Task) string { return describe("task", task) }

// describe returns "<kind>/<DescriptionVersion> <type>{<fields>}" for x (see Describe).
func describe(kind string, x any) string {
	v := reflect.ValueOf(x)
	typ := fmt.Sprintf("%T", x)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return fmt.Sprintf("%s/%d %s(%+v)", kind, DescriptionVersion, typ, x)
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
		if len(val) > longValue {
			sum := sha256.Sum256([]byte(val))
			val = fmt.Sprintf("#%x", sum[:8])
		}
		parts = append(parts, v.Type().Field(i).Name+":"+val)
	}
	return fmt.Sprintf("%s/%d %s{%s}", kind, DescriptionVersion, typ, strings.Join(parts, " "))
}

// legacyIdentity is the identity checkpoints of versions 2 and 3 recorded: "%T%+v" of the
// cell, e.g. "*rnn.Simple&{In:2 N:4 Out:1 Act:0 Identity:false Type:InvalidDType}".
func legacyIdentity(cell rnn.Cell) string { return fmt.Sprintf("%T%+v", cell, cell) }

// legacyMatches reports whether recorded, the legacy identity of a version 2 or 3
// checkpoint, names cell: the same type and, field by field, the same printed values,
// where a field of cell that recorded lacks (added to the type since) must hold its zero
// value. A field recorded that cell's type no longer has is a mismatch.
func legacyMatches(recorded string, cell rnn.Cell) bool {
	now := legacyIdentity(cell)
	if recorded == now {
		return true
	}
	typA, was, okA := parseLegacy(recorded)
	typB, is, okB := parseLegacy(now)
	if !okA || !okB || typA != typB {
		return false
	}
	v := reflect.ValueOf(cell)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	for name := range was {
		if _, ok := is[name]; !ok {
			return false
		}
	}
	for name, val := range is {
		old, ok := was[name]
		if ok && old != val {
			return false
		}
		if !ok && (v.Kind() != reflect.Struct || !v.FieldByName(name).IsValid() || !v.FieldByName(name).IsZero()) {
			return false
		}
	}
	return true
}

// parseLegacy splits "TYPE&{A:1 B:x y C:{D:2 E:3}}" (or "TYPE{…}") into TYPE and its fields'
// printed values; ok is false if s has another form. A space-separated word that does not
// start with "Name:" continues the previous field's value.
func parseLegacy(s string) (typ string, fields map[string]string, ok bool) {
	open := strings.Index(s, "{")
	if open < 0 || !strings.HasSuffix(s, "}") {
		return "", nil, false
	}
	typ, body := strings.TrimSuffix(s[:open], "&"), s[open+1:len(s)-1]
	// The words of body at bracket depth 0.
	var words []string
	depth, start := 0, 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '{', '[', '(':
			depth++
		case '}', ']', ')':
			depth--
		case ' ':
			if depth == 0 {
				words, start = append(words, body[start:i]), i+1
			}
		}
	}
	words = append(words, body[start:])
	fields = map[string]string{}
	name := ""
	for _, w := range words {
		if colon := strings.Index(w, ":"); colon > 0 && isIdent(w[:colon]) {
			name = w[:colon]
			fields[name] = w[colon+1:]
		} else if name != "" {
			fields[name] += " " + w
		} else if w != "" {
			return "", nil, false
		}
	}
	return typ, fields, true
}

// isIdent reports whether s is a Go identifier.
func isIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && '0' <= r && r <= '9') {
			return false
		}
	}
	return s != ""
}
