"""Where the stack keeps things (`var/stack/`), and `state.json`: its ports, pids, secrets' files and sandboxes."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kafka_ops.jars.fetch import var_dir
from stack.processes import ours

STATE_FILE = "state.json"


def stack_root() -> Path:
    """`$KAFKA_OPS_VAR/stack` (the repository's `var/stack` by default), absolute."""
    return (var_dir() / "stack").resolve()


@dataclass
class Sandbox:
    mode: str
    """`zk` or `kraft` (`python -m sandbox --mode`)."""
    root: str
    started: bool
    """True when `up` started it, so `down` stops it; False when `up` found it running and only attached."""
    summary: dict[str, Any] = field(default_factory=dict)


@dataclass
class State:
    root: str
    lake: str
    """`local` or `s3`."""
    lake_root: str
    ports: dict[str, int] = field(default_factory=dict)
    pids: dict[str, int] = field(default_factory=dict)
    started: dict[str, int] = field(default_factory=dict)
    """Each pid's start time (`processes.start_time`): a pid reused by another process is not the service."""
    sandboxes: dict[str, Sandbox] = field(default_factory=dict)
    urls: dict[str, str] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return Path(self.root) / STATE_FILE

    def save(self) -> None:
        """Written after every step of `up`, so `down` finds whatever a failed `up` left running."""
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2) + "\n")
        os.replace(tmp, self.path)

    @classmethod
    def load(cls, root: Path) -> State | None:
        try:
            data = json.loads((root / STATE_FILE).read_text())
        except FileNotFoundError:
            return None
        data["sandboxes"] = {k: Sandbox(**v) for k, v in data.get("sandboxes", {}).items()}
        return cls(**data)

    def running(self, name: str) -> bool:
        return name in self.pids and ours(self.pids[name], self.started.get(name))
