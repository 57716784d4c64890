"""Connection extras every notifier understands, parsed strictly (errors name the connection and key).

* `min_severity`: `warning` (default) or `critical`, the lowest severity the sink takes.
* HTTP notifiers: `timeout` (seconds per request, default 10), `attempts` (in all, default 3),
  `backoff_s` (first pause between attempts, doubled each time, default 1).
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any

from kafka_ops.alerting.alert import SEVERITIES, Severity
from kafka_ops.alerting.webhook import HttpPolicy
from kafka_ops.errors import ConfigError

COMMON_EXTRAS = frozenset({"min_severity"})
HTTP_EXTRAS = COMMON_EXTRAS | {"timeout", "attempts", "backoff_s"}


def min_severity(extra: dict[str, Any], where: str) -> Severity:
    value = extra.get("min_severity", "warning")
    for severity in SEVERITIES:
        if value == severity:
            return severity
    raise ConfigError(f"{where}: extra 'min_severity' must be one of {list(SEVERITIES)}, got {value!r}")


def http_policy(extra: dict[str, Any], where: str) -> HttpPolicy:
    defaults = HttpPolicy()
    return HttpPolicy(
        timeout_s=_number(extra, "timeout", where, defaults.timeout_s, minimum=0.001),
        attempts=int(_number(extra, "attempts", where, defaults.attempts, minimum=1, whole=True)),
        backoff_s=_number(extra, "backoff_s", where, defaults.backoff_s, minimum=0.0),
    )


def register_secret(value: str) -> None:
    """Tell Airflow's secrets masker about `value`, so task logs show `***` even if some library
    quotes it. Outside a task there is nothing to tell, and the notifiers never log it anyway."""
    with suppress(ImportError):
        from airflow.sdk.log import mask_secret  # noqa: PLC0415 - only where Airflow runs

        mask_secret(value)


def _number(
    extra: dict[str, Any], key: str, where: str, default: float, *, minimum: float, whole: bool = False
) -> float:
    value = extra.get(key, default)
    if isinstance(value, str):
        with suppress(ValueError):
            value = float(value.strip())
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= minimum
    if not ok or (whole and float(value) != int(value)):
        kind = "whole number" if whole else "number"
        raise ConfigError(f"{where}: extra {key!r} must be a {kind} >= {minimum:g}, got {extra.get(key)!r}")
    return float(value)
