"""einops' ``einops.rearrange``, bit-exact with einops 0.8, on numpy arrays
of any dtype and strides, into a new C-contiguous array.

Takes ``out=`` and ``threads=`` (see ``blockshuffle``) and has
``.output_shape(shape, pattern, **axes_lengths)``: shape inference without
data. (Axes named ``out`` or ``threads`` cannot be given lengths here.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _core
from ._api import operator

__all__ = ["rearrange"]


@operator(_core.einops_rearrange)
def rearrange(tensor: Any, pattern: str, *, out: np.ndarray | None = None, threads: int | None = None,
              **axes_lengths: Any) -> np.ndarray:
    """Reorders the axes of a tensor as ``pattern`` says: splits each input
    axis into the elementary axes of its composition (the left side),
    permutes them, and merges them into the output's axes (the right
    side), as ``einops.rearrange(tensor, pattern, **axes_lengths)``.

    The pattern is einops 0.8's: named axes, parenthesised compositions
    (``(h p1)``), one ``...`` a side for any number of axes, and the unit
    axes ``1`` and ``()``. Every name appears once on each side.

    Args:
      tensor: array of any dtype (any strides) whose rank matches the
        pattern's left side.
      pattern: e.g. ``'b (h p1) (w p2) c -> b h w (p1 p2 c)'``.
      out: optional C-contiguous array of the output's shape and dtype.
      threads: None (every core), 1 (the calling thread) or a number of parts
        (at most 256).
      **axes_lengths: lengths of elementary axes (``p1=2``): each input
        composition may leave one of its names to be inferred.

    Returns:
      An array of the shape the right side gives, of the input's dtype.

    Raises:
      ValueError: a pattern, a length or an input shape that einops rejects
        (the message says why).
      TypeError: a parameter or ``out`` of the wrong type.

    Example::

      >>> import numpy as np, blockshuffle as bs
      >>> x = np.arange(16, dtype=np.uint8).reshape(1, 4, 4, 1)
      >>> y = bs.einops.rearrange(x, "b (h p1) (w p2) c -> b h w (p1 p2 c)", p1=2, p2=2)
      >>> y.shape, y[0, 0, 0].tolist()
      ((1, 2, 2, 4), [0, 1, 4, 5])
      >>> bs.einops.rearrange.output_shape((2, 3, 4, 5), "b ... c -> c (b ...)")
      (5, 24)
    """
    return _core.run(_core.einops_rearrange(pattern, axes_lengths), tensor, out, threads)
