"""An object store that fails: stopped, refusing the credentials, without the bucket. The call that
needed it fails with one `LakeError` line naming the lake root, the endpoint and its variable, nothing
is half-published, and the lake works again once the store is back."""

from __future__ import annotations

import time

import pytest

from kafka_ops.alerting.state_store import IncidentStore
from kafka_ops.errors import LakeError
from kafka_ops.lake.delta_store import DeltaLake
from kafka_ops.lake.open import open_lake
from kafka_ops.snapshot.tables import snapshot_batch
from tests.integration.s3.conftest import MotoServer, create_bucket
from tests.unit.snapshots import small_snapshot

pytestmark = pytest.mark.integration


def assert_one_line_naming(error: LakeError, root: str, endpoint: str | None, reason: str) -> None:
    message = str(error)
    assert "\n" not in message, message
    assert root in message and reason in message, message
    if endpoint:
        assert f"endpoint {endpoint} ($AWS_ENDPOINT_URL)" in message, message
    assert "moto-test-secret" not in message


def test_a_stopped_store_fails_fast_and_works_again_when_back(s3_env: MotoServer, s3_root: str) -> None:
    lake = open_lake(s3_root, "delta")
    lake.publish(snapshot_batch(small_snapshot("s1")))
    s3_env.stop()
    try:
        started = time.monotonic()
        with pytest.raises(LakeError) as failed:
            lake.publish(snapshot_batch(small_snapshot("s2")))
        assert time.monotonic() - started < 60  # fails, does not hang the task
        assert_one_line_naming(failed.value, s3_root, s3_env.endpoint, "the object store does not answer")
        assert "it is not published" in str(failed.value)
        with pytest.raises(LakeError) as failed:
            lake.latest_snapshot_id("c1")
        assert_one_line_naming(failed.value, s3_root, s3_env.endpoint, "the object store does not answer")
        with pytest.raises(LakeError) as failed:
            IncidentStore(s3_root).load("c1")
        assert_one_line_naming(failed.value, s3_root, s3_env.endpoint, "the object store does not answer")
    finally:
        s3_env.start()  # a restarted moto is empty: the bucket comes back empty
    create_bucket(s3_root.removeprefix("s3://").split("/")[0])
    lake.publish(snapshot_batch(small_snapshot("s3")))
    assert DeltaLake(s3_root).snapshots("c1").column("snapshot_id").to_pylist() == ["s3"]


def test_a_missing_bucket_is_named(s3_env: MotoServer, s3_root: str) -> None:
    lake = open_lake(s3_root, "delta")
    lake.publish(snapshot_batch(small_snapshot("s1")))
    missing = "s3://no-such-bucket-here/lake"
    with pytest.raises(LakeError) as failed:
        open_lake(missing, "delta").publish(snapshot_batch(small_snapshot("s2")))
    assert_one_line_naming(failed.value, missing, s3_env.endpoint, "the bucket does not exist")
    with pytest.raises(LakeError) as failed:
        IncidentStore(missing).load("c1")
    assert_one_line_naming(failed.value, missing, s3_env.endpoint, "the bucket does not exist")


def test_refused_credentials_are_named(
    authenticating_moto: tuple[MotoServer, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    server, pair = authenticating_moto
    root = "s3://auth-lake/lake"
    monkeypatch.setenv("AWS_ENDPOINT_URL", server.endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", pair["aws_access_key_id"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", pair["aws_secret_access_key"])
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ALLOW_HTTP", "true")
    open_lake(root, "delta").publish(snapshot_batch(small_snapshot("s1")))  # the right key works
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "moto-test-secret")  # a wrong secret for that key
    with pytest.raises(LakeError) as failed:
        open_lake(root, "delta").publish(snapshot_batch(small_snapshot("s2")))
    assert_one_line_naming(failed.value, root, server.endpoint, "refused the credentials")
    with pytest.raises(LakeError) as failed:
        IncidentStore(root).save(IncidentStore(root).load("c1")[0])
    assert_one_line_naming(failed.value, root, server.endpoint, "refused the credentials")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", pair["aws_secret_access_key"])
    assert open_lake(root, "delta").latest_snapshot_id("c1") == "s1"  # nothing of s2 is visible
