"""The consumer-group source: groups, members and offsets through the Admin API."""
