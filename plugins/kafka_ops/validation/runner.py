"""Run suites with Great Expectations 1.x; write their Data Docs under the lake.

One call validates a few frames (one per suite) as pandas batches of an ephemeral context, maps each
expectation's result back to its `Check` by `meta.name`, and, when a Data Docs site is given, keeps
the results as JSON and renders their pages plus the site's index:

    <lake>/_validation/data_docs/<cluster>/index.html                       (newest validations first)
    <lake>/_validation/data_docs/<cluster>/validations/<suite>/<snapshot id>/<run time>/<batch>.html
    <lake>/_validation/results/<cluster>/...json                            (what the pages render)

Each failed expectation's page lists its failing rows (up to `SAMPLE_ROWS`) with the suite's key
columns (topic, partition, broker, group). Results older than `DocsSite.keep_days` are deleted
before each build, and their pages with them, so a build costs the same on day 100 as on day 1.
The site is plain static HTML (styles from public CDNs): it opens from the filesystem.

Great Expectations takes seconds to import: it is imported here, inside functions, and only the
validating tasks pay for it. Usage statistics are off: nothing leaves the machine.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

import pandas as pd
import pyarrow.fs as pafs

from kafka_ops.errors import ValidationFailed
from kafka_ops.lake.names import check_name
from kafka_ops.lake.store import Lake
from kafka_ops.validation.suites import Check, SuiteSpec, to_gx_suite

if TYPE_CHECKING:
    from great_expectations.core import ExpectationSuiteValidationResult
    from great_expectations.data_context import AbstractDataContext

log = logging.getLogger(__name__)

VALIDATION_DIR = "_validation"
SITE = "kafka_ops"
SAMPLE_ROWS = 20
"""Failing rows shown per expectation in Data Docs (every failing row stays in the result)."""


@dataclass(frozen=True)
class DocsSite:
    """Where one cluster's Data Docs and the validation results behind them live (local paths)."""

    cluster: str
    docs_dir: str
    results_dir: str
    keep_days: float = 3.0
    """Validation results (and so pages) older than this are deleted at the next build."""
    index_limit: int = 300
    """The index lists the newest this many validations (pages of older ones stay reachable)."""

    @property
    def index(self) -> str:
        return f"{self.docs_dir}/index.html"


def docs_site(lake: Lake, cluster: str, keep_days: float = 3.0) -> DocsSite | None:
    """The Data Docs site of `cluster` under a local lake; None (and a warning) for an object store,
    where static pages would need a web server or bucket hosting this project does not set up."""
    check_name("cluster", cluster)
    if not isinstance(lake.fs, pafs.LocalFileSystem):
        log.warning("Data Docs are only written under a local lake; %s gets the results only", lake.root)
        return None
    root = f"{lake.base}/{VALIDATION_DIR}"
    return DocsSite(cluster, f"{root}/data_docs/{cluster}", f"{root}/results/{cluster}", keep_days)


@dataclass(frozen=True)
class SuiteRun:
    """One suite to run on one frame; `run_name` names the validated batch (its snapshot id)."""

    spec: SuiteSpec
    frame: pd.DataFrame
    run_name: str


@dataclass(frozen=True)
class CheckOutcome:
    check: Check
    passed: bool
    count: int
    """Failing rows (0 when passed)."""
    rows: tuple[dict[str, Any], ...]
    """Every failing row: the suite's key columns and the checked value(s), as plain Python values."""


@dataclass(frozen=True)
class SuiteOutcome:
    spec: SuiteSpec
    run_name: str
    checks: tuple[CheckOutcome, ...]
    page: str | None
    """The Data Docs page of this validation (None without a site)."""

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def failed(self) -> list[CheckOutcome]:
        return [c for c in self.checks if not c.passed]


def run_suites(
    runs: Sequence[SuiteRun],
    parameters: Mapping[str, float],
    *,
    run_time: datetime,
    site: DocsSite | None,
) -> list[SuiteOutcome]:
    """Validate every run's frame against its suite (bounds from `parameters`); with a `site`, store
    the results and build their Data Docs pages and the index.

    Raises `ValidationFailed` when an expectation could not be evaluated at all (a missing column:
    a bug, never a data problem), so a crash never reads as a pass.
    """
    from great_expectations.core.run_identifier import RunIdentifier  # noqa: PLC0415 - slow import
    from great_expectations.data_context.types.resource_identifiers import (  # noqa: PLC0415
        ExpectationSuiteIdentifier,
        ValidationResultIdentifier,
    )

    context = _context(site)
    source = context.data_sources.add_pandas("lake")
    run_id_time = run_time.astimezone(UTC)
    stored: list[tuple[int, Any]] = []
    outcomes: list[SuiteOutcome] = []
    for i, run in enumerate(runs):
        spec = run.spec
        columns = list(dict.fromkeys([*spec.keys, *(c.domain for c in spec.checks), *_others(spec)]))
        definition = source.add_dataframe_asset(spec.name).add_batch_definition_whole_dataframe("batch")
        batch = definition.get_batch(batch_parameters={"dataframe": run.frame[columns]})
        result = batch.validate(
            to_gx_suite(spec, parameters),
            result_format={
                "result_format": "COMPLETE",
                "unexpected_index_column_names": list(spec.keys),
                "partial_unexpected_count": SAMPLE_ROWS,
                "return_unexpected_index_query": False,
            },
        )
        run_id = RunIdentifier(run_name=run.run_name, run_time=run_id_time)
        # what ValidationDefinition.run records (the page shows the run); it stores a datetime too
        result.meta["run_id"] = run_id
        result.meta["validation_time"] = run_id_time.isoformat()
        outcomes.append(SuiteOutcome(spec, run.run_name, _checks(spec, result), None))
        if site is not None:
            key = ValidationResultIdentifier(ExpectationSuiteIdentifier(name=spec.name), run_id, batch.id)
            _keep_samples(result)
            context.validation_results_store.store_validation_results(result, key)
            stored.append((i, key))
    if site is None or not stored:
        return outcomes
    _prune(context, site, run_id_time)
    context.build_data_docs(site_names=[SITE], resource_identifiers=[key for _, key in stored])
    for i, key in stored:
        urls = context.get_docs_sites_urls(resource_identifier=key, site_name=SITE, only_if_exists=False)
        url = urls[0].get("site_url") if urls else None
        page = _path(url) if url else None
        o = outcomes[i]
        outcomes[i] = SuiteOutcome(o.spec, o.run_name, o.checks, page)
    return outcomes


WARM_UP = SuiteSpec(
    "warm_up",
    "row",
    ("key",),
    (
        Check("ok", "warm-up: in a set", "warning"),
        Check("below", "warm-up: at most", "warning", kind="at_most", column="value", bound=1.0),
        Check("above", "warm-up: at least", "warning", kind="at_least", column="value", bound=0.0),
        Check("pair", "warm-up: not below", "warning", kind="not_below", column="value", other="floor"),
    ),
)
"""A suite with one check of each kind, on one row: what `warm_up` validates."""


def warm_up() -> None:
    """Import Great Expectations and what its first validation loads lazily (its expectations, metrics and
    execution engines: 20-40 s on a busy 2-core machine) by validating one row against a suite with one
    check of each kind. A process that forks afterwards (a Celery worker, for each task) then validates
    at once; nothing is kept but the imports."""
    from tqdm import tqdm  # noqa: PLC0415 - Great Expectations' dependency

    # its progress bars (off here) still start tqdm's monitor thread, which a forked process would not have
    tqdm.monitor_interval = 0
    frame = pd.DataFrame({"key": ["k"], "ok": ["OK"], "value": [0.5], "floor": [0.0]})
    run_suites([SuiteRun(WARM_UP, frame, "warm-up")], {}, run_time=datetime.now(UTC), site=None)


def _keep_samples(result: ExpectationSuiteValidationResult) -> None:
    """Trim each expectation's full list of failing rows to `SAMPLE_ROWS` before the result is stored
    for Data Docs (which then say "Sampled Unexpected Values"): 20,000 failing partitions would
    otherwise store ~4 MB per validation, every 5 minutes. The caller already has the full lists."""
    for r in result.results:
        details = r.result or {}
        for name in ("unexpected_index_list", "unexpected_list"):
            values = details.get(name)
            if isinstance(values, list) and len(values) > SAMPLE_ROWS:
                details[name] = values[:SAMPLE_ROWS]


def _others(spec: SuiteSpec) -> list[str]:
    return [c.other for c in spec.checks if c.other]


def _context(site: DocsSite | None) -> AbstractDataContext:
    import great_expectations as gx  # noqa: PLC0415
    from great_expectations.data_context.types.base import (  # noqa: PLC0415
        DataContextConfig,
        InMemoryStoreBackendDefaults,
        ProgressBarsConfig,
    )

    config = DataContextConfig(
        store_backend_defaults=InMemoryStoreBackendDefaults(),
        analytics_enabled=False,
        progress_bars=ProgressBarsConfig(globally=False),
    )
    config.data_docs_sites = {}
    if site is not None:
        config.stores[config.validation_results_store_name]["store_backend"] = {
            "class_name": "TupleFilesystemStoreBackend",
            "base_directory": site.results_dir,
        }
        config.data_docs_sites = {
            SITE: {
                "class_name": "SiteBuilder",
                "show_how_to_buttons": False,
                "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": site.docs_dir},
                "site_index_builder": {
                    "class_name": "DefaultSiteIndexBuilder",
                    "validation_results_limit": site.index_limit,
                },
                "site_section_builders": {"expectations": "None", "profiling": "None"},
            }
        }
    return gx.get_context(project_config=config, mode="ephemeral")


def _checks(spec: SuiteSpec, result: ExpectationSuiteValidationResult) -> tuple[CheckOutcome, ...]:
    by_name = {}
    for r in result.results:
        meta = r.expectation_config.meta if r.expectation_config is not None else None
        name = (meta or {}).get("name")
        info = r.exception_info or {}
        if info.get("raised_exception"):
            raise ValidationFailed(
                f"suite {spec.name}: expectation {name} could not be evaluated: {info.get('exception_message')}",
                (str(name),),
            )
        details = r.result or {}
        rows = tuple({k: plain(v) for k, v in row.items()} for row in details.get("unexpected_index_list") or [])
        count = int(details.get("unexpected_count") or 0)
        by_name[name] = (bool(r.success), count, rows)
    outcomes = []
    for check in spec.checks:
        if check.name not in by_name:
            raise ValidationFailed(f"suite {spec.name}: no result for expectation {check.name}", (check.name,))
        passed, count, rows = by_name[check.name]
        outcomes.append(CheckOutcome(check, passed, count, rows))
    return tuple(outcomes)


def plain(value: Any) -> Any:
    """numpy / pandas scalars → Python values (timestamps → datetime); NA, NaT and NaN → None."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    item = getattr(value, "item", None)
    if callable(item):
        value = item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _prune(context: AbstractDataContext, site: DocsSite, now: datetime) -> None:
    """Delete validation results older than `site.keep_days`; the index build that follows deletes
    their pages (Great Expectations removes pages whose result is gone)."""
    cutoff = now - timedelta(days=site.keep_days)
    store = context.validation_results_store
    for key in store.list_keys():
        run_time = getattr(getattr(key, "run_id", None), "run_time", None)
        if run_time is None:
            continue
        if run_time.tzinfo is None:
            run_time = run_time.replace(tzinfo=UTC)
        if run_time < cutoff:
            with contextlib.suppress(FileNotFoundError, KeyError):  # another task pruned it first
                store.remove_key(key)


def _path(url: str) -> str:
    parsed = urlparse(url)
    return unquote(parsed.path) if parsed.scheme == "file" else url
