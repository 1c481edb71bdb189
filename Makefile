# hpcscope: two commands do all set-up on a fresh Debian machine.
#   make demo   installs what is missing, builds, characterizes this machine quickly, writes the report
#   make test   the same set-up, then every test
VENV   := .venv
PY     := $(VENV)/bin/python
HPC    := $(VENV)/bin/hpcscope
OUT    ?= hpcscope-out/demo

.PHONY: setup deps venv build demo test clean

setup: deps venv build

deps:
	scripts/install-deps

venv: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

# Compiles the benchmarks and lanecoll once per MPI library (cached; rebuilt on change).
build: venv
	$(HPC) build --mpi all

demo: setup
	$(HPC) demo --out $(OUT)

test: setup
	$(PY) -m pytest -ra

clean:
	rm -rf $(VENV) .cache build hpcscope-out
