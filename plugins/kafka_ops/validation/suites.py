"""Every expectation the pipeline holds its data to, in one place, versioned.

A suite validates one frame (see `kafka_ops.validation.frames`): one row per partition, group
offset, broker, group, or one row for the whole batch. Each `Check` has a stable `name` (what
error messages, the `snapshot_validations` table and alerts call it), a `meaning` an operator
understands, and a severity. The Great Expectations suites are built from this catalogue by
`to_gx_suite`; nothing else declares an expectation.

Rules that span lists (ISR ⊆ replicas, no duplicate replicas, ...) are computed in pandas first:
`frames` writes a column named after the check, holding `OK` or a sentence about what is wrong
with that row ("ISR [1, 4] has broker 4, which is not a replica [1, 2, 3]"), and the expectation
is that every value is `OK`. Data Docs then show each failing row with its sentence and its keys
(topic, partition, broker, group). Scalar rules use Great Expectations' own expectations on the
real columns (a committed offset between 0 and ..., a controller epoch at least the previous one).

Bump `SUITE_VERSION` whenever a check is added, removed or changes meaning: it is recorded with
every validation, so a snapshot trusted under an older version can be told apart.

This module imports nothing heavy (no Great Expectations, no pandas) until `to_gx_suite` runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from great_expectations.core import ExpectationSuite
    from great_expectations.expectations import Expectation

SUITE_VERSION = "8"

OK = "OK"
"""The value of a derived check column on a row that passes."""

Severity = Literal["critical", "warning"]
CheckKind = Literal["all_ok", "at_most", "at_least", "not_below"]


@dataclass(frozen=True)
class Check:
    """One expectation.

    kinds: `all_ok` — the derived column `name` is `OK` on every row; `at_most` / `at_least` —
    `column` is ≤ / ≥ the bound (`bound`, or the caller's value for `parameter`), null values
    skipped; `not_below` — `column` ≥ `other` on every row where both are known.
    """

    name: str
    meaning: str
    severity: Severity
    kind: CheckKind = "all_ok"
    column: str = ""
    other: str | None = None
    bound: float | None = None
    parameter: str | None = None

    @property
    def domain(self) -> str:
        """The column the expectation reads (for `all_ok` checks: the derived column, `name`)."""
        return self.column or self.name


@dataclass(frozen=True)
class SuiteSpec:
    """A suite: what one row of its frame is (`subject`), the key columns Data Docs and details show
    with each failing row, and its checks."""

    name: str
    subject: str
    keys: tuple[str, ...]
    checks: tuple[Check, ...]

    def check(self, name: str) -> Check:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(f"suite {self.name} has no check {name!r}")


# -- integrity of a ZooKeeper snapshot --------------------------------------------------------------

ISR_SUBSET_OF_REPLICAS = Check(
    "isr_subset_of_replicas",
    "every in-sync replica is one of the partition's replicas; Kafka only adds assigned replicas "
    "to the ISR, so anything else is a torn or corrupted state znode",
    "critical",
)
LEADER_IN_ISR = Check(
    "leader_in_isr",
    "the leader is in the ISR, or there is none (-1); the controller only elects ISR members, and an "
    "unclean election resets the ISR to the new leader",
    "critical",
)
NO_DUPLICATE_REPLICAS = Check(
    "no_duplicate_replicas",
    "no broker appears twice in a partition's replicas or ISR; Kafka refuses such assignments",
    "critical",
)
ONE_REPLICATION_FACTOR_PER_TOPIC = Check(
    "one_replication_factor_per_topic",
    "all partitions of a topic have the same number of replicas, except in a topic with a "
    "reassignment in flight (a replication-factor change moves partitions one by one)",
    "critical",
)
REPLICAS_REGISTERED_OR_REPORTED = Check(
    "replicas_registered_or_reported",
    "every replica id is a broker id (≥ 0) and either a registered broker, or its absence shows in "
    "the partition state (out of the ISR: under-replicated; or no live leader: offline), so the "
    "detectors report it; an unregistered broker counted in sync under a live leader is reported by "
    "nobody",
    "critical",
)
CONTROLLER_EPOCH_NEVER_DECREASES = Check(
    "controller_epoch_never_decreases",
    "/controller_epoch is at least the previous snapshot's (same Kafka cluster id); it only rises, "
    "one per controller election",
    "critical",
    kind="not_below",
    column="controller_epoch",
    other="previous_controller_epoch",
)
COLLECTION_ISSUES_WITHIN_THRESHOLD = Check(
    "collection_issues_within_threshold",
    "no more znodes (or Admin API requests) failed to read or parse than the threshold; each one is metadata "
    "missing from the snapshot (the load, DescribeLogDirs, is not metadata: its issues do not count)",
    "critical",
    kind="at_most",
    column="collection_issues",
    parameter="max_collection_issues",
)

LOG_DIR_OF_A_SERVING_BROKER = Check(
    "log_dir_of_a_serving_broker",
    "every log dir row (DescribeLogDirs) belongs to a broker of the snapshot; only serving brokers are asked",
    "critical",
)
LOG_DIR_USABLE_BYTES_NOT_NEGATIVE = Check(
    "log_dir_usable_bytes_not_negative",
    "a log dir's free bytes are ≥ 0 where reported (null where the broker does not report them)",
    "critical",
    kind="at_least",
    column="usable_bytes",
    bound=0,
)
LOG_DIR_USABLE_WITHIN_TOTAL = Check(
    "log_dir_usable_within_total",
    "a log dir's free bytes are at most its volume's size; more is a misread answer",
    "critical",
    kind="not_below",
    column="total_bytes",
    other="usable_bytes",
)
REPLICA_SIZE_NOT_NEGATIVE = Check(
    "replica_size_not_negative",
    "a replica's size on disk is ≥ 0 bytes",
    "critical",
    kind="at_least",
    column="size_bytes",
    bound=0,
)
REPLICA_SIZE_OF_AN_ASSIGNED_REPLICA = Check(
    "replica_size_of_an_assigned_replica",
    "every replica size (DescribeLogDirs) is of a partition of the snapshot, on a broker of the snapshot "
    "that is one of its replicas or adding replicas; anything else is a stray log, or a topic or "
    "reassignment that changed between the metadata read and the log dirs read (take a new snapshot), "
    "and a load-aware plan would weigh the wrong brokers",
    "critical",
)

SNAPSHOT_PARTITIONS = SuiteSpec(
    "zookeeper_snapshot_partitions",
    "partition",
    ("topic", "partition"),
    (
        ISR_SUBSET_OF_REPLICAS,
        LEADER_IN_ISR,
        NO_DUPLICATE_REPLICAS,
        ONE_REPLICATION_FACTOR_PER_TOPIC,
        REPLICAS_REGISTERED_OR_REPORTED,
    ),
)
SNAPSHOT_LOG_DIRS = SuiteSpec(
    "zookeeper_snapshot_log_dirs",
    "log dir",
    ("broker_id", "log_dir"),
    (LOG_DIR_OF_A_SERVING_BROKER, LOG_DIR_USABLE_BYTES_NOT_NEGATIVE, LOG_DIR_USABLE_WITHIN_TOTAL),
)
SNAPSHOT_REPLICA_SIZES = SuiteSpec(
    "zookeeper_snapshot_replica_sizes",
    "replica size",
    ("topic", "partition", "broker_id", "log_dir"),
    (REPLICA_SIZE_NOT_NEGATIVE, REPLICA_SIZE_OF_AN_ASSIGNED_REPLICA),
)
SNAPSHOT_SUMMARY = SuiteSpec(
    "zookeeper_snapshot",
    "snapshot",
    ("snapshot_id",),
    (CONTROLLER_EPOCH_NEVER_DECREASES, COLLECTION_ISSUES_WITHIN_THRESHOLD),
)

# -- integrity of a consumer-group collection -------------------------------------------------------

COMMITTED_OFFSETS_NOT_NEGATIVE = Check(
    "committed_offsets_not_negative",
    "a committed offset is ≥ 0; Kafka's 'no offset' (-1) must be stored as no commit",
    "critical",
    kind="at_least",
    column="committed_offset",
    bound=0,
)
COMMITTED_OFFSETS_WITHIN_END = Check(
    "committed_offsets_within_end",
    "a committed offset is ≤ the partition's end offset, unless the row is flagged "
    "committed_above_end (then its lag is clamped at 0 on purpose); otherwise the lag is wrong",
    "critical",
    kind="not_below",
    column="end_offset_unless_flagged",
    other="committed_offset",
)
GROUP_COLLECTION_ISSUES_WITHIN_THRESHOLD = Check(
    "group_collection_issues_within_threshold",
    "no more groups, offsets or end offsets failed to collect than the threshold",
    "critical",
    kind="at_most",
    column="collection_issues",
    parameter="max_group_collection_issues",
)

GROUP_OFFSETS = SuiteSpec(
    "group_snapshot_offsets",
    "group offset",
    ("group_id", "topic", "partition"),
    (COMMITTED_OFFSETS_NOT_NEGATIVE, COMMITTED_OFFSETS_WITHIN_END),
)
GROUP_SUMMARY = SuiteSpec(
    "group_snapshot",
    "group collection",
    ("snapshot_id",),
    (GROUP_COLLECTION_ISSUES_WITHIN_THRESHOLD,),
)

# -- health gates over findings ---------------------------------------------------------------------

NO_OFFLINE_PARTITIONS = Check(
    "no_offline_partitions",
    "every partition has a live leader (isr_health status offline: no leader, or the leader is not "
    "a registered broker); an offline partition refuses all reads and writes",
    "critical",
)
NO_UNDER_MIN_ISR_PARTITIONS = Check(
    "no_under_min_isr_partitions",
    "every partition's ISR is at least its min.insync.replicas (isr_health under_min_isr); below it, "
    "producers with acks=all fail",
    "critical",
)
LEADER_IMBALANCE_WITHIN_THRESHOLD = Check(
    "leader_imbalance_within_threshold",
    "per broker, the share of partitions it is preferred leader for but does not lead is within the rule "
    "of the cluster's controller: leader_imbalance_percent on ZooKeeper (Kafka's "
    "leader.imbalance.per.broker.percentage rule), 0 on KRaft (its controller counts every partition "
    "not led by its preferred replica; the setting was removed in Kafka 4.0)",
    "warning",
    kind="at_most",
    column="imbalance_percent",
    parameter="leader_imbalance_percent",
)
CONTROLLER_ELECTIONS_WITHIN_THRESHOLD = Check(
    "controller_elections_within_threshold",
    "controller elections in the last hour are within controller_elections_per_hour; each election "
    "stalls leadership changes cluster-wide",
    "warning",
    kind="at_most",
    column="elections_last_hour",
    parameter="controller_elections_per_hour",
)
QUORUM_HAS_A_MAJORITY = Check(
    "quorum_has_a_majority",
    "a majority of the KRaft controller quorum's voters fetch from its leader (quorum_health); without "
    "it no metadata change commits: no topic, no leader election, no ISR change",
    "critical",
)
QUORUM_REPLICAS_KEEP_UP = Check(
    "quorum_replicas_keep_up",
    "every voter and observer of the KRaft metadata log fetches from the leader and catches up within "
    "quorum_fetch_seconds / quorum_lag_seconds (quorum_health); a lagging broker serves stale metadata",
    "warning",
)
NO_FENCED_BROKERS = Check(
    "no_fenced_brokers",
    "no broker is registered but fenced by the KRaft controller (quorum_health); a fenced broker leads "
    "nothing and is out of every ISR",
    "warning",
)
MIGRATION_DUAL_WRITE_RUNS = Check(
    "migration_dual_write_runs",
    "while brokers still run on ZooKeeper, the KRaft controllers migrating the cluster keep writing the "
    "metadata to it (migration_health); otherwise those brokers' ZooKeeper view goes stale and a rollback "
    "loses changes",
    "critical",
)
MIGRATION_NOT_STALLED = Check(
    "migration_not_stalled",
    "KRaft controllers migrating the cluster do not wait for brokers to register longer than "
    "migration_stall_minutes (migration_health)",
    "warning",
)
MIGRATION_VIEWS_AGREE = Check(
    "migration_views_agree",
    "during the migration's dual-write, ZooKeeper and the KRaft metadata agree on every partition for "
    "longer than migration_divergence_minutes (migration_health)",
    "warning",
)
SNAPSHOTS_READ_LIVE_METADATA = Check(
    "snapshots_read_live_metadata",
    "the cluster is not snapshotted from a ZooKeeper its finalized KRaft controllers no longer write "
    "(migration_health)",
    "warning",
)
NO_GROUP_IN_ERR = Check(
    "no_group_in_err",
    "no consumer group is in ERR (Burrow: a partition STOPped, STALLed or REWound)",
    "critical",
)
NO_GROUP_IN_WARN = Check(
    "no_group_in_warn",
    "no consumer group is in WARN (Burrow: lag grew across the whole window)",
    "warning",
)
NO_GROUP_LOSING_RECORDS = Check(
    "no_group_losing_records",
    "no consumer group has lost records to retention (its committed offset below the partition's log start "
    "offset), nor can lose any within retention_eta_critical_s (retention_risk_groups)",
    "critical",
)
NO_GROUP_AT_RETENTION_RISK = Check(
    "no_group_at_retention_risk",
    "no consumer group's first unconsumed record on a partition can be deleted by retention within "
    "retention_eta_warning_s (retention_risk_groups)",
    "warning",
)
NO_HANGING_TRANSACTIONS = Check(
    "no_hanging_transactions",
    "no transaction is hanging, open past its own timeout or open longer than transaction_age_critical_s "
    "(transactions): each holds read_committed consumers of its partitions at the last stable offset",
    "critical",
)
NO_LONG_OPEN_TRANSACTIONS = Check(
    "no_long_open_transactions",
    "no transaction is open longer than transaction_age_warning_s (transactions)",
    "warning",
)
NO_DISK_RUNNING_OUT = Check(
    "no_disk_running_out",
    "no broker or log dir fills up within disk_days_critical days at its current growth or is fuller than "
    "disk_share_critical (load_problems): a full disk takes its replicas offline",
    "critical",
)
DISK_WITHIN_LIMITS = Check(
    "disk_within_limits",
    "no broker or log dir fills up within disk_days_warning days, is fuller than the cluster's max_disk_share, "
    "reports an error, or holds more than disk_skew_ratio times its peers' mean (load_problems)",
    "warning",
)
NO_HOT_SPOTS = Check(
    "no_hot_spots",
    "no partition takes more than hot_partition_factor times the typical partition's bytes-in, and no broker "
    "nears its network capacity or moves more than hot_broker_factor times the brokers' mean (load_problems)",
    "warning",
)

GATE_PARTITIONS = SuiteSpec(
    "health_gates_partitions", "partition", ("topic", "partition"), (NO_OFFLINE_PARTITIONS, NO_UNDER_MIN_ISR_PARTITIONS)
)
GATE_LEADER_BALANCE = SuiteSpec(
    "health_gates_leader_balance", "broker", ("broker_id",), (LEADER_IMBALANCE_WITHIN_THRESHOLD,)
)
GATE_CONTROLLER = SuiteSpec(
    "health_gates_controller", "controller", ("controller_id",), (CONTROLLER_ELECTIONS_WITHIN_THRESHOLD,)
)
GATE_QUORUM = SuiteSpec(
    "health_gates_quorum",
    "quorum replica or fenced broker",
    ("kind", "replica_id"),
    (QUORUM_HAS_A_MAJORITY, QUORUM_REPLICAS_KEEP_UP, NO_FENCED_BROKERS),
)
GATE_MIGRATION = SuiteSpec(
    "health_gates_migration",
    "migration phase or diverging partition field",
    ("subject",),
    (MIGRATION_DUAL_WRITE_RUNS, MIGRATION_NOT_STALLED, MIGRATION_VIEWS_AGREE, SNAPSHOTS_READ_LIVE_METADATA),
)
GATE_GROUPS = SuiteSpec(
    "health_gates_consumer_groups", "consumer group", ("group_id",), (NO_GROUP_IN_ERR, NO_GROUP_IN_WARN)
)
GATE_RETENTION = SuiteSpec(
    "health_gates_retention", "consumer group", ("group_id",), (NO_GROUP_LOSING_RECORDS, NO_GROUP_AT_RETENTION_RISK)
)
GATE_TRANSACTIONS = SuiteSpec(
    "health_gates_transactions",
    "open transaction on a partition",
    ("topic", "partition", "producer_id"),
    (NO_HANGING_TRANSACTIONS, NO_LONG_OPEN_TRANSACTIONS),
)
GATE_LOAD = SuiteSpec(
    "health_gates_load",
    "load problem of a broker, log dir or partition",
    ("kind", "subject"),
    (NO_DISK_RUNNING_OUT, DISK_WITHIN_LIMITS, NO_HOT_SPOTS),
)

INTEGRITY_SUITES = (
    SNAPSHOT_PARTITIONS, SNAPSHOT_LOG_DIRS, SNAPSHOT_REPLICA_SIZES, SNAPSHOT_SUMMARY, GROUP_OFFSETS, GROUP_SUMMARY,
)  # fmt: skip
GATE_SUITES = (
    GATE_PARTITIONS, GATE_LEADER_BALANCE, GATE_CONTROLLER, GATE_QUORUM, GATE_MIGRATION, GATE_GROUPS, GATE_RETENTION,
    GATE_TRANSACTIONS, GATE_LOAD,
)  # fmt: skip
SUITES: dict[str, SuiteSpec] = {s.name: s for s in (*INTEGRITY_SUITES, *GATE_SUITES)}
CHECKS: dict[str, Check] = {c.name: c for s in SUITES.values() for c in s.checks}


def bound_of(check: Check, parameters: Mapping[str, float]) -> float | None:
    """The numeric bound of an `at_most`/`at_least` check: its literal bound or the caller's value."""
    if check.parameter is None:
        return check.bound
    if check.parameter not in parameters:
        raise KeyError(f"check {check.name} needs the parameter {check.parameter!r}")
    return float(parameters[check.parameter])


def to_gx_suite(spec: SuiteSpec, parameters: Mapping[str, float]) -> ExpectationSuite:
    """The Great Expectations suite of `spec`, bounds filled from `parameters` (thresholds).

    Each expectation carries `meta.name` (the check's stable name, how results are mapped back),
    the operator meaning as its Data Docs `description` (with the bound, when there is one), and
    its severity.
    """
    import great_expectations as gx  # noqa: PLC0415 - slow import, only when validating

    return gx.ExpectationSuite(
        name=spec.name,
        expectations=[_expectation(c, parameters) for c in spec.checks],
        meta={"suite_version": SUITE_VERSION, "subject": spec.subject},
    )


def _expectation(check: Check, parameters: Mapping[str, float]) -> Expectation:
    import great_expectations as gx  # noqa: PLC0415
    from great_expectations.expectations.metadata_types import FailureSeverity  # noqa: PLC0415

    meta = {"name": check.name, "meaning": check.meaning, "suite_version": SUITE_VERSION}
    severity = FailureSeverity(check.severity)
    text = f"{check.name}: {check.meaning}."
    if check.kind == "all_ok":
        return gx.expectations.ExpectColumnValuesToBeInSet(
            column=check.domain, value_set=[OK], description=text, meta=meta, severity=severity
        )
    if check.kind == "not_below":
        if check.other is None:
            raise ValueError(f"check {check.name}: a not_below check needs `other`")
        return gx.expectations.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A=check.domain,
            column_B=check.other,
            or_equal=True,
            ignore_row_if="either_value_is_missing",
            description=f"{text} {check.domain} must be at least {check.other}.",
            meta=meta,
            severity=severity,
        )
    bound = bound_of(check, parameters)
    if bound is None:
        raise ValueError(f"check {check.name}: an {check.kind} check needs a bound or a parameter")
    if check.kind == "at_most":
        return gx.expectations.ExpectColumnValuesToBeBetween(
            column=check.domain,
            max_value=bound,
            description=f"{text} {check.domain} must be at most {bound:g}.",
            meta=meta,
            severity=severity,
        )
    return gx.expectations.ExpectColumnValuesToBeBetween(
        column=check.domain,
        min_value=bound,
        description=f"{text} {check.domain} must be at least {bound:g}.",
        meta=meta,
        severity=severity,
    )
