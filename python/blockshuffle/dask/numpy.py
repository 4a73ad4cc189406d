"""``blockshuffle.numpy``'s functions on Dask arrays (see ``blockshuffle.dask``)."""

from .. import numpy as _memory
from ._wrap import dask_version as _dask_version

__all__ = list(_memory.__all__)

for _name in __all__:
    globals()[_name] = _dask_version(getattr(_memory, _name), __name__)
del _name
