package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/urnn-notebooks/longmemory/pkg/claims"
	"github.com/urnn-notebooks/longmemory/pkg/runs"
)

// verdictCmd judges the claims of one claims file (pkg/claims: its columns and rules) against
// the run directories under -runs and prints, in Markdown, the rules, the table of verdicts,
// their tally and the open and not-run claims with the hours they need and the sweep command
// that trains their runs (claims.WriteReport). -json also
// writes the verdicts of that file (and of -variants, judged by the same rules outside the
// tally) as JSON.
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
	cs, err := claims.ReadFile(fs.Arg(0))
	if err != nil {
		return fmt.Errorf("verdict: %w", err)
	}
	var vs []claims.Claim
	if *variants != "" {
		if vs, err = claims.ReadFile(*variants); err != nil {
			return fmt.Errorf("verdict: %w", err)
		}
	}
	byName, err := claims.LoadAll(*runsDir, cs, vs)
	if err != nil {
		return fmt.Errorf("verdict: %w", err)
	}
	verdicts := claims.JudgeAll(cs, byName)
	claims.WriteReport(stdout, verdicts, *rules)
	if *jsonOut != "" {
		err := runs.WriteFileAtomic(*jsonOut, func(w io.Writer) error {
			return claims.WriteJSON(w, verdicts, claims.JudgeAll(vs, byName))
		})
		if err != nil {
			return fmt.Errorf("verdict: %w", err)
		}
	}
	return nil
}
