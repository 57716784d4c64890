"""One assignor JVM for the whole test session (like the session Spark), stopped at the end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kafka_ops.assignors import AssignorBridge


@pytest.fixture(scope="session")
def bridge() -> Iterator[AssignorBridge]:
    # Kafka's million-partition sticky test needs a few gigabytes of heap.
    with AssignorBridge(heap="3g", timeout_s=600) as running:
        yield running
