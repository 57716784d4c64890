"""Fuzzing what the executor reads back: a plan's JSON, a stored plan row, a progress document.

Without the typed checks, fuzzing these readers and the Params crashed them untyped (512 of 17,440
inputs: `plan_from_json` 282, a progress document 210, a stored plan row 3). Hypothesis generates the
project's own documents with fields broken (wrong types, numbers beyond int32, booleans for
numbers, invalid topic names, lone surrogates, arrays nested 5,000 deep, keys dropped or added),
Kafka's reassignment and election files given where a plan belongs, any JSON, and raw text. The
contract: the reader returns an object the rest of the executor can use (it survives its own
round trip, UTF-8 and the lake's int32 columns), or raises its typed error (`PlanFormatError`,
`ProgressFormatError`) naming the document and the field, never anything else.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_ops.errors import FormatError, PlanFormatError, ProgressFormatError
from kafka_ops.lake.schema import INTS
from kafka_ops.lake.store import Lake
from kafka_ops.planning import Plan, plan_decommission, plan_preferred_election
from kafka_ops.remediation.progress import Progress, Step
from kafka_ops.remediation.store import plan_from_json, plan_from_row, plan_to_json, progress_path, read_progress
from tests.unit.json_strategies import FUZZ, JSON, mutated, nested, texts_of
from tests.unit.remediation.clusters import live, rf2_plan

BASE = live({"t": {0: (1, 2), 1: (2, 3)}}, leaders={("t", 0): 2}, snapshot_id="base")
PLANS = [rf2_plan(), plan_preferred_election(BASE), plan_decommission(BASE, [3])]
PLAN_DOCUMENTS = [plan_to_json(p) for p in PLANS]
KAFKA_FILES = [f for p in PLANS for f in (p.to_reassignment_json(log_dirs=True), p.rollback_json(), p.election_json())]
PLAN_ID = PLANS[0].plan_id
PROGRESS_DOCUMENTS = [
    Progress(PLAN_ID, "c1", "admin_api", [], []).to_json(),
    Progress(
        PLAN_ID, "c1", "zookeeper",
        [Step(0, (("orders", 0), ("orders", 1)), "submitted", "2026-11-21T07:30:00+00:00", "alice"),
         Step(1, (("orders", 2),), "done", "2026-11-21T07:31:00+00:00", "alice", "2026-11-21T07:32:00+00:00")],
        [Step(0, (("logs", 0),))], status="stuck", throttled_topics=["orders"], throttled_brokers=[1, 3],
        runs=["alice"], message="stuck", updated_at="2026-11-21T07:33:00+00:00",
    ).to_json(),
]  # fmt: skip

PLAN_INPUTS = st.one_of(mutated(PLAN_DOCUMENTS), mutated(KAFKA_FILES), st.sampled_from(PLAN_DOCUMENTS), JSON)
PROGRESS_INPUTS = st.one_of(mutated(PROGRESS_DOCUMENTS), st.sampled_from(PROGRESS_DOCUMENTS), JSON)


def usable_plan(plan: Plan) -> None:
    """What the executor and the lake do with a plan: its own round trip, UTF-8 text for the lake's
    string columns, int32 replica lists, its captured time as a timestamp, Kafka's files."""
    assert plan_from_json(json.loads(json.dumps(plan_to_json(plan)))) == plan
    json.dumps(plan.to_document(), ensure_ascii=False).encode()
    pa.array([list(m.target) for m in plan.reassignments] + [list(m.current) for m in plan.reassignments], INTS)
    pa.array([m.partition for m in plan.reassignments] + [e.partition for e in plan.elections], pa.int32())
    datetime.fromisoformat(plan.captured_at)


def usable_progress(progress: Progress) -> None:
    assert Progress.from_json(json.loads(json.dumps(progress.to_json())), "again").to_json() == progress.to_json()
    json.dumps(progress.to_json(), ensure_ascii=False).encode()
    pa.array([p for s in [*progress.batches, *progress.elections] for _, p in s.partitions], pa.int32())


def names_where(error: FormatError, document: str) -> None:
    assert str(error).startswith(f"{document}: ")
    assert error.field in str(error)


@FUZZ
@given(PLAN_INPUTS)
def test_plan_json_is_a_usable_plan_or_a_plan_format_error(data: Any) -> None:
    try:
        plan = plan_from_json(data, "plan.json")
    except PlanFormatError as e:
        names_where(e, "plan.json")
    else:
        usable_plan(plan)


ROWS = st.fixed_dictionaries(
    {
        "plan_id": st.sampled_from([PLAN_ID, "0" * 16, None]),
        "kind": st.sampled_from(["replication_factor", "decommission", 3]),
        "plan": st.one_of(texts_of(PLAN_INPUTS), st.sampled_from([None, 7])),
    }
)


@FUZZ
@given(ROWS)
def test_a_stored_plan_row_is_a_usable_plan_or_a_plan_format_error(row: dict[str, Any]) -> None:
    try:
        plan = plan_from_row(row, "stored plan")
    except PlanFormatError as e:
        names_where(e, "stored plan")
    else:
        usable_plan(plan)
        assert (plan.plan_id, plan.kind) == (row["plan_id"], row["kind"])


@FUZZ
@given(PROGRESS_INPUTS)
def test_a_progress_document_is_usable_or_a_progress_format_error(data: Any) -> None:
    try:
        progress = Progress.from_json(data, "p.json")
    except ProgressFormatError as e:
        names_where(e, "p.json")
    else:
        usable_progress(progress)


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Lake:
    return Lake(str(tmp_path_factory.mktemp("lake")))


@FUZZ
@given(texts_of(PROGRESS_INPUTS))
def test_a_progress_file_is_usable_or_a_progress_format_error(lake: Lake, text: str | bytes) -> None:
    path = Path(progress_path(lake, "c1", PLAN_ID))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode(errors="surrogatepass"))
    try:
        progress = read_progress(lake, "c1", PLAN_ID)
    except ProgressFormatError as e:
        names_where(e, str(path))
    else:
        assert progress is not None and (progress.cluster, progress.plan_id) == ("c1", PLAN_ID)
        usable_progress(progress)


# -- what the fuzzer found, one by one --------------------------------------------------------------------


def _plan_with(path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    doc: Any = json.loads(json.dumps(PLAN_DOCUMENTS[0]))
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], r"^plan\.json: not a plan kafka-ops stored \(make a new plan with a dry run\): expected a JSON object"),
        (KAFKA_FILES[0], r"\): this is one of Kafka's reassignment or election files, not a kafka-ops plan$"),
        (KAFKA_FILES[2], r"\): this is one of Kafka's reassignment or election files, not a kafka-ops plan$"),
        ({**PLAN_DOCUMENTS[0], "reassignments": None}, r"\): reassignments: expected a JSON array, got None$"),
        ({k: v for k, v in PLAN_DOCUMENTS[0].items() if k != "brokers"}, r"\): brokers: missing$"),
        (_plan_with(("reassignments", 1, "partition"), 1.0), r": reassignments\[1\]\.partition: expected a partition"),
        (_plan_with(("reassignments", 0, "target", 1), 2**31), r": reassignments\[0\]\.target\[1\]: .*2147483648"),
        (_plan_with(("reassignments", 0, "target", 1), True), r": reassignments\[0\]\.target\[1\]: .*got True"),
        (_plan_with(("reassignments", 0, "target"), [3, 3]), r": reassignments\[0\]\.target: lists a broker twice"),
        (_plan_with(("reassignments", 0, "target"), "13"), r": reassignments\[0\]\.target: expected a JSON array"),
        (_plan_with(("reassignments", 0, "topic"), ".."), r": reassignments\[0\]\.topic: '\.\.' is not a Kafka topic"),
        (_plan_with(("reassignments", 0, "topic"), "\ud800"), r": reassignments\[0\]\.topic: '\\ud800' is not a Kafka"),
        (_plan_with(("reassignments", 0, "partition"), "²"), r": reassignments\[0\]\.partition: expected a partition"),
        (_plan_with(("reassignments", 0), "x"), r": reassignments\[0\]: expected a JSON object, got 'x'"),
        (_plan_with(("reassignments", 1), PLAN_DOCUMENTS[0]["reassignments"][0]), r": reassignments\[1\]: orders-0 is"),
        (_plan_with(("brokers", 0), {"broker_id": 1}), r": brokers\[0\]\.replicas_before: missing"),
        (_plan_with(("brokers", 0, "registered"), 1), r": brokers\[0\]\.registered: expected true or false, got 1"),
        (_plan_with(("cluster",), "c\udc80"), r": cluster: 'c\\udc80' is not valid Unicode"),
        (_plan_with(("captured_at",), "yesterday"), r": captured_at: expected an ISO 8601 time"),
        (_plan_with(("kind",), "drop_topic"), r": kind: expected one of \['decommission',"),
        (_plan_with(("request",), nested(5000)), r": request: expected a JSON object, got \[\[\[\[\.\.\.\]\]\]\]"),
        (_plan_with(("request", "topics"), nested(5000)), r": request\.topics: nested deeper than 64 levels"),
        (_plan_with(("request", "replication_factor"), 2**15), r": request\.replication_factor: expected a whole"),
        (_plan_with(("figures",), {"x": "1"}), r": figures\.x: expected a number or null, got '1'"),
        (_plan_with(("figures",), {"x": float("nan")}), r": figures\.x: expected a finite number, got nan"),
    ],
)  # fmt: skip
def test_what_the_fuzzer_found_in_plans(data: Any, message: str) -> None:
    with pytest.raises(PlanFormatError, match=message):
        plan_from_json(data, "plan.json")


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        (None, r"^stored plan: not a plan .*: plan: expected the plan's JSON text, got None$"),
        ("{half", r"^stored plan: not a plan .*: not JSON \(Expecting property name"),
        ("[" * 100_000, r"^stored plan: not a plan .*: nested too deeply to be a document kafka-ops wrote$"),
        (b"\x80abc", r"^stored plan: not a plan .*: not JSON \('utf-8' codec can't decode"),
        ("1" * 5000, r"^stored plan: not a plan .*: not JSON \(Exceeds the limit"),
        (json.dumps(PLAN_DOCUMENTS[1]), r"^stored plan: not a plan .*: plan_id: the row says '[0-9a-f]{16}', its plan"),
    ],
)  # fmt: skip
def test_what_the_fuzzer_found_in_stored_plan_rows(plan: Any, message: str) -> None:
    with pytest.raises(PlanFormatError, match=message):
        plan_from_row({"plan_id": PLAN_ID, "kind": "replication_factor", "plan": plan}, "stored plan")


def _progress_with(path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    doc: Any = json.loads(json.dumps(PROGRESS_DOCUMENTS[1]))
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (_progress_with(("version",), True), r": version: unknown version True"),
        (_progress_with(("version",), 1.0), r": version: unknown version 1\.0"),
        (_progress_with(("batches", 0), ["x"]), r": batches\[0\]: expected a JSON object, got \['x'\]"),
        (_progress_with(("batches", 0, "index"), float("inf")), r": batches\[0\]\.index: expected a count"),
        (_progress_with(("batches", 0, "index"), "²"), r": batches\[0\]\.index: expected a count"),
        (_progress_with(("batches", 1, "partitions", 0), ["orders"]), r": batches\[1\]\.partitions\[0\]: expected \["),
        (_progress_with(("batches", 1, "partitions", 0, 1), -1), r": batches\[1\]\.partitions\[0\]\[1\]: .*got -1"),
        (_progress_with(("batches", 0, "partitions", 1), ["orders", 0]), r": batches\[0\]\.partitions: lists a part"),
        (_progress_with(("batches", 0, "submitted_at"), 5), r": batches\[0\]\.submitted_at: expected a non-empty str"),
        (_progress_with(("throttled_brokers", 0), "1"), r": throttled_brokers\[0\]: expected a broker id"),
        (_progress_with(("throttled_brokers",), {"1": 1}), r": throttled_brokers: expected a JSON array"),
        (_progress_with(("throttled_topics", 0), "a b"), r": throttled_topics\[0\]: 'a b' is not a Kafka topic name"),
        (_progress_with(("runs",), "alice"), r": runs: expected a JSON array, got 'alice'"),
        (_progress_with(("backend",), "kraft"), r": backend: expected one of \['admin_api', 'zookeeper'\]"),
        (_progress_with(("message",), nested(5000)), r": message: expected a string, got \[\[\[\[\.\.\.\]\]\]\]"),
        (_progress_with(("plan_id",), "\udfff"), r": plan_id: '\\udfff' is not valid Unicode"),
    ],
)  # fmt: skip
def test_what_the_fuzzer_found_in_progress_documents(data: Any, message: str) -> None:
    with pytest.raises(ProgressFormatError, match=r"^p\.json: not a progress document this executor wrote" + message):
        Progress.from_json(data, "p.json")


def test_a_progress_file_of_another_plan_is_refused(lake: Lake) -> None:
    """Its executor would write the progress under the other plan's name, or crash on its path."""
    path = Path(progress_path(lake, "c1", "0" * 16))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(PROGRESS_DOCUMENTS[0]))
    with pytest.raises(ProgressFormatError, match=rf"plan_id: holds plan '{PLAN_ID}' of cluster 'c1', not '0{{16}}'"):
        read_progress(lake, "c1", "0" * 16)


@pytest.mark.parametrize("text", [b"[" * 100_000, b"\xff", b'{"version": 1, "plan_id": "\\ud800"'])
def test_a_progress_file_that_is_not_json_is_refused(lake: Lake, text: bytes) -> None:
    path = Path(progress_path(lake, "c1", PLAN_ID))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text)
    with pytest.raises(ProgressFormatError, match=r"p\.json|\.json: not a progress document this executor wrote"):
        read_progress(lake, "c1", PLAN_ID)
