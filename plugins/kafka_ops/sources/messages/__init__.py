"""Kafka 4's group APIs that kafka-python 3.0.12 does not ship, on kafka-python's own protocol machinery.

kafka-python builds every request and response from Kafka's JSON message schemas
(`kafka.protocol.schemas.resources`). The schemas here are Kafka's own, copied byte for byte from
`common/message/` in the kafka-clients 4.4.0 jar (a test compares them with the jar), so the wire
format is Kafka's, not a guess: ConsumerGroupDescribe (KIP-848, API 69), ShareGroupDescribe (API
77) and DescribeShareGroupOffsets (API 90) of KIP-932, StreamsGroupDescribe (KIP-1071, API 89).
The classes are declared in `kafka_ops.sources.messages.groups`; a new schema needs only its JSON
file here and one class line there.
"""
