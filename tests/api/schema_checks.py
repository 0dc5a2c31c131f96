"""What the schema fuzz tests (`test_pack_schema_fuzz`, `test_sync_write_fuzz`) check of
every answer, and whether they draw fresh examples (`make fuzz`) or the suite's fixed ones."""

from __future__ import annotations

import os

from schemathesis import checks

__all__ = ["CHECKS", "FRESH"]

#: Never a 5xx; status, content type and body as the schema says.
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
]
#: Fresh examples under `HYPOTHESIS_PROFILE=fuzz`; derandomised in the suite.
FRESH = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"
