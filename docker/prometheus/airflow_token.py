"""Keep a fresh Airflow JWT in a file for Prometheus' `authorization: credentials_file:`.

Airflow's tokens expire after `[api_auth] jwt_expiration_time` (a day by default), so a token pasted
into Prometheus' config stops working. This loop (the `prometheus-token` service) POSTs the
read-only user's name and password to the api-server's `/auth/token` (the simple auth manager:
JSON `{"username", "password"}` in, `201 {"access_token": ...}` out), writes the token atomically
(a temporary file in the same directory, then a rename, so a scrape never reads half a token),
and does it again every AIRFLOW_JWT_REFRESH_SECONDS; a failed attempt is retried with a growing
pause. Prometheus re-reads the file on every scrape. Neither the password nor the token is logged.

Environment: AIRFLOW_JWT_URL, AIRFLOW_JWT_USER, AIRFLOW_PROMETHEUS_PASSWORD, AIRFLOW_JWT_FILE,
AIRFLOW_JWT_REFRESH_SECONDS (default 10800), AIRFLOW_JWT_RETRY_SECONDS (first pause after a
failure, default 10; doubles up to 300). `--once` writes one token and exits (1 on failure).

Standard library only: it runs in the kafka-ops image, but it does not need kafka_ops.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

log = logging.getLogger("airflow_token")


class TokenError(Exception):
    """A token could not be obtained or written; the message never holds a secret."""


def fetch_token(url: str, username: str, password: str, timeout_s: float = 30) -> str:
    body = json.dumps({"username": username, "password": password}).encode()
    if not url.startswith(("http://", "https://")):
        raise TokenError(f"{url!r} is not an http(s) URL")
    request = urllib.request.Request(  # noqa: S310 (checked above: http or https only)
        url, data=body, headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310 (checked above)
            payload = json.load(response)
    except urllib.error.HTTPError as e:
        hint = " (wrong user or password?)" if e.code in (400, 401, 403) else ""
        raise TokenError(f"POST {url} as {username!r}: HTTP {e.code}{hint}") from None
    except (urllib.error.URLError, OSError, ValueError) as e:
        # the reason is the transport's (refused, timeout) or the JSON parser's, never the body we sent
        raise TokenError(f"POST {url} as {username!r}: {type(e).__name__}: {getattr(e, 'reason', e)}") from None
    token = payload.get("access_token") if isinstance(payload, dict) else None
    if not isinstance(token, str) or not token:
        raise TokenError(f"POST {url} as {username!r}: the answer has no access_token")
    return token


def write_atomically(path: Path, token: str) -> None:
    """Replace `path` with the token in one rename; readable by Prometheus' user (another uid)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(token)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as e:
        raise TokenError(f"cannot write {path}: {e.strerror or e}") from None


def refresh(url: str, username: str, password: str, path: Path) -> None:
    write_atomically(path, fetch_token(url, username, password))
    log.info("wrote a token for %s to %s", username, path)


def setting(name: str, default: str | None = None) -> str:
    value = os.environ.get(name, default)
    if not value:
        raise TokenError(f"{name} is empty: set it in docker/.env (see docker/.env.example)")
    return value


def main(argv: list[str]) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        url, username = setting("AIRFLOW_JWT_URL"), setting("AIRFLOW_JWT_USER", "prometheus")
        password, path = setting("AIRFLOW_PROMETHEUS_PASSWORD"), Path(setting("AIRFLOW_JWT_FILE"))
        every = float(setting("AIRFLOW_JWT_REFRESH_SECONDS", "10800"))
        first_retry = float(setting("AIRFLOW_JWT_RETRY_SECONDS", "10"))
    except (TokenError, ValueError) as e:
        log.error("%s", e)
        return 2
    if "--once" in argv:
        try:
            refresh(url, username, password, path)
        except TokenError as e:
            log.error("%s", e)
            return 1
        return 0
    retry = first_retry
    while True:
        try:
            refresh(url, username, password, path)
        except TokenError as e:
            log.warning("%s; retrying in %.0f s", e, retry)
            time.sleep(retry)
            retry = min(retry * 2, 300.0)
            continue
        retry = first_retry
        time.sleep(every)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
