"""Where a snapshot comes from: a cluster's metadata (ZooKeeper, or the Admin API and the
controller quorum on KRaft) and its consumer groups, each filling one model."""
