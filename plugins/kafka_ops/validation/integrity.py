"""Snapshot integrity: validate a committed snapshot batch before anything uses it, and remember the
verdict in the lake.

`validate_snapshot` runs the ZooKeeper-snapshot suites (`suites.SNAPSHOT_PARTITIONS`,
`suites.SNAPSHOT_SUMMARY`), `validate_group_snapshot` the group-collection ones (`GROUP_OFFSETS`,
`GROUP_SUMMARY`). Either way one row is published to the `snapshot_validations` commit log (batch
`<snapshot_id>.validation`): trusted or not, the failed expectations by name, the failing rows, and
the Data Docs page. `is_trusted` / `require_trusted` read it back: a batch never validated is not
trusted. The DAG path records an untrusted snapshot and carries on (a broken snapshot is a finding,
not a task failure); planners call `require_trusted`, and a caller that wants an exception at once
passes `raise_on_failure=True`.

Only summaries travel (`IntegrityResult.summary()` for XCom); the rows stay in the lake.

A broker that has just died is not registered, yet still in ISRs under live leaders until the
controller processes its departure (seconds; ZooKeeper session timeout first): Kafka's normal gap,
not a stale znode. `replicas_registered_or_reported` tolerates it when earlier snapshots show the
gap (see `frames.Departure`): the broker was registered in an earlier snapshot whose `zxid_start`
is at or above the partition state's `mzxid` (the controller has not rewritten that state since
the broker was alive), and it has been seen gone for at most `DEPARTED_BROKER_GRACE`. Still caught:
a state written after the broker was last seen registered, a broker gone longer than the grace
(the controller is not processing it: the refusal says to check the controller), and a first
snapshot with no history (the refusal says to wait for the next snapshot).
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc

from kafka_ops.errors import ConfigError, LakeError, SnapshotUntrusted
from kafka_ops.lake.schema import (
    COMMIT_TABLE,
    GROUP_COMMIT_TABLE,
    SNAPSHOT_VALIDATIONS,
    VALIDATION_COMMIT_TABLE,
)
from kafka_ops.lake.store import Batch, Lake
from kafka_ops.sources.log_dirs import REQUEST as LOAD_REQUEST
from kafka_ops.sources.probe import ISSUE_KIND as PROBE_KIND
from kafka_ops.validation import frames, plan_states
from kafka_ops.validation import suites as s
from kafka_ops.validation.lake_batches import (
    CommittedBatch,
    days,
    find_commit,
    find_day_commits,
    previous_commit,
    read_batch_table,
)
from kafka_ops.validation.runner import CheckOutcome, SuiteOutcome, SuiteRun, docs_site, plain, run_suites

log = logging.getLogger(__name__)

Source = Literal["snapshots", "group_snapshots"]
DEPARTED_BROKER_GRACE = timedelta(minutes=2)
"""How long after the first snapshot without a broker the controller may still be shrinking the
ISRs that name it (a few seconds on small clusters; tens on one with 100k partitions)."""
DETAIL_ROWS = 20
"""Failing rows kept per expectation in `details` (the count is always exact)."""


@dataclass(frozen=True)
class IntegrityThresholds:
    """How much a snapshot may be missing and still be trusted."""

    max_collection_issues: int = 0
    """ZooKeeper snapshots: znodes that failed to read or parse. Each is metadata the snapshot lacks
    (a topic, a partition state), and a plan computed without it could move the wrong replicas."""
    max_group_collection_issues: int = 0
    """Group collections: groups, offsets or end offsets that failed to collect. A leaderless
    partition's end offset counts too: raise this on clusters that run with offline partitions."""

    @classmethod
    def from_mapping(cls, values: dict[str, Any], where: str) -> IntegrityThresholds:
        """Defaults overridden by `values`; unknown keys and values that are not counts ≥ 0 are refused."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(f"{where}: unknown integrity threshold(s) {unknown} (known: {sorted(known)})")
        for key, value in values.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(f"{where}: integrity threshold {key!r} must be a whole number ≥ 0, got {value!r}")
        return cls(**values)

    def parameters(self) -> dict[str, float]:
        return {f.name: float(getattr(self, f.name)) for f in fields(self)}


@dataclass(frozen=True)
class Failure:
    """A failed expectation: its name, meaning and severity, how many rows fail, and the first ones
    (the suite's keys — topic, partition, group_id, snapshot_id — plus `problem` or the checked values)."""

    name: str
    severity: str
    meaning: str
    count: int
    rows: tuple[dict[str, Any], ...]

    def describe(self, examples: int = 3) -> str:
        shown = "; ".join(_row_text(r) for r in self.rows[:examples])
        more = f"; and {self.count - examples} more" if self.count > examples else ""
        return f"{self.name} ({self.count} failing: {shown}{more})"


@dataclass(frozen=True)
class IntegrityResult:
    cluster: str
    snapshot_id: str
    source: Source
    captured_at: datetime
    validated_at: datetime
    failures: tuple[Failure, ...]
    observed: dict[str, Any]
    """What the validation saw besides the failures (counts, epochs, unregistered replica brokers)."""
    data_docs: str | None
    """Index of the cluster's Data Docs site (None when none was built)."""
    pages: dict[str, str] = field(default_factory=dict)
    """Data Docs page of each suite run on this batch."""
    seconds: float = 0.0

    @property
    def trusted(self) -> bool:
        return not self.failures

    @property
    def failed(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.failures)

    @property
    def page(self) -> str | None:
        """The page to open first: the first suite with a failure, else the first suite."""
        failing = [suite for suite, page in self.pages.items() if any(f.name in _names(suite) for f in self.failures)]
        chosen = failing or list(self.pages)
        return self.pages[chosen[0]] if chosen else None

    def message(self) -> str:
        if self.trusted:
            return f"{self.source} batch {self.snapshot_id} of cluster {self.cluster} passed integrity validation"
        docs = f" (Data Docs: {self.page})" if self.page else ""
        return "failed " + ", ".join(f.describe() for f in self.failures) + docs

    def summary(self) -> dict[str, Any]:
        """Headline figures (the XCom payload: no rows)."""
        return {
            "cluster": self.cluster,
            "snapshot_id": self.snapshot_id,
            "source": self.source,
            "trusted": self.trusted,
            "failed": {f.name: f.count for f in self.failures},
            "data_docs": self.page,
            "data_docs_index": self.data_docs,
            "seconds": round(self.seconds, 3),
        }


# -- validating -------------------------------------------------------------------------------------


def validate_snapshot(
    lake: Lake,
    cluster: str,
    snapshot_id: str,
    previous_snapshot_id: str | None = None,
    thresholds: IntegrityThresholds | None = None,
    *,
    validated_at: datetime | None = None,
    raise_on_failure: bool = False,
    data_docs: bool = True,
    departed_grace: timedelta = DEPARTED_BROKER_GRACE,
) -> IntegrityResult:
    """Validate the committed ZooKeeper snapshot `snapshot_id` and record the verdict.

    The controller epoch is compared with `previous_snapshot_id`'s, by default the snapshot committed
    just before this one (none for the first). Brokers that left within `departed_grace` are looked
    up in the earlier snapshots (module doc). Raises `LakeError` when either snapshot is not
    committed, and `SnapshotUntrusted` after recording a failure if `raise_on_failure`.
    """
    started = time.perf_counter()
    limits = thresholds or IntegrityThresholds()
    batch = _committed(lake, COMMIT_TABLE, cluster, snapshot_id)
    if previous_snapshot_id is not None:
        previous: dict[str, Any] | None = _committed(lake, COMMIT_TABLE, cluster, previous_snapshot_id).commit
    else:
        previous = previous_commit(lake, COMMIT_TABLE, batch)
    partitions = _table(lake, batch, "partitions")
    brokers = _table(lake, batch, "brokers")
    issues = _table(lake, batch, "collection_issues")
    departed = _departures(lake, batch, _hidden(partitions, brokers), departed_grace)
    partition_frame = frames.snapshot_partitions(partitions, brokers, _table(lake, batch, "reassignments"), departed)
    # mixed replication factors a cancelled or failed kafka-ops plan left are not corruption
    left_by_plans = plan_states.left_by_plans(lake, cluster, partitions)
    partition_frame = plan_states.excuse(partition_frame, left_by_plans)
    # the load (DescribeLogDirs) is not the metadata: a broker that cannot describe its log dirs, or a
    # failed dir, must not make the snapshot untrusted, or a plan to move off a broker whose disk failed
    # would be refused exactly when it is needed; the load detectors and planner see what is missing.
    # Nor is the end-to-end probe: a probe topic missing, or a broker it cannot reach, is its own finding
    is_load = pc.or_(pc.starts_with(issues.column("path"), LOAD_REQUEST), pc.equal(issues.column("kind"), PROBE_KIND))
    load_issues, issues = issues.filter(is_load), issues.filter(pc.invert(is_load))
    summary_frame = frames.snapshot_summary(batch.commit, previous, issues.num_rows)
    runs = [
        SuiteRun(s.SNAPSHOT_PARTITIONS, partition_frame, snapshot_id),
        *_load_runs(lake, batch, partitions, brokers),
        SuiteRun(s.SNAPSHOT_SUMMARY, summary_frame, snapshot_id),
    ]
    observed = {
        "partitions": partitions.num_rows,
        "registered_brokers": sorted(brokers.column("broker_id").to_pylist()),
        "unregistered_replica_brokers": _unregistered(partition_frame, brokers),
        "controller_epoch": batch.commit.get("controller_epoch"),
        "previous_snapshot_id": previous["snapshot_id"] if previous else None,
        "previous_controller_epoch": plain(summary_frame["previous_controller_epoch"].iloc[0]),
        "collection_issues": issues.num_rows,
        "collection_issue_examples": [f"{r['path']}: {r['problem']}" for r in issues.slice(0, 5).to_pylist()],
        "load_collection_issues": [f"{r['path']}: {r['problem']}" for r in load_issues.slice(0, 5).to_pylist()],
        "left_by_plans": left_by_plans,
        "departed_brokers_in_isr": {
            str(b): {"last_seen": d.last_seen, "gone_since": d.gone_since.isoformat(), "transient": d.transient}
            for b, d in sorted(departed.items())
        },
    }
    return _finish(
        lake=lake, batch=batch, source="snapshots", runs=runs, limits=limits, observed=observed,
        validated_at=validated_at, raise_on_failure=raise_on_failure, data_docs=data_docs, started=started,
    )  # fmt: skip


def validate_group_snapshot(
    lake: Lake,
    cluster: str,
    snapshot_id: str,
    thresholds: IntegrityThresholds | None = None,
    *,
    validated_at: datetime | None = None,
    raise_on_failure: bool = False,
    data_docs: bool = True,
) -> IntegrityResult:
    """Validate the committed group collection `snapshot_id` (commit log `group_snapshots`) and
    record the verdict; raises like `validate_snapshot`."""
    started = time.perf_counter()
    limits = thresholds or IntegrityThresholds()
    batch = _committed(lake, GROUP_COMMIT_TABLE, cluster, snapshot_id)
    offsets = _table(lake, batch, "group_offsets")
    issues = _table(lake, batch, "group_collection_issues")
    runs = [
        SuiteRun(s.GROUP_OFFSETS, frames.group_offsets(offsets), snapshot_id),
        SuiteRun(s.GROUP_SUMMARY, frames.group_summary(batch.commit, issues.num_rows), snapshot_id),
    ]
    observed = {
        "offsets": offsets.num_rows,
        "groups": len(set(offsets.column("group_id").to_pylist())),
        "committed_above_end_flagged": sum(bool(v) for v in offsets.column("committed_above_end").to_pylist()),
        "collection_issues": issues.num_rows,
        "collection_issue_examples": [
            f"{r['kind']} ({r['group_id'] or 'cluster'}): {r['problem']}" for r in issues.slice(0, 5).to_pylist()
        ],
    }
    return _finish(
        lake=lake, batch=batch, source="group_snapshots", runs=runs, limits=limits, observed=observed,
        validated_at=validated_at, raise_on_failure=raise_on_failure, data_docs=data_docs, started=started,
    )  # fmt: skip


def _finish(
    *,
    lake: Lake,
    batch: CommittedBatch,
    source: Source,
    runs: list[SuiteRun],
    limits: IntegrityThresholds,
    observed: dict[str, Any],
    validated_at: datetime | None,
    raise_on_failure: bool,
    data_docs: bool,
    started: float,
) -> IntegrityResult:
    at = (validated_at or datetime.now(UTC)).astimezone(UTC)
    site = docs_site(lake, batch.cluster) if data_docs else None
    outcomes = run_suites(runs, limits.parameters(), run_time=at, site=site)
    result = IntegrityResult(
        cluster=batch.cluster,
        snapshot_id=batch.batch_id,
        source=source,
        captured_at=batch.captured_at,
        validated_at=at,
        failures=tuple(_failure(c) for o in outcomes for c in o.failed()),
        observed=observed,
        data_docs=site.index if site is not None else None,
        pages={o.spec.name: o.page for o in outcomes if o.page},
        seconds=time.perf_counter() - started,
    )
    lake.publish(_validation_batch(result, outcomes))
    if result.trusted:
        log.info("%s %s of %s is trusted (%.2f s)", source, result.snapshot_id, result.cluster, result.seconds)
    else:
        log.warning("%s %s of %s is UNTRUSTED: %s", source, result.snapshot_id, result.cluster, result.message())
        if raise_on_failure:
            raise SnapshotUntrusted(result.cluster, result.snapshot_id, result.failed, result.message())
    return result


def _committed(lake: Lake, commit_table: str, cluster: str, snapshot_id: str) -> CommittedBatch:
    batch = find_commit(lake, commit_table, cluster, snapshot_id)
    if batch is None:
        raise LakeError(f"{snapshot_id!r} of cluster {cluster!r} is not committed in {commit_table!r} of {lake.root}")
    return batch


def _load_runs(lake: Lake, batch: CommittedBatch, partitions: pa.Table, brokers: pa.Table) -> list[SuiteRun]:
    """The log dirs and replica sizes suites; none for a batch written before those tables existed."""
    log_dirs = read_batch_table(lake, batch, "log_dirs")
    sizes = read_batch_table(lake, batch, "replica_sizes")
    if log_dirs is None or sizes is None:
        return []
    snapshot_id = str(batch.commit["snapshot_id"])
    return [
        SuiteRun(s.SNAPSHOT_LOG_DIRS, frames.snapshot_log_dirs(log_dirs, brokers), snapshot_id),
        SuiteRun(s.SNAPSHOT_REPLICA_SIZES, frames.snapshot_replica_sizes(sizes, partitions, brokers), snapshot_id),
    ]


def _table(lake: Lake, batch: CommittedBatch, table: str) -> pa.Table:
    data = read_batch_table(lake, batch, table)
    if data is None:
        raise LakeError(
            f"committed batch {batch.batch_id} of cluster {batch.cluster} has no {table!r} table "
            f"(dt={batch.dt}): the lake is damaged; re-collect the snapshot"
        )
    return data


def _hidden(partitions: pa.Table, brokers: pa.Table) -> set[int]:
    """Brokers counted in sync under a live leader although not registered, in any partition."""
    registered = set(brokers.column("broker_id").to_pylist())
    rows = partitions.select(["replicas", "isr", "leader", "has_state"]).to_pylist()
    return {
        b
        for r in rows
        for b in frames.hidden_brokers(
            r["replicas"] or [], r["isr"] or [], r["leader"], registered, has_state=bool(r["has_state"])
        )
    }


def _departures(lake: Lake, batch: CommittedBatch, hidden: set[int], grace: timedelta) -> dict[int, frames.Departure]:
    """For each broker of `hidden`, the latest earlier snapshot of the same Kafka cluster that had it
    registered, looked for while the snapshots without it are at most `grace` older than `batch`."""
    now = batch.captured_at
    gone_since = dict.fromkeys(hidden, now)
    found: dict[int, frames.Departure] = {}
    cluster_id = batch.commit.get("kafka_cluster_id")
    for row, dt in _earlier_commits(lake, batch) if hidden else ():
        if cluster_id and row.get("kafka_cluster_id") and row["kafka_cluster_id"] != cluster_id:
            break  # the chroot was recreated: an earlier cluster's brokers say nothing
        earlier = CommittedBatch(batch.cluster, COMMIT_TABLE, str(row["snapshot_id"]), dt, row)
        registered = set(_table(lake, earlier, "brokers").column("broker_id").to_pylist())
        for b in sorted(hidden - set(found)):
            if b in registered:
                zxid = int(row["zxid_start"]) if row.get("zxid_start") else None  # 0: not recorded
                note = (
                    f"snapshot {row['snapshot_id']} last saw broker {b} registered but recorded no ZooKeeper "
                    "position to compare this state with: wait for the next snapshot"
                )
                found[b] = frames.Departure(b, str(row["snapshot_id"]), zxid, gone_since[b], True, note)
            else:
                gone_since[b] = row["captured_at"]
        if set(found) == hidden or row["captured_at"] < now - grace:
            break
    for b in sorted(hidden - set(found)):
        if gone_since[b] < now:
            gone_for = (now - gone_since[b]).total_seconds()
            note = (
                f"broker {b} has not been registered since {gone_since[b]:%Y-%m-%d %H:%M:%S} UTC ({gone_for:.0f} s, "
                f"longer than the {grace.total_seconds():.0f} s the controller may take) and the controller has still "
                "not removed it from this ISR: check the controller (its log, controller_health); snapshots are "
                "trusted again once the ISR no longer names it"
            )
        else:
            note = (
                f"no earlier snapshot shows when broker {b} left: if it just died, the controller removes it "
                "from the ISR within seconds: wait for the next snapshot"
            )
        found[b] = frames.Departure(b, None, None, gone_since[b], False, note)
    return found


def _earlier_commits(lake: Lake, batch: CommittedBatch) -> Iterator[tuple[dict[str, Any], str]]:
    """The commit rows before `batch` in its log, newest first, with their day partition."""
    key = (batch.captured_at, str(batch.commit["snapshot_id"]))
    for dt in days(lake, batch.commit_table, batch.cluster):
        if dt > batch.dt:
            continue
        day = find_day_commits(lake, batch.commit_table, batch.cluster, dt)
        earlier = sorted(
            (r for r in day if (r["captured_at"], r["snapshot_id"]) < key),
            key=lambda r: (r["captured_at"], r["snapshot_id"]),
            reverse=True,
        )
        for row in earlier:
            yield row, dt


def _unregistered(partition_frame: Any, brokers: pa.Table) -> dict[str, int]:
    """Replica brokers that are not registered, with how many partitions name them (reported, not a
    failure: a down broker's replicas stay assigned)."""
    registered = set(brokers.column("broker_id").to_pylist())
    counts: Counter[int] = Counter()
    for replicas in partition_frame["replicas"]:
        counts.update({b for b in replicas if b not in registered and b >= 0})
    return {str(b): n for b, n in sorted(counts.items())}


def _failure(outcome: CheckOutcome) -> Failure:
    check = outcome.check
    rows = []
    for row in outcome.rows[:DETAIL_ROWS]:
        if check.kind == "all_ok":  # the check column's sentence, under a name every row shares
            rows.append({**{k: v for k, v in row.items() if k != check.name}, "problem": row.get(check.name)})
        else:
            rows.append(row)
    return Failure(check.name, check.severity, check.meaning, outcome.count, tuple(rows))


def _names(suite: str) -> set[str]:
    return {c.name for c in s.SUITES[suite].checks} if suite in s.SUITES else set()


def _row_text(row: dict[str, Any]) -> str:
    where = []
    if row.get("group_id") is not None:
        where.append(f"group {row['group_id']}")
    if row.get("topic") is not None:
        where.append(f"{row['topic']}-{row.get('partition')}")
    what = row.get("problem")
    if what is None:
        what = ", ".join(f"{k}={v}" for k, v in row.items() if k not in {"topic", "partition", "group_id"})
    return f"{' '.join(where)}: {what}" if where else str(what)


# -- the record -------------------------------------------------------------------------------------


def _validation_batch(result: IntegrityResult, outcomes: list[SuiteOutcome]) -> Batch:
    details = {
        "failed": {
            f.name: {"severity": f.severity, "meaning": f.meaning, "count": f.count, "rows": list(f.rows)}
            for f in result.failures
        },
        "checked": [c.check.name for o in outcomes for c in o.checks],
        "observed": result.observed,
        "pages": result.pages,
        "seconds": round(result.seconds, 3),
    }
    row = {
        "snapshot_id": result.snapshot_id,
        "captured_at": result.captured_at,
        "validated_at": result.validated_at,
        "source": result.source,
        "trusted": result.trusted,
        "failed": list(result.failed),
        "details": json.dumps(details, sort_keys=True, default=str),
        "data_docs": result.page,
        "suite_version": s.SUITE_VERSION,
    }
    table = pa.Table.from_pylist([row], schema=SNAPSHOT_VALIDATIONS)
    return Batch(
        f"{result.snapshot_id}.validation",
        result.cluster,
        result.captured_at,
        {VALIDATION_COMMIT_TABLE: table},
        VALIDATION_COMMIT_TABLE,
    )


def validation_of(lake: Lake, cluster: str, snapshot_id: str) -> dict[str, Any] | None:
    """The recorded validation of batch `snapshot_id` (ZooKeeper or group), or None if never validated."""
    batch = find_commit(lake, VALIDATION_COMMIT_TABLE, cluster, f"{snapshot_id}.validation")
    return dict(batch.commit) if batch is not None else None


def is_trusted(lake: Lake, cluster: str, snapshot_id: str) -> bool:
    """True only when `snapshot_id` was validated and passed every integrity expectation."""
    row = validation_of(lake, cluster, snapshot_id)
    return bool(row is not None and row["trusted"])


def require_trusted(lake: Lake, cluster: str, snapshot_id: str) -> None:
    """Raise `SnapshotUntrusted` unless `snapshot_id` was validated and trusted; the message names
    the failed expectations and the Data Docs page."""
    row = validation_of(lake, cluster, snapshot_id)
    if row is None:
        raise SnapshotUntrusted(
            cluster,
            snapshot_id,
            (),
            f"it was never validated (no row in {VALIDATION_COMMIT_TABLE}): run the integrity validation first",
        )
    if row["trusted"]:
        return
    failed = tuple(row["failed"] or ())
    details = json.loads(row["details"] or "{}").get("failed", {})
    parts = []
    for name in failed:
        info = details.get(name, {})
        rows = info.get("rows") or []
        example = f", e.g. {_row_text(rows[0])}" if rows else ""
        parts.append(f"{name} ({info.get('count', '?')} failing{example})")
    docs = f" (Data Docs: {row['data_docs']})" if row.get("data_docs") else ""
    raise SnapshotUntrusted(cluster, snapshot_id, failed, "failed " + ", ".join(parts) + docs)
