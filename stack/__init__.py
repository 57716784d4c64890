"""kafka-ops as a running service on one machine, without Docker: `python -m stack up|down|status`.

Infrastructure, not the library a worker imports (that is `plugins/kafka_ops`). `up` starts PostgreSQL,
Redis, an S3-compatible object store (moto), a webhook receiver, a Spark standalone master and two
workers, Airflow (api-server, scheduler, dag-processor, triggerer, two Celery workers), Prometheus and
Alertmanager, and the two sandbox Kafka clusters (ZooKeeper 3.9 and KRaft 4.4) as one fleet; every
process on loopback, its state (ports, pids) in `var/stack/state.json`, its data and logs under
`var/stack/`. `down` stops exactly what `up` started. `services.SERVICES` is the one list of services,
which `docker/docker-compose.yml` mirrors (tests/unit/test_docker_stack.py holds the two in step).
"""
