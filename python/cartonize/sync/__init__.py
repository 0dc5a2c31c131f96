"""The sync core: resource lists, connections, schema mapping, unit conversion and pulls.

Shared by the REST write API (api/), the Dagster pipelines (pipelines/) and the console.
"""
