"""Secrets never reach a log, at any level.

Client libraries log more than they should: kafka-python logs an admin client's whole configuration
at DEBUG ("Starting KafkaAdminClient with configuration: {..., 'sasl_plain_password': ...}"), and
kazoo logs every request it sends, a digest `Auth` with its `user:password` included, at its BLATHER
level (below DEBUG). Every secret the product is handed goes through `register` where the product
builds a client (`KafkaTarget`, `ZooKeeperTarget`); from then on it reads `***` in every log record
of the process, whatever the logger, level or handler. The masking sits in the log-record factory,
so a handler installed later (Airflow's task logging) or a logger set to its lowest level is covered
too. Inside Airflow the secret is also handed to Airflow's own masker (task logs, rendered
templates, the supervisor's output).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

MASK = "***"
# Shorter values would mask ordinary words in every log line; a secret that short is no secret.
MIN_LENGTH = 4

_secrets: set[str] = set()
_lock = threading.Lock()
_installed = False


def register(secret: str | None) -> None:
    """Mask `secret` in every log record of this process from now on (and in Airflow's logs)."""
    if not secret or len(secret) < MIN_LENGTH:
        return
    with _lock:
        new = secret not in _secrets
        _secrets.add(secret)
        _install()
    if new:
        _tell_airflow(secret)


def redact(text: str) -> str:
    """`text` with every registered secret replaced by `MASK` (longest first: no partial leftovers)."""
    for secret in sorted(_secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def _install() -> None:
    global _installed  # noqa: PLW0603 - one factory per process, installed once
    if _installed:
        return
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        _mask(record)
        return record

    logging.setLogRecordFactory(factory)
    _installed = True


def _mask(record: logging.LogRecord) -> None:
    try:
        message = record.getMessage()
    except (TypeError, ValueError, KeyError):  # a malformed record: mask its raw parts instead
        record.msg = redact(str(record.msg))
        record.args = tuple(redact(repr(a)) for a in record.args) if isinstance(record.args, tuple) else ()
        return
    masked = redact(message)
    if masked != message:
        record.msg, record.args = masked, ()


def _tell_airflow(secret: str) -> None:
    try:
        from airflow.sdk.log import mask_secret  # noqa: PLC0415 - only where Airflow is installed
    except ImportError:
        return
    mask_secret(secret)
