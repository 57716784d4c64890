"""A lake failure reads as one line: delta-rs' coloured chain of causes is joined, so a CLI's refusal and
a task's log line stay whole (a full disk under a Delta write is the real case)."""

from __future__ import annotations

from kafka_ops.lake.object_store import error_line

DELTA_RS_FULL_DISK = (
    "Generic LocalFileSystem error\n"
    "          \x1b[31m↳\x1b[0m Unable to copy data to file\n"
    "           \x1b[31m↳\x1b[0m No space left on device (os error 28)"
)


def test_a_delta_rs_chain_of_causes_reads_as_one_line() -> None:
    line = error_line(OSError(DELTA_RS_FULL_DISK))
    assert line == "Generic LocalFileSystem error: Unable to copy data to file: No space left on device (os error 28)"


def test_a_plain_error_keeps_its_words_and_an_empty_one_its_type() -> None:
    assert error_line(ValueError("bucket  'x'\nnot found")) == "bucket 'x' not found"
    assert error_line(TimeoutError()) == "TimeoutError"
