"""Kafka's replica placement rules, ported exactly, and the rack arithmetic the planners share.

`kafka_assignment` is `AdminUtils.assignReplicasToBrokers` (Kafka 3.9,
`server-common/.../admin/AdminUtils.java`) with its two random draws passed in, so a caller can
reproduce what `kafka-topics --create` or `kafka-reassign-partitions --generate` would do for a
given start index and shift. `rack_alternated` is its `getRackAlternatedBrokerList`.

Rack keys: a broker registered without `broker.rack` is treated as a rack of its own (key
`"<no rack: id>"`). With no rack anywhere that makes every rule below the rack-unaware one (every
broker is its own rack); with racks on some brokers only, Kafka's tools refuse to place replicas
rack-aware, while our planners still can: such a broker simply never shares a rack.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from kafka_ops.errors import PlanError


def rack_key(broker_id: int, rack: str | None) -> str:
    """The rack a broker counts in for spread rules (see the module docstring)."""
    return rack if rack is not None else f"<no rack: {broker_id}>"


def rack_alternated(racks: Mapping[int, str | None]) -> list[int]:
    """Kafka's rack-alternated broker list: racks sorted by name, ids sorted within a rack,
    then one broker per rack in turn. With no rack at all: the ids in ascending order.

    Example from Kafka's javadoc: {0:r1, 1:r3, 2:r3, 3:r2, 4:r2, 5:r1} → [0, 3, 1, 5, 4, 2].
    """
    return list(_alternated(tuple(sorted(racks.items(), key=lambda item: item[0]))))


@lru_cache(maxsize=64)
def _alternated(racks: tuple[tuple[int, str | None], ...]) -> tuple[int, ...]:
    # cached: `--generate` places every topic over the same brokers
    if all(rack is None for _, rack in racks):
        return tuple(b for b, _ in racks)
    by_rack: dict[str, list[int]] = {}
    for broker_id, rack in racks:
        by_rack.setdefault(rack_key(broker_id, rack), []).append(broker_id)
    columns = [by_rack[name] for name in sorted(by_rack)]
    out: list[int] = []
    for row in range(max(len(c) for c in columns)):
        out.extend(column[row] for column in columns if row < len(column))
    return tuple(out)


def replica_index(first: int, shift: int, j: int, n: int) -> int:
    """Kafka's `replicaIndex`: the j-th follower position after `first`, shifted by `shift`."""
    return (first + 1 + (shift + j) % (n - 1)) % n


def kafka_assignment(
    brokers: Mapping[int, str | None],
    partitions: int,
    replication_factor: int,
    *,
    start_index: int,
    shift: int,
    start_partition_id: int = 0,
) -> dict[int, list[int]]:
    """`AdminUtils.assignReplicasToBrokers` with a fixed start index and follower shift.

    Kafka draws both at random (independently) unless given a fixed start index, in which case it
    uses that value for both; pass the same value twice for that behaviour. Rack-aware when every
    broker has a rack, rack-unaware when none has; mixed rack information is refused, as Kafka
    does (`--disable-rack-aware` is then the user's choice: pass racks as all None).
    """
    if partitions <= 0:
        raise PlanError("partitions", f"must be larger than 0, got {partitions}")
    if replication_factor <= 0:
        raise PlanError("replication_factor", f"must be larger than 0, got {replication_factor}")
    if replication_factor > len(brokers):
        raise PlanError(
            "replication_factor", f"{replication_factor} is larger than the {len(brokers)} available brokers"
        )
    with_rack = [b for b, rack in brokers.items() if rack is not None]
    if with_rack and len(with_rack) != len(brokers):
        raise PlanError("brokers", "not all brokers have rack information for rack-aware assignment")
    draws = {"start_index": start_index, "shift": shift, "start_partition_id": start_partition_id}
    if not with_rack:
        return _rack_unaware(sorted(brokers), partitions, replication_factor, **draws)
    return _rack_aware(brokers, partitions, replication_factor, **draws)


def _rack_unaware(
    arranged: list[int], partitions: int, rf: int, *, start_index: int, shift: int, start_partition_id: int
) -> dict[int, list[int]]:
    n = len(arranged)
    out: dict[int, list[int]] = {}
    pid = max(0, start_partition_id)
    for _ in range(partitions):
        if pid > 0 and pid % n == 0:
            shift += 1
        first = (pid + start_index) % n
        out[pid] = [arranged[first]] + [arranged[replica_index(first, shift, j, n)] for j in range(rf - 1)]
        pid += 1
    return out


def _rack_aware(
    racks: Mapping[int, str | None], partitions: int, rf: int, *, start_index: int, shift: int, start_partition_id: int
) -> dict[int, list[int]]:
    rack_of = {b: rack_key(b, r) for b, r in racks.items()}
    arranged = rack_alternated(racks)
    n, num_racks = len(arranged), len(set(rack_of.values()))
    out: dict[int, list[int]] = {}
    pid = max(0, start_partition_id)
    for _ in range(partitions):
        if pid > 0 and pid % n == 0:
            shift += 1
        first = (pid + start_index) % n
        leader = arranged[first]
        replicas, used_racks, used = [leader], {rack_of[leader]}, {leader}
        k = 0
        for _j in range(rf - 1):
            while True:
                broker = arranged[replica_index(first, shift * num_racks, k, n)]
                rack = rack_of[broker]
                k += 1
                # skip a used rack while some rack has no replica, and a used broker while some has none
                if (rack not in used_racks or len(used_racks) == num_racks) and (broker not in used or len(used) == n):
                    replicas.append(broker)
                    used_racks.add(rack)
                    used.add(broker)
                    break
        out[pid] = replicas
        pid += 1
    return out


def required_racks(replication_factor: int, racks_available: int) -> int:
    """How many distinct racks a partition's replicas should span: min(RF, racks)."""
    return min(replication_factor, racks_available)


def spread(replicas: Iterable[int], rack_of: Mapping[int, str]) -> int:
    """Distinct racks among `replicas`; a broker missing from `rack_of` counts as its own rack."""
    return len({rack_of.get(b, f"<unknown: {b}>") for b in replicas})


def spread_kept(before: int, after: int, replication_factor: int, racks_available: int) -> bool:
    """The planners' rack rule: a change may not leave a partition spanning fewer racks than it
    did, except where it already spanned more than min(RF, racks) needs (e.g. RF going down)."""
    return after >= min(before, required_racks(replication_factor, racks_available))


def rotation(order: Sequence[int]) -> dict[int, int]:
    """Position of each broker in `order`, for "next broker after X" tie-breaks."""
    return {b: i for i, b in enumerate(order)}
