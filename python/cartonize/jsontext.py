"""JSON text from outside the service (request bodies, form fields and parameters,
headers templates, third-party responses), decoded so that every way it can fail is a
ValueError the caller already answers: malformed text raises `json.JSONDecodeError`,
and so do the two cases Python's `json` raised otherwise (a 500 where a caller caught
only ValueError or JSONDecodeError):

- nesting deeper than the interpreter's recursion limit (RecursionError);
- an integer of more than 4300 digits (a ValueError telling the client to call
  `sys.set_int_max_str_digits`): it is read as a float instead, ±inf, so that the field
  holding it is named when it is checked, as for 1e400.

A lone surrogate in a string (`"\\ud800"`, which the JSON grammar allows but which is no
Unicode text) made every later UTF-8 encoding raise: storing the pack, writing a row,
rendering a picture (500s). Request bodies refuse it; third-party data and sync payloads,
read leniently as with NaN, get U+FFFD in its place.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

__all__ = ["JsonTextError", "loads"]

#: Python refuses to convert longer digit strings to int.
_INT_DIGITS = sys.get_int_max_str_digits() or 4300


class JsonTextError(json.JSONDecodeError):
    """Text that parses but cannot be taken; no position, so the message is just `msg`."""

    def __init__(self, msg: str, doc: str) -> None:
        super().__init__(msg, doc, 0)
        self.args = (msg,)

    def __str__(self) -> str:
        return self.msg


def loads(text: str | bytes, *, strict: bool = True) -> Any:
    """Decode `text`. `strict` (request bodies) refuses NaN and Infinity, which JSON does
    not have, and lone surrogates. Without it (third-party data, sync payloads) NaN and
    Infinity are read as Python does, the rows holding them refused by their own checks,
    and a lone surrogate becomes U+FFFD."""
    constant = _refuse_constant if strict else None
    try:
        value = json.loads(text, parse_constant=constant)
    except RecursionError:
        raise JsonTextError("nested too deeply", _as_str(text)) from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:
        if not str(exc).startswith("Exceeds the limit"):
            raise
        # Read again with a hook for every integer: slower, so only when needed.
        value = json.loads(text, parse_constant=constant, parse_int=_read_int)
    raw = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    if (b"\\u" in raw or b"\xed" in raw) and _MAY_HOLD_SURROGATE.search(raw):
        if strict:
            _refuse_lone_surrogates(value, _as_str(text))
        else:
            value = _replace_lone_surrogates(value)
    return value


#: An escaped surrogate, or one encoded as UTF-8 (json decodes bytes with "surrogatepass"):
#: only then can a decoded string hold a lone one.
_MAY_HOLD_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")
#: A surrogate left in a decoded string: pairs were combined, so it is a lone one.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _strings(value: Any) -> list[str]:
    """Every string in `value`, keys included (iteratively: `value` may nest deeply)."""
    found: list[str] = []
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            found.append(node)
        elif isinstance(node, dict):
            found.extend(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def _refuse_lone_surrogates(value: Any, doc: str) -> None:
    for text in _strings(value):
        if (lone := _SURROGATE.search(text)) is not None:
            raise JsonTextError(
                f"a string holds a lone surrogate (\\u{ord(lone.group()):04x}), which is "
                "not Unicode text",
                doc,
            )


def _replace_lone_surrogates(value: Any) -> Any:
    """`value` with U+FFFD for each lone surrogate in its strings and keys."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            items = list(node.items())
            node.clear()
            for key, child in items:
                node[_SURROGATE.sub("\ufffd", key)] = (
                    _SURROGATE.sub("\ufffd", child) if isinstance(child, str) else child
                )
                if isinstance(child, dict | list):
                    stack.append(child)
        elif isinstance(node, list):
            for i, child in enumerate(node):
                if isinstance(child, str):
                    node[i] = _SURROGATE.sub("\ufffd", child)
                elif isinstance(child, dict | list):
                    stack.append(child)
    return value


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


def _read_int(digits: str) -> int | float:
    return int(digits) if len(digits) <= _INT_DIGITS else float(digits)


def _as_str(text: str | bytes) -> str:
    return text if isinstance(text, str) else text.decode("utf-8", "replace")
