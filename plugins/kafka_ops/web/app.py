"""The FastAPI app the Airflow plugin mounts under `/kafka-ops`: one router per concern.

`build_app(settings, dependencies)` composes the routers over one `LakeCache`; `dependencies` guard
every route (the plugin passes Airflow's own authentication, `web.auth`; tests pass none). Adding a
page or API is one router module and one `include_router` line here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI

from kafka_ops.lake.open import lake_of
from kafka_ops.settings import Settings, load_settings
from kafka_ops.web import burrow, metrics, pages
from kafka_ops.web.lake_cache import LakeCache
from kafka_ops.web.metrics import Clock


def build_app(
    settings: Settings | None = None,
    dependencies: Sequence[Any] = (),
    *,
    reuse: bool = True,
    clock: Clock | None = None,
) -> FastAPI:
    """The app for `settings` (default: `load_settings()`); `reuse` false reads the lake on every request;
    `clock` gives "now" for the data's age (default: the wall clock)."""
    settings = settings or load_settings()
    cache = LakeCache(lake_of(settings), [c.name for c in settings.clusters], reuse=reuse)
    app = FastAPI(title="kafka-ops", description="Prometheus metrics and Burrow's v3 API from the kafka-ops lake")
    app.include_router(metrics.router(metrics.MetricsEndpoint(cache, settings.web, clock), dependencies))
    app.include_router(burrow.router(burrow.BurrowApi(cache), dependencies))
    app.include_router(pages.router(pages.Pages(lake_of(settings), [c.name for c in settings.clusters]), dependencies))
    return app
