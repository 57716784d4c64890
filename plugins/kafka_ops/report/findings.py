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
from datetime import datetime
from typing import Any

from kafka_ops.analysis.lag_estimates import group_method, time_behind
from kafka_ops.lake.store import Lake
from kafka_ops.report import reads
from kafka_ops.report.model import (
    SEVERITY_RANK,
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
    """Controller, brokers, partitions, leaders, reassignments, redundancy: what is wrong now."""
    return [
        *_controller(f), *_brokers(f), *_partitions(f), *_leaders(f), *_reassignments(f), *_deletions(f),
        *_redundancy(f), *_idle_throttles(f), *_quorum(f), *_migration(f), *_load(f),
    ]  # fmt: skip


_LOAD_TITLES = {
    "disk_full_soon": "disk filling up on {n} broker{s}",
    "disk_over_share": "disk nearly full on {n} broker{s}",
    "log_dir_full_soon": "{n} log dir{s} filling up",
    "log_dir_over_share": "{n} log dir{s} nearly full",
    "log_dir_error": "{n} log dir{s} offline (the broker reports an error)",
    "disk_skew": "disk use skewed: {n} broker{s} far above the mean",
    "log_dir_skew": "{n} log dir{s} far fuller than the other dirs of their broker",
    "hot_partition": "{n} hot partition{s}: far more bytes in than the typical partition",
    "hot_broker_in": "{n} broker{s} hot on bytes in",
    "hot_broker_out": "{n} broker{s} hot on bytes out",
}


def _load(f: Findings) -> list[Problem]:
    """Load problems (`load_problems`): one problem per kind and severity, its first five rows in the cause
    (fewest days to full, else the largest figure, first)."""
    rows = f.rows("load_problems") or []
    found = []
    for kind, title in _LOAD_TITLES.items():
        for severity in ("critical", "warning"):
            mine = [r for r in rows if r["kind"] == kind and r["severity"] == severity]
            if not mine:
                continue
            fewest_first = kind.endswith("full_soon")
            mine.sort(key=lambda r: (r["value"] or 0.0) * (1 if fewest_first else -1))
            more = f" and {len(mine) - 5} more" if len(mine) > 5 else ""
            known = [r["since"] for r in mine if r.get("since") is not None]
            found.append(
                Problem(
                    severity,
                    title.format(n=len(mine), s="" if len(mine) == 1 else "s"),
                    "; ".join(str(r["problem"]) for r in mine[:5]) + more,
                    mine[0]["action"],
                    min(known) if known else None,
                    "load_problems",
                )
            )
    return found


def _quorum(f: Findings) -> list[Problem]:
    """KRaft: voters or observers behind or gone, fenced brokers; one problem each (a quorum has few)."""
    rows = [r for r in f.rows("quorum_health") or [] if r["severity"] != "ok"]
    titles = {
        "not_fetching": "{who} {id} is not fetching the metadata log",
        "lagging": "{who} {id} is behind on the metadata log",
        "fenced": "broker {id} is fenced by the KRaft controller",
    }
    return [
        Problem(
            r["severity"],
            titles[r["status"]].format(who="controller" if r["kind"] == "voter" else "broker", id=r["replica_id"]),
            r["problem"],
            r["action"],
            r.get("fenced_since"),
            "quorum_health",
        )
        for r in sorted(rows, key=lambda r: (r["kind"], r["replica_id"]))
    ]


def _migration(f: Findings) -> list[Problem]:
    """A ZooKeeper-to-KRaft migration stalled or finalized, and the partition fields its two views disagree on."""
    rows = [r for r in f.rows("migration_health") or [] if r["severity"] != "ok"]
    phase = [r for r in rows if r["kind"] == "phase"]
    fields = sorted((r for r in rows if r["kind"] == "divergence"), key=lambda r: (r["topic"], r["partition"] or -1))
    titles = {
        "pre_migration": "the migration to KRaft is stalled: the controllers still wait for brokers",
        "dual_write": "the migration to KRaft stopped writing to ZooKeeper",
        "post_migration": "the migration to KRaft is finalized, but this cluster is still read from ZooKeeper",
    }
    found = [
        Problem(r["severity"], titles[r["phase"]], r["problem"], r["action"], r.get("phase_since"), "migration_health")
        for r in phase
    ]
    if fields:
        shown = "; ".join(str(r["problem"]) for r in fields[:5])
        more = f" and {len(fields) - 5} more" if len(fields) > 5 else ""
        found.append(
            Problem(
                "warning",
                f"ZooKeeper and the KRaft metadata disagree on {len(fields)} partition field"
                f"{'s' if len(fields) != 1 else ''} during the migration",
                shown + more,
                fields[0]["action"],
                min(r["diverging_since"] for r in fields),
                "migration_health",
            )
        )
    return found


def _idle_throttles(f: Findings) -> list[Problem]:
    """Replication throttles set with nothing moving through them: one problem, every entity named."""
    rows = sorted(f.rows("idle_throttles") or [], key=lambda r: (r["entity_type"], r["entity_name"]))
    if not rows:
        return []
    names = ", ".join(f"{r['entity_type']} {r['entity_name']}" for r in rows[:5])
    more = f" and {len(rows) - 5} more" if len(rows) > 5 else ""
    return [
        Problem(
            "warning",
            f"replication throttle set with nothing moving on {len(rows)} "
            + ("entity" if len(rows) == 1 else "entities"),
            f"{names}{more}: they cap the next move, or a replica catching up, at the throttled rate",
            f"remove them: {rows[0]['command']} (one command per entity in idle_throttles); a kafka-ops plan's "
            "leftovers: kafka-ops remediation clear-throttles --cluster C --plan-id P",
            None,
            "idle_throttles",
        )
    ]


def group_problems(f: Findings) -> list[Problem]:
    """Consumer groups that lag, stopped, or are skewed, with Burrow's and the what-if's words, and the
    transactions that hold read_committed consumers at a last stable offset below the high watermark."""
    return [*_lagging_groups(f), *_skewed_groups(f), *_transactions(f)]


def _transactions(f: Findings) -> list[Problem]:
    """One problem per open transaction the detector rates warning or critical (its sentence says
    LSO < high watermark and which groups' read_committed consumers wait)."""
    rows = [r for r in f.rows("transactions") or [] if r["severity"] in ("warning", "critical")]
    rows.sort(key=lambda r: (SEVERITY_RANK[r["severity"]], r["topic"], r["partition"]))
    return [
        Problem(
            r["severity"],
            f"{'Hanging transaction' if r['hanging'] else 'Open transaction'} on {r['topic']}-{r['partition']}",
            str(r["problem"]),
            str(r["action"]),
            r.get("start_time"),
            "transactions",
        )
        for r in rows
    ]


def _controller(f: Findings) -> list[Problem]:
    out = []
    for r in f.rows("controller_health") or []:
        since = r.get("last_change_at")
        if r["no_controller"]:
            out.append(
                Problem(
                    severity="critical",
                    title="No active controller",
                    cause="no broker holds /controller, so no partition can get a new leader",
                    action="check the ZooKeeper ensemble and the brokers' controller logs (session expirations)",
                    since=since,
                    source="controller_health",
                )
            )
        if r["zombie_partitions"]:
            out.append(
                Problem(
                    severity="critical",
                    title=f"{_n(r['zombie_partitions'], 'partition')} written by a zombie controller",
                    cause=f"their state carries a controller epoch above the current {r['controller_epoch']}",
                    action="find the broker that still acts as controller (controller logs) and restart it",
                    since=since,
                    source="controller_health",
                )
            )
        if r["churn"]:
            out.append(
                Problem(
                    severity="warning",
                    title=f"{r['elections_last_hour']} controller elections in the last hour",
                    cause=f"the controller is now broker {r['controller_id']} at epoch {r['controller_epoch']}",
                    action="check the ZooKeeper ensemble (latency, session expirations) and the controller broker's "
                    "GC and network; hold off remediation until the controller is stable",
                    since=since,
                    source="controller_health",
                )
            )
    return out


def _brokers(f: Findings) -> list[Problem]:
    since = _under_replicated_since_by_broker(f)
    out = []
    for r in sorted(f.rows("broker_attribution") or [], key=_worst_broker):
        if not r["cause"]:
            continue
        b = r["broker_id"]
        if r["registered"]:
            title = f"Broker {b} is alive but out of sync"
            action = f"check broker {b}: disk, network, GC, replication throttles"
        else:
            title = f"Broker {b} is down"
            action = f"bring broker {b} back (restart it, or replace it keeping broker id {b})"
        out.append(Problem(r["severity"], title, r["cause"], action, since.get(b), "broker_attribution"))
    return out


_PARTITION_PROBLEMS = {
    "offline": (
        "critical",
        "offline (no leader)",
        "bring back the brokers holding them; an unclean leader election would lose data",
    ),
    "under_min_isr": (
        "critical",
        "under min.insync.replicas (acks=all producers fail)",
        "bring back, or fix, the brokers missing from their ISR",
    ),
    "under_replicated": (
        "warning",
        "under-replicated",
        "they recover once the missing brokers are back and caught up: see which broker is to blame",
    ),
}


def _partitions(f: Findings) -> list[Problem]:
    rows = f.rows("isr_health") or []
    since = _under_replicated_since(f)
    out = []
    for status, (severity, what, action) in _PARTITION_PROBLEMS.items():
        hit = sorted((r for r in rows if r["status"] == status), key=lambda r: (r["topic"], r["partition"]))
        if not hit:
            continue
        missing = sorted({b for r in hit for b in set(r["replicas"] or []) - set(r["isr"] or [])})
        cause = f"e.g. {_examples(hit)}"
        if missing:
            cause = f"replicas missing on broker {', '.join(map(str, missing))}; {cause}"
        starts = [since[k] for k in ((r["topic"], r["partition"]) for r in hit) if k in since]
        title = f"{_n(len(hit), 'partition')} {what}"
        out.append(Problem(severity, title, cause, action, min(starts, default=None), "isr_health"))
    return out


def _leaders(f: Findings) -> list[Problem]:
    """Leader imbalance, by the rule of the cluster's controller (`leader_balance_cluster.source`)."""
    out = []
    for r in f.rows("leader_balance_cluster") or []:
        if r["severity"] == "ok":
            continue
        if r.get("source") == "kraft":
            rule = "the KRaft controller counts every partition not led by its preferred replica"
        else:
            rule = f"{_n(r['imbalanced_brokers'], 'broker')} above the imbalance threshold"
        cause = f"leaders per broker: max {r['max_leaders']}, mean {r['mean_leaders']:.1f}; {rule}"
        listed = f.rows("leader_balance_partitions") or []
        blocked = Counter(p["blocked_reason"] for p in listed if not p["fixable"] and p["blocked_reason"])
        steps = [f"run kafka_preferred_leader_election ({r['fixable']} fixable now)"] if r["fixable"] else []
        steps += [f"{n} cannot move yet: {reason}" for reason, n in blocked.most_common()]
        title = f"{_n(r['non_preferred'], 'partition')} not on their preferred leader"
        out.append(Problem(r["severity"], title, cause, "; ".join(steps) or None, None, "leader_balance_cluster"))
    return out


def _reassignments(f: Findings) -> list[Problem]:
    rows = f.rows("reassignments_in_flight") or []
    stuck = [r for r in rows if r["stuck"]]
    if stuck:
        first = max(stuck, key=lambda r: r["age_seconds"] or 0.0)
        return [
            Problem(
                severity="warning",
                title=f"{_n(len(stuck), 'reassignment')} stuck",
                cause=f"{first['topic']}-{first['partition']}: {first['stuck_reason']}",
                action="check the replication throttles and the new replicas' brokers; cancel the plan if it "
                "cannot finish",
                since=first["first_seen"],
                source="reassignments_in_flight",
            )
        ]
    if rows:
        started = [r["first_seen"] for r in rows if r["first_seen"] is not None]
        title = f"{_n(len(rows), 'reassignment')} in flight"
        return [
            Problem(
                "info", title, f"e.g. {_examples(rows)}", None, min(started, default=None), "reassignments_in_flight"
            )
        ]
    return []


def _deletions(f: Findings) -> list[Problem]:
    """Topics pending deletion: one problem per stuck deletion (the health findings leave them out)."""
    rows = f.rows("topic_deletions") or []
    out = [
        Problem(
            "warning",
            f"deletion of topic {r['topic']} is stuck",
            r["cause"],
            r["action"],
            r["pending_since"],
            "topic_deletions",
        )
        for r in sorted(rows, key=lambda r: r["topic"])
        if r["stuck"]
    ]
    running = sorted(r["topic"] for r in rows if not r["stuck"])
    if running:
        names = ", ".join(running[:5]) + (f" and {len(running) - 5} more" if len(running) > 5 else "")
        out.append(Problem("info", f"{_n(len(running), 'topic')} being deleted", names, None, None, "topic_deletions"))
    return out


def _redundancy(f: Findings) -> list[Problem]:
    out = []
    topics = sorted(t["topic"] for t in f.rows("replica_placement_topics") or [])
    if topics:
        names = ", ".join(topics[:5]) + (f" and {len(topics) - 5} more" if len(topics) > 5 else "")
        out.append(
            Problem(
                severity="warning",
                title=f"{_n(len(topics), 'topic')} without redundancy (replication factor 1)",
                cause=f"losing one broker loses their data: {names}",
                action="raise their replication factor",
                since=None,
                source="replica_placement_topics",
            )
        )
    racks = f.rows("replica_placement_partitions") or []
    if racks:
        out.append(
            Problem(
                severity="warning",
                title=f"{_n(len(racks), 'partition')} with replicas sharing a rack",
                cause=f"e.g. {_examples(racks)}",
                action="move replicas so that each sits on another rack",
                since=None,
                source="replica_placement_partitions",
            )
        )
    return out


def _lagging_groups(f: Findings) -> list[Problem]:
    behind = {r["group_id"]: r for r in f.rows("lag_time_groups") or []}
    since = _groups_since(f)
    out = []
    described = set()
    for r in sorted(f.rows("lag_status_groups") or [], key=lambda r: (SEVERITY_RANK[r["severity"]], r["group_id"])):
        if r["severity"] == "ok":
            continue
        g = r["group_id"]
        described.add(g)
        cause = r["cause"] or r["status"]
        if (t := behind.get(g)) is not None and t["max_lag_seconds"] is not None:
            cause += f"; {_time_behind(t)}"
        title = f"Group {g} is {r['status']} ({r['state'] or 'not described'})"
        out.append(Problem(r["severity"], title, cause, _lag_action(r), since.get(g), "lag_status_groups"))
    for g, t in sorted(behind.items()):
        if g in described or t["severity"] not in ("warning", "critical") or t["max_lag_seconds"] is None:
            continue
        action = "the consumers do not keep up: add consumers (up to the partition count) or speed up processing"
        out.append(Problem(t["severity"], f"Group {g} is behind", _time_behind(t), action, None, "lag_time_groups"))
    return out


def _skewed_groups(f: Findings) -> list[Problem]:
    recommendations = {r["group_id"]: r for r in f.rows("assignor_recommendations") or []}
    out = []
    for r in sorted(f.rows("assignor_skew_groups") or [], key=lambda r: (-r["spread"], r["group_id"])):
        if not r["skewed"]:
            continue
        rec = recommendations.get(r["group_id"])
        action = None
        if rec is not None:
            action = f"the what-if could not run: {rec['error']}" if rec["error"] else rec["reason"]
        title = f"Group {r['group_id']} is skewed ({r['assignor'] or 'unknown assignor'})"
        out.append(Problem(r["severity"], title, r["cause"] or "", action, None, "assignor_skew_groups"))
    skewed = {r["group_id"] for r in f.rows("assignor_skew_groups") or [] if r["skewed"]}
    for g, rec in sorted(recommendations.items()):
        if g in skewed or rec["prediction_matches"] is not False:
            continue
        out.append(
            Problem(
                severity="warning",
                title=f"Group {g}'s next rebalance moves {_n(rec['prediction_moves'] or 0, 'partition')}",
                cause="Kafka's own assignor, fed what the members sent, does not reproduce today's assignment "
                "(e.g. partitions were added)",
                action=rec["reason"],
                since=None,
                source="assignor_recommendations",
            )
        )
    return out


def _lag_action(r: Row) -> str:
    if r["rewind_partitions"]:
        return "committed offsets went backwards: someone reset them, or a consumer commits stale offsets"
    if r["stall_partitions"]:
        return "a member holds the partitions but does not move: look for a stuck poll loop or a poison message"
    if r["stop_partitions"]:
        return f"group {r['group_id']} stopped committing: check that its consumers run and are not stuck rebalancing"
    return "lag keeps growing: add consumers (up to the partition count) or speed up processing"


def _time_behind(t: Row) -> str:
    figure = time_behind(t["max_lag_seconds"], group_method(t), duration)
    return f"{figure} behind on {t['max_lag_topic']}-{t['max_lag_partition']}"


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
    since = _under_replicated_since(f)
    specs = [
        _Offenders(
            title="Brokers to blame",
            source="broker_attribution",
            keep=lambda r: r["severity"] != "ok",
            order=_worst_broker,
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
    classic, consumer, ...) and how far behind they are in time."""
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
    return [spec.table(f)]


# -- helpers ----------------------------------------------------------------------------------------


def _under_replicated_since(f: Findings) -> dict[tuple[str, int], datetime]:
    return {
        (r["topic"], r["partition"]): r["under_replicated_since"]
        for r in f.rows("isr_under_replicated") or []
        if r["under_replicated_since"] is not None
    }


def _under_replicated_since_by_broker(f: Findings) -> dict[int, datetime]:
    since: dict[int, datetime] = {}
    for r in f.rows("isr_under_replicated") or []:
        at = r["under_replicated_since"]
        for b in r["missing"] or []:
            if at is not None and (b not in since or at < since[b]):
                since[b] = at
    return since


def _groups_since(f: Findings) -> dict[str, datetime]:
    """Per group, the earliest last commit among its partitions that are not OK."""
    since: dict[str, datetime] = {}
    for p in f.rows("lag_status_partitions") or []:
        at = p.get("last_commit_at")
        g = p["group_id"]
        if p["status"] != "OK" and at is not None and (g not in since or at < since[g]):
            since[g] = at
    return since


def _worst_broker(r: Row) -> tuple[int, int]:
    return SEVERITY_RANK.get(r["severity"], 9), r["broker_id"]


def _behind(t: Row | None) -> str | None:
    if t is None or t["max_lag_seconds"] is None:
        return None
    return time_behind(t["max_lag_seconds"], group_method(t), duration)


def _examples(rows: list[Row], most: int = 3) -> str:
    shown = ", ".join(f"{r['topic']}-{r['partition']}" for r in rows[:most])
    return shown + (f" and {len(rows) - most} more" if len(rows) > most else "")


def _ids(values: list[int] | None) -> str | None:
    return None if values is None else "[" + ", ".join(str(v) for v in values) + "]"


def _leader(leader: int | None) -> str | int | None:
    return "none" if leader == -1 else leader


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def duration(seconds: float | None) -> str:
    """Coarse and short: `45 s`, `35 min`, `1 h 05 min`, `2 d 3 h`."""
    if seconds is None:
        return "unknown"
    s = max(0, int(seconds))
    days, rest = divmod(s, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min"
    return f"{secs} s"
