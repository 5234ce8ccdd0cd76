#!/usr/bin/env bash
# Browser test: what a reader sees of the notebooks, in Chromium (Playwright) and the real
# Jupyter classic web UI, started as `make notebook` does but on a copy of the notebooks
# (build/browser/notebooks), a free port, quick mode, and an empty notary (so that no notebook is
# trusted, as for a reader who did not run it):
#  (a) opens EVERY notebook without running it and checks that each figure output of its JSON
#      shows as a visible <img>/<svg> in the same cell's output area, and that no output shows
#      run-together SVG text; screenshots build/browser/<name>.png;
#  (b) exports each notebook with `jupyter nbconvert --to html` (build/browser/html/) and checks
#      the same figures in that page; screenshots build/browser/html/<name>.png;
#  (c) runs one notebook live (Cell > Run All, quick mode), waits for its figures and screenshots
#      build/browser/live-<name>.png.
# Failures name the notebook, the cell index and the output index.
#
# Usage (from the project root):
#   tests/browser/run.sh [LIVE.ipynb | --no-live] [--notebooks DIR]
#       LIVE.ipynb: the notebook run live (default 01_tasks.ipynb); DIR: the notebooks (default notebooks)
#   tests/browser/run.sh --self-test
#       checks (a) and (b) on tests/browser/fixtures: pass/ must pass and fail/ must fail, naming
#       the broken outputs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
live=01_tasks.ipynb
src=notebooks
selftest=0
while [ $# -gt 0 ]; do
  case "$1" in
    --no-live) live=""; shift ;;
    --notebooks) src="$2"; shift 2 ;;
    --self-test) selftest=1; live=""; shift ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d'; exit 0 ;;
    -*) echo "browser-test: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) live="$1"; shift ;;
  esac
done
t0=$(date +%s)
out=build/browser
rm -rf "$out" && mkdir -p "$out/notebooks" "$out/html"
[ -d "$here/node_modules/playwright-core" ] || (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)

# The notebooks under test, relative to the server's root ($out/notebooks).
names=()
if [ "$selftest" = 1 ]; then
  for kind in pass fail; do
    mkdir -p "$out/notebooks/$kind"
    cp "$here"/fixtures/$kind/*.ipynb "$out/notebooks/$kind/"
    for f in "$out/notebooks/$kind"/*.ipynb; do names+=("$kind/$(basename "$f")"); done
  done
else
  cp "$src"/*.ipynb "$out/notebooks/"
  for f in "$out/notebooks"/*.ipynb; do names+=("$(basename "$f")"); done
fi

# (b)'s exports, all in one nbconvert run.
(cd "$out/notebooks" && /usr/bin/jupyter nbconvert --to html --output-dir "$PWD/../html" "${names[@]}") >"$out/nbconvert.log" 2>&1 ||
  { echo "browser-test: jupyter nbconvert --to html failed:"; cat "$out/nbconvert.log"; exit 1; }
echo "browser-test: exported ${#names[@]} notebook(s) with nbconvert --to html in $(( $(date +%s) - t0 )) s"

token="browser-test-$$"
port=$((20000 + RANDOM % 20000))
allow_root=""; [ "$(id -u)" = 0 ] && allow_root=--allow-root
LONGMEMORY_QUICK=1 /usr/bin/jupyter notebook --no-browser --ip=127.0.0.1 --port="$port" $allow_root \
  --NotebookApp.token="$token" --notebook-dir="$out/notebooks" --NotebookNotary.db_file=:memory: \
  >"$out/jupyter.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 1 60); do
  curl -fs "http://127.0.0.1:$port/api/status?token=$token" >/dev/null 2>&1 && break
  sleep 0.5
done
curl -fs "http://127.0.0.1:$port/api/kernelspecs?token=$token" | grep -q longmemory-go ||
  { echo "browser-test: the Jupyter server does not list the longmemory-go kernel"; cat "$out/jupyter.log"; exit 1; }
url="http://127.0.0.1:$port/?token=$token"

status=0
if [ "$selftest" = 1 ]; then
  node "$here/check_saved.mjs" "$url" "$out/notebooks" "$out/html" "$out" "${names[@]}" >"$out/selftest.log" 2>&1 || true
  cat "$out/selftest.log"
  # What the fixtures must give: pass/ all ok, fail/ these problems (and only problems in fail/).
  want=(
    "pass/figures_png.ipynb: 2 figure(s); visible in the untrusted UI 2/2, in nbconvert HTML 2/2; "
    "FAIL fail/figures_svg.ipynb cell 1 output 0 (UI): figure (SVG inside text/html) not visible: no <img> or <svg> in the output; it shows text \"Decay0.00.51.01.52.0\""
    "FAIL fail/figures_svg.ipynb cell 1 output 0 (UI): shows run-together SVG text"
    "FAIL fail/figures_svg.ipynb cell 2 output 0 (UI): figure (image/svg+xml) not visible: no <img> or <svg> in the output"
    "FAIL fail/figures_svg.ipynb cell 3 output 1 (UI): figure (image/png) not visible: its <img>"
    "FAIL fail/figures_svg.ipynb cell 3 output 1 (html): figure (image/png) not visible: its <img>"
    "fail/figures_svg.ipynb: 4 figure(s); visible in the untrusted UI 1/4, in nbconvert HTML 3/4; "
  )
  for w in "${want[@]}"; do
    grep -qF -- "$w" "$out/selftest.log" || { echo "browser-test: self-test: missing: $w"; status=1; }
  done
  if grep -q "FAIL pass/" "$out/selftest.log"; then echo "browser-test: self-test: pass/ fixture failed"; status=1; fi
  n=$(grep -c "^browser-test: FAIL fail/" "$out/selftest.log" || true)
  [ "$n" = 5 ] || { echo "browser-test: self-test: $n problems in fail/, want 5"; status=1; }
  [ "$status" = 0 ] && echo "browser-test: self-test passed" || echo "browser-test: self-test FAILED"
  echo "browser-test: took $(( $(date +%s) - t0 )) s"
  exit $status
fi

# (a) and (b): every notebook as saved.
node "$here/check_saved.mjs" "$url" "$out/notebooks" "$out/html" "$out" "${names[@]}" || status=1
echo "browser-test: saved notebooks checked in $(( $(date +%s) - t0 )) s; screenshots $out/<name>.png and $out/html/<name>.png"

# (c): one notebook run live.
if [ -n "$live" ]; then
  t1=$(date +%s)
  node "$here/run_notebook.mjs" "$url" "$live" "$out/live-${live%.ipynb}.png" || status=1
  echo "browser-test: $live run live in $(( $(date +%s) - t1 )) s; screenshot $out/live-${live%.ipynb}.png"
fi
echo "browser-test: took $(( $(date +%s) - t0 )) s: $([ $status = 0 ] && echo passed || echo FAILED)"
exit $status
