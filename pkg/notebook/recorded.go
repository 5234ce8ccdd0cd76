package notebook

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/claims"
	"github.com/urnn-notebooks/longmemory/pkg/plots"
	"github.com/urnn-notebooks/longmemory/pkg/runs"
)

// RecordedRunsDir is where the 8-seed runs behind docs/RESULTS.md live:
// $LONGMEMORY_ROOT/docs/runs (committed with the repository: each replica's run.json and
// log; docs/runs.tsv lists them and `make runs` trains them). It is "" when
// LONGMEMORY_ROOT is unset (the project's kernelspecs set it).
func RecordedRunsDir() string {
	root := os.Getenv("LONGMEMORY_ROOT")
	if root == "" {
		return ""
	}
	return filepath.Join(root, "docs", "runs")
}

// ShowRecorded shows the recorded 8-seed runs names (directories under RecordedRunsDir) as
// the figures of docs/figures draw them: the held-out loss against the iteration, median and
// min–max band over the seeds, the baseline dashed; then their summary table (`longmemory
// summary`, shown as an HTML table: ShowTable), and under it the scores on the test split of
// the runs scored there (runs.TestSummary: pixel MNIST's test accuracy). The runs are shown as
// they stand (they may still be training: the table gives their steps); a run not recorded yet, or with fewer than
// runs.EvalWindow held-out evaluations, is named with its steps and left out (a line under the
// table, or printed when no run is drawn). Outside a notebook it prints the table only.
func ShowRecorded(title string, names ...string) error {
	return ShowRecordedWith(title, nil, names...)
}

// ShowRecordedWith is ShowRecorded with adjust (if not nil) applied to the chart before it is
// shown: a y range that leaves out the untrained networks' first losses, for instance.
func ShowRecordedWith(title string, adjust func(*plots.Chart), names ...string) error {
	dirs, notDrawn, err := recorded(names)
	if err != nil {
		return err
	}
	var table bytes.Buffer
	if len(dirs) > 0 {
		chart, err := runs.Chart(dirs, runs.HeldOutLoss)
		if err != nil {
			return fmt.Errorf("notebook: %w", err)
		}
		chart.Title = title
		if adjust != nil {
			adjust(&chart)
		}
		Show(chart)
		if err := runs.Summary(&table, dirs...); err != nil {
			return fmt.Errorf("notebook: %w", err)
		}
		for _, dir := range dirs {
			switch summary, err := runs.TestSummary(dir); {
			case err != nil:
				return fmt.Errorf("notebook: %w", err)
			case summary != "":
				fmt.Fprintf(&table, "\n%s on the test split: %s\n", filepath.Base(dir), summary)
			}
		}
	}
	for _, line := range notDrawn {
		fmt.Fprintf(&table, "\n%s\n", line)
	}
	if len(dirs) > 0 {
		ShowTable(table.String())
	} else {
		fmt.Print(table.String())
	}
	return nil
}

// ShowRecordedPenalty shows the orthogonality penalty the recorded runs names logged at their
// evaluations (runs.Penalty): how far each run's transition matrix drifted from orthogonal as
// it trained, median and min–max band over the seeds, as ShowRecorded shows their held-out
// loss but without the table. A run not recorded yet, with too few evaluations to draw, or
// trained without the penalty is named under the chart and left out; runs none of which has it
// are an error.
func ShowRecordedPenalty(title string, names ...string) error {
	dirs, notDrawn, err := recorded(names)
	if err != nil {
		return err
	}
	for _, dir := range dirs {
		if !logsPenalty(dir) {
			notDrawn = append(notDrawn, filepath.Base(dir)+": trained without the orthogonality penalty, nothing to draw")
		}
	}
	if len(dirs) > 0 {
		chart, err := runs.Chart(dirs, runs.Penalty)
		if err != nil {
			return fmt.Errorf("notebook: %w", err)
		}
		chart.Title = title
		Show(chart)
	}
	for _, line := range notDrawn {
		fmt.Println(line)
	}
	return nil
}

// logsPenalty says whether a replica of run directory dir logs the orthogonality penalty at an
// evaluation.
func logsPenalty(dir string) bool {
	for _, rep := range runs.RunDirs(dir) {
		if _, log, err := runs.Read(rep); err == nil {
			if _, v := runs.LossCurve(log, runs.Penalty); len(v) > 0 {
				return true
			}
		}
	}
	return false
}

// recorded returns the directories of the recorded runs names (under RecordedRunsDir) that can
// be drawn, and a line for each of the others: not recorded yet, or too few held-out
// evaluations to draw (runs.TooFewToDraw).
func recorded(names []string) (dirs, notDrawn []string, err error) {
	root := RecordedRunsDir()
	if root == "" {
		return nil, nil, fmt.Errorf("notebook: LONGMEMORY_ROOT is not set, so the recorded runs (docs/runs) cannot be found; the project's kernels set it")
	}
	var few []string
	for _, name := range names {
		dir := filepath.Join(root, name)
		if _, err := os.Stat(runs.LogPath(runs.RunDirs(dir)[0])); err != nil {
			notDrawn = append(notDrawn, fmt.Sprintf("%s: not recorded yet (docs/runs/%s does not exist)", name, name))
			continue
		}
		if why := runs.TooFewToDraw(dir); why != "" {
			few = append(few, name+": "+why)
			continue
		}
		dirs = append(dirs, dir)
	}
	return dirs, append(notDrawn, few...), nil
}

// RecordedVerdicts prints the verdicts of the claims ids of file (a claims file under docs/:
// "claims.tsv", "successors.tsv") on the recorded runs, as the reports give them (pkg/claims
// judges both): one line each, the outcome, the claim's source and the reason.
func RecordedVerdicts(file string, ids ...string) error {
	root := RecordedRunsDir()
	if root == "" {
		return fmt.Errorf("notebook: LONGMEMORY_ROOT is not set, so docs/claims.tsv cannot be found; the project's kernels set it")
	}
	path := filepath.Join(filepath.Dir(root), file)
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("notebook: %w", err)
	}
	defer f.Close()
	all, err := claims.Read(f, path)
	if err != nil {
		return fmt.Errorf("notebook: %w", err)
	}
	var picked []claims.Claim
	for _, id := range ids {
		i := slices.IndexFunc(all, func(c claims.Claim) bool { return c.ID == id })
		if i < 0 {
			return fmt.Errorf("notebook: no claim %q in %s", id, path)
		}
		picked = append(picked, all[i])
	}
	byName, err := claims.LoadAll(root, picked)
	if err != nil {
		return fmt.Errorf("notebook: %w", err)
	}
	for _, c := range picked {
		v := claims.Judge(c, byName)
		fmt.Printf("%s (%s): %s — %s.\n", c.ID, c.Source, strings.ToUpper(v.Outcome.Text()), v.Reason)
	}
	return nil
}
