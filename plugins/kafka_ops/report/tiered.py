"""The snapshot's tiered-storage partitions (KIP-405, `sources.tiered`): how much of each log is local and how
much only remote, and its copy backlog, worst backlog first. The table is left out when no topic of the
snapshot has remote storage."""

from __future__ import annotations

from typing import Any

import pyarrow.compute as pc

from kafka_ops.lake.store import Lake
from kafka_ops.report import reads
from kafka_ops.report.model import Cell, Collected, OffenderTable

Row = dict[str, Any]
_COLUMNS = ("topic", "partition", "leader", "remote_storage", "local_retention_ms", "local_retention_bytes",
            "log_start_offset", "local_log_start_offset", "tiered_end_offset", "end_offset",
            "copy_backlog")  # fmt: skip


def tiered_table(lake: Lake, cluster: str, snapshot: Collected | None, top_rows: int) -> OffenderTable | None:
    """The table of `snapshot`'s remote-storage partitions, or None when it has none (or predates the columns)."""
    if snapshot is None:
        return None
    day = f"{snapshot.captured_at:%Y-%m-%d}"
    where = (pc.field("snapshot_id") == snapshot.snapshot_id) & (pc.field("remote_storage") == True)  # noqa: E712
    rows: list[Row] = reads.read_days(lake, "partitions", cluster, [day], columns=_COLUMNS, where=where).to_pylist()
    if not rows:
        return None
    rows.sort(key=lambda r: (-(r["copy_backlog"] if r["copy_backlog"] is not None else -1), r["topic"], r["partition"]))
    return OffenderTable(
        title="Tiered storage: partitions by copy backlog (offsets in the local log not yet in remote storage)",
        source="partitions",
        columns=(
            "Partition",
            "Leader",
            "Local offsets",
            "Remote-only offsets",
            "Tiered up to",
            "Copy backlog",
            "local.retention.ms",
            "local.retention.bytes",
        ),
        rows=tuple(_cells(r) for r in rows[:top_rows]),
        total=len(rows),
        none="no topic has remote storage",
    )


def _cells(r: Row) -> tuple[Cell, ...]:
    """One partition's row; None (shown as unknown) where the broker did not tell (an issue says why)."""
    local = _span(r["local_log_start_offset"], r["end_offset"])
    remote_only = _span(r["log_start_offset"], r["local_log_start_offset"])
    tiered = r["tiered_end_offset"]
    return (
        f"{r['topic']}-{r['partition']}",
        r["leader"],
        local,
        remote_only,
        "nothing yet" if tiered == -1 else tiered,
        r["copy_backlog"],
        _retention(r["local_retention_ms"]),
        _retention(r["local_retention_bytes"]),
    )


def _span(start: int | None, end: int | None) -> int | None:
    return None if start is None or end is None or start < 0 or end < start else end - start


def _retention(value: int | None) -> Cell:
    """Kafka's -2 is "as the whole log's retention", -1 "unlimited"."""
    return {-2: "= retention", -1: "unlimited"}.get(value, value) if value is not None else None
