package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/runs"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// TestVerdictJSON: `longmemory verdict -json` writes docs/verdicts.json's fields, with the
// variants apart, and prints the rules, the table and the tally.
func TestVerdictJSON(t *testing.T) {
	dir := t.TempDir()
	writeSeeds := func(name string, level func(seed, i int) float64, evals int) {
		for s := range 4 {
			rep := filepath.Join(dir, name, fmt.Sprintf("seed-%d", s))
			if err := os.MkdirAll(rep, 0o755); err != nil {
				t.Fatal(err)
			}
			meta := `{"Preset": {"Task": {"Kind": "copy", "T": 5}, "Train": {"EvalBatch": 100}}, "Baseline": 1}`
			var log []train.Record
			for i := 1; i <= evals; i++ {
				log = append(log, train.Record{Step: 10 * i, Loss: 1, GradNorm: 1, EvalLoss: level(s, i), EvalAccuracy: math.NaN(), Penalty: math.NaN(), Seconds: float64(i)})
			}
			os.WriteFile(filepath.Join(rep, "run.json"), []byte(meta), 0o644)
			if err := runs.WriteLog(filepath.Join(rep, runs.LogFile), log); err != nil {
				t.Fatal(err)
			}
		}
	}
	writeSeeds("fast", func(s, i int) float64 {
		if i > 3+s {
			return 0.01
		}
		return 1
	}, 20)
	writeSeeds("flat", func(s, i int) float64 { return 1 }, 20)
	writeSeeds("short", func(s, i int) float64 { return 1 }, 5)
	claimsFile := filepath.Join(dir, "claims.tsv")
	os.WriteFile(claimsFile, []byte("c1\tPaper §1\t\"solves it\"\tsolves\tfast\tnot-below\tflat\t200\tbaseline\nc2\tPaper §2\tq\tsolves\tshort\t-\t-\t200\tbaseline\n"), 0o644)
	variants := filepath.Join(dir, "variants.tsv")
	os.WriteFile(variants, []byte("v1\tPaper §1\tq\tfaster\tfast\t-\tflat\t200\tbaseline\n"), 0o644)
	out := filepath.Join(dir, "verdicts.json")
	code, text := cli("verdict", "-runs", dir, "-json", out, "-variants", variants, claimsFile)
	if code != 0 {
		t.Fatalf("verdict: exit %d\n%s", code, text)
	}
	for _, want := range []string{"**Horizon.**", "| c1 Paper §1", "**reproduced**", "**open**: short of the horizon of 200 steps: short (50 of 200 steps)", "Of 2 claims: 1 reproduced, 0 not reproduced, 1 open, 0 not run."} {
		if !strings.Contains(text, want) {
			t.Errorf("verdict output lacks %q:\n%s", want, text)
		}
	}
	var v struct {
		FinalK int     `json:"final_k"`
		Alpha  float64 `json:"alpha"`
		Claims []struct {
			ID, Paper, Quote, Outcome, Horizon, Reason string
			Runs                                       []struct {
				Name             string
				Seeds            int
				StepsJudged      int      `json:"steps_judged"`
				FinalMedian      *float64 `json:"final_median"`
				FinalMin         *float64 `json:"final_min"`
				FinalMax         *float64 `json:"final_max"`
				StepsToThreshold []*int   `json:"steps_to_threshold"`
				Pass             *bool
			}
		}
		Variants []struct {
			ID, Outcome string
			Runs        []struct {
				Pass        *bool
				Comparisons []struct {
					PValue float64 `json:"p_value"`
				}
			}
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if v.FinalK != 5 || v.Alpha != 0.05 || len(v.Claims) != 2 || len(v.Variants) != 1 {
		t.Fatalf("verdicts.json: final_k %d, alpha %g, %d claims, %d variants; want 5, 0.05, 2, 1\n%s", v.FinalK, v.Alpha, len(v.Claims), len(v.Variants), b)
	}
	c := v.Claims[0]
	if c.ID != "c1" || c.Paper != "Paper §1" || c.Quote != `"solves it"` || c.Outcome != "reproduced" || c.Horizon != "200 steps" || c.Reason == "" || len(c.Runs) != 2 {
		t.Errorf("claim c1: %+v", c)
	}
	fast := c.Runs[0]
	if fast.Name != "fast" || fast.Seeds != 4 || fast.StepsJudged != 200 || !near(*fast.FinalMedian, 0.01) || !near(*fast.FinalMin, 0.01) || !near(*fast.FinalMax, 0.01) ||
		len(fast.StepsToThreshold) != 4 || fast.StepsToThreshold[0] == nil || *fast.StepsToThreshold[0] != 60 {
		t.Errorf("run fast: %+v (steps to threshold: the 5-evaluation median under 0.1 first at step 60 for seed 0)", fast)
	}
	if flat := c.Runs[1]; flat.StepsToThreshold[0] != nil {
		t.Errorf("run flat: steps to threshold %v, want null (not reached)", flat.StepsToThreshold)
	}
	if v.Claims[1].Outcome != "open" || v.Variants[0].Outcome != "reproduced" || len(v.Variants[0].Runs[0].Comparisons) != 1 {
		t.Errorf("c2 %s, v1 %+v; want open and a reproduced variant with one comparison", v.Claims[1].Outcome, v.Variants[0])
	}
	// pass: true or false for a run judged on its own test; null for one short of the horizon and
	// for the fail side of a comparison.
	passText := func(p *bool) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprint(*p)
	}
	for _, tc := range []struct {
		what string
		pass *bool
		want string
	}{
		{"c1's fast (solves)", c.Runs[0].Pass, "true"},
		{"c1's flat (not below)", c.Runs[1].Pass, "true"},
		{"c2's short (short of the horizon)", v.Claims[1].Runs[0].Pass, "null"},
		{"v1's fast (faster)", v.Variants[0].Runs[0].Pass, "true"},
		{"v1's flat (the compared side)", v.Variants[0].Runs[1].Pass, "null"},
	} {
		if got := passText(tc.pass); got != tc.want {
			t.Errorf("pass of %s: %s, want %s", tc.what, got, tc.want)
		}
	}
}

// near compares a value read back from a log (float32) with v.
func near(x, v float64) bool { return math.Abs(x-v) < 1e-6 }
