"""Airflow's configuration for a local deployment, shared by the stack (PostgreSQL, CeleryExecutor) and
the UI test's `tests/e2e/airflow_stack.py` (SQLite, LocalExecutor): the simple auth manager with users
from a passwords file, the api-server on loopback, one JWT secret for the api-server and the workers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from stack.processes import wait_until

ADMIN = "admin"
VIEWER = "prometheus"
"""The read-only user Prometheus scrapes /kafka-ops/metrics as (docs/operations.md)."""
SIMPLE_AUTH_MANAGER = "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager"


def airflow_environment(
    home: Path, port: int, jwt_secret: str, *, database: str, executor: str, users: str, passwords: Path
) -> dict[str, str]:
    """The `AIRFLOW__*` variables of every component (api-server, scheduler, workers alike)."""
    url = f"http://127.0.0.1:{port}"
    return {
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": database,
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__EXECUTOR": executor,
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{url}/execution/",
        "AIRFLOW__CORE__AUTH_MANAGER": SIMPLE_AUTH_MANAGER,
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": users,
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(passwords),
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": str(port),
        "AIRFLOW__API__WORKERS": "1",
        "AIRFLOW__API__BASE_URL": url,
        "AIRFLOW__API__SECRET_KEY": jwt_secret,
        # the api-server signs the tasks' tokens, the workers present them: one secret
        "AIRFLOW__API_AUTH__JWT_SECRET": jwt_secret,
    }


class AirflowApi:
    """The REST API of a running api-server, as one user of the simple auth manager."""

    def __init__(self, url: str, username: str, password: str) -> None:
        self.url, self.username, self.password = url, username, password
        self._token: str | None = None

    def healthy(self) -> dict[str, Any] | None:
        """`/api/v2/monitor/health`'s answer, or None while the api-server does not answer."""
        try:
            response = httpx.get(f"{self.url}/api/v2/monitor/health", timeout=5)
        except httpx.TransportError:
            return None
        return dict(response.json()) if response.status_code == 200 else None

    def token(self) -> str:
        if self._token is None:
            response = httpx.post(
                f"{self.url}/auth/token", json={"username": self.username, "password": self.password}, timeout=30
            )
            response.raise_for_status()
            self._token = str(response.json()["access_token"])
        return self._token

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """`/api/v2/<path>`; the response, whatever its status. Up to 60 s: the api-server's one worker has taken
        longer than 30 s on this 2-core machine while the soak's faults loaded it."""
        headers = {"Authorization": f"Bearer {self.token()}", **kwargs.pop("headers", {})}
        return httpx.request(method, f"{self.url}/api/v2/{path}", headers=headers, timeout=60, **kwargs)

    def get(self, path: str, **params: Any) -> Any:
        response = self.request("GET", path, params=params)
        if response.status_code != 200:
            raise RuntimeError(f"GET {path}: {response.status_code} {response.text[:500]}")
        return response.json()

    def unpause_when_parsed(self, dag_ids: list[str], timeout_s: float, alive: Callable[[], None]) -> None:
        """Once the dag-processor has serialized each of `dag_ids`, unpause them and every other DAG tagged
        kafka-ops; `alive` raises if a component died."""
        for dag_id in dag_ids:

            def parsed(dag_id: str = dag_id) -> bool:
                alive()
                return self.request("GET", f"dags/{dag_id}").status_code == 200

            wait_until(parsed, timeout_s, f"the dag-processor to parse {dag_id}", every_s=2)
        paused = self.get("dags", tags="kafka-ops", paused=True, limit=100)["dags"]
        for dag_id in sorted({*dag_ids, *(d["dag_id"] for d in paused)}):
            response = self.request("PATCH", f"dags/{dag_id}", json={"is_paused": False})
            if response.status_code != 200:
                raise RuntimeError(f"unpause {dag_id}: {response.status_code} {response.text[:500]}")
