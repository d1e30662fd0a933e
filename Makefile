# One command per chore, the same locally and in CI.
#   make run    the service on the embedded default (no servers to install)
#   make test   every test, on a real PostgreSQL and a real Kafka broker it starts itself
#   make test-faults   the fault runs at full size: kill -9 of each reader 10 times during
#                      2,000 commands, PostgreSQL and Kafka restarted under load, and
#                      schemathesis at 150 examples per operation and mode (20 in make test)
#   make client the Python client's generated models, from the served OpenAPI document
#   make check  ruff format + ruff lint + mypy strict + the layers (import-linter)
#   make bench  benchmarks, written as JSON under var/bench/
#   make screenshots   the console with the demo's data, under var/screenshots/ (and the
#               README's picture, docs/img/inbox.png)
#   make up / make down   a local Kafka and PostgreSQL for development, without Docker
#   make backup a base backup of DATABASE_URL's PostgreSQL under var/backup (docs/recovery.md)

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST := $(BIN)/pytest -p no:cacheprovider
# make test's modules run side by side in this many pytest-xdist workers, a module each at a
# time, on one PostgreSQL and one Kafka the controller starts (docs/testing.md, D300).
TEST_WORKERS ?= 2
SIDE_BY_SIDE := -n $(TEST_WORKERS) --dist loadfile

.PHONY: client screenshots run demo test test-faults test-unit test-integration test-e2e check format bench up down contracts system-deps clean backup

CLIENT := contracts/clients/python

# The service, and the Python client beside it (decisions D200): its tests run in make test.
$(STAMP): pyproject.toml $(CLIENT)/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ".[dev]" -e "./$(CLIENT)[kafka]"
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/feedbackloop serve

# The demo scenario into the embedded default (docs/demo.md); a second run refuses.
demo: $(STAMP)
	$(BIN)/feedbackloop demo

# Java 17 and Maven run the Kafka broker; PostgreSQL comes from Debian's binaries or, failing
# those, from the embedded wheel; Debian's chromium runs the console's browser tests (never a
# browser download). Installs only what is missing.
system-deps:
	@command -v java >/dev/null && command -v mvn >/dev/null || { \
		echo "installing Java 17 and Maven"; \
		apt-get update -qq && apt-get install -y -qq openjdk-17-jre-headless maven; }
	$(PYTHON) ops/localservers.py jars
	@command -v chromium >/dev/null || { echo "installing chromium (the console's browser tests)"; \
		apt-get update -qq && apt-get install -y -qq chromium; }
	@command -v node >/dev/null && command -v npm >/dev/null || { \
		echo "installing Node.js and npm (the tests' OpenID Connect issuer)"; \
		apt-get update -qq && apt-get install -y -qq nodejs npm; }
	$(PYTHON) ops/oidc_issuer.py install

test: $(STAMP) system-deps
	$(PYTEST) $(SIDE_BY_SIDE) tests

test-faults: $(STAMP) system-deps
	FEEDBACKLOOP_FAULT_COMMANDS=2000 FEEDBACKLOOP_FAULT_KILLS=10 FEEDBACKLOOP_FAULT_RESTARTS=3 \
		$(PYTEST) -m faults tests
	FEEDBACKLOOP_SCHEMATHESIS_EXAMPLES=150 $(PYTEST) tests/integration/test_openapi_fuzz.py

test-unit: $(STAMP)
	$(PYTEST) -m unit tests

test-integration: $(STAMP) system-deps
	$(PYTEST) -m integration tests

test-e2e: $(STAMP) system-deps
	$(PYTEST) -m e2e tests

check: $(STAMP)
	$(BIN)/ruff format --check services contracts projections tests ops
	$(BIN)/ruff check services contracts projections tests ops
	$(BIN)/mypy
	$(BIN)/lint-imports

format: $(STAMP)
	$(BIN)/ruff format services contracts projections tests ops
	$(BIN)/ruff check --fix services contracts projections tests ops

contracts: $(STAMP)
	$(BIN)/feedbackloop contracts

# The Python client's generated models and shipped schemas, from the served OpenAPI document
# and contracts/schemas (ops/python_client.py; a test fails when they are stale: D201, D208).
client: $(STAMP)
	$(BIN)/python ops/python_client.py

# wrk (Debian's package) drives the HTTP benchmark: a compiled client, so that the load
# generator is not what bounds the figure. Installed only when missing.
bench: $(STAMP) system-deps
	@command -v wrk >/dev/null || { echo "installing wrk"; \
		apt-get update -qq && apt-get install -y -qq wrk; }
	$(BIN)/python ops/bench.py --out var/bench
	DATABASE_URL=$${BENCH_DATABASE_URL:-$$TEST_DATABASE_URL} PYTHONPATH=. $(BIN)/python ops/bench_exports.py --out var/bench

# The demo into a fresh store (the embedded default in a temporary directory, or a fresh
# database on SCREENSHOTS_DATABASE_URL's server), each console page in Debian's chromium.
screenshots: $(STAMP)
	$(BIN)/python ops/screenshots.py $(if $(SCREENSHOTS_DATABASE_URL),--database-url $(SCREENSHOTS_DATABASE_URL))

# The WAL after it is archived by the server itself (archive_command); see docs/recovery.md.
BACKUP_DIR ?= var/backup
backup: $(STAMP)
	$(BIN)/feedbackloop backup --to $(BACKUP_DIR)

up: $(STAMP) system-deps
	$(BIN)/python ops/localservers.py --dir var/local up

down:
	$(PYTHON) ops/localservers.py --dir var/local down

clean:
	rm -rf $(VENV) var/bench
