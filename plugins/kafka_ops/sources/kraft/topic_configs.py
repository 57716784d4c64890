"""The topics' dynamic overrides, from DescribeConfigs answers read straight off the wire.

A topic has some 40 configs and the snapshot keeps only its overrides (source `DYNAMIC_TOPIC_CONFIG`,
what `/config/topics/<t>` holds on ZooKeeper), while the broker cannot filter by source. kafka-python
decodes every entry of every topic into an object (37,000 of them for 1,000 topics), which was the
largest part of a KRaft snapshot's time in Python; this module's request has its answer decoded by
`decode_overrides` instead, which walks the entries and builds only the overrides (about 6x faster).
Only the flexible versions (v4+, every Kafka 2.6+ broker) are walked by hand; an older answer is
decoded by kafka-python and reduced to the same `TopicConfigs`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from struct import error as StructError
from struct import unpack_from
from typing import Any

from kafka.admin import ConfigResourceType, ConfigSourceType
from kafka.errors import KafkaProtocolError as UndecodableAnswer
from kafka.errors import UnknownTopicOrPartitionError
from kafka.protocol.admin import DescribeConfigsRequest, DescribeConfigsResponse
from kafka.protocol.api_header import RequestHeader

from kafka_ops.model.cluster import CollectionIssue, ConfigOverride

DYNAMIC_TOPIC = ConfigSourceType.DYNAMIC_TOPIC_CONFIG.value
_UNKNOWN_TOPIC = UnknownTopicOrPartitionError.errno
_FLEXIBLE_FROM = 4


@dataclass(frozen=True, slots=True)
class TopicConfigs:
    """One topic of a DescribeConfigs answer: its error, and its dynamic overrides (name -> value)."""

    name: str
    error_code: int
    error_message: str | None
    overrides: dict[str, str | None] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TopicConfigsAnswer:
    """A DescribeConfigs answer for topics, reduced to what the snapshot keeps."""

    throttle_time_ms: int
    results: list[TopicConfigs]


def request(topics: list[str]) -> Any:
    """One DescribeConfigs for every config of these topics (no synonyms, no documentation), whose
    answer arrives as a `TopicConfigsAnswer`."""
    resource = DescribeConfigsRequest.DescribeConfigsResource
    return _OverridesRequest(
        resources=[resource(resource_type=ConfigResourceType.TOPIC.value, resource_name=t, configuration_keys=None)
                   for t in topics],
        include_synonyms=False,
        include_documentation=False,
    )  # fmt: skip


def topic_overrides(answers: list[Any], peer: str | None = None) -> tuple[list[ConfigOverride], list[CollectionIssue]]:
    """Each topic's dynamic overrides from `TopicConfigsAnswer`s, sorted by topic, and what could not be
    read: a failed request (an exception in place of its answer: the broker `peer` went away, or sent
    what `decode_overrides` refused) or a topic the broker could not describe is an issue naming it; a
    topic deleted since its page was read is skipped."""
    overrides, issues = [], []
    for answer in answers:
        if isinstance(answer, BaseException):
            problem = f"{type(answer).__name__}: {answer}"
            if isinstance(answer.__context__, ValueError):  # kafka-python's "Unable to decode response": why
                problem += f" ({answer.__context__})"
            where = "DescribeConfigs (topics)" + (f" from {peer}" if peer else "")
            issues.append(CollectionIssue(where, problem, "request"))
            continue
        for topic in answer.results:
            if topic.error_code == _UNKNOWN_TOPIC:
                continue
            if topic.error_code:
                problem = f"DescribeConfigs error {topic.error_code}: {topic.error_message or ''}".rstrip(": ")
                issues.append(CollectionIssue(f"topic {topic.name} configs", problem, "request"))
            elif topic.overrides:
                overrides.append(ConfigOverride("topic", topic.name, topic.overrides))
    return sorted(overrides, key=lambda o: o.entity_name), issues


def decode_overrides(data: bytes | memoryview, version: int) -> TopicConfigsAnswer:
    """A DescribeConfigs answer's body (after its header) at `version`, reduced to the overrides.
    Raises ValueError when the bytes are not such an answer: cut, a length past the end, a null array or
    config name (kafka-python's parser turns it into a protocol error on the connection, as for any
    answer it cannot decode, and the request into a collection issue)."""
    try:
        if version < _FLEXIBLE_FROM:
            return _reduced(DescribeConfigsResponse[version].decode(data))
        return _walk(bytes(data))
    except (IndexError, StructError, UnicodeDecodeError, OverflowError, TypeError, AttributeError) as e:
        raise ValueError(f"malformed DescribeConfigs v{version} answer: {type(e).__name__}: {e}") from e


def _reduced(response: Any) -> TopicConfigsAnswer:
    results = []
    for r in _not_null(response.results, "results"):
        overrides = {}
        for c in _not_null(r.configs, f"configs of {r.resource_name!r}"):
            if not isinstance(c.name, str) or not c.name:
                raise ValueError(f"a config of {r.resource_name!r} has a null or empty name")
            if c.config_source == DYNAMIC_TOPIC:
                overrides[c.name] = c.value
        results.append(TopicConfigs(_resource_name(r.resource_name), r.error_code, r.error_message, overrides))
    return TopicConfigsAnswer(response.throttle_time_ms, results)


def _not_null(values: list[Any] | None, what: str) -> list[Any]:
    if values is None:
        raise ValueError(f"{what} is a null array")
    return values


def _resource_name(name: str | None) -> str:
    if not name:
        raise ValueError("a result names no topic")
    return name


def _walk(buf: bytes) -> TopicConfigsAnswer:
    """A flexible DescribeConfigs answer (compact strings and arrays, tagged fields), walked with the
    position in a local: one call per config entry at most, since an entry's fields are a few bytes
    each and a 1,000-topic snapshot has 37,000 entries. A varint below 0x80 (every length and count in
    practice) is read inline; a longer one by `_uvarint`."""
    (throttle_time_ms,) = unpack_from(">i", buf, 0)
    count, pos = _uvarint(buf, 4)
    if count == 0:
        raise ValueError("results is a null array")
    results = []
    for _ in range(count - 1):
        (error_code,) = unpack_from(">h", buf, pos)
        error_message, pos = _string(buf, pos + 2)
        name, pos = _string(buf, pos + 1)  # after the resource type
        overrides: dict[str, str | None] = {}
        entries, pos = _uvarint(buf, pos)
        if entries == 0:
            raise ValueError(f"configs of {name!r} is a null array")
        for _ in range(entries - 1):
            size = buf[pos]  # name: its length + 1 (0: null, refused by _long_string)
            key_at, pos = (pos + 1, pos + size) if 1 < size < 0x80 else _long_string(buf, pos)
            key_end = pos
            size = buf[pos]  # value: its length + 1, or 0 for null
            null_value = size == 0
            value_at, pos = (pos + 1, pos + (size or 1)) if size < 0x80 else _long_string(buf, pos)
            value_end = pos
            source = buf[pos + 1]  # between read only and sensitive
            pos += 3
            if buf[pos] == 1:  # synonyms: an empty array (none asked for)
                pos += 1
            else:
                pos = _skip_synonyms(buf, pos)
            pos += 1  # config type
            if buf[pos] == 0:  # documentation: null (none asked for)
                pos += 1
            else:
                pos = _skip_string(buf, pos)
            pos = pos + 1 if buf[pos] == 0 else _skip_tags(buf, pos)
            if source == DYNAMIC_TOPIC:
                value = None if null_value else buf[value_at:value_end].decode()
                overrides[buf[key_at:key_end].decode()] = value
        pos = _skip_tags(buf, pos)
        results.append(TopicConfigs(_resource_name(name), error_code, error_message, overrides))
    pos = _skip_tags(buf, pos)
    if pos > len(buf):
        raise ValueError(f"a length runs {pos - len(buf)} bytes past the end of the answer")
    if pos != len(buf):
        raise ValueError(f"{len(buf) - pos} bytes left after the last field")
    return TopicConfigsAnswer(throttle_time_ms, results)


def _uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    """An unsigned varint at `pos`: its value and the position after it. Kafka's are 32-bit (five bytes
    at most): a longer one is not Kafka's."""
    byte = buf[pos]
    value, shift = byte & 0x7F, 7
    while byte & 0x80:
        if shift > 28:
            raise ValueError(f"a varint at byte {pos} is longer than five bytes")
        pos += 1
        byte = buf[pos]
        value |= (byte & 0x7F) << shift
        shift += 7
    return value, pos + 1


def _long_string(buf: bytes, pos: int) -> tuple[int, int]:
    """A config name (or a value whose length takes more than one byte): where its bytes start and end;
    a null or empty name is not Kafka's."""
    size, start = _uvarint(buf, pos)
    if size <= 1:
        raise ValueError(f"a config at byte {pos} has a null or empty name")
    return start, start + size - 1


def _string(buf: bytes, pos: int) -> tuple[str | None, int]:
    size, pos = _uvarint(buf, pos)
    if size == 0:
        return None, pos
    end = pos + size - 1
    if end > len(buf):
        raise IndexError("a string runs past the end")
    return buf[pos:end].decode(), end


def _skip_string(buf: bytes, pos: int) -> int:
    size, pos = _uvarint(buf, pos)
    return pos + max(size - 1, 0)


def _skip_synonyms(buf: bytes, pos: int) -> int:
    count, pos = _uvarint(buf, pos)
    for _ in range(count - 1):  # name, value, source, tags
        pos = _skip_string(buf, _skip_string(buf, pos)) + 1
        pos = _skip_tags(buf, pos)
    return pos


def _skip_tags(buf: bytes, pos: int) -> int:
    count, pos = _uvarint(buf, pos)
    for _ in range(count):
        _, pos = _uvarint(buf, pos)  # tag
        size, pos = _uvarint(buf, pos)
        pos += size
    return pos


class _Decoder:
    """What kafka-python's parser asks of a response class: its header, then its body. A header that cannot
    be read is kafka-python's protocol error, which fails the request at once: its parser guards only the
    body's decoding, and anything else escapes its read loop (the request then waits out its timeout)."""

    def __init__(self, version: int) -> None:
        self.version = version

    def parse_header(self, data: Any) -> Any:
        try:
            return DescribeConfigsResponse[self.version].parse_header(data)
        except (ValueError, StructError, IndexError, EOFError, OverflowError) as e:
            problem = f"malformed DescribeConfigs v{self.version} answer header: {type(e).__name__}: {e}"
            raise UndecodableAnswer(problem) from e

    def decode(self, data: Any) -> TopicConfigsAnswer:
        return decode_overrides(data.read() if hasattr(data, "read") else data, self.version)


class _OverridesHeader(RequestHeader, init=False):  # type: ignore[call-arg]
    __slots__ = ()

    def get_response_class(self) -> _Decoder:
        return _Decoder(self.request_api_version)


class _OverridesRequest(DescribeConfigsRequest, init=False):  # type: ignore[call-arg]
    """A DescribeConfigs whose answer is decoded by `decode_overrides` (kafka-python picks a response's
    decoder from the header of the request it answers)."""

    def with_header(self, correlation_id: int = 0, client_id: str = "kafka-python") -> None:
        self._header = _OverridesHeader(request_api_key=self.API_KEY, request_api_version=self.API_VERSION,
                                        correlation_id=correlation_id, client_id=client_id)  # fmt: skip
