# Two entry points for a fresh machine: `make run` (the app) and `make test` (every test).
# Both build .venv from nothing on first use; nothing is downloaded at run time.
# `make run` installs requirements.txt (what the app needs, as a deployment does); `make test` and
# `make bench` add requirements-dev.txt (the test, lint and browser tools) on top.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: run test lint bench

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements.txt requirements-dev.txt
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

run: $(VENV)/.installed
	$(VENV)/bin/streamlit run app.py

# axe-core for the accessibility test (tests/test_browser_a11y.py), pinned in tests/a11y/package-lock.json
A11Y := tests/a11y/node_modules/.installed
$(A11Y): tests/a11y/package.json tests/a11y/package-lock.json
	cd tests/a11y && npm ci --no-audit --no-fund --silent
	touch $@

test: $(VENV)/.installed-dev $(A11Y)
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -q

bench: $(VENV)/.installed-dev
	$(PY) -m lab bench --json
