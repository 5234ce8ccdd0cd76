package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/urnn-notebooks/longmemory/pkg/runs"
)

// Comparison is one configuration timed by two builds of bench in alternating pairs.
type Comparison struct {
	Config   string    `json:"config"`
	RefMs    []float64 `json:"ref_step_ms"`  // the reference build's step time, pair by pair
	ThisMs   []float64 `json:"this_step_ms"` // this build's, pair by pair
	Ratio    float64   `json:"ratio"`        // the median over the pairs of ThisMs / RefMs
	RefLoss  float64   `json:"ref_loss"`
	ThisLoss float64   `json:"this_loss"`
}

// against times each configuration with the bench binary ref (another build of this command,
// such as the build before a change) and with this one, alternating the two in pairs pairs,
// the reference first, each in a process of its own, and prints a table of the medians and of
// the median ratio of the pairs: on a shared machine whose load drifts, adjacent runs are the
// fair comparison.
func against(w io.Writer, ref string, configs []string, steps, longSteps, chunk, pairs int) ([]Comparison, error) {
	if pairs < 1 {
		return nil, fmt.Errorf("-pairs %d: want at least 1", pairs)
	}
	if _, err := os.Stat(ref); err != nil {
		return nil, fmt.Errorf("-against: %w (build the reference first, as make bench-against does)", err)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	one := func(bin, cfg string) (Result, error) {
		var out bytes.Buffer
		cmd := exec.Command(bin, "-one", cfg, "-steps", strconv.Itoa(stepsFor(cfg, steps, longSteps)), "-chunk", strconv.Itoa(chunk))
		cmd.Stdout, cmd.Stderr = &out, os.Stderr
		if err := cmd.Run(); err != nil {
			return Result{}, fmt.Errorf("%s -one %s: %w", bin, cfg, err)
		}
		var r Result
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			return Result{}, fmt.Errorf("%s -one %s: %w", bin, cfg, err)
		}
		return r, nil
	}
	var cs []Comparison
	for _, cfg := range configs {
		if _, _, err := parse(cfg); err != nil {
			return nil, err
		}
		c := Comparison{Config: cfg}
		var ratios []float64
		for range pairs {
			r0, err := one(ref, cfg)
			if err != nil {
				return nil, err
			}
			r1, err := one(self, cfg)
			if err != nil {
				return nil, err
			}
			c.RefMs, c.ThisMs = append(c.RefMs, r0.StepMs), append(c.ThisMs, r1.StepMs)
			c.RefLoss, c.ThisLoss = r0.Loss, r1.Loss
			ratios = append(ratios, r1.StepMs/r0.StepMs)
			fmt.Fprintf(os.Stderr, "bench: %-26s reference %9.1f ms  this %9.1f ms\n", cfg, r0.StepMs, r1.StepMs)
		}
		c.Ratio = runs.Median(ratios)
		cs = append(cs, c)
	}
	fmt.Fprintf(w, "# bench -against %s, %s, on %s\n", ref, time.Now().UTC().Format(time.DateOnly), runs.Host())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "config\treference ms\tthis ms\tratio\tloss (reference, this)\n")
	for _, c := range cs {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.3f×\t%.6g, %.6g\n", c.Config, runs.Median(c.RefMs), runs.Median(c.ThisMs), c.Ratio, c.RefLoss, c.ThisLoss)
	}
	fmt.Fprintf(tw, "reference: %s; medians of %d alternated pairs (reference first); ratio: the median of the pairs' this/reference\n", ref, pairs)
	return cs, tw.Flush()
}
