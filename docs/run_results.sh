#!/usr/bin/env bash
# The training runs behind docs/RESULTS.md, one after the other (each resumes if its
# directory already holds a checkpoint). Usage, from the project root:
#   bash docs/run_results.sh [runs-dir]        (default build/results)
# Then `go run ./cmd/longmemory plot` draws the figures (see RESULTS.md).
set -euo pipefail
out="${1:-build/results}"
go build -o bin/longmemory ./cmd/longmemory
run() { # name, then longmemory train flags
	local name=$1; shift
	local resume=""; [ -n "$(ls "$out/$name/checkpoints" 2>/dev/null)" ] && resume=-resume
	echo "== $name: longmemory train $* -out $out/$name"
	local s=$(date +%s)
	./bin/longmemory train "$@" -out "$out/$name" -quiet $resume
	echo "== $name: $(( $(date +%s) - s )) s"
}
# Henaff et al.: LT-ORNN vs LT-IRNN, copy and adding at T = 100 (the paper: 500/2000 and 400/750).
run henaff-copy-T100-lt-ornn   -preset henaff/copy-T500/lt-ornn-80   -T 100 -steps 2000 -eval-every 50
run henaff-copy-T100-lt-irnn   -preset henaff/copy-T500/lt-irnn-80   -T 100 -steps 1000 -eval-every 50
run henaff-adding-T100-lt-irnn -preset henaff/adding-T400/lt-irnn-128 -T 100 -steps 1000 -eval-every 50
run henaff-adding-T100-lt-ornn -preset henaff/adding-T400/lt-ornn-128 -T 100 -steps 1000 -eval-every 50
# Arjovsky et al.: copy T = 100.
run arjovsky-copy-T100-urnn -preset arjovsky/copy-T100/urnn-128          -steps 1000 -eval-every 50
run arjovsky-copy-T100-lstm -preset arjovsky/copy-T100/lstm-peephole-40  -steps 1000 -eval-every 50
run arjovsky-copy-T100-tanh -preset arjovsky/copy-T100/tanh-80           -steps 1000 -eval-every 50
# Henaff et al.: variable-length copy T = 100.
run henaff-varcopy-T100-lstm    -preset henaff/varcopy-T100/lstm-80    -steps 2000 -eval-every 50
run henaff-varcopy-T100-lt-ornn -preset henaff/varcopy-T100/lt-ornn-80 -steps 1000 -eval-every 50
# Arjovsky et al.: adding T = 100.
run arjovsky-adding-T100-lstm -preset arjovsky/adding-T100/lstm-peephole-128 -steps 1000 -eval-every 50
run arjovsky-adding-T100-urnn -preset arjovsky/adding-T100/urnn-512          -steps 300 -eval-every 50
