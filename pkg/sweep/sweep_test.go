package sweep

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
	"github.com/urnn-notebooks/longmemory/pkg/runs"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

const header = "name\tpreset\toverrides\tseeds\tsteps\tthen\n"

// tiny is a runs file of two small runs of two seeds each.
const tiny = "# two runs\n" + header +
	"a\tarjovsky/copy-T100/tanh-80\t-hidden 4 -T 5 -batch 4 -eval-every 2 -checkpoint-every 2\t2\t6\t-\n" +
	"b\thenaff/adding-T400/lt-irnn-128\t-hidden 4 -T 5 -batch 4 -eval-every 2 -checkpoint-every 2 -lr 1e-3\t2\t4\t-\n"

func TestParse(t *testing.T) {
	rs, err := Parse(strings.NewReader(tiny), "runs.tsv")
	if err != nil || len(rs) != 2 {
		t.Fatalf("Parse = %v, %v", rs, err)
	}
	if r := rs[1]; r.Name != "b" || r.Seeds != 2 || r.Steps != 4 || r.Line != 4 || strings.Join(r.Overrides, " ") != "-hidden 4 -T 5 -batch 4 -eval-every 2 -checkpoint-every 2 -lr 1e-3" {
		t.Errorf("run b: %+v", r)
	}
	if p, err := rs[1].Settings(); err != nil || p.Train.Steps != 4 || p.Train.Optimizer.LR != 1e-3 || p.Task.T != 5 {
		t.Errorf("run b's settings: %+v, %v", p, err)
	}
	if got, err := Only(rs, []string{"b", "a"}); err != nil || len(got) != 2 || got[0].Name != "a" || got[1].Name != "b" {
		t.Errorf("Only(b, a) = %v, %v; want a and b in the file's order", got, err)
	}
	if got, err := Only(rs, []string{"b", "c"}); err == nil || !strings.Contains(err.Error(), `no run named "c"`) {
		t.Errorf("Only(b, c) = %v, %v; want an error naming c", got, err)
	}
	if sec, err := Parse(strings.NewReader(header+"a\tarjovsky/copy-T100/tanh-80\t-\t8\t2200s\t-\n"), "runs.tsv"); err != nil || sec[0].Seconds != 2200 || sec[0].Steps != 0 {
		t.Errorf("a horizon of 2200s: %+v, %v; want Seconds 2200 and Steps 0", sec, err)
	}
	for _, tc := range []struct{ file, want string }{
		{"a\tb\n", "runs.tsv:1: header"},
		{header + "a\tarjovsky/copy-T100/tanh-80\t-\t8\n", "runs.tsv:2: 4 tab-separated columns, want 6"},
		{header + "a\tno/such\t-\t8\t10\t-\n", "runs.tsv:2: "},
		{header + "a\tarjovsky/copy-T100/tanh-80\t-lr -1\t8\t10\t-\n", "runs.tsv:2: -lr = -1, want a number > 0"},
		{header + "a\tarjovsky/copy-T100/tanh-80\t-\t0\t10\t-\n", `runs.tsv:2: seeds "0", want an integer from 1 to 64`},
		{header + "a\tarjovsky/copy-T100/tanh-80\t-\t8\tten\t-\n", `runs.tsv:2: steps "ten", want an integer >= 1`},
		{header + "a\tarjovsky/copy-T100/tanh-80\t-\t8\t0s\t-\n", `runs.tsv:2: steps "0s", want an integer >= 1, or seconds of training > 0 followed by s`},
		{header + "a\tarjovsky/copy-T100/tanh-80\t-\t8\tNaNs\t-\n", `runs.tsv:2: steps "NaNs"`},
		{header + "a\tarjovsky/copy-T100/tanh-80\t-\t8\t10\tplot\n", `runs.tsv:2: then "plot", want -, fit FLAGS or eval`},
		{header + "a b\tarjovsky/copy-T100/tanh-80\t-\t8\t10\t-\n", `runs.tsv:2: name "a b"`},
		{header + "a\tarjovsky/copy-T100/tanh-80\t-\t8\t10\t-\na\tarjovsky/copy-T100/tanh-80\t-\t8\t10\t-\n", "runs.tsv:3: run a is already on line 2"},
		{"", "no header line"},
	} {
		if _, err := Parse(strings.NewReader(tc.file), "runs.tsv"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", tc.file, err, tc.want)
		}
	}
}

// TestTrainStopResume: a sweep stopped part-way (every running replica checkpoints) and run
// again ends with the same logs and checkpoints, byte for byte but the wall time, as a sweep
// never stopped; Status reads the progress from the directories.
func TestTrainStopResume(t *testing.T) {
	rs, err := Parse(strings.NewReader(tiny), "runs.tsv")
	if err != nil {
		t.Fatal(err)
	}
	b := backend.MustNew()
	whole, parts := t.TempDir(), t.TempDir()
	opt := Options{Train: runs.Options{Backend: b, Restart: true}}
	if err := Train(context.Background(), whole, rs, opt); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := opt
	stopped.Train.OnRecord = func(r train.Record) {
		if r.Step == 3 {
			cancel()
		}
	}
	if err := Train(ctx, parts, rs, stopped); err == nil {
		t.Fatal("a stopped sweep returned no error")
	}
	states, err := Status(parts, rs)
	if err != nil || states[0].Done() || states[1].Replicas[0].Step != 0 {
		t.Fatalf("after the stop: %+v, %v; want run a part-way and run b not started", states, err)
	}
	if err := Train(context.Background(), parts, rs, opt); err != nil {
		t.Fatal(err)
	}
	states, err = Status(parts, rs)
	if err != nil || !states[0].Done() || !states[1].Done() {
		t.Fatalf("after the second sweep: %+v, %v", states, err)
	}
	for _, st := range states {
		var last float64
		for _, rep := range runs.Replicas(filepath.Join(parts, st.Run.Name)) {
			log, _ := runs.ReadLog(runs.LogPath(rep))
			last = max(last, log[len(log)-1].Seconds)
		}
		if st.Seconds != last || !(last > 0) || !slices.Equal(st.Hosts, []string{runs.Host()}) {
			t.Errorf("%s: Status says %g s on %q, want the longest log's %g s on this machine, %q",
				st.Run.Name, st.Seconds, st.Hosts, last, runs.Host())
		}
	}
	// A runs file asking other settings of a trained run: Status says which.
	other := strings.Replace(tiny, "-lr 1e-3", "-lr 2e-3", 1)
	ors, err := Parse(strings.NewReader(other), "other.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if st, err := Status(parts, ors); err != nil || len(st[1].Differs) != 1 || st[1].Differs[0].Field != "Train.Optimizer.LR" || st[0].Differs != nil {
		t.Errorf("Status of a runs file asking another learning rate: %+v, %v", st, err)
	}
	var out bytes.Buffer
	WriteStatus(&out, states)
	if !strings.Contains(out.String(), "2 of 2 runs done, ") || !strings.Contains(out.String(), "6–6 / 6") ||
		!strings.Contains(out.String(), runs.Host()) {
		t.Errorf("WriteStatus:\n%s", out.String())
	}
	for _, r := range rs {
		for _, rep := range runs.Replicas(filepath.Join(whole, r.Name)) {
			other := filepath.Join(parts, r.Name, filepath.Base(rep))
			la, _ := runs.ReadLog(runs.LogPath(rep))
			lb, _ := runs.ReadLog(runs.LogPath(other))
			if len(la) != r.Steps || len(la) != len(lb) {
				t.Fatalf("%s: logs of %d and %d records, want %d", rep, len(la), len(lb), r.Steps)
			}
			for i := range la {
				la[i].Seconds, lb[i].Seconds = 0, 0
				if fmt.Sprintf("%+v", la[i]) != fmt.Sprintf("%+v", lb[i]) {
					t.Errorf("%s record %d: %v, stopped and resumed %v", rep, i, la[i], lb[i])
				}
			}
			ck := filepath.Join("checkpoints", fmt.Sprintf("ckpt-%09d.gob", r.Steps))
			ca, _ := os.ReadFile(filepath.Join(rep, ck))
			cb, _ := os.ReadFile(filepath.Join(other, ck))
			if len(ca) == 0 || !bytes.Equal(ca, cb) {
				t.Errorf("%s: final checkpoints differ (%d, %d bytes)", rep, len(ca), len(cb))
			}
		}
	}
}

// TestFinishedRunsKeepWeights: a run at its horizon keeps one checkpoint of its weights
// (runs.Finish); raising its horizon trains on from them, the optimizer's state afresh, and
// run.json's span from the old horizon says so.
func TestFinishedRunsKeepWeights(t *testing.T) {
	rs, err := Parse(strings.NewReader(tiny), "runs.tsv")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	var said []string
	opt := Options{Train: runs.Options{Backend: backend.MustNew()}, Log: func(s string) { said = append(said, s) }}
	opt.Train.Notice = func(s string) { said = append(said, s) }
	if err := Train(context.Background(), root, rs[:1], opt); err != nil {
		t.Fatal(err)
	}
	rep := runs.ReplicaDir(filepath.Join(root, "a"), 0)
	entries, _ := os.ReadDir(runs.CheckpointDir(rep))
	if len(entries) != 1 || entries[0].Name() != "ckpt-000000006.gob" {
		t.Fatalf("a finished replica's checkpoints: %v, want ckpt-000000006.gob alone", entries)
	}
	if !strings.Contains(strings.Join(said, "\n"), "kept the final weights") {
		t.Errorf("the sweep did not say it kept the final weights:\n%s", strings.Join(said, "\n"))
	}
	// Done runs are finished again at no cost: the sweep leaves the file as it is.
	final, _ := os.ReadFile(filepath.Join(runs.CheckpointDir(rep), entries[0].Name()))
	if err := Train(context.Background(), root, rs[:1], opt); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(runs.CheckpointDir(rep), entries[0].Name())); !bytes.Equal(again, final) {
		t.Error("a second sweep rewrote a finished run's checkpoint")
	}

	longer, err := Parse(strings.NewReader(strings.Replace(tiny, "\t2\t6\t-\n", "\t2\t8\t-\n", 1)), "longer.tsv")
	if err != nil {
		t.Fatal(err)
	}
	said = nil
	if err := Train(context.Background(), root, longer[:1], opt); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(said, "\n"), "the optimizer's state starts afresh") {
		t.Errorf("training on past the horizon did not say the optimizer starts afresh:\n%s", strings.Join(said, "\n"))
	}
	meta, err := runs.ReadMeta(rep)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(meta.Spans); n != 2 || meta.Spans[0].FreshOptimizer || meta.Spans[1].From != 6 || !meta.Spans[1].FreshOptimizer {
		t.Errorf("run.json's spans after training on from the final weights: %+v; want a second span from step 6 marked FreshOptimizer", meta.Spans)
	}
	if log, err := runs.ReadLog(runs.LogPath(rep)); err != nil || len(log) != 8 {
		t.Errorf("log after training on: %d records, %v; want 8", len(log), err)
	}
}

// TestSecondsHorizon: a run whose horizon is in seconds trains until its replicas reach the
// steps those seconds buy at the speed their logs measure (runs.StepsBought, as the claims
// judge a budget of seconds), and finishes there.
func TestSecondsHorizon(t *testing.T) {
	const seconds = 1.0
	rs, err := Parse(strings.NewReader(header+
		"a\tarjovsky/copy-T100/tanh-80\t-hidden 4 -T 5 -batch 4 -eval-every 50 -checkpoint-every 50\t2\t1s\t-\n"), "runs.tsv")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	opt := Options{Train: runs.Options{Backend: backend.MustNew()}}
	if err := Train(context.Background(), root, rs, opt); err != nil {
		t.Fatal(err)
	}
	states, err := Status(root, rs)
	if err != nil {
		t.Fatal(err)
	}
	var logs [][]train.Record
	for _, rep := range runs.Replicas(filepath.Join(root, "a")) {
		log, err := runs.ReadLog(runs.LogPath(rep))
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, log)
	}
	bought := runs.StepsBought(seconds, runs.ReplicasStepSeconds(logs...))
	st := states[0]
	// A step of this run takes milliseconds, so that 1 s buys more than the TimingSteps that
	// time it: the sweep must have trained on after timing it.
	if !st.Done() || st.Horizon != bought || bought <= TimingSteps {
		t.Fatalf("after the sweep: done %v, horizon %d; want done at the %d steps that %g s buy at the logs' speed", st.Done(), st.Horizon, bought, seconds)
	}
	for _, p := range st.Replicas {
		if p.Step < bought {
			t.Errorf("seed %d: %d steps, short of the %d that %g s buy", p.Seed, p.Step, bought, seconds)
		}
	}
	entries, _ := os.ReadDir(runs.CheckpointDir(runs.ReplicaDir(filepath.Join(root, "a"), 0)))
	if len(entries) != 1 {
		t.Errorf("a finished replica keeps %d checkpoints, want its final weights alone", len(entries))
	}
	var out bytes.Buffer
	WriteStatus(&out, states)
	if want := fmt.Sprintf("/ %d (1 s)", st.Horizon); !strings.Contains(out.String(), want) {
		t.Errorf("WriteStatus does not say %q:\n%s", want, out.String())
	}
}
