"""Type stubs of the compiled engine binding (rust/cartonize-py)."""

__all__ = [
    "BUILT",
    "DecodeError",
    "EngineError",
    "InvalidInput",
    "__version__",
    "json_repeats_a_key",
    "json_texts",
    "pack_json",
    "render_json",
]

__version__: str
BUILT: str

class EngineError(ValueError): ...
class DecodeError(EngineError): ...
class InvalidInput(EngineError): ...

def pack_json(input: str) -> str:
    """Pack an engine input given as JSON text; returns the output as JSON text."""

def render_json(input: str) -> str:
    """Render pictures of packed boxes from a render input given as JSON text; returns the
    output (SVG or base64 PNG per box, depth orders) as JSON text."""

def json_repeats_a_key(text: str) -> bool | None:
    """Whether JSON text (as json.loads accepts it) names a key twice in one object; None
    when the scan cannot tell (the caller then checks the slow way)."""

def json_texts(value: object, skip: list[str]) -> tuple[str, str] | None:
    """`json.dumps(value, ensure_ascii=False, separators=(",", ":"))` and, with
    `sort_keys=True, allow_nan=False` and the top-level keys in `skip` left out, its
    canonical text, in one pass; None when `value` holds anything but exact JSON types
    or a float that is not finite (the caller then uses json)."""
