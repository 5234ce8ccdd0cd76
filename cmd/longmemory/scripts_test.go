package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/experiments"
)

// TestDocScriptsClaims: every `claim` line of the training scripts under docs/ names a preset
// that exists and flags that parse (no stray argument) and build a model and task, so that a
// long queue does not meet a typo hours in. Lines inside a `for X in a b c; do` loop over
// literal words, or over an array of them (`for m in "${copy[@]}"; do`), are checked once per
// word; lines that still hold a shell variable are not checked. A run directory trained by several lines gets the same settings
// from each (its steps aside: a first pass may stop earlier). Every `ridge` line names a run
// an ESN preset's `claim` line trains.
func TestDocScriptsClaims(t *testing.T) {
	scripts, err := filepath.Glob("../../docs/run_*.sh")
	if err != nil || len(scripts) < 3 {
		t.Fatalf("docs/run_*.sh: %v, %d scripts", err, len(scripts))
	}
	loop := regexp.MustCompile(`^\s*for (\w+) in ([^;$"]+); do`)
	arrayLoop := regexp.MustCompile(`^\s*for (\w+) in "\$\{(\w+)\[@\]\}"; do`)
	array := regexp.MustCompile(`^(\w+)=\(([^$"()]*)\)\s*$`)
	settings := map[string]string{} // run directory → its flags without -steps
	where := map[string]string{}
	checked := 0
	var ridges []string // run directories of `ridge` lines (the ESN's closed-form readout)
	ridgeAt := map[string]string{}
	for _, script := range scripts {
		text, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		var loopVar string
		var loopWords []string
		arrays := map[string][]string{} // the script's arrays of literal words
		for i, line := range strings.Split(string(text), "\n") {
			if m := array.FindStringSubmatch(line); m != nil {
				arrays[m[1]] = strings.Fields(m[2])
			}
			if m := loop.FindStringSubmatch(line); m != nil {
				loopVar, loopWords = m[1], strings.Fields(m[2])
				continue
			}
			if m := arrayLoop.FindStringSubmatch(line); m != nil && arrays[m[2]] != nil {
				loopVar, loopWords = m[1], arrays[m[2]]
				continue
			}
			if strings.TrimSpace(line) == "done" {
				loopVar, loopWords = "", nil
			}
			// "[ $T = 750 ] || claim …": the claim is what follows ||.
			if _, after, ok := strings.Cut(line, "|| claim "); ok {
				line = "claim " + after
			}
			expansions := []string{line}
			if loopVar != "" {
				expansions = nil
				for _, w := range loopWords {
					expansions = append(expansions, strings.ReplaceAll(line, "$"+loopVar, w))
				}
			}
			for _, line := range expansions {
				// The shell's quote removal: the scripts quote words without spaces only.
				fields := strings.Fields(strings.ReplaceAll(line, `"`, ""))
				if len(fields) >= 2 && fields[0] == "ridge" {
					ridges = append(ridges, fields[1])
					ridgeAt[fields[1]] = fmt.Sprintf("%s:%d", filepath.Base(script), i+1)
				}
				if len(fields) < 2 || fields[0] != "claim" || strings.Contains(line, "$") {
					continue
				}
				at := fmt.Sprintf("%s:%d (%s)", filepath.Base(script), i+1, fields[1])
				var flags []string
				for j := 2; j < len(fields); j++ {
					if fields[j] == "-steps" {
						j++
						continue
					}
					flags = append(flags, fields[j])
				}
				if prev, ok := settings[fields[1]]; ok && prev != strings.Join(flags, " ") {
					t.Errorf("%s: trains %s with %q, %s with %q", at, fields[1], strings.Join(flags, " "), where[fields[1]], prev)
				}
				settings[fields[1]], where[fields[1]] = strings.Join(flags, " "), at
				fs := flag.NewFlagSet("train", flag.ContinueOnError)
				fs.SetOutput(io.Discard)
				preset := fs.String("preset", "", "")
				apply := bindPresetFlags(fs)
				if err := fs.Parse(fields[2:]); err != nil {
					t.Errorf("%s: %v", at, err)
					continue
				}
				if fs.NArg() > 0 {
					t.Errorf("%s: stray arguments %q (train takes flags only)", at, fs.Args())
					continue
				}
				p, err := experiments.Lookup(*preset)
				if err != nil {
					t.Errorf("%s: %v", at, err)
					continue
				}
				if err := apply(&p); err != nil {
					t.Errorf("%s: %v", at, err)
					continue
				}
				if _, _, err := p.Build(); err != nil {
					t.Errorf("%s: %v", at, err)
				}
				checked++
			}
		}
	}
	// A `ridge` line fits the readout of a run a `claim` line trains, of a model with a linear
	// readout (the ESN).
	presetFlag := regexp.MustCompile(`-preset (\S+)`)
	for _, name := range ridges {
		m := presetFlag.FindStringSubmatch(settings[name])
		if m == nil {
			t.Errorf("%s: ridge %s: no claim line trains that run with a -preset", ridgeAt[name], name)
			continue
		}
		if p, err := experiments.Lookup(m[1]); err != nil || p.Model.Kind != "esn" {
			t.Errorf("%s: ridge %s: preset %s (%v) is not an ESN's", ridgeAt[name], name, m[1], err)
		}
	}
	if len(ridges) < 2 {
		t.Errorf("%d ridge lines in docs/run_*.sh, want the ESN copy and adding runs' 2", len(ridges))
	}
	if checked < 70 || !hasKey(settings, "arjovsky-adding-T750-urnn") {
		t.Errorf("checked %d claim lines (want the 70 or more of docs/run_*.sh, loops over literal words expanded)", checked)
	}
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }
