"""What a problem is to the on-call engineer, and the one rule for when it began.

A `Problem` is composed once, by its family's module in this package, from findings rows; the gates,
the alerts, the HTML report, the CLI digest and the metrics show it as composed and never reword it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

Row = dict[str, Any]


class FindingsRows(Protocol):
    """The findings tables of one published analysis, as the catalogue reads them."""

    @property
    def captured_at(self) -> datetime:
        """Capture time of the analysed batch (snapshot or group collection)."""
        ...

    def rows(self, table: str) -> list[Row] | None:
        """The rows of findings `table`, or None when the analysis did not write it."""
        ...


@dataclass(frozen=True)
class BatchFindings:
    """Findings tables computed from one batch (a snapshot or a group collection) without an analysis,
    as the catalogue reads findings (`FindingsRows`)."""

    snapshot_id: str
    captured_at: datetime
    tables: Mapping[str, list[Row]] = field(default_factory=dict)

    def rows(self, table: str) -> list[Row] | None:
        return self.tables.get(table)


@dataclass(frozen=True)
class Problem:
    """One thing an on-call engineer should know: what (title), why (cause), what to do (action)
    and since when, worst rows first."""

    severity: str
    """critical, warning or info."""
    title: str
    cause: str
    action: str | None
    since: datetime
    """When the problem began, by `since` (the one rule)."""
    source: str
    """The findings table it comes from."""
    key: str = ""
    """The catalogue entry (a gate's name for the problems a gate judges)."""
    rows: tuple[Row, ...] = ()
    """The affected rows, worst first, keyed by the findings' column names."""

    @property
    def about(self) -> dict[str, Any]:
        """What it is about, as a silence matches it (`kafka_ops.silences.Silence.covers`)."""
        return subjects(self.rows, len(self.rows))


def subjects(rows: Sequence[Mapping[str, Any]], total: int) -> dict[str, Any]:
    """The topics, partitions, brokers and group that `rows` (`total` affected rows in all) are about: each
    only when every affected row is listed and names one (the group: when they all name the same one)."""
    complete = bool(rows) and len(rows) >= total
    partitions = complete and all(r.get("topic") is not None and r.get("partition") is not None for r in rows)
    brokers = complete and all(r.get("broker_id") is not None and r.get("topic") is None for r in rows)
    groups = {str(r.get("group_id")) for r in rows}
    return {
        "topics": tuple(sorted({str(r["topic"]) for r in rows}))
        if complete and all(r.get("topic") is not None for r in rows)
        else (),
        "partitions": tuple((str(r["topic"]), int(r["partition"])) for r in rows) if partitions else (),
        "brokers": tuple(int(r["broker_id"]) for r in rows) if brokers else (),
        "group": groups.pop() if len(groups) == 1 and rows and rows[0].get("group_id") is not None else None,
    }


def since(starts: Iterable[datetime | None], findings: FindingsRows) -> datetime:
    """When a problem began: the earliest start its findings record for the affected rows (an
    under-replication streak's start, the first controller election of the hour, a group's oldest
    commit among its lagging partitions, a fenced broker's fencing, a transaction's start); when they
    record none, the analysed batch's capture time.

    Why that fallback rather than nothing: every consumer needs one moment to print and to order by,
    and the capture time is the earliest moment this analysis can vouch for (the problem was there
    then; when it began before, the findings do not say). It is never later than the first sighting,
    and the alerting incident keeps the earliest `since` across runs, so a problem that lasts keeps
    the time it was first seen rather than moving with each snapshot."""
    known = [s for s in starts if s is not None]
    return min(known) if known else findings.captured_at.astimezone(UTC)


def gate_problems(
    rows: list[Row],
    findings: FindingsRows,
    fails: Mapping[str, Callable[[Row], bool]],
    compose: Callable[[str], Callable[[list[Row], FindingsRows, Mapping[str, float]], Problem]],
) -> list[Problem]:
    """For the report and the digest, the problems a family's gates would page with: per gate (in
    `fails` order) with failing rows, its composer over them."""
    out = []
    for name, failing in fails.items():
        hit = [r for r in rows if failing(r)]
        if hit:
            out.append(compose(name)(hit, findings, {}))
    return out


def groups_rolled_up(
    severity: str, title: str, cause: str, table: str, name: str, *, rows: list[Row], mine: list[Problem]
) -> Problem:
    """A group gate's problem from its failing groups' own (`mine`, one per row of `rows`): the first three
    groups' actions, the earliest since, and each row with its group's since."""
    return Problem(
        severity,
        title,
        cause,
        "; ".join(f"group {r['group_id']}: {p.action}" for r, p in zip(rows[:3], mine, strict=False)),
        min(p.since for p in mine),
        table,
        name,
        tuple({**r, "since": p.since} for r, p in zip(rows, mine, strict=True)),
    )
