"""Strict reading of Airflow connection fields, shared by the hooks (`kafka_ops.airflow`) and the alert sinks
(`kafka_ops.alerting`).

Every failure is a `ConfigError` that names the connection (`where`) and the field or extra
key, and never echoes a password.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from kafka_ops.errors import ConfigError

if TYPE_CHECKING:
    from airflow.sdk import Connection

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off", ""}
_HOST_WITH_PORT = re.compile(r"^(\[[^\]]+\]|[^:\[\]/]+):(\d+)$")
_HOST_ONLY = re.compile(r"^(\[[^\]]+\]|[^:\[\]/]+)$")


def allowlisted_extras(conn: Connection, where: str, allowed: Collection[str]) -> dict[str, Any]:
    """The connection's extras as a dict; any key outside `allowed` is refused by name."""
    # parsed here, not with `extra_dejson`, which logs and returns {} for invalid JSON
    try:
        extra = json.loads(conn.extra) if conn.extra else {}
    except json.JSONDecodeError as e:
        raise ConfigError(f"{where}: 'extra' is not valid JSON ({e.msg} at char {e.pos})") from None
    if not isinstance(extra, dict):
        raise ConfigError(f"{where}: 'extra' must be a JSON object, got {type(extra).__name__}")
    unknown = sorted(set(extra) - set(allowed))
    if unknown:
        raise ConfigError(
            f"{where}: unknown extra key(s) {unknown}; allowed: {sorted(allowed)} "
            "(remove the key or move the setting to its field)"
        )
    return extra


def host_list(hosts: str | None, port: int | None, where: str, *, default_port: int, what: str, example: str) -> str:
    """`h1:p,h2` → `h1:p,h2:<port or default_port>`, each checked as host:port."""
    entries = [h.strip() for h in (hosts or "").split(",") if h.strip()]
    if not entries:
        raise ConfigError(f"{where}: 'host' is empty; set it to {example}")
    if port is not None and not 0 < port < 65536:
        raise ConfigError(f"{where}: port {port} is not a TCP port")
    addresses = []
    for entry in entries:
        address = f"{entry}:{port or default_port}" if _HOST_ONLY.match(entry) else entry
        match = _HOST_WITH_PORT.match(address)
        if match is None or not 0 < int(match.group(2)) < 65536:
            raise ConfigError(f"{where}: bad {what} {entry!r} in 'host'; expected host:port")
        addresses.append(address)
    return ",".join(addresses)


def text(extra: dict[str, Any], key: str, where: str) -> str:
    value = extra[key]
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: extra {key!r} must be a non-empty string, got {value!r}")
    return value.strip()


def flag(extra: dict[str, Any], key: str, where: str, default: bool) -> bool:
    value = extra.get(key, default)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ConfigError(f"{where}: extra {key!r} must be true or false, got {value!r}")
