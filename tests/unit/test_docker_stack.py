"""The docker/ stack, checked without a Docker engine, and held in step with the native one (`make stack-up`).

The compose file runs exactly `stack.services.SERVICES` (plus the demo fleet, one-shots and Grafana),
with the native stack's executor, settings file (its clusters) and connection ids (`stack.fleet`).

The compose file's services, health checks, dependencies, ports, volumes, environment and secrets
(read as YAML); the connections it defines, parsed the way Airflow and kafka-ops parse them; the
image's install steps against the Makefile's; the shell it runs; and every service the docs name.
`docker compose config` runs as well when the docker CLI has the compose plugin.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from airflow.sdk import Connection

from kafka_ops.airflow import kafka_hook, zookeeper_hook
from kafka_ops.alerting.registry import notifier_for
from kafka_ops.lake.names import DEFAULT_LAKE_FORMAT
from kafka_ops.settings import load_settings
from stack import fleet
from stack.services import AIRFLOW_WORKERS, EXECUTOR, SERVICE_NAMES, SPARK_QUEUE, SPARK_WORKERS, WORKER_QUEUES
from stack.topology import (
    CELERY_CONFIG_OPTIONS,
    HEARTBEAT_TIMEOUT_S,
    ORPHAN_CHECK_S,
    QUEUED_CHECK_S,
    QUEUED_TIMEOUT_S,
    SPARK_WORKER_OPTS,
)

REPO = Path(__file__).resolve().parents[2]
DOCKER = REPO / "docker"
COMPOSE_FILE = DOCKER / "docker-compose.yml"
DOCKERFILE = DOCKER / "airflow" / "Dockerfile"
DOCKERIGNORE = DOCKER / "airflow" / "Dockerfile.dockerignore"
ENV_EXAMPLE = DOCKER / ".env.example"
DOCS = [REPO / "README.md", DOCKER / "README.md", *sorted((REPO / "docs").glob("*.md"))]

BROKERS = ("kafka-1", "kafka-2", "kafka-3")
DEMO = {"zookeeper", *BROKERS, "kafka-kraft", "kafka-init"}
AIRFLOW = {"airflow-api-server", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer", *AIRFLOW_WORKERS}
ONE_SHOTS = {"airflow-init", "kafka-init"}
MONITORING = {"grafana"}
SERVICES = set(SERVICE_NAMES) | DEMO | ONE_SHOTS | MONITORING
LAKE = "/opt/kafka-ops/lake"
SECRET_NAME = re.compile(r"PASSWORD|SECRET|FERNET|TOKEN|_KEY\b|ROUTING", re.IGNORECASE)
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE_FILE.read_text())
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return compose["services"]


def interpolate(value: str) -> str:
    """Compose's interpolation with nothing set: `${X:-d}` is d, `${X:?m}` / `${X}` a placeholder."""

    def one(match: re.Match[str]) -> str:
        name, op, default = match.groups()
        return default if op in (":-", "-") else f"set-{name.lower()}"

    return VARIABLE.sub(one, value.replace("$$", "\0")).replace("\0", "$")


def environment(service: Mapping[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    assert isinstance(env, dict), "environment must be a mapping (KEY: value)"
    return {str(k): str(v) for k, v in env.items()}


def connections(service: Mapping[str, Any]) -> dict[str, Connection]:
    """The service's AIRFLOW_CONN_* variables as Airflow reads them (JSON, else a URI)."""
    out = {}
    for name, raw in environment(service).items():
        if name.startswith("AIRFLOW_CONN_"):
            conn_id, value = name.removeprefix("AIRFLOW_CONN_").lower(), interpolate(raw)
            out[conn_id] = (
                Connection.from_json(value, conn_id=conn_id)
                if value.lstrip().startswith("{")
                else Connection.from_uri(value, conn_id=conn_id)
            )
    return out


def volume_mounts(service: Mapping[str, Any]) -> Iterator[tuple[str, str, bool]]:
    """(source, target, read_only) of each short-syntax volume."""
    for entry in service.get("volumes") or []:
        source, target, *mode = str(entry).split(":")
        yield source, target, "ro" in mode


def command_of(service: Mapping[str, Any]) -> list[str]:
    command = service.get("command") or []
    return [str(c) for c in command] if isinstance(command, list) else str(command).split()


def override(service: Mapping[str, Any], key: str) -> str:
    """The value a broker's command gives `key` with kafka-server-start.sh's --override."""
    command = command_of(service)
    values = [command[i + 1].partition("=")[2] for i, c in enumerate(command[:-1]) if c == "--override"]
    keys = [command[i + 1].partition("=")[0] for i, c in enumerate(command[:-1]) if c == "--override"]
    assert keys.count(key) == 1, f"{key} must be overridden exactly once: {command}"
    return values[keys.index(key)]


def properties(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            out[key.strip()] = value.strip()
    return out


def env_example() -> tuple[dict[str, str], set[str]]:
    """docker/.env.example: the variables it sets, and those it documents commented out."""
    active, documented = {}, set()
    for line in ENV_EXAMPLE.read_text().splitlines():
        match = re.match(r"^(#\s*)?([A-Z][A-Z0-9_]*)=(.*)$", line)
        if match:
            documented.add(match.group(2))
            if not match.group(1):
                active[match.group(2)] = match.group(3)
    return active, documented


# -- services, health, dependencies ------------------------------------------------------------------


def test_the_stack_has_exactly_its_services(services: dict[str, Any]) -> None:
    assert set(services) == SERVICES
    assert set(SERVICE_NAMES) >= AIRFLOW and len(AIRFLOW_WORKERS) == len(SPARK_WORKERS) == 2


def test_every_long_running_service_has_a_health_check(services: dict[str, Any]) -> None:
    for name, service in services.items():
        check = service.get("healthcheck")
        if name in ONE_SHOTS:
            assert service.get("restart") == "no" and not check, f"{name} runs once: no restart, no health check"
            continue
        assert service.get("restart") == "unless-stopped", name
        assert check and not check.get("disable"), f"{name} has no health check"
        assert check["test"][0] in ("CMD", "CMD-SHELL") and len(check["test"]) > 1, name
        for key in ("interval", "timeout", "retries", "start_period"):
            assert key in check, f"{name}: healthcheck.{key}"


def test_python_health_checks_compile(services: dict[str, Any]) -> None:
    for name, service in services.items():
        test = (service.get("healthcheck") or {}).get("test") or []
        if test[:3] == ["CMD", "python", "-c"]:
            compile(test[3], f"{name} healthcheck", "exec")


def test_dependencies_wait_for_health_or_completion(services: dict[str, Any]) -> None:
    for name, service in services.items():
        depends = service.get("depends_on") or {}
        assert isinstance(depends, dict), f"{name}: depends_on needs conditions"
        for target, rule in depends.items():
            assert target in services, f"{name} depends on unknown {target}"
            condition = rule["condition"]
            if condition == "service_healthy":
                assert services[target].get("healthcheck"), f"{name} waits for {target}, which has no health check"
            else:
                assert condition == "service_completed_successfully" and target in ONE_SHOTS, (name, target)
            # a service that always starts must not wait for one a profile can leave out
            assert set(services[target].get("profiles") or []) <= set(service.get("profiles") or []), (name, target)


def test_start_order(services: dict[str, Any]) -> None:
    def waits_for(name: str) -> dict[str, str]:
        return {t: r["condition"] for t, r in services[name]["depends_on"].items()}

    for name in AIRFLOW:
        assert waits_for(name)["postgres"] == "service_healthy"
        assert waits_for(name)["redis"] == "service_healthy"
        assert waits_for(name)["airflow-init"] == "service_completed_successfully"
    assert waits_for("airflow-init") == {"postgres": "service_healthy", "object-store": "service_healthy"}
    for name in ("airflow-scheduler", *AIRFLOW_WORKERS):
        assert waits_for(name)["airflow-api-server"] == "service_healthy"  # tasks call its execution API
    for name in SPARK_WORKERS:
        assert waits_for(name) == {"spark-master": "service_healthy"}
    for broker in BROKERS:
        assert waits_for(broker) == {"zookeeper": "service_healthy"}
    assert waits_for("kafka-init") == dict.fromkeys(BROKERS, "service_healthy")
    for name in DEMO:
        assert services[name]["profiles"] == ["demo"], f"{name} belongs to the droppable demo cluster"
    assert services["grafana"]["profiles"] == ["monitoring"], "Grafana is the optional monitoring"
    assert waits_for("prometheus-token") == {"airflow-api-server": "service_healthy"}
    # the token service creates the shared token volume (as its user) before Prometheus mounts it
    assert waits_for("prometheus") == {"prometheus-token": "service_healthy", "alertmanager": "service_healthy"}
    assert waits_for("grafana") == {"prometheus": "service_healthy"}
    for name in SERVICES - DEMO - MONITORING:
        assert not services[name].get("profiles"), f"{name} must always start"


# -- the demo Kafka cluster ------------------------------------------------------------------------


def test_brokers_run_zookeeper_mode_on_distinct_racks(services: dict[str, Any]) -> None:
    config = DOCKER / "kafka" / "server.properties"
    shared = properties(config)
    assert "process.roles" not in shared and "controller.quorum.voters" not in shared, "no KRaft"
    ids, racks = set(), set()
    for name in BROKERS:
        broker = services[name]
        assert broker["image"] == "apache/kafka:3.9.1"
        command = command_of(broker)
        assert command[:2] == ["/opt/kafka/bin/kafka-server-start.sh", "/etc/kafka-ops/server.properties"]
        assert ("./kafka/server.properties", "/etc/kafka-ops/server.properties", True) in set(volume_mounts(broker))
        ids.add(override(broker, "broker.id"))
        racks.add(override(broker, "broker.rack"))
        assert override(broker, "advertised.listeners") == f"PLAINTEXT://{name}:9092"
    assert ids == {"1", "2", "3"}
    assert len(racks) == 3, "one rack per broker"
    hosts, _, chroot = shared["zookeeper.connect"].partition("/")
    assert hosts == "zookeeper:2181"
    target = zookeeper_hook.target_from_connection(connections(services["airflow-scheduler"])["zookeeper_sandbox_zk"])
    assert (target.hosts, target.chroot) == (hosts, "/" + chroot), "kafka-ops reads the brokers' chroot"
    assert int(shared["default.replication.factor"]) <= len(BROKERS)


def test_kafka_init_script_parses(services: dict[str, Any]) -> None:
    script = interpolate(command_of(services["kafka-init"])[0])
    assert services["kafka-init"]["entrypoint"] == ["/bin/bash", "-c"]
    subprocess.run(["bash", "-n", "-c", script], check=True)
    assert "--if-not-exists" in script  # idempotent: runs at every `up`


# -- ports and volumes ------------------------------------------------------------------------------


def test_ports_are_published_only_for_the_uis_and_only_on_loopback(services: dict[str, Any]) -> None:
    published = {name: s["ports"] for name, s in services.items() if s.get("ports")}
    container_port = {"airflow-api-server": "8080", "spark-master": "8080", "prometheus": "9090",
                      "alertmanager": "9093", "grafana": "3000"}  # fmt: skip
    assert set(published) == set(container_port)
    for name, ports in published.items():
        for port in ports:
            host_ip, _, rest = interpolate(str(port)).partition(":")
            assert host_ip == "127.0.0.1", f"{name} publishes {port} beyond loopback"
            assert rest.rsplit(":", 1)[1] == container_port[name], f"{name}: {port}"
    assert not any(s.get("network_mode") == "host" for s in services.values())


def test_named_volumes_are_declared_used_and_persist_each_store(compose: dict[str, Any]) -> None:
    services = compose["services"]
    declared = set(compose["volumes"])
    used = {src for s in services.values() for src, _, _ in volume_mounts(s) if not src.startswith(".")}
    assert used == declared
    owners = {(name, src, target) for name, s in services.items() for src, target, _ in volume_mounts(s)}
    assert ("postgres", "postgres-data", "/var/lib/postgresql/data") in owners
    assert ("zookeeper", "zookeeper-data", "/data") in owners
    for broker in BROKERS:
        assert (broker, f"{broker}-data", "/var/lib/kafka/data") in owners
    assert ("prometheus", "prometheus-data", "/prometheus") in owners
    assert ("alertmanager", "alertmanager-data", "/alertmanager") in owners
    assert ("grafana", "grafana-data", "/var/lib/grafana") in owners


def test_the_lake_is_shared_where_it_is_read_and_written(services: dict[str, Any]) -> None:
    mounts = {
        name: ro for name, s in services.items() for src, target, ro in volume_mounts(s) if src == "lake"
    }  # fmt: skip
    # tasks (the Celery workers run them) write it; Spark executors and the Spark Connect server's driver
    # only read it, at the same path
    assert mounts == {"airflow-init": False} | dict.fromkeys(AIRFLOW_WORKERS, False) | dict.fromkeys(
        (*SPARK_WORKERS, "spark-connect"), True
    )
    for name, service in services.items():
        for src, target, _ in volume_mounts(service):
            assert src != "lake" or target == LAKE, name
    assert interpolate(environment(services["airflow-worker-1"])["KAFKA_OPS_LAKE"]) == LAKE


def test_bind_mounts_are_read_only_files_of_this_directory(services: dict[str, Any]) -> None:
    for name, service in services.items():
        for src, _, ro in volume_mounts(service):
            if src.startswith("."):
                assert ro, f"{name}: {src} is mounted writable"
                assert (DOCKER / src).exists(), f"{name}: {src} does not exist"
                assert (DOCKER / src).resolve().is_relative_to(DOCKER), f"{name}: {src} is outside docker/"


# -- environment, secrets, connections -------------------------------------------------------------


def test_airflow_runs_on_postgres_with_the_native_stacks_executor(services: dict[str, Any]) -> None:
    for name in AIRFLOW | {"airflow-init"}:
        env = environment(services[name])
        assert env["AIRFLOW__CORE__EXECUTOR"] == EXECUTOR == "CeleryExecutor"
        assert env["AIRFLOW__CELERY__BROKER_URL"] == "redis://redis:6379/0"
        assert interpolate(env["AIRFLOW__CELERY__RESULT_BACKEND"]).startswith("db+postgresql+psycopg2://airflow:")
        assert interpolate(env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]).startswith("postgresql+psycopg2://airflow:")
        assert "@postgres:5432/airflow" in env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
        assert env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] == "http://airflow-api-server:8080/execution/"
        # every component signs and checks the same tokens, and decrypts with the same key
        assert env["AIRFLOW__API_AUTH__JWT_SECRET"].startswith("${AIRFLOW_JWT_SECRET:?")
        assert env["AIRFLOW__CORE__FERNET_KEY"].startswith("${AIRFLOW_FERNET_KEY:?")
    requirements = (DOCKER / "airflow" / "requirements-postgres.txt").read_text()
    assert "psycopg2-binary==" in requirements and "asyncpg==" in requirements  # sync and async engines


def test_the_kafka_ops_environment_points_into_the_image(services: dict[str, Any]) -> None:
    env = environment(services["airflow-scheduler"])
    config = env["KAFKA_OPS_CONFIG"]
    assert config.startswith("/opt/kafka-ops/docker/config/")
    assert ("./config", "/opt/kafka-ops/docker/config", True) in set(volume_mounts(services["airflow-scheduler"]))
    assert (DOCKER / "config" / Path(config).name).is_file()
    image_env = dockerfile_env()
    assert env["KAFKA_OPS_SPARK_JOBS"] == image_env["KAFKA_OPS_SPARK_JOBS"] == "/opt/kafka-ops/spark_jobs"
    assert (REPO / "spark_jobs" / "cluster_health.py").is_file()
    for name in AIRFLOW_WORKERS:  # the Spark drivers run there, and the executors call them back by name
        assert environment(services[name])["SPARK_LOCAL_HOSTNAME"] == services[name]["hostname"] == name
        command = command_of(services[name])
        assert command[:3] == ["airflow", "celery", "worker"], name
        assert command[command.index("--celery-hostname") + 1] == f"{name}@%h"
        # the Spark jobs' queue, as the native stack serves it: some workers stay free for the pages
        assert command[command.index("--queues") + 1] == WORKER_QUEUES[name], name
    assert env["KAFKA_OPS_SPARK_QUEUE"] == SPARK_QUEUE
    assert [n for n in AIRFLOW_WORKERS if SPARK_QUEUE not in WORKER_QUEUES[n].split(",")], "no worker is kept free"


def test_airflow_reads_the_env_file(services: dict[str, Any]) -> None:
    for name in AIRFLOW | {"airflow-init"}:
        assert ".env" in services[name]["env_file"], f"{name} does not read docker/.env"
    for name in SERVICES - AIRFLOW - {"airflow-init"}:
        assert not services[name].get("env_file"), f"{name} gets every secret of docker/.env"


def test_every_variable_is_documented_and_secrets_are_never_in_the_example() -> None:
    active, documented = env_example()
    used = VARIABLE.findall(COMPOSE_FILE.read_text())
    missing = sorted({name for name, _, _ in used} - documented)
    assert not missing, f"docker/.env.example does not document {missing}"
    required = {name for name, op, _ in used if op == ":?"}
    assert required, "the secrets are required variables"
    for name in required:
        assert active.get(name) == "", f"{name}: the example must list it, empty"
    for name, value in active.items():
        assert not (SECRET_NAME.search(name) and value), f"{name} has a value in the example"
    # the monitoring profile's secrets: `${X:-}` (the stack without the profile must start without
    # them), listed empty like the required ones
    for name in ("AIRFLOW_PROMETHEUS_PASSWORD", "GRAFANA_ADMIN_PASSWORD"):
        assert active.get(name) == "", f"{name}: the example must list it, empty"


def test_docker_env_is_git_ignored() -> None:
    def ignored(path: str) -> bool:
        result = subprocess.run(["git", "check-ignore", "-q", path], cwd=REPO, check=False)
        return result.returncode == 0

    assert ignored("docker/.env")
    assert not ignored("docker/.env.example")


def test_no_secret_literal_in_the_compose_file(compose: dict[str, Any]) -> None:
    envs = [environment(s) for s in compose["services"].values()]
    envs += [{str(k): str(v) for k, v in compose["x-airflow-env"].items()}]
    for env in envs:
        for name, value in env.items():
            if SECRET_NAME.search(name) and not name.endswith("_FILE"):  # a path to secrets is not one
                # required (`:?`), or `${X:-}` for a profile's secret its service checks itself
                assert re.fullmatch(r"\$\{[A-Z_]+(:\?[^}]*|:-)\}", value), f"{name} must come from docker/.env"
            if name.startswith("AIRFLOW_CONN_"):
                fields = json.loads(interpolate(value))
                assert not {"login", "password"} & set(fields), f"{name} holds credentials"
            for match in re.finditer(r"://[^:/@\s]+:([^@\s]+)@", interpolate(value)):
                assert match.group(1).startswith("set-"), f"{name} has a password in a URL"
    text = COMPOSE_FILE.read_text()
    for marker in ("hooks.slack.com", "BEGIN PRIVATE KEY", "AKIA"):
        assert marker not in text


def native_connections() -> dict[str, Connection]:
    """The connections `make stack-up` defines (stack.fleet), for sandboxes at made-up addresses."""
    from stack.state import Sandbox  # noqa: PLC0415

    sandboxes = {
        "zk": Sandbox("zk", "", False, {"zookeeper": "127.0.0.1:2181/kafka", "bootstrap_servers": "127.0.0.1:9092"}),
        "kraft": Sandbox("kraft", "", False, {"bootstrap_servers": "127.0.0.1:9192"}),
    }
    variables = fleet.connections(sandboxes, webhook_port=8090, spark_master_port=7077, spark_connect_port=15002)
    return {
        k.removeprefix("AIRFLOW_CONN_").lower(): Connection.from_json(
            v, conn_id=k.removeprefix("AIRFLOW_CONN_").lower()
        )
        for k, v in variables.items()
    }


def test_connections_parse_as_airflow_and_kafka_ops_read_them(services: dict[str, Any]) -> None:
    conns = connections(services["airflow-scheduler"])
    native = native_connections()
    assert set(conns) == set(native), "the native stack (stack/fleet.py) defines the same connections"
    assert {k: c.conn_type for k, c in conns.items()} == {k: c.conn_type for k, c in native.items()}
    for name in AIRFLOW | {"airflow-init"}:
        assert set(connections(services[name])) == set(conns), name
    zookeeper = zookeeper_hook.target_from_connection(conns["zookeeper_sandbox_zk"])
    assert zookeeper.connect_string == "zookeeper:2181/kafka"
    assert zookeeper_hook.target_from_connection(native["zookeeper_sandbox_zk"]).chroot == zookeeper.chroot
    kafka = kafka_hook.target_from_connection(conns["kafka_sandbox_zk"])
    advertised = [override(services[b], "advertised.listeners").removeprefix("PLAINTEXT://") for b in BROKERS]
    assert kafka.bootstrap_servers == ",".join(advertised)
    kraft = kafka_hook.target_from_connection(conns["kafka_sandbox_kraft"])
    kraft_env = environment(services["kafka-kraft"])
    assert kraft.bootstrap_servers == kraft_env["KAFKA_ADVERTISED_LISTENERS"].removeprefix("PLAINTEXT://")
    assert kraft_env["KAFKA_PROCESS_ROLES"] == "broker,controller"
    for conns_of in (conns, native):
        notifier_for(conns_of[fleet.ALERT_CONN])  # a webhook sink, to the receiver


def test_spark_workers_clean_up_finished_applications_as_the_native_stack_does(services: dict[str, Any]) -> None:
    """Each application's folder holds the jars spark-submit handed it (on an S3 lake 642 MB): both
    topologies remove it after the same time."""
    for name in SPARK_WORKERS:
        assert services[name]["environment"]["SPARK_WORKER_OPTS"] == SPARK_WORKER_OPTS, name
    assert "-Dspark.worker.cleanup.enabled=true" in SPARK_WORKER_OPTS


def test_the_scheduler_recovers_a_dead_workers_task_as_the_native_stack_does(services: dict[str, Any]) -> None:
    """A task whose worker died fails (and is retried) after the same heartbeat timeout in both
    topologies, a scheduler restarted at once takes over its predecessor's tasks as soon, and a task whose
    worker died before starting it leaves the queue as soon."""
    for name in AIRFLOW:
        env = environment(services[name])
        assert env["AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT"] == str(HEARTBEAT_TIMEOUT_S), name
        assert env["AIRFLOW__SCHEDULER__ORPHANED_TASKS_CHECK_INTERVAL"] == str(ORPHAN_CHECK_S), name
        assert env["AIRFLOW__SCHEDULER__TASK_QUEUED_TIMEOUT"] == str(QUEUED_TIMEOUT_S), name
        assert env["AIRFLOW__SCHEDULER__TASK_QUEUED_TIMEOUT_CHECK_INTERVAL"] == str(QUEUED_CHECK_S), name


def test_workers_preload_the_task_bodies_as_the_native_stack_does(services: dict[str, Any]) -> None:
    for name in AIRFLOW:
        assert environment(services[name])["AIRFLOW__CELERY__CELERY_CONFIG_OPTIONS"] == CELERY_CONFIG_OPTIONS, name


def test_spark_default_reaches_the_master(services: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook  # noqa: PLC0415

    raw = interpolate(environment(services["airflow-scheduler"])["AIRFLOW_CONN_SPARK_DEFAULT"])
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", raw)
    resolved = SparkSubmitHook(conn_id="spark_default")._resolve_connection()
    assert (resolved["master"], resolved["deploy_mode"]) == ("spark://spark-master:7077", "client")
    master = command_of(services["spark-master"])
    assert master[:2] == ["spark-class", "org.apache.spark.deploy.master.Master"]
    assert master[master.index("--host") + 1] == "spark-master" and master[master.index("--port") + 1] == "7077"
    for name in SPARK_WORKERS:
        assert command_of(services[name])[-1] == "spark://spark-master:7077"


def test_the_documented_connection_examples_parse() -> None:
    lines = [line.lstrip("# ") for line in ENV_EXAMPLE.read_text().splitlines()]
    examples = [line for line in lines if line.startswith("AIRFLOW_CONN_")]
    assert len(examples) >= 5
    for line in examples:
        name, _, value = line.partition("=")
        conn_id = name.removeprefix("AIRFLOW_CONN_").lower()
        conn = Connection.from_json(value.strip("'"), conn_id=conn_id)
        if conn.conn_type == "zookeeper":
            assert zookeeper_hook.target_from_connection(conn).digest_auth is not None
        elif conn.conn_type == "kafka_admin":
            assert kafka_hook.target_from_connection(conn).options["security_protocol"] == "SASL_SSL"
        elif conn.conn_type != "smtp":  # the SMTP server of the e-mail sink, not a sink itself
            notifier_for(conn)


def test_the_settings_file_loads_and_names_defined_connections(
    services: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("KAFKA_OPS_LAKE", raising=False)
    settings = load_settings(DOCKER / "config" / "kafka-ops.toml")
    (tmp_path / "native.toml").write_text(fleet.settings_toml("/opt/kafka-ops/lake"))
    native = load_settings(tmp_path / "native.toml")
    assert settings.clusters == native.clusters, "the native stack (stack/fleet.py) watches the same clusters"
    defined = set(connections(services["airflow-scheduler"]))
    for cluster in settings.clusters:
        zookeeper = [] if cluster.metadata_source == "kraft" else [cluster.zookeeper_conn_id]
        named = {*zookeeper, cluster.kafka_conn_id, *cluster.alert_conn_ids}
        assert named <= defined, f"cluster {cluster.name} names undefined connections {named - defined}"
        assert cluster.writes_enabled is False, "the shipped settings never write to a cluster"


def test_airflow_init_script_parses() -> None:
    subprocess.run(["bash", "-n", str(DOCKER / "airflow" / "airflow-init.sh")], check=True)


# -- the image ---------------------------------------------------------------------------------------


def dockerfile_instructions() -> list[list[tuple[str, str]]]:
    """(INSTRUCTION, arguments) per build stage, continuation lines joined, comments dropped."""
    stages: list[list[tuple[str, str]]] = []
    logical = re.sub(r"\\\n", " ", "\n".join(
        line for line in DOCKERFILE.read_text().splitlines() if not line.lstrip().startswith("#")
    ))  # fmt: skip
    for line in logical.splitlines():
        if not line.strip():
            continue
        instruction, _, args = line.strip().partition(" ")
        if instruction.upper() == "FROM":
            stages.append([])
        if stages:
            stages[-1].append((instruction.upper(), " ".join(args.split())))
    return stages


def dockerfile_env() -> dict[str, str]:
    final = dockerfile_instructions()[-1]
    env = " ".join(args for instruction, args in final if instruction == "ENV")
    return dict(re.findall(r"(\w+)=(\S+)", env))


def makefile_recipe(target: str) -> list[str]:
    """The commands `make <target>` runs, as make prints them (not run; also under a parent `make test`)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    result = subprocess.run(["make", "-n", "-B", target], cwd=REPO, env=env, capture_output=True, text=True, check=True)
    return [line.strip() for line in result.stdout.splitlines() if line.strip()]


def test_the_image_installs_with_the_makefiles_own_recipe() -> None:
    recipe = makefile_recipe("venv")
    installs = [line for line in recipe if " install " in line and "-c constraints.txt" in line]
    assert len(installs) == 1, f"the Makefile's venv step should pin with constraints.txt: {recipe}"
    build = dockerfile_instructions()[0]
    runs = [args for instruction, args in build if instruction == "RUN"]
    assert any(re.search(r"(^|\s)make venv jars(\s|$)", run) for run in runs), "the image must run `make venv jars`"
    # any other install in the image adds packages under the same constraints, into the same virtualenv
    for run in runs:
        for pip in re.findall(r"(\S*pip install [^&;]*)", run):
            assert pip.startswith(".venv/bin/pip install") and "-c constraints.txt" in pip, pip
    assert ("COPY", ". .") in build
    allowed = [p for p in DOCKERIGNORE.read_text().split() if p.startswith("!")]
    for needed in ("Makefile", "pyproject.toml", "constraints.txt", "plugins", "dags", "spark_jobs"):
        assert f"!{needed}" in allowed


def test_the_extra_pins_do_not_move_the_constraints() -> None:
    def pins(path: Path) -> dict[str, str]:
        found = re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", path.read_text(), re.MULTILINE)
        return {re.sub(r"[-_.]+", "-", name).lower(): version for name, version in found}

    extra, constraints = pins(DOCKER / "airflow" / "requirements-postgres.txt"), pins(REPO / "constraints.txt")
    assert extra and all(version for version in extra.values())
    assert {name: v for name, v in extra.items() if name in constraints} == {
        name: constraints[name] for name in extra if name in constraints
    }


def test_the_image_has_python_311_a_jdk_and_the_project_paths() -> None:
    stages = dockerfile_instructions()
    assert len(stages) == 2
    assert "ARG PYTHON_IMAGE=python:3.11-slim-bookworm" in DOCKERFILE.read_text()
    build_runs = " ".join(a for i, a in stages[0] if i == "RUN")
    final_runs = " ".join(a for i, a in stages[1] if i == "RUN")
    assert "openjdk-17-jdk-headless" in build_runs and "openjdk-17-jdk-headless" in final_runs  # javac at run time
    assert "maven" in build_runs and "maven" not in final_runs
    assert "chromium" in final_runs and 'WITH_CHROMIUM" = "true"' in final_runs  # optional
    assert "compile_java" in build_runs
    env = dockerfile_env()
    assert env["AIRFLOW__CORE__DAGS_FOLDER"] == "/opt/kafka-ops/dags"
    assert env["AIRFLOW__CORE__PLUGINS_FOLDER"] == "/opt/kafka-ops/plugins"
    assert env["KAFKA_OPS_VAR"] == "/opt/kafka-ops/var"
    assert env["SPARK_CONF_DIR"] == "/opt/kafka-ops/docker/spark"
    assert env["PATH"].startswith("/opt/kafka-ops/.venv/bin:")
    assert (REPO / "plugins" / ".airflowignore").is_file()
    user = [a for i, a in stages[1] if i == "USER"]
    assert user == ["airflow"], "the runtime runs as a non-root user"


def test_the_build_context_keeps_secrets_and_local_state_out() -> None:
    patterns = [p for p in DOCKERIGNORE.read_text().splitlines() if p.strip() and not p.startswith("#")]
    assert patterns[0] == "*", "an allowlist"
    included = [p[1:] for p in patterns if p.startswith("!")]
    for path in included:
        assert path not in ("docker", ".env", "var", ".venv", ".git", "tests"), path
        assert (REPO / path).exists(), path
    assert "**/.env" in patterns


# -- documentation -----------------------------------------------------------------------------------

_SERVICE_IN_TEXT = re.compile(r"`((?:airflow|spark)-[a-z-]+|kafka-\d+|kafka-init)`")
_COMPOSE_VERB = re.compile(
    r"docker compose(?: (?:-f|--profile|--env-file) \S+)* "
    r"(exec|logs|restart|stop|start|up|ps|run|rm|kill|cp)\b([^\n`|;&#]*)"
)


def test_docker_readme_lists_exactly_the_services(services: dict[str, Any]) -> None:
    table = re.findall(r"^\| `([a-z0-9-]+)` \|", (DOCKER / "README.md").read_text(), re.MULTILINE)
    assert sorted(table) == sorted(services), "docker/README.md's service table"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_service_the_docs_name_exists(doc: Path, compose: dict[str, Any]) -> None:
    services, volumes = compose["services"], set(compose["volumes"])
    text = doc.read_text()
    not_services = {"spark-submit", "spark-class", "spark-defaults", *volumes}
    named = {m for m in _SERVICE_IN_TEXT.findall(text) if m not in not_services}
    for verb, args in _COMPOSE_VERB.findall(text):
        words = args.split()
        if verb == "cp":
            named |= {w.split(":", 1)[0] for w in words if ":/" in w}
            continue
        positional = [w for w in words if re.fullmatch(r"[a-z][a-z0-9-]*", w)]
        named |= set(positional[:1] if verb in ("exec", "run") else positional)
    unknown = sorted(named - set(services))
    assert not unknown, f"{doc.name} names services the compose file does not have: {unknown}"


# -- the Compose Specification's schema ------------------------------------------------------------

COMPOSE_SCHEMA = REPO / "var" / "tools" / "compose-spec.json"
"""The schema `docker compose config` validates a file with (compose-go's schema/compose-spec.json;
`make compose-spec` takes it from the Go module proxy)."""


def interpolated(value: Any) -> Any:
    """`value` with every string interpolated as Compose does (mappings' keys are not interpolated)."""
    if isinstance(value, str):
        return interpolate(value)
    if isinstance(value, dict):
        return {k: interpolated(v) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolated(v) for v in value]
    return value


def test_the_compose_file_is_valid_against_the_compose_specification(compose: dict[str, Any]) -> None:
    """The file, its variables interpolated as Compose does, against the Compose Specification's own
    JSON schema; and the schema does refuse a service with an unknown key (it is not a no-op)."""
    assert COMPOSE_SCHEMA.exists(), f"no {COMPOSE_SCHEMA}: run `make compose-spec` (make test does)"
    schema = json.loads(COMPOSE_SCHEMA.read_text())
    validator = jsonschema.Draft202012Validator(schema)
    filled = interpolated(compose)
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(filled)]
    assert not errors, errors[:10]
    broken = {**filled, "services": {**filled["services"], "typo": {"image": "x", "restrat": "always"}}}
    assert any("restrat" in e.message for e in validator.iter_errors(broken))


# -- monitoring (profile "monitoring") ---------------------------------------------------------------


def test_prometheus_reads_the_token_file_the_token_service_writes(services: dict[str, Any]) -> None:
    token_env = environment(services["prometheus-token"])
    written = Path(token_env["AIRFLOW_JWT_FILE"])
    token_mounts = {t: src for src, t, _ in volume_mounts(services["prometheus-token"])}
    assert token_mounts[str(written.parent)] == "prometheus-token"
    prometheus_mounts = {src: (t, ro) for src, t, ro in volume_mounts(services["prometheus"])}
    target, read_only = prometheus_mounts["prometheus-token"]
    assert read_only, "Prometheus only reads the token"
    config = yaml.safe_load((DOCKER / "prometheus" / "prometheus.yml").read_text())
    (job,) = [j for j in config["scrape_configs"] if j["job_name"] == "kafka-ops"]
    assert job["authorization"]["credentials_file"] == f"{target}/{written.name}"
    assert job["metrics_path"] == "/kafka-ops/metrics"
    assert job["static_configs"][0]["targets"] == ["airflow-api-server:8080"]
    assert token_env["AIRFLOW_JWT_URL"] == "http://airflow-api-server:8080/auth/token"
    # the token volume starts as the image's directory, owned by the image's user (see the Dockerfile)
    assert str(written.parent) in DOCKERFILE.read_text()
    health = services["prometheus-token"]["healthcheck"]["test"][-1]
    assert str(written) in health


def test_the_token_service_gets_only_its_own_secret(services: dict[str, Any]) -> None:
    env = environment(services["prometheus-token"])
    assert env["AIRFLOW_PROMETHEUS_PASSWORD"] == "${AIRFLOW_PROMETHEUS_PASSWORD:-}"
    assert not [name for name in env if SECRET_NAME.search(name) and name != "AIRFLOW_PROMETHEUS_PASSWORD"]
    script = Path(command_of(services["prometheus-token"])[-1])
    mounted = {t: src for src, t, _ in volume_mounts(services["prometheus-token"])}
    assert (DOCKER / mounted[str(script)]).is_file()


def test_the_prometheus_user_is_a_viewer_with_a_password_from_the_env_file(compose: dict[str, Any]) -> None:
    users = dict(u.split(":") for u in compose["x-airflow-env"]["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS"].split(","))
    assert users == {"admin": "admin", "prometheus": "viewer"}
    init = (DOCKER / "airflow" / "airflow-init.sh").read_text()
    assert 'os.environ.get("AIRFLOW_PROMETHEUS_PASSWORD")' in init


def test_airflow_init_writes_the_passwords_file(tmp_path: Path) -> None:
    """The init script's password step, run as it is (the heredoc), with and without the prometheus one."""
    script = (DOCKER / "airflow" / "airflow-init.sh").read_text()
    step = script.split("python - <<'PY'\n", 1)[1].split("\nPY\n", 1)[0]
    path = tmp_path / "auth" / "passwords.json"
    base = {"PATH": os.environ["PATH"], "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(path),
            "AIRFLOW_ADMIN_PASSWORD": "a-secret"}  # fmt: skip
    subprocess.run(["python", "-c", step], env={**base, "AIRFLOW_PROMETHEUS_PASSWORD": "p-secret"}, check=True)
    assert json.loads(path.read_text()) == {"admin": "a-secret", "prometheus": "p-secret"}
    assert path.stat().st_mode & 0o777 == 0o600
    subprocess.run(["python", "-c", step], env={**base, "AIRFLOW_PROMETHEUS_PASSWORD": ""}, check=True)
    unset = json.loads(path.read_text())
    assert unset["admin"] == "a-secret" and len(unset["prometheus"]) >= 32  # random: no known password


def test_grafana_refuses_to_start_without_its_password(services: dict[str, Any]) -> None:
    grafana = services["grafana"]
    env = environment(grafana)
    assert env["GF_SECURITY_ADMIN_PASSWORD"] == "${GRAFANA_ADMIN_PASSWORD:-}"
    entrypoint = interpolate(grafana["entrypoint"][-1])
    for password, code in (("", 1), ("x", 0)):
        run = entrypoint.replace("exec /run.sh", "exit 0")
        result = subprocess.run(["sh", "-c", run], env={"GF_SECURITY_ADMIN_PASSWORD": password}, capture_output=True,
                                text=True, check=False)  # fmt: skip
        assert result.returncode == code, (password, result.stderr)
    assert (
        "GRAFANA_ADMIN_PASSWORD is empty"
        in subprocess.run(["sh", "-c", entrypoint], env={}, capture_output=True, text=True, check=False).stderr
    )
    mounts = {t: src for src, t, _ in volume_mounts(grafana)}
    provider = yaml.safe_load((DOCKER / "grafana" / "provisioning" / "dashboards" / "kafka-ops.yml").read_text())
    dashboards_dir = provider["providers"][0]["options"]["path"]
    assert mounts[dashboards_dir] == "./grafana/dashboards"
    assert mounts["/etc/grafana/provisioning"] == "./grafana/provisioning"
    home = Path(env["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"])
    assert str(home.parent) == dashboards_dir and (DOCKER / "grafana" / "dashboards" / home.name).is_file()


def test_make_jars_fetches_delta_s_spark_connector_for_the_default_lake() -> None:
    """The runtime image has no Maven: the analysis DAG's spark-submit of the default (Delta) lake
    needs the connector's jars fetched at build time, by `make jars`."""
    assert DEFAULT_LAKE_FORMAT == "delta"
    assert any("ensure_delta_spark_jars" in line for line in makefile_recipe("jars"))
