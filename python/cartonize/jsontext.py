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

A key named twice in one object (`{"sku": "A", "sku": "B"}`) is kept silently by Python
(the last value). `loads(..., repeats="mark")` tells: an object that repeats a key with
different values, or holds such an object at any depth, comes back as a `RepeatedKeys`
(a dict, the last value kept, `own` naming its conflicting keys and their values), and
`repeated_key_paths` lists where they are. Repeats of one identical value pass unmarked.
Finding them takes a Python hook per object (a fifth slower on large documents), so the
compiled scan `_core.json_repeats_a_key` first tells whether any object repeats a key at
all; only then is the text decoded again with the hook. `repeats_details` says where, for
a 422's `details`.

Read leniently with repeats="mark", two keys that differ only in their lone surrogates
(`"\ud800"` and `"\ud801"`) both become U+FFFD: they are one key then, named twice, and
marked as any repeat when their values differ (with "last" the last value is kept, as
for any repeat).
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any, Literal

from cartonize import _core

__all__ = [
    "JsonTextError",
    "RepeatedKeys",
    "holds_repeats",
    "loads",
    "repeat_reason",
    "repeated_key_paths",
    "repeats_details",
    "show_value",
]

#: Python refuses to convert longer digit strings to int.
_INT_DIGITS = sys.get_int_max_str_digits() or 4300


class JsonTextError(json.JSONDecodeError):
    """Text that parses but cannot be taken; no position, so the message is just `msg`."""

    def __init__(self, msg: str, doc: str) -> None:
        super().__init__(msg, doc, 0)
        self.args = (msg,)

    def __str__(self) -> str:
        return self.msg


class RepeatedKeys(dict[str, Any]):
    """An object that names a key more than once with different values (its `own`
    repeats), or holds such an object at any depth. The last value of each key is kept,
    as in any dict Python's json makes."""

    #: Each conflicting key of this object with its distinct values, in text order.
    own: dict[str, list[Any]]


def loads(
    text: str | bytes, *, strict: bool = True, repeats: Literal["last", "mark"] = "last"
) -> Any:
    """Decode `text`. `strict` (request bodies) refuses NaN and Infinity, which JSON does
    not have, and lone surrogates. Without it (third-party data, sync payloads) NaN and
    Infinity are read as Python does, the rows holding them refused by their own checks,
    and a lone surrogate becomes U+FFFD.

    `repeats`: "last" keeps the last value of a key named twice, as Python does; "mark"
    returns objects with conflicting repeats (and those holding them) as `RepeatedKeys`."""
    constant = _refuse_constant if strict else None
    raw = text
    hook: Callable[[list[tuple[str, Any]]], dict[str, Any]] | None = None
    if repeats == "mark":
        if isinstance(text, bytes):
            # As json.loads decodes bytes (UTF-8, or UTF-16/32 by their byte pattern).
            text = text.decode(json.detect_encoding(text), "surrogatepass")
        if _may_repeat(text):
            hook = _mark_repeats
            if not strict and _may_hold_surrogate(text):
                # Keys are compared as they will be kept: with U+FFFD for lone surrogates.
                hook = _mark_repeats_replacing
    try:
        value = json.loads(text, parse_constant=constant, object_pairs_hook=hook)
    except RecursionError:
        raise JsonTextError("nested too deeply", _as_str(text)) from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:
        if not str(exc).startswith("Exceeds the limit"):
            raise
        # Read again with a hook for every integer: slower, so only when needed.
        value = json.loads(
            text, parse_constant=constant, parse_int=_read_int, object_pairs_hook=hook
        )
    if _may_hold_surrogate(raw):
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


def _may_hold_surrogate(text: str | bytes) -> bool:
    """Whether a string decoded from `text` may hold a lone surrogate."""
    raw = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    return (b"\\u" in raw or b"\xed" in raw) and _MAY_HOLD_SURROGATE.search(raw) is not None


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


def _may_repeat(text: str) -> bool:
    """Whether some object of `text` may name a key twice: the compiled scan's answer, or
    True when it cannot tell (text it does not expect, lone surrogates, an engine build
    without the scan)."""
    scan: Callable[[str], bool | None] | None = getattr(_core, "json_repeats_a_key", None)
    if scan is None:
        return True
    try:
        return scan(text) is not False
    except ValueError:  # UnicodeEncodeError: a lone surrogate has no UTF-8
        return True


def _mark_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The object_pairs_hook of "mark": a dict, or a RepeatedKeys when it (or an object
    inside it) repeats a key with different values."""
    obj = dict(pairs)
    own: dict[str, list[Any]] = {}
    if len(obj) != len(pairs):
        seen: dict[str, list[Any]] = {}
        for key, value in pairs:
            values = seen.setdefault(key, [])
            if not any(_same(value, earlier) for earlier in values):
                values.append(value)
        own = {key: values for key, values in seen.items() if len(values) > 1}
    if not own and not any(_holds_repeats(value) for value in obj.values()):
        return obj
    marked = RepeatedKeys(obj)
    marked.own = own
    return marked


def _mark_repeats_replacing(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`_mark_repeats` on keys with U+FFFD for each lone surrogate (values are replaced
    after decoding; those a repeat dropped, kept in `own`, here)."""
    obj = _mark_repeats([(_SURROGATE.sub("\ufffd", key), value) for key, value in pairs])
    if type(obj) is RepeatedKeys:
        obj.own = {k: [_replace_lone_surrogates(v) for v in vs] for k, vs in obj.own.items()}
    return obj


def holds_repeats(value: Any) -> bool:
    """Whether `value` (decoded with repeats="mark") repeats a key with different values
    anywhere: cheap on a value without repeats (a look at its top)."""
    return _holds_repeats(value)


def _holds_repeats(value: Any) -> bool:
    if type(value) is RepeatedKeys:
        return True
    return type(value) is list and any(_holds_repeats(item) for item in value)


def _same(a: Any, b: Any) -> bool:
    """Whether two decoded JSON values are the same JSON value: equal numbers (4 and 4.0,
    as JSON has one number type; NaN is NaN), equal strings, the same literal (true is
    not 1, as Python's == would say), arrays and objects equal member by member."""
    if type(a) is not type(b):
        numbers = (int, float)
        return (
            type(a) in numbers and type(b) in numbers and a == b  # bool is not a number here
        )
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def repeated_key_paths(value: Any, root: str = "") -> list[tuple[str, list[Any]]]:
    """Where `value` (decoded with repeats="mark") repeats a key with different values:
    (path, the distinct values) for each, paths in dot notation with [i] for array items
    (`payload[2].size.h`) under `root`, in text order."""
    found: list[tuple[str, list[Any]]] = []
    stack: list[tuple[str, Any]] = [(root, value)]
    while stack:
        path, node = stack.pop()
        children: list[tuple[str, Any]] = []
        if type(node) is RepeatedKeys:
            for key, values in node.own.items():
                found.append((_join(path, key), values))
            children = [(_join(path, k), v) for k, v in node.items()]
        elif type(node) is list:
            children = [(f"{path}[{i}]", item) for i, item in enumerate(node)]
        stack.extend((p, child) for p, child in reversed(children) if _holds_repeats(child))
    return found


def repeat_reason(path: str, values: list[Any], *, show: bool = True) -> str:
    """`"sku" is named more than once, with different values ("A", "B")`; without `show`
    (a secret's path) the values are left out."""
    reason = f"{json.dumps(path)} is named more than once, with different values"
    if show:
        shown = ", ".join(show_value(v) for v in values[:3]) + (", ..." if len(values) > 3 else "")
        reason += f" ({shown})"
    if "\ufffd" in path:
        reason += (
            " (a lone surrogate in a key is read as U+FFFD, so keys that differ only in "
            "their lone surrogates are one key)"
        )
    return reason


def repeats_details(
    value: Any,
    root: str = "",
    *,
    withheld: frozenset[str] = frozenset(),
    show_values: bool = True,
) -> str | None:
    """Where `value` (decoded with repeats="mark") repeats a key with different values,
    as a 422's `details` begins (the first 5 key paths, each with its values unless the
    path lies under a `withheld` top-level key or `show_values` is False, then how many
    more), or None when it does not."""
    if not _holds_repeats(value):
        return None
    found = repeated_key_paths(value, root)
    shown = "; ".join(
        repeat_reason(path, values, show=show_values and _top_key(path) not in withheld)
        for path, values in found[:5]
    )
    return shown + (f"; and {len(found) - 5} more" if len(found) > 5 else "")


def _top_key(path: str) -> str:
    return path.split(".", 1)[0].split("[", 1)[0]


def show_value(value: Any) -> str:
    """A JSON value as an error message quotes it: objects and arrays by their kind,
    others as JSON cut to 40 characters."""
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "an array"
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


def _read_int(digits: str) -> int | float:
    return int(digits) if len(digits) <= _INT_DIGITS else float(digits)


def _as_str(text: str | bytes) -> str:
    return text if isinstance(text, str) else text.decode("utf-8", "replace")
