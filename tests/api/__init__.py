"""Tests of the Falcon pack endpoint."""
