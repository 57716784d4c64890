"""Who owns which topics and consumer groups, and where their pages go (`[[owners]]` in the settings).

    [[owners]]
    name = "payments"
    topics = ["payments\\\\..*", "orders"]   # regular expressions, each matching a whole topic name
    groups = ["billing-.*"]                 # likewise, whole group ids
    alert_conn_ids = ["slack_payments"]     # the owner's sinks (Airflow connections, see alerting.registry)
    clusters = ["prod"]                     # optional: only on these clusters (default: every cluster)

A page about one consumer group goes to the owner of that group; a page about topics goes to their owner
when every topic it is about has the same one; every other page (a broker, the controller, the quorum,
several owners' topics, or topics no owner names) goes to the cluster's own sinks (`alert_conn_ids` of
the cluster), as does a page whose owner has no sink on that cluster. The first owner in the file whose
pattern matches wins.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from kafka_ops.errors import ConfigError

KEYS = frozenset({"name", "topics", "groups", "alert_conn_ids", "clusters"})
_REGEX_SYNTAX = frozenset("\\^$*+?{}[]|()")
_TOPIC_NAME = re.compile(r"[A-Za-z0-9._-]+")
"""Kafka's legal characters in a topic name: a topic pattern without regular expression syntax is a
literal name, and one with other characters matches no topic (a group id may hold any character)."""


@dataclass(frozen=True)
class Owner:
    """A team: the topics and groups it owns (patterns) and the sinks its pages go to."""

    name: str
    alert_conn_ids: tuple[str, ...]
    topics: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    clusters: tuple[str, ...] = ()
    """The clusters it owns these on; empty: every cluster."""

    def owns_topic(self, topic: str) -> bool:
        return any(re.fullmatch(p, topic) for p in self.topics)

    def owns_group(self, group: str) -> bool:
        return any(re.fullmatch(p, group) for p in self.groups)

    def on(self, cluster: str) -> bool:
        return not self.clusters or cluster in self.clusters


def owner_of(owners: Iterable[Owner], *, group: str | None = None, topics: Collection[str] = ()) -> Owner | None:
    """The owner a page goes to: the group's (`group`), else the one owner of every topic in `topics`;
    None when there is none (the cluster's sinks take it)."""
    owners = tuple(owners)
    if group is not None:
        return next((o for o in owners if o.owns_group(group)), None)
    if not topics:
        return None
    found = {next((o for o in owners if o.owns_topic(t)), None) for t in topics}
    return found.pop() if len(found) == 1 else None


def parse_owners(raw: Any, clusters: Collection[str]) -> tuple[Owner, ...]:
    """The `[[owners]]` tables; `ConfigError` naming the key (`owners[1].topics[0]`) for a missing name or
    sink, a pattern that is empty or no regular expression, a name or sink given twice, an unknown key, or
    a cluster that is not in `clusters`."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ConfigError(f"'owners' must be an array of tables ([[owners]]), got {type(raw).__name__}")
    owners = tuple(_owner(entry, f"owners[{i}]", clusters) for i, entry in enumerate(raw))
    names = [o.name for o in owners]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"'owners': the name {twice[0]!r} is given to two owners")
    return owners


def _owner(entry: Any, where: str, clusters: Collection[str]) -> Owner:
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: must be a table, got {type(entry).__name__}")
    unknown = sorted(set(entry) - KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {unknown}; known: {sorted(KEYS)}")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip() or "/" in name:
        raise ConfigError(f"{where}.name: a non-empty name without '/' is required, got {name!r}")
    sinks = _strings(entry.get("alert_conn_ids"), f"{where}.alert_conn_ids")
    if not sinks:
        raise ConfigError(f"{where}.alert_conn_ids: owner {name!r} needs at least one alert connection")
    topics = _patterns(entry.get("topics"), f"{where}.topics", topics=True)
    groups = _patterns(entry.get("groups"), f"{where}.groups", topics=False)
    if not topics and not groups:
        raise ConfigError(f"{where}: owner {name!r} owns nothing: give it 'topics' or 'groups' patterns")
    on = _strings(entry.get("clusters"), f"{where}.clusters")
    unknown_clusters = [c for c in on if c not in clusters]
    if unknown_clusters:
        raise ConfigError(f"{where}.clusters: {unknown_clusters[0]!r} is not a cluster of these settings")
    return Owner(name, sinks, topics, groups, on)


def _strings(raw: Any, where: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(v, str) and v.strip() for v in raw):
        raise ConfigError(f"{where}: must be a list of non-empty strings, got {raw!r}")
    if len(set(raw)) != len(raw):
        raise ConfigError(f"{where}: names one entry twice: {raw}")
    return tuple(raw)


def _patterns(raw: Any, where: str, *, topics: bool) -> tuple[str, ...]:
    patterns = _strings(raw, where)
    for i, p in enumerate(patterns):
        try:
            re.compile(p)
        except re.error as e:
            raise ConfigError(f"{where}[{i}]: {p!r} is not a regular expression: {e}") from None
        if topics and not set(p) & _REGEX_SYNTAX and not _TOPIC_NAME.fullmatch(p):
            raise ConfigError(f"{where}[{i}]: {p!r} matches no topic: topic names use only letters, digits, '.', "
                              "'_' and '-'")  # fmt: skip
    return patterns
