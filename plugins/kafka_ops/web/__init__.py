"""kafka-ops on the Airflow api-server: a FastAPI app (`web.app`) with the Prometheus endpoint
(`web.metrics`, names from `web.profiles`) and Burrow's v3 API (`web.burrow`), read from the lake
through `web.lake_cache`; mounted by the plugin `plugins/kafka_ops_plugin.py`."""
