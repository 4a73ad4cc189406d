from typing import Any, Mapping, Protocol, Sequence, SupportsIndex

from .._core import Operator

__all__ = ['rearrange']

class _Rearrange(Protocol):
    def __call__(self, tensor: Any, pattern: str, *, chunks: Any = ..., **axes_lengths: SupportsIndex) -> Any: ...
    def output_shape(self, shape: Sequence[SupportsIndex], pattern: str, **axes_lengths: SupportsIndex) -> tuple[int, ...]: ...
    def operator(self, pattern: str, axes_lengths: Mapping[str, SupportsIndex] | None = ...) -> Operator: ...

rearrange: _Rearrange
