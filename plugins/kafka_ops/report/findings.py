"""From one analysis's findings tables to what the report shows: problems (what is wrong, why,
what to do, since when), the charts' per-broker and per-member figures, and the top offenders.

Column names are the detectors' (see each module of `kafka_ops.detectors`). A findings table the
analysis did not write is `None` here, and the part of the page built on it says so.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from kafka_ops.lake.store import Lake
from kafka_ops.problems import registry
from kafka_ops.problems.groups import behind_figure
from kafka_ops.problems.partitions import under_replicated_since
from kafka_ops.problems.registry import metadata_problems
from kafka_ops.problems.retention import eta_phrase
from kafka_ops.problems.words import SEVERITY_RANK, duration, partition, worst_broker
from kafka_ops.report import reads
from kafka_ops.report.model import (
    BrokerDisk,
    BrokerLoad,
    BrokerShrinks,
    Cell,
    MemberLoad,
    OffenderTable,
    Part,
    Problem,
    SkewedGroup,
)

Row = dict[str, Any]
TOP_ROWS = 10
MAX_SKEWED_GROUPS = 4
MAX_MEMBERS = 30
_STATUS_RANK = {"offline": 0, "under_min_isr": 1, "under_replicated": 2, "at_min_isr": 3, "ok": 4}


class Findings:
    """The findings tables of one published analysis, each read at most once."""

    def __init__(self, lake: Lake, cluster: str, analysis: Row) -> None:
        self.lake = lake
        self.cluster = cluster
        self.analysis = analysis
        self.counts: dict[str, dict[str, int]] = json.loads(str(analysis.get("findings") or "{}"))
        self._cache: dict[str, list[Row] | None] = {}

    @property
    def captured_at(self) -> datetime:
        """Capture time of the analysed batch."""
        return cast(datetime, self.analysis["captured_at"]).astimezone(UTC)

    @property
    def snapshot_id(self) -> str:
        return str(self.analysis["snapshot_id"])

    def rows(self, table: str) -> list[Row] | None:
        """The rows of findings `table`, or None when this analysis did not write it."""
        if table not in self._cache:
            data = reads.findings_table(self.lake, self.cluster, self.analysis, table) if table in self.counts else None
            self._cache[table] = None if data is None else data.to_pylist()
        return self._cache[table]

    def missing(self, *tables: str) -> str | None:
        """Why a part built on `tables` is empty for want of input, or None when all were written."""
        absent = [t for t in tables if self.rows(t) is None]
        if not absent:
            return None
        return f"the analysis of {self.snapshot_id} wrote no {', '.join(absent)} (its detector did not run)"


# -- problems ---------------------------------------------------------------------------------------


def zookeeper_problems(f: Findings) -> list[Problem]:
    """Controller, brokers, partitions, leaders, reassignments, redundancy: what is wrong now, in the
    catalogue's words (`kafka_ops.problems`)."""
    return metadata_problems(f)


def group_problems(f: Findings) -> list[Problem]:
    """Consumer groups that lag, stopped, are skewed, or lost (or are about to lose) records to retention, and the
    transactions that hold read_committed consumers at a last stable offset below the high watermark, in the
    catalogue's words."""
    return registry.group_problems(f)


# -- chart figures ----------------------------------------------------------------------------------


def broker_loads(f: Findings) -> Part[BrokerLoad]:
    """Per broker: preferred vs actual leaders (`leader_balance_brokers`), assigned vs in-sync
    replicas (`broker_attribution`)."""
    balance = f.rows("leader_balance_brokers")
    attribution = f.rows("broker_attribution")
    if balance is None and attribution is None:
        return Part(missing=f.missing("leader_balance_brokers", "broker_attribution"))
    by_id: dict[int, dict[str, Any]] = {}
    for r in balance or []:
        by_id.setdefault(r["broker_id"], {}).update(
            registered=r["registered"], preferred=r["preferred"], leaders=r["leaders"]
        )
    for r in attribution or []:
        entry = by_id.setdefault(r["broker_id"], {})
        in_sync = r["assigned_replicas"] - r["missing_from_isr"]
        entry.update(registered=r["registered"], rack=r["rack"], replicas=r["assigned_replicas"], in_sync=in_sync)
        entry.setdefault("leaders", r["leaders"])
    loads = [
        BrokerLoad(
            broker_id=b,
            registered=bool(e.get("registered")),
            rack=e.get("rack"),
            preferred_leaders=int(e.get("preferred") or 0),
            leaders=int(e.get("leaders") or 0),
            replicas=e.get("replicas"),
            in_sync_replicas=e.get("in_sync"),
        )
        for b, e in sorted(by_id.items())
    ]
    return Part(tuple(loads))


def broker_disks(f: Findings) -> Part[BrokerDisk]:
    """Per broker: disk used vs capacity, days to full, bytes in and out (`broker_load`)."""
    rows = f.rows("broker_load")
    if rows is None:
        return Part(missing=f.missing("broker_load"))
    return Part(
        tuple(
            BrokerDisk(
                broker_id=r["broker_id"],
                registered=bool(r["registered"]),
                used_bytes=int(r["disk_used_bytes"] or 0),
                capacity_bytes=r["disk_capacity_bytes"],
                capacity_source=r["capacity_source"],
                days_to_full=r["days_to_full"],
                bytes_in_per_s=float(r["bytes_in_per_s"] or 0.0),
                bytes_out_per_s=float(r["bytes_out_per_s"] or 0.0),
                leader_bytes_in_per_s=float(r["leader_bytes_in_per_s"] or 0.0),
                network_in_capacity=r["network_in_capacity"],
                network_out_capacity=r["network_out_capacity"],
                severity=str(r["severity"]),
            )
            for r in sorted(rows, key=lambda r: r["broker_id"])
        )
    )


def broker_shrinks(f: Findings, brokers: Iterable[int]) -> Part[BrokerShrinks]:
    """ISR shrinks and expands per replica (broker) over the analysis window (`isr_events`); brokers
    without events show as zero so a quiet broker is visibly quiet."""
    rows = f.rows("isr_events")
    if rows is None:
        return Part(missing=f.missing("isr_events"))
    shrinks = Counter(r["replica"] for r in rows if r["event"] == "shrink")
    expands = Counter(r["replica"] for r in rows if r["event"] == "expand")
    ids = sorted(set(brokers) | set(shrinks) | set(expands))
    return Part(tuple(BrokerShrinks(b, shrinks[b], expands[b]) for b in ids))


def skewed_groups(f: Findings) -> Part[SkewedGroup]:
    """Skewed groups (`assignor_skew_groups`), their members' partitions (`assignor_skew_members`) and
    what the recommended assignor would give (`assignor_recommendations`, `assignor_whatif`)."""
    groups = f.rows("assignor_skew_groups")
    members = f.rows("assignor_skew_members")
    if groups is None or members is None:
        return Part(missing=f.missing("assignor_skew_groups", "assignor_skew_members"))
    recs = {r["group_id"]: r for r in f.rows("assignor_recommendations") or []}
    # both protocols have a `range`: rows from before the protocol column are the client's
    whatif = {
        (r["group_id"], r["assignor"], r.get("protocol") or "classic"): r for r in f.rows("assignor_whatif") or []
    }
    out = []
    for g in sorted((g for g in groups if g["skewed"]), key=lambda g: (-g["spread"], g["group_id"])):
        mine = [m for m in members if m["group_id"] == g["group_id"]]
        mine.sort(key=lambda m: (-m["partitions"], m["member_id"]))
        rec = recs.get(g["group_id"], {})
        recommended = rec.get("recommended")
        protocol = rec.get("recommended_protocol") or "classic"
        alt = whatif.get((g["group_id"], recommended, protocol), {}) if recommended else {}
        if recommended and protocol != "classic":
            recommended = f"{recommended} ({protocol} protocol)"
        loads = [
            MemberLoad(m["member_id"], m["client_id"], m["host"], m["partitions"], m["lag"], m["severity"] != "ok")
            for m in mine[:MAX_MEMBERS]
        ]
        out.append(
            SkewedGroup(
                group_id=g["group_id"],
                assignor=g["assignor"],
                cause=g["cause"],
                members=tuple(loads),
                member_count=len(mine),
                recommended=recommended,
                reason=rec.get("error") or rec.get("reason"),
                whatif_min=alt.get("min_partitions"),
                whatif_max=alt.get("max_partitions"),
                moved_partitions=alt.get("moved_partitions"),
            )
        )
    return Part(tuple(out[:MAX_SKEWED_GROUPS]))


# -- top offenders ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Offenders:
    """How one offenders table is cut from its findings table."""

    title: str
    source: str
    keep: Callable[[Row], bool]
    order: Callable[[Row], Any]
    columns: tuple[str, ...]
    cells: Callable[[Row], tuple[Cell, ...]]
    none: str

    def table(self, f: Findings) -> OffenderTable:
        rows = f.rows(self.source)
        if rows is None:
            return OffenderTable(self.title, self.source, self.columns, (), 0, self.none, f.missing(self.source))
        picked = sorted((r for r in rows if self.keep(r)), key=self.order)
        cells = tuple(self.cells(r) for r in picked[:TOP_ROWS])
        return OffenderTable(self.title, self.source, self.columns, cells, len(picked), self.none)


def zookeeper_offenders(f: Findings) -> list[OffenderTable]:
    """Brokers to blame, partitions at risk, partitions off their preferred leader, reassignments."""
    since = under_replicated_since(f)
    specs = [
        _Offenders(
            title="Brokers to blame",
            source="broker_attribution",
            keep=lambda r: r["severity"] != "ok",
            order=worst_broker,
            columns=("Broker", "Registered", "Rack", "Replicas", "Missing from ISR", "Leads", "ISR shrinks", "Cause"),
            cells=lambda r: (
                r["broker_id"],
                "yes" if r["registered"] else "NO",
                r["rack"],
                r["assigned_replicas"],
                r["missing_from_isr"],
                r["leaders"],
                r["shrinks_in_window"],
                r["cause"],
            ),
            none="every replica of every broker is in sync",
        ),
        _Offenders(
            title="Partitions at risk",
            source="isr_health",
            keep=lambda r: r["status"] != "ok",
            order=lambda r: (_STATUS_RANK.get(r["status"], 9), r["topic"], r["partition"]),
            columns=("Partition", "Status", "Leader", "Replicas", "ISR", "Min ISR", "Under-replicated since"),
            cells=lambda r: (
                f"{r['topic']}-{r['partition']}",
                r["status"],
                _leader(r["leader"]),
                _ids(r["replicas"]),
                _ids(r["isr"]),
                r["min_isr"],
                since.get((r["topic"], r["partition"])),
            ),
            none="no partition is offline, under min ISR, under-replicated or at min ISR",
        ),
        _Offenders(
            title="Partitions off their preferred leader",
            source="leader_balance_partitions",
            keep=lambda r: True,
            order=lambda r: (not r["fixable"], r["topic"], r["partition"]),
            columns=("Partition", "Leader", "Preferred", "ISR", "Election"),
            cells=lambda r: (
                f"{r['topic']}-{r['partition']}",
                _leader(r["leader"]),
                r["preferred_leader"],
                _ids(r["isr"]),
                "fixable now" if r["fixable"] else f"blocked: {r['blocked_reason']}",
            ),
            none="every partition is led by its preferred leader",
        ),
        _Offenders(
            title="Reassignments in flight",
            source="reassignments_in_flight",
            keep=lambda r: True,
            order=lambda r: (not r["stuck"], -(r["age_seconds"] or 0.0), r["topic"], r["partition"]),
            columns=("Partition", "Replicas", "Target", "Adding in ISR", "Age", "Stuck"),
            cells=lambda r: (
                f"{r['topic']}-{r['partition']}",
                _ids(r["replicas"]),
                _ids(r["target_replicas"]),
                _ids(r["adding_in_isr"]),
                duration(r["age_seconds"]),
                r["stuck_reason"] or "no",
            ),
            none="no partition is being reassigned",
        ),
    ]
    return [spec.table(f) for spec in specs]


def group_offenders(f: Findings, types: Mapping[str, str] | None = None) -> list[OffenderTable]:
    """Consumer groups that are not OK by Burrow's rules, with their type (`types`: group id →
    classic, consumer, ...) and how far behind they are in time; partitions whose records retention deleted
    before their group read them, or can delete within `retention_eta_warning_s`."""
    behind = {r["group_id"]: r for r in f.rows("lag_time_groups") or []}
    spec = _Offenders(
        title="Consumer groups in trouble",
        source="lag_status_groups",
        keep=lambda r: r["severity"] != "ok",
        order=lambda r: (SEVERITY_RANK[r["severity"]], -(r["total_lag"] or 0), r["group_id"]),
        columns=("Group", "Type", "State", "Status", "Total lag", "Worst partition", "Time behind", "Cause"),
        cells=lambda r: (
            r["group_id"],
            (types or {}).get(r["group_id"]),
            r["state"],
            r["status"],
            r["total_lag"],
            f"{r['max_lag_topic']}-{r['max_lag_partition']}" if r["max_lag_topic"] else None,
            _behind(behind.get(r["group_id"])),
            r["cause"],
        ),
        none="every group is OK by Burrow's rules",
    )
    retention = _Offenders(
        title="Partitions losing records to retention",
        source="retention_risk_partitions",
        keep=lambda r: r["state"] in ("lost", "at_risk"),
        order=_retention_order,
        columns=("Group", "Partition", "State", "Records lost", "Lost since", "Deletable", "By", "Lag"),
        cells=lambda r: (
            r["group_id"],
            partition(r),
            r["state"],
            r["records_lost"],
            r["lost_since"],
            eta_phrase(r["eta_seconds"], r["eta_is_lower_bound"]) if r["state"] == "at_risk" else None,
            r["eta_basis"],
            r["lag"],
        ),
        none="no group lost records to retention, nor can lose any within retention_eta_warning_s",
    )
    tables = [spec.table(f)]
    if f.rows("retention_risk_partitions") is not None:  # an analysis from before the detector: no empty table
        tables.append(retention.table(f))
    return tables


# -- helpers ---------------------------------------------------------------------------------------


def _behind(t: Row | None) -> str | None:
    if t is None or t["max_lag_seconds"] is None:
        return None
    return behind_figure(t)


def _retention_order(r: Row) -> tuple[Any, ...]:
    """Worst first: lost (most records first), then the earliest deletion."""
    eta = r["eta_seconds"] if r["eta_seconds"] is not None else float("inf")
    return SEVERITY_RANK[r["severity"]], -(r["records_lost"] or 0), eta, r["group_id"], r["topic"], r["partition"]


def _ids(values: list[int] | None) -> str | None:
    return None if values is None else "[" + ", ".join(str(v) for v in values) + "]"


def _leader(leader: int | None) -> str | int | None:
    return "none" if leader == -1 else leader
