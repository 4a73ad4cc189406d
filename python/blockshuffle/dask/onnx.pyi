from typing import Any, Literal, Protocol, Sequence, SupportsIndex

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._core import Operator

_Ints = Sequence[SupportsIndex] | NDArray[np.integer[Any]]
_Pairs = Sequence[Sequence[SupportsIndex]] | NDArray[np.integer[Any]]

__all__ = ['space_to_depth', 'depth_to_space']

class _SpaceToDepth(Protocol):
    def __call__(self, input: Any, blocksize: SupportsIndex, *, chunks: Any = ...) -> Any: ...
    def output_shape(self, shape: Sequence[SupportsIndex], blocksize: SupportsIndex) -> tuple[int, ...]: ...
    def operator(self, blocksize: SupportsIndex) -> Operator: ...

space_to_depth: _SpaceToDepth

class _DepthToSpace(Protocol):
    def __call__(self, input: Any, blocksize: SupportsIndex, mode: Literal["DCR", "CRD"] = ..., *, chunks: Any = ...) -> Any: ...
    def output_shape(self, shape: Sequence[SupportsIndex], blocksize: SupportsIndex, mode: Literal["DCR", "CRD"] = ...) -> tuple[int, ...]: ...
    def operator(self, blocksize: SupportsIndex, mode: Literal["DCR", "CRD"] = ...) -> Operator: ...

depth_to_space: _DepthToSpace
