"""What a cluster's controller notices, reduced to a few comparable parts, and which of them changed.

The change watch (`kafka_ops.airflow.cluster_watch`) keeps one `View` per cluster: a mapping from a
part's name to a plain value that compares equal exactly when that part did not change. A ZooKeeper
view is built from the four znodes the ZooKeeper-mode controller itself watches; a KRaft view from a
cheap poll (DescribeCluster, DescribeQuorum, a digest of every partition's leader, ISR and ELR).

Both views also hold the consumer groups without members (`sources.groups.state_poll`), what the group
coordinators notice when a group's consumers all leave or die.

A part whose source could not be parsed is `UNKNOWN` together with the `CollectionIssue` saying why:
`merged` keeps the part's previous value then, so an answer that cannot be read is an issue to log,
never a change (and never a crash).
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Iterable, Mapping
from typing import Final

from kafka_ops.errors import ZnodeFormatError
from kafka_ops.model.cluster import CollectionIssue, Quorum, ZnodeStat
from kafka_ops.sources.zookeeper import znodes

View = Mapping[str, Hashable]
"""Part name -> a value that is equal between two reads exactly when the part did not change."""


class _Unknown:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Final = _Unknown()
"""A part that could not be read this time (see `merged`)."""

# the parts, named as an event's `changes` lists them
BROKERS = "brokers"
FENCED_BROKERS = "fenced_brokers"
CONTROLLER = "controller"
QUORUM_VOTERS = "quorum_voters"
PARTITIONS = "partitions"
ISR_CHANGE_NOTIFICATIONS = "isr_change_notifications"
REASSIGNMENT = "reassignment"
GROUPS_WITHOUT_MEMBERS = "groups_without_members"
GROUPS_STOP_DUE = "groups_stop_due"
"""Not a part: the change a watch notes once Burrow's rules can rate a group that lost its members STOP."""


def merged(before: View | None, after: View) -> dict[str, Hashable]:
    """`after`, with each `UNKNOWN` part taken from `before` (still `UNKNOWN` when `before` has none)."""
    previous = before or {}
    return {part: previous.get(part, UNKNOWN) if value is UNKNOWN else value for part, value in after.items()}


def changed_parts(before: View | None, after: View) -> list[str]:
    """The parts whose value differs, sorted; none against no earlier view (the first read is the
    baseline) and none for a part unknown on either side."""
    if before is None:
        return []
    return sorted(
        part
        for part in before.keys() | after.keys()
        if before.get(part, UNKNOWN) is not UNKNOWN
        and after.get(part, UNKNOWN) is not UNKNOWN
        and before.get(part) != after.get(part)
    )


# -- KRaft ----------------------------------------------------------------------------------------


def partition_digest(rows: Iterable[tuple[str, int, int, Iterable[int], Iterable[int] | None]]) -> str:
    """One hex digest of every partition's (topic, partition, leader, ISR, ELR), whatever order the
    rows come in: equal exactly when no leader, ISR or ELR changed (and no partition came or went).
    ELR None (a broker that does not report it) differs from an empty ELR."""
    lines = sorted(
        f"{topic}\0{partition}\0{leader}\0{','.join(map(str, isr))}\0"
        f"{'-' if elr is None else ','.join(map(str, elr))}\n"
        for topic, partition, leader, isr, elr in rows
    )
    digest = hashlib.blake2b(digest_size=16)
    for line in lines:
        digest.update(line.encode())
    return f"{len(lines)}:{digest.hexdigest()}"


def broker_parts(brokers: Iterable[tuple[int, bool]]) -> dict[str, Hashable]:
    """DescribeCluster's brokers as (id, fenced): the registered ones and the fenced ones."""
    listed = sorted(set(brokers))
    return {
        BROKERS: tuple(b for b, _ in listed),
        FENCED_BROKERS: tuple(b for b, fenced in listed if fenced),
    }


def quorum_parts(quorum: Quorum) -> dict[str, Hashable]:
    """The active controller with its epoch (a re-election of the same one is a change too) and the
    voters; never log offsets, which move on every metadata record."""
    return {
        CONTROLLER: (quorum.leader_id, quorum.leader_epoch),
        QUORUM_VOTERS: tuple(sorted(r.replica_id for r in quorum.replicas if r.role == "voter")),
    }


# -- ZooKeeper ------------------------------------------------------------------------------------


def broker_ids_part(children: Iterable[str] | None) -> tuple[Hashable, list[CollectionIssue]]:
    """`/brokers/ids` children: the registered broker ids; a child that is not a broker id is an issue
    (and is left out)."""
    ids, issues = [], []
    for name in children or ():
        number = znodes.unsigned_int32(name)
        if number is None:
            issues.append(CollectionIssue(f"{znodes.BROKER_IDS}/{name}", f"{znodes.show(name)} is not a broker id"))
        else:
            ids.append(number)
    return tuple(sorted(ids)), issues


def controller_part(data: bytes | None, stat: ZnodeStat | None) -> tuple[Hashable, list[CollectionIssue]]:
    """`/controller`: None while no broker is controller, else (broker id, czxid): the znode is ephemeral,
    so a new czxid is a new election even of the same broker. Unparseable: the czxid alone (the watch
    fired, so the znode did change) and the issue."""
    if stat is None:
        return None, []
    try:
        return (znodes.parse_controller(znodes.CONTROLLER, data, stat).broker_id, stat.czxid), []
    except ZnodeFormatError as e:
        return ("unparseable", stat.czxid), [CollectionIssue(e.path, e.problem)]


def reassignment_part(data: bytes | None, stat: ZnodeStat | None) -> tuple[Hashable, list[CollectionIssue]]:
    """`/admin/reassign_partitions`: None when absent, else the sorted (topic, partition) still moving.
    Unparseable: its version (the watch fired, so it did change) and the issue."""
    if stat is None:
        return None, []
    try:
        requests = znodes.parse_reassign_partitions(znodes.REASSIGN_PARTITIONS, data)
    except ZnodeFormatError as e:
        return ("unparseable", stat.version), [CollectionIssue(e.path, e.problem)]
    return tuple(sorted((r.topic, r.partition) for r in requests)), []


def notifications_part(children: Iterable[str] | None) -> Hashable:
    """`/isr_change_notification` children: the pending notifications' names (the controller deletes
    what it reads, so a change shows as a name coming and going)."""
    return tuple(sorted(children or ()))


# -- consumer groups ------------------------------------------------------------------------------


def groups_without_members_part(group_ids: Iterable[str]) -> Hashable:
    """The ids of the groups ListGroups gave as Empty or Dead, sorted: a group that loses its last member,
    or gains its first, changes the part; one going from Empty to Dead does not."""
    return tuple(sorted(set(group_ids)))


def groups_that_lost_members(before: View | None, after: View) -> list[str]:
    """The groups without members in `after` that had members in `before` (none when either is unknown)."""
    old, new = (before or {}).get(GROUPS_WITHOUT_MEMBERS, UNKNOWN), after.get(GROUPS_WITHOUT_MEMBERS, UNKNOWN)
    if not isinstance(old, tuple) or not isinstance(new, tuple):
        return []
    return sorted(set(new) - set(old))
