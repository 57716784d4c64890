"""`python -m stack.webhook --port P --out FILE`: a local webhook receiver for the stack's alert sinks.

kafka-ops' Slack-style and PagerDuty connections and Alertmanager's receiver all POST here. Every
request body is appended to FILE as one JSON line: `received_at` (UTC, ISO 8601), `path`, and
`body` (the parsed JSON, or the text). It answers as the real services do: PagerDuty's Events API
v2 `202 {"status": "success", "dedup_key": ...}` on `/v2/enqueue`, Slack's `200 ok` elsewhere.
`GET /health` answers 200. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PAGERDUTY_PATH = "/v2/enqueue"
MAX_BODY = 10 * 1024 * 1024


def read_received(path: Path) -> list[dict[str, Any]]:
    """What the receiver recorded in `path` so far, oldest first."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def handler_for(out: Path) -> type[BaseHTTPRequestHandler]:
    lock = threading.Lock()

    class Receiver(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._answer(200 if self.path == "/health" else 404, "text/plain", b"ok\n")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                self._answer(413, "text/plain", b"too large\n")
                return
            raw = self.rfile.read(length).decode(errors="replace")
            try:
                body: Any = json.loads(raw)
            except ValueError:
                body = raw
            record = {"received_at": datetime.now(UTC).isoformat(), "path": self.path, "body": body}
            with lock, out.open("a") as f:
                f.write(json.dumps(record) + "\n")
            if self.path.rstrip("/").endswith(PAGERDUTY_PATH):
                key = body.get("dedup_key") if isinstance(body, dict) else None
                answer = {"status": "success", "message": "Event processed", "dedup_key": key}
                self._answer(202, "application/json", json.dumps(answer).encode())
            else:
                self._answer(200, "text/plain", b"ok")

        def _answer(self, status: int, content_type: str, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            sys.stderr.write(f"{self.address_string()} {format % args}\n")

    return Receiver


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stack.webhook", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True, help="JSON lines file, appended to")
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler_for(args.out))
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
