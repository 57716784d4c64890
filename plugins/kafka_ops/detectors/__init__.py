"""Detectors: one module each, registered in `registry.DETECTORS` (see `analysis.detector`)."""
