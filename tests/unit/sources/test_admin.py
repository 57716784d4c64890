"""`gc_paused`: the garbage collector is off inside, and as it was after, whatever happens inside;
`settled`: every request's answer or error, in order."""

from __future__ import annotations

import asyncio
import gc

import pytest
from kafka.errors import KafkaConnectionError

from kafka_ops.sources.admin import gc_paused, settled


def test_the_collector_is_off_inside_and_back_on_after_even_on_error() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), gc_paused():
        raise ValueError("a collection failed")
    assert gc.isenabled()


def test_a_collector_someone_else_turned_off_stays_off() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_settled_gives_each_answer_or_its_error_in_order() -> None:
    async def answer(value: int) -> int:
        return value

    async def fails() -> int:
        raise KafkaConnectionError("broker 2 went away")

    async def run() -> list[object]:
        return await settled([answer(1), fails(), answer(3)])

    first, failed, last = asyncio.run(run())
    assert (first, last) == (1, 3) and isinstance(failed, KafkaConnectionError)
