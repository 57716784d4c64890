"""The topics' dynamic overrides read straight off DescribeConfigs answers: each answer is built and
encoded by kafka-python 3.0.12 as a broker sends it, then decoded by `decode_overrides`, which must keep
exactly what kafka-python's own decoding keeps (the entries whose source is DYNAMIC_TOPIC_CONFIG)."""

from __future__ import annotations

from typing import Any

import pytest
from kafka.errors import KafkaConnectionError
from kafka.protocol.admin import DescribeConfigsResponse

from kafka_ops.model.cluster import ConfigOverride
from kafka_ops.sources.kraft.topic_configs import (
    DYNAMIC_TOPIC,
    TopicConfigs,
    decode_overrides,
    request,
    topic_overrides,
)

DEFAULT, STATIC_BROKER = 5, 4
Entry = tuple[str | None, int]  # value, config source
RESULT = DescribeConfigsResponse.DescribeConfigsResult
ENTRY = RESULT.DescribeConfigsResourceResult
SYNONYM = ENTRY.DescribeConfigsSynonym


def encoded(results: list[tuple[str, int, dict[str, Entry]]], version: int = 4, **extra: Any) -> bytes:
    """A DescribeConfigs answer's body as a broker sends it: (topic, error code, {name: (value, source)})
    per result; `extra` sets fields of every entry (synonyms, documentation)."""
    response = DescribeConfigsResponse(
        throttle_time_ms=7,
        results=[
            RESULT(error_code=code, error_message="gone" if code else None, resource_type=2, resource_name=topic,
                   configs=[entry(k, v, source, **extra) for k, (v, source) in configs.items()])
            for topic, code, configs in results
        ],
    )  # fmt: skip
    response._header = None
    return bytes(response.encode(version=version))


def entry(name: str, value: str | None, source: int, **extra: Any) -> Any:
    fields = {"synonyms": [], "documentation": None} | extra
    return ENTRY(name=name, value=value, read_only=False, config_source=source, is_sensitive=False, config_type=2,
                 **fields)  # fmt: skip


def as_kafka_python_keeps(body: bytes, version: int) -> list[TopicConfigs]:
    """What the collector kept before: kafka-python's objects, filtered by source."""
    response = DescribeConfigsResponse.decode(body, version=version)
    return [
        TopicConfigs(r.resource_name, r.error_code, r.error_message,
                     {c.name: c.value for c in r.configs if c.config_source == DYNAMIC_TOPIC})
        for r in response.results
    ]  # fmt: skip


TOPICS = [
    ("b", 0, {"retention.ms": ("1000", DYNAMIC_TOPIC), "cleanup.policy": ("delete", DEFAULT)}),
    ("a", 0, {"min.insync.replicas": ("2", DYNAMIC_TOPIC), "message.format": ("", DYNAMIC_TOPIC)}),
    ("c", 0, {"cleanup.policy": ("delete", DEFAULT), "segment.ms": (None, STATIC_BROKER)}),
    ("gone", 3, {}),
    ("é-unicode", 0, {"x" * 200: ("v" * 300, DYNAMIC_TOPIC), "nulled": (None, DYNAMIC_TOPIC)}),
]


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_every_version_keeps_what_kafka_python_keeps(version: int) -> None:
    body = encoded(TOPICS, version)
    answer = decode_overrides(body, version)
    assert answer.results == as_kafka_python_keeps(body, version)
    assert answer.throttle_time_ms == 7


def test_the_hand_walk_reads_long_strings_nulls_and_empty_values() -> None:
    """Lengths of 128+ take two varint bytes; a null value and an empty one differ."""
    results = decode_overrides(encoded(TOPICS), 4).results
    assert results[1].overrides == {"min.insync.replicas": "2", "message.format": ""}
    assert results[4] == TopicConfigs("é-unicode", 0, None, {"x" * 200: "v" * 300, "nulled": None})
    assert results[3] == TopicConfigs("gone", 3, "gone", {})


def test_synonyms_and_documentation_are_stepped_over() -> None:
    synonyms = [
        SYNONYM(name="log.retention.ms", value="5", source=STATIC_BROKER),
        SYNONYM(name="n", value=None, source=5),
    ]
    body = encoded(TOPICS, synonyms=synonyms, documentation="what it does " * 20)
    assert decode_overrides(body, 4).results == as_kafka_python_keeps(body, 4)


def test_bytes_that_are_not_such_an_answer_are_a_value_error() -> None:
    body = encoded(TOPICS)
    with pytest.raises(ValueError, match="malformed DescribeConfigs v4"):
        decode_overrides(body[:-9], 4)
    with pytest.raises(ValueError, match="bytes left"):
        decode_overrides(body + b"\x00", 4)


def test_the_request_has_its_answer_decoded_by_decode_overrides() -> None:
    """kafka-python picks the decoder from the header of the request an answer belongs to."""
    sent = request(["a", "b"])
    sent.API_VERSION = 4
    sent.with_header(correlation_id=3, client_id="kafka-ops")
    decoder = sent.header.get_response_class()
    assert [r.resource_name for r in sent.resources] == ["a", "b"]
    assert decoder.decode(encoded(TOPICS)).results == as_kafka_python_keeps(encoded(TOPICS), 4)


def test_topic_overrides_keep_only_dynamic_topic_configs_sorted_by_topic() -> None:
    overrides, issues = topic_overrides([decode_overrides(encoded(TOPICS[:3]), 4)])
    assert overrides == [
        ConfigOverride("topic", "a", {"min.insync.replicas": "2", "message.format": ""}),
        ConfigOverride("topic", "b", {"retention.ms": "1000"}),
    ]
    assert issues == []


def test_a_failed_page_or_topic_is_an_issue_and_a_deleted_topic_is_skipped() -> None:
    body = encoded([("gone", 3, {}), ("locked", 29, {}), ("ok", 0, {"retention.ms": ("1", DYNAMIC_TOPIC)})])
    overrides, issues = topic_overrides([decode_overrides(body, 4), KafkaConnectionError("broker 2 went away")])
    assert overrides == [ConfigOverride("topic", "ok", {"retention.ms": "1"})]
    assert [(i.path, i.problem) for i in issues] == [
        ("topic locked configs", "DescribeConfigs error 29: gone"),
        ("DescribeConfigs (topics)", "KafkaConnectionError: KafkaConnectionError: broker 2 went away"),
    ]
