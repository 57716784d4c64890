"""Every problem family, and the composer of every health gate, by name. Adding a detector: its module in
`kafka_ops.detectors`, its family's module here (or an entry in one), and a line below.

`METADATA_FAMILIES` read the analysis of a metadata snapshot (ZooKeeper or KRaft), `GROUP_FAMILIES` that
of a group collection; each returns its problems worst-first within the family. `GATES` maps a health
gate (`validation.suites` check name) to the composer of its problem from the gate's failing rows;
`PER_GROUP` the gates whose failing rows are groups, each alerting per group (each group has its own owner),
to the composer of every failing group's own problem.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kafka_ops.problems import (
    controller,
    groups,
    leaders,
    load,
    migration,
    partitions,
    quorum,
    reassignments,
    retention,
    throttles,
    topics,
    transactions,
)
from kafka_ops.problems.problem import FindingsRows, Problem, Row

Family = Callable[[FindingsRows], list[Problem]]
GateComposer = Callable[[list[Row], FindingsRows, Mapping[str, float]], Problem]
GroupComposer = Callable[[list[Row], FindingsRows], dict[str, Problem]]

METADATA_FAMILIES: tuple[Family, ...] = (
    controller.problems,
    partitions.problems,
    leaders.problems,
    reassignments.problems,
    topics.problems,
    throttles.problems,
    quorum.problems,
    migration.problems,
    load.problems,
)
GROUP_FAMILIES: tuple[Family, ...] = (groups.problems, retention.problems, transactions.problems)

GATES: dict[str, GateComposer] = {
    partitions.OFFLINE: partitions.offline,
    partitions.UNDER_MIN_ISR: partitions.under_min_isr,
    leaders.LEADER_IMBALANCE: leaders.imbalance,
    controller.CHURN: controller.churn,
    **{name: quorum.gate(name) for name in (quorum.MAJORITY, quorum.KEEP_UP, quorum.FENCED)},
    **{
        name: migration.gate(name)
        for name in (migration.DUAL_WRITE, migration.NOT_STALLED, migration.VIEWS_AGREE, migration.READ_LIVE)
    },
    **{name: groups.gate(name) for name in (groups.IN_ERR, groups.IN_WARN)},
    **{name: retention.gate(name) for name in (retention.LOSING, retention.AT_RISK)},
    **{name: transactions.gate(name) for name in (transactions.HANGING, transactions.LONG_OPEN)},
    **{name: load.gate(name) for name in (load.RUNNING_OUT, load.WITHIN_LIMITS, load.HOT_SPOTS)},
}

PER_GROUP: dict[str, GroupComposer] = {
    groups.IN_ERR: groups.per_group,
    groups.IN_WARN: groups.per_group,
    retention.LOSING: retention.per_group,
    retention.AT_RISK: retention.per_group,
}


def metadata_problems(findings: FindingsRows) -> list[Problem]:
    """Controller, brokers, partitions, leaders, reassignments, topics, throttles, quorum, migration, load."""
    return [p for family in METADATA_FAMILIES for p in family(findings)]


def group_problems(findings: FindingsRows) -> list[Problem]:
    """Consumer groups (lag, time behind, skew, what-if, records lost or about to be lost to retention) and open
    transactions."""
    return [p for family in GROUP_FAMILIES for p in family(findings)]
