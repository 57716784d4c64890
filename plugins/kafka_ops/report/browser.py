"""Render a report in headless Chromium: to a PNG (for the README, or a glance in CI) and to the DOM
as the browser built it (to check a page really renders: headings, SVG, no console message).

Chromium is found as `$KAFKA_OPS_CHROMIUM`, else `chromium` or `chromium-browser` on the PATH (on
Debian: `apt-get install -y --no-install-recommends chromium fonts-dejavu-core`). Each run gets its
own throw-away profile, so runs may overlap. Console messages are read from Chromium's log on
stderr (`--enable-logging=stderr`), where each one is a `CONSOLE` line; the report has no script,
so any such line is a problem (a blocked request is one: the page's Content-Security-Policy
forbids every request).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kafka_ops.errors import KafkaOpsError

NAMES = ("chromium", "chromium-browser")
ENV = "KAFKA_OPS_CHROMIUM"
TIMEOUT_S = 90.0
_CONSOLE = re.compile(r":CONSOLE[:(]\d*\)?\]\s*(.*)")
_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
)


class BrowserError(KafkaOpsError):
    """Chromium is missing, or did not render the page (the message says which, and how to fix it)."""


@dataclass(frozen=True)
class Rendered:
    dom: str
    """The document as Chromium serialised it after loading (`--dump-dom`)."""
    console: tuple[str, ...]
    """Console messages the page produced (CSP violations included)."""


def find_chromium() -> str | None:
    """The Chromium executable to use, or None when there is none."""
    configured = os.environ.get(ENV)
    if configured:
        return configured if os.access(configured, os.X_OK) else shutil.which(configured)
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def dump_dom(page: str | os.PathLike[str], *, chromium: str | None = None, timeout_s: float = TIMEOUT_S) -> Rendered:
    """Load `page` (a local file) in headless Chromium and return its DOM and console messages."""
    out = _run(page, ["--dump-dom"], chromium, timeout_s)
    if "<html" not in out.stdout.lower():
        raise BrowserError(f"Chromium returned no document for {page}: {_tail(out.stderr)}")
    return Rendered(out.stdout, _console(out.stderr))


def screenshot(
    page: str | os.PathLike[str],
    png: str | os.PathLike[str],
    *,
    width: int = 1280,
    height: int = 2000,
    scale: float = 1.0,
    chromium: str | None = None,
    timeout_s: float = TIMEOUT_S,
) -> Rendered:
    """Save the top `width` x `height` CSS pixels of `page` as `png`, at `scale` device pixels per CSS
    pixel (0.7 lays the page out for a wide screen but fits a README's ~900 px column); returns the
    console messages (the DOM is not dumped in the same run: `dom` is empty)."""
    target = Path(png).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        target.unlink()
    flags = [f"--screenshot={target}", f"--window-size={width},{height}", f"--force-device-scale-factor={scale:g}"]
    out = _run(page, flags, chromium, timeout_s)
    if not target.is_file() or target.stat().st_size == 0:
        raise BrowserError(f"Chromium wrote no screenshot of {page} to {target}: {_tail(out.stderr)}")
    return Rendered("", _console(out.stderr))


def _run(
    page: str | os.PathLike[str], extra: list[str], chromium: str | None, timeout_s: float
) -> subprocess.CompletedProcess[str]:
    exe = chromium or find_chromium()
    if exe is None:
        configured = os.environ.get(ENV)
        where = f"${ENV}={configured} is not an executable" if configured else f"no {' or '.join(NAMES)} on the PATH"
        raise BrowserError(
            f"no Chromium found ({where}): on Debian run "
            "`apt-get install -y --no-install-recommends chromium fonts-dejavu-core`"
        )
    source = Path(page).resolve()
    if not source.is_file():
        raise BrowserError(f"no page to render at {source}")
    with tempfile.TemporaryDirectory(prefix="kafka-ops-chromium-") as profile:
        argv = [exe, *_FLAGS, f"--user-data-dir={profile}", *extra, source.as_uri()]
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired as e:
            raise BrowserError(f"Chromium did not render {source} within {timeout_s:g} s") from e
        except OSError as e:
            raise BrowserError(f"cannot run Chromium ({exe}): {e}") from e
    if out.returncode != 0:
        raise BrowserError(f"Chromium exited with {out.returncode} rendering {source}: {_tail(out.stderr)}")
    return out


def _console(stderr: str) -> tuple[str, ...]:
    return tuple(m.group(1).strip() for line in stderr.splitlines() if (m := _CONSOLE.search(line)))


def _tail(stderr: str, lines: int = 5) -> str:
    useful = [line for line in stderr.splitlines() if "dbus" not in line.lower()]
    return " | ".join(useful[-lines:]) or "(nothing on stderr)"
