# Task commands. Each one uses the project's virtualenv; `make install` creates it.
.PHONY: install test test-fast test-ci lint bench soak serve demo size

VENV ?= .venv
PY := $(VENV)/bin/python

install:
	python3 -m venv $(VENV) && $(VENV)/bin/pip install -q -e ".[test]"

test: install  ## the README's test command (PostgreSQL tests run when HANDOVER_POSTGRES_URL is set)
	$(PY) -m pytest -q -n auto --maxprocesses 4 --dist loadfile

test-fast:  ## the quick loop: every test but the slow (process, kill, concurrency) and browser ones
	$(PY) -m pytest -q -n auto --maxprocesses 4 --dist loadfile -m "not slow and not browser"

test-ci:  ## what CI runs: a throwaway PostgreSQL cluster, the linters, then the tests
	bash .ci/run

lint:  ## ruff (format check and lint) and mypy
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

bench:  ## the benchmarks whose figures are in the README
	$(PY) bench/bench_handover.py --check
	$(PY) bench/bench_graph.py
	$(PY) bench/bench_full_history.py --check
	$(PY) bench/bench_routing.py
	$(VENV)/bin/pip install -q -e ".[bench]" && $(PY) bench/bench_vs_peers.py
	$(PY) bench/bench_fidelity.py

soak:  ## 500 SIGKILLs at seeded random moments; nothing may be lost
	$(PY) bench/soak_kills.py --kills 500 --seed 1

size:  ## package source lines (no blanks, comments or docstrings), per folder
	$(PY) bench/size.py

serve:  ## langgraph dev (Studio, the SDK), offline
	$(VENV)/bin/pip install -q -e ".[serve]" && $(VENV)/bin/langgraph dev --no-browser

demo:
	$(VENV)/bin/handover demo
