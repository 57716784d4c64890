"""Secrets masked by their key, whatever they hold: a client library logs its configuration as a dict's
repr (kafka-python at DEBUG), kazoo its digest `Auth` request as a namedtuple's, kafka-python its SASL
request with the password in `auth_bytes`; a repr escapes backslashes, quotes, newlines, tabs and
unprintable characters, so a password holding one never reads as registered. Generated passwords of
every shape go through the process's log-record factory (as in production: any logger, any handler).

No generated password is registered by value here (the registry is the whole process's: a generated
"orders" would mask that word in every later test's logs); the by-value spellings are checked with
distinctive passwords, removed again after the test. About 1 s."""

from __future__ import annotations

import json
import logging
from collections import namedtuple
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.protocol.sasl import SaslAuthenticateRequest

from kafka_ops import redaction
from kafka_ops.redaction import MASK

FUZZ = settings(max_examples=150, deadline=None, derandomize=True, database=None)
HAZARDS = st.sampled_from(["\\", "'", '"', "\n", "\t", "\r", "\x00", "\u200b", "\u00e9", "\U0001f600", "%s", "{0}",
                           "', 'x': '", "\\'", "b'", "\ud800"])  # fmt: skip
PASSWORDS = st.one_of(
    st.text(max_size=24),
    st.lists(st.one_of(HAZARDS, st.text(max_size=4)), min_size=1, max_size=8).map("".join),
)
Auth = namedtuple("Auth", "type scheme auth")  # kazoo's request, as its BLATHER log shows it


@pytest.fixture(scope="module")
def kept() -> Iterator[list[logging.LogRecord]]:
    """Records of the `kafka_ops.test.redaction` logger, with the masking factory installed."""
    redaction.register(None)  # installs the masking by key, registers no value
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger = logging.getLogger("kafka_ops.test.redaction")
    handler = Keep(level=1)
    logger.addHandler(handler)
    logger.setLevel(1)
    logger.propagate = False
    try:
        yield records
    finally:
        logger.removeHandler(handler)


def logged(records: list[logging.LogRecord], message: str, *args: object) -> str:
    records.clear()
    logging.getLogger("kafka_ops.test.redaction").debug(message, *args)
    (record,) = records
    return record.getMessage()


@FUZZ
@given(password=PASSWORDS)
def test_a_client_configuration_never_shows_its_password(kept: list[logging.LogRecord], password: str) -> None:
    config = {"bootstrap_servers": "127.0.0.1:9092", "sasl_plain_password": password, "ssl_password": password,
              "security_protocol": "SASL_SSL", "client_id": "kafka-ops"}  # fmt: skip
    line = logged(kept, "Starting KafkaAdminClient with configuration: %s", config)
    masked = config | {"sasl_plain_password": MASK, "ssl_password": MASK}
    assert line == f"Starting KafkaAdminClient with configuration: {masked}"


@FUZZ
@given(password=PASSWORDS, user=st.text(max_size=6))
def test_kazoo_auth_and_kafka_python_sasl_requests_never_show_the_password(
    kept: list[logging.LogRecord], password: str, user: str
) -> None:
    line = logged(kept, "Sending request(xid=%s): %s", None, Auth(0, "digest", f"{user}:{password}"))
    assert line == f"Sending request(xid=None): Auth(type=0, scheme='digest', auth='{MASK}')"
    token = b"\x00" + user.encode("utf-8", "replace") + b"\x00" + password.encode("utf-8", "replace")
    line = logged(kept, "%s Request %d: %s", "<conn>", 7, SaslAuthenticateRequest(token))
    assert line == f"<conn> Request 7: SaslAuthenticateRequest(auth_bytes=b'{MASK}')"


@FUZZ
@given(password=PASSWORDS)
def test_a_json_document_never_shows_its_password(kept: list[logging.LogRecord], password: str) -> None:
    document = json.dumps({"user": "ops", "password": password})
    assert logged(kept, "extra: %s", document) == f'extra: {{"user": "ops", "password": "{MASK}"}}'


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Secrets registered by value in a test are removed from the registry after it. Airflow's masker is
    not told (importing Airflow costs 10 s; what it is told is tested with the sandbox)."""
    monkeypatch.setattr(redaction, "_tell_airflow", lambda secret: None)
    before = set(redaction._secrets)
    yield
    redaction._secrets.intersection_update(before)


@pytest.mark.parametrize(
    "password",
    ["zz-never\\logged", "zz-never\nlogged\t!", "zz-never'logged\"", "zz-never\u200blogged"],
    ids=["backslash", "newline-tab", "quotes", "zero-width"],
)
def test_a_registered_secret_is_masked_in_its_escaped_spellings_too(
    kept: list[logging.LogRecord], registered: None, password: str
) -> None:
    """Outside any key: a password in a free-form message (`%r` of a tuple, a JSON dump)."""
    redaction.register(password)
    line = logged(kept, "connecting with %r and %s and %s", (password,), json.dumps([password]), password)
    assert line == f"connecting with ('{MASK}',) and [\"{MASK}\"] and {MASK}"
