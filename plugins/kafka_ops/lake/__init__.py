"""The Parquet lake: table schemas, atomic publish, committed reads."""

from kafka_ops.lake.schema import SNAPSHOT_TABLES
from kafka_ops.lake.store import Batch, Lake

__all__ = ["SNAPSHOT_TABLES", "Batch", "Lake"]
