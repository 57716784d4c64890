"""Spark analysis of the snapshot history: the detector contract, thresholds, inputs, findings."""
