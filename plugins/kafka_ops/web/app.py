"""The FastAPI app the Airflow plugin mounts under `/kafka-ops`: one router per concern.

`build_app(settings, dependencies)` composes the routers over one `LakeCache`; `dependencies` guard
every route (the plugin passes Airflow's own authentication, `web.auth`; tests pass none). Adding a
page or API is one router module and one `include_router` line here. The metrics endpoint is
`app.state.metrics`; its refresher thread (a daemon, see `web.metrics`) stops at the app's shutdown.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool

from kafka_ops.lake.open import lake_of
from kafka_ops.settings import Settings, load_settings
from kafka_ops.web import burrow, fleet, metrics, pages
from kafka_ops.web.lake_cache import LakeCache
from kafka_ops.web.metrics import Clock


def build_app(
    settings: Settings | None = None,
    dependencies: Sequence[Any] = (),
    *,
    reuse: bool = True,
    clock: Clock | None = None,
    refresh_seconds: float | None = metrics.REFRESH_SECONDS,
) -> FastAPI:
    """The app for `settings` (default: `load_settings()`); `reuse` false reads the lake on every request;
    `clock` gives "now" for the data's age (default: the wall clock); `refresh_seconds` how often the
    metrics refresher lists the lake (None: no refresher, every scrape reads and renders inline)."""
    settings = settings or load_settings()
    cache = LakeCache(lake_of(settings), [c.name for c in settings.clusters], reuse=reuse)
    endpoint = metrics.MetricsEndpoint(cache, settings.web, clock, refresh_seconds=refresh_seconds)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await run_in_threadpool(endpoint.close)  # joins the thread: not on the event loop

    app = FastAPI(
        title="kafka-ops",
        description="Prometheus metrics and Burrow's v3 API from the kafka-ops lake",
        lifespan=lifespan,
    )
    app.state.metrics = endpoint
    app.include_router(metrics.router(endpoint, dependencies))
    app.include_router(burrow.router(burrow.BurrowApi(cache), dependencies))
    app.include_router(fleet.router(fleet.Fleet(cache, settings.clusters, settings.web, clock), dependencies))
    app.include_router(pages.router(pages.Pages(lake_of(settings), [c.name for c in settings.clusters]), dependencies))
    return app
