"""The ZooKeeper source: one walk of a 3.x cluster's znodes into a `ClusterSnapshot`."""
