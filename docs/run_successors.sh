#!/usr/bin/env bash
# The 8-seed runs of notebook 11 ("After the uRNN", issue #16) at full size: every model of
# experiments.SuccessorKinds on copy T = 500 (3000 steps) and adding T = 400 (10 000 steps),
# the presets successors/… unchanged (docs/SETTINGS.md, "After the uRNN"). Then the figures
# and docs/SUCCESSORS.md, written whole from the run directories.
# Usage, from the project root (resumable; see docs/runs.sh):
#   bash docs/run_successors.sh [runs-dir]     (default docs/runs)
#   LM=build/lm bash docs/run_successors.sh
# A step's time grows linearly with T, and the runs at full size take hours each (docs/SUCCESSORS.md
# gives every run's measured seconds per step and hours): the script is meant to be resumed over
# several sessions.
set -euo pipefail
source "$(dirname "$0")/runs.sh"
# The uRNN and the LSTM of these presets train exactly what Arjovsky's presets at the same T
# train (runs.Key is the same: TestSuccessorsShareArjovskyRuns), so their runs are
# docs/run_claims.sh's arjovsky-copy-T500-… and arjovsky-adding-T400-…, trained there.
copy=(fc-urnn-61 exprnn-93 scornn-93 scrn-61 esn-128)
adding=(fc-urnn-86 exprnn-125 scornn-125 scrn-80 esn-512)
for m in "${copy[@]}"; do
	claim "successors-copy-T500-$m" -preset "successors/copy-T500/$m" -steps 3000 -eval-every 50
done
# The ESN trained as ESNs are: each replica's readout fitted in closed form to its reservoir
# (ridge regression, β = 1, on the states of 1000 copy or 2000 adding training sequences, as
# notebook 11 does), beside the RMSProp readout the claims judge. Seconds to minutes.
ridge successors-copy-T500-esn-128 -sequences 1000 -beta 1
# Adding T = 400 within the budget of seconds (docs/successors.tsv: 1500 s of training, replicas at
# once): a first pass gives each model the steps 1500 s buy at its first look's speed, and 15% more
# (the verdict cuts each run at its own measured speed), so that this table is decided in hours;
# the budget of steps (10 000) continues below.
claim arjovsky-adding-T400-urnn             -preset arjovsky/adding-T400/urnn-512          -steps 350  -eval-every 100
claim successors-adding-T400-fc-urnn-86     -preset successors/adding-T400/fc-urnn-86      -steps 3400 -eval-every 100
claim successors-adding-T400-exprnn-125     -preset successors/adding-T400/exprnn-125      -steps 5900 -eval-every 100
claim successors-adding-T400-scornn-125     -preset successors/adding-T400/scornn-125      -steps 6300 -eval-every 100
claim successors-adding-T400-scrn-80        -preset successors/adding-T400/scrn-80         -steps 9200 -eval-every 100
claim successors-adding-T400-esn-512        -preset successors/adding-T400/esn-512         -steps 1600 -eval-every 100
ridge successors-adding-T400-esn-512 -sequences 2000 -beta 1
claim arjovsky-adding-T400-lstm             -preset arjovsky/adding-T400/lstm-peephole-128 -steps 1300 -eval-every 100
# The budget of steps for the models whose 10 000 steps take at most about 1.5 h here (docs/SUCCESSORS.md
# lists the hours each open claim needs), so that every claim within 3 h is decided before the
# ablations' quick part; the shortest first, so that a session that stops the queue leaves the
# fewest claims open.
for m in scrn-80 scornn-125 exprnn-125 fc-urnn-86; do
	claim "successors-adding-T400-$m" -preset "successors/adding-T400/$m" -steps 10000 -eval-every 100
done
quick_end # the ESN 512, the LSTM 128 and the uRNN 512 to 10 000 steps take 3 h or more each
for m in "${adding[@]}"; do
	claim "successors-adding-T400-$m" -preset "successors/adding-T400/$m" -steps 10000 -eval-every 100
done
copyRuns=(arjovsky-copy-T500-urnn "${copy[@]/#/successors-copy-T500-}" arjovsky-copy-T500-lstm)
addingRuns=(arjovsky-adding-T400-urnn "${adding[@]/#/successors-adding-T400-}" arjovsky-adding-T400-lstm)
fig successors-copy-T500 "copy, T = 500, 8 seeds: after the uRNN" "${copyRuns[@]}"
fig successors-adding-T400 "adding, T = 400, 8 seeds: after the uRNN" "${addingRuns[@]}"
{
	echo "# After the uRNN: 8 seeds at full size"
	echo
	echo "Written by \`bash docs/run_successors.sh\` from the run directories under \`$out\` (\`longmemory summary\`);"
	echo "notebook 11 explains the models and runs them at small sizes. Settings: docs/SETTINGS.md, \"After the uRNN\"."
	echo
	echo "## Which solve which task within the same budget of steps, and of seconds"
	echo
	echo "\`longmemory verdict docs/successors.tsv\`, by the rules of pkg/claims (docs/VERDICTS.md): each row asks whether a model"
	echo "solves the task within a budget of steps, or of seconds of training with a run's 8 replicas at once on the project's"
	echo "2-core machines (each run gets the steps it buys at its own measured speed; docs/successors.tsv says why 480 s on copy"
	echo "and 1500 s on adding). Those machines differ from session to session (AVX-512 or only AVX2)."
	echo
	"$lm" verdict -rules=false -runs "$out" docs/successors.tsv
	echo
	echo "## Runs (the wall time is each run's: compare the models' seconds here)"
	echo
	echo "Medians over the seeds, the range in brackets; a replica's best held-out loss is the lowest median of 5 evaluations running (for a run still falling, above the last)."
	echo
	runs=()
	for r in "${copyRuns[@]}" "${addingRuns[@]}"; do [ -d "$out/$r" ] && runs+=("$out/$r"); done
	if [ ${#runs[@]} -gt 0 ]; then "$lm" summary "${runs[@]}"; fi
	echo
	echo "## The ESN's readout in closed form"
	echo
	echo "In the claims and runs above, the ESN's readout learns by RMSProp, like every other model. Echo state networks are"
	echo "usually trained otherwise: the readout is fitted in closed form to the reservoir's states, by ridge regression"
	echo "(\`longmemory fit\`, \`train.FitReadout\`). Below, that fit for each replica of the ESN runs, on the same reservoir (the"
	echo "replica's seed) and scored on the same held-out batch, beside the RMSProp readout's final held-out loss. A fit sees"
	echo "its sequences once; its seconds are the whole of its training, one replica at a time. On copy the fit is least"
	echo "squares on one-hot targets, not the cross-entropy: its accuracy compares fairly (the memoryless predictor's is"
	echo "every blank right and one recalled symbol in 8)."
	echo
	esnRuns=()
	for r in successors-copy-T500-esn-128 successors-adding-T400-esn-512; do [ -d "$out/$r" ] && esnRuns+=("$out/$r"); done
	if [ ${#esnRuns[@]} -gt 0 ]; then "$lm" fit -report "${esnRuns[@]}"; fi
	echo
	echo "## Figures (median and min–max band over the seeds; the baseline dashed)"
	echo
	for f in successors-copy-T500 successors-adding-T400; do
		if [ -f "docs/figures/$f.png" ]; then echo "![$f](figures/$f.png)"; fi
	done
} > docs/SUCCESSORS.md
# docs/RESULTS.md: the same table of which solve which task, between its two marker lines.
splice docs/RESULTS.md successors "$lm" verdict -rules=false -runs "$out" docs/successors.tsv
