"""The KRaft source: a cluster without ZooKeeper, read through the Admin API and its controller quorum."""
