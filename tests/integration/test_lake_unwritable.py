"""A lake that cannot be written fails a snapshot with one line naming the lake and the cause (issue 16),
never a traceback, and publishes nothing: the path under a file, a read-only filesystem and a full disk.
The last two are real filesystems (a small tmpfs, then remounted read-only): as root, a read-only
directory would not stop a write, and a full disk cannot be produced any other way without filling the
machine's. Where mounting is not permitted those two cases are skipped, saying so."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_ops.lake.store import Lake
from kafka_ops.sandbox import SandboxCluster

pytestmark = pytest.mark.integration


def snapshot_cli(sandbox: SandboxCluster, lake: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafka_ops.cli", "snapshot", "--zookeeper", sandbox.zookeeper_connect,
         "--lake", str(lake), "--cluster", "sandbox"],
        capture_output=True, text=True, timeout=120, check=False, env=os.environ.copy(),
    )  # fmt: skip


def assert_one_line_refusal(done: subprocess.CompletedProcess[str], lake: Path, cause: str) -> None:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("kafka-ops: cannot write batch ") and f"to the lake at {lake}: " in lines[0]
    assert cause in lines[0] and lines[0].endswith("nothing was published"), lines[0]


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 512 KiB tmpfs of our own, unmounted after the test."""
    mount_point = tmp_path / "small-disk"
    mount_point.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=512k", "kafka-ops-test", str(mount_point)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def test_lake_path_under_a_file(healthy_sandbox: SandboxCluster, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    lake = tmp_path / "a-file" / "lake"
    assert_one_line_refusal(snapshot_cli(healthy_sandbox, lake), lake, "Not a directory")


def test_full_disk_then_room_again(healthy_sandbox: SandboxCluster, small_tmpfs: Path) -> None:
    lake = small_tmpfs / "lake"
    filler = small_tmpfs / "filler"
    with filler.open("wb") as f:  # leave less room than one snapshot's tables need
        f.write(b"\0" * (small_tmpfs.stat().st_blksize * 100))
        free = os.statvfs(small_tmpfs).f_bavail * os.statvfs(small_tmpfs).f_frsize
        f.write(b"\0" * max(0, free - 16 * 1024))
    assert_one_line_refusal(snapshot_cli(healthy_sandbox, lake), lake, "No space left on device")
    assert Lake(lake).snapshots().num_rows == 0
    staging = lake / "_staging"
    assert not staging.exists() or not any(staging.iterdir()), "a failed publish left its staged files"

    filler.unlink()
    done = snapshot_cli(healthy_sandbox, lake)
    assert done.returncode == 0, done.stderr
    assert Lake(lake).snapshots().num_rows == 1


def test_read_only_filesystem(healthy_sandbox: SandboxCluster, small_tmpfs: Path) -> None:
    lake = small_tmpfs / "lake"
    subprocess.run(["mount", "-o", "remount,ro", str(small_tmpfs)], check=True)
    assert_one_line_refusal(snapshot_cli(healthy_sandbox, lake), lake, "Read-only file system")
