"""Write the health report into the lake: `<lake>/_reports/<cluster>/<report id>.html` and
`<lake>/_reports/<cluster>/latest.html`, each written to a temporary file and renamed into place
(through the lake's own pyarrow filesystem, so `s3://` and `hdfs://` lakes work too), so a reader
following an alert's link never sees half a page.

`latest.html` only moves forward: it is replaced unless it already shows a batch captured later
(an older run finishing late, or a report re-made for an old snapshot, leaves it alone). A report
of an analysis as of a past time (`ReportData.as_of`) never becomes `latest.html`.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

import pyarrow.fs as pafs

from kafka_ops.errors import LakeError
from kafka_ops.lake.names import REPORTS_DIR, check_name
from kafka_ops.lake.store import Lake
from kafka_ops.report.data import gather
from kafka_ops.report.html import render
from kafka_ops.report.model import ReportData, ReportLinks
from kafka_ops.silences import Silence

if TYPE_CHECKING:
    from kafka_ops.validation.gates import GateReport

REPORTS = REPORTS_DIR
LATEST = "latest.html"
_CAPTURED = re.compile(r'name="kafka-ops-report" content="[^"]*captured_at=([^;"]*)')


def report_url(lake: Lake, cluster: str, report_id: str) -> str:
    """Where the report of batch `report_id` is (or will be) written: a local path, or a URL for a
    lake on object storage. Alerts can link to it before it is written."""
    check_name("cluster", cluster)
    check_name("report id", report_id)
    return _url(lake, f"{_folder(lake, cluster)}/{report_id}.html")


def write_report(
    lake: Lake,
    cluster: str,
    *,
    snapshot_id: str | None = None,
    group_snapshot_id: str | None = None,
    gates: GateReport | None = None,
    links: ReportLinks | None = None,
    now: datetime | None = None,
    as_of: datetime | None = None,
    silences: Sequence[Silence] = (),
) -> str:
    """Gather, render and publish the health report of `cluster` (see `report.data` for which
    batches; `as_of`: of an analysis as of that past time; `silences`: the cluster's, shown with the problems
    they silence); returns where the report of the batch
    was written (`report_url`)."""
    data = gather(
        lake,
        cluster,
        snapshot_id=snapshot_id,
        group_snapshot_id=group_snapshot_id,
        gates=gates,
        links=links,
        now=now,
        as_of=as_of,
        silences=silences,
    )
    return publish(lake, data, render(data))


def read_report(lake: Lake, cluster: str, report_id: str | None = None) -> str | None:
    """The published report of batch `report_id` (None: `latest.html`) of `cluster`, or None when
    there is none; `LakeError` for a name that cannot be a cluster or a report id."""
    name = LATEST if report_id is None else f"{check_name('report id', report_id)}.html"
    path = f"{_folder(lake, check_name('cluster', cluster))}/{name}"
    if lake.fs.get_file_info(path).type != pafs.FileType.File:
        return None
    with lake.fs.open_input_stream(path) as f:
        return f.read().decode("utf-8")


def publish(lake: Lake, data: ReportData, page: str) -> str:
    """Write `page` as the report of `data`'s batch, and as `latest.html` unless that shows a newer batch
    or `data` is as of a past time."""
    report_id = check_name("report id", data.report_id)
    folder = _folder(lake, data.cluster)
    content = page.encode("utf-8")
    try:
        lake.fs.create_dir(folder, recursive=True)
        path = f"{folder}/{report_id}.html"
        _write_atomically(lake.fs, path, content)
        batch = data.snapshot or data.groups
        latest = f"{folder}/{LATEST}"
        if batch is not None and data.as_of is None and not _newer_than(lake.fs, latest, batch.captured_at):
            _write_atomically(lake.fs, latest, content)
    except OSError as e:
        raise LakeError(f"cannot write the health report of cluster {data.cluster} under {folder}: {e}") from e
    return _url(lake, path)


def _folder(lake: Lake, cluster: str) -> str:
    return f"{lake.base}/{REPORTS}/{cluster}"


def _url(lake: Lake, path: str) -> str:
    if isinstance(lake.fs, pafs.LocalFileSystem):
        return path
    scheme = lake.root.partition("://")[0]
    return f"{scheme}://{path}"


def _newer_than(fs: pafs.FileSystem, latest: str, captured_at: datetime) -> bool:
    """Whether `latest` shows a batch captured after `captured_at` (False when absent or unreadable)."""
    if fs.get_file_info(latest).type != pafs.FileType.File:
        return False
    with fs.open_input_stream(latest) as f:
        head = f.read(4096).decode("utf-8", errors="replace")
    match = _CAPTURED.search(head)
    if not match:
        return False
    try:
        shown = datetime.fromisoformat(match.group(1))
    except ValueError:
        return False
    return shown > captured_at


def _write_atomically(fs: pafs.FileSystem, path: str, content: bytes) -> None:
    tmp = f"{path}.{uuid.uuid4().hex}.tmp"
    try:
        with fs.open_output_stream(tmp) as out:
            out.write(content)
        fs.move(tmp, path)
    except BaseException:
        if fs.get_file_info(tmp).type == pafs.FileType.File:
            fs.delete_file(tmp)
        raise
