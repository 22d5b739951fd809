# Two commands: `make demo` and `make test`. Everything else is a helper target.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
# Built wheels of source-only packages (llama-cpp-python: ~10 min to compile) are kept here,
# outside the clone, so a fresh clone on the same machine reuses them.
WHEELHOUSE ?= $(HOME)/.cache/scale-analytics/wheels
LLAMA_CPP := llama-cpp-python==0.3.36
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export RAY_AUTH_MODE := disabled
export RAY_USAGE_STATS_ENABLED := 0
export TOKENIZERS_PARALLELISM := false
# lancedb 0.40 warns on every hybrid search (its sub-queries' score columns)
export LANCEDB_LOG := error

.PHONY: install install-native install-llamacpp chromium demo test lint format cassettes bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# torch first, pinned to the CPU build on disk; never torchvision/torchaudio beside it.
$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install torch==2.13.0
	$(BIN)/pip install -e '.[dev,local]'
	rm -f $(VENV)/.installed-* && touch $(STAMP)

# The local models run on the prebuilt xllamacpp wheel: nothing compiles on the way to `make demo`.
install: $(STAMP)

# llama.cpp's server built for this CPU (8-19 min once per machine, kept outside the clone), which
# the models then use instead of the wheel; built only on a CPU with AVX-512, where it evaluates
# prompts 1.34-1.48x faster (≈1.0x on AVX2 alone: `models build-runtime --force` builds it anyway).
install-native: $(STAMP)
	$(BIN)/scale-analytics models build-runtime

# Only the runtime comparison needs llama-cpp-python (see docs/models.md).
install-llamacpp: $(STAMP)
	@ls $(WHEELHOUSE)/llama_cpp_python-0.3.36-*.whl >/dev/null 2>&1 || \
		$(BIN)/pip wheel --no-deps '$(LLAMA_CPP)' -w $(WHEELHOUSE)
	$(BIN)/pip install --find-links $(WHEELHOUSE) -e '.[llamacpp]'

demo: install
	$(BIN)/scale-analytics models pull qwen2.5-coder-1.5b
	$(BIN)/scale-analytics demo

# The PostgreSQL tests start their own server on a free local port (.ci/postgres.sh, called by
# tests/conftest.py; it installs Debian's postgresql package where the binaries are missing).
test: install chromium
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/scale-analytics models pull qwen2.5-coder-0.5b
	# Two workers: much of the suite waits on subprocesses, Ray and model servers rather than a core.
	$(BIN)/python -m pytest -q -n 2 --durations=20   # the slowest tests, to keep the suite under 15 minutes

# The web page test (tests/serve) drives a headless Chromium from the Debian packages; where it
# cannot be installed (no root, no package source) that one test skips, saying so.
chromium:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || \
		{ apt-get install -y -q chromium >/dev/null 2>&1 || \
		  { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null 2>&1; } || \
		  { sudo -n apt-get update -q >/dev/null 2>&1 && sudo -n apt-get install -y -q chromium >/dev/null 2>&1; } || \
		  echo "chromium not installed: the web page test skips"; }

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Rewrites files in place (the safe lint fixes, then ruff format); `make test` only checks.
format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Re-record the replay cassettes from the real 0.5B model (never written by hand).
cassettes: $(STAMP)
	$(BIN)/scale-analytics models pull qwen2.5-coder-0.5b
	SCALE_ANALYTICS_RECORD=1 $(BIN)/python -m pytest -q -m "not real_model" tests

bench: install-llamacpp
	for f in benchmarks/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) .cache runs outputs multirun .pytest_cache
