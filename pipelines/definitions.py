"""Builds `defs`, the Dagster code location. Connection pulls, their schedules
and sensors are added here as the sync layer lands; today it holds none."""

from dagster import Definitions

defs = Definitions()
