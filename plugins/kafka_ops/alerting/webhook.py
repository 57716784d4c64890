"""POST a JSON body to a webhook with the standard library: timeouts, retries, secrets kept out.

Retried with exponential backoff: HTTP 429 (after the server's `Retry-After`, capped) and 5xx,
and network errors (refused, reset, timed out), because a page that a transient blip swallowed
is worse than one that arrives seconds late. Any other status, and any redirect, fails at once:
a 4xx means the payload or the credential is wrong and resending cannot fix it, and a webhook
that redirects is not the webhook that was configured.

Webhook URLs and routing keys are credentials. Errors name the notifier, the status and the
service's answer with every secret replaced by `***`; the URL itself is never logged or raised,
and the underlying exception is not chained, because urllib errors can quote the URL.
"""

from __future__ import annotations

import http.client
import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from email.message import Message
from typing import Any
from urllib.parse import urlsplit

from kafka_ops.errors import AlertDeliveryFailed, ConfigError

log = logging.getLogger(__name__)

MAX_EXCERPT = 300
USER_AGENT = "kafka-ops-alerting/1"


@dataclass(frozen=True)
class HttpPolicy:
    """Per-request timeout, how many attempts in all, and the first backoff (doubled each retry)."""

    timeout_s: float = 10.0
    attempts: int = 3
    backoff_s: float = 1.0
    max_backoff_s: float = 30.0

    def __post_init__(self) -> None:
        if self.timeout_s <= 0 or self.attempts < 1 or self.backoff_s < 0 or self.max_backoff_s < 0:
            raise ConfigError(f"bad HTTP policy {self}: timeout > 0, attempts >= 1, backoffs >= 0")


@dataclass(frozen=True)
class HttpAnswer:
    status: int
    body: str


def check_url(url: str, where: str, secrets: Sequence[str]) -> str:
    """An http(s) URL with a host; the error shows the URL masked."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{where}: {mask(url, secrets)!r} is not an http(s) URL with a host")
    return url


def url_secrets(url: str) -> list[str]:
    """What to mask of a webhook URL whose path is the credential (Slack's `T…/B…/token`): the
    URL, its path and query (a service may echo them), and the path's last segment."""
    parts = urlsplit(url)
    path = parts.path.strip("/")
    return [url, path, parts.query, path.rsplit("/", 1)[-1]]


def masked_url(url: str) -> str:
    """`https://hooks.slack.com/***`: scheme and host only, for reprs."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/***"


def mask(text: str, secrets: Sequence[str]) -> str:
    """`text` with every secret replaced by `***`, longest first (a URL before its path)."""
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # urllib then raises the 3xx as an HTTPError


_OPENER = urllib.request.build_opener(_NoRedirects())


def post_json(
    url: str,
    body: dict[str, Any],
    *,
    who: str,
    secrets: Sequence[str],
    policy: HttpPolicy,
    ok: Sequence[int] = (200, 201, 202, 204),
) -> HttpAnswer:
    """POST `body` as JSON; the answer if its status is in `ok`, else `AlertDeliveryFailed`.

    `who` names the notifier in errors and logs (`slack notifier 'slack_oncall'`); every string
    in `secrets` (the URL, its token, a routing key) is masked in whatever is raised or logged.
    """
    data = json.dumps(body).encode()
    secrets = [url, *secrets]
    problem = "not attempted"
    for attempt in range(1, policy.attempts + 1):
        request = urllib.request.Request(  # noqa: S310 - the scheme is checked at configuration
            url,
            data=data,
            method="POST",
            headers={"Content-Type": "application/json", "User-Agent": USER_AGENT},
        )
        retry_after: float | None = None
        try:
            with _OPENER.open(request, timeout=policy.timeout_s) as response:
                answer = HttpAnswer(response.status, _read(response))
        except urllib.error.HTTPError as e:
            answer = HttpAnswer(e.code, _read(e))
            retry_after = _retry_after(e.headers)
        except ValueError as e:  # an invalid URL: urllib's message would quote it
            raise AlertDeliveryFailed(f"{who}: the URL is invalid ({mask(str(e), secrets)})") from None
        except (OSError, http.client.HTTPException) as e:  # URLError, refused, reset, timed out
            reason = e.reason if isinstance(e, urllib.error.URLError) else e
            problem = mask(f"network error: {type(reason).__name__}: {reason}", secrets)
            log.warning("%s: attempt %d/%d failed: %s", who, attempt, policy.attempts, problem)
            _pause(policy, attempt, None)
            continue
        if answer.status in ok:
            return answer
        problem = mask(f"HTTP {answer.status}: {answer.body[:MAX_EXCERPT]!r}", secrets)
        if not (answer.status == 429 or answer.status >= 500):
            break
        log.warning("%s: attempt %d/%d failed: %s", who, attempt, policy.attempts, problem)
        _pause(policy, attempt, retry_after)
    else:
        raise AlertDeliveryFailed(f"{who}: {problem} (after {policy.attempts} attempt(s))", unavailable=True)
    raise AlertDeliveryFailed(f"{who}: {problem} (not retried: the request itself was refused)")


def _read(response: Any) -> str:
    try:
        return bytes(response.read(4096)).decode("utf-8", "replace")
    except OSError:
        return ""


def _retry_after(headers: Message | None) -> float | None:
    value = headers.get("Retry-After") if headers is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff


def _pause(policy: HttpPolicy, attempt: int, retry_after: float | None) -> None:
    if attempt >= policy.attempts:
        return
    wait = retry_after if retry_after is not None else policy.backoff_s * 2 ** (attempt - 1)
    time.sleep(min(wait, policy.max_backoff_s))
