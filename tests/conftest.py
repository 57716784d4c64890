"""Shared fixtures: the real sandbox cluster (session-scoped) and a fresh lake per test."""

from __future__ import annotations

import gc
import os
import sqlite3
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from concurrent.futures import thread as futures_thread
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests import lanes

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Airflow reads its configuration once, at first import: set it before any test imports airflow.
# `setdefault`, so the Makefile's exports win. UNIT_TEST_MODE stays off: it loads Airflow's own
# test config (LocalExecutor, example DAGs), which is for Airflow's test suite.
REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("AIRFLOW_HOME", str(REPO / "var" / "airflow"))
os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
os.environ.setdefault("AIRFLOW__CORE__DAGS_FOLDER", str(REPO / "dags"))
os.environ.setdefault("AIRFLOW__CORE__PLUGINS_FOLDER", str(REPO / "plugins"))
# Spark binds to loopback only (never the machine's other interfaces).
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
# spark-submit and the jobs' Python come from this virtualenv
_BIN = os.path.dirname(os.path.abspath(sys.executable))
if _BIN not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = _BIN + os.pathsep + os.environ.get("PATH", "")
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")
if lanes.worker() is not None:
    # one SQLite metadata DB per xdist worker (two writers on one file fail with "database is locked"):
    # a copy of the migrated one `make airflow-db` made, so the dags tests' migration check passes at once
    _shared_db = Path(os.environ["AIRFLOW_HOME"]) / "airflow.db"
    _worker_db = _shared_db.with_name(f"airflow-{lanes.worker()}.db")
    if _shared_db.exists():
        _source, _copy = sqlite3.connect(_shared_db), sqlite3.connect(_worker_db)
        _source.backup(_copy)  # consistent even with the source's write-ahead log not yet merged
        _source.close()
        _copy.close()
    os.environ["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] = f"sqlite:///{_worker_db}"

from kafka_ops.child_process import kill_when_gone  # noqa: E402 - after the Airflow environment
from kafka_ops.lake.open import open_lake  # noqa: E402
from kafka_ops.lake.store import Lake  # noqa: E402
from sandbox import KRaftSandbox, SandboxCluster  # noqa: E402

_EXIT_STATUS = {"status": 0}
_LANE_TIMES = lanes.LaneTimes()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if lanes.worker() is None:
        _LANE_TIMES.add(report)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _LANE_TIMES.seconds:
        terminalreporter.write_sep("=", "minutes per xdist worker, and its longest groups")
        for line in _LANE_TIMES.lines():
            terminalreporter.write_line(line)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _EXIT_STATUS["status"] = int(exitstatus)


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Iterator[object]:
    """pytest ends a run without a word when a test's failure (a timeout, `pytest.fail`) escapes outside a
    test's setup, call and teardown; an xdist worker then just stops, the rest of its tests unrun. Say
    what escaped, and from where, before it ends the run."""
    try:
        return (yield)
    except BaseException:
        sys.stderr.write(f"pytest ({lanes.worker() or 'main'}): the run loop ended on\n{traceback.format_exc()}\n")
        sys.stderr.flush()
        raise


def pytest_unconfigure(config: pytest.Config) -> None:
    """A client thread a failed test left running (a consumer whose brokers are gone retries for ever)
    must not keep the run alive past its result: CI would only see a timeout. Say which, then exit
    with the tests' own status."""
    stray = [t.name for t in threading.enumerate() if t is not threading.main_thread() and _lingers(t)]
    if stray:
        sys.stdout.flush()
        sys.stderr.write(f"pytest: exiting past {len(stray)} thread(s) tests left running: {stray[:10]}\n")
        sys.stderr.flush()
        if lanes.worker() is None:
            os._exit(_EXIT_STATUS["status"])
        # an xdist worker's results are still on their way to the controller: exit once they had time
        timer = threading.Timer(30, os._exit, args=(_EXIT_STATUS["status"],))
        timer.daemon = True
        timer.start()


_LAST_USERS: dict[str, set[str]] = {}
"""Per session sandbox (by fixture name): the tests after whose teardown it stops."""
_RUNNING: dict[str, SandboxCluster | KRaftSandbox] = {}
_STOPPED: dict[str, SandboxCluster | KRaftSandbox] = {}
"""Session sandboxes stopped after their last user so far: started again if another test needs one."""
SESSION_SANDBOXES = ("sandbox", "kraft_sandbox")


TIER_FOLDERS = ("integration", "dags", "e2e", "stack", "bench")
"""Folders of tests beyond the unit tier: each of their tests carries its folder's name as a marker."""
BOUND_FIXTURES = {"spark": "spark", "bridge": "jvm"}
"""Fixtures that start a JVM (the session Spark, the assignor bridge), and the marker a test using one
gets, so `-m "not spark and not jvm"` selects what runs without a JVM."""


class _TruthfulMarkers:
    """Markers that tell the truth, applied before `-m` selects: a test in a tier folder without its
    folder's marker fails the collection (naming it), and a test using a JVM-starting fixture is marked for it."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        unmarked = []
        for item in items:
            parts = item.path.relative_to(REPO / "tests").parts if item.path.is_relative_to(REPO / "tests") else ()
            if parts and parts[0] in TIER_FOLDERS and item.get_closest_marker(parts[0]) is None:
                unmarked.append(item.nodeid)
            for fixture, marker in BOUND_FIXTURES.items():
                if fixture in getattr(item, "fixturenames", ()):
                    item.add_marker(marker)
        lanes.assign_groups(items, REPO / "tests")
        if unmarked:
            raise pytest.UsageError(
                f"{len(unmarked)} test(s) lack the marker of their folder (tests/integration: "
                f"`pytestmark = pytest.mark.integration`, likewise dags, e2e, stack, bench): {', '.join(unmarked[:10])}"
            )


class _NoLeakedThreads:
    """A non-daemon thread a test started and left running (a consumer retrying for ever, an executor
    never shut down) keeps the interpreter alive past the run: the test that leaked it fails, naming it.
    Threads that session- or module-scoped fixtures start live as long as their fixture and are not
    counted; a leaked thread gets a few seconds to finish before it is called a leak."""

    GRACE_S = 5.0

    def __init__(self) -> None:
        self._before: dict[str, set[threading.Thread]] = {}

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        self._before[item.nodeid] = set(threading.enumerate())
        return (yield)

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Iterator[None]:
        result = yield
        before = self._before.pop(item.nodeid, None)
        if before is None:
            return result
        deadline = time.monotonic() + self.GRACE_S
        leaked = self._leaked(before)
        while leaked and time.monotonic() < deadline:
            leaked[0].join(max(deadline - time.monotonic(), 0))
            leaked = self._leaked(before)
        if leaked:
            names = ", ".join(sorted(t.name for t in leaked))
            pytest.fail(f"{item.nodeid} left {len(leaked)} non-daemon thread(s) running: {names}", pytrace=False)
        return result

    @staticmethod
    def _leaked(before: set[threading.Thread]) -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t not in before and _lingers(t)]


def _lingers(thread: threading.Thread) -> bool:
    """A live non-daemon thread that would keep the interpreter from exiting. An executor's worker
    (asgiref's shared sync_to_async executor, for one) is not: `concurrent.futures` wakes and joins
    its idle workers at exit."""
    idle_worker = getattr(thread, "_target", None) is futures_thread._worker
    return thread.is_alive() and not thread.daemon and not idle_worker


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_TruthfulMarkers(), "kafka-ops-truthful-markers")
    config.pluginmanager.register(_NoLeakedThreads(), "kafka-ops-no-leaked-threads")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Note where each session sandbox is last needed (after `-m`/`-k` deselected tests), instead of
    leaving it idle beside the rest of the run (unit tests need none):
    - in one process, after the last test of the folder holding its last user, when the module- and
      package-scoped fixtures built on it are gone too;
    - in an xdist worker, after the last user of each group (`lanes`): a group runs whole in one
      worker, and what the worker gets next is not known here. A later test that needs the sandbox
      again starts it again (`pytest_runtest_setup`)."""
    if lanes.worker() is not None and config.getvalue("loadgroup"):
        lanes.check_grouped(items)  # after xdist's own hook has added each group to its node ids
    _LAST_USERS.clear()
    for name in SESSION_SANDBOXES:
        users = [i for i, item in enumerate(items) if name in getattr(item, "fixturenames", ())]
        if not users:
            continue
        by_group = {lanes.group(items[i]): i for i in users}  # each group's last user
        lasts = [users[-1]] if lanes.worker() is None else list(by_group.values())
        _LAST_USERS[name] = {items[_end_of_folder(items, i)].nodeid for i in lasts}


def _end_of_folder(items: list[pytest.Item], last: int) -> int:
    """The last item after `last` of its folder (and of its group) in a row: where what a folder's module-
    and package-scoped fixtures built on a session sandbox are certainly torn down."""
    end = last
    while (
        end + 1 < len(items)
        and items[end + 1].path.parent == items[last].path.parent
        and lanes.group(items[end + 1]) == lanes.group(items[last])
    ):
        end += 1
    return end


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    for name in [n for n in _STOPPED if n in getattr(item, "fixturenames", ())]:
        cluster = _STOPPED.pop(name)
        cluster.start()  # same ports, a new root: the session fixture's value holds again
        _RUNNING[name] = cluster


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    if _SPARK and "spark" in getattr(item, "fixturenames", ()):
        _release_spark(_SPARK[0])
    for name, lasts in _LAST_USERS.items():
        if item.nodeid in lasts and name in _RUNNING:
            cluster = _RUNNING.pop(name)
            cluster.stop()  # the fixture's own stop at the end of the session is then a no-op
            _STOPPED[name] = cluster


@pytest.fixture(scope="session")
def sandbox() -> Iterator[SandboxCluster]:
    """ZooKeeper + 3 Kafka 3.9 brokers (racks a/b/c), each serving its JMX gauges through the Prometheus
    JMX exporter agent; always torn down, even on failure (after the last test that uses it)."""
    cluster = SandboxCluster(metrics_agent=True)
    cluster.start()
    _RUNNING["sandbox"] = cluster
    try:
        yield cluster
    finally:
        _RUNNING.pop("sandbox", None)
        _STOPPED.pop("sandbox", None)
        cluster.stop()


@pytest.fixture
def healthy_sandbox(sandbox: SandboxCluster) -> SandboxCluster:
    """The session sandbox, with every broker running and no partition under-replicated."""
    sandbox.start_zookeeper()
    for broker_id in sandbox.broker_ids():
        if not sandbox.broker_running(broker_id):
            sandbox.start_broker(broker_id)
    sandbox.wait_healthy(180)
    return sandbox


@pytest.fixture(scope="session")
def kraft_sandbox() -> Iterator[KRaftSandbox]:
    """3 KRaft controllers + 3 Kafka 4 brokers (racks a/b/c), the brokers with the JMX exporter agent; started
    only by tests that use it, always torn down (after the last test that uses it)."""
    cluster = KRaftSandbox(metrics_agent=True)
    cluster.start()
    _RUNNING["kraft_sandbox"] = cluster
    try:
        yield cluster
    finally:
        _RUNNING.pop("kraft_sandbox", None)
        _STOPPED.pop("kraft_sandbox", None)
        cluster.stop()


@pytest.fixture
def healthy_kraft_sandbox(kraft_sandbox: KRaftSandbox) -> KRaftSandbox:
    """The session KRaft sandbox with every controller and broker running and no partition under-replicated."""
    for controller_id in kraft_sandbox.controller_ids():
        if not kraft_sandbox.controller_running(controller_id):
            kraft_sandbox.start_controller(controller_id)
    for broker_id in kraft_sandbox.broker_ids():
        if not kraft_sandbox.broker_running(broker_id):
            kraft_sandbox.start_broker(broker_id)
    kraft_sandbox.wait_healthy(180)
    return kraft_sandbox


@pytest.fixture
def lake(tmp_path: Path) -> Lake:
    """A new lake in the default format (Delta), as a new installation's."""
    return open_lake(tmp_path / "lake")


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """One local Spark for the whole run (loopback only), stopped at the end."""
    from pyspark import SparkContext  # noqa: PLC0415 - only Spark tests pay for the JVM
    from pyspark.sql import SparkSession  # noqa: PLC0415

    from kafka_ops.jars.fetch import ensure_delta_spark_jars  # noqa: PLC0415
    from kafka_ops.lake.spark import DELTA_SPARK_CONF  # noqa: PLC0415

    builder = SparkSession.builder.config(map=DELTA_SPARK_CONF)  # reads Delta lakes too
    session = (
        builder.master("local[2]")
        .appName("kafka-ops-tests")
        .config("spark.jars", ",".join(str(j) for j in ensure_delta_spark_jars()))
        .config("spark.databricks.delta.snapshotPartitions", "2")  # a test table's Delta log is tiny
        # a test's tables hold a few rows: one partition after a shuffle, no adaptive re-planning and
        # no whole-stage code generation (compiling each query's Java took longer than running it)
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.default.parallelism", "1")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.codegen.wholeStage", "false")
        # the run's Spark tests share this driver: 1 GB (Spark's default) ran out in a CI run; with two
        # workers, each has its own driver for about half of them, and both must fit beside the clusters
        .config("spark.driver.memory", "3g" if lanes.worker() is None else "2g")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        # a driver that runs a thousand tests' analyses: its status store keeps only the latest jobs (without
        # the UI it still records every one), and unreferenced RDDs and shuffles are cleaned every 2 minutes
        # (Spark's default: 30). Without these a worker's 2 GB filled up: full GCs back to back, a test's
        # collect waiting for minutes
        .config("spark.ui.retainedJobs", "20")
        .config("spark.ui.retainedStages", "20")
        .config("spark.ui.retainedTasks", "500")
        .config("spark.sql.ui.retainedExecutions", "10")
        .config("spark.ui.dagGraph.retainedRootRDDs", "20")
        .config("spark.cleaner.periodicGC.interval", "2min")
        .getOrCreate()
    )
    _SPARK[:] = [session]
    # PySpark starts its JVM with a preexec_fn of its own, so it cannot be asked to die with us;
    # a watcher SIGKILLs it if this run ends without reaching the teardown (os._exit, a kill).
    jvm = session.sparkContext._gateway.proc  # type: ignore[union-attr]
    reaper = kill_when_gone(jvm.pid)
    try:
        yield session
    finally:
        _SPARK.clear()
        gateway = SparkContext._gateway
        session.stop()
        # stopping the session leaves its JVM running until every copy of its stdin's write end is closed,
        # and a child forked from this process may hold one: end it here (its py4j connections first, so
        # nothing at the process' exit talks to a JVM that is gone), not at the process' exit
        if gateway is not None:
            gateway.shutdown()
        jvm.kill()
        jvm.wait()
        SparkContext._gateway = SparkContext._jvm = None  # a later session starts a JVM of its own
        reaper.kill()
        reaper.wait()


_SPARK: list[SparkSession] = []
"""The session Spark, once a test started it."""


def _release_spark(session: SparkSession) -> None:
    """What a test's analyses leave in the session's driver: Delta's cache of table logs (one per table
    of every lake a test made), and the JVM objects only Python still referenced, which Spark's cleaner
    then drops with their RDDs and shuffles."""
    gc.collect()
    session._jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()  # type: ignore[union-attr]
