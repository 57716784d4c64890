"""The sandbox launcher itself: no JVM outlives its owner, and the CLI's up/status/down."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()


def test_jvms_die_with_a_killed_owner(tmp_path: Path) -> None:
    """A test run killed with -9 (no fixture teardown) leaves no Java process behind."""
    script = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from sandbox import SandboxCluster
        cluster = SandboxCluster(root=Path({str(tmp_path)!r}), brokers=0).start()
        print(cluster._zk.pid, flush=True)
        time.sleep(600)
        """
    )
    owner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None
    zk_pid = int(owner.stdout.readline())
    assert alive(zk_pid)
    owner.send_signal(signal.SIGKILL)
    owner.wait()
    deadline = time.monotonic() + 10
    while alive(zk_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(zk_pid)


def test_cli_up_status_down(tmp_path: Path) -> None:
    root = tmp_path / "cli"

    def cli(verb: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "sandbox", verb, "--root", str(root)]
        return subprocess.run(command, capture_output=True, text=True, check=False)

    up = cli("up")
    try:
        assert up.returncode == 0, up.stderr
        addresses = json.loads(up.stdout.strip().splitlines()[-1])
        assert addresses["zookeeper"].endswith("/kafka")
        assert len(addresses["bootstrap_servers"].split(",")) == 3
        status = cli("status")
        assert json.loads(status.stdout)["brokers_running"] == {"1": True, "2": True, "3": True}
        again = cli("up")
        assert again.returncode == 1 and "already up" in again.stderr
        pids = json.loads((root / "state.json").read_text())["pids"].values()
    finally:
        down = cli("down")
    assert down.returncode == 0, down.stderr
    assert not any(alive(pid) for pid in pids)
    assert not root.exists()
