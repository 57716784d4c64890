"""Imported once by each Celery worker when it starts (`celery_worker.PRELOADED`), never by a task: it runs
one Great Expectations validation (`validation.runner.warm_up`), so the tasks forked from the worker gate and
page without first loading Great Expectations' expectations, metrics and engines (20-40 s on a busy 2-core
machine, which `import great_expectations` alone does not load). A warm-up that fails only costs that time:
it is logged, and the worker starts all the same."""

from __future__ import annotations

import logging

from kafka_ops.validation.runner import warm_up

log = logging.getLogger(__name__)

try:
    warm_up()
except Exception as e:  # an optimization: the tasks load what they need themselves
    log.warning("Great Expectations' warm-up failed, each task will load it itself: %s: %s", type(e).__name__, e)
