"""The vendored Kafka 4 schemas (the group APIs, UnregisterBroker) are Kafka's own, byte for byte, and build
kafka-python messages."""

from __future__ import annotations

import zipfile
from importlib import resources

import pytest

from kafka_ops.sources import messages
from kafka_ops.sources.messages import cluster, groups
from sandbox import ensure_kafka4_jars

SCHEMAS = sorted(p.name for p in resources.files(messages).iterdir() if p.name.endswith(".json"))


@pytest.mark.integration
def test_schemas_are_kafkas_own_byte_for_byte() -> None:
    jar = next(ensure_kafka4_jars().glob("kafka-clients-*.jar"))
    with zipfile.ZipFile(jar) as archive:
        for name in SCHEMAS:
            assert (resources.files(messages) / name).read_bytes() == archive.read(f"common/message/{name}"), name


@pytest.mark.parametrize("name", SCHEMAS)
def test_every_schema_has_its_class(name: str) -> None:
    cls = getattr(groups, name.removesuffix(".json"), None) or getattr(cluster, name.removesuffix(".json"))
    assert cls.name == name.removesuffix(".json")


def test_consumer_group_describe_round_trips() -> None:
    request = groups.ConsumerGroupDescribeRequest(version=0, group_ids=["orders"], include_authorized_operations=False)
    assert groups.ConsumerGroupDescribeRequest.API_KEY == 69
    decoded = groups.ConsumerGroupDescribeRequest.decode(request.encode(version=0), version=0)
    assert decoded.group_ids == ["orders"]
