"""A snapshot: the models of `kafka_ops.model` written to the lake as one batch (`tables`), and collecting
and publishing one (`publish`)."""
