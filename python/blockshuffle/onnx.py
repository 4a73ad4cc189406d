"""ONNX's ``SpaceToDepth-13`` and ``DepthToSpace-13`` (DCR and CRD),
bit-exact with ONNX Runtime, computed at once on an array. Parameters are
named as the operators' attributes (``blocksize``, ``mode``).

Each also takes ``out=`` and ``threads=`` (see ``blockshuffle``) and has
``.output_shape(shape, ...)``: shape inference without data.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _core
from ._api import operator

__all__ = ["space_to_depth", "depth_to_space"]


@operator(_core.onnx_space_to_depth)
def space_to_depth(input: Any, blocksize: Any, *,
                   out: np.ndarray | None = None, threads: int | None = None) -> np.ndarray:
    """SpaceToDepth-13: rearranges blocks of spatial data into depth.

    Outputs a copy of the input tensor where values from the height and width
    dimensions are moved to the depth dimension: the channel of the output
    is ``(by * blocksize + bx) * C + c``.

    Args:
      input: 4-D array ``[N, C, H, W]``; any dtype.
      blocksize: an integer >= 1 that divides H and W.
      out: optional C-contiguous array of the output's shape and dtype.
      threads: None (every core), 1 (the calling thread) or a number of parts
        (at most 256).

    Returns:
      An array ``[N, C * blocksize * blocksize, H / blocksize, W / blocksize]``.

    Raises:
      ValueError: a parameter breaks ONNX's rules (the message names it).
      TypeError: a parameter or ``out`` of the wrong type.

    Example::

      >>> import numpy as np, blockshuffle as bs
      >>> x = np.arange(4, dtype=np.uint16).reshape(1, 1, 2, 2)
      >>> bs.onnx.space_to_depth(x, blocksize=2).ravel().tolist()
      [0, 1, 2, 3]
      >>> bs.onnx.space_to_depth.output_shape((1, 3, 4, 6), 2)
      (1, 12, 2, 3)
    """
    return _core.run(_core.onnx_space_to_depth(blocksize), input, out, threads)


@operator(_core.onnx_depth_to_space)
def depth_to_space(input: Any, blocksize: Any, mode: str = "DCR", *,
                   out: np.ndarray | None = None, threads: int | None = None) -> np.ndarray:
    """DepthToSpace-13: rearranges data from depth into blocks of spatial data.

    The reverse transformation of SpaceToDepth. In the default DCR mode the
    input channel is ``(by * blocksize + bx) * C' + c`` (depth, column, row);
    in CRD mode it is ``(c * blocksize + by) * blocksize + bx``.

    Args:
      input: 4-D array ``[N, C, H, W]``; any dtype.
      blocksize: an integer >= 1; ``blocksize ** 2`` must divide C.
      mode: ``"DCR"`` (default) or ``"CRD"``.
      out: optional C-contiguous array of the output's shape and dtype.
      threads: None (every core), 1 (the calling thread) or a number of parts
        (at most 256).

    Returns:
      An array ``[N, C / (blocksize * blocksize), H * blocksize, W * blocksize]``.

    Raises:
      ValueError: a parameter breaks ONNX's rules (the message names it).
      TypeError: a parameter or ``out`` of the wrong type.

    Example (the ONNX operator page's DCR example)::

      >>> import numpy as np, blockshuffle as bs
      >>> x = np.arange(48, dtype=np.float32).reshape(1, 8, 2, 3)
      >>> y = bs.onnx.depth_to_space(x, blocksize=2, mode="DCR")
      >>> y.shape, y[0, 0, 0].tolist()
      ((1, 2, 4, 6), [0.0, 12.0, 1.0, 13.0, 2.0, 14.0])
    """
    return _core.run(_core.onnx_depth_to_space(blocksize, mode), input, out, threads)
