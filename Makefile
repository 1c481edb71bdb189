# hpcscope: two commands do all set-up on a fresh Debian machine.
#   make demo   installs what is missing, builds, characterizes this machine quickly, writes the report
#   make test   the same set-up, then lint and every test
# Set-up prints one line per step; the full apt/pip/compiler output goes to $(LOG).
VENV   := .venv
PY     := $(VENV)/bin/python
HPC    := $(VENV)/bin/hpcscope
OUT    ?= hpcscope-out/demo
LOG    := .cache/setup.log
STEP   := scripts/quiet-step $(LOG)

.PHONY: setup deps venv build demo test lint clean

setup: deps venv build

deps:
	@mkdir -p .cache && : >$(LOG)
	@$(STEP) "Debian packages (scripts/install-deps)" scripts/install-deps

venv: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml
	@$(STEP) "Python environment in $(VENV)" sh -c 'python3 -m venv $(VENV) && \
	  $(PY) -m pip install --upgrade pip && $(PY) -m pip install -e ".[test]"'
	@touch $@

# Compiles the benchmarks and lanecoll once per MPI library (cached; rebuilt on change).
build: venv
	@$(STEP) "benchmarks and lanecoll for each MPI library (hpcscope build)" $(HPC) build --mpi all

demo: setup
	$(HPC) demo --out $(OUT)

# ruff (lint and format check) and mypy on the Python code; clang-format on the C code.
lint: venv
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks
	$(VENV)/bin/mypy src/hpcscope
	scripts/check-c-format

test: setup lint
	$(PY) -m pytest -ra --durations=40

clean:
	rm -rf $(VENV) .cache build hpcscope-out
