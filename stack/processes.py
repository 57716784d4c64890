"""Start, find and stop the stack's processes.

Each service runs in its own session (process group), so stopping it ends what it forked too (Celery's
pool, a task's spark-submit, a Spark worker's executors, PostgreSQL's backends). Every process carries
`KAFKA_OPS_STACK=<stack root>` in its environment, which its children inherit: that is how `status`
and `down` recognise the stack's processes (never by name, and a reused pid is not mistaken for one).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TypeVar, cast

from kafka_ops.child_process import dying_with_parent

MARKER = "KAFKA_OPS_STACK"

T = TypeVar("T")


class StackError(Exception):
    """The stack could not be started or stopped; the message names the service and its log."""


def launch(
    argv: Sequence[str],
    env: Mapping[str, str],
    log: Path,
    cwd: Path,
    user: str | None = None,
) -> tuple[int, int]:
    """Start a service that outlives this command (the point of `up`), in its own session: its pid and
    start time (`ours`)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        process = subprocess.Popen(
            list(argv),
            env=dict(env),
            cwd=cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            user=user,
        )
    started = start_time(process.pid)
    if started is None:
        raise StackError(f"{argv[0]} exited at once:\n{tail(log)}")
    return process.pid, started


@dataclass(frozen=True)
class Recipe:
    """How a service was started, so the soak can start it again as `up` did (`launch`'s arguments)."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    user: str | None


RECIPES = "launch"
"""`<stack root>/launch/<service>.json`: each service's `Recipe`, readable by its owner only (the
environment holds the JWT secret and the Fernet key). Read back from here, not from `/proc`: Celery,
Redis and PostgreSQL rewrite their command lines."""


def save_recipe(root: Path, name: str, recipe: Recipe) -> None:
    folder = root / RECIPES
    folder.mkdir(mode=0o700, exist_ok=True)
    path = folder / f"{name}.json"
    path.touch(mode=0o600)
    path.write_text(json.dumps({**asdict(recipe), "cwd": str(recipe.cwd)}))


def load_recipe(root: Path, name: str) -> Recipe:
    path = root / RECIPES / f"{name}.json"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise StackError(f"no launch recipe for {name} at {path}: was it started by `python -m stack up`?") from None
    return Recipe(list(data["argv"]), dict(data["env"]), Path(data["cwd"]), data["user"])


def run(
    argv: Sequence[str], env: Mapping[str, str], log: Path, cwd: Path, timeout_s: float, *, user: str | None = None
) -> None:
    """A one-shot step (initdb, `airflow db migrate`), killed with this process if it dies; its output
    goes to `log`, whose tail the error quotes."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        try:
            done = subprocess.run(
                dying_with_parent(argv),
                env=dict(env),
                cwd=cwd,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                timeout=timeout_s,
                check=False,
                user=user,
            )
        except subprocess.TimeoutExpired:
            raise StackError(f"{' '.join(argv[:4])} took more than {timeout_s:g}s:\n{tail(log)}") from None
    if done.returncode != 0:
        raise StackError(f"{' '.join(argv[:4])} exited {done.returncode}:\n{tail(log)}")


def tail(log: Path, lines: int = 30) -> str:
    text = log.read_text(errors="replace").splitlines()[-lines:] if log.exists() else ["(no log)"]
    return f"--- {log} (last {lines} lines)\n" + "\n".join(text)


def start_time(pid: int) -> int | None:
    """When `pid` started (clock ticks since boot, /proc/PID/stat), None if it is gone or a zombie: with
    the pid, it names one process (a reused pid has another start time)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] == "Z" else int(fields[19])


def ours(pid: int, started: int | None) -> bool:
    """`pid` is the live process that started at `started` (what `launch` recorded)."""
    return started is not None and start_time(pid) == started


def marked(pid: int, root: Path) -> bool:
    """`pid` is alive and carries the stack's marker (servers that rewrite their process title, like
    Redis and PostgreSQL, lose it: they are known by pid and start time)."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    return start_time(pid) is not None and f"{MARKER}={root}".encode() in environ.split(b"\0")


def stack_pids(root: Path) -> list[int]:
    """Every live process of the stack in `root`: the services and all they started."""
    return sorted(int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and marked(int(p.name), root))


def wait_until(check: Callable[[], object], timeout_s: float, what: str, every_s: float = 1.0) -> object:
    """Poll `check` until it returns something truthy (its value); StackError naming `what` past the deadline."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise StackError(f"timed out after {timeout_s:g}s waiting for {what}")
        time.sleep(every_s)


def poll(check: Callable[[], T | None], timeout_s: float, every_s: float = 1.0) -> T | None:
    """`check`'s first truthy value within `timeout_s`, else None: `wait_until` without the error."""
    try:
        return cast("T", wait_until(check, timeout_s, "", every_s))
    except StackError:
        return None


def stop(pid: int, sig: signal.Signals = signal.SIGTERM, grace_s: float = 30) -> None:
    """`sig` to the process group `pid` leads, SIGKILL to what is left of it after `grace_s`. The caller
    checked that `pid` is ours (`ours`, `marked`)."""
    _killpg(pid, sig)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and _group_alive(pid):
        time.sleep(0.2)
    _killpg(pid, signal.SIGKILL)


def _group_alive(pgid: int) -> bool:
    """A live member of the group is left (zombies are dead: `up` itself, failing, has not reaped its children)."""
    return any(
        _pgid_or_none(int(p.name)) == pgid and start_time(int(p.name)) is not None
        for p in Path("/proc").iterdir()
        if p.name.isdigit()
    )


def _pgid_or_none(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


def _killpg(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
