"""`kafka-ops lake ...`: the Delta lake's time travel (`as-of`) and the Parquet → Delta migration."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime

from kafka_ops.errors import KafkaOpsError
from kafka_ops.settings import load_settings


def add_lake_parser(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    lake = verbs.add_parser("lake", help="the lake's Delta Lake format: time travel, migration")
    actions = lake.add_subparsers(dest="action", required=True)
    as_of = actions.add_parser(
        "as-of",
        help="print the snapshot of a cluster that was current at a past time (a Delta lake's time travel)",
        description="Read the commit table `snapshots` at its Delta version current at --at (not a scan) and "
        "print that cluster's latest snapshot then, with its rows per table.",
    )
    as_of.add_argument("--cluster", required=True, help="the cluster's name in the lake")
    as_of.add_argument("--at", required=True, help="an ISO 8601 time with its zone, e.g. 2026-11-21T03:10:00+00:00")
    as_of.add_argument("--lake", default=None, help="lake root path or URL (default: the settings' lake_root)")
    migrate = actions.add_parser(
        "migrate",
        help="turn the Parquet lake into a Delta lake in place (idempotent; pause the DAGs first)",
        description="Give every lake table a Delta log over the Parquet files already there (no copy). Tables "
        "already Delta are left alone, so it can be run again. Then set lake_format = 'delta' in the settings "
        "(or $KAFKA_OPS_LAKE_FORMAT) and resume the DAGs.",
    )
    migrate.add_argument("--lake", default=None, help="lake root path or URL (default: the settings' lake_root)")


def run_lake(args: argparse.Namespace) -> int:
    try:
        root = args.lake or load_settings().lake_root
        summary = _as_of(root, args.cluster, args.at) if args.action == "as-of" else _migrate(root)
    except KafkaOpsError as e:
        print(f"kafka-ops: {e}", file=sys.stderr)
        return 2
    print(json.dumps(summary, sort_keys=True, default=str))
    return 0


def _as_of(root: str, cluster: str, at_text: str) -> dict[str, object]:
    from kafka_ops.errors import LakeError  # noqa: PLC0415
    from kafka_ops.lake.delta_store import DeltaLake  # noqa: PLC0415 - deltalake only for this verb
    from kafka_ops.lake.schema import METADATA_TABLES  # noqa: PLC0415
    from kafka_ops.lake.time_travel import batch_as_of  # noqa: PLC0415

    try:
        at = datetime.fromisoformat(at_text)
    except ValueError:
        raise LakeError(f"--at {at_text!r} is not an ISO 8601 time, e.g. 2026-11-21T03:10:00+00:00") from None
    lake = DeltaLake(root)
    found = batch_as_of(lake, cluster, at)
    if found is None:
        return {"cluster": cluster, "at": at.isoformat(), "snapshot_id": None}
    rows = {t: lake.read(t, cluster, [found.snapshot_id]).num_rows for t in METADATA_TABLES}
    return {
        "cluster": cluster,
        "at": at.isoformat(),
        "snapshot_id": found.snapshot_id,
        "captured_at": found.captured_at.isoformat(),
        "delta_version": found.version,
        "delta_version_at": found.version_at.isoformat(),
        "rows": {t: n for t, n in rows.items() if n},
    }


def _migrate(root: str) -> dict[str, object]:
    from kafka_ops.lake.migrate import migrate_to_delta  # noqa: PLC0415 - deltalake only for this verb

    done = migrate_to_delta(root)
    return {"lake": root, "tables": {m.table: m.outcome for m in done}}
