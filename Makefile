# Two entry points for a fresh machine: `make run` (the app) and `make test` (every test).
# Both build .venv from nothing on first use; nothing is downloaded at run time.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: run test lint bench

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	touch $@

run: $(VENV)/.installed
	$(VENV)/bin/streamlit run app.py

test: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -q

bench: $(VENV)/.installed
	$(PY) -m lab bench --json
