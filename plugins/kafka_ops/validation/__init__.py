"""Data quality, declared once: integrity suites that decide whether a snapshot may be trusted, and
health gates over the findings of an analysis.

* `suites` — every expectation: a stable name, what it means to an operator, its severity; the
  Great Expectations suites are built from this catalogue (and only there).
* `frames` — the pandas frames the suites validate, with the columns derived from list-valued
  rules (ISR ⊆ replicas, leader ∈ ISR, ...), so each failing row carries its topic/partition/
  broker/group.
* `lake_batches` — reads one committed batch (its day directory found first), not a table's history.
* `runner` — runs suites with Great Expectations and writes Data Docs under the lake.
* `integrity` — `validate_snapshot`, `validate_group_snapshot`, `is_trusted`, `require_trusted`
  (the `snapshot_validations` commit log).
* `gates` — `run_gates`: typed `GateResult`s (severity, offending rows, cause, action, since).

`suites` imports nothing heavy (DAG files may import it at parse time); the other modules import
pandas, and Great Expectations (seconds to import) is only imported when a suite runs.
"""
