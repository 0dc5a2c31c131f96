# The one entry point. `make help` lists the targets.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export PATH := $(CURDIR)/$(BIN):$(PATH)
# `make run BIND=... DATA_DIR=...`, or the service's own environment variables.
DATA_DIR ?= $(or $(CARTONIZE_DATA_DIR),$(CURDIR)/data)
BIND ?= $(or $(CARTONIZE_BIND),127.0.0.1:8080)

.PHONY: help run test fuzz develop chromium lint typecheck rust-test py-test bench bench-full bench-load samples screenshots lock clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

$(BIN)/.installed: requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.lock
	touch $@

develop: $(BIN)/.installed ## build the Rust engine (release) into the virtual environment
	$(BIN)/maturin develop --release --quiet

run: develop ## run the service: API on http://$(BIND), Dagster UI on :3000, scheduler (all under $(DATA_DIR))
	CARTONIZE_DATA_DIR=$(DATA_DIR) CARTONIZE_BIND=$(BIND) $(BIN)/python -m cartonize.serve

lint: $(BIN)/.installed ## formatting and lints, Rust and Python
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: develop ## mypy --strict on python/, api/, pipelines/, bench/ and the independent validator, and the binding's stub against the binary
	$(BIN)/mypy --strict python/ api/ pipelines/ tests/validator.py bench/
	$(BIN)/python -m mypy.stubtest cartonize._core

rust-test: ## cargo test
	cargo test --workspace

py-test: develop chromium ## pytest
	$(BIN)/pytest -q

test: lint typecheck rust-test py-test ## everything CI runs

SEEDS ?= 1 2 3
FUZZ_TESTS = tests/test_properties.py tests/test_box_count_limits.py tests/test_fragile.py \
	tests/test_box_choice_monotone.py tests/api/test_pack_schema_fuzz.py \
	tests/api/test_sync_write_fuzz.py tests/api/test_webhook_fuzz.py

fuzz: develop ## the property tests ten times longer on fresh examples, once per seed in SEEDS (not in CI)
	for seed in $(SEEDS); do \
		HYPOTHESIS_PROFILE=fuzz $(BIN)/pytest -q --hypothesis-seed=$$seed $(FUZZ_TESTS) || exit 1; \
	done

CHROMIUM ?= /usr/bin/chromium
chromium: ## Debian's chromium for the console's browser tests (installed once, needs root)
	@test -x $(CHROMIUM) || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q chromium; }

bench: develop ## the benchmark suite, quick mode (a few minutes); figures go to docs/benchmarks.md by hand
	$(BIN)/python -m bench.pack_speed --orders 100 --repeats 3
	$(BIN)/python -m bench.render_speed
	$(BIN)/python -m bench.mpv --quick
	$(BIN)/python -m bench.container --quick
	$(BIN)/python -m bench.ecommerce --orders 200
	$(BIN)/python -m bench.peers --quick

bench-full: develop ## the benchmark suite with the complete figures (about 15 minutes on 2 cores)
	$(BIN)/python -m bench.pack_speed
	$(BIN)/python -m bench.render_speed
	$(BIN)/python -m bench.mpv
	$(BIN)/python -m bench.container
	$(BIN)/python -m bench.ecommerce
	$(BIN)/python -m bench.peers
	cargo bench -p cartonize-core --bench engine

samples: develop ## write the sample pictures of docs/pictures.md to docs/images/
	$(BIN)/python docs/make_samples.py

screenshots: develop chromium ## screenshots of every console page for docs/console.md (docs/images/console-*.png)
	$(BIN)/python docs/make_screenshots.py

bench-load: develop ## load benchmark of the service under gunicorn (wrk if installed)
	$(BIN)/python -m bench.load

lock: ## re-pin Python dependencies from requirements.in
	rm -rf /tmp/cartonize-lock && $(PYTHON) -m venv /tmp/cartonize-lock && /tmp/cartonize-lock/bin/pip install --quiet -r requirements.in
	/tmp/cartonize-lock/bin/pip freeze > requirements.lock

clean: ## remove build outputs and the virtual environment
	cargo clean
	rm -rf $(VENV) python/cartonize/_core*.so
