"""The UI test's setup: a real Airflow on the sandbox cluster, and headless Chromium logged in to it.

* `airflow` (package: the UI and metrics tests share one stack, stopped once the last e2e test is
  done, so it does not run idle beside the rest of the suite): settings TOML for cluster `sandbox`
  (a lake under its tmp dir, writes disabled, tier "1" of platform-team) and `sandbox-approved` (tier "2"
  of payments-team), connections as `AIRFLOW_CONN_*`, then `AirflowStack`
  (api-server, scheduler, dag-processor on a fresh SQLite DB, the kafka_ops plugin on the api-server)
  with the election DAG parsed and unpaused.
* `browser_context` (module): Debian's chromium driven by Playwright (never `playwright install`),
  signed in through the simple auth manager's login page.
* `page` (per test): on failure, a screenshot and the page's text go to the artefact dir.

Artefacts (screenshots) land in `var/e2e-artifacts/` (`$KAFKA_OPS_VAR`), emptied when the session starts.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, expect, sync_playwright

from kafka_ops.planning.request import ELECTION_FORM
from sandbox import SandboxCluster, var_dir
from tests.e2e.airflow_stack import USER, VIEWER, AirflowStack, AirflowUI

# Playwright's assertions wait 5 s by default: on a loaded 2-core machine (the other make test worker
# running brokers and Spark) the one api-server worker has answered a page's first REST calls only after
# more than 30 s. A condition with a generous deadline, not a timing.
UI_TIMEOUT_MS = 60_000
expect.set_options(timeout=UI_TIMEOUT_MS)

REPO = Path(__file__).resolve().parents[2]
CLUSTER = "sandbox"
APPROVED_CLUSTER = "sandbox-approved"
"""The same sandbox under another name, with writes enabled and the admin as its approver."""
ELECTION = ELECTION_FORM.dag_id
CHROMIUM = os.environ.get("KAFKA_OPS_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def artifacts() -> Path:
    folder = var_dir() / "e2e-artifacts"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


@pytest.fixture(scope="package")
def airflow(sandbox: SandboxCluster, tmp_path_factory: pytest.TempPathFactory, artifacts: Path) -> Iterator[AirflowUI]:
    """Airflow 3 for real against the session sandbox; every component stopped after the e2e tests, also on failure.

    Package-scoped, not session: a scheduler and dag-processor left running would take CPU from
    every later test on a two-core machine for the rest of the run."""
    tmp = tmp_path_factory.mktemp("airflow-ui")
    settings = tmp / "kafka-ops.toml"
    settings.write_text(
        f'lake_root = "{tmp / "lake"}"\n'
        "[[clusters]]\n"
        f'name = "{CLUSTER}"\n'
        'zookeeper_conn_id = "zookeeper_sandbox"\n'
        'kafka_conn_id = "kafka_sandbox"\n'
        "writes_enabled = false\n"
        'tier = "1"\n'
        'owner = "platform-team"\n'
        # the session sandbox may have just started, or a fault test moved its controller
        "remediation_controller_quiet_seconds = 0\n"
        # the same sandbox, where plans are approved in the UI by the admin and executed
        "[[clusters]]\n"
        f'name = "{APPROVED_CLUSTER}"\n'
        'zookeeper_conn_id = "zookeeper_sandbox"\n'
        'kafka_conn_id = "kafka_sandbox"\n'
        "writes_enabled = true\n"
        f'approvers = ["{USER}"]\n'
        'tier = "2"\n'
        'owner = "payments-team"\n'
        "remediation_controller_quiet_seconds = 0\n"
    )
    zookeeper = {"conn_type": "zookeeper", "host": sandbox.zookeeper_hosts, "extra": {"chroot": sandbox.chroot}}
    kafka = {"conn_type": "kafka", "host": sandbox.bootstrap_servers, "extra": {"request_timeout_ms": 10_000}}
    env = {
        "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
        "KAFKA_OPS_CONFIG": str(settings),
        "KAFKA_OPS_LAKE": "",  # the settings' lake_root, not one from the caller's environment
        "AIRFLOW_CONN_ZOOKEEPER_SANDBOX": json.dumps(zookeeper),
        "AIRFLOW_CONN_KAFKA_SANDBOX": json.dumps(kafka),
        # a read-only user, as docs/operations.md gives Prometheus (its password lands in the passwords file)
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{USER}:admin,{VIEWER}:viewer",
    }
    stack = AirflowStack(tmp / "home", env)
    try:
        stack.start()
        stack.wait_for_dag(ELECTION)
        stack.unpause(ELECTION)
        yield AirflowUI(stack, CLUSTER, tmp / "lake", artifacts)
    finally:
        stack.stop()


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    if CHROMIUM is None:
        pytest.fail("no chromium on PATH: `make browser` installs Debian's package")
    launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
    yield launched
    launched.close()


@pytest.fixture(scope="module")
def browser_context(browser: Browser, airflow: AirflowUI) -> Iterator[BrowserContext]:
    """Signed in as the admin: any Airflow page redirects to the login form first."""
    context = browser.new_context(viewport={"width": 1280, "height": 1100}, base_url=airflow.stack.url)
    context.set_default_timeout(UI_TIMEOUT_MS)
    page = context.new_page()
    try:
        page.goto(f"/dags/{ELECTION}")
        page.wait_for_url("**/auth/login**")
        page.get_by_label("Username").fill(USER)
        page.get_by_label("Password").fill(airflow.stack.password)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(f"**/dags/{ELECTION}")
    except Exception:
        save_failure(page, airflow.artifacts, "login")
        raise
    finally:
        page.close()
    yield context
    context.close()


@pytest.fixture
def page(browser_context: BrowserContext, airflow: AirflowUI, request: pytest.FixtureRequest) -> Iterator[Page]:
    opened = browser_context.new_page()
    yield opened
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        save_failure(opened, airflow.artifacts, request.node.name)
        print(f"load average {os.getloadavg()}\n{airflow.stack.tail('api-server', 30)}")  # in pytest's report
    opened.close()


def save_failure(page: Page, folder: Path, name: str) -> None:
    """What was on screen: a full-page screenshot and the page's text, named after the test."""
    text = folder / f"failure-{name}.txt"
    try:
        page.screenshot(path=folder / f"failure-{name}.png", full_page=True)
        text.write_text(f"{page.url}\n\n{page.inner_text('body')}")
    except Exception as e:  # the page may be gone; the test's own error is what matters
        text.write_text(f"could not capture the page: {e}")
    print(f"what the browser showed: {text.with_suffix('.png')} and {text}")  # in pytest's report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Keeps each phase's report on the test item, so `page` knows whether the test failed."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report
