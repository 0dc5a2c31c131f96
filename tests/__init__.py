"""Tests of cartonize; the tree mirrors the source tree."""
