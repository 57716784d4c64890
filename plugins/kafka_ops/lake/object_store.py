"""The lake on an S3-compatible object store: where the settings come from, the clients built from
them, conditional writes, and one-line errors that name the setting and the endpoint.

A lake root `s3://BUCKET/PREFIX` (`s3a://` is the same) is reached with the standard AWS
variables, which every client here reads the same way, and nothing else:

* `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL`: an S3-compatible server (moto, MinIO); unset for AWS;
* `AWS_REGION` (or `AWS_DEFAULT_REGION`);
* credentials by the AWS default chain: `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`
  (`AWS_SESSION_TOKEN`), a profile, or the instance's or pod's role. They are never read into
  this package's own objects, so they cannot be logged;
* `AWS_ALLOW_HTTP=true` to allow a plain-HTTP endpoint (delta-rs refuses one otherwise).

Three clients use them: pyarrow's `S3FileSystem` (the Parquet lake, the Delta reads, every file
beside the tables), delta-rs (Delta commits) and botocore (conditional writes, which pyarrow does
not offer). Each fails fast when the store does not answer (`CONNECT_TIMEOUT_S`, a few retries),
so an unreachable store fails the call that needed it instead of hanging the task.

Delta commits are safe between concurrent writers because delta-rs (1.x) writes each
`_delta_log/<version>.json` with a conditional put (`If-None-Match: *`): of two writers of the same
version one gets 412 Precondition Failed and retries on the next version. AWS S3 has answered
conditional puts since August 2024; `storage_options` asks for them explicitly
(`conditional_put=etag`), so no DynamoDB lock is needed (delta-rs 1.x has none). A store that does
not honour `If-None-Match` (moto before 5.2.1, old MinIO) is unsafe for concurrent writers.

`ConditionalStore` gives the files beside the tables (plan progress locks, incident state) the
same primitive: create only if absent, replace only if unchanged (`If-Match` on the ETag), delete
only if unchanged.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import socket
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafka_ops.errors import LakeError

if TYPE_CHECKING:
    import pyarrow.fs as pafs

log = logging.getLogger(__name__)

S3_SCHEMES = ("s3", "s3a", "s3n")
ENDPOINT_VARS = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
REGION_VARS = ("AWS_REGION", "AWS_DEFAULT_REGION")
DEFAULT_REGION = "us-east-1"
CONNECT_TIMEOUT_S = 5
REQUEST_TIMEOUT_S = 60
RETRIES = 2
"""Retries of a failed request (connection refused, 5xx) before the call fails."""


@dataclass(frozen=True)
class S3Location:
    """Where the lake's object store is, as the environment says (no credentials: see the module)."""

    root: str
    endpoint: str | None
    endpoint_var: str | None
    region: str
    allow_http: bool

    @property
    def where(self) -> str:
        """The lake root and the endpoint with the setting it came from, for error messages."""
        endpoint = "AWS S3 (no $AWS_ENDPOINT_URL)"
        if self.endpoint:
            endpoint = f"endpoint {self.endpoint} (${self.endpoint_var})"
        return f"lake root {self.root} at {endpoint}, region {self.region}"

    @property
    def scheme(self) -> str:
        return "http" if self.endpoint and self.endpoint.startswith("http://") else "https"

    def storage_options(self) -> dict[str, str]:
        """delta-rs's storage options: the same endpoint and region, conditional puts for the Delta log's
        commits, and fail-fast timeouts. Credentials stay in the environment, where delta-rs reads them."""
        options = {
            "AWS_REGION": self.region,
            "conditional_put": "etag",
            "connect_timeout": f"{CONNECT_TIMEOUT_S}s",
            "timeout": f"{REQUEST_TIMEOUT_S}s",
            "max_retries": str(RETRIES),
            "retry_timeout": f"{CONNECT_TIMEOUT_S * (RETRIES + 1)}s",
        }
        if self.endpoint:
            options["AWS_ENDPOINT_URL"] = self.endpoint
            options["AWS_ALLOW_HTTP"] = "true" if self.allow_http else "false"
        return options


def is_s3(root: str) -> bool:
    return root.partition("://")[0] in S3_SCHEMES and "://" in root


def s3_location(root: str, environ: Mapping[str, str] | None = None) -> S3Location:
    """The object store of lake root `root` (`s3://`), from the environment (module docstring;
    `environ`, default this process's)."""
    env = os.environ if environ is None else environ
    endpoint_var = next((v for v in ENDPOINT_VARS if env.get(v)), None)
    endpoint = env[endpoint_var].rstrip("/") if endpoint_var else None
    region = next((env[v] for v in REGION_VARS if env.get(v)), DEFAULT_REGION)
    allow_http = env.get("AWS_ALLOW_HTTP", "").strip().lower() in ("1", "true", "yes")
    if endpoint and not endpoint.startswith(("http://", "https://")):
        raise LakeError(f"${endpoint_var}={endpoint!r} for lake root {root}: give a URL, http:// or https://")
    if endpoint and endpoint.startswith("http://") and not allow_http:
        raise LakeError(
            f"${endpoint_var}={endpoint} for lake root {root} is plain HTTP: set AWS_ALLOW_HTTP=true "
            "(a local S3-compatible server) or use https://"
        )
    return S3Location(root, endpoint, endpoint_var, region, allow_http)


def s3_filesystem(location: S3Location) -> pafs.FileSystem:
    """pyarrow's S3 filesystem for `location`: path-style requests to the endpoint, the default
    credential chain, fail-fast timeouts."""
    import pyarrow.fs as pafs  # noqa: PLC0415 - pyarrow only when a lake is opened

    host = location.endpoint.split("://", 1)[1] if location.endpoint else None
    return pafs.S3FileSystem(
        region=location.region,
        endpoint_override=host,
        scheme=location.scheme,
        connect_timeout=CONNECT_TIMEOUT_S,
        request_timeout=REQUEST_TIMEOUT_S,
        retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=RETRIES + 1),
    )


def store_error(location: S3Location, action: str, error: BaseException) -> LakeError:
    """One line: what failed, on which lake root and endpoint (and the setting), and the store's reason."""
    return LakeError(f"cannot {action}: {location.where}: {_reason(error)}")


def _reason(error: BaseException) -> str:
    """The store's own reason, on one line, without a request id or a signature's details."""
    response = getattr(error, "response", None)
    if isinstance(response, dict):
        err = response.get("Error", {})
        code, message = err.get("Code", ""), err.get("Message", "")
        return store_hint(f"{code}: {message}".strip(": "))
    return store_hint(error_line(error)[:300])


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_CHAIN = re.compile(r"\s*\n\s*↳\s*")


def error_line(error: BaseException) -> str:
    """`error` on one line: delta-rs' coloured chain of causes ("a\\n ↳ b\\n ↳ c") reads "a: b: c"."""
    text = _CHAIN.sub(": ", _ANSI.sub("", str(error)))
    return " ".join(text.split()) or type(error).__name__


_HINTS = (
    (
        ("NoSuchBucket", "bucket does not exist", r"bucket '[^']*' not found"),
        "the bucket does not exist: create it or fix the lake root",
    ),
    (
        ("InvalidAccessKeyId", "SignatureDoesNotMatch", r"access_?denied", r"\b403\b", "Forbidden"),
        "refused the credentials: check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (or the role) and the IAM policy",
    ),
    (
        ("Connection refused", "Could not connect", "connect error", "Couldn't connect", "error sending request",
         "timed out", "Connect timeout", r"curlCode: 7\b"),
        "the object store does not answer: is it running, is the endpoint right?",
    ),
)  # fmt: skip


def store_hint(reason: str) -> str:
    """`reason`, led by what it most likely means (no bucket, refused credentials, no answer) when known."""
    for needles, hint in _HINTS:
        if any(re.search(n, reason, re.IGNORECASE) for n in needles):
            return f"{hint} ({reason[:200]})"
    return reason


@dataclass(frozen=True)
class Versioned:
    """An object's content and the ETag it had when read."""

    content: bytes
    etag: str


class ConditionalStore:
    """Conditional writes on the lake's object store (botocore: pyarrow has none). Paths are pyarrow's
    (`BUCKET/KEY`, as `Lake.base` builds them)."""

    def __init__(self, location: S3Location) -> None:
        self.location = location
        self._client: Any = None

    def __repr__(self) -> str:
        return f"ConditionalStore({self.location.root!r})"

    @property
    def client(self) -> Any:
        if self._client is None:
            import botocore.config  # noqa: PLC0415 - botocore only for a lake on an object store
            import botocore.session  # noqa: PLC0415

            config = botocore.config.Config(
                connect_timeout=CONNECT_TIMEOUT_S,
                read_timeout=REQUEST_TIMEOUT_S,
                retries={"max_attempts": RETRIES + 1, "mode": "standard"},
                s3={"addressing_style": "path"} if self.location.endpoint else None,
            )
            session = botocore.session.get_session()
            self._client = session.create_client(
                "s3", region_name=self.location.region, endpoint_url=self.location.endpoint, config=config
            )
        return self._client

    def read(self, path: str) -> Versioned | None:
        """The object at `path` and its ETag, or None when there is none."""
        bucket, key = _split(path)
        try:
            answer = self.client.get_object(Bucket=bucket, Key=key)
            return Versioned(answer["Body"].read(), answer["ETag"])
        except _store_failures() as e:
            if _code(e) in ("NoSuchKey", "404"):
                return None
            raise store_error(self.location, f"read {path}", e) from e

    def create(self, path: str, content: bytes) -> str | None:
        """Write `path` only if no object is there (`If-None-Match: *`): its ETag, or None when one is."""
        return self._put(path, content, IfNoneMatch="*")

    def replace(self, path: str, content: bytes, etag: str) -> str | None:
        """Write `path` only if it still has `etag` (`If-Match`): the new ETag, or None when it changed."""
        return self._put(path, content, IfMatch=etag)

    def delete(self, path: str, etag: str) -> bool:
        """Delete `path` only if it still has `etag`: False when it changed or is gone."""
        bucket, key = _split(path)
        try:
            self.client.delete_object(Bucket=bucket, Key=key, IfMatch=etag)
            return True
        except _store_failures() as e:
            if _code(e) in ("PreconditionFailed", "412", "NoSuchKey", "404"):
                return False
            raise store_error(self.location, f"delete {path}", e) from e

    def _put(self, path: str, content: bytes, **condition: str) -> str | None:
        bucket, key = _split(path)
        try:
            return str(self.client.put_object(Bucket=bucket, Key=key, Body=content, **condition)["ETag"])
        except _store_failures() as e:
            # 412: the condition failed; 409: a concurrent conditional write to the key is under way
            if _code(e) in ("PreconditionFailed", "412", "ConditionalRequestConflict", "409"):
                return None
            raise store_error(self.location, f"write {path}", e) from e


LEASE_S = 120.0
"""How long a lock object (`held`) stays valid without its holder: after that another may take it over."""


@contextmanager
def held(store: ConditionalStore, path: str, what: str, timeout_s: float, lease_s: float = LEASE_S) -> Iterator[None]:
    """Hold the lock object `path` (`what` names it in errors) for the body of the `with`.

    Taking it is a create with `If-None-Match: *`: of racing takers exactly one gets it, the others
    wait (polling) and try again. Releasing it deletes it with `If-Match` on its ETag. A lock whose
    holder died is taken over with `If-Match` on its ETag (again one winner) once its lease ran out
    (`lease_s`, by the taker's wall clock: keep the hosts' clocks in sync). `LakeError` after
    `timeout_s` without it."""
    token = secrets.token_hex(8)
    deadline = time.monotonic() + timeout_s
    owner = ""
    while True:
        body = json.dumps(
            {"owner": token, "host": socket.gethostname(), "pid": os.getpid(), "expires": time.time() + lease_s}
        ).encode()
        etag = store.create(path, body)
        if etag is None and (current := store.read(path)) is not None:
            owner, expired = _lease(current.content)
            if expired:
                log.warning("taking over the lock %s: its lease ran out (%s)", path, owner)
                etag = store.replace(path, body, current.etag)
        if etag is not None:
            break
        if time.monotonic() >= deadline:
            raise LakeError(
                f"{what}: the lock {path} on {store.location.where} was held by {owner or 'another run'} "
                f"for {timeout_s:g}s; is it stuck?"
            )
        time.sleep(0.02 + 0.08 * secrets.randbelow(100) / 100)
    try:
        yield
    finally:
        if not store.delete(path, etag):
            log.warning("the lock %s was taken over while held (past its %gs lease)", path, lease_s)


def _lease(content: bytes) -> tuple[str, bool]:
    """Who holds a lock object, and whether its lease ran out (an unreadable one has)."""
    try:
        doc = json.loads(content)
        return f"{doc['host']} pid {doc['pid']}", float(doc["expires"]) < time.time()
    except (ValueError, KeyError, TypeError):
        return "an unreadable lock", True


@contextmanager
def exclusive(
    fs: pafs.FileSystem, root: str, path: str, what: str, timeout_s: float, *, hint: str = "is it stuck?"
) -> Iterator[None]:
    """Hold the lock `path` beside a lake at `root` for the body of the `with` (`what` names it in
    errors, `hint` says what to look at; `LakeError` after `timeout_s`): on S3 a lock object (`held`), on
    a local disk an exclusive `fcntl` lock on the file; on another filesystem (HDFS) nothing is held."""
    import fcntl  # noqa: PLC0415

    import pyarrow.fs as pafs  # noqa: PLC0415

    store = conditional_store(fs, root)
    if store is not None:
        with held(store, path, what, timeout_s):
            yield
        return
    if not isinstance(fs, pafs.LocalFileSystem):
        yield
        return
    fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LakeError(
                        f"{what}: the lock {path} was held by another run for {timeout_s:g}s; {hint}"
                    ) from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def conditional_store(fs: pafs.FileSystem, root: str) -> ConditionalStore | None:
    """The conditional writes of a lake on S3; None for any other filesystem (a local disk locks)."""
    import pyarrow.fs as pafs  # noqa: PLC0415

    if not isinstance(fs, pafs.S3FileSystem) or not is_s3(root):
        return None
    return ConditionalStore(s3_location(root))


def _split(path: str) -> tuple[str, str]:
    bucket, _, key = path.partition("/")
    return bucket, key


def _code(error: BaseException) -> str:
    response = getattr(error, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code", ""))
    return ""


def _store_failures() -> tuple[type[Exception], ...]:
    from botocore.exceptions import BotoCoreError, ClientError  # noqa: PLC0415 - only for an object store

    return (BotoCoreError, ClientError)
