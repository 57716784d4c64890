"""The one model of a cluster's metadata at a moment, its lake tables, and publishing it."""
