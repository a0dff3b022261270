# Two commands set up a machine: `make run` serves the app, `make test` passes the tests.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test lint install install-dev browser migrate

# The install stamps depend on pyproject.toml, so a changed pin reinstalls.
$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# The embedded default: SQLite under var/, tasks in-process, seeded catalogue, no services.
# Plain http on localhost, so HTTPS=0 (no redirect to https, no secure-only cookies).
run: export HTTPS = 0
run: install
	@test -s var/secret_key || (mkdir -p var && $(BIN)/python -c "import secrets; print(secrets.token_urlsafe(50))" > var/secret_key)
	SECRET_KEY=$$(cat var/secret_key) $(BIN)/python manage.py migrate --no-input
	SECRET_KEY=$$(cat var/secret_key) $(BIN)/python manage.py load_catalog
	SECRET_KEY=$$(cat var/secret_key) $(BIN)/python manage.py ensure_admin
	@echo "Serving GPU Advisor on http://$(HOST):$(PORT)/"
	SECRET_KEY=$$(cat var/secret_key) $(BIN)/gunicorn config.wsgi:application \
		--bind $(HOST):$(PORT) --workers 2 --access-logfile -

# Debian's Chromium for the browser tests (Playwright's own browser download cannot work here).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
		else echo "Install Debian's chromium package (sudo apt-get install chromium) for the browser tests"; exit 1; fi; }

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	DEBUG=1 $(BIN)/python manage.py makemigrations --check --dry-run

# PostgreSQL and Redis are real in the tests: the machine's own are used when they answer on
# their standard ports (CI starts them), SQLite and in-process tasks otherwise.
test: install-dev browser
	@if [ -z "$$DATABASE_URL" ] && pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then \
		export DATABASE_URL=postgres://postgres@127.0.0.1:5432/gpu_advisor; fi; \
	if [ -z "$$CELERY_BROKER_URL" ] && redis-cli -h 127.0.0.1 ping >/dev/null 2>&1; then \
		export CELERY_BROKER_URL=redis://127.0.0.1:6379/0 CACHE_URL=redis://127.0.0.1:6379/1; fi; \
	echo "Testing against $${DATABASE_URL:-SQLite} and $${CELERY_BROKER_URL:-in-process tasks}"; \
	$(BIN)/pytest $(PYTEST_ARGS)
