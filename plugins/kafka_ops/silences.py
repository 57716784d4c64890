"""Silences and maintenance windows: what an operator (or a running plan) says not to page for a while.

A silence covers, on one cluster and between its start and its end, the problems about what it names:

* nothing named: the whole cluster (a maintenance window: every page, "cannot see the cluster" included);
* `brokers`: a problem about brokers, when every broker it is about is one of them (a broker down, a
  broker to blame, leader imbalance on it). A partition that goes offline or under its min ISR while a
  silenced broker is down still pages: produce is failing there, whoever's maintenance it is;
* `topics` (regular expressions, each matching a whole name): a problem about partitions or topics when
  every topic it is about matches one;
* `groups` (likewise): a problem about one consumer group whose id matches one;
* `partitions` (`(topic, partition)`, from a plan): a problem about partitions when every one is listed.

`keys`, when given, limit it to those problems (alert keys, e.g. `leader_imbalance_within_threshold`).
A problem that is about more than the silence names (a broker kill during a plan puts other partitions
under their min ISR too) is not covered and pages.

A silenced problem is still judged and recorded as an incident (the report shows it silenced, with the
silence's reason and end); it is just not sent. If it still fires when the silence ends it pages then, as
a new problem would; one that clears while silenced resolves quietly, or with a resolve to the sinks that
heard it open before the silence began.

Every silence says who set it, why and until when: one without an end or a reason is refused, as is one
longer than `MAX_LENGTH`. Expired silences are kept `KEPT_AFTER_END` for the record, then dropped.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from kafka_ops.errors import ConfigError

MAX_LENGTH = timedelta(days=30)
"""The longest silence: a problem silenced for longer is an accepted risk, which belongs in the thresholds."""
KEPT_AFTER_END = timedelta(days=7)
MAX_REASON_CHARS = 500
MAX_ITEMS = 10_000
"""Names a silence may list (a plan's partitions included)."""


@dataclass(frozen=True)
class Silence:
    """One silence of `cluster` (see the module docstring for what it covers)."""

    id: str
    cluster: str
    starts_at: datetime
    ends_at: datetime
    reason: str
    created_by: str
    brokers: tuple[int, ...] = ()
    topics: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    partitions: tuple[tuple[str, int], ...] = ()
    keys: tuple[str, ...] = ()
    plan_id: str | None = None
    """Set when a plan's execution set it (ended by the execution itself)."""
    ended_by: str | None = None
    """Who ended it early (its `ends_at` is then the time they did)."""
    _partitions: frozenset[tuple[str, int]] = field(default=frozenset(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        where = f"silence {self.id!r} of cluster {self.cluster!r}"
        for name in ("starts_at", "ends_at"):
            value = getattr(self, name)
            if not isinstance(value, datetime) or value.utcoffset() is None:
                raise ConfigError(f"{where}: {name} must be a timezone-aware time, got {value!r}")
        if self.ends_at <= self.starts_at and self.ended_by is None:
            raise ConfigError(f"{where}: it ends ({self.ends_at:%Y-%m-%d %H:%M %Z}) before it starts")
        if self.ends_at - self.starts_at > MAX_LENGTH:
            raise ConfigError(
                f"{where}: {self.ends_at - self.starts_at} is longer than the longest silence, {MAX_LENGTH}"
            )
        if not isinstance(self.reason, str) or not self.reason.strip():
            raise ConfigError(f"{where}: give a reason (what is being done, and by whom to ask)")
        if len(self.reason) > MAX_REASON_CHARS:
            raise ConfigError(f"{where}: the reason is longer than {MAX_REASON_CHARS} characters")
        if not isinstance(self.created_by, str) or not self.created_by.strip():
            raise ConfigError(f"{where}: say who sets it (created_by)")
        object.__setattr__(self, "brokers", tuple(sorted({_broker(b, where) for b in self.brokers})))
        object.__setattr__(self, "topics", _patterns(self.topics, f"{where}: topics"))
        object.__setattr__(self, "groups", _patterns(self.groups, f"{where}: groups"))
        object.__setattr__(self, "partitions", tuple(sorted({(str(t), int(p)) for t, p in self.partitions})))
        object.__setattr__(self, "keys", tuple(sorted(set(self.keys))))
        named = len(self.brokers) + len(self.topics) + len(self.groups) + len(self.partitions)
        if named > MAX_ITEMS:
            raise ConfigError(f"{where}: names {named} items, more than {MAX_ITEMS}")
        object.__setattr__(self, "_partitions", frozenset(self.partitions))

    @property
    def whole_cluster(self) -> bool:
        return not (self.brokers or self.topics or self.groups or self.partitions)

    def active(self, at: datetime) -> bool:
        return self.starts_at <= at < self.ends_at

    def covers(
        self,
        key: str,
        *,
        topics: Collection[str] = (),
        partitions: Collection[tuple[str, int]] = (),
        brokers: Collection[int] = (),
        group: str | None = None,
    ) -> bool:
        """Whether a problem `key` about these topics, partitions, brokers or group is within this silence
        (whatever the time: see `active`)."""
        if self.keys and key not in self.keys:
            return False
        if self.whole_cluster:
            return True
        if group is not None:
            return any(re.fullmatch(p, group) for p in self.groups)
        if partitions and self._partitions and all(tp in self._partitions for tp in partitions):
            return True
        if topics:
            return bool(self.topics) and all(any(re.fullmatch(p, t) for p in self.topics) for t in topics)
        return bool(brokers) and not partitions and set(brokers) <= set(self.brokers)

    def describe(self) -> str:
        """One line: what it covers, until when, who set it and why."""
        what = []
        if self.keys:
            what.append(f"{', '.join(self.keys)} on")
        if self.whole_cluster:
            what.append(f"cluster {self.cluster}")
        if self.brokers:
            what.append(f"broker{'s' if len(self.brokers) > 1 else ''} {', '.join(map(str, self.brokers))}")
        if self.topics:
            what.append(f"topics {', '.join(self.topics)}")
        if self.groups:
            what.append(f"groups {', '.join(self.groups)}")
        if self.partitions:
            what.append(f"the {len(self.partitions)} partitions of plan {self.plan_id or '?'}")
        return (
            f"silenced until {self.ends_at:%Y-%m-%d %H:%M %Z} by {self.created_by} ({self.id}): "
            f"{' '.join(what)}: {self.reason}"
        )

    def ended(self, at: datetime, by: str) -> Silence:
        """This silence ended at `at` by `by` (unchanged when it had ended already)."""
        if at >= self.ends_at:
            return self
        return replace(self, ends_at=max(at, self.starts_at), ended_by=by)


def new_silence(
    cluster: str,
    *,
    starts_at: datetime,
    ends_at: datetime | None,
    reason: str | None,
    created_by: str,
    brokers: Iterable[int] = (),
    topics: Iterable[str] = (),
    groups: Iterable[str] = (),
    partitions: Iterable[tuple[str, int]] = (),
    keys: Iterable[str] = (),
    plan_id: str | None = None,
) -> Silence:
    """A new silence with a fresh id; `ConfigError` naming what is wrong (no end, no reason, too long)."""
    if ends_at is None:
        raise ConfigError(f"a silence of cluster {cluster!r} needs an end (a silence without one is forgotten)")
    return Silence(
        id=f"s-{secrets.token_hex(5)}",
        cluster=cluster,
        starts_at=starts_at,
        ends_at=ends_at,
        reason=reason or "",
        created_by=created_by,
        brokers=tuple(brokers),
        topics=tuple(topics),
        groups=tuple(groups),
        partitions=tuple(partitions),
        keys=tuple(keys),
        plan_id=plan_id,
    )


def silencing(silences: Iterable[Silence], at: datetime, key: str, **about: Any) -> Silence | None:
    """The active silence (the one ending last) that covers problem `key` about `about` at `at`."""
    covering = [s for s in silences if s.active(at) and s.covers(key, **about)]
    return max(covering, key=lambda s: (s.ends_at, s.id)) if covering else None


def kept(silences: Iterable[Silence], at: datetime) -> tuple[Silence, ...]:
    """The silences still worth keeping at `at`: active, future, or ended within `KEPT_AFTER_END`."""
    return tuple(sorted((s for s in silences if at - s.ends_at <= KEPT_AFTER_END), key=lambda s: (s.starts_at, s.id)))


def encode(silence: Silence) -> dict[str, Any]:
    return {
        "id": silence.id,
        "cluster": silence.cluster,
        "starts_at": silence.starts_at.isoformat(),
        "ends_at": silence.ends_at.isoformat(),
        "reason": silence.reason,
        "created_by": silence.created_by,
        "brokers": list(silence.brokers),
        "topics": list(silence.topics),
        "groups": list(silence.groups),
        "partitions": [[t, p] for t, p in silence.partitions],
        "keys": list(silence.keys),
        "plan_id": silence.plan_id,
        "ended_by": silence.ended_by,
    }


def decode(entry: Mapping[str, Any]) -> Silence:
    """A stored silence; `ConfigError`, `KeyError`, `TypeError` or `ValueError` for one that is not."""
    return Silence(
        id=str(entry["id"]),
        cluster=str(entry["cluster"]),
        starts_at=datetime.fromisoformat(entry["starts_at"]),
        ends_at=datetime.fromisoformat(entry["ends_at"]),
        reason=entry["reason"],
        created_by=entry["created_by"],
        brokers=tuple(entry.get("brokers") or ()),
        topics=tuple(entry.get("topics") or ()),
        groups=tuple(entry.get("groups") or ()),
        partitions=tuple((str(t), int(p)) for t, p in entry.get("partitions") or ()),
        keys=tuple(entry.get("keys") or ()),
        plan_id=entry.get("plan_id"),
        ended_by=entry.get("ended_by"),
    )


_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(m|min|h|d)")
_UNIT = {"m": timedelta(minutes=1), "min": timedelta(minutes=1), "h": timedelta(hours=1), "d": timedelta(days=1)}


def parse_duration(text: str, where: str) -> timedelta:
    """`90m`, `2h`, `1.5h`, `1d` as a positive time; `ConfigError` naming `where` otherwise."""
    match = _DURATION.fullmatch(str(text).strip())
    if not match or float(match[1]) <= 0:
        raise ConfigError(f"{where}: {text!r} is not a duration such as 90m, 2h or 1d")
    return float(match[1]) * _UNIT[match[2]]


def _broker(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{where}: broker {value!r} is not a broker id (a whole number ≥ 0)")
    return value


def _patterns(patterns: Iterable[str], where: str) -> tuple[str, ...]:
    out = []
    for i, p in enumerate(patterns):
        if not isinstance(p, str) or not p.strip():
            raise ConfigError(f"{where}[{i}]: an empty pattern")
        try:
            re.compile(p)
        except re.error as e:
            raise ConfigError(f"{where}[{i}]: {p!r} is not a regular expression: {e}") from None
        out.append(p)
    return tuple(sorted(set(out)))
