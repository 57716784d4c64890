"""What each problem means to the on-call engineer, composed once from the findings rows.

One module per detector family (title, cause, action, since, affected rows); `registry` lists them and
the health gates' composers; `words` holds the shared wording (`plural`, `duration`); `problem` the
`Problem` type and the one "since" rule. Pure Python over findings rows: no Spark, no Airflow, no lake.
Below it: analysis and detectors; above it: validation gates, alerting and the report.
"""
