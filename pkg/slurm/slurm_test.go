package slurm

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// directivesOf returns the #SBATCH lines of a script.
func directivesOf(script string) []string {
	var d []string
	for line := range strings.Lines(script) {
		if strings.HasPrefix(line, "#SBATCH") {
			d = append(d, strings.TrimSuffix(line, "\n"))
		}
	}
	return d
}

func TestScriptDirectives(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    Array
		want []string
	}{{
		name: "throttled, with time and dir",
		a:    Array{Name: "sweep", Command: []string{"train"}, Tasks: 12, MaxAtOnce: 3, Time: "8:00:00", WarnBefore: 300, Dir: "/runs/sweep"},
		want: []string{
			"#SBATCH --job-name=sweep",
			"#SBATCH --array=0-11%3",
			"#SBATCH --requeue",
			"#SBATCH --signal=B:USR1@300",
			"#SBATCH --open-mode=append",
			"#SBATCH --output=/runs/sweep/slurm-%A_%a.out",
			"#SBATCH --chdir=/runs/sweep",
			"#SBATCH --time=8:00:00",
		},
	}, {
		name: "no limit, defaults",
		a:    Array{Command: []string{"train"}, Tasks: 1},
		want: []string{
			"#SBATCH --array=0-0",
			"#SBATCH --requeue",
			"#SBATCH --signal=B:USR1@120",
			"#SBATCH --open-mode=append",
			"#SBATCH --output=slurm-%A_%a.out",
		},
	}, {
		name: "quoted values",
		a:    Array{Name: `long "memory" #1`, Command: []string{"train"}, Tasks: 2, Dir: `/runs/a b/100%`},
		want: []string{
			`#SBATCH --job-name="long \"memory\" #1"`,
			"#SBATCH --array=0-1",
			"#SBATCH --requeue",
			"#SBATCH --signal=B:USR1@120",
			"#SBATCH --open-mode=append",
			`#SBATCH --output="/runs/a b/100%%/slurm-%A_%a.out"`,
			`#SBATCH --chdir="/runs/a b/100%"`,
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Script(tc.a)
			if err != nil {
				t.Fatal(err)
			}
			if got := directivesOf(s); !slices.Equal(got, tc.want) {
				t.Errorf("directives:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if !strings.HasPrefix(s, "#!/bin/bash\n#SBATCH ") {
				t.Errorf("the script does not start with #!/bin/bash and its directives:\n%s", s)
			}
		})
	}
}

// TestScriptBody checks that the script runs the command in the background, traps USR1 and
// TERM, requeues its own task after USR1, and is valid bash.
func TestScriptBody(t *testing.T) {
	s, err := Script(Array{Command: []string{"/bin/train", "-run", "a b", "it's"}, Tasks: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`/bin/train -run 'a b' 'it'\''s' &` + "\n",
		"trap on_usr1 USR1\n",
		"trap on_term TERM\n",
		`kill -USR1 "$child"`,
		`kill -TERM "$child"`,
		`task="${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"`,
		`scontrol requeue "$task" && exit 0`,
		`exit "$status"`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the script lacks %q:\n%s", want, s)
		}
	}
	if strings.Index(s, "trap on_usr1 USR1") > strings.Index(s, "/bin/train") {
		t.Errorf("the command starts before the traps are set:\n%s", s)
	}
	if out, err := exec.Command("bash", "-n", "-c", s).CombinedOutput(); err != nil {
		t.Errorf("bash -n: %v: %s", err, out)
	}
}

func TestScriptErrors(t *testing.T) {
	ok := Array{Command: []string{"train"}, Tasks: 4}
	for _, tc := range []struct {
		name string
		edit func(*Array)
		want []string // in the error
	}{
		{"no tasks", func(a *Array) { a.Tasks = 0 }, []string{"Tasks is 0", "1 or more"}},
		{"negative tasks", func(a *Array) { a.Tasks = -3 }, []string{"Tasks is -3", "1 or more"}},
		{"negative MaxAtOnce", func(a *Array) { a.MaxAtOnce = -1 }, []string{"MaxAtOnce is -1", "0 (no limit) or more"}},
		{"negative WarnBefore", func(a *Array) { a.WarnBefore = -5 }, []string{"WarnBefore is -5", "0 (120 s) or more"}},
		{"empty command", func(a *Array) { a.Command = nil }, []string{"Command is empty"}},
		{"newline in name", func(a *Array) { a.Name = "a\nb" }, []string{"--job-name", `"a\nb"`, "newline"}},
		{"newline in dir", func(a *Array) { a.Dir = "/runs/a\r" }, []string{"--output", "newline"}},
		{"backslash in dir", func(a *Array) { a.Dir = `/runs/a\b` }, []string{`"/runs/a\\b"`, "backslash", "want none"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := ok
			tc.edit(&a)
			_, err := Script(a)
			if err == nil {
				t.Fatalf("Script(%+v) gave no error", a)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	if _, err := Script(ok); err != nil {
		t.Errorf("Script(%+v): %v", ok, err)
	}
}

func TestSubmitAfterErrors(t *testing.T) {
	if _, err := SubmitAfter(t.Context(), "x", "", []string{"true"}, "12; rm -rf /", nil); err == nil || !strings.Contains(err.Error(), `"12; rm -rf /"`) {
		t.Errorf("a bad job id: error %v, want one naming it", err)
	}
	if _, err := SubmitAfter(t.Context(), "x", "", nil, "12", nil); err == nil || !strings.Contains(err.Error(), "command is empty") {
		t.Errorf("an empty command: error %v, want 'command is empty'", err)
	}
	if _, err := SubmitAfter(t.Context(), "x", `/a\b`, []string{"true"}, "12", nil); err == nil || !strings.Contains(err.Error(), "backslash") {
		t.Errorf("a backslash in the directory: error %v, want one about it", err)
	}
}

// TestScriptRelativeDir checks that a relative Dir is made absolute, so that the log goes
// to Dir and not to Dir/Dir.
func TestScriptRelativeDir(t *testing.T) {
	t.Chdir(t.TempDir())
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Script(Array{Command: []string{"train"}, Tasks: 1, Dir: "runs"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#SBATCH --chdir=" + wd + "/runs\n", "#SBATCH --output=" + wd + "/runs/slurm-%A_%a.out\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("the script lacks %q:\n%s", want, s)
		}
	}
}

// TestShellQuote checks the quoting exactly and by a round trip through bash: printf gets
// back every argument unchanged.
func TestShellQuote(t *testing.T) {
	for s, want := range map[string]string{
		"plain-word_1.5,a=b:c/d@e%f+g": "plain-word_1.5,a=b:c/d@e%f+g",
		"":                             "''",
		"a b":                          "'a b'",
		"it's":                         `'it'\''s'`,
		`"x"`:                          `'"x"'`,
		"$HOME":                        "'$HOME'",
	} {
		if got := shellQuote(s); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", s, got, want)
		}
	}
	args := []string{"a b", "it's", `say "hi"`, "$HOME", "`id`", `back\slash`, "two\nlines", "*", "", "-n", "a;b|c&d", "'", "é ü"}
	line := shellCommand(append([]string{"printf", `%s\0`}, args...))
	out, err := exec.Command("bash", "-c", line).Output()
	if err != nil {
		t.Fatalf("bash -c %s: %v", line, err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if !slices.Equal(got, args) {
		t.Errorf("bash read %q back as %q", args, got)
	}
}

func TestSbatchQuote(t *testing.T) {
	for s, want := range map[string]string{
		"8:00:00":  "8:00:00",
		"a b":      `"a b"`,
		`say "hi"`: `"say \"hi\""`,
		`a\b`:      `"a\\b"`,
		"run#1":    `"run#1"`,
		"it's":     `"it's"`,
	} {
		got, err := sbatchQuote(s)
		if err != nil || got != want {
			t.Errorf("sbatchQuote(%q) = %s, %v; want %s", s, got, err, want)
		}
	}
	if _, err := sbatchQuote("a\nb"); err == nil {
		t.Error("sbatchQuote of a newline gave no error")
	}
}

func TestParseTasks(t *testing.T) {
	out := "3    PENDING    0\n1    RUNNING    2\n0    COMPLETED  0\nN/A  COMPLETED  0\n"
	got, err := parseTasks(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []TaskState{{-1, "COMPLETED", 0}, {0, "COMPLETED", 0}, {1, "RUNNING", 2}, {3, "PENDING", 0}}
	if !slices.Equal(got, want) {
		t.Errorf("parseTasks = %v, want %v", got, want)
	}
	for _, bad := range []string{"1 RUNNING\n", "x RUNNING 0\n", "1 RUNNING many\n"} {
		if _, err := parseTasks(bad); err == nil || !strings.Contains(err.Error(), strings.TrimSpace(bad)) {
			t.Errorf("parseTasks(%q): error %v, want one quoting the line", bad, err)
		}
	}
}
