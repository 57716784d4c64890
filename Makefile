# kafka-ops: two commands for a new user, `make demo` and `make test`. Both create what they
# need (virtualenv, pinned packages, Kafka jars, Airflow's SQLite DB) and are idempotent.

SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

export AIRFLOW_HOME := $(CURDIR)/var/airflow
export AIRFLOW__CORE__DAGS_FOLDER := $(CURDIR)/dags
export AIRFLOW__CORE__PLUGINS_FOLDER := $(CURDIR)/plugins
export AIRFLOW__CORE__LOAD_EXAMPLES := False
export KAFKA_OPS_VAR := $(CURDIR)/var
# spark-submit (from the pyspark package) and the jobs' Python come from the virtualenv
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
export PYSPARK_PYTHON := $(CURDIR)/$(VENV)/bin/python
# local Spark binds to loopback only
export SPARK_LOCAL_IP := 127.0.0.1
export PYARROW_IGNORE_TIMEZONE := 1

.PHONY: compose-spec check test test-scale demo demo-remediate bench lint unit integration venv jars airflow-db browser prometheus clean sandbox-up sandbox-down stack-servers stack-up stack-down stack-status soak soak-short

venv: $(STAMP)
$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip setuptools wheel
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]'
	$(BIN)/pip check
	touch $(STAMP)

jars: $(STAMP)
	$(BIN)/python -c "from kafka_ops.jars.fetch import ensure_jars as z, ensure_kafka4_jars as k; print('Kafka 3.9 jars in', z()); print('Kafka 4 jars in', k())"
	$(BIN)/python -c "from kafka_ops.jars.fetch import ensure_delta_spark_jars as d; print('Delta Lake Spark connector:', *d())"
	$(BIN)/python -c "from kafka_ops.jars.fetch import ensure_spark_s3_jars as s; print('Spark S3A (hadoop-aws, AWS SDK bundle):', *s())"
	$(BIN)/python -c "from kafka_ops.jars.fetch import ensure_jmx_exporter_jar as j; print('Prometheus JMX exporter agent:', j())"

# headless Chromium renders the health report and drives the Airflow UI in the tests (Debian's package; root or sudo once)
browser:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	    --no-install-recommends chromium fonts-dejavu-core >/dev/null; }

# a real Prometheus scrapes the plugin's /kafka-ops/metrics in the e2e test (Debian's package; root or sudo once)
prometheus:
	@{ command -v prometheus && command -v amtool; } >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	    --no-install-recommends prometheus prometheus-alertmanager >/dev/null; }

# the running topology's servers (Debian's packages; root or sudo once): Redis, the Celery broker, and
# PostgreSQL 15, Airflow's metadata database (`make stack-up` runs its own cluster under var/stack)
stack-servers:
	@{ command -v redis-server && test -x /usr/lib/postgresql/15/bin/postgres; } >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	    --no-install-recommends redis-server postgresql >/dev/null; }

# the Compose Specification's JSON schema, the one `docker compose config` applies (compose-go's own copy,
# from the Go module proxy), for the test that validates docker/docker-compose.yml without a docker CLI
COMPOSE_GO := github.com/compose-spec/compose-go/v2@v2.16.2
compose-spec: var/tools/compose-spec.json
var/tools/compose-spec.json:
	mkdir -p var/tools
	dir=$$(cd /tmp && go mod download -json $(COMPOSE_GO) | $(PYTHON) -c 'import json, sys; print(json.load(sys.stdin)["Dir"])') \
	  && install -m 644 "$$dir/schema/compose-spec.json" $@

airflow-db: $(AIRFLOW_HOME)/airflow.db
$(AIRFLOW_HOME)/airflow.db: $(STAMP)
	mkdir -p $(AIRFLOW_HOME)
	$(BIN)/airflow db migrate > $(AIRFLOW_HOME)/db-migrate.log 2>&1 || (tail -50 $(AIRFLOW_HOME)/db-migrate.log; exit 1)

lint: $(STAMP)
	$(BIN)/ruff check dags plugins sandbox spark_jobs tests bench stack
	$(BIN)/ruff format --check dags plugins sandbox spark_jobs tests bench stack
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

unit: $(STAMP)
	$(BIN)/pytest tests -m "not integration"

integration: jars airflow-db
	$(BIN)/pytest tests -m integration

# the edit loop: lint and every test that needs no cluster, Spark, assignor JVM, Airflow stack or benchmark
check: lint airflow-db compose-spec
	$(BIN)/pytest tests -m "not integration and not e2e and not stack and not bench and not spark and not jvm and not scale" -q

test: lint jars airflow-db browser prometheus stack-servers compose-spec
	$(BIN)/pytest tests -m "not scale" -n 2 --dist loadgroup --no-loadscope-reorder --durations=40

# Kafka's own million-partition sticky-assignor tests (minutes; `make bench` also times them)
test-scale: jars
	$(BIN)/pytest tests -m scale

# the ZooKeeper sandbox (3.9), then the KRaft one (4.4), one after the other: faults, snapshot and
# analysis DAGs, findings, alerts, dry-run plans; nothing is left running
demo: jars airflow-db
	$(BIN)/python -m sandbox.demo.findings

# writes to the sandbox (never to another cluster): the reassignment and election DAGs, dry run then
# execute, raise tp_re_02 to replication factor 2 and restore preferred leaders; prints before/after
demo-remediate: jars airflow-db
	$(BIN)/python -m sandbox.demo.remediate

bench: jars
	@for b in bench/*.py; do case $$b in */synthetic_*|*/_*) continue;; esac; echo "== $$b"; $(BIN)/python $$b || exit 1; done

sandbox-up: jars
	$(BIN)/python -m sandbox up

sandbox-down: $(STAMP)
	$(BIN)/python -m sandbox down

# kafka-ops as a running service on loopback (docs/operations.md, "The running topology"): PostgreSQL,
# Redis, Airflow on Celery (2 workers), Spark standalone (master + 2 workers), an S3-compatible store,
# Prometheus, Alertmanager, a webhook receiver, and both sandbox clusters; state and logs in var/stack.
# LAKE=s3 puts the lake in the object store's bucket (default: local, var/stack/lake).
stack-up: jars prometheus stack-servers
	$(BIN)/python -m stack up $(if $(LAKE),--lake $(LAKE))

stack-down: $(STAMP)
	$(BIN)/python -m stack down

stack-status: $(STAMP)
	$(BIN)/python -m stack status

# the soak (docs/operations.md, "The soak"): the stack up, a fixed fault schedule for an hour, recovery, `down`,
# then a report (text and one JSON line); exits 4 on a duplicate page, an unresolved incident, a torn batch,
# a process left behind or no recovery. Not part of `make test`, which runs the short one in tests/stack.
# LAKE=s3 adds the object-store fault (the lake in the object store's bucket).
soak: jars prometheus stack-servers
	$(BIN)/python -m stack soak --minutes 60 $(if $(LAKE),--lake $(LAKE))

# one fault of each kind, shorter outages: about 5 minutes of faults plus up, recovery and down
soak-short: jars prometheus stack-servers
	$(BIN)/python -m stack soak --minutes 5 --short $(if $(LAKE),--lake $(LAKE))

clean:
	rm -rf var/lake var/sandbox var/airflow
