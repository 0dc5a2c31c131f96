"""cartonize: which boxes to use and exactly where every item goes."""

from cartonize._core import __version__
from cartonize.models import PackRequest, PackResponse
from cartonize.packing import pack

__all__ = ["PackRequest", "PackResponse", "__version__", "pack"]
