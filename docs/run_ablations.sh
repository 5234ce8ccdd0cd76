#!/usr/bin/env bash
# The 8-seed ablations of docs/SETTINGS.md (issue #12, §1): where a paper is silent or a preset
# departs from its words, both choices are trained and docs/ABLATIONS.md, written whole from the
# run directories, shows the effect. Each arm is a run directory under docs/runs; the presets'
# own arm is the claim's run of docs/run_claims.sh where one exists (trained there).
# Usage, from the project root (resumable; REPORT, QUICK and STEPS as in docs/runs.sh):
#   bash docs/run_ablations.sh [runs-dir]     (default docs/runs)
#   LM=build/lm bash docs/run_ablations.sh
set -euo pipefail
source "$(dirname "$0")/runs.sh"
# D7: the IRNN's learning rate (Arjovsky §4: "would only run without blowing up with incredibly
# low learning rates and gradient clipping", "a learning rate of 10⁻⁸"), copy T = 100.
claim arjovsky-copy-T100-irnn        -preset arjovsky/copy-T100/irnn-80 -steps 3000 -eval-every 25
claim arjovsky-copy-T100-irnn-lr1e-5 -preset arjovsky/copy-T100/irnn-80 -steps 3000 -eval-every 25 -lr 1e-5
claim arjovsky-copy-T100-irnn-lr1e-8 -preset arjovsky/copy-T100/irnn-80 -steps 3000 -eval-every 25 -lr 1e-8
# D6: the draft's 32 hidden units for the baselines against the published version's sizes, copy T = 100.
claim arjovsky-copy-T100-lstm-32 -preset arjovsky/copy-T100/lstm-peephole-40 -hidden 32 -steps 3000 -eval-every 25
claim arjovsky-copy-T100-tanh-32 -preset arjovsky/copy-T100/tanh-80          -hidden 32 -steps 3000 -eval-every 25
claim arjovsky-copy-T100-irnn-32 -preset arjovsky/copy-T100/irnn-80          -hidden 32 -steps 3000 -eval-every 25
# D9: the uRNN's input matrix V with its authors' code's bound (-init code), copy T = 100.
claim arjovsky-copy-T100-urnn-init-code -preset arjovsky/copy-T100/urnn-128 -init code -steps 500 -eval-every 25
# C1: the authors' code trains on a fixed set of 10⁵ sequences (n_train), the presets on fresh ones.
claim arjovsky-copy-T100-urnn-pool      -preset arjovsky/copy-T100/urnn-128     -pool 100000 -steps 500 -eval-every 25
claim henaff-adding-T100-lt-irnn-pool   -preset henaff/adding-T400/lt-irnn-128 -T 100 -pool 100000 -steps 5000 -eval-every 50
# D2: Henaff's "variance 1/√n" read literally for U, W (-init henaff), LT-RNNs at T = 100.
claim henaff-copy-T100-lt-ornn-init-henaff   -preset henaff/copy-T500/lt-ornn-80   -T 100 -init henaff -steps 3000 -eval-every 50
claim henaff-adding-T100-lt-irnn-init-henaff -preset henaff/adding-T400/lt-irnn-128 -T 100 -init henaff -steps 5000 -eval-every 50
# D3: the same sentence for the LSTM ("for all models"): Gaussian against Glorot-uniform, T = 100.
claim henaff-copy-T100-lstm               -preset henaff/copy-T500/lstm-80   -T 100               -steps 5000 -eval-every 50
claim henaff-copy-T100-lstm-init-henaff   -preset henaff/copy-T500/lstm-80   -T 100 -init henaff  -steps 5000 -eval-every 50
claim henaff-adding-T100-lstm             -preset henaff/adding-T400/lstm-128 -T 100              -steps 5000 -eval-every 50
claim henaff-adding-T100-lstm-init-henaff -preset henaff/adding-T400/lstm-128 -T 100 -init henaff -steps 5000 -eval-every 50
# The forget gate's initial bias for Henaff's LSTM (not stated; Zaremba's form starts it at 0, the
# uRNN code's LSTM at 1), T = 100 (the presets' arm: henaff-copy-T100-lstm above).
claim henaff-copy-T100-lstm-forget1       -preset henaff/copy-T500/lstm-80   -T 100 -forget-bias 1 -steps 5000 -eval-every 50
# Gradient clipping for Henaff's LSTM (not stated; the presets clip nothing): element-wise at 1, T = 100.
claim henaff-adding-T100-lstm-clip1       -preset henaff/adding-T400/lstm-128 -T 100 -clip 1      -steps 5000 -eval-every 50
# σ on the inputs for adding (not stated for real inputs; the presets use ReLU, as Henaff's adding
# solution §3.2.1) and the LT-RNN's output bias (Henaff's equations have none), at T = 100 first.
claim henaff-adding-T100-lt-irnn-sigma-tanh   -preset henaff/adding-T400/lt-irnn-128 -T 100 -sigma tanh   -steps 5000 -eval-every 50
claim henaff-adding-T100-lt-irnn-sigma-linear -preset henaff/adding-T400/lt-irnn-128 -T 100 -sigma linear -steps 5000 -eval-every 50
claim henaff-adding-T100-lt-ornn-sigma-tanh   -preset henaff/adding-T400/lt-ornn-128 -T 100 -sigma tanh   -steps 5000 -eval-every 50
claim henaff-adding-T100-lt-ornn-sigma-linear -preset henaff/adding-T400/lt-ornn-128 -T 100 -sigma linear -steps 5000 -eval-every 50
claim henaff-copy-T100-lt-ornn-output-bias    -preset henaff/copy-T500/lt-ornn-80    -T 100 -output-bias  -steps 3000 -eval-every 50
# The expRNN's A at a tenth of the learning rate, as its authors train it (the presets: one rate),
# copy T = 500 (the presets' arm: docs/run_successors.sh's).
claim successors-copy-T500-exprnn-93-lra0.1 -preset successors/copy-T500/exprnn-93 -lr-scale-a 0.1 -steps 3000 -eval-every 50
quick_end # the arms below take about an hour or more each here
# The soft orthogonality penalty's SGD step (not stated; the presets take the learning rate, 1e-4),
# LT-ORNN 128 with pooling on adding T = 400 (the presets' arm: docs/run_claims.sh's; about 1.7 h).
claim henaff-adding-T400-lt-ornn-pool-ortho1e-3 -preset henaff/adding-T400/lt-ornn-128-pool -ortho-lr 1e-3 -steps 5000 -eval-every 100
# D1, D2 and the output bias at the paper's T = 500, LT-ORNN on copy, to the 10 000 steps of the
# presets' arm (docs/run_claims.sh's henaff-copy-T500-lt-ornn), so that the arms compare at equal steps.
claim henaff-copy-T500-lt-ornn-batch50     -preset henaff/copy-T500/lt-ornn-80 -batch 50     -steps 10000 -eval-every 100
claim henaff-copy-T500-lt-ornn-init-henaff -preset henaff/copy-T500/lt-ornn-80 -init henaff -steps 10000 -eval-every 100
claim henaff-copy-T500-lt-ornn-output-bias -preset henaff/copy-T500/lt-ornn-80 -output-bias -steps 10000 -eval-every 100
# D1, D2 on adding at the paper's T = 400 (the presets' arm: docs/run_claims.sh's henaff-adding-T400-lt-irnn).
claim henaff-adding-T400-lt-irnn-batch50     -preset henaff/adding-T400/lt-irnn-128 -batch 50     -steps 5000 -eval-every 100
claim henaff-adding-T400-lt-irnn-init-henaff -preset henaff/adding-T400/lt-irnn-128 -init henaff -steps 5000 -eval-every 100
# The expRNN's A at a tenth on adding T = 400, to the budget of seconds' first pass (docs/run_successors.sh).
claim successors-adding-T400-exprnn-125-lra0.1 -preset successors/adding-T400/exprnn-125 -lr-scale-a 0.1 -steps 5900 -eval-every 100
# D5: "We trained all models on batches of size 20 and 50, the best results are reported" (Arjovsky §4.2).
claim arjovsky-adding-T100-lstm-batch50 -preset arjovsky/adding-T100/lstm-peephole-128 -batch 50 -steps 10000 -eval-every 100
claim arjovsky-adding-T100-urnn-batch50 -preset arjovsky/adding-T100/urnn-512          -batch 50 -steps 10000 -eval-every 100
# D9 on adding (the presets' arm: docs/run_claims.sh's arjovsky-adding-T100-urnn).
claim arjovsky-adding-T100-urnn-init-code -preset arjovsky/adding-T100/urnn-512 -init code -steps 10000 -eval-every 100

# The ablations, each a list of arms: the title, then the run directories (the presets' arm first).
ablations=(
	"C1 a fixed set of 10⁵ training sequences (the authors' code), uRNN 128 copy T = 100|arjovsky-copy-T100-urnn arjovsky-copy-T100-urnn-pool"
	"C1 a fixed set of 10⁵ training sequences, LT-IRNN 128 adding T = 100|henaff-adding-T100-lt-irnn henaff-adding-T100-lt-irnn-pool"
	"D1 batch 50 (Henaff §4.3: \"m = 50, which was the same at the minibatch size\"), LT-ORNN 80 copy T = 500|henaff-copy-T500-lt-ornn henaff-copy-T500-lt-ornn-batch50"
	"D1 batch 50, LT-IRNN 128 adding T = 100|henaff-adding-T100-lt-irnn henaff-adding-T100-lt-irnn-batch50"
	"D1 batch 50, LT-IRNN 128 adding T = 400|henaff-adding-T400-lt-irnn henaff-adding-T400-lt-irnn-batch50"
	"D2 variance 1/√n read literally (-init henaff), LT-ORNN 80 copy T = 100|henaff-copy-T100-lt-ornn henaff-copy-T100-lt-ornn-init-henaff"
	"D2 variance 1/√n read literally, LT-IRNN 128 adding T = 100|henaff-adding-T100-lt-irnn henaff-adding-T100-lt-irnn-init-henaff"
	"D2 variance 1/√n read literally, LT-ORNN 80 copy T = 500|henaff-copy-T500-lt-ornn henaff-copy-T500-lt-ornn-init-henaff"
	"D2 variance 1/√n read literally, LT-IRNN 128 adding T = 400|henaff-adding-T400-lt-irnn henaff-adding-T400-lt-irnn-init-henaff"
	"D3 Gaussian of variance 1/√n for the LSTM (-init henaff), LSTM 80 copy T = 100|henaff-copy-T100-lstm henaff-copy-T100-lstm-init-henaff"
	"D3 Gaussian of variance 1/√n for the LSTM, LSTM 128 adding T = 100|henaff-adding-T100-lstm henaff-adding-T100-lstm-init-henaff"
	"The forget gate's initial bias for Henaff's LSTM, 0 (the presets', Zaremba's) against 1, LSTM 80 copy T = 100|henaff-copy-T100-lstm henaff-copy-T100-lstm-forget1"
	"Gradient clipping at 1 for Henaff's LSTM (not stated), LSTM 128 adding T = 100|henaff-adding-T100-lstm henaff-adding-T100-lstm-clip1"
	"σ on the inputs (relu, the presets', against tanh and none), LT-IRNN 128 adding T = 100|henaff-adding-T100-lt-irnn henaff-adding-T100-lt-irnn-sigma-tanh henaff-adding-T100-lt-irnn-sigma-linear"
	"σ on the inputs, LT-ORNN 128 adding T = 100|henaff-adding-T100-lt-ornn henaff-adding-T100-lt-ornn-sigma-tanh henaff-adding-T100-lt-ornn-sigma-linear"
	"The LT-RNN's output bias (none in the presets, as in Henaff's equations), LT-ORNN 80 copy T = 100|henaff-copy-T100-lt-ornn henaff-copy-T100-lt-ornn-output-bias"
	"The LT-RNN's output bias, LT-ORNN 80 copy T = 500|henaff-copy-T500-lt-ornn henaff-copy-T500-lt-ornn-output-bias"
	"The orthogonality penalty's SGD step, 1e-4 (the presets') against 1e-3, LT-ORNN 128 with pooling adding T = 400|henaff-adding-T400-lt-ornn-pool henaff-adding-T400-lt-ornn-pool-ortho1e-3"
	"The expRNN's A at a tenth of the learning rate (its authors' code), copy T = 500|successors-copy-T500-exprnn-93 successors-copy-T500-exprnn-93-lra0.1"
	"The expRNN's A at a tenth of the learning rate, adding T = 400|successors-adding-T400-exprnn-125 successors-adding-T400-exprnn-125-lra0.1"
	"D5 batch 50 (Arjovsky §4.2: \"batches of size 20 and 50\"), adding T = 100|arjovsky-adding-T100-lstm arjovsky-adding-T100-lstm-batch50 arjovsky-adding-T100-urnn arjovsky-adding-T100-urnn-batch50"
	"D6 the draft's 32 hidden units for the baselines, copy T = 100|arjovsky-copy-T100-lstm arjovsky-copy-T100-lstm-32 arjovsky-copy-T100-tanh arjovsky-copy-T100-tanh-32 arjovsky-copy-T100-irnn arjovsky-copy-T100-irnn-32"
	"D7 the IRNN's learning rate, copy T = 100|arjovsky-copy-T100-irnn arjovsky-copy-T100-irnn-lr1e-5 arjovsky-copy-T100-irnn-lr1e-8"
	"D8 the uRNN 512's learning rate on pixel MNIST (the authors' code: 5e-4)|arjovsky-mnist-urnn arjovsky-mnist-urnn-lr5e-4"
	"D8 the same on pixel Fashion-MNIST (the first runs, before MNIST was available)|arjovsky-fmnist-urnn arjovsky-fmnist-urnn-lr5e-4"
	"D9 the uRNN's V with its code's bound (-init code), copy T = 100|arjovsky-copy-T100-urnn arjovsky-copy-T100-urnn-init-code"
	"D9 the uRNN's V with its code's bound, adding T = 100|arjovsky-adding-T100-urnn arjovsky-adding-T100-urnn-init-code"
)
# One figure per ablation whose arms all exist (median and min–max band over the seeds), named
# for its last arm.
for a in "${ablations[@]}"; do
	arms=(${a#*|})
	fig "ablation-${arms[-1]}" "${a%%|*}" "${arms[@]}"
done
{
	echo "# Ablations: the presets' choices against the alternatives, 8 seeds each"
	echo
	echo "Written by \`bash docs/run_ablations.sh\` from the run directories under \`$out\` (\`longmemory summary\`). Each"
	echo "section is an ablation of docs/SETTINGS.md (D1…D9: what the paper says, what the presets do, why); its table has"
	echo "one row per arm, the presets' own first, with the median and min–max over the seeds of the final held-out loss (a"
	echo "seed's final is the median of its last 5 evaluations, as pkg/claims judges) and of the best (the lowest median of 5"
	echo "evaluations running). Compare arms at the same steps: an arm still short of its horizon says so in its steps column."
	echo
	echo "## Setting variants of the papers' claims"
	echo
	echo "Each changes one setting of a run a claim of docs/VERDICTS.md names (docs/variants.tsv), judged by the same rules"
	echo "(pkg/claims), outside the claims' tally."
	echo
	"$lm" verdict -rules=false -runs "$out" docs/variants.tsv
	for a in "${ablations[@]}"; do
		title=${a%%|*}
		dirs=()
		missing=()
		for r in ${a#*|}; do
			if [ -d "$out/$r" ]; then dirs+=("$out/$r"); else missing+=("$r"); fi
		done
		echo
		echo "## $title"
		echo
		if [ ${#dirs[@]} -gt 0 ]; then "$lm" summary "${dirs[@]}" || echo "(no replica of these runs has a log yet)"; fi
		if [ ${#missing[@]} -gt 0 ]; then
			echo
			echo "Not run yet: ${missing[*]}."
		fi
		arms=(${a#*|})
		f=ablation-${arms[-1]}
		if [ ${#missing[@]} -eq 0 ] && [ -f "docs/figures/$f.png" ]; then
			echo
			echo "![$f](figures/$f.png)"
		fi
	done
} > docs/ABLATIONS.md
