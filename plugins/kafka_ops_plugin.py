"""The kafka-ops Airflow plugin: mounts `kafka_ops.web` on the api-server under `/kafka-ops`
(`/kafka-ops/metrics`, `/kafka-ops/v3/kafka/...`), behind Airflow's authentication.

Every Airflow component imports this file; only the api-server serves the app, which is built on
its first request (no settings, lake or FastAPI work at import).
"""

from __future__ import annotations

from typing import Any

from airflow.plugins_manager import AirflowPlugin


class _AppOnFirstRequest:
    """An ASGI app that builds `kafka_ops.web.app` when the api-server first calls it."""

    def __init__(self) -> None:
        self._app: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self._app is None:
            from kafka_ops.web.app import build_app  # noqa: PLC0415 - the api-server only
            from kafka_ops.web.auth import airflow_dependencies  # noqa: PLC0415

            self._app = build_app(dependencies=airflow_dependencies())
        await self._app(scope, receive, send)


class KafkaOpsPlugin(AirflowPlugin):
    name = "kafka_ops"
    fastapi_apps = [{"app": _AppOnFirstRequest(), "url_prefix": "/kafka-ops", "name": "kafka-ops"}]  # noqa: RUF012
    # the health report, plans and audit inside the Airflow UI (pages of the app above, see kafka_ops.web.pages)
    external_views = [  # noqa: RUF012
        {"name": "Kafka health", "href": "/kafka-ops/ui", "destination": "nav", "url_route": "kafka-ops"},
        {
            "name": "kafka-ops",
            "href": "/kafka-ops/ui/runs/{DAG_ID}/{RUN_ID}",
            "destination": "dag_run",
            "url_route": "kafka-ops-run",
        },
    ]
