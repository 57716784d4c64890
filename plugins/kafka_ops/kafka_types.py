"""Kafka's own types for values read from outside (stored documents, Params, settings), and a reader
that checks a JSON document against them and names the field that is wrong.

Kafka's types (`clients/.../common/internals/Topic.java`, the request schemas): broker ids,
partitions and replica counts are int32 (ids and partitions >= 0 in an assignment; -1 means "no
leader"); offsets, sizes and throttle rates are int64; a topic name is 1 to 249 of
`[a-zA-Z0-9._-]`, and neither `.` nor `..`. JSON booleans are never accepted as numbers (Python's
`True == 1`), nor floats as whole numbers.

`JsonReader(document, error)` reads one document: each method takes a value and its JSON path
(`partitions[3].replicas[1]`) and returns the typed value or raises `error(document, path, problem)`
(a `FormatError`). No heavy imports: DAG files import this module at parse time.
"""

from __future__ import annotations

import json
import math
import re
import reprlib
from collections.abc import Collection, Mapping
from datetime import datetime
from typing import Any, Literal, NoReturn, cast

from kafka_ops.errors import ConfigError, FormatError

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
TOPIC_NAME_MAX = 249
NO_LEADER = -1
KAFKA_DEFAULT_MIN_ISR = 1
"""Kafka's default `min.insync.replicas` (server.properties without the key)."""
KAFKA_DEFAULT_CLEANUP_POLICY = "delete"
"""Kafka's default `cleanup.policy` (a topic without the override, server.properties without
`log.cleanup.policy`)."""
KAFKA_DEFAULT_RETENTION_MS = 604_800_000
"""Kafka's default `retention.ms` (7 days: server.properties without `log.retention.ms`, `.minutes` or `.hours`)."""
KAFKA_DEFAULT_RETENTION_BYTES = -1
"""Kafka's default `retention.bytes` (-1: no size limit; server.properties without `log.retention.bytes`)."""
METADATA_VERSION_RELEASES = (
    (1, "3.0"), (2, "3.1"), (3, "3.2"), (4, "3.3"), (8, "3.4"), (9, "3.5"), (12, "3.6"), (15, "3.7"),
    (20, "3.8"), (21, "3.9"), (22, "4.0"), (26, "4.1"), (28, "4.2"), (30, "4.3"), (31, "4.4"), (34, None),
)  # fmt: skip
"""The Kafka release of each `metadata.version` feature level, from its first level on (Kafka's
`server-common/.../MetadataVersion.java`: 3.3-IV0 is level 4, 3.9-IV0 level 21, 4.4-IV2 level 33);
levels from the last entry on are not known here yet."""
_TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]{1,249}")
MAX_DEPTH = 64
"""Deepest nesting a document may have: kafka-ops writes at most 4 levels."""

_shown = reprlib.Repr()
_shown.maxstring = _shown.maxother = 60
_shown.maxlevel = 3


def shown(value: object) -> str:
    """A short `repr` for a message: long strings and deep structures abbreviated."""
    return _shown.repr(value)


def metadata_release(level: int | None) -> str | None:
    """The Kafka release whose `metadata.version` feature level `level` is ("3.9" for 21); None for a
    level this table does not know (0, above the last known, or None)."""
    release = None
    for first, name in METADATA_VERSION_RELEASES:
        if level is None or level < first:
            break
        release = name
    return release


def topic_name_problem(name: object) -> str | None:
    """Why `name` is not a topic name Kafka accepts, or None when it is one."""
    if not isinstance(name, str):
        return f"expected a topic name (a string), got {shown(name)}"
    if not _TOPIC_NAME.fullmatch(name) or name in (".", ".."):
        return (
            f"{shown(name)} is not a Kafka topic name (1 to {TOPIC_NAME_MAX} of letters, digits, '.', '_', '-'; "
            "not '.' or '..')"
        )
    return None


def whole_number(value: object) -> bool:
    """A JSON whole number: an int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def finite_number(value: object) -> bool:
    """A real, finite number: not a boolean, not inf or nan, not an integer too large for a float
    (`math.isfinite` raises OverflowError on one, as JSON and TOML allow)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


LONGEST_DAYS = 36_525
"""The longest duration a setting may give: 100 years. A longer one is no operator's intent, and one of
some 740,000 days or more cannot even be subtracted from today (`datetime` ends at year 1)."""
SHORTEST_SECONDS = 0.001
"""The shortest duration a setting may give: a millisecond, the resolution of Kafka's timestamps. A
shorter one is no time at all where it is used: a `timedelta` rounds it to 0 µs, and the alerting
refuses a reminder interval of no time."""
MOST_VOLUME = 10**18
"""The largest number of bytes, bytes per second or messages a fractional setting may give: beyond any
cluster, and exact as a float, so that the value survives the JSON that carries settings to the Spark
jobs (`INT64_MAX` does not: as a float it rounds up to 2^63, out of its own range)."""
_SECONDS_IN = {"seconds": 1, "minutes": 60, "hours": 3600, "days": 86400}
DurationUnit = Literal["seconds", "minutes", "hours", "days"]
DURATION_RANGE = "from 1 ms to 100 years"
"""`SHORTEST_SECONDS` to `LONGEST_DAYS`, as an error message says it."""


def longest(unit: DurationUnit) -> float:
    """`LONGEST_DAYS` in `unit`: the most a duration setting in that unit may give."""
    return LONGEST_DAYS * 86400 / _SECONDS_IN[unit]


def shortest(unit: DurationUnit) -> float:
    """`SHORTEST_SECONDS` in `unit`: the least a duration setting in that unit may give (but 0 where 0
    means off)."""
    return SHORTEST_SECONDS / _SECONDS_IN[unit]


def duration_setting(value: object, unit: DurationUnit, what: str, *, zero_is_off: bool = False) -> float:
    """`value` as a duration setting in `unit`: a number from `SHORTEST_SECONDS` to `LONGEST_DAYS` (or 0
    when `zero_is_off`), so that every use (a `timedelta` of it, now minus it) works and means some
    time; else a `ConfigError` naming `what` (the key and where it is) and the range."""
    if finite_number(value):
        number = float(cast(float, value))
        if (zero_is_off and number == 0) or shortest(unit) <= number <= longest(unit):
            return number
    off = "0 (off) or " if zero_is_off else ""
    raise ConfigError(
        f"{what} must be {off}a number of {unit} {DURATION_RANGE} ({longest(unit):.0f} {unit}), got {shown(value)}"
    )


def parse_json(text: str | bytes, document: str, error: type[FormatError]) -> Any:
    """`json.loads`, with every way it fails (not JSON, not UTF-8, nested too deep, a number with
    too many digits) raised as `error` naming the document."""
    try:
        return json.loads(text)
    except RecursionError:
        raise error(document, "", "nested too deeply to be a document kafka-ops wrote") from None
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError, int digits limit
        raise error(document, "", f"not JSON ({e})") from None


def path_of(parent: str, key: str | int) -> str:
    """The JSON path of `key` inside `parent`: `a.b`, `a[3]` (`parent` "" is the document)."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else key


class JsonReader:
    """Typed reads of one JSON document (module docstring); every failure names the field."""

    def __init__(self, document: str, error: type[FormatError]) -> None:
        self.document = document
        self.error = error

    def fail(self, path: str, problem: str) -> NoReturn:
        raise self.error(self.document, path, problem)

    def mapping(self, value: object, path: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            self.fail(path, f"expected a JSON object, got {shown(value)}")
        return value

    def field(self, obj: Mapping[str, Any], key: str, path: str) -> Any:
        """The required field `key` of the object at `path`."""
        if key not in obj:
            self.fail(path_of(path, key), "missing")
        return obj[key]

    def array(self, value: object, path: str) -> list[Any]:
        if not isinstance(value, list):
            self.fail(path, f"expected a JSON array, got {shown(value)}")
        return value

    def integer(self, value: object, path: str, low: int, high: int, what: str = "a whole number") -> int:
        if not whole_number(value) or not low <= value <= high:  # type: ignore[operator]
            self.fail(path, f"expected {what} from {low} to {high}, got {shown(value)}")
        return value  # type: ignore[return-value]

    def broker_id(self, value: object, path: str) -> int:
        return self.integer(value, path, 0, INT32_MAX, "a broker id (int32)")

    def partition(self, value: object, path: str) -> int:
        return self.integer(value, path, 0, INT32_MAX, "a partition number (int32)")

    def count(self, value: object, path: str) -> int:
        return self.integer(value, path, 0, INT32_MAX, "a count (int32)")

    def text(self, value: object, path: str, *, empty: bool = False) -> str:
        """A string that is valid Unicode (no lone surrogate), non-empty unless `empty`."""
        if not isinstance(value, str) or not (empty or value):
            self.fail(path, f"expected {'a' if empty else 'a non-empty'} string, got {shown(value)}")
        try:
            value.encode()
        except UnicodeEncodeError:
            self.fail(path, f"{shown(value)} is not valid Unicode (a lone surrogate)")
        return value

    def optional_text(self, value: object, path: str) -> str | None:
        return None if value is None else self.text(value, path, empty=True)

    def timestamp(self, value: object, path: str) -> str:
        """An ISO 8601 date and time (as `datetime.isoformat` writes it)."""
        text = self.text(value, path)
        try:
            datetime.fromisoformat(text)
        except ValueError:
            self.fail(path, f"expected an ISO 8601 time, got {shown(value)}")
        return text

    def optional_timestamp(self, value: object, path: str) -> str | None:
        return None if value is None else self.timestamp(value, path)

    def topic(self, value: object, path: str) -> str:
        problem = topic_name_problem(value)
        if problem is not None:
            self.fail(path, problem)
        return value  # type: ignore[return-value]

    def choice(self, value: object, path: str, choices: Collection[str]) -> str:
        if not isinstance(value, str) or value not in choices:
            self.fail(path, f"expected one of {sorted(choices)}, got {shown(value)}")
        return value

    def boolean(self, value: object, path: str) -> bool:
        if not isinstance(value, bool):
            self.fail(path, f"expected true or false, got {shown(value)}")
        return value

    def replicas(self, value: object, path: str, *, empty: bool = False) -> tuple[int, ...]:
        """A replica list: distinct broker ids, non-empty unless `empty`."""
        ids = tuple(self.broker_id(b, path_of(path, i)) for i, b in enumerate(self.array(value, path)))
        if not (empty or ids):
            self.fail(path, "expected at least one broker id, got []")
        if len(set(ids)) != len(ids):
            self.fail(path, f"lists a broker twice: {list(ids)}")
        return ids

    def topic_partition(self, value: object, path: str) -> tuple[str, int]:
        """`[topic, partition]`, as kafka-ops writes a partition in its documents."""
        pair = self.array(value, path)
        if len(pair) != 2:
            self.fail(path, f"expected [topic, partition], got {shown(pair)}")
        return self.topic(pair[0], path_of(path, 0)), self.partition(pair[1], path_of(path, 1))

    def json_value(self, value: object, path: str) -> Any:
        """Any JSON value (null, boolean, finite number, valid string, array, object), at most
        `MAX_DEPTH` levels deep (deeper is reported at `path`)."""

        def checked(value: object, where: str, depth: int) -> Any:
            if depth > MAX_DEPTH:
                self.fail(path, f"nested deeper than {MAX_DEPTH} levels")
            if value is None or isinstance(value, bool | int):
                return value
            if isinstance(value, float):
                if not math.isfinite(value):
                    self.fail(where, f"expected a finite number, got {value!r}")
                return value
            if isinstance(value, str):
                return self.text(value, where, empty=True)
            if isinstance(value, list):
                return [checked(v, path_of(where, i), depth + 1) for i, v in enumerate(value)]
            obj = self.mapping(value, where)
            return {self.text(k, where): checked(v, path_of(where, k), depth + 1) for k, v in obj.items()}

        return checked(value, path, 0)
