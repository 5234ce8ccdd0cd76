#!/usr/bin/env bash
# The 8-seed runs of notebook 11 ("After the uRNN", issue #16) at full size: every model of
# experiments.SuccessorKinds on copy T = 500 (3000 steps) and adding T = 400 (10 000 steps),
# the presets successors/… unchanged (docs/SETTINGS.md, "After the uRNN"). Then the figures
# and docs/SUCCESSORS.md, written whole from the run directories.
# Usage, from the project root (resumable; see docs/runs.sh):
#   bash docs/run_successors.sh [runs-dir]     (default docs/runs)
#   LM=build/lm bash docs/run_successors.sh
# Steps took here (2 cores, busy) at T = 100: uRNN 128 ~190 ms, full-capacity uRNN 61 ~85 ms,
# expRNN 93 ~100 ms, scoRNN 93 ~90 ms, SCRN 61 ~75 ms, ESN 128 ~20 ms, LSTM 40 ~95 ms; the time
# grows linearly with T (5× at T = 500). Copy at full size is therefore about 8 × 3000 steps ×
# 0.2–1 s ≈ 1.5–7 h per model: the script is meant to be resumed over several sessions.
set -euo pipefail
source "$(dirname "$0")/runs.sh"
copy=(urnn-128 fc-urnn-61 exprnn-93 scornn-93 scrn-61 esn-128 lstm-peephole-40)
adding=(urnn-512 fc-urnn-86 exprnn-125 scornn-125 scrn-80 esn-512 lstm-peephole-128)
for m in "${copy[@]}"; do
	claim "successors-copy-T500-$m" -preset "successors/copy-T500/$m" -eval-every 50
done
for m in "${adding[@]}"; do
	claim "successors-adding-T400-$m" -preset "successors/adding-T400/$m" -eval-every 100
done
fig successors-copy-T500 "copy, T = 500, 8 seeds: after the uRNN" "${copy[@]/#/successors-copy-T500-}"
fig successors-adding-T400 "adding, T = 400, 8 seeds: after the uRNN" "${adding[@]/#/successors-adding-T400-}"
{
	echo "# After the uRNN: 8 seeds at full size"
	echo
	echo "Written by \`bash docs/run_successors.sh\` from the run directories under \`$out\` (\`longmemory summary\`);"
	echo "notebook 11 explains the models and runs them at small sizes. Settings: docs/SETTINGS.md, \"After the uRNN\"."
	echo
	echo "## Runs"
	echo
	"$lm" summary "${copy[@]/#/$out/successors-copy-T500-}" "${adding[@]/#/$out/successors-adding-T400-}"
	echo
	echo "## Figures (median and min–max band over the seeds; the baseline dashed)"
	echo
	echo "![copy](figures/successors-copy-T500.png)"
	echo "![adding](figures/successors-adding-T400.png)"
} > docs/SUCCESSORS.md
