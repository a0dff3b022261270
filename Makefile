# Two commands set up a machine: `make run` serves the app, `make test` passes the tests.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test lint install install-dev browser migrate lock docs screenshots

# Installs come from the hashed lock files (every transitive version pinned), so two installs a
# month apart are the same; pyproject.toml keeps the direct pins and `make lock` refreshes the
# locks from it. The stamps depend on the lock files, so a changed pin reinstalls.
$(VENV)/.installed: pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.lock
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements-dev.lock
	touch $@

# pip-tools resolves pyproject.toml's pins into the two lock files (runtime; runtime + dev).
LOCK_FLAGS := --quiet --generate-hashes --strip-extras --allow-unsafe --no-emit-index-url \
	--no-emit-find-links
lock: $(VENV)/.installed-dev
	$(BIN)/pip-compile $(LOCK_FLAGS) --output-file requirements.lock pyproject.toml
	$(BIN)/pip-compile $(LOCK_FLAGS) --extra dev --output-file requirements-dev.lock pyproject.toml

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# The embedded default: SQLite under var/, tasks in-process, seeded catalogue, no services.
# Plain http on localhost, so HTTPS=0 (no redirect to https, no secure-only cookies).
run: export HTTPS = 0
run: install
	@test -s var/secret_key || (mkdir -p var && $(BIN)/python -c "import secrets; print(secrets.token_urlsafe(50))" > var/secret_key)
	@SECRET_KEY=$$(cat var/secret_key) $(BIN)/python manage.py migrate --no-input --verbosity 0
	@SECRET_KEY=$$(cat var/secret_key) $(BIN)/python manage.py load_catalog
	@echo "Serving GPU Advisor on http://$(HOST):$(PORT)/"
	@# The admin's password (or how to reset it) is the last line before the server's own log.
	@SECRET_KEY=$$(cat var/secret_key) $(BIN)/python manage.py ensure_admin
	@SECRET_KEY=$$(cat var/secret_key) $(BIN)/gunicorn config.wsgi:application \
		--bind $(HOST):$(PORT) --workers 2 --access-logfile -

# Debian's Chromium for the browser tests (Playwright's own browser download cannot work here).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
		else echo "Install Debian's chromium package (sudo apt-get install chromium) for the browser tests"; exit 1; fi; }

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	@# Models against migrations only: an in-memory database, so CI's not-yet-created one is not read.
	DEBUG=1 DATABASE_URL=sqlite://:memory: $(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/mkdocs build --strict --quiet

# The reference site (docs/, mkdocs.yml); it includes bench/results/*.md as they are.
docs: install-dev
	$(BIN)/mkdocs serve --dev-addr 127.0.0.1:8001

# The README's and the docs' three screenshots (docs/img/*.png), from the app run the embedded way.
screenshots: install-dev browser
	$(BIN)/python scripts/screenshots.py

# PostgreSQL and Redis are real in the tests: the machine's own are used when they answer on
# their standard ports (CI starts them), SQLite and in-process tasks otherwise. pytest-xdist runs
# a worker per core, at most four (each has its own test database, cache database and task
# queue: tests/environment.py); TEST_WORKERS=0 runs the suite in this one process.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); echo $$(( n < 4 ? n : 4 )))
test: install-dev browser
	@if [ -z "$$DATABASE_URL" ] && pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then \
		export DATABASE_URL=postgres://postgres@127.0.0.1:5432/gpu_advisor; fi; \
	if [ -z "$$CELERY_BROKER_URL" ] && redis-cli -h 127.0.0.1 ping >/dev/null 2>&1; then \
		export CELERY_BROKER_URL=redis://127.0.0.1:6379/0 CACHE_URL=redis://127.0.0.1:6379/1; fi; \
	echo "Testing against $${DATABASE_URL:-SQLite} and $${CELERY_BROKER_URL:-in-process tasks}"; \
	$(BIN)/pytest -n $(TEST_WORKERS) $(PYTEST_ARGS)
