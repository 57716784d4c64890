"""Assets the kafka-ops DAGs produce and consume, defined once so producers and consumers agree.

The URI uses an `x-` scheme: Airflow 3 leaves `x-*` URIs as given (no provider normalizer, no
provider lookup at parse time), which suits a logical name for "a snapshot was committed to
the lake", wherever the lake root is (`$KAFKA_OPS_LAKE`, local or `s3a://`).
"""

from __future__ import annotations

from airflow.sdk import Asset

SNAPSHOT_ASSET = Asset(name="kafka_ops_snapshots", uri="x-kafka-ops://lake/snapshots")
"""Updated once per cluster each time a snapshot is committed to the lake.

The event's `extra` carries `cluster`, `snapshot_id` and `lake_root`: which cluster got a new
snapshot, and which one (the analysis DAG reads the cluster's newest when its run starts).
"""


GROUP_SNAPSHOT_ASSET = Asset(name="kafka_ops_group_snapshots", uri="x-kafka-ops://lake/group_snapshots")
"""Updated once per cluster each time a consumer-group collection is committed to the lake
(`extra`: `cluster`, `snapshot_id`, `lake_root`)."""
