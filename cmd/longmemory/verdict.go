package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/urnn-notebooks/longmemory/pkg/claims"
)

// verdictCmd judges the claims of one claims file (pkg/claims: its columns and rules) against
// the run directories under -runs and prints, in Markdown, the rules, the table of verdicts,
// their tally and the open claims with the hours they need. -json also writes the verdicts of
// that file (and of -variants, judged by the same rules outside the tally) as JSON.
func verdictCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verdict", flag.ContinueOnError)
	fs.SetOutput(stderr)
	runsDir := fs.String("runs", "docs/runs", "directory holding the run directories the claims file names")
	rules := fs.Bool("rules", true, "print the rules before the table")
	jsonOut := fs.String("json", "", "also write the verdicts as JSON to this file (docs/verdicts.json)")
	variants := fs.String("variants", "", "with -json: a claims file of setting variants, judged into the JSON's variants")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("verdict: give one claims file (columns: %v)", claims.Columns)
	}
	cs, err := readClaims(fs.Arg(0))
	if err != nil {
		return err
	}
	var vs []claims.Claim
	if *variants != "" {
		if vs, err = readClaims(*variants); err != nil {
			return err
		}
	}
	byName, err := claims.LoadAll(*runsDir, cs, vs)
	if err != nil {
		return fmt.Errorf("verdict: %w", err)
	}
	verdicts := judgeAll(cs, byName)
	if *rules {
		fmt.Fprintln(stdout, "The rules (pkg/claims):")
		fmt.Fprintln(stdout)
		claims.WriteRules(stdout)
		fmt.Fprintln(stdout)
	}
	claims.WriteTable(stdout, verdicts)
	var open []claims.Verdict
	for _, v := range verdicts {
		if v.Outcome == claims.Open {
			open = append(open, v)
		}
	}
	slices.SortStableFunc(open, func(a, b claims.Verdict) int { return cmpHours(a.HoursToGo, b.HoursToGo) })
	if len(open) > 0 {
		fmt.Fprintln(stdout)
		fmt.Fprintln(stdout, "Open claims, by the training their runs still need to reach the horizon (one run after another, each with its replicas at once, at its measured speed):")
		fmt.Fprintln(stdout)
		for _, v := range open {
			fmt.Fprintf(stdout, "- %s: %s\n", v.Claim.ID, claims.HoursText(v.HoursToGo))
		}
	}
	if *jsonOut != "" {
		f, err := os.Create(*jsonOut)
		if err != nil {
			return fmt.Errorf("verdict: %w", err)
		}
		if err := claims.WriteJSON(f, verdicts, judgeAll(vs, byName)); err != nil {
			f.Close()
			return fmt.Errorf("verdict: %w", err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("verdict: %w", err)
		}
	}
	return nil
}

func readClaims(path string) ([]claims.Claim, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("verdict: %w", err)
	}
	defer f.Close()
	return claims.Read(f, path)
}

func judgeAll(cs []claims.Claim, byName map[string]*claims.Run) []claims.Verdict {
	var out []claims.Verdict
	for _, c := range cs {
		out = append(out, claims.Judge(c, byName))
	}
	return out
}

// cmpHours orders hours with the untimed (NaN) last.
func cmpHours(a, b float64) int {
	switch {
	case math.IsNaN(a) && math.IsNaN(b):
		return 0
	case math.IsNaN(a):
		return 1
	case math.IsNaN(b):
		return -1
	}
	return cmp.Compare(a, b)
}
