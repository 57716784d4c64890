"""kafka-ops: keeps Apache Kafka clusters healthy.

The library behind the Airflow DAGs: a pure cluster model and Kafka-format parsers, the
ZooKeeper snapshot collector, the Parquet lake, thin Airflow hooks, a CLI and the sandbox
cluster launcher.
"""

__version__ = "0.1.0"
