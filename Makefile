# Entry points for a fresh machine: `make run` (the app), `make test` (every test: what CI runs) and
# `make check` (lint, unit and AppTest tests: the working loop, without the browser and slow tests).
# They build .venv from nothing on first use; nothing is downloaded at run time.
# `make run` installs requirements.txt (what the app needs, as a deployment does); `make test` and
# `make bench` add requirements-dev.txt (the test, lint and browser tools) on top.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
WORKERS ?= 2

.PHONY: run test check lint bench mutants image space

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements.txt requirements-dev.txt
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

run: $(VENV)/.installed
	MALLOC_ARENA_MAX=2 $(VENV)/bin/streamlit run app.py

# axe-core for the accessibility test (tests/test_browser_a11y.py), pinned in tests/a11y/package-lock.json
A11Y := tests/a11y/node_modules/.installed
$(A11Y): tests/a11y/package.json tests/a11y/package-lock.json
	cd tests/a11y && npm ci --no-audit --no-fund --silent
	touch $@

# With WORKERS processes on the machine's cores, each gets one torch thread (OpenMP threads of two workers that
# wait for each other on 2 cores cost a quarter of the time; docs/testing.md). Servers and commands a test starts
# inherit it, so a page and the command it shows compute with the same thread count. Set WORKERS=0 to keep torch's own.
ONE_THREAD := $(if $(filter 0,$(WORKERS)),,OMP_NUM_THREADS=1 MKL_NUM_THREADS=1)
# Bytecode written even where the shell says not to (PYTHONDONTWRITEBYTECODE=1 on the course machines): pytest keeps
# its rewritten test modules there, and without them every worker rewrote all 273 again, 9.6 of the 15 s it took to
# collect make check's tests (cProfile, 2026-12-06). __pycache__ is ignored by git, the image and the Space.
BYTECODE := PYTHONDONTWRITEBYTECODE=
# Both collect tests/ only: `make mutants` leaves a mutated copy of the repository, its tests included, in mutants/.

# Every test, on WORKERS processes (pytest-xdist; a module's tests stay on one worker, so a module's shared server
# and fixtures are set up once): `make test WORKERS=0` runs in one process. docs/testing.md has the timings.
test: $(VENV)/.installed-dev $(A11Y)
	$(VENV)/bin/ruff check .
	$(BYTECODE) $(ONE_THREAD) $(PY) -m pytest -q $(if $(filter 0,$(WORKERS)),,-n $(WORKERS) --dist loadfile --no-loadscope-reorder) --durations=25 tests

# The markers are registered in tests/conftest.py; docs/testing.md says what each leaves out and what
# -n (pytest-xdist workers) gained. `make check WORKERS=0` runs in one process.
check: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .
	$(BYTECODE) $(ONE_THREAD) $(PY) -m pytest -q $(if $(filter 0,$(WORKERS)),,-n $(WORKERS)) -m "not browser and not slow" tests

# The hosted demo's image, from nothing on a machine with podman and Debian's packages (docs/hosting.md, "The
# container"): a local Debian base, the host's CPU torch wheel, deploy/Dockerfile. A Space's folder, checked.
# make image HUB_MODELS="gpt2 distilgpt2" [HF_ENDPOINT=...]: hub models baked in; make space SPACE_MODELS="gpt2": the
# Space's build downloads these instead of lab/space.py's list (docs/hosting.md, "GPT-2 in the hosted image").
image:
	HUB_MODELS="$(HUB_MODELS)" HF_ENDPOINT="$(HF_ENDPOINT)" deploy/build-image.sh
space: $(VENV)/.installed
	$(PY) -m lab.space build/space $(if $(SPACE_MODELS),--hub-models "$(SPACE_MODELS)")

bench: $(VENV)/.installed-dev
	$(PY) -m lab bench --json

# Mutation testing (not CI, not `make test`): mutmut 3 over the modules whose numbers a page states without a
# picture, one module at a time against its fast tests (scripts/mutants.py), survivors listed. docs/testing.md: counts, equivalents.
MUTANT_MODULES ?= lab.detect.evaluation lab.serving.loadtest lab.ceiling lab.fill lab.tokens
mutants: $(VENV)/.installed-dev
	$(PY) scripts/mutants.py $(MUTANT_MODULES)
