"""Reproducible benchmarks of the packing engine, run as modules: python -m bench.<name>."""
