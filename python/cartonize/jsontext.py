"""JSON text from outside the service (request bodies, form fields and parameters,
headers templates, third-party responses), decoded so that every way it can fail is a
ValueError the caller already answers: malformed text raises `json.JSONDecodeError`,
and so do the two cases Python's `json` raised otherwise (a 500 where a caller caught
only ValueError or JSONDecodeError):

- nesting deeper than the interpreter's recursion limit (RecursionError);
- an integer of more than 4300 digits (a ValueError telling the client to call
  `sys.set_int_max_str_digits`): it is read as a float instead, ±inf, so that the field
  holding it is named when it is checked, as for 1e400.
"""

from __future__ import annotations

import json
import sys
from typing import Any

__all__ = ["loads"]

#: Python refuses to convert longer digit strings to int.
_INT_DIGITS = sys.get_int_max_str_digits() or 4300


def loads(text: str | bytes, *, finite: bool = True) -> Any:
    """Decode `text`. With `finite` (request bodies) NaN and Infinity are refused, as
    JSON has neither; without it (third-party data) they are read as Python does, and the
    rows holding them are refused by their own checks."""
    try:
        return json.loads(
            text, parse_constant=_refuse_constant if finite else None, parse_int=_read_int
        )
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", _as_str(text), 0) from None


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


def _read_int(digits: str) -> int | float:
    return int(digits) if len(digits) <= _INT_DIGITS else float(digits)


def _as_str(text: str | bytes) -> str:
    return text if isinstance(text, str) else text.decode("utf-8", "replace")
