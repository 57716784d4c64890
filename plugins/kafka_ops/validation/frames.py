"""The pandas frames the suites validate: lake rows plus one column per list-spanning rule.

A derived column is named after its check (`suites.Check.name`) and holds `OK`, or one sentence
saying what is wrong with that row and naming the brokers involved; the suite expects `OK`
everywhere. Computing the rule here, row by row, keeps the failing rows' keys (topic, partition,
broker, group) in the validation result and in Data Docs, which a set-valued rule expressed across
list columns inside Great Expectations would lose.

Pure functions of pyarrow tables: no lake, no clock, no Great Expectations.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pandas as pd
import pyarrow as pa

from kafka_ops.problems import load, migration, partitions, quorum, retention
from kafka_ops.problems import transactions as open_transactions
from kafka_ops.validation import suites as s
from kafka_ops.validation.suites import OK


def _ints(values: Iterable[Any] | None) -> list[int]:
    return [int(v) for v in values] if values is not None else []


# -- ZooKeeper snapshot -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Departure:
    """What earlier snapshots say about a broker that is not registered in this one but still in an
    ISR under a live leader (built by `integrity`, which reads them).

    Kafka's normal gap: the broker's ZooKeeper session expires (its `/brokers/ids/<id>` goes), and
    only then does the controller shrink the ISRs that name it, partition by partition. A state znode
    last written before the broker left (`state_mzxid` ≤ `last_seen_zxid`) while the broker has been
    gone for less than the grace (`transient`) is that gap, not a stale znode."""

    broker_id: int
    last_seen: str | None
    """The latest earlier snapshot in which it was registered (None: none within reach)."""
    last_seen_zxid: int | None
    """That snapshot's `zxid_start`: ZooKeeper had not seen the broker leave by then."""
    gone_since: datetime
    """Capture time of the first snapshot after `last_seen` without it."""
    transient: bool
    """Gone for less than the grace: the controller may not have processed its departure yet."""
    note: str
    """Why it is not transient, or what to wait for: the refusal's advice."""

    def explains(self, state_mzxid: int | None) -> bool:
        """The controller has not rewritten this state since the broker was last seen registered."""
        return (
            self.transient
            and self.last_seen_zxid is not None
            and state_mzxid is not None
            and state_mzxid <= self.last_seen_zxid
        )


def snapshot_partitions(
    partitions: pa.Table, brokers: pa.Table, reassignments: pa.Table, departed: Mapping[int, Departure] | None = None
) -> pd.DataFrame:
    """One row per partition of the snapshot: topic, partition, leader, replicas, isr, has_state and
    the `SNAPSHOT_PARTITIONS` check columns.

    Partitions without a state znode (`has_state` false) have no leader or ISR to judge: only their
    replica list is checked (their missing state is a collection issue, counted elsewhere). A broker
    in `departed` whose departure explains a partition's ISR (`Departure.explains`) is not held
    against it (`replicas_registered_or_reported`).
    """
    registered = {int(b) for b in brokers.column("broker_id").to_pylist()}
    gone = departed or {}
    rows = partitions.select(
        ["topic", "partition", "replicas", "adding_replicas", "removing_replicas", "has_state", "leader", "isr",
         "state_mzxid"]
    ).to_pylist()  # fmt: skip
    moving = {r["topic"] for r in reassignments.select(["topic"]).to_pylist()}
    moving |= {r["topic"] for r in rows if r["adding_replicas"] or r["removing_replicas"]}
    rf_rule = _replication_factor_rule(rows, moving)
    out = []
    for r in rows:
        replicas, isr = _ints(r["replicas"]), _ints(r["isr"])
        leader = r["leader"] if r["has_state"] else None
        out.append(
            {
                "topic": r["topic"],
                "partition": int(r["partition"]),
                "leader": leader,
                "replicas": replicas,
                "isr": isr if r["has_state"] else None,
                "has_state": bool(r["has_state"]),
                s.ISR_SUBSET_OF_REPLICAS.name: _isr_subset(replicas, isr) if r["has_state"] else OK,
                s.LEADER_IN_ISR.name: _leader_in_isr(leader, isr) if r["has_state"] else OK,
                s.NO_DUPLICATE_REPLICAS.name: _no_duplicates(replicas, isr),
                s.ONE_REPLICATION_FACTOR_PER_TOPIC.name: rf_rule(r["topic"], len(replicas)),
                s.REPLICAS_REGISTERED_OR_REPORTED.name: _registered_or_reported(
                    replicas,
                    isr,
                    leader,
                    registered,
                    has_state=bool(r["has_state"]),
                    departed=gone,
                    state_mzxid=r["state_mzxid"],
                ),
            }
        )
    return _frame(out, ["topic", "partition", "leader", "replicas", "isr", "has_state"], s.SNAPSHOT_PARTITIONS)


def _isr_subset(replicas: list[int], isr: list[int]) -> str:
    outside = sorted(set(isr) - set(replicas))
    if not outside:
        return OK
    return f"ISR {isr} has broker {_join(outside)}, which is not among the replicas {replicas}"


def _leader_in_isr(leader: int | None, isr: list[int]) -> str:
    if leader is None or leader == -1 or leader in isr:
        return OK
    return f"leader {leader} is not in the ISR {isr}"


def _no_duplicates(replicas: list[int], isr: list[int]) -> str:
    problems = []
    for what, ids in (("replicas", replicas), ("ISR", isr)):
        if len(set(ids)) == len(ids):
            continue
        twice = sorted(b for b, n in Counter(ids).items() if n > 1)
        if twice:
            problems.append(f"{what} {ids} name broker {_join(twice)} more than once")
    return "; ".join(problems) or OK


def _replication_factor_rule(rows: Sequence[Mapping[str, Any]], moving: set[str]) -> Any:
    """(topic, rf) → check value: a partition whose RF differs from its topic's most common RF fails
    (ties: the higher RF counts as the topic's); topics with a reassignment in flight are exempt."""
    counts: dict[str, Counter[int]] = {}
    for r in rows:
        if r["topic"] not in moving:
            counts.setdefault(r["topic"], Counter())[len(r["replicas"] or ())] += 1
    usual = {t: max(c.items(), key=lambda kv: (kv[1], kv[0]))[0] for t, c in counts.items()}

    def rule(topic: str, rf: int) -> str:
        if topic in moving or rf == usual[topic]:
            return OK
        c = counts[topic]
        return (
            f"{rf} replica{'' if rf == 1 else 's'}, while {c[usual[topic]]} of the {sum(c.values())} partitions "
            f"of {topic} have {usual[topic]} (no reassignment in flight)"
        )

    return rule


def hidden_brokers(
    replicas: Sequence[int], isr: Sequence[int], leader: int | None, registered: set[int], *, has_state: bool
) -> list[int]:
    """Replicas counted in sync under a live leader although not registered."""
    if not has_state or leader is None or leader == -1 or leader not in registered:
        return []  # no state, or offline: the detectors report the partition either way
    return sorted({r for r in replicas if r not in registered and r in isr})


def _registered_or_reported(
    replicas: list[int],
    isr: list[int],
    leader: int | None,
    registered: set[int],
    *,
    has_state: bool,
    departed: Mapping[int, Departure],
    state_mzxid: int | None,
) -> str:
    invalid = sorted({r for r in replicas if r < 0})
    if invalid:
        return f"replica id {_join(invalid)} is not a broker id (replicas {replicas})"
    hidden = hidden_brokers(replicas, isr, leader, registered, has_state=has_state)
    unexplained = [b for b in hidden if b not in departed or not departed[b].explains(state_mzxid)]
    if not unexplained:
        return OK  # none, or the controller has not yet shrunk the ISR of a broker that just left
    problem = f"broker {_join(unexplained)} is not registered, yet in the ISR {isr} under live leader {leader}"
    first = departed.get(unexplained[0])
    if first is None:
        return problem
    if first.transient and first.last_seen_zxid is not None:
        return (
            f"{problem}; its state was written after broker {first.broker_id} was last seen registered "
            f"(snapshot {first.last_seen}): a stale or hand-written state znode, not the controller's lag"
        )
    return f"{problem}; {first.note}"


def snapshot_log_dirs(log_dirs: pa.Table, brokers: pa.Table) -> pd.DataFrame:
    """One row per log dir: broker_id, log_dir, error, total_bytes, usable_bytes and the
    `SNAPSHOT_LOG_DIRS` check column."""
    registered = {int(b) for b in brokers.column("broker_id").to_pylist()}
    frame = log_dirs.select(["broker_id", "log_dir", "error", "total_bytes", "usable_bytes"]).to_pandas(
        types_mapper={pa.int64(): pd.Int64Dtype(), pa.int32(): pd.Int64Dtype()}.get
    )
    frame[s.LOG_DIR_OF_A_SERVING_BROKER.name] = [
        OK if int(b) in registered else f"broker {b} is not a broker of this snapshot" for b in frame["broker_id"]
    ]
    return frame


def snapshot_replica_sizes(replica_sizes: pa.Table, partitions: pa.Table, brokers: pa.Table) -> pd.DataFrame:
    """One row per replica size: topic, partition, broker_id, log_dir, size_bytes, is_future and the
    `SNAPSHOT_REPLICA_SIZES` check column (see `REPLICA_SIZE_OF_AN_ASSIGNED_REPLICA`)."""
    registered = {int(b) for b in brokers.column("broker_id").to_pylist()}
    assigned = {
        (r["topic"], int(r["partition"])): set(_ints(r["replicas"])) | set(_ints(r["adding_replicas"]))
        for r in partitions.select(["topic", "partition", "replicas", "adding_replicas"]).to_pylist()
    }
    frame = replica_sizes.select(["topic", "partition", "broker_id", "log_dir", "size_bytes", "is_future"]).to_pandas(
        types_mapper={pa.int64(): pd.Int64Dtype(), pa.int32(): pd.Int64Dtype()}.get
    )
    frame[s.REPLICA_SIZE_OF_AN_ASSIGNED_REPLICA.name] = [
        _assigned_replica(topic, int(partition), int(broker), assigned, registered)
        for topic, partition, broker in zip(frame["topic"], frame["partition"], frame["broker_id"], strict=True)
    ]
    return frame


def _assigned_replica(
    topic: str, partition: int, broker: int, assigned: Mapping[tuple[str, int], set[int]], registered: set[int]
) -> str:
    replicas = assigned.get((topic, partition))
    if replicas is None:
        return f"{topic}-{partition} on broker {broker} is not a partition of this snapshot"
    if broker not in replicas:
        return f"broker {broker} holds {topic}-{partition}, whose replicas are {sorted(replicas)}"
    if broker not in registered:
        return f"broker {broker} is not a broker of this snapshot"
    return OK


def snapshot_summary(
    commit: Mapping[str, Any], previous: Mapping[str, Any] | None, collection_issues: int
) -> pd.DataFrame:
    """One row: the snapshot's controller epoch against the previous snapshot's, and its count of
    collection issues. A previous snapshot of another Kafka cluster (both cluster ids known and
    different: the chroot was recreated) is no comparison: its epoch is left null."""
    same = previous is not None and not (
        previous.get("kafka_cluster_id") and commit.get("kafka_cluster_id")
        and previous["kafka_cluster_id"] != commit["kafka_cluster_id"]
    )  # fmt: skip
    row = {
        "snapshot_id": commit["snapshot_id"],
        "controller_epoch": commit.get("controller_epoch"),
        "previous_snapshot_id": previous["snapshot_id"] if previous is not None else None,
        "previous_controller_epoch": previous.get("controller_epoch") if previous is not None and same else None,
        "collection_issues": collection_issues,
    }
    frame = pd.DataFrame([row])
    for column in ("controller_epoch", "previous_controller_epoch", "collection_issues"):
        frame[column] = frame[column].astype("Int64")
    return frame


# -- consumer-group collection ----------------------------------------------------------------------


def group_offsets(offsets: pa.Table) -> pd.DataFrame:
    """One row per group offset, with `end_offset_unless_flagged`: the end offset, or null where the
    row is flagged `committed_above_end` (such a commit is expected above the end)."""
    frame = offsets.select(
        ["group_id", "topic", "partition", "committed_offset", "end_offset", "committed_above_end"]
    ).to_pandas(types_mapper={pa.int64(): pd.Int64Dtype(), pa.int32(): pd.Int64Dtype()}.get)
    flagged = frame["committed_above_end"].fillna(False).astype(bool)
    frame["end_offset_unless_flagged"] = frame["end_offset"].mask(flagged)
    return frame


def group_summary(commit: Mapping[str, Any], collection_issues: int) -> pd.DataFrame:
    frame = pd.DataFrame([{"snapshot_id": commit["snapshot_id"], "collection_issues": collection_issues}])
    frame["collection_issues"] = frame["collection_issues"].astype("Int64")
    return frame


# -- health gates -----------------------------------------------------------------------------------


def isr_gates(isr_health: pa.Table) -> pd.DataFrame:
    """`isr_health` findings with the `GATE_PARTITIONS` check columns and `missing` (replicas out of
    the ISR)."""
    out = []
    for r in isr_health.to_pylist():
        replicas, isr = _ints(r["replicas"]), _ints(r["isr"])
        leader = r["leader"]
        lost = "no leader" if leader is None or leader == -1 else f"leader {leader} is not a registered broker"
        offline = f"offline, {lost}: replicas {replicas}, ISR {isr}"
        if len(isr) < (r["min_isr"] or 0):
            under = f"ISR {isr} holds {len(isr)}, min.insync.replicas is {r['min_isr']} ({_min_isr_source(r)})"
        else:
            under = f"no leader: ISR {isr} takes no writes (min.insync.replicas {r['min_isr']})"
        out.append(
            {
                "topic": r["topic"],
                "partition": int(r["partition"]),
                "leader": leader,
                "replicas": replicas,
                "isr": isr,
                "missing": [b for b in replicas if b not in isr],
                "min_isr": r["min_isr"],
                "status": r["status"],
                s.NO_OFFLINE_PARTITIONS.name: offline if partitions.FAILS[partitions.OFFLINE](r) else OK,
                s.NO_UNDER_MIN_ISR_PARTITIONS.name: under if partitions.FAILS[partitions.UNDER_MIN_ISR](r) else OK,
            }
        )
    columns = ["topic", "partition", "leader", "replicas", "isr", "missing", "min_isr", "status"]
    return _frame(out, columns, s.GATE_PARTITIONS)


def _min_isr_source(r: Mapping[str, Any]) -> str:
    """Where the partition's min ISR comes from (`isr_health.MIN_ISR_SOURCES`), in words."""
    source = r.get("min_isr_source")
    if source == "broker":
        return f"dynamic config of leader broker {r['leader']}"
    if source == "broker_default":
        return "cluster-wide dynamic broker default"
    if source == "static":
        return "assumed static server.properties value, setting min_insync_replicas_default"
    return str(source)


def leader_balance_gates(brokers: pa.Table) -> pd.DataFrame:
    """`leader_balance_brokers` with `imbalance_percent` = imbalance_ratio × 100."""
    frame = brokers.select(
        ["broker_id", "registered", "leaders", "preferred", "preferred_led_by_other", "imbalance_ratio"]
    ).to_pandas(types_mapper={pa.int64(): pd.Int64Dtype(), pa.int32(): pd.Int64Dtype()}.get)
    frame["imbalance_percent"] = frame["imbalance_ratio"].astype(float) * 100.0
    return frame


def controller_gates(controller_health: pa.Table) -> pd.DataFrame:
    columns = ["controller_id", "controller_epoch", "elections_last_hour", "elections_in_window", "last_change_at"]
    return controller_health.select(columns).to_pandas(
        types_mapper={pa.int64(): pd.Int64Dtype(), pa.int32(): pd.Int64Dtype()}.get
    )


def quorum_gates(quorum_health: pa.Table | None) -> pd.DataFrame:
    """`quorum_health` with the `GATE_QUORUM` check columns (its `problem` as the sentence); no rows
    for a ZooKeeper cluster (or an analysis from before the detector existed)."""
    out = []
    for r in quorum_health.to_pylist() if quorum_health is not None else []:
        problem = r.get("problem") or f"status {r['status']}"
        out.append(
            {
                "kind": r["kind"],
                "replica_id": r["replica_id"],
                "status": r["status"],
                "problem": r.get("problem"),
                "action": r.get("action"),
                "fenced_since": r.get("fenced_since"),
                **{name: problem if fails(r) else OK for name, fails in quorum.FAILS.items()},
            }
        )
    return _frame(out, ["kind", "replica_id", "status", "problem", "action", "fenced_since"], s.GATE_QUORUM)


def migration_gates(migration_health: pa.Table | None) -> pd.DataFrame:
    """`migration_health` with the `GATE_MIGRATION` check columns (its `problem` as the sentence); no rows
    for a cluster that is not migrating (or an analysis from before the detector existed)."""
    out = []
    for r in migration_health.to_pylist() if migration_health is not None else []:
        problem = r.get("problem") or f"status {r['status']}"
        out.append(
            {
                "subject": migration.subject(r),
                "status": r["status"],
                "problem": r.get("problem"),
                "action": r.get("action"),
                "since": migration.started(r),
                **{name: problem if fails(r) else OK for name, fails in migration.FAILS.items()},
            }
        )
    return _frame(out, ["subject", "status", "problem", "action", "since"], s.GATE_MIGRATION)


def group_gates(groups: pa.Table) -> pd.DataFrame:
    """`lag_status_groups` with the `GATE_GROUPS` check columns (the detector's `cause` as the
    sentence)."""
    out = []
    for r in groups.to_pylist():
        cause = r.get("cause") or f"status {r['status']}"
        out.append(
            {
                "group_id": r["group_id"],
                "state": r.get("state"),
                "status": r["status"],
                "total_lag": r.get("total_lag"),
                "max_lag": r.get("max_lag"),
                "max_lag_topic": r.get("max_lag_topic"),
                "max_lag_partition": r.get("max_lag_partition"),
                "cause": r.get("cause"),
                s.NO_GROUP_IN_ERR.name: f"ERR: {cause}" if r["status"] == "ERR" else OK,
                s.NO_GROUP_IN_WARN.name: f"WARN: {cause}" if r["status"] == "WARN" else OK,
            }
        )
    columns = ["group_id", "state", "status", "total_lag", "max_lag", "max_lag_topic", "max_lag_partition", "cause"]
    return _frame(out, columns, s.GATE_GROUPS)


def retention_gates(groups: pa.Table | None) -> pd.DataFrame:
    """`retention_risk_groups` (findings) with the `GATE_RETENTION` check columns (the catalogue's sentence about
    the group, `problems.retention.group_sentence`); no rows for an analysis from before the detector existed."""
    columns = ["group_id", "state", "records_lost", "lost_partitions", "lost_topic", "lost_partition", "lost_since",
               "at_risk_partitions", "eta_seconds", "eta_topic", "eta_partition", "eta_is_lower_bound",
               "severity"]  # fmt: skip
    out = []
    for r in groups.to_pylist() if groups is not None else []:
        sentence = retention.group_sentence(r)  # an alert lists it after the group: "group billing: lost ..."
        out.append({**{c: r.get(c) for c in columns},
                    **{name: sentence if fails(r) else OK for name, fails in retention.FAILS.items()}})  # fmt: skip
    return _frame(out, columns, s.GATE_RETENTION)


def _frame(rows: list[dict[str, Any]], columns: list[str], spec: s.SuiteSpec) -> pd.DataFrame:
    """A frame with a fixed column order, also when there are no rows."""
    names = columns + [c.name for c in spec.checks if c.kind == "all_ok"]
    return pd.DataFrame(rows, columns=names)


def _join(ids: Sequence[int]) -> str:
    return ", ".join(str(i) for i in ids)


def transaction_gates(transactions: pa.Table | None) -> pd.DataFrame:
    """`transactions` (findings) with the `GATE_TRANSACTIONS` check columns (the detector's `problem` as
    the sentence); no rows for an analysis from before the detector existed."""
    out = []
    for r in transactions.to_pylist() if transactions is not None else []:
        out.append(
            {
                "topic": r["topic"],
                "partition": r["partition"],
                "producer_id": r["producer_id"],
                "transactional_id": r["transactional_id"],
                "age_seconds": r["age_seconds"],
                "start_offset": r["start_offset"],
                "hanging": r["hanging"],
                "problem": r["problem"],
                "action": r["action"],
                "start_time": r["start_time"],
                **{name: r["problem"] if fails(r) else OK for name, fails in open_transactions.FAILS.items()},
            }
        )
    columns = ["topic", "partition", "producer_id", "transactional_id", "age_seconds", "start_offset", "hanging",
               "problem", "action", "start_time"]  # fmt: skip
    return _frame(out, columns, s.GATE_TRANSACTIONS)


def load_gates(problems: pa.Table | None) -> pd.DataFrame:
    """`load_problems` (findings) with the `GATE_LOAD` check columns (the detector's `problem` as the
    sentence); no rows for an analysis from before the detector existed."""
    out = []
    for r in problems.to_pylist() if problems is not None else []:
        out.append(
            {
                "kind": r["kind"],
                "subject": _load_subject(r),
                "broker_id": r["broker_id"],
                "log_dir": r["log_dir"],
                "topic": r["topic"],
                "partition": r["partition"],
                "value": r["value"],
                "problem": r["problem"],
                "action": r["action"],
                "since": r["since"],
                **{name: r["problem"] if fails(r) else OK for name, fails in load.FAILS.items()},
            }
        )
    columns = ["kind", "subject", "broker_id", "log_dir", "topic", "partition", "value", "problem", "action", "since"]
    frame = _frame(out, columns, s.GATE_LOAD)
    # a broker id or partition is null on the other kinds' rows: keep the ids whole numbers, not floats
    for column in ("broker_id", "partition"):
        frame[column] = pd.Series([r[column] for r in out], index=frame.index, dtype=object)
    return frame


def _load_subject(r: Mapping[str, Any]) -> str:
    if r["topic"] is not None:
        return f"{r['topic']}-{r['partition']}"
    return f"broker {r['broker_id']}" + (f" {r['log_dir']}" if r["log_dir"] is not None else "")
