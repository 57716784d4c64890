"""Which brokers Kafka cordons, from a DescribeConfigs answer shaped as kafka-python 3.0.12 gives it
(checked against Kafka 4.4: `cordoned.log.dirs` is `DEFAULT_CONFIG` "" until set, then
`DYNAMIC_BROKER_CONFIG`; `log.dirs` is `STATIC_BROKER_CONFIG`)."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_ops.sources.kraft.extras import cordons_every_log_dir


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
