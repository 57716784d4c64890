"""What the health report shows, as plain typed values: no lake, no HTML.

`report.data.gather` fills a `ReportData` from the lake; `report.html.render` turns it into a page.
A part of the page whose input is missing (no group collection yet, a source not analysed yet)
holds no items and says why in `Part.missing`, so the page says so instead of drawing an empty,
reassuring chart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Generic, Literal, TypeVar

from kafka_ops.errors import LakeError
from kafka_ops.problems.problem import Problem
from kafka_ops.silences import Silence, silencing

if TYPE_CHECKING:
    from kafka_ops.validation.gates import GateReport

Status = Literal["critical", "warning", "ok", "unknown"]
Source = Literal["snapshots", "group_snapshots"]
Cell = str | int | float | datetime | None
T = TypeVar("T")


@dataclass(frozen=True)
class Part(Generic[T]):
    """The items of one chart or table; `missing` says why there are none when the input itself is
    absent (None when the input was read: then no items means nothing to show)."""

    items: tuple[T, ...] = ()
    missing: str | None = None


@dataclass(frozen=True)
class ReportLinks:
    """Where to look next; any may be missing."""

    data_docs: str | None = None
    airflow_run: str | None = None


@dataclass(frozen=True)
class Collected:
    """The ZooKeeper snapshot or group collection the report is about, with what was made of it."""

    source: Source
    snapshot_id: str
    captured_at: datetime
    figures: Mapping[str, int | str | None]
    """Headline figures of the commit row (broker_count, under_replicated_count, group_count, ...; source)."""
    analysed_at: datetime | None = None
    """None: no analysis of this batch is published."""
    findings: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    """findings table → severity → rows, as the analysis counted them."""
    trusted: bool | None = None
    """Integrity validation: None when the batch was never validated."""
    failed_expectations: tuple[str, ...] = ()
    data_docs: str | None = None


@dataclass(frozen=True)
class BrokerLoad:
    broker_id: int
    registered: bool
    rack: str | None
    preferred_leaders: int
    leaders: int
    replicas: int | None
    in_sync_replicas: int | None


@dataclass(frozen=True)
class BrokerDisk:
    """One broker's disk and traffic (`broker_load`): bytes, bytes per second; None = unknown."""

    broker_id: int
    registered: bool
    used_bytes: int
    capacity_bytes: float | None
    capacity_source: str | None
    days_to_full: float | None
    bytes_in_per_s: float
    bytes_out_per_s: float
    leader_bytes_in_per_s: float
    network_in_capacity: float | None
    network_out_capacity: float | None
    severity: str


@dataclass(frozen=True)
class BrokerShrinks:
    broker_id: int
    shrinks: int
    expands: int


@dataclass(frozen=True)
class Point:
    at: datetime
    value: int


@dataclass(frozen=True)
class GroupLag:
    group_id: str
    status: str | None
    """Burrow's status of the group in the analysis (OK, WARN, ERR), None when not analysed."""
    points: tuple[Point, ...]


@dataclass(frozen=True)
class MemberLoad:
    member_id: str
    client_id: str | None
    host: str | None
    partitions: int
    lag: int | None
    overloaded: bool


@dataclass(frozen=True)
class SkewedGroup:
    group_id: str
    assignor: str | None
    cause: str | None
    members: tuple[MemberLoad, ...]
    """Most loaded first, at most `data.MAX_MEMBERS`."""
    member_count: int
    recommended: str | None
    reason: str | None
    whatif_min: int | None
    """Fewest / most partitions per member the recommended assignor would give (the what-if)."""
    whatif_max: int | None
    moved_partitions: int | None


@dataclass(frozen=True)
class OffenderTable:
    title: str
    source: str
    """The findings table(s) the rows come from."""
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    total: int
    """Rows in all (the table shows the worst `data.TOP_ROWS`)."""
    none: str
    """What it means when there are no rows ("no partition at risk")."""
    missing: str | None = None


@dataclass(frozen=True)
class ReportData:
    cluster: str
    generated_at: datetime
    window: timedelta
    """How far back the history charts look from the batch's capture time."""
    snapshot: Collected | None
    groups: Collected | None
    status: Status
    status_reason: str
    gates: GateReport | None
    problems: Part[Problem]
    brokers: Part[BrokerLoad]
    shrinks: Part[BrokerShrinks]
    under_replicated: Part[Point]
    offline: Part[Point]
    lag: Part[GroupLag]
    skewed: Part[SkewedGroup]
    offenders: tuple[OffenderTable, ...]
    links: ReportLinks
    notes: tuple[str, ...] = ()
    """Page-wide remarks: a missing source, an untrusted batch, a stale snapshot."""
    disks: Part[BrokerDisk] = Part()
    """Per broker disk and traffic, from the load detector."""
    as_of: datetime | None = None
    """Set in a report of an analysis as of a past time: the time asked for (never `latest.html`)."""
    silences: tuple[Silence, ...] = ()
    """The cluster's silences in force when the report was made (none in a report as of a past time)."""

    def silence_of(self, problem: Problem) -> Silence | None:
        """The silence that keeps `problem` from paging now, if any."""
        return silencing(self.silences, self.generated_at, problem.key, **problem.about)

    @property
    def report_id(self) -> str:
        """The file name of this report: the snapshot's id, else the group collection's."""
        batch = self.snapshot or self.groups
        if batch is None:
            raise LakeError(f"the report of cluster {self.cluster} has neither a snapshot nor a group collection")
        return batch.snapshot_id
