"""`make demo` and `make demo-remediate` on the sandbox clusters."""
