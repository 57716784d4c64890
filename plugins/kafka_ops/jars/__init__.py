"""The jars kafka-ops runs with (Kafka's, Delta Lake's Spark connector, Hadoop's S3A), fetched once by
Maven from the poms in this folder (`kafka_ops.jars.fetch`)."""
