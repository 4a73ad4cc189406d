from typing import Any, Mapping, Protocol, Sequence, SupportsIndex

from numpy.typing import ArrayLike, NDArray

from ._core import Operator

__all__ = ['rearrange']

class _Rearrange(Protocol):
    def __call__(self, tensor: ArrayLike, pattern: str, *, out: NDArray[Any] | None = ..., threads: SupportsIndex | None = ..., **axes_lengths: SupportsIndex) -> NDArray[Any]: ...
    def output_shape(self, shape: Sequence[SupportsIndex], pattern: str, **axes_lengths: SupportsIndex) -> tuple[int, ...]: ...
    def operator(self, pattern: str, axes_lengths: Mapping[str, SupportsIndex] | None = ...) -> Operator: ...

rearrange: _Rearrange
