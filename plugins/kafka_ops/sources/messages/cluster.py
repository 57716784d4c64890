"""Request and response classes for KRaft's cluster APIs kafka-python lacks (UnregisterBroker), built from
Kafka's own schemas in this package (from kafka-clients' `common/message/`)."""

from __future__ import annotations

from kafka.protocol.api_message import ApiMessage

from kafka_ops.sources import messages

# One line per message: kafka-python's metaclass reads `<class name>.json` from `load_json`'s package.


class UnregisterBrokerRequest(ApiMessage, load_json=messages):  # type: ignore[call-arg]
    pass


class UnregisterBrokerResponse(ApiMessage, load_json=messages):  # type: ignore[call-arg]
    pass
