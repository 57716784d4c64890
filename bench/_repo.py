"""Imported first by a benchmark that starts sandbox clusters: puts the checkout on `sys.path`, where
the `sandbox` package lies beside `plugins/kafka_ops` (a benchmark runs as `python bench/<name>.py`, so
only `bench/` is on the path; `kafka_ops` comes from the editable install)."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
