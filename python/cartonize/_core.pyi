"""Type stubs of the compiled engine binding (rust/cartonize-py)."""

__all__ = ["BUILT", "DecodeError", "EngineError", "InvalidInput", "__version__", "pack_json"]

__version__: str
BUILT: str

class EngineError(ValueError): ...
class DecodeError(EngineError): ...
class InvalidInput(EngineError): ...

def pack_json(input: str) -> str:
    """Pack an engine input given as JSON text; returns the output as JSON text."""
