"""Partitions off their preferred leader (`leader_balance_*`), by the rule of the cluster's controller
(`leader_balance_cluster.source`): ZooKeeper's `leader.imbalance.per.broker.percentage`, or KRaft's,
which counts every partition not led by its preferred replica.

Gate: `leader_imbalance_within_threshold` (the brokers beyond the bound). Report: the same problem when
the detector rates the balance a warning by the controller's own rule, else (info) the cluster's
balance in figures. Both say what to do with `election_steps`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from kafka_ops.problems.problem import FindingsRows, Problem, Row, since
from kafka_ops.problems.words import more, plural

LEADER_IMBALANCE = "leader_imbalance_within_threshold"
LEADER_BALANCE = "leader_balance"


def is_kraft(findings: FindingsRows) -> bool:
    """The snapshot's cluster runs KRaft, as the leader_balance detector read it from the commit log; an
    analysis written before it recorded one is judged as it was then, by the ZooKeeper rule."""
    return any(r.get("source") == "kraft" for r in findings.rows("leader_balance_cluster") or [])


def imbalance(rows: list[Row], findings: FindingsRows, params: Mapping[str, float] | None = None) -> Problem:
    """Brokers beyond the imbalance bound (`rows`: their `leader_balance_brokers` rows);
    `params["leader_imbalance_percent"]`, when given, is the bound the gate applied (the cause quotes it)."""
    if is_kraft(findings):
        return _off_preferred(rows, findings)
    rows = sorted(rows, key=lambda r: (-_percent(r), r["broker_id"]))
    threshold = (params or {}).get("leader_imbalance_percent")
    beyond = f" > {threshold:g}%" if threshold is not None else ""
    parts = [
        f"broker {r['broker_id']} leads {r['preferred'] - r['preferred_led_by_other']} of the {r['preferred']} "
        f"partitions it is preferred leader for ({_percent(r):.0f}%{beyond})"
        for r in rows[:3]
    ]
    return Problem(
        "warning",
        f"leader imbalance beyond the threshold on {plural(len(rows), 'broker')}",
        "; ".join(parts) + more(len(rows), 3, "brokers"),
        election_steps(findings),
        since([], findings),
        "leader_balance_brokers",
        LEADER_IMBALANCE,
        tuple(rows),
    )


def _flagged(findings: FindingsRows, *, kraft: bool) -> list[Row]:
    """The brokers the controller's rule flags: on KRaft any partition off its preferred leader, on
    ZooKeeper the detector's `imbalanced` (beyond `leader_imbalance_percent`)."""
    rows = findings.rows("leader_balance_brokers") or []
    if kraft:
        return [r for r in rows if (r["preferred_led_by_other"] or 0) > 0]
    return [r for r in rows if r.get("imbalanced")]


def _off_preferred(rows: list[Row], findings: FindingsRows) -> Problem:
    """The KRaft controller's rule: every partition not led by its preferred replica counts."""
    rows = sorted(rows, key=lambda r: (-(r["preferred_led_by_other"] or 0), r["broker_id"]))
    (cluster,) = findings.rows("leader_balance_cluster") or [{}]
    off, fixable = int(cluster.get("non_preferred") or 0), int(cluster.get("fixable") or 0)
    parts = [
        f"broker {r['broker_id']} leads {r['preferred'] - r['preferred_led_by_other']} of the {r['preferred']} "
        "partitions it is preferred leader for"
        for r in rows[:3]
    ]
    cause = (
        f"{plural(off, 'partition')} not led by their preferred replica, {fixable} of them fixable now (preferred "
        "replica alive and in the ISR); KRaft counts every one, it has no imbalance percentage: "
        + "; ".join(parts)
        + more(len(rows), 3, "brokers")
    )
    return Problem(
        "warning",
        f"partitions not led by their preferred replica on {plural(len(rows), 'broker')}",
        cause,
        election_steps(findings),
        since([], findings),
        "leader_balance_brokers",
        LEADER_IMBALANCE,
        tuple(rows),
    )


def _percent(r: Row) -> float:
    """The broker's imbalance in percent (the gate frame carries it; the findings row its ratio)."""
    if r.get("imbalance_percent") is not None:
        return float(r["imbalance_percent"])
    return float(r["imbalance_ratio"] or 0.0) * 100.0


def election_steps(findings: FindingsRows) -> str:
    """What to do about partitions off their preferred leader: elect the fixable ones, unblock the rest."""
    listed = findings.rows("leader_balance_partitions")
    if listed is None:
        return "run kafka_preferred_leader_election"
    fixable = sum(1 for p in listed if p["fixable"])
    blocked = Counter(p["blocked_reason"] for p in listed if not p["fixable"] and p["blocked_reason"])
    steps = []
    if fixable:
        steps.append(
            f"run kafka_preferred_leader_election: {plural(fixable, 'partition')} can move back to their "
            "preferred leader now"
        )
    steps += [
        f"{plural(n, 'partition')} cannot move back yet ({reason}): fix that first, then elect"
        for reason, n in blocked.most_common()
    ]
    return "; ".join(steps) or "run kafka_preferred_leader_election"


def problems(findings: FindingsRows) -> list[Problem]:
    """The gate's problem when the detector rates the balance a warning (by the controller's own rule:
    the brokers it flags), else the cluster's balance in figures when it rates it info."""
    out = []
    for r in findings.rows("leader_balance_cluster") or []:
        if r["severity"] == "ok":
            continue
        flagged = _flagged(findings, kraft=r.get("source") == "kraft")
        if r["severity"] == "warning" and flagged:
            out.append(imbalance(flagged, findings))
            continue
        if r.get("source") == "kraft":
            rule = "the KRaft controller counts every partition not led by its preferred replica"
        else:
            rule = f"{plural(r['imbalanced_brokers'], 'broker')} above the imbalance threshold"
        cause = f"leaders per broker: max {r['max_leaders']}, mean {r['mean_leaders']:.1f}; {rule}"
        title = f"{plural(r['non_preferred'], 'partition')} not on their preferred leader"
        action = election_steps(findings) if r["non_preferred"] else None
        out.append(
            Problem(r["severity"], title, cause, action, since([], findings), "leader_balance_cluster", LEADER_BALANCE)
        )
    return out
