package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/experiments"
)

// TestDocScriptsClaims: every `claim` line of the training scripts under docs/ (those without
// shell variables) names a preset that exists and flags that parse and build a model and task,
// so that a long queue does not meet a typo hours in. A claim's run directory is named once.
func TestDocScriptsClaims(t *testing.T) {
	scripts, err := filepath.Glob("../../docs/run_*.sh")
	if err != nil || len(scripts) < 3 {
		t.Fatalf("docs/run_*.sh: %v, %d scripts", err, len(scripts))
	}
	seen := map[string]string{}
	checked := 0
	for _, script := range scripts {
		text, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(text), "\n") {
			fields := strings.Fields(line)
			if len(fields) < 2 || fields[0] != "claim" || strings.Contains(line, "$") {
				continue
			}
			where := fmt.Sprintf("%s:%d (%s)", filepath.Base(script), i+1, fields[1])
			if prev, ok := seen[fields[1]]; ok {
				t.Errorf("%s: run %s also trained at %s", where, fields[1], prev)
			}
			seen[fields[1]] = where
			fs := flag.NewFlagSet("train", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			preset := fs.String("preset", "", "")
			apply := bindPresetFlags(fs)
			if err := fs.Parse(fields[2:]); err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			p, err := experiments.Lookup(*preset)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			if err := apply(&p); err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			if _, _, err := p.Build(); err != nil {
				t.Errorf("%s: %v", where, err)
			}
			checked++
		}
	}
	if checked < 40 {
		t.Errorf("checked %d claim lines, want the 40 or more of docs/run_claims.sh and docs/run_ablations.sh", checked)
	}
}
