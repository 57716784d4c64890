"""Shared fixtures: the real sandbox cluster (session-scoped) and a fresh lake per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_ops.lake import Lake
from kafka_ops.sandbox import SandboxCluster


@pytest.fixture(scope="session")
def sandbox() -> Iterator[SandboxCluster]:
    """ZooKeeper + 3 Kafka 3.9 brokers (racks a/b/c); always torn down, even on failure."""
    cluster = SandboxCluster()
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def healthy_sandbox(sandbox: SandboxCluster) -> SandboxCluster:
    """The session sandbox, with every broker running and no partition under-replicated."""
    sandbox.start_zookeeper()
    for broker_id in sandbox.broker_ids():
        if not sandbox.broker_running(broker_id):
            sandbox.start_broker(broker_id)
    sandbox.wait_healthy(180)
    return sandbox


@pytest.fixture
def lake(tmp_path: Path) -> Lake:
    return Lake(tmp_path / "lake")
