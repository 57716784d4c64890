"""`python -m tests.integration.s3.writers ROOT WRITER COUNT BARRIER WRITERS`: once WRITERS writers
have touched a file in the local folder BARRIER, publish COUNT batches of cluster `c1` to the Delta
lake at ROOT (an `s3://` root, the AWS variables inherited) as fast as possible; print the batch ids
published and the errors got, as one JSON line."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from kafka_ops.errors import LakeError
from kafka_ops.lake.delta_store import DeltaLake
from kafka_ops.snapshot.tables import snapshot_batch
from tests.unit.snapshots import small_snapshot


def main(root: str, writer: str, count: int, barrier: Path, writers: int) -> None:
    lake = DeltaLake(root)
    (barrier / writer).touch()
    while len(list(barrier.iterdir())) < writers:  # start together, or there is no race
        time.sleep(0.002)
    published, errors = [], []
    for i in range(count):
        batch_id = f"{writer}-{i}"
        try:
            lake.publish(snapshot_batch(small_snapshot(batch_id)))
            published.append(batch_id)
        except LakeError as e:
            errors.append(str(e))
    print(json.dumps({"published": published, "errors": errors}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]), int(sys.argv[5]))
