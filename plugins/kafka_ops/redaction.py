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

A secret is masked by its key as well as by its value: a client library logs its configuration as a
dict's repr, which escapes a password holding a backslash, a quote, a newline, a tab or an unprintable
character (`'Sasl\\Pa55'`), so the password as registered no longer matches. Every quoted value of
a key that names a secret (`password`, `secret`, `token`, `credential`, kazoo's `auth`) reads `***`
whatever it holds, in `'key': 'value'` and `key='value'` form (and kafka-python's SASL request,
`auth_bytes=b'...'`); a registered secret is also masked in its repr- and JSON-escaped spellings.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from typing import Any

MASK = "***"
# Shorter values would mask ordinary words in every log line; a secret that short is no secret.
MIN_LENGTH = 4

SECRET_KEY = re.compile(r"password|passwd|secret|token|credential", re.IGNORECASE)
"""A configuration key whose value is a secret (`sasl_plain_password`, `ssl_password`, ...)."""
_QUOTED = r"""b?(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
"""A Python str or bytes repr, or a JSON string: quoted, its quotes and backslashes escaped."""
_SECRET_NAME = rf"\w*(?:{SECRET_KEY.pattern})\w*|auth|auth_bytes"
_KEYED_SECRET = re.compile(rf"""(?P<key>(?P<q>['"]?)\b(?:{_SECRET_NAME})\b(?P=q)\s*[:=]\s*){_QUOTED}""", re.IGNORECASE)
"""`'sasl_plain_password': '<repr>'`, `"ssl_password": "<json>"`, `auth='<repr>'` (kazoo's Auth request),
`auth_bytes=b'<repr>'` (kafka-python's SaslAuthenticate request: `\x00user\x00password`)."""

_secrets: set[str] = set()
_lock = threading.Lock()
_installed = False


def register(secret: str | None) -> None:
    """Mask `secret` in every log record of this process from now on (and in Airflow's logs). Masking
    by key starts with the first secret registered, however short."""
    with _lock:
        _install()
        if not secret or len(secret) < MIN_LENGTH:
            return
        spellings = _spellings(secret) - _secrets
        _secrets.update(spellings)
    for spelling in sorted(spellings):
        _tell_airflow(spelling)


def _spellings(secret: str) -> set[str]:
    """`secret` as registered, and as a repr or JSON string spells it (escaped), when that differs."""
    escaped = {repr(secret)[1:-1], json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}
    return {secret} | {s for s in escaped if len(s) >= MIN_LENGTH}


def redact(text: str) -> str:
    """`text` with every quoted value of a secret-named key, and every registered secret, replaced by
    `MASK` (longest first: no partial leftovers)."""
    text = _KEYED_SECRET.sub(_masked_value, text)
    for secret in sorted(_secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def _masked_value(match: re.Match[str]) -> str:
    """A keyed secret with its value masked: `"***"` in JSON (a double-quoted key), else as Python spells
    the mask (`'***'`, or `b'***'` for bytes)."""
    quote = '"' if match["q"] == '"' else "'"
    prefix = "b" if match[0][len(match["key"]) :].startswith("b") else ""
    return f"{match['key']}{prefix}{quote}{MASK}{quote}"


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
