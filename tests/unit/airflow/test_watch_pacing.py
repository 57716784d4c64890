"""Rate limit, coalescing and backoff of the change watch."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kafka_ops.airflow.watch_pacing import EventGate, backoff_s

T0 = datetime(2026, 11, 28, 8, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_backoff_doubles_up_to_its_cap() -> None:
    assert [backoff_s(n, 1.0, 60.0) for n in range(9)] == [0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0]
    assert backoff_s(10_000, 1.0, 60.0) == 60.0  # no overflow after a long outage


def test_nothing_pending_nothing_to_wait_for() -> None:
    gate = EventGate(5.0)
    assert gate.wait_s(at(0)) is None
    gate.note([], at(0))  # a reading that changed nothing
    assert gate.wait_s(at(0)) is None


def test_first_change_goes_at_once() -> None:
    gate = EventGate(5.0)
    gate.note(["brokers"], at(1))
    assert gate.wait_s(at(1)) == 0.0
    event = gate.take(at(1))
    assert event == {
        "changes": ["brokers"],
        "first_noticed_at": at(1).isoformat(),
        "emitted_at": at(1).isoformat(),
        "notices": 1,
    }
    assert gate.wait_s(at(1)) is None


def test_changes_inside_the_gap_fold_into_one_event_when_it_ends() -> None:
    gate = EventGate(5.0)
    gate.note(["brokers"], at(0))
    gate.take(at(0))
    gate.note(["controller"], at(1))
    gate.note(["brokers", "controller"], at(2))
    gate.note(["reassignment"], at(4))
    assert gate.wait_s(at(2)) == 3.0  # the gap ends 5 s after the last event
    assert gate.wait_s(at(4.5)) == 0.5
    assert gate.wait_s(at(5)) == 0.0
    event = gate.take(at(5))
    assert event["changes"] == ["brokers", "controller", "reassignment"]
    assert event["first_noticed_at"] == at(1).isoformat()
    assert event["notices"] == 3


def test_bounded_rate_under_a_flood() -> None:
    """A change every 100 ms for a minute: one event per gap, every change told."""
    gate = EventGate(5.0)
    emitted = []
    for tick in range(600):
        now = at(tick / 10)
        gate.note([f"part{tick % 7}"], now)
        if gate.wait_s(now) == 0:
            emitted.append(gate.take(now))
    assert len(emitted) == 12  # at 0, 5, 10, ... 55 s
    told = {change for event in emitted for change in event["changes"]}
    assert told == {f"part{i}" for i in range(7)}
