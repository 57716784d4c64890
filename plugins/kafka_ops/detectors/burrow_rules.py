"""Burrow's lag rules over plain rows, without Spark: the consumer status a group collection pages with
as soon as it lands.

The rules, the window and the rows are `detectors.lag_status`'s (its docstring says them); this module
applies them to Python rows of the same lake tables, for the paging path (`validation.group_checks`),
which must not wait minutes for a Spark analysis. `tests/unit/detectors/test_lag_status.py` runs every
scenario through both and holds their rows equal, so a page reads the same whichever path sent it.
The constants both use live here, where no Spark import is needed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

Row = dict[str, Any]
Key = tuple[str, str, int]

KEY = ["group_id", "topic", "partition"]
STABLE = "Stable"
LIVE_STATES = (STABLE, "Assigning", "Reconciling")
"""States in which members hold their partitions and consume: a classic group only when Stable (a
rebalance stops it); a consumer-protocol group (KIP-848) also while the broker assigns or members
reconcile, since each member keeps consuming what it holds meanwhile (no classic group has these states)."""
RECENT_HEAD_S = 100
"""How recent an end offset at or below the committed offset must be to hold STOP back (Burrow #303):
Burrow keeps one broker end offset per `offset-refresh` (10 s), the last `intervals` (10) of them."""
# Burrow's StatusConstant order, which its group roll-up and our `cause` follow
CODES = {"OK": 1, "WARN": 2, "STOP": 4, "STALL": 5, "REWIND": 6}
PARTITION_SEVERITY = {"OK": "ok", "WARN": "warning", "STOP": "critical", "STALL": "critical", "REWIND": "critical"}
GROUP_SEVERITY = {"OK": "ok", "WARN": "warning", "ERR": "critical"}
NO_ENTITY = "-"
# "user|client" of a quota entity (C: the member's own client id) -> Kafka's precedence for a user
# that has no quota entity of its own (see `lag_status.consumer_quotas`)
QUOTA_PRECEDENCE = {"<default>|C": 1, "<default>|<default>": 2, f"<default>|{NO_ENTITY}": 3,
                    f"{NO_ENTITY}|C": 4, f"{NO_ENTITY}|<default>": 5}  # fmt: skip
QUOTA_KEY = "consumer_byte_rate"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Now:
    """The latest group collection (the rules' "now") and the thresholds they read."""

    snapshot_id: str
    captured_at: datetime
    lag_window: int
    lag_allowed: float


@dataclass(frozen=True)
class _Entry:
    """One row of a partition's window: a sample or a logged commit (newest first in a window)."""

    at: datetime
    offset: int
    lag: int | None
    new_commit: bool


def micros(at: datetime) -> int:
    """Microseconds since the epoch (a naive time is UTC, as the lake's are), exact as Spark's `unix_micros`."""
    aware = at if at.tzinfo is not None else at.replace(tzinfo=UTC)
    return (aware - _EPOCH) // timedelta(microseconds=1)


def lag_status(
    now: Now,
    *,
    offsets: Iterable[Row],
    commits: Iterable[Row],
    members: Iterable[Row],
    groups: Iterable[Row],
    quotas: Iterable[Row],
) -> tuple[list[Row], list[Row]]:
    """Pure: the window's `group_offsets` and `group_commits` rows, the latest collection's
    `group_members` and `consumer_groups` rows, and the `quotas` rows of the newest metadata snapshot at
    or before it → (`lag_status_partitions`, `lag_status_groups`) rows, as the Spark detector writes them."""
    members = [m for m in members if m["snapshot_id"] == now.snapshot_id]
    states = {g["group_id"]: g["state"] for g in groups if g["snapshot_id"] == now.snapshot_id}
    partitions = partition_rows(list(offsets), list(commits), members, states, now)
    return partitions, group_rows(partitions, states, consumer_quotas(members, quotas), now)


def samples_of(offsets: Iterable[Row]) -> list[Row]:
    """The rows that are samples (a committed offset or a share group's position, and a lag), a share
    group's `committed_offset` being its position (`end_offset - lag`)."""
    out = []
    for r in offsets:
        share = r.get("start_offset") is not None and r["committed_offset"] is None
        position = _minus(r["end_offset"], r["lag"]) if share else r["committed_offset"]
        if position is not None and r["lag"] is not None:
            out.append({**r, "committed_offset": position})
    return out


def partition_rows(
    offsets: list[Row], commits: list[Row], members: list[Row], states: Mapping[str, str | None], now: Now
) -> list[Row]:
    """`lag_status_partitions`: each partition the latest collection sampled, rated on its window of
    logged commits (2 or more in the log) or else of samples."""
    samples = samples_of(offsets)
    by_key: dict[Key, list[Row]] = {}
    for s in samples:
        by_key.setdefault(_key(s), []).append(s)
    current = {_key(s) for s in samples if s["snapshot_id"] == now.snapshot_id}
    logged = _logged(commits, current, now)
    owners = _owners(members)
    out = []
    for key in sorted(current):
        newest = sorted(by_key[key], key=lambda s: (s["captured_at"], s["snapshot_id"]), reverse=True)
        window = newest[: now.lag_window]
        latest = window[0]
        if key in logged:
            entries = [_at_commit(at, offset, by_key[key], now) for at, offset in logged[key]]
        else:
            entries = [
                _Entry(s["captured_at"], s["committed_offset"], s["lag"],
                       i + 1 == len(window) or window[i + 1]["committed_offset"] != s["committed_offset"])
                for i, s in enumerate(window)
            ]  # fmt: skip
        owner, group_state = owners.get(key), states.get(key[0])
        live = owner is not None and group_state in LIVE_STATES and key not in logged
        recent_end = _recent_end(by_key[key], now)
        out.append(_partition_row(key, entries, latest, now, owner=owner, live=live, recent_end=recent_end))
    return out


def _partition_row(
    key: Key, entries: list[_Entry], latest: Row, now: Now, *, owner: str | None, live: bool, recent_end: int | None
) -> Row:
    oldest, lags = entries[-1], [e.lag for e in entries if e.lag is not None]
    commits = [e for e in entries if e.new_commit]
    last_commit = commits[0]
    offsets = [e.offset for e in entries]
    first_rewind = next((rewound for rewound in reversed(_rewinds(entries)) if rewound is not None), None)
    status = _status(
        samples=len(entries),
        lag=latest["lag"],
        stopped=(micros(now.captured_at) - micros(last_commit.at) > micros(last_commit.at) - micros(oldest.at))
        and not (recent_end is not None and recent_end <= latest["committed_offset"]),
        live=live,
        unrecovered_rewind=bool(first_rewind),
        min_lag=min(lags) if lags else None,
        stalled=min(offsets) == max(offsets),
        lag_fell=_lag_fell(entries),
        known_lags=len(lags),
        allowed=now.lag_allowed,
    )
    group_id, topic, partition = key
    return {
        "snapshot_id": now.snapshot_id, "group_id": group_id, "topic": topic, "partition": partition,
        "status": status, "committed_offset": latest["committed_offset"], "end_offset": latest["end_offset"],
        "lag": latest["lag"], "lag_start": oldest.lag, "lag_end": latest["lag"], "samples": len(entries),
        "complete": len(entries) / now.lag_window, "last_commit_at": last_commit.at, "owner": owner,
        "severity": PARTITION_SEVERITY[status], "first_commit_at": min(e.at for e in entries),
        "first_commit_offset": oldest.offset, "last_commit_offset": last_commit.offset,
        "last_commit_lag": last_commit.lag,
    }  # fmt: skip


def _status(
    *,
    samples: int,
    lag: int,
    stopped: bool,
    live: bool,
    unrecovered_rewind: bool,
    min_lag: int | None,
    stalled: bool,
    lag_fell: bool,
    known_lags: int,
    allowed: float,
) -> str:
    """Burrow's rules in order, first match wins (`lag_status`' docstring numbers them)."""
    rules = (
        (samples < 2 or lag <= allowed, "OK"),
        (stopped and live, "STALL"),
        (stopped, "STOP"),
        (unrecovered_rewind, "REWIND"),
        (min_lag is not None and min_lag <= allowed, "OK"),
        (stalled, "STALL"),
        (not lag_fell and known_lags >= 2, "WARN"),  # unknown lags show no trend
    )
    return next((status for matched, status in rules if matched), "OK")


def _rewinds(entries: Sequence[_Entry]) -> list[bool | None]:
    """Per entry (newest first): None where the offset is not lower than the one before it, else whether
    no entry from this one on gets back to that earlier offset (unrecovered)."""
    out: list[bool | None] = []
    highest_since = -math.inf
    for i, e in enumerate(entries):
        highest_since = max(highest_since, e.offset)
        before = entries[i + 1].offset if i + 1 < len(entries) else None
        out.append(None if before is None or e.offset >= before else highest_since < before)
    return out


def _lag_fell(entries: Sequence[_Entry]) -> bool:
    """Whether some new commit's lag is below the previous commit's (the latest earlier commit with a
    known lag)."""
    for i, e in enumerate(entries):
        if not e.new_commit or e.lag is None:
            continue
        previous = next((p.lag for p in entries[i + 1 :] if p.new_commit and p.lag is not None), None)
        if previous is not None and e.lag < previous:
            return True
    return False


def _logged(commits: Iterable[Row], current: set[Key], now: Now) -> dict[Key, list[tuple[datetime, int]]]:
    """Per sampled partition the log holds 2 or more commits of: its last `lag_window` distinct
    (time, offset) commits up to now, newest first."""
    seen: dict[Key, set[tuple[datetime, int]]] = {}
    for c in commits:
        key = _key(c)
        if key in current and c["committed_offset"] is not None and c["committed_at"] <= now.captured_at:
            seen.setdefault(key, set()).add((c["committed_at"], c["committed_offset"]))
    windows = {k: sorted(v, reverse=True)[: now.lag_window] for k, v in seen.items()}
    return {k: w for k, w in windows.items() if len(w) >= 2}


def _at_commit(at: datetime, offset: int, samples: list[Row], now: Now) -> _Entry:
    """A logged commit with its lag: the end offset at its time interpolated between the samples just
    before and just after it (the latest, for a commit after the last; unknown before the first)."""
    ends = [s for s in samples if s["captured_at"] <= now.captured_at]
    before = max((s for s in ends if s["captured_at"] <= at), key=lambda s: s["captured_at"], default=None)
    after = min((s for s in ends if s["captured_at"] > at), key=lambda s: s["captured_at"], default=None)
    if before is None:
        return _Entry(at, offset, None, True)
    end: int | None = before["end_offset"]
    if end is not None and after is not None:
        start, span = micros(before["captured_at"]), micros(after["captured_at"]) - micros(before["captured_at"])
        later = after["end_offset"]
        end = None if later is None else math.floor(end + (later - end) * ((micros(at) - start) / span))
    return _Entry(at, offset, None if end is None else max(end - offset, 0), True)


def _recent_end(samples: list[Row], now: Now) -> int | None:
    """The lowest end offset the collections saw in the last `RECENT_HEAD_S` seconds."""
    since = now.captured_at - timedelta(seconds=RECENT_HEAD_S)
    ends = [s["end_offset"] for s in samples if since < s["captured_at"] <= now.captured_at]
    return min((e for e in ends if e is not None), default=None)


def _owners(members: Iterable[Row]) -> dict[Key, str]:
    """Partition → the (smallest) member id it is assigned to in the latest collection."""
    owners: dict[Key, str] = {}
    for m in members:
        for tp in m["assigned_partitions"] or ():
            key = (m["group_id"], tp["topic"], tp["partition"])
            owners[key] = min(owners.get(key, m["member_id"]), m["member_id"])
    return owners


def consumer_quotas(members: Iterable[Row], quotas: Iterable[Row]) -> dict[str, tuple[float, str]]:
    """Group → the lowest consumer quota that applies to one of its members, and its entity path, by
    Kafka's precedence (`lag_status.consumer_quotas`); `quotas` are one metadata snapshot's rows."""
    current = [q for q in quotas if q["quota_key"] == QUOTA_KEY]
    clients = {(m["group_id"], m["client_id"]) for m in members}
    lowest: dict[str, tuple[float, str]] = {}
    for group_id, client_id in sorted(clients, key=str):
        ranked = []
        for q in current:
            user, client = q["user"] or NO_ENTITY, q["client_id"] or NO_ENTITY
            rank = QUOTA_PRECEDENCE.get(f"{user}|{'C' if client == client_id else client}")
            if rank is not None:
                ranked.append((rank, q["quota_value"], q["entity_path"]))
        if ranked:
            _, value, entity = min(ranked)
            lowest[group_id] = min(lowest.get(group_id, (value, entity)), (value, entity))
    return lowest


def group_rows(
    partitions: list[Row], states: Mapping[str, str | None], quotas: Mapping[str, tuple[float, str]], now: Now
) -> list[Row]:
    """`lag_status_groups`: each group of the latest collection or with rated partitions, rolled up."""
    by_group: dict[str, list[Row]] = {}
    for p in partitions:
        by_group.setdefault(p["group_id"], []).append(p)
    out = []
    for group_id in sorted(set(states) | set(by_group)):
        mine = by_group.get(group_id, [])
        row = {"snapshot_id": now.snapshot_id, "group_id": group_id, "state": states.get(group_id),
               **_rolled_up(mine, now)}  # fmt: skip
        quota = quotas.get(group_id)
        if row["status"] != "OK" and quota is not None:
            row["cause"] += (f"; a consumer quota of {quota[0]:,.0f} B/s applies to its members ({quota[1]}): "
                             "the quota may be what holds it back")  # fmt: skip
        row["consumer_quota_bytes_per_s"], row["consumer_quota_entity"] = quota or (None, None)
        out.append(row)
    return out


def _rolled_up(partitions: list[Row], now: Now) -> Row:
    counts = {f"{s.lower()}_partitions": sum(p["status"] == s for p in partitions) for s in CODES}
    if not partitions:
        return {"status": "OK", "partition_count": 0, "total_lag": 0, "max_lag_topic": None,
                "max_lag_partition": None, "max_lag": None, **counts, "complete": None, "severity": "ok",
                "cause": "no committed partition with a known lag"}  # fmt: skip
    worst = max(CODES[p["status"]] for p in partitions)
    status = "ERR" if worst >= CODES["STOP"] else "WARN" if worst == CODES["WARN"] else "OK"
    top = min(partitions, key=lambda p: (-p["lag"], p["topic"], p["partition"]))
    total = sum(p["lag"] for p in partitions)
    return {
        "status": status, "partition_count": len(partitions), "total_lag": total,
        "max_lag_topic": top["topic"], "max_lag_partition": top["partition"], "max_lag": top["lag"], **counts,
        "complete": sum(p["complete"] >= 1 for p in partitions) / len(partitions),
        "severity": GROUP_SEVERITY[status], "cause": _cause(partitions, worst, total, now),
    }  # fmt: skip


def _cause(partitions: list[Row], worst: int, total_lag: int, now: Now) -> str:
    """One line about the group's worst kind of partition (Burrow's order: REWIND > STALL > STOP > WARN)."""
    head_status = next(s for s, c in CODES.items() if c == worst)
    heads = [p for p in partitions if p["status"] == head_status]
    head = f"{len(heads)} partition{'' if len(heads) == 1 else 's'} {head_status}: "
    max_lag = f"{max(p['lag'] for p in heads):,}"
    grew = any(p["lag_start"] is not None and p["lag"] > p["lag_start"] for p in heads)
    trend = f"while lag grew to {max_lag}" if grew else f"with lag at {max_lag}"
    idle = _duration(max(micros(now.captured_at) - micros(p["last_commit_at"]) for p in heads) / 1e6)
    return {
        "OK": f"{head}total lag {total_lag:,}",
        "REWIND": f"{head}the committed offset went backwards, lag up to {max_lag}",
        "STALL": f"{head}assigned to a live member but no new commit for {idle} {trend}",
        "STOP": f"{head}no new commit for {idle} {trend}",
        "WARN": f"{head}lag never decreased from one commit to the next, lag up to {max_lag}",
    }[head_status]


def _duration(seconds: float) -> str:
    """As the Spark detector words it: whole seconds below a minute, whole minutes below two hours."""
    if seconds < 60:
        return f"{math.floor(seconds)} s"
    if seconds < 7200:
        return f"{math.floor(seconds / 60)} min"
    return f"{seconds / 3600:,.1f} h"


def _key(r: Row) -> Key:
    return r["group_id"], r["topic"], r["partition"]


def _minus(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a - b
