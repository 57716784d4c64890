"""A sandbox handle rebuilt from another process's `state.json`: a clear error when there is none, or
when it is another kind's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_ops.errors import SandboxError
from sandbox.cluster import attach
from sandbox.kraft import attach_kraft
from sandbox.migration import attach_migration


def test_no_state_names_the_file_and_the_kind_of_sandbox(tmp_path: Path) -> None:
    for attach_one, what in ((attach, "a sandbox"), (attach_kraft, "a KRaft sandbox"),
                             (attach_migration, "a migration sandbox")):  # fmt: skip
        with pytest.raises(SandboxError, match=f"no sandbox state at {tmp_path}/state.json: is {what} up"):
            attach_one(tmp_path)


def test_another_kinds_state_is_refused(tmp_path: Path) -> None:
    (tmp_path / "state.json").write_text(json.dumps({"mode": "kraft"}))
    with pytest.raises(SandboxError, match="is not a migration sandbox \\(mode 'kraft'\\)"):
        attach_migration(tmp_path)
    (tmp_path / "state.json").write_text(json.dumps({"root": str(tmp_path)}))
    with pytest.raises(SandboxError, match="is not a KRaft sandbox \\(mode 'zk'\\)"):
        attach_kraft(tmp_path)
