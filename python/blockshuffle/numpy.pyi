from typing import Any, Protocol, Sequence, SupportsIndex

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._core import Operator

_Ints = Sequence[SupportsIndex] | NDArray[np.integer[Any]]

__all__ = ['transpose']

class _Transpose(Protocol):
    def __call__(self, a: ArrayLike, axes: _Ints | SupportsIndex | None = ..., *, out: NDArray[Any] | None = ..., threads: SupportsIndex | None = ...) -> NDArray[Any]: ...
    def output_shape(self, shape: Sequence[SupportsIndex], axes: _Ints | SupportsIndex | None = ...) -> tuple[int, ...]: ...
    def operator(self, axes: _Ints | SupportsIndex | None = ...) -> Operator: ...

transpose: _Transpose
