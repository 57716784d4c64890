"""Imported once by each Celery worker when it starts (`celery_worker.PRELOADED`), never by a task: it runs
one Great Expectations validation (`validation.runner.warm_up`), so the tasks forked from the worker gate and
page without first loading Great Expectations' expectations, metrics and engines (20-40 s on a busy 2-core
machine, which `import great_expectations` alone does not load)."""

from __future__ import annotations

from kafka_ops.validation.runner import warm_up

warm_up()
