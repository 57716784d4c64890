"""The health report: one self-contained HTML page per cluster and run, written to the lake
(`<lake>/_reports/<cluster>/<snapshot id>.html` and `latest.html`) and linked from alerts.

`write_report` gathers (`data`), renders (`html`, with the charts of `charts` drawn by `svg`) and
publishes atomically (`publish`); `browser` renders a page in headless Chromium.
"""

from __future__ import annotations

from kafka_ops.report.model import ReportData, ReportLinks
from kafka_ops.report.publish import report_url, write_report

__all__ = ["ReportData", "ReportLinks", "report_url", "write_report"]
