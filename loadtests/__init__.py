"""Load tests (locust) and benchmarks; results go to BENCHMARKS.md."""
