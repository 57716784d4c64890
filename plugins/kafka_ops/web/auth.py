"""Airflow's own authentication for the plugin's routes (imported on the api-server only).

A request needs what Airflow's REST API needs: a JWT from the api-server's auth manager, as an
`Authorization: Bearer` header (what Prometheus and Burrow clients send) or the UI's session
cookie; the user must be allowed Airflow's read-only `WEBSITE` view, which every role has
(Viewer included). No token: 401; a token the auth manager refuses: 403.
"""

from __future__ import annotations

from typing import Any

from airflow.api_fastapi.auth.managers.models.resource_details import AccessView
from airflow.api_fastapi.core_api.security import requires_access_view
from fastapi import Depends


def airflow_dependencies() -> list[Any]:
    return [Depends(requires_access_view(AccessView.WEBSITE))]
