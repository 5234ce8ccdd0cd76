# Shared by docs/run_claims.sh and docs/run_successors.sh (sourced, not run): the longmemory
# binary and the steps an 8-seed setting takes (claim, fig; ridge for the ESN's closed-form readout).
#   LM=build/lm bash docs/run_….sh   uses that binary instead of building bin/longmemory (for
#                                    runs that continue while the code is edited)
#   REPORT=1 bash docs/run_….sh      trains nothing: redraws the figures and rewrites the report
#                                    from the run directories as they are (a figure whose runs
#                                    do not all exist yet is left out)
#   QUICK=1 bash docs/run_….sh       trains the settings before the script's quick_end line only
#                                    (minutes to an hour each), then draws and writes as usual
#   STEPS=N bash docs/run_….sh       a first look: starts every setting that has no run yet with
#                                    N steps only (settings already run are left alone); run
#                                    again without STEPS to continue each to its horizon
# Each setting resumes if its replicas already hold checkpoints, so a script can be stopped
# (Ctrl-C, SIGTERM: every running replica saves a checkpoint) and run again to continue.
export GOTOOLCHAIN=go1.27.3 GOEXPERIMENT=simd
# Ctrl-C (SIGINT), SIGTERM or SIGHUP ends the script, not only the setting under way: longmemory
# train catches the signal, saves every replica's checkpoint and exits with 128 + the signal's
# number, and claim() then exits with that status (so that a caller, such as make runs, stops
# too). The trap ends the script on a signal that comes between two settings, except SIGINT when
# the script was started in the background (bash then ignores SIGINT and cannot trap it).
trap 'trap - INT TERM; kill -INT $$' INT TERM
out="${1:-docs/runs}"
lm="${LM:-}"
if [ -z "$lm" ]; then
	go build -o bin/longmemory ./cmd/longmemory
	lm=./bin/longmemory
fi
claim() { # name, then longmemory train flags: 8 seeds in $out/name
	[ -n "${REPORT:-}${QUICK_DONE:-}" ] && return 0
	local name=$1; shift
	local steps="" prev="" a
	for a in "$@"; do [ "$prev" = -steps ] && steps=$a; prev=$a; done
	if [ -n "$steps" ] && [ -z "${STEPS:-}" ] && reached "$out/$name" "$steps"; then
		echo "== $name: its 8 replicas have reached $steps steps (or diverged)"
		return 0
	fi
	local resume=""; [ -n "$(ls -d "$out/$name"/seed-* 2>/dev/null)" ] && resume=-resume
	local first=()
	if [ -n "${STEPS:-}" ]; then
		[ -n "$resume" ] && return 0
		first=(-steps "$STEPS")
	fi
	echo "== $name: longmemory train $* ${first[*]} -seeds 8 -out $out/$name $resume"
	local s=$(date +%s)
	# A replica that diverges is reported and stopped, the others go on (train -seeds); its
	# exit status must not end the script: the verdict counts the divergence from its log.
	# The replicas' checkpoints are committed with their logs, so that a clone continues them;
	# a replica whose checkpoints are missing all the same is trained again from step 0
	# (-restart; train says so) rather than left behind.
	local code=0
	"$lm" train "$@" "${first[@]}" -seeds 8 -out "$out/$name" -quiet $resume -restart || code=$?
	echo "== $name: $(( $(date +%s) - s )) s, exit $code"
	# train exits 128 + the signal's number when a stop signal (SIGHUP, SIGINT, SIGTERM) ended
	# it: the script stops too. The trap above cannot see to it when the script was started in
	# the background (bash then ignores SIGINT and cannot trap it), as `make runs &` is. Another
	# failure (a crash, the kernel's out-of-memory kill) is reported and the queue goes on.
	case $code in 129 | 130 | 143) exit "$code" ;; esac
}
ridge() { # run name, then longmemory fit flags: each replica's readout fitted in closed form (ridge
	# regression on its untrained reservoir, the ESN's own training) into its ridge.json; replicas
	# fitted with the same flags are left as they are. Seconds to minutes, not checkpointed.
	[ -n "${REPORT:-}${QUICK_DONE:-}" ] && return 0
	local name=$1; shift
	echo "== $name: longmemory fit $*"
	local code=0
	"$lm" fit "$@" "$out/$name" > /dev/null || code=$?
	case $code in 0) ;; 129 | 130 | 143) exit "$code" ;; *) echo "== $name: fit failed, exit $code" ;; esac
}
fig() { # figure name, title, run names: median and min–max band over the seeds
	local f=$1 title=$2; shift 2
	for r in "$@"; do
		if [ ! -d "$out/$r" ]; then
			echo "== figure $f left out: $out/$r does not exist yet" >&2
			return 0
		fi
	done
	"$lm" plot -title "$title" -o "docs/figures/$f.png" "${@/#/$out/}"
}
splice() { # file, name, then a command: its output replaces the lines between the file's
	# lines "<!-- name: …" and "<!-- end of name -->" (both kept)
	local file=$1 name=$2; shift 2
	local table; table=$(mktemp)
	"$@" > "$table"
	awk -v table="$table" -v name="$name" '
		index($0, "<!-- end of " name " -->") == 1 { skip = 0 }
		!skip { print }
		index($0, "<!-- " name ":") == 1 { while ((getline line < table) > 0) print line; skip = 1 }
	' "$file" > "$table.md"
	mv "$table.md" "$file"
	rm -f "$table"
}
reached() { # run directory, steps: all 8 replicas have reached the steps or diverged (their
	# log ends with held-out loss +Inf), so that a finished setting costs no start and compilation
	local n=0 rep last step
	for rep in "$1"/seed-*; do
		[ -f "$rep/log.csv" ] || return 1
		last=$(tail -1 "$rep/log.csv")
		step=${last%%,*}
		case $step in '' | *[!0-9]*) return 1 ;; esac
		if [ "$step" -lt "$2" ] && [ "$(echo "$last" | cut -d, -f4)" != "+Inf" ]; then return 1; fi
		n=$((n + 1))
	done
	[ $n -ge 8 ]
}
quick_end() { # QUICK=1 bash docs/run_….sh trains nothing after this line (the settings there take
	# hours each), but still draws the figures and writes the reports: a queue runs the quick part
	# of every script before the long ones
	if [ -n "${QUICK:-}" ]; then QUICK_DONE=1; fi
}
