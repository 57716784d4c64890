"""The soak's report reads a lake on the stack's object store from its own process, which has none of
the stack's variables: it is handed them (`stack.topology.object_store_environment`), and without them
the read fails naming the lake, as it did at the end of an hour-long soak."""

from __future__ import annotations

import os

import pytest

from kafka_ops.errors import LakeError
from kafka_ops.lake.open import open_lake
from kafka_ops.sources.groups.tables import group_batch
from stack.soak_report import read_lake
from tests.integration.s3.conftest import MotoServer
from tests.unit.snapshots import group_snapshot

pytestmark = pytest.mark.integration

STORE = ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_ALLOW_HTTP")


def test_the_report_reads_the_stacks_store_with_the_variables_it_is_handed(
    s3_root: str, s3_env: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_lake(s3_root).publish(group_batch(group_snapshot()))
    environment = {name: os.environ[name] for name in STORE}
    for name in STORE:
        monkeypatch.delenv(name)
    facts = read_lake(s3_root, environment)
    assert (facts.batches, facts.torn, facts.pending_intents) == (1, [], 0) and facts.files > 0
    assert all(name not in os.environ for name in STORE), "the variables are set only while the lake is read"
    with pytest.raises(LakeError, match=s3_root):
        read_lake(s3_root)
