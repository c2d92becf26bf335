"""Benchmarks run from a checkout (`python -m bench.X`), never in tests: see docs/BENCHMARKS.md."""
