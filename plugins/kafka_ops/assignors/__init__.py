"""Kafka's consumer-group assignors, exactly: a what-if of what `range`, `roundrobin`, `sticky`
or `cooperative-sticky` (rack-aware where racks are known, KIP-881) would give a group's members.

`AssignorBridge` runs kafka-clients' own Java classes (see `bridge`); `protocol` reads and writes
the consumer-protocol bytes members exchange; `model` holds the typed inputs and results.
"""

from kafka_ops.assignors.bridge import AssignmentRejected, AssignorBridge, AssignorBridgeError, StickyMemberData
from kafka_ops.assignors.model import (
    ASSIGNORS,
    AssignFailure,
    AssignorInputError,
    AssignorName,
    AssignResult,
    ClusterLayout,
    GroupInput,
    KafkaTestHooks,
    Member,
    Round,
)
from kafka_ops.assignors.protocol import ProtocolError

__all__ = [
    "ASSIGNORS",
    "AssignFailure",
    "AssignResult",
    "AssignmentRejected",
    "AssignorBridge",
    "AssignorBridgeError",
    "AssignorInputError",
    "AssignorName",
    "ClusterLayout",
    "GroupInput",
    "KafkaTestHooks",
    "Member",
    "ProtocolError",
    "Round",
    "StickyMemberData",
]
