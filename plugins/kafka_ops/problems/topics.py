"""Topics: deletions pending or stuck (`topic_deletions`), no redundancy (`replica_placement_topics`),
replicas sharing a rack (`replica_placement_partitions`). Report only."""

from __future__ import annotations

from kafka_ops.problems.problem import FindingsRows, Problem, since
from kafka_ops.problems.words import examples, plural

DELETION_STUCK = "topic_deletion_stuck"
DELETING = "topics_being_deleted"
NO_REDUNDANCY = "topics_without_redundancy"
SHARED_RACK = "replicas_sharing_a_rack"


def problems(findings: FindingsRows) -> list[Problem]:
    return [*_deletions(findings), *_redundancy(findings)]


def _deletions(findings: FindingsRows) -> list[Problem]:
    """One problem per stuck deletion (the health findings leave them out), one for those running."""
    rows = findings.rows("topic_deletions") or []
    out = [
        Problem(
            "warning",
            f"deletion of topic {r['topic']} is stuck",
            r["cause"],
            r["action"],
            since([r["pending_since"]], findings),
            "topic_deletions",
            DELETION_STUCK,
            (r,),
        )
        for r in sorted(rows, key=lambda r: r["topic"])
        if r["stuck"]
    ]
    running = sorted((r for r in rows if not r["stuck"]), key=lambda r: r["topic"])
    if running:
        names = _names([r["topic"] for r in running])
        out.append(
            Problem(
                "info",
                f"{plural(len(running), 'topic')} being deleted",
                names,
                None,
                since((r["pending_since"] for r in running), findings),
                "topic_deletions",
                DELETING,
                tuple(running),
            )
        )
    return out


def _redundancy(findings: FindingsRows) -> list[Problem]:
    out = []
    topics = sorted(findings.rows("replica_placement_topics") or [], key=lambda t: t["topic"])
    if topics:
        out.append(
            Problem(
                severity="warning",
                title=f"{plural(len(topics), 'topic')} without redundancy (replication factor 1)",
                cause=f"losing one broker loses their data: {_names([t['topic'] for t in topics])}",
                action="raise their replication factor",
                since=since([], findings),
                source="replica_placement_topics",
                key=NO_REDUNDANCY,
                rows=tuple(topics),
            )
        )
    racks = findings.rows("replica_placement_partitions") or []
    if racks:
        out.append(
            Problem(
                severity="warning",
                title=f"{plural(len(racks), 'partition')} with replicas sharing a rack",
                cause=f"e.g. {examples(racks)}",
                action="move replicas so that each sits on another rack",
                since=since([], findings),
                source="replica_placement_partitions",
                key=SHARED_RACK,
                rows=tuple(racks),
            )
        )
    return out


def _names(names: list[str], most: int = 5) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")
