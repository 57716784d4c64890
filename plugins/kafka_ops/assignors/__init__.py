"""Kafka's consumer-group assignors, exactly: a what-if of what `range`, `roundrobin`, `sticky`
or `cooperative-sticky` (rack-aware where racks are known, KIP-881) would give a group's members,
and what the consumer protocol's broker-side `uniform` and `range` (KIP-848) would.

`AssignorBridge` runs kafka-clients' own Java classes and Kafka 4's group-coordinator assignors
(see `bridge`); `protocol` reads and writes the consumer-protocol bytes members exchange; `model`
holds the typed inputs and results, `server` those of the server-side assignors.
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
from kafka_ops.assignors.server import (
    SERVER_ASSIGNORS,
    ConsumerGroupInput,
    ConsumerMember,
    ServerAssignorName,
    ServerAssignResult,
    ServerTestHooks,
)

__all__ = [
    "ASSIGNORS",
    "SERVER_ASSIGNORS",
    "AssignFailure",
    "AssignResult",
    "AssignmentRejected",
    "AssignorBridge",
    "AssignorBridgeError",
    "AssignorInputError",
    "AssignorName",
    "ClusterLayout",
    "ConsumerGroupInput",
    "ConsumerMember",
    "GroupInput",
    "KafkaTestHooks",
    "Member",
    "ProtocolError",
    "Round",
    "ServerAssignResult",
    "ServerAssignorName",
    "ServerTestHooks",
    "StickyMemberData",
]
