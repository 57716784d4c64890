"""How often a cluster's change watch may speak and retry: pure, clock given by the caller.

`EventGate`: at most one event per `min_gap_s`; changes noticed inside the gap are folded into the
next event, so a flapping cluster costs the scheduler one asset event per gap, and no change is lost.
`backoff_s`: how long to wait before the n-th consecutive retry of an unreachable cluster.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any


def backoff_s(failures: int, initial_s: float, cap_s: float) -> float:
    """Exponential: `initial_s` after the first failure, doubling with each further one, at most `cap_s`."""
    if failures < 1:
        return 0.0
    return min(cap_s, initial_s * 2 ** min(failures - 1, 62))


@dataclass
class EventGate:
    """Folds the changes a watch notices into events at least `min_gap_s` apart (see the module docstring)."""

    min_gap_s: float
    last_emitted_at: datetime | None = None
    pending: dict[str, datetime] = field(default_factory=dict)
    """Each change not told yet, with when it was first noticed."""
    notices: int = 0
    """How many readings noticed a change since the last event."""

    def note(self, changes: Iterable[str], at: datetime) -> None:
        changes = list(changes)
        if not changes:
            return
        self.notices += 1
        for change in changes:
            self.pending.setdefault(change, at)

    def wait_s(self, now: datetime) -> float | None:
        """None: nothing to tell; else seconds until the next event may go (0: now)."""
        if not self.pending:
            return None
        if self.last_emitted_at is None:
            return 0.0
        due = self.last_emitted_at + timedelta(seconds=self.min_gap_s)
        return max(0.0, (due - now).total_seconds())

    def take(self, now: datetime) -> dict[str, Any]:
        """The pending changes as an event's fields, and the gap starts again. Call when `wait_s` is 0."""
        fields = {
            "changes": sorted(self.pending),
            "first_noticed_at": min(self.pending.values()).isoformat(),
            "emitted_at": now.isoformat(),
            "notices": self.notices,
        }
        self.pending.clear()
        self.notices = 0
        self.last_emitted_at = now
        return fields
