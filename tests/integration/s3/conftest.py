"""A real S3-compatible store for the lake's object-store tests: a moto server (`moto[server]`,
server mode, as the production topology's) on a free loopback port, one for the session, killed at
the end; each test gets its own bucket and the standard AWS variables pointing at it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_ops.child_process import dying_with_parent

START_TIMEOUT_S = 60.0


class MotoServer:
    """`python -m moto.server` on 127.0.0.1:`port`; `stop()` and `start()` again on the same port (a
    restarted moto holds no buckets: the store's content is in its memory)."""

    def __init__(self, port: int, log: Path, env: dict[str, str] | None = None) -> None:
        self.port = port
        self.log = log
        self.env = env
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                # a killed test run leaves no server behind
                dying_with_parent([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)]),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env={**os.environ, **(self.env or {})},
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._answers():
            if self.process.poll() is not None:
                raise RuntimeError(f"moto server exited with {self.process.returncode}: see {self.log}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"moto server did not answer on {self.endpoint} in {START_TIMEOUT_S:g}s")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=20)

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=2):
                return True
        except (urllib.error.URLError, OSError):
            return False


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def moto_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MotoServer]:
    server = MotoServer(_free_port(), tmp_path_factory.mktemp("moto") / "moto.log")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def s3_env(moto_server: MotoServer, monkeypatch: pytest.MonkeyPatch) -> MotoServer:
    """The variables the production topology exports to every Airflow process, for the moto server."""
    if not moto_server._answers():  # a test that stopped it failed before restarting it
        moto_server.start()
    for name in ("AWS_ENDPOINT_URL_S3", "AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server.endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "moto-test-key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "moto-test-secret")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ALLOW_HTTP", "true")
    return moto_server


def client(service: str, endpoint: str | None = None, **credentials: str) -> Any:
    import botocore.session  # noqa: PLC0415

    return botocore.session.get_session().create_client(
        service, region_name="us-east-1", endpoint_url=endpoint or os.environ["AWS_ENDPOINT_URL"], **credentials
    )


def create_bucket(name: str) -> None:
    client("s3").create_bucket(Bucket=name)


@pytest.fixture
def authenticating_moto(tmp_path: Path) -> Iterator[tuple[MotoServer, dict[str, str]]]:
    """A second moto server that checks credentials as AWS does (its IAM enforced after the first
    `FREE_ACTIONS` requests, which make a user allowed s3:* with a key, and a bucket); yields it and
    the user's key pair. Killed at the end of the test."""
    server = MotoServer(_free_port(), tmp_path / "moto-auth.log", env={"INITIAL_NO_AUTH_ACTION_COUNT": "4"})
    server.start()
    try:
        iam = client("iam", server.endpoint, aws_access_key_id="boot", aws_secret_access_key="boot")
        iam.create_user(UserName="lake")
        policy = '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}'
        iam.put_user_policy(UserName="lake", PolicyName="lake", PolicyDocument=policy)
        key = iam.create_access_key(UserName="lake")["AccessKey"]
        pair = {"aws_access_key_id": key["AccessKeyId"], "aws_secret_access_key": key["SecretAccessKey"]}
        client("s3", server.endpoint, **pair).create_bucket(Bucket="auth-lake")
        yield server, pair
    finally:
        server.stop()


@pytest.fixture
def bucket(s3_env: MotoServer) -> str:
    """A new, empty bucket on the moto server."""
    name = f"lake-{uuid.uuid4().hex[:12]}"
    create_bucket(name)
    return name


@pytest.fixture
def s3_root(bucket: str) -> str:
    """A lake root in a new bucket, as the topology's `s3://BUCKET/lake`."""
    return f"s3://{bucket}/lake"
