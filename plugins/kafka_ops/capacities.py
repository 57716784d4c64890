"""Broker capacities: how much disk and network each broker of a cluster has, for the load-aware
planner and the load detectors. Read from the cluster's `[clusters.capacity]` settings table::

    [clusters.capacity]
    disk_bytes = 2_000_000_000_000          # per broker; default: the log dirs' total bytes
    network_in_bytes_per_s = 125_000_000    # per broker (1 Gbit/s)
    network_out_bytes_per_s = 125_000_000
    max_disk_share = 0.8                    # hard goal: no broker above 80% of its disk
    max_replicas_per_broker = 4000          # hard goal (optional)
    [clusters.capacity.brokers.4]           # one broker differs: its own values win
    disk_bytes = 4_000_000_000_000

Every figure is optional: a capacity nobody set is None, and the planner says which goal it
could not check, never guesses one. Ranges: `disk_bytes` 1 to 2^63-1 (whole), the network rates 1 to
10^18 bytes per second, `max_disk_share` above 0 and at most 1, `max_replicas_per_broker` 1 to 2^31-1, a
broker id (the table's name) ASCII digits from 0 to 2^31-1.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from kafka_ops.errors import ConfigError
from kafka_ops.kafka_types import INT32_MAX, INT64_MAX, MOST_VOLUME, finite_number, shown

_RATES = ("network_in_bytes_per_s", "network_out_bytes_per_s")
_ASCII_DIGITS = re.compile(r"[0-9]{1,10}")
"""A broker id in a table name: ASCII digits only (`str.isdigit` takes `²` and `١٢` too)."""


@dataclass(frozen=True)
class BrokerCapacity:
    """One broker's capacities; None = not set."""

    disk_bytes: int | None = None
    """Usable disk across the broker's log dirs, in bytes."""
    network_in_bytes_per_s: float | None = None
    """Inbound bytes per second the broker can take (producers plus replication)."""
    network_out_bytes_per_s: float | None = None
    """Outbound bytes per second the broker can serve (consumers plus replication)."""

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], where: str) -> BrokerCapacity:
        _reject_unknown(values, {f.name for f in fields(cls)}, where)
        disk = values.get("disk_bytes")
        if disk is not None and (not finite_number(disk) or not 0 < disk <= INT64_MAX or disk != int(disk)):
            raise ConfigError(  # the lake and Spark hold byte counts as 64-bit integers
                f"{where}: 'disk_bytes' must be a whole number of bytes from 1 to {INT64_MAX}, got {shown(disk)}"
            )
        for key in _RATES:
            rate = values.get(key)
            if rate is not None and (not finite_number(rate) or not 1 <= float(rate) <= MOST_VOLUME):
                raise ConfigError(  # a link of less than a byte per second is none
                    f"{where}: {key!r} must be a number of bytes per second from 1 to {MOST_VOLUME}, got {shown(rate)}"
                )
        return cls(
            disk_bytes=None if disk is None else int(disk),
            **{key: None if values.get(key) is None else float(values[key]) for key in _RATES},
        )

    def over(self, default: BrokerCapacity) -> BrokerCapacity:
        """This broker's figures where set, else `default`'s."""
        return replace(default, **{f.name: v for f in fields(self) if (v := getattr(self, f.name)) is not None})


@dataclass(frozen=True)
class Capacities:
    """A cluster's capacities: one default for every broker, and the brokers that differ."""

    default: BrokerCapacity = BrokerCapacity()
    brokers: tuple[tuple[int, BrokerCapacity], ...] = ()
    """(broker id, its own figures), sorted by id; a tuple so that settings stay hashable."""
    max_disk_share: float = 0.8
    """Hard goal: no broker's disk fuller than this share of its capacity after a plan."""
    max_replicas_per_broker: int | None = None
    """Hard goal: no broker holds more replicas than this after a plan (None: no limit)."""

    def of(self, broker_id: int) -> BrokerCapacity:
        """Broker `broker_id`'s capacities: its own figures over the cluster default."""
        for bid, own in self.brokers:
            if bid == broker_id:
                return own.over(self.default)
        return self.default

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], where: str) -> Capacities:
        """Parse a `[clusters.capacity]` table; every wrong value is refused naming its key."""
        if not isinstance(values, Mapping):
            raise ConfigError(f"{where}: expected a table of capacities")
        per_broker = {f.name for f in fields(BrokerCapacity)}
        _reject_unknown(values, per_broker | {"max_disk_share", "max_replicas_per_broker", "brokers"}, where)
        share = values.get("max_disk_share", 0.8)
        if not finite_number(share) or not 0 < share <= 1:
            raise ConfigError(
                f"{where}: 'max_disk_share' must be a share of the disk above 0 and at most 1, got {shown(share)}"
            )
        most = values.get("max_replicas_per_broker")
        if most is not None and (isinstance(most, bool) or not isinstance(most, int) or not 0 < most <= INT32_MAX):
            raise ConfigError(
                f"{where}: 'max_replicas_per_broker' must be a whole number from 1 to {INT32_MAX}, got {shown(most)}"
            )
        brokers_raw = values.get("brokers", {})
        if not isinstance(brokers_raw, Mapping):
            raise ConfigError(f"{where}.brokers: expected tables [{where}.brokers.<broker id>]")
        brokers: list[tuple[int, BrokerCapacity]] = []
        for key, own in brokers_raw.items():
            if not (isinstance(key, str) and _ASCII_DIGITS.fullmatch(key) and int(key) <= INT32_MAX):
                raise ConfigError(f"{where}.brokers: {key!r} is not a broker id (a whole number from 0 to {INT32_MAX})")
            if not isinstance(own, Mapping):
                raise ConfigError(f"{where}.brokers.{key}: expected a table of capacities")
            if int(key) in dict(brokers):
                raise ConfigError(f"{where}.brokers: broker {int(key)} is given twice")
            brokers.append((int(key), BrokerCapacity.from_mapping(own, f"{where}.brokers.{key}")))
        default = BrokerCapacity.from_mapping({k: v for k, v in values.items() if k in per_broker}, where)
        return cls(default, tuple(sorted(brokers)), float(share), most)


def _reject_unknown(values: Mapping[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown capacity setting(s) {unknown} (known: {sorted(known)})")
