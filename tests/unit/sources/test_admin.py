"""`gc_paused`: the garbage collector is off inside, and as it was after, whatever happens inside;
`settled`: every request's answer or error, in order; `past_refusals`: a refused connection is asked
again (twice at most), a timeout never."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable

import pytest
from kafka.errors import KafkaConnectionError, KafkaTimeoutError

from kafka_ops.sources.admin import REFUSED_RETRIES, gc_paused, past_refusals, settled


def failing(errors: list[Exception]) -> tuple[list[int], Callable[[], str]]:
    calls: list[int] = []

    def call() -> str:
        calls.append(1)
        if errors:
            raise errors.pop(0)
        return "answered"

    return calls, call


def test_a_refused_connection_is_asked_again_until_it_answers_or_the_retries_are_spent() -> None:
    calls, call = failing([KafkaConnectionError("111 ECONNREFUSED")] * REFUSED_RETRIES)
    assert past_refusals(call, "127.0.0.1:9092") == "answered" and len(calls) == REFUSED_RETRIES + 1
    calls, call = failing([KafkaConnectionError("111 ECONNREFUSED")] * (REFUSED_RETRIES + 1))
    with pytest.raises(KafkaConnectionError):
        past_refusals(call, "127.0.0.1:9092")
    assert len(calls) == REFUSED_RETRIES + 1


def test_a_timeout_is_not_asked_again() -> None:
    calls, call = failing([KafkaTimeoutError("request timed out")])
    with pytest.raises(KafkaTimeoutError):
        past_refusals(call, "127.0.0.1:9092")
    assert len(calls) == 1


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
