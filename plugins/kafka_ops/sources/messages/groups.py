"""Request and response classes for Kafka 4's group APIs, built from the schemas in this package."""

from __future__ import annotations

from kafka.protocol.api_message import ApiMessage

from kafka_ops.sources import messages

# One line per message: kafka-python's metaclass reads `<class name>.json` from `load_json`'s package.


class ConsumerGroupDescribeRequest(ApiMessage, load_json=messages):  # type: ignore[call-arg]
    pass


class ConsumerGroupDescribeResponse(ApiMessage, load_json=messages):  # type: ignore[call-arg]
    pass


class ShareGroupDescribeRequest(ApiMessage, load_json=messages):  # type: ignore[call-arg]
    pass


class ShareGroupDescribeResponse(ApiMessage, load_json=messages):  # type: ignore[call-arg]
    pass


class DescribeShareGroupOffsetsRequest(ApiMessage, load_json=messages):  # type: ignore[call-arg]
    pass


class DescribeShareGroupOffsetsResponse(ApiMessage, load_json=messages):  # type: ignore[call-arg]
    pass


class StreamsGroupDescribeRequest(ApiMessage, load_json=messages):  # type: ignore[call-arg]
    pass


class StreamsGroupDescribeResponse(ApiMessage, load_json=messages):  # type: ignore[call-arg]
    pass
