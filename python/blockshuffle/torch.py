"""PyTorch's ``torch.nn.functional.pixel_shuffle`` and ``pixel_unshuffle``,
bit-exact with PyTorch, on numpy arrays of any dtype.

Each also takes ``out=`` and ``threads=`` (see ``blockshuffle``) and has
``.output_shape(shape, ...)``: shape inference without data.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _core
from ._api import operator

__all__ = ["pixel_shuffle", "pixel_unshuffle"]


@operator(_core.torch_pixel_shuffle)
def pixel_shuffle(input: Any, upscale_factor: Any, *,
                  out: np.ndarray | None = None, threads: int | None = None) -> np.ndarray:
    """Rearranges elements in a tensor of shape ``(*, C * r^2, H, W)`` to a
    tensor of shape ``(*, C, H * r, W * r)``, where r is the ``upscale_factor``.

    Input channel ``(c * r + i) * r + j`` goes to row ``h * r + i``, column
    ``w * r + j`` of channel ``c`` (sub-pixel convolution's upsampling).

    Args:
      input: array of rank >= 3 ``(*, C * r^2, H, W)``; any dtype.
      upscale_factor: r, an integer >= 1; ``r^2`` must divide the channels.
      out: optional C-contiguous array of the output's shape and dtype.
      threads: None (every core), 1 (the calling thread) or a number of parts
        (at most 256).

    Returns:
      An array ``(*, C, H * r, W * r)`` of the input's dtype.

    Raises:
      ValueError: a parameter breaks PyTorch's rules (the message names it).
      TypeError: a parameter or ``out`` of the wrong type.

    Example::

      >>> import numpy as np, blockshuffle as bs
      >>> x = np.random.rand(1, 9, 4, 4).astype(np.float32)
      >>> bs.torch.pixel_shuffle(x, 3).shape
      (1, 1, 12, 12)
      >>> bs.torch.pixel_shuffle.output_shape((2, 5, 18, 7, 9), 3)
      (2, 5, 2, 21, 27)
    """
    return _core.run(_core.torch_pixel_shuffle(upscale_factor), input, out, threads)


@operator(_core.torch_pixel_unshuffle)
def pixel_unshuffle(input: Any, downscale_factor: Any, *,
                    out: np.ndarray | None = None, threads: int | None = None) -> np.ndarray:
    """Reverses the PixelShuffle operation by rearranging elements in a
    tensor of shape ``(*, C, H * r, W * r)`` to a tensor of shape
    ``(*, C * r^2, H, W)``, where r is the ``downscale_factor``.

    Args:
      input: array of rank >= 3 ``(*, C, H * r, W * r)``; any dtype.
      downscale_factor: r, an integer >= 1 that divides H and W.
      out: optional C-contiguous array of the output's shape and dtype.
      threads: None (every core), 1 (the calling thread) or a number of parts
        (at most 256).

    Returns:
      An array ``(*, C * r^2, H, W)`` of the input's dtype.

    Raises:
      ValueError: a parameter breaks PyTorch's rules (the message names it).
      TypeError: a parameter or ``out`` of the wrong type.

    Example::

      >>> import numpy as np, blockshuffle as bs
      >>> x = np.arange(16, dtype=np.uint8).reshape(1, 1, 4, 4)
      >>> bs.torch.pixel_unshuffle(x, 2)[0, :, 0, 0].tolist()
      [0, 1, 4, 5]
    """
    return _core.run(_core.torch_pixel_unshuffle(downscale_factor), input, out, threads)
