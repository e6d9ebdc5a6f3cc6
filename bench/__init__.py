"""Benchmarks, run as `python -m bench [name ...]`; not tests, no timed asserts anywhere."""
