"""The Dagster code location of cartonize: connection pulls as assets."""
