"""Airflow glue: hooks and assets that let DAGs call the `kafka_ops` library."""
