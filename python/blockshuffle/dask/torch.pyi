from typing import Any, Literal, Protocol, Sequence, SupportsIndex

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._core import Operator

_Ints = Sequence[SupportsIndex] | NDArray[np.integer[Any]]
_Pairs = Sequence[Sequence[SupportsIndex]] | NDArray[np.integer[Any]]

__all__ = ['pixel_shuffle', 'pixel_unshuffle']

class _PixelShuffle(Protocol):
    def __call__(self, input: Any, upscale_factor: SupportsIndex, *, chunks: Any = ...) -> Any: ...
    def output_shape(self, shape: Sequence[SupportsIndex], upscale_factor: SupportsIndex) -> tuple[int, ...]: ...
    def operator(self, upscale_factor: SupportsIndex) -> Operator: ...

pixel_shuffle: _PixelShuffle

class _PixelUnshuffle(Protocol):
    def __call__(self, input: Any, downscale_factor: SupportsIndex, *, chunks: Any = ...) -> Any: ...
    def output_shape(self, shape: Sequence[SupportsIndex], downscale_factor: SupportsIndex) -> tuple[int, ...]: ...
    def operator(self, downscale_factor: SupportsIndex) -> Operator: ...

pixel_unshuffle: _PixelUnshuffle
