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
from kafka.errors import UnknownTopicOrPartitionError
from kafka.protocol.admin import DescribeConfigsRequest, DescribeConfigsResponse
from kafka.protocol.api_header import RequestHeader

from kafka_ops.snapshot.model import CollectionIssue, ConfigOverride

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


def topic_overrides(answers: list[Any]) -> tuple[list[ConfigOverride], list[CollectionIssue]]:
    """Each topic's dynamic overrides from `TopicConfigsAnswer`s, sorted by topic, and what could not be
    read: a failed request (an exception in place of its answer) or a topic the broker could not
    describe is an issue naming it; a topic deleted since its page was read is skipped."""
    overrides, issues = [], []
    for answer in answers:
        if isinstance(answer, BaseException):
            issues.append(CollectionIssue("DescribeConfigs (topics)", f"{type(answer).__name__}: {answer}", "request"))
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
    Raises ValueError when the bytes are not such an answer (kafka-python's parser turns it into a
    protocol error on the connection, as for any answer it cannot decode)."""
    if version < _FLEXIBLE_FROM:
        return _reduced(DescribeConfigsResponse[version].decode(data))
    try:
        return _walk(bytes(data))
    except (IndexError, StructError, UnicodeDecodeError) as e:
        raise ValueError(f"malformed DescribeConfigs v{version} answer: {e}") from e


def _reduced(response: Any) -> TopicConfigsAnswer:
    return TopicConfigsAnswer(
        response.throttle_time_ms,
        [
            TopicConfigs(r.resource_name, r.error_code, r.error_message,
                         {c.name: c.value for c in r.configs if c.config_source == DYNAMIC_TOPIC})
            for r in response.results
        ],
    )  # fmt: skip


def _walk(buf: bytes) -> TopicConfigsAnswer:
    """A flexible DescribeConfigs answer (compact strings and arrays, tagged fields), walked with the
    position in a local: one call per config entry at most, since an entry's fields are a few bytes
    each and a 1,000-topic snapshot has 37,000 entries. A varint below 0x80 (every length and count in
    practice) is read inline; a longer one by `_uvarint`."""
    (throttle_time_ms,) = unpack_from(">i", buf, 0)
    count, pos = _uvarint(buf, 4)
    results = []
    for _ in range(count - 1):
        (error_code,) = unpack_from(">h", buf, pos)
        error_message, pos = _string(buf, pos + 2)
        name, pos = _string(buf, pos + 1)  # after the resource type
        overrides: dict[str, str | None] = {}
        entries, pos = _uvarint(buf, pos)
        for _ in range(entries - 1):
            size = buf[pos]  # name: its length + 1
            key_at, pos = (pos + 1, pos + size) if 0 < size < 0x80 else _long_string(buf, pos)
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
        results.append(TopicConfigs(name or "", error_code, error_message, overrides))
    pos = _skip_tags(buf, pos)
    if pos != len(buf):
        raise ValueError(f"{len(buf) - pos} bytes left after the last field")
    return TopicConfigsAnswer(throttle_time_ms, results)


def _uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    """An unsigned varint at `pos`: its value and the position after it."""
    byte = buf[pos]
    value, shift = byte & 0x7F, 7
    while byte & 0x80:
        pos += 1
        byte = buf[pos]
        value |= (byte & 0x7F) << shift
        shift += 7
    return value, pos + 1


def _long_string(buf: bytes, pos: int) -> tuple[int, int]:
    """A compact string whose length takes more than one byte: where its bytes start and end."""
    size, start = _uvarint(buf, pos)
    return start, start + max(size - 1, 0)


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
    """What kafka-python's parser asks of a response class: its header, then its body."""

    def __init__(self, version: int) -> None:
        self.version = version

    def parse_header(self, data: Any) -> Any:
        return DescribeConfigsResponse[self.version].parse_header(data)

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
