"""`up`, `down` and `status` of the running topology (see the package docstring and `services.SERVICES`)."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from kafka_ops.jars.fetch import var_dir
from sandbox.cluster import free_port
from stack import fleet, monitoring
from stack.airflow import ADMIN, VIEWER, AirflowApi, airflow_environment
from stack.postgres import Postgres
from stack.processes import MARKER, Recipe, StackError, launch, run, save_recipe, stack_pids, stop, tail, wait_until
from stack.services import AIRFLOW_WORKERS, EXECUTOR, SERVICE_NAMES, SPARK_QUEUE, SPARK_WORKERS, WORKER_QUEUES
from stack.state import Sandbox, State

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
AIRFLOW_COMPONENTS = ("api-server", "scheduler", "dag-processor", "triggerer")
SCHEDULED_DAGS = ("kafka_metadata_snapshot", "kafka_health_analysis")
"""Waited for before unpausing every DAG tagged kafka-ops (remediation DAGs stay dry-run: writes are disabled)."""
AWS_KEY_ID, AWS_SECRET, AWS_REGION = "kafka-ops-stack", "kafka-ops-stack-secret", "us-east-1"
SPARK_DEFAULTS = {
    # scaled down for a shared 2-core, 24 GiB machine (docs/operations.md)
    "spark.sql.session.timeZone": "UTC",
    "spark.cores.max": "1",
    "spark.executor.cores": "1",
    "spark.executor.memory": "512m",
    "spark.driver.memory": "768m",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.ui.enabled": "false",
}
SPARK_WORKER_MEMORY, SPARK_DAEMON_MEMORY = "1g", "256m"
SPARK_CONNECT_DRIVER_MEMORY = "1g"
"""The Spark Connect server's driver: every analysis' plans and the findings it returns pass through it."""
SPARK_WORKER_OPTS = (
    "-Dspark.worker.cleanup.enabled=true -Dspark.worker.cleanup.interval=300 -Dspark.worker.cleanup.appDataTtl=900"
)
"""A worker removes a finished application's folder 15 minutes after it ended: each holds the jars spark-submit
handed it (Delta's, and on an S3 lake the 642 MB S3A bundle), so a run a minute would fill the disk."""
CELERY_CONCURRENCY = "2"
CELERY_CONFIG_OPTIONS = "kafka_ops.airflow.celery_worker.CELERY_CONFIG"
HEARTBEAT_TIMEOUT_S = 60
ORPHAN_CHECK_S = 30
QUEUED_TIMEOUT_S = 180
QUEUED_CHECK_S = 30
PORTS = ("postgres", "redis", "object-store", "webhook", "spark-master", "spark-master-ui",
         *(f"{w}{s}" for w in SPARK_WORKERS for s in ("", "-ui")), "spark-connect", "airflow-api-server",
         "airflow-triggerer-logs", "airflow-worker-logs", "prometheus", "alertmanager")  # fmt: skip


ANALYSIS_SPARK = ("connect", "submit")
"""Where the analysis DAG runs its jobs: the stack's Spark Connect server, or one spark-submit per job."""


def object_store_environment(state: State) -> dict[str, str]:
    """The variables delta-rs, pyarrow and Spark's S3A read the stack's object store with: every
    process of the stack gets them, and so does whatever reads its lake from outside (the soak's report)."""
    return {
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{state.ports['object-store']}",
        "AWS_ACCESS_KEY_ID": AWS_KEY_ID,
        "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
        "AWS_REGION": AWS_REGION,
        "AWS_DEFAULT_REGION": AWS_REGION,
        "AWS_ALLOW_HTTP": "true",
    }


class Topology:
    def __init__(
        self, root: Path, snapshot_schedule: str = fleet.SNAPSHOT_SCHEDULE, analysis_spark: str = "submit"
    ) -> None:
        if analysis_spark not in ANALYSIS_SPARK:
            raise StackError(f"analysis_spark is one of {ANALYSIS_SPARK}, not {analysis_spark!r}")
        self.root = root
        self.logs = root / "logs"
        self.snapshot_schedule = snapshot_schedule
        """The snapshot DAG's cron heartbeat in the stack `up` starts."""
        self.analysis_spark = analysis_spark
        """`connect`: the analysis DAG's jobs run on the stack's Spark Connect server; `submit`: spark-submit."""

    # -- up ---------------------------------------------------------------------------------------------

    def up(self, lake: str, sandbox_roots: dict[str, Path | None]) -> State:
        previous = State.load(self.root)
        if previous is not None and any(previous.running(name) for name in previous.pids):
            raise StackError(f"the stack in {self.root} is already up; `python -m stack down` first")
        self.logs.mkdir(parents=True, exist_ok=True)
        local_lake = self.root / "lake"
        state = State(str(self.root), lake, fleet.lake_root(lake, local_lake))
        state.ports = {name: free_port() for name in PORTS}
        state.save()
        try:
            self._start(state, sandbox_roots)
        except BaseException:
            self.down()
            raise
        return state

    def _start(self, state: State, sandbox_roots: dict[str, Path | None]) -> None:
        base = self._base_environment(state)
        # unmarked: the sandboxes are not the stack's processes (`down` stops those it started by their CLI)
        unmarked = {k: v for k, v in base.items() if k != MARKER}
        for mode, root in sandbox_roots.items():
            state.sandboxes[mode] = fleet.ensure_sandbox(mode, root, unmarked, self.logs / "sandboxes.log")
            state.save()
            fleet.ensure_topic(state.sandboxes[mode])
        ports = state.ports
        postgres = Postgres(self.root / "postgres", ports["postgres"])
        postgres.init(base)
        self._service(state, "postgres", postgres.argv(), base, postgres.home, user="postgres")
        self._wait(state, "postgres", postgres.ready, 120)
        postgres.create_airflow_database()

        redis_dir = self.root / "redis"
        redis_dir.mkdir(exist_ok=True)
        redis = ["redis-server", "--bind", "127.0.0.1", "--port", str(ports["redis"]), "--dir", str(redis_dir),
                 "--save", "", "--appendonly", "yes"]  # fmt: skip
        # appendonly: the Celery queue survives `down`/`up`; without it a task queued when the stack
        # stopped stayed `queued` in Airflow until [scheduler] task_queued_timeout (10 min), and its
        # DAG run with it
        self._service(state, "redis", redis, base, redis_dir)
        self._wait(state, "redis", lambda: _redis_pong(ports["redis"]), 60)

        s3 = f"http://127.0.0.1:{ports['object-store']}"
        self._service(state, "object-store", [str(BIN / "python"), "-m", "moto.server", "-H", "127.0.0.1",
                                              "-p", str(ports["object-store"])], base, self.root)  # fmt: skip
        self._wait(state, "object-store", lambda: _http_ok(f"{s3}/"), 120)
        httpx.put(f"{s3}/{fleet.BUCKET}", timeout=30).raise_for_status()
        state.urls["object-store"] = s3

        receiver = f"http://127.0.0.1:{ports['webhook']}"
        self._service(state, "webhook", [str(BIN / "python"), "-m", "stack.webhook", "--port", str(ports["webhook"]),
                                         "--out", str(self.received)], base, REPO)  # fmt: skip
        self._wait(state, "webhook", lambda: _http_ok(f"{receiver}/health"), 60)
        state.urls["webhook"] = receiver

        self._start_spark(state, base)
        self._start_airflow(state, base, postgres)
        self._start_monitoring(state, base)
        state.save()

    @property
    def received(self) -> Path:
        """The webhook receiver's JSON lines (`stack.webhook.read_received`)."""
        return self.root / "webhook" / "received.jsonl"

    def _start_spark(self, state: State, base: dict[str, str]) -> None:
        ports = state.ports
        env = {
            **base,
            "SPARK_DAEMON_MEMORY": SPARK_DAEMON_MEMORY,
            "SPARK_NO_DAEMONIZE": "1",
            "SPARK_WORKER_OPTS": SPARK_WORKER_OPTS,
        }
        master, ui = f"spark://127.0.0.1:{ports['spark-master']}", f"http://127.0.0.1:{ports['spark-master-ui']}"
        self._service(state, "spark-master", [str(BIN / "spark-class"), "org.apache.spark.deploy.master.Master",
                      "--host", "127.0.0.1", "--port", str(ports["spark-master"]), "--webui-port",
                      str(ports["spark-master-ui"])], env, self.root)  # fmt: skip
        for name in SPARK_WORKERS:
            work = self.root / "spark" / name
            work.mkdir(parents=True, exist_ok=True)
            self._service(state, name, [str(BIN / "spark-class"), "org.apache.spark.deploy.worker.Worker",
                          "--host", "127.0.0.1", "--port", str(ports[name]), "--webui-port", str(ports[f"{name}-ui"]),
                          "--cores", "1", "--memory", SPARK_WORKER_MEMORY, "--work-dir", str(work), master],
                          env, work)  # fmt: skip

        def workers_alive() -> bool:
            self._alive(state)
            try:
                status = httpx.get(f"{ui}/json/", timeout=5).json()
            except (httpx.TransportError, ValueError):
                return False
            alive = [w for w in status.get("workers", []) if w.get("state") == "ALIVE"]
            return status.get("status") == "ALIVE" and len(alive) >= len(SPARK_WORKERS)

        wait_until(workers_alive, 180, "the Spark master to see its workers ALIVE")
        state.urls.update({"spark-master": master, "spark-master-ui": ui})
        conf = self.root / "spark" / "conf"
        conf.mkdir(parents=True, exist_ok=True)
        (conf / "spark-defaults.conf").write_text("".join(f"{k} {v}\n" for k, v in SPARK_DEFAULTS.items()))
        if self.analysis_spark != "connect":
            return
        # one application for good, an executor on each worker: the clusters' analyses run side by side, and a
        # worker lost costs half the cores, not the analysis. Not the daemons' environment: Spark's launcher
        # sizes this driver by SPARK_DAEMON_MEMORY when it is set
        self._service(state, "spark-connect", [str(BIN / "python"), "-m", "kafka_ops.analysis.connect_server",
                      "--master", master, "--port", str(ports["spark-connect"]), "--lake", state.lake_root,
                      "--conf", f"spark.driver.memory={SPARK_CONNECT_DRIVER_MEMORY}",
                      "--conf", f"spark.cores.max={len(SPARK_WORKERS)}"],
                      {**base, "SPARK_CONF_DIR": str(conf)}, self.root)  # fmt: skip
        self._wait(state, "spark-connect", lambda: _accepts(ports["spark-connect"]), 300)
        state.urls["spark-connect"] = f"sc://127.0.0.1:{ports['spark-connect']}"

    def _airflow_environment(self, state: State, base: dict[str, str], postgres: Postgres) -> dict[str, str]:
        home = self.root / "airflow"
        home.mkdir(exist_ok=True)
        passwords, secret_file = home / "passwords.json", home / "secrets.json"
        if not passwords.exists():
            passwords.write_text(json.dumps({ADMIN: secrets.token_urlsafe(12), VIEWER: secrets.token_urlsafe(12)}))
            passwords.chmod(0o600)
        if not secret_file.exists():
            from cryptography.fernet import Fernet  # noqa: PLC0415 - Airflow's dependency

            secret_file.write_text(json.dumps({"jwt": secrets.token_hex(32), "fernet": Fernet.generate_key().decode()}))
            secret_file.chmod(0o600)
        keys = json.loads(secret_file.read_text())
        settings = self.root / "kafka-ops.toml"
        settings.write_text(fleet.settings_toml(state.lake_root))
        ports = state.ports
        env = {
            **base,
            **airflow_environment(
                home,
                ports["airflow-api-server"],
                keys["jwt"],
                database=postgres.url(),
                executor=EXECUTOR,
                users=f"{ADMIN}:admin,{VIEWER}:viewer",
                passwords=passwords,
            ),
            "AIRFLOW__CORE__FERNET_KEY": keys["fernet"],
            "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
            "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
            "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "True",
            "AIRFLOW__CORE__PARALLELISM": "8",
            "AIRFLOW__CELERY__BROKER_URL": f"redis://127.0.0.1:{ports['redis']}/0",
            "AIRFLOW__CELERY__RESULT_BACKEND": postgres.url("db+postgresql+psycopg2"),
            "AIRFLOW__CELERY__WORKER_CONCURRENCY": CELERY_CONCURRENCY,
            # each worker imports the task bodies once, at start: a task forked from it starts without the
            # seconds of imports (Great Expectations: 35 s at load 8) in front of its page
            "AIRFLOW__CELERY__CELERY_CONFIG_OPTIONS": CELERY_CONFIG_OPTIONS,
            # a task whose Celery worker died is failed (and retried) after 60 s without a heartbeat (a live
            # task sends one every 5 s), not 300: until then the one-run-at-a-time snapshot DAG waits and
            # sees nothing (docs/operations.md, the soak)
            "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": str(HEARTBEAT_TIMEOUT_S),
            # a scheduler restarted within seconds of its death finds its predecessor still alive (30 s of
            # heartbeat grace) and only looks again after this interval: until then the tasks that one
            # queued are nobody's, and one whose worker died holds the run (5 minutes by default; seen)
            "AIRFLOW__SCHEDULER__ORPHANED_TASKS_CHECK_INTERVAL": str(ORPHAN_CHECK_S),
            # a task a Celery worker took but died before starting stays `queued` (its message taken, never
            # run): it is requeued after 3 minutes in the queue, checked every 30 s, not 10 minutes checked
            # every 2 (seen in the soak: the snapshot DAG held past the end of its settling time). The Spark
            # jobs wait on a queue of their own, so a default-queue task waits seconds, never minutes
            "AIRFLOW__SCHEDULER__TASK_QUEUED_TIMEOUT": str(QUEUED_TIMEOUT_S),
            "AIRFLOW__SCHEDULER__TASK_QUEUED_TIMEOUT_CHECK_INTERVAL": str(QUEUED_CHECK_S),
            "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(ports["airflow-worker-logs"]),
            "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": str(ports["airflow-triggerer-logs"]),
            "KAFKA_OPS_CONFIG": str(settings),
            "KAFKA_OPS_LAKE": "",  # the settings' lake_root
            "KAFKA_OPS_SNAPSHOT_SCHEDULE": self.snapshot_schedule,
            "KAFKA_OPS_SPARK_JOBS": str(REPO / "spark_jobs"),
            "SPARK_CONF_DIR": str(self.root / "spark" / "conf"),
            **fleet.connections(state.sandboxes, ports["webhook"], ports["spark-master"], ports["spark-connect"]),
            "KAFKA_OPS_SPARK_CONNECT_CONN_ID": fleet.SPARK_CONNECT_CONN if self.analysis_spark == "connect" else "",
            "KAFKA_OPS_SPARK_QUEUE": SPARK_QUEUE,
        }
        return env

    def _start_airflow(self, state: State, base: dict[str, str], postgres: Postgres) -> None:
        env = self._airflow_environment(state, base, postgres)
        home = Path(env["AIRFLOW_HOME"])
        run(
            [str(BIN / "python"), "-m", "airflow", "db", "migrate"],
            env,
            self.logs / "airflow-db-migrate.log",
            home,
            600,
        )
        for component in AIRFLOW_COMPONENTS:
            self._service(state, f"airflow-{component}", [str(BIN / "python"), "-m", "airflow", component], env, home)
        for name in AIRFLOW_WORKERS:
            work = self.root / "workers" / name
            (work / "tmp").mkdir(parents=True, exist_ok=True)
            self._service(state, name, [str(BIN / "python"), "-m", "airflow", "celery", "worker", "--celery-hostname",
                          f"{name}@%h", "--concurrency", CELERY_CONCURRENCY, "--queues", WORKER_QUEUES[name],
                          "--skip-serve-logs"],
                          {**env, "TMPDIR": str(work / "tmp")}, work)  # fmt: skip
        url = f"http://127.0.0.1:{state.ports['airflow-api-server']}"
        state.urls["airflow"] = url
        api = AirflowApi(url, ADMIN, json.loads((home / "passwords.json").read_text())[ADMIN])

        def healthy() -> bool:
            self._alive(state)
            health = api.healthy() or {}
            parts = ("metadatabase", "scheduler", "triggerer", "dag_processor")
            return all((health.get(p) or {}).get("status") == "healthy" for p in parts)

        wait_until(healthy, 300, "Airflow's api-server, scheduler, triggerer and dag-processor to report healthy", 2)
        for name in AIRFLOW_WORKERS:
            log = self.logs / f"{name}.log"
            self._wait(state, name, partial(_says_ready, log), 180)
        api.unpause_when_parsed(list(SCHEDULED_DAGS), 300, lambda: self._alive(state))

    def _start_monitoring(self, state: State, base: dict[str, str]) -> None:
        ports, home = state.ports, self.root / "prometheus"
        home.mkdir(exist_ok=True)
        token = home / "airflow.jwt"
        viewer = json.loads((self.root / "airflow" / "passwords.json").read_text())[VIEWER]
        self._service(state, "prometheus-token", [str(BIN / "python"), str(monitoring.TOKEN_SCRIPT)], {
            **base, "AIRFLOW_JWT_URL": f"{state.urls['airflow']}/auth/token", "AIRFLOW_JWT_USER": VIEWER,
            "AIRFLOW_PROMETHEUS_PASSWORD": viewer, "AIRFLOW_JWT_FILE": str(token),
            "AIRFLOW_JWT_REFRESH_SECONDS": "10800"}, home)  # fmt: skip
        self._wait(state, "prometheus-token", token.exists, 60)
        am_config = monitoring.write_json_yaml(
            home / "alertmanager.yml", monitoring.alertmanager_config(ports["webhook"])
        )
        alertmanager = monitoring.alertmanager_argv(am_config, home / "alertmanager-data", ports["alertmanager"])
        self._service(state, "alertmanager", alertmanager, base, home)
        config = monitoring.prometheus_config(
            ports["airflow-api-server"], ports["prometheus"], ports["alertmanager"], token
        )
        prom_config = monitoring.write_json_yaml(home / "prometheus.yml", config)
        prometheus = monitoring.prometheus_argv(prom_config, home / "tsdb", ports["prometheus"])
        self._service(state, "prometheus", prometheus, base, home)
        for name in ("alertmanager", "prometheus"):
            url = f"http://127.0.0.1:{ports[name]}"
            self._wait(state, name, partial(_http_ok, f"{url}/-/ready"), 60)
            state.urls[name] = url

    def _base_environment(self, state: State) -> dict[str, str]:
        """What every process gets: the caller's environment without its Airflow and kafka-ops settings,
        the stack's marker, loopback-only Spark, the virtualenv's tools, and the object store's endpoint."""
        inherited = {
            k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "KAFKA_OPS_CONFIG", "KAFKA_OPS_LAKE"))
        }
        return {
            **inherited,
            MARKER: str(self.root),
            "KAFKA_OPS_VAR": str(var_dir().resolve()),
            "PATH": f"{BIN}{os.pathsep}{inherited.get('PATH', '')}",
            "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": sys.executable,
            "PYARROW_IGNORE_TIMEZONE": "1",
            **object_store_environment(state),
        }

    def _service(
        self, state: State, name: str, argv: list[str], env: dict[str, str], cwd: Path, *, user: str | None = None
    ) -> None:
        if name not in SERVICE_NAMES:
            raise StackError(f"{name} is not in stack.services.SERVICES")
        state.pids[name], state.started[name] = launch(argv, env, self.logs / f"{name}.log", cwd, user=user)
        state.save()
        save_recipe(self.root, name, Recipe(argv, env, cwd, user))

    def _alive(self, state: State) -> None:
        """StackError with its log's tail when a started service has exited."""
        for name, pid in state.pids.items():
            if not state.running(name):
                raise StackError(f"{name} (pid {pid}) exited:\n{tail(self.logs / f'{name}.log')}")

    def _wait(self, state: State, name: str, check: Callable[[], object], timeout_s: float) -> None:
        def checked() -> object:
            self._alive(state)
            return check()

        try:
            wait_until(checked, timeout_s, f"{name} to be ready")
        except StackError as e:
            raise StackError(f"{e}\n{tail(self.logs / f'{name}.log')}") from None

    # -- down, status -----------------------------------------------------------------------------------

    def down(self) -> list[str]:
        """Stop what `up` started, last started first; what was stopped. Safe to run twice."""
        state = State.load(self.root)
        stopped: list[str] = []
        if state is not None:
            for name in reversed(SERVICE_NAMES):
                if state.running(name):
                    # PostgreSQL: SIGINT is its fast shutdown (SIGTERM waits for every client to leave)
                    stop(state.pids[name], signal.SIGINT if name == "postgres" else signal.SIGTERM)
                    stopped.append(name)
            for sandbox in state.sandboxes.values():
                if sandbox.started:
                    fleet.stop_sandbox(sandbox, os.environ, self.logs / "sandboxes.log")
                    stopped.append(f"sandbox --mode {sandbox.mode}")
        for pid in stack_pids(self.root):  # anything that left its service's process group
            stop(pid, signal.SIGKILL, grace_s=5)
        if state is not None:
            state.path.unlink(missing_ok=True)
        return stopped

    def status(self) -> dict[str, Any]:
        state = State.load(self.root)
        if state is None:
            return {"up": False, "root": str(self.root), "processes": stack_pids(self.root)}
        services = {name: ("up" if state.running(name) else "down") for name in state.pids}
        sandboxes = {m: _sandbox_status(s) for m, s in state.sandboxes.items()}
        return {
            "up": bool(services) and all(v == "up" for v in services.values()),
            "root": str(self.root),
            "lake_root": state.lake_root,
            "services": services,
            "sandboxes": sandboxes,
            "urls": state.urls,
            "credentials": str(self.root / "airflow" / "passwords.json"),
            "logs": str(self.logs),
        }


def _sandbox_status(sandbox: Sandbox) -> dict[str, Any]:
    return {"started_by_stack": sandbox.started, "bootstrap_servers": sandbox.summary.get("bootstrap_servers")}


def _says_ready(log: Path) -> bool:
    """A Celery worker logs `celery@<hostname> ready.` once it consumes from the broker."""
    return "ready." in log.read_text(errors="replace")


def _redis_pong(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError:
        return False
    return True


def _http_ok(url: str) -> bool:
    try:
        return httpx.get(url, timeout=5).status_code == 200
    except httpx.TransportError:
        return False
