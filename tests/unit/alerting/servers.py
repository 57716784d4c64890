"""Real local servers that record what the notifiers send: HTTP (Slack, PagerDuty) and SMTP.

Both listen on 127.0.0.1 only, on a free port, in a daemon thread, and are shut down by the
fixtures in `conftest.py`. The HTTP server can be told to answer with scripted statuses first
(500, 429, 400) before its default answer.
"""

from __future__ import annotations

import json
import socketserver
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    raw: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.raw)


@dataclass
class Answer:
    status: int
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)


class RecordingHttpServer:
    """Records every request; answers the scripted `Answer`s first, then `default`."""

    def __init__(self, default: Answer) -> None:
        self.default = default
        self.script: deque[Answer] = deque()
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                with outer._lock:
                    outer.requests.append(Request("POST", self.path, dict(self.headers.items()), raw))
                    answer = outer.script.popleft() if outer.script else outer.default
                body = answer.body.encode()
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST  # a redirected POST would arrive as GET: recorded, so tests can see it

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output (and caplog) to what the code under test logs

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def answer_first(self, *answers: Answer) -> None:
        self.script.extend(answers)

    def start(self) -> RecordingHttpServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


@dataclass
class Mail:
    mail_from: str
    rcpt_to: list[str]
    data: bytes


class _SmtpHandler(socketserver.StreamRequestHandler):
    server: _SmtpServer

    def reply(self, line: str) -> None:
        self.wfile.write(line.encode() + b"\r\n")
        self.wfile.flush()

    def handle(self) -> None:
        self.reply("220 localhost test SMTP")
        self.mail_from, self.rcpt = "", []
        while (line := self.rfile.readline()) and self.command(line.decode("ascii", "replace").strip()):
            pass

    def command(self, verb: str) -> bool:
        upper = verb.upper()
        if upper.startswith("EHLO"):
            self.wfile.write(b"250-localhost\r\n250-8BITMIME\r\n250 SIZE 10485760\r\n")
        elif upper.startswith("MAIL FROM:"):
            self.mail_from = verb[10:].split(maxsplit=1)[0].strip("<>")  # drop SIZE=, BODY=
            self.reply("250 OK")
        elif upper.startswith("RCPT TO:"):
            self.rcpt.append(verb[8:].split(maxsplit=1)[0].strip("<>"))
            self.reply("250 OK")
        elif upper == "DATA":
            self.reply("354 end with <CRLF>.<CRLF>")
            self.server.mails.append(Mail(self.mail_from, self.rcpt, self._read_data()))
            self.mail_from, self.rcpt = "", []
            self.reply("250 OK queued")
        elif upper == "QUIT":
            self.reply("221 bye")
            return False
        elif upper.startswith("HELO") or upper in ("NOOP", "RSET"):
            self.reply("250 OK")
        else:
            self.reply("502 not implemented")
        return True

    def _read_data(self) -> bytes:
        lines = []
        while (line := self.rfile.readline()) not in (b".\r\n", b""):
            lines.append(line[1:] if line.startswith(b"..") else line)  # undo dot-stuffing
        return b"".join(lines)


class _SmtpServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    mails: list[Mail]


class RecordingSmtpServer:
    """A minimal SMTP responder (RFC 5321 subset: EHLO/HELO, MAIL, RCPT, DATA, RSET, NOOP, QUIT).
    No STARTTLS, no AUTH: the test connection disables TLS and has no login."""

    def __init__(self) -> None:
        self._server = _SmtpServer(("127.0.0.1", 0), _SmtpHandler)
        self._server.mails = []
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def mails(self) -> list[Mail]:
        return self._server.mails

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> RecordingSmtpServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
