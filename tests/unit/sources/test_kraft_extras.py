"""Which brokers Kafka cordons, from a DescribeConfigs answer shaped as kafka-python 3.0.12 gives it
(checked against Kafka 4.4: `cordoned.log.dirs` is `DEFAULT_CONFIG` "" until set, then
`DYNAMIC_BROKER_CONFIG`; `log.dirs` is `STATIC_BROKER_CONFIG`)."""

from __future__ import annotations

from typing import Any

import pytest
from kafka.errors import KafkaConnectionError
from kafka.protocol.admin import DescribeConfigsResponse

from kafka_ops.snapshot.model import ConfigOverride
from kafka_ops.sources.kraft.extras import cordons_every_log_dir, topic_overrides


def config(value: str, source: str) -> dict[str, Any]:
    return {"value": value, "read_only": False, "config_source": source, "is_sensitive": False, "synonyms": []}


def answer(cordoned: str | None, log_dirs: str | None = "/data/a,/data/b", log_dir: str = "/tmp/kafka-logs") -> dict:
    configs = {"log.dir": config(log_dir, "DEFAULT_CONFIG")}
    if log_dirs is not None:
        configs["log.dirs"] = config(log_dirs, "STATIC_BROKER_CONFIG")
    if cordoned is not None:
        configs["cordoned.log.dirs"] = config(cordoned, "DYNAMIC_BROKER_CONFIG")
    return configs


@pytest.mark.parametrize(
    ("configs", "cordoned"),
    [
        (answer("*"), True),
        (answer("/data/b,/data/a"), True),
        (answer(" /data/a/ , /data/b"), True),  # as paths, not as strings
        (answer("/data/a,/data/b,/data/gone"), True),
        (answer("/data/a"), False),  # the broker still takes replicas on /data/b
        (answer(""), False),
        (answer(None), False),  # a release without KIP-1066 does not list the config
        (answer("/tmp/kafka-logs", log_dirs=None), True),  # no log.dirs: log.dir holds the data
        (answer("/tmp/kafka-logs"), False),
    ],
)
def test_a_broker_is_cordoned_when_every_log_dir_is(configs: dict, cordoned: bool) -> None:
    assert cordons_every_log_dir(configs) is cordoned


def test_the_source_of_the_value_does_not_matter() -> None:
    """Static (server.properties), per broker or cluster-wide dynamic: the broker answers its effective value."""
    for source in ("STATIC_BROKER_CONFIG", "DYNAMIC_BROKER_CONFIG", "DYNAMIC_DEFAULT_BROKER_CONFIG"):
        configs = answer(None)
        configs["cordoned.log.dirs"] = config("*", source)
        assert cordons_every_log_dir(configs)


# -- topic overrides, read straight off DescribeConfigs answers (kafka-python's own response objects) -----


def configs_answer(*results: tuple[str, int, dict[str, tuple[str, int]]]) -> Any:
    """A DescribeConfigs v4 answer: (topic, error code, {name: (value, config source)}) per result,
    encoded and decoded by kafka-python as a broker's answer is."""
    result = DescribeConfigsResponse.DescribeConfigsResult
    entry = result.DescribeConfigsResourceResult
    response = DescribeConfigsResponse(
        throttle_time_ms=0,
        results=[
            result(error_code=code, error_message="gone" if code else None, resource_type=2, resource_name=topic,
                   configs=[entry(name=k, value=v, read_only=False, config_source=source, is_sensitive=False,
                                  synonyms=[], config_type=2, documentation=None)
                            for k, (v, source) in configs.items()])
            for topic, code, configs in results
        ],
    )  # fmt: skip
    return DescribeConfigsResponse.decode(response.encode(version=4), version=4)


DYNAMIC_TOPIC, DEFAULT = 1, 5


def test_topic_overrides_keep_only_dynamic_topic_configs() -> None:
    answer_ = configs_answer(
        ("b", 0, {"retention.ms": ("1000", DYNAMIC_TOPIC), "cleanup.policy": ("delete", DEFAULT)}),
        ("a", 0, {"min.insync.replicas": ("2", DYNAMIC_TOPIC)}),
        ("c", 0, {"cleanup.policy": ("delete", DEFAULT)}),
    )
    overrides, issues = topic_overrides([answer_])
    assert overrides == [
        ConfigOverride("topic", "a", {"min.insync.replicas": "2"}),
        ConfigOverride("topic", "b", {"retention.ms": "1000"}),
    ]
    assert issues == []


def test_a_failed_page_or_topic_is_an_issue_and_a_deleted_topic_is_skipped() -> None:
    answer_ = configs_answer(("gone", 3, {}), ("locked", 29, {}), ("ok", 0, {"retention.ms": ("1", DYNAMIC_TOPIC)}))
    overrides, issues = topic_overrides([answer_, KafkaConnectionError("broker 2 went away")])
    assert overrides == [ConfigOverride("topic", "ok", {"retention.ms": "1"})]
    assert [(i.path, i.problem) for i in issues] == [
        ("topic locked configs", "DescribeConfigs error 29: gone"),
        ("DescribeConfigs (topics)", "KafkaConnectionError: KafkaConnectionError: broker 2 went away"),
    ]
