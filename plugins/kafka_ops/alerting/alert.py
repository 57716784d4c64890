"""`Alert`: one problem a health gate found on one cluster, in the words an on-call engineer needs.

An alert is data, not a message: the incident state machine (`incidents`) decides whether it is
sent at all, and each notifier renders it in its service's format. Its `key` is the stable
identity of the problem ("offline_partitions", "group_err:billing"): while a key keeps firing it
is one incident, however often the gate runs.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, get_args

from kafka_ops.errors import AlertError, LakeError
from kafka_ops.lake.names import check_name

Severity = Literal["critical", "warning"]
AffectedKind = Literal["partition", "broker", "group", "topic", "cluster"]
Detail = str | int | float | bool | None

SEVERITIES: tuple[Severity, ...] = get_args(Severity)
_RANK: dict[Severity, int] = {"warning": 1, "critical": 2}
MAX_KEY_CHARS = 200
MAX_DETAILS = 30
PIPELINE_KEY_PREFIX = "cannot_see:"
PIPELINE_STAGES = ("ZooKeeper", "KRaft", "Kafka")
"""Collections that can fail: the metadata snapshot from ZooKeeper or from a KRaft cluster's Admin API and
quorum, and the consumer groups (Kafka)."""


def rank(severity: Severity) -> int:
    """warning < critical: an alert whose rank rises is an escalation and is sent again."""
    return _RANK[severity]


@dataclass(frozen=True)
class Affected:
    """One affected item, e.g. `Affected("partition", "orders-3: isr [1] of [1, 2, 3]")`."""

    kind: AffectedKind
    text: str

    def __post_init__(self) -> None:
        if self.kind not in get_args(AffectedKind):
            raise AlertError(f"affected kind {self.kind!r} is not one of {list(get_args(AffectedKind))}")
        if not self.text.strip():
            raise AlertError(f"affected {self.kind} has empty text")


@dataclass(frozen=True)
class Links:
    """Where the on-call engineer looks next. Any may be missing (no Data Docs for a failed snapshot)."""

    data_docs: str | None = None
    airflow_run: str | None = None
    report: str | None = None

    def labelled(self) -> Iterator[tuple[str, str]]:
        """(label, url) for each link that is set, in a fixed order."""
        for label, url in (("Data Docs", self.data_docs), ("Airflow run", self.airflow_run), ("Report", self.report)):
            if url:
                yield label, url


@dataclass(frozen=True)
class Alert:
    """A problem on `cluster` that is firing now.

    `since` is when the gate first saw it (timezone-aware); `affected` are the top items, in the
    order to show them, and `affected_total` how many there are in all (shown as "and N more").
    `blind` marks a pipeline failure: the run could not look at the cluster, so while it fires the
    absence of other alerts means nothing and no other incident is resolved.
    """

    cluster: str
    key: str
    severity: Severity
    title: str
    since: datetime
    affected: tuple[Affected, ...] = ()
    affected_total: int | None = None
    cause: str = ""
    action: str = ""
    links: Links = field(default_factory=Links)
    details: Mapping[str, Detail] = field(default_factory=dict)
    blind: bool = False
    topics: tuple[str, ...] = ()
    """Every topic the alert is about, when all of them are known (none: it is about no topic, or about
    more partitions than its findings listed); what routes it to the topics' owner."""
    owner: str | None = None
    """The owner (`[[owners]]`) whose sinks it went to; None: the cluster's own."""
    partitions: tuple[tuple[str, int], ...] = ()
    """Every partition it is about, when all are known (as `topics`); what a plan's silence matches."""
    brokers: tuple[int, ...] = ()
    """Every broker it is about, when it is about brokers and all are known; what a broker's silence matches."""

    def __post_init__(self) -> None:
        where = f"alert {self.key!r} of cluster {self.cluster!r}"
        try:
            check_name("cluster name", self.cluster)
        except LakeError as e:
            raise AlertError(f"{where}: {e}") from None
        check_key(self.key, where)
        if self.severity not in SEVERITIES:
            raise AlertError(f"{where}: severity {self.severity!r} is not one of {list(SEVERITIES)}")
        if not self.title.strip():
            raise AlertError(f"{where}: empty title; say what is wrong")
        check_aware(self.since, f"{where}: since")
        object.__setattr__(self, "affected", tuple(self.affected))
        object.__setattr__(self, "topics", tuple(sorted(set(self.topics))))
        object.__setattr__(self, "partitions", tuple(sorted(set(self.partitions))))
        object.__setattr__(self, "brokers", tuple(sorted(set(self.brokers))))
        total = len(self.affected) if self.affected_total is None else self.affected_total
        if total < len(self.affected):
            raise AlertError(f"{where}: affected_total {total} is less than the {len(self.affected)} items listed")
        object.__setattr__(self, "affected_total", total)
        _check_details(self.details, where)
        object.__setattr__(self, "details", dict(self.details))

    @property
    def about(self) -> dict[str, Any]:
        """What it is about, as `kafka_ops.silences.Silence.covers` takes it."""
        group = self.details.get("group_id")
        return {
            "topics": self.topics,
            "partitions": self.partitions,
            "brokers": self.brokers,
            "group": None if group is None else str(group),
        }

    @property
    def more_affected(self) -> int:
        """How many affected items are not listed."""
        return (self.affected_total or 0) - len(self.affected)


def cannot_see_cluster(
    cluster: str,
    what: Literal["ZooKeeper", "KRaft", "Kafka"],
    error: BaseException | str,
    since: datetime,
    *,
    links: Links | None = None,
    conn_id: str | None = None,
) -> Alert:
    """The critical alert for a snapshot that could not reach `what`: never silence.

    Its key is `cannot_see:zookeeper` or `cannot_see:kafka`, so each stage is one incident that
    resolves when that stage succeeds again; it is `blind`, so the cluster's other incidents stay
    open (not resolved) while it fires. `error` is shown as its type and message, which this
    package never fills with credentials.
    """
    if what not in PIPELINE_STAGES:
        raise AlertError(f"cannot_see_cluster: 'what' must be one of {list(PIPELINE_STAGES)}, got {what!r}")
    reason = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    reason = " ".join(reason.split())[:500] or "no error message"
    via = f" through the Airflow connection {conn_id!r}" if conn_id else ""
    check = {
        "ZooKeeper": "check that the ZooKeeper ensemble is up and reachable from the Airflow workers, and the chroot",
        "KRaft": "check that the brokers are up and reachable from the Airflow workers (bootstrap servers, "
        "TLS/SASL) and that the controller quorum has a leader (kafka-metadata-quorum describe --status)",
        "Kafka": "check that the brokers are up and reachable from the Airflow workers (bootstrap servers, TLS/SASL)",
    }[what]
    return Alert(
        cluster=cluster,
        key=PIPELINE_KEY_PREFIX + what.lower(),
        severity="critical",
        title=f"cannot see cluster {cluster}: the {what} snapshot failed",
        since=since,
        affected=(Affected("cluster", f"{cluster} ({what}{via})"),),
        cause=reason,
        action=f"{check}; the cluster's health is unknown until a snapshot succeeds",
        links=links or Links(),
        details={"stage": what, "conn_id": conn_id},
        blind=True,
    )


def check_key(key: str, where: str) -> str:
    """Keys are stored and used in dedup keys: printable, no surrounding blanks, bounded."""
    if not key or key != key.strip() or len(key) > MAX_KEY_CHARS or not key.isprintable():
        raise AlertError(f"{where}: key must be 1-{MAX_KEY_CHARS} printable characters without surrounding blanks")
    return key


def check_aware(value: datetime, where: str) -> datetime:
    """Naive datetimes are refused: a local-time `since` would shift reminders by hours."""
    if not isinstance(value, datetime) or value.tzinfo is None or value.utcoffset() is None:
        raise AlertError(f"{where} must be a timezone-aware datetime, got {value!r}")
    return value


def _check_details(details: Mapping[str, Detail], where: str) -> None:
    if len(details) > MAX_DETAILS:
        raise AlertError(f"{where}: {len(details)} details; keep at most {MAX_DETAILS} (the rest is in the lake)")
    for name, value in details.items():
        if not isinstance(name, str) or not isinstance(value, Detail):
            raise AlertError(f"{where}: detail {name!r} must map a name to a string, number, bool or None")
        if isinstance(value, float) and not math.isfinite(value):
            raise AlertError(f"{where}: detail {name!r} is {value}, which JSON cannot carry")
