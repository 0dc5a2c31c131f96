"""Type stubs of the compiled engine binding (rust/cartonize-py)."""

__all__ = [
    "BUILT",
    "DecodeError",
    "EngineError",
    "InvalidInput",
    "__version__",
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
