#!/usr/bin/env bash
# Starts a Jupyter server as `make notebook` does (on a copy of notebooks/ and a free port,
# in quick mode), opens a notebook in Chromium with Playwright, runs all cells with the
# project's kernel, waits for a figure and saves a screenshot under build/browser/.
# Usage: tests/browser/run.sh [notebook.ipynb]   (from the project root; default 01_tasks.ipynb)
set -euo pipefail
nb="${1:-01_tasks.ipynb}"
out=build/browser
rm -rf "$out" && mkdir -p "$out/notebooks"
cp notebooks/*.ipynb "$out/notebooks/"
token="browser-test-$$"
port=$((20000 + RANDOM % 20000))
allow_root=""; [ "$(id -u)" = 0 ] && allow_root=--allow-root
LONGMEMORY_QUICK=1 /usr/bin/jupyter notebook --no-browser --ip=127.0.0.1 --port="$port" $allow_root \
  --NotebookApp.token="$token" --notebook-dir="$out/notebooks" >"$out/jupyter.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 1 60); do
  curl -fs "http://127.0.0.1:$port/api/status?token=$token" >/dev/null 2>&1 && break
  sleep 0.5
done
curl -fs "http://127.0.0.1:$port/api/kernelspecs?token=$token" | grep -q longmemory-go ||
  { echo "browser-test: the Jupyter server does not list the longmemory-go kernel"; cat "$out/jupyter.log"; exit 1; }
node tests/browser/run_notebook.mjs "http://127.0.0.1:$port/?token=$token" "$nb" "$out/${nb%.ipynb}.png"
echo "browser-test: screenshot $out/${nb%.ipynb}.png"
