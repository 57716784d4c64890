"""The executor's own pure parts; the executor itself runs against the sandbox
(tests/integration/test_remediation_sandbox.py)."""

from __future__ import annotations

import pytest

from kafka_ops.errors import ConfigError
from kafka_ops.lake.store import Lake
from kafka_ops.remediation import ExecutionOptions, ZooKeeperBackend, execute
from kafka_ops.settings import ClusterConfig
from kafka_ops.sources.zookeeper.collector import ZooKeeperTarget
from tests.unit.remediation.clusters import rf2_plan


def test_defaults_are_valid_and_throttled() -> None:
    options = ExecutionOptions()
    assert options.throttle_bytes_per_s == 50_000_000 and not options.allow_offline


@pytest.mark.parametrize(("field", "value", "message"), [
    ("batch_max_partitions", 0, "batch_max_partitions must be a positive integer, got 0"),
    ("batch_max_moves_per_broker", 2.0, "batch_max_moves_per_broker must be a positive integer, got 2.0"),
    ("throttle_bytes_per_s", -5, "throttle_bytes_per_s must be a positive integer, got -5"),
    ("stuck_after_s", 0, r"stuck_after_s must be a number > 0 \(seconds\), got 0"),
    ("poll_s", float("nan"), "poll_s must be a number > 0"),
    ("controller_quiet_s", -1, r"controller_quiet_s must be a number >= 0 \(seconds\), got -1"),
    ("election_timeout_s", "60", "election_timeout_s must be a number > 0"),
    ("allow_offline", "yes", "allow_offline must be true or false, got 'yes'"),
])  # fmt: skip
def test_bad_options_name_the_field(field: str, value: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ExecutionOptions(**{field: value})  # type: ignore[arg-type]


def test_no_throttle_and_no_quiet_period_are_allowed() -> None:
    ExecutionOptions(throttle_bytes_per_s=None, controller_quiet_s=0)


@pytest.mark.parametrize("actor", ["", "  "])
def test_every_run_names_its_actor(tmp_path: object, actor: str) -> None:
    target = ZooKeeperTarget("127.0.0.1:1")
    with pytest.raises(ConfigError, match="actor must name who runs the executor"):
        execute(rf2_plan(), lake=Lake(str(tmp_path)), cluster_config=ClusterConfig("c1", writes_enabled=True),
                backend=ZooKeeperBackend(target), zookeeper=target, actor=actor, trusted=lambda *a: None)  # fmt: skip
