"""The KRaft controller quorum and fenced brokers (`quorum_health`): the detector writes each replica's
sentence (`problem`) and step (`action`); this module titles and groups them.

Gates and report: `quorum_has_a_majority`, `quorum_replicas_keep_up`, `no_fenced_brokers`, one problem
each over the replicas `FAILS` picks (the gate frame's check columns use the same predicates).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kafka_ops.problems.problem import FindingsRows, Problem, Row, gate_problems, since
from kafka_ops.problems.words import more, plural

MAJORITY = "quorum_has_a_majority"
KEEP_UP = "quorum_replicas_keep_up"
FENCED = "no_fenced_brokers"
_GATE_TITLES: dict[str, Callable[[int], str]] = {
    MAJORITY: lambda n: f"the KRaft controller quorum has lost its majority: {plural(n, 'replica')}",
    KEEP_UP: lambda n: f"KRaft metadata replication is behind on {plural(n, 'replica')}",
    FENCED: lambda n: (
        f"{plural(n, 'broker')} fenced by the KRaft controller: they lead nothing and are out of every ISR"
    ),
}
FAILS: dict[str, Callable[[Row], bool]] = {
    MAJORITY: lambda r: r["kind"] == "voter" and r["severity"] == "critical",
    KEEP_UP: lambda r: r["status"] in ("not_fetching", "lagging"),
    FENCED: lambda r: r["kind"] == "fenced_broker",
}
"""Which `quorum_health` rows fail each gate."""


def gate(name: str) -> Callable[[list[Row], FindingsRows, Mapping[str, float]], Problem]:
    """The composer of quorum gate `name` over its failing `quorum_health` rows."""

    def compose(rows: list[Row], findings: FindingsRows, params: Mapping[str, float]) -> Problem:
        rows = sorted(rows, key=lambda r: (r["kind"], r["replica_id"]))
        cause = "; ".join(str(r["problem"]) for r in rows[:3]) + more(len(rows), 3, "replicas")
        action = "; ".join(str(r["action"]) for r in rows[:3] if r.get("action"))
        severity = "critical" if name == MAJORITY else "warning"
        return Problem(
            severity,
            _GATE_TITLES[name](len(rows)),
            cause,
            action or "check the controller quorum",
            since((r.get("fenced_since") for r in rows), findings),
            "quorum_health",
            name,
            tuple(rows),
        )

    return compose


def problems(findings: FindingsRows) -> list[Problem]:
    """The quorum gates' problems, as the page says them, over the replicas each gate fails."""
    return gate_problems(findings.rows("quorum_health") or [], findings, FAILS, gate)
