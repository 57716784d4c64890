"""The collection stages' attempts (`alerting.pipeline_status`) when two snapshot runs record the same stage."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

from kafka_ops.alerting.pipeline_status import PipelineStatus


def test_two_runs_recording_one_stage_at_once_both_land_and_leave_no_staged_copy(tmp_path: Path) -> None:
    # the snapshot DAG runs two runs at once (a held one and the next): each attempt stages its own copy
    status = PipelineStatus(str(tmp_path))
    errors: list[BaseException] = []

    def attempts(error: BaseException | None) -> None:
        try:
            for _ in range(100):
                status.record("east", "ZooKeeper", datetime.now(UTC), error, "zk_east")
        except BaseException as e:  # a move of a copy the other run had moved already
            errors.append(e)

    runs = [threading.Thread(target=attempts, args=(e,)) for e in (None, TimeoutError("no answer"))]
    for run in runs:
        run.start()
    for run in runs:
        run.join()
    assert errors == []
    latest = status.read("east", "ZooKeeper")
    assert latest is not None and latest.conn_id == "zk_east"
    assert [p.name for p in (tmp_path / "_alerting").iterdir()] == ["east.pipeline-zookeeper.json"]
