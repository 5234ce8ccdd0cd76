package runs

import (
	"flag"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/experiments"
	"github.com/urnn-notebooks/longmemory/pkg/models/lru"
)

// ApplyOverrides sets the fields of p that args name as flags of BindFlags ("-T 100",
// "-lr=1e-3"): how the CLI's train and a sweep's runs file override a preset's settings.
func ApplyOverrides(p *experiments.Preset, args []string) error {
	fs := flag.NewFlagSet("overrides", flag.ContinueOnError)
	var msg strings.Builder
	fs.SetOutput(&msg)
	apply := BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("overrides %q: %v", strings.Join(args, " "), err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("overrides %q: unexpected argument %q (flags only)", strings.Join(args, " "), fs.Arg(0))
	}
	return apply(p)
}

// presetFlag binds flag -name to one field of the preset. Flags are parsed before the preset
// is known (it comes from -preset, from run.json with -resume, or is the custom default), so
// bind registers the flag on that field of a scratch preset, and apply, called for the flags
// given once the preset is loaded, checks the value and copies it into the run's preset.
type presetFlag struct {
	name  string
	bind  func(fs *flag.FlagSet, scratch *experiments.Preset)
	apply func(p, scratch *experiments.Preset) error
	field func(p *experiments.Preset) any // a pointer to the field, for FlagNames
}

// flagValue are the types of the preset's fields that flags set.
type flagValue interface {
	string | int | uint64 | float64 | bool
}

// field returns the binding of flag -name (default def in the usage text, the preset's value
// otherwise) to the field at returns. A value given must satisfy valid (nil: any value), else
// the error names the flag, the value and want.
func field[T flagValue](name, usage string, def T, at func(*experiments.Preset) *T, valid func(T) bool, want string) presetFlag {
	return presetFlag{
		name: name,
		bind: func(fs *flag.FlagSet, scratch *experiments.Preset) {
			// The flag package's own Values, so that -h names the argument types (int, float, …).
			switch v := any(at(scratch)).(type) {
			case *string:
				fs.StringVar(v, name, any(def).(string), usage)
			case *int:
				fs.IntVar(v, name, any(def).(int), usage)
			case *uint64:
				fs.Uint64Var(v, name, any(def).(uint64), usage)
			case *float64:
				fs.Float64Var(v, name, any(def).(float64), usage)
			case *bool:
				fs.BoolVar(v, name, any(def).(bool), usage)
			}
		},
		apply: func(p, scratch *experiments.Preset) error {
			v := *at(scratch)
			if valid != nil && !valid(v) { // 0 is not "the default" on the command line
				return fmt.Errorf("-%s = %v, want %s", name, v, want)
			}
			*at(p) = v
			return nil
		},
		field: func(p *experiments.Preset) any { return at(p) },
	}
}

// atLeast accepts the integers >= lo; positive the numbers > 0 (and 0 if orZero) but +Inf.
func atLeast(lo int) func(int) bool { return func(v int) bool { return v >= lo } }
func positive(orZero bool) func(float64) bool {
	return func(v float64) bool { return (v > 0 || orZero && v == 0) && !math.IsInf(v, 1) }
}

// pre shortens presetFlags.
type pre = experiments.Preset

// presetFlags are the flags that override the preset's fields, one line each: a field comes
// to the command line with its line here (and its name in ChangedSettings' errors with it).
var presetFlags = []presetFlag{
	field("model", "model kind: "+strings.Join(experiments.Kinds, ", "), "", func(p *pre) *string { return &p.Model.Kind }, nil, ""),
	field("hidden", "hidden units", 0, func(p *pre) *int { return &p.Model.Hidden }, nil, ""),
	field("pooling", "LT-RNN: add the l2-pooled decoder", false, func(p *pre) *bool { return &p.Model.Pooling }, nil, ""),
	field("init", fmt.Sprintf("initialisation other than the model's default: %q (Gaussian of variance 1/√fan-in, Henaff §4.1), %q (the uRNN code's bound for V) or %q (S4D-Inv); the kinds: %s",
		experiments.InitHenaff, experiments.InitCode, experiments.InitInv, experiments.InitsHelp()),
		"", func(p *pre) *string { return &p.Model.Init }, nil, ""),
	field("sigma", "LT-RNN: the nonlinearity on the inputs, linear, relu or tanh (default: relu on real-valued inputs, none on categorical)",
		"", func(p *pre) *string { return &p.Model.Sigma }, nil, ""),
	field("lr-scale-a", "expRNN: train A at this multiple of -lr (its authors: 0.1; default: one rate)", 0.0,
		func(p *pre) *float64 { return &p.Model.LRScaleA }, positive(false), "a number > 0"),
	field("forget-bias", "LSTM: the forget gate's initial bias b_f (default: the kind's, 0 for lstm, 1 for lstm-peephole)", 0.0,
		func(p *pre) *float64 { return &p.Model.ForgetBias }, func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }, "a finite number"),
	field("layers", "stack this many layers of the model, each of -hidden units reading the one below (0 or 1: one layer)", 0,
		func(p *pre) *int { return &p.Model.Layers }, atLeast(1), "an integer >= 1"),
	field("radius", "tanh RNN: draw W echo-state-network style, sparse and scaled to this spectral radius (Sutskever et al. 2013: 1.1)", 0.0,
		func(p *pre) *float64 { return &p.Model.Radius }, positive(false), "a number > 0"),
	field("output-bias", "LT-RNN: add an output bias b_y (Henaff's equations have none)", false, func(p *pre) *bool { return &p.Model.OutputBias }, nil, ""),
	field("dropout", "dropout at this rate on the non-recurrent connections: inputs, states to the readout, between layers (Zaremba et al. 2014)", 0.0,
		func(p *pre) *float64 { return &p.Model.Dropout }, func(v float64) bool { return v >= 0 && v < 1 }, "a number in [0, 1)"),
	field("recurrent-dropout", "dropout at this rate on the state carried from step to step (for contrast with -dropout)", 0.0,
		func(p *pre) *float64 { return &p.Model.RecurrentDropout }, func(v float64) bool { return v >= 0 && v < 1 }, "a number in [0, 1)"),
	field("bidirectional", "read the sequence both ways: a model forward and one backward, the outputs reading both (whole sequences, no chunks)", false,
		func(p *pre) *bool { return &p.Model.Bidirectional }, nil, ""),
	field("seq2seq", "an encoder–decoder of two models of the kind (task translate)", false, func(p *pre) *bool { return &p.Model.Seq2Seq }, nil, ""),
	field("r-min", fmt.Sprintf("LRU: the smallest |λ| at initialisation, in (0, 1) (Orvieto et al. 2023's ring; default %g)", lru.DefaultRMin), 0.0,
		func(p *pre) *float64 { return &p.Model.RMin }, func(v float64) bool { return v > 0 && v < 1 }, "a modulus in (0, 1)"),
	field("r-max", fmt.Sprintf("LRU: the largest |λ| at initialisation, in (0, 1) (default %g)", lru.DefaultRMax), 0.0,
		func(p *pre) *float64 { return &p.Model.RMax }, func(v float64) bool { return v > 0 && v < 1 }, "a modulus in (0, 1)"),
	field("max-phase", fmt.Sprintf("LRU: the largest arg λ at initialisation, in (0, 2π] (Orvieto et al. 2023 §3.3: π/10 for the longest task; default %.4g)", lru.DefaultMaxPhase), 0.0,
		func(p *pre) *float64 { return &p.Model.MaxPhase }, func(v float64) bool { return v > 0 && v <= 2*math.Pi }, "a phase in (0, 2π]"),
	field("recurrent-lr", fmt.Sprintf("deep LRU: train ν, θ and γ at this multiple of the learning rate (default %g, minimal-LRU's)", lru.PaperRecurrentLR), 0.0,
		func(p *pre) *float64 { return &p.Model.RecurrentLR }, positive(false), "a number > 0"),
	field("split-relu", "uRNN: ReLU on the real and imaginary parts separately instead of modReLU (Arjovsky et al. §3.2's rejected alternative)", false,
		func(p *pre) *bool { return &p.Model.SplitReLU }, nil, ""),
	field("no-gamma", "LRU: leave out the input normalisation γ (γ ≡ 1)", false, func(p *pre) *bool { return &p.Model.NoGamma }, nil, ""),
	field("batch-norm", "deep LRU, deep S4D: normalise each block's inputs by batch statistics instead of LayerNorm (minimal-LRU's default; needs -scan and the whole sequence in one graph)", false,
		func(p *pre) *bool { return &p.Model.BatchNorm }, nil, ""),
	field("task", "task: "+strings.Join(experiments.TaskKinds, ", "), "", func(p *pre) *string { return &p.Task.Kind }, nil, ""),
	field("T", "task length T", 0, func(p *pre) *int { return &p.Task.T }, nil, ""),
	field("dataset", "the MNIST tasks' images: \"\" for MNIST, fashion for Fashion-MNIST", "", func(p *pre) *string { return &p.Task.Dataset },
		func(v string) bool { return slices.Contains(experiments.Datasets, v) }, `"" or fashion`),
	field("reverse", "translate: feed the source reversed (Barber's slides: \"useful to reverse the input sequence order\")", false,
		func(p *pre) *bool { return &p.Task.Reverse }, nil, ""),
	field("pool", "train on a fixed set of this many sequences (the uRNN code's 100000) instead of fresh ones; held-out scores stay fresh", 0,
		func(p *pre) *int { return &p.Task.Pool }, atLeast(1), "an integer >= 1"),
	field("steps", "training steps", 0, func(p *pre) *int { return &p.Train.Steps }, atLeast(1), "an integer >= 1"),
	field("batch", "sequences per step", 0, func(p *pre) *int { return &p.Train.Batch }, atLeast(1), "an integer >= 1"),
	field("lr", "RMSProp learning rate", 0, func(p *pre) *float64 { return &p.Train.Optimizer.LR }, positive(false), "a number > 0"),
	field("adamw-lr", "AdamW's learning rate η, training instead of RMSProp (the LRU presets; 0 turns AdamW off)", -1.0,
		func(p *pre) *float64 { return &p.Train.AdamW.LR }, positive(true), "a number >= 0 (0: RMSProp)"),
	field("weight-decay", "AdamW's weight decay λ (0: none)", -1.0,
		func(p *pre) *float64 { return &p.Train.AdamW.WeightDecay }, positive(true), "a number >= 0"),
	field("nesterov", "SGD with Nesterov's accelerated gradient of this momentum μ in [0, 1) instead of RMSProp (Sutskever et al. 2013; -lr is its step)", 0.0,
		func(p *pre) *float64 { return &p.Train.Optimizer.Nesterov }, func(v float64) bool { return v >= 0 && v < 1 }, "a number in [0, 1)"),
	field("hf", "Hessian-free optimisation with at most this many CG iterations per step instead of RMSProp (Martens & Sutskever 2011; needs -chunk 0)", 0,
		func(p *pre) *int { return &p.Train.HessianFree.CGIters }, atLeast(1), "an integer >= 1"),
	field("ortho-lr", "LT-ORNN with pooling: the SGD step of the soft orthogonality penalty (default: the learning rate)", 0,
		func(p *pre) *float64 { return &p.Train.Orthogonality.LR }, positive(false), "a number > 0"),
	field("ortho-norm", "LT-ORNN with pooling: step on the mean of the norms ‖VᵀVx − x‖ instead of the mean of their squares", false,
		func(p *pre) *bool { return &p.Train.Orthogonality.Norm }, nil, ""),
	field("clip", "element-wise gradient clipping (0 turns it off)", -1, func(p *pre) *float64 { return &p.Train.Optimizer.ClipValue },
		positive(true), "a number >= 0 (0 turns clipping off)"),
	field("chunk", "BPTT chunk length (0: whole sequence in one graph)", -1, func(p *pre) *int { return &p.Train.Chunk },
		atLeast(0), "an integer >= 0 (0: the whole sequence)"),
	field("scan", "LRU, S4D: compute each chunk's states by the parallel scan (O(log T) graph nodes, O(T log T) work) instead of step by step", false,
		func(p *pre) *bool { return &p.Train.Scan }, nil, ""),
	field("seed", "random seed", 0, func(p *pre) *uint64 { return &p.Train.Seed }, nil, ""),
	field("eval-every", "evaluate on the held-out batch every N steps", 0, func(p *pre) *int { return &p.Train.EvalEvery },
		atLeast(1), "an integer >= 1"),
	field("eval-batch", "sequences in the held-out batch (default 100, fewer on long tasks)", 0, func(p *pre) *int { return &p.Train.EvalBatch },
		atLeast(1), "an integer >= 1"),
	field("checkpoint-every", "checkpoint every N steps (default 100)", 0, func(p *pre) *int { return &p.Train.CheckpointEvery },
		atLeast(1), "an integer >= 1"),
	field("scale-hidden-grad", "divide the gradients with respect to the hidden states by T (Henaff et al. §4)", false,
		func(p *pre) *bool { return &p.Train.ScaleHiddenGrad }, nil, ""),
}

// BindFlags registers presetFlags on fs. After fs.Parse, once the preset is loaded,
// apply writes the flags given into it, or returns the first invalid value's error.
func BindFlags(fs *flag.FlagSet) (apply func(p *experiments.Preset) error) {
	scratch := new(experiments.Preset)
	for _, f := range presetFlags {
		f.bind(fs, scratch)
	}
	return func(p *experiments.Preset) error {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for _, f := range presetFlags {
			if set[f.name] {
				if err := f.apply(p, scratch); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

// FlagNames names the flags of the preset's fields ("Train.Optimizer.LR" → "-lr"), for errors.
var FlagNames = func() map[string]string {
	p := new(experiments.Preset) // on the heap: its fields' addresses do not move
	path := map[uintptr]string{}
	Fields(reflect.ValueOf(p).Elem(), func(name string, f reflect.Value) { path[f.Addr().Pointer()] = name })
	names := map[string]string{}
	for _, f := range presetFlags {
		names[path[reflect.ValueOf(f.field(p)).Pointer()]] = "-" + f.name
	}
	return names
}()

// ChangedSettings describes each setting of now that differs from was (Diff: other
// than bookkeeping ones, defaults applied) as "-flag: old → new", sorted.
func ChangedSettings(was, now experiments.Preset) []string {
	var out []string
	for _, c := range Diff(was, now) {
		name := FlagNames[c.Field]
		if name == "" {
			name = c.Field
		}
		out = append(out, fmt.Sprintf("%s: %v → %v", name, c.Was, c.Now))
	}
	sort.Strings(out)
	return out
}
