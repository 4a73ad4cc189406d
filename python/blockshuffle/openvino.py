"""OpenVINO's block-rearrangement operators, bit-exact with OpenVINO:
``SpaceToBatch-2``, ``BatchToSpace-2``, ``SpaceToDepth-1``, ``DepthToSpace-1``.

Named and parameterised as OpenVINO's Python opset functions
(``openvino.opset*.space_to_batch(data, block_shape, pads_begin, pads_end)``
...), computed at once on an array instead of building a graph node. The
depth operators take ``(data, block_size, mode)`` here; keywords work in
either order. OpenVINO's ``name=`` is accepted and ignored.

Each also takes ``out=`` and ``threads=`` (see ``blockshuffle``) and has
``.output_shape(shape, ...)``: shape inference without data.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _core
from ._api import operator

__all__ = ["space_to_batch", "batch_to_space", "space_to_depth", "depth_to_space"]


@operator(_core.openvino_space_to_batch)
def space_to_batch(data: Any, block_shape: Any, pads_begin: Any, pads_end: Any, name: Any = None, *,
                   out: np.ndarray | None = None, threads: int | None = None) -> np.ndarray:
    """SpaceToBatch-2: permutes data from the spatial dimensions into the batch.

    Zero-pads each dimension ``i`` of ``data`` by ``pads_begin[i]`` and
    ``pads_end[i]``, splits it into ``(D_i / block_shape[i], block_shape[i])``
    and moves every block factor into the batch, the block positions outermost:
    ``x' = reshape(pad(data), [batch, D_1 / B_1, B_1, ..., D_N / B_N, B_N])``,
    ``x'' = transpose(x', [2, 4, ..., 2N, 0, 1, 3, ..., 2N - 1])``,
    ``y = reshape(x'', [batch * prod(B), D_1 / B_1, ..., D_N / B_N])``.

    Args:
      data: N-D array ``[batch, D_1, D_2, ..., D_{N-1}]``, N >= 2; any dtype.
      block_shape: N integers >= 1; ``block_shape[0]`` must be 1.
      pads_begin: N integers >= 0 (0 for the batch).
      pads_end: N integers >= 0 (0 for the batch); ``block_shape[i]`` must
        divide ``pads_begin[i] + D_i + pads_end[i]``.
      name: ignored (OpenVINO's node name).
      out: optional C-contiguous array of the output's shape and dtype.
      threads: None (every core), 1 (the calling thread) or a number of parts
        (at most 256).

    Returns:
      An array ``[batch * prod(block_shape), (pads_begin[1] + D_1 +
      pads_end[1]) / block_shape[1], ...]`` of the input's dtype.

    Raises:
      ValueError: a parameter breaks OpenVINO's rules (the message names it).
      TypeError: a parameter or ``out`` of the wrong type.

    Example (the specification's)::

      >>> import numpy as np, blockshuffle as bs
      >>> x = np.zeros((2, 6, 10, 3, 3), dtype=np.float32)
      >>> bs.openvino.space_to_batch(x, [1, 2, 4, 3, 1], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0]).shape
      (48, 3, 3, 1, 3)
    """
    return _core.run(_core.openvino_space_to_batch(block_shape, pads_begin, pads_end), data, out, threads)


@operator(_core.openvino_batch_to_space)
def batch_to_space(data: Any, block_shape: Any, crops_begin: Any, crops_end: Any, name: Any = None, *,
                   out: np.ndarray | None = None, threads: int | None = None) -> np.ndarray:
    """BatchToSpace-2: permutes data from the batch into the spatial dimensions.

    The inverse of ``space_to_batch``: the batch splits into
    ``(B_1, ..., B_{N-1}, batch / prod(B))``, each block factor joins its
    spatial dimension (``D_i * B_i``), and ``crops_begin[i]`` /
    ``crops_end[i]`` elements are cut from each end.

    Args:
      data: N-D array ``[batch, D_1, ..., D_{N-1}]``, N >= 2; any dtype;
        ``prod(block_shape)`` must divide ``batch``.
      block_shape: N integers >= 1; ``block_shape[0]`` must be 1.
      crops_begin: N integers >= 0 (0 for the batch).
      crops_end: N integers >= 0 (0 for the batch); ``crops_begin[i] +
        crops_end[i] <= D_i * block_shape[i]``.
      name: ignored (OpenVINO's node name).
      out: optional C-contiguous array of the output's shape and dtype.
      threads: None (every core), 1 (the calling thread) or a number of parts
        (at most 256).

    Returns:
      An array ``[batch / prod(block_shape), D_1 * block_shape[1] -
      crops_begin[1] - crops_end[1], ...]`` of the input's dtype.

    Raises:
      ValueError: a parameter breaks OpenVINO's rules (the message names it).
      TypeError: a parameter or ``out`` of the wrong type.

    Example (the specification's)::

      >>> import numpy as np, blockshuffle as bs
      >>> x = np.zeros((48, 3, 3, 1, 3), dtype=np.float32)
      >>> bs.openvino.batch_to_space(x, [1, 2, 4, 3, 1], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0]).shape
      (2, 6, 10, 3, 3)
    """
    return _core.run(_core.openvino_batch_to_space(block_shape, crops_begin, crops_end), data, out, threads)


@operator(_core.openvino_space_to_depth)
def space_to_depth(data: Any, block_size: Any, mode: str, name: Any = None, *,
                   out: np.ndarray | None = None, threads: int | None = None) -> np.ndarray:
    """SpaceToDepth-1: rearranges blocks of spatial data into the depth.

    ``data`` is ``[N, C, D_1, ..., D_K]``; each ``D_i`` splits into
    ``(D_i / block_size, block_size)`` and the K block factors join the
    channel: ``blocks_first`` puts them before the channel (output channel
    ``(b_1, ..., b_K, c)``), ``depth_first`` after it (``(c, b_1, ..., b_K)``).

    Args:
      data: array of rank >= 3 ``[N, C, D_1, ..., D_K]``; any dtype.
      block_size: an integer >= 1 that divides every ``D_i``.
      mode: ``"blocks_first"`` or ``"depth_first"``.
      name: ignored (OpenVINO's node name).
      out: optional C-contiguous array of the output's shape and dtype.
      threads: None (every core), 1 (the calling thread) or a number of parts
        (at most 256).

    Returns:
      An array ``[N, C * block_size ** K, D_1 / block_size, ...,
      D_K / block_size]`` of the input's dtype.

    Raises:
      ValueError: a parameter breaks OpenVINO's rules (the message names it).
      TypeError: a parameter or ``out`` of the wrong type.

    Example::

      >>> import numpy as np, blockshuffle as bs
      >>> x = np.arange(8).reshape(1, 2, 2, 2)
      >>> bs.openvino.space_to_depth(x, 2, "depth_first").ravel().tolist()
      [0, 1, 2, 3, 4, 5, 6, 7]
      >>> bs.openvino.space_to_depth(x, 2, "blocks_first").ravel().tolist()
      [0, 4, 1, 5, 2, 6, 3, 7]
    """
    return _core.run(_core.openvino_space_to_depth(block_size, mode), data, out, threads)


@operator(_core.openvino_depth_to_space)
def depth_to_space(data: Any, block_size: Any, mode: str, name: Any = None, *,
                   out: np.ndarray | None = None, threads: int | None = None) -> np.ndarray:
    """DepthToSpace-1: rearranges data from the depth into blocks of spatial data.

    The inverse of ``space_to_depth``: the channel of ``[N, C, D_1, ...,
    D_K]`` splits into ``(block_size, ..., block_size, C / block_size ** K)``
    (``blocks_first``) or ``(C / block_size ** K, block_size, ...)``
    (``depth_first``), and each block factor joins its spatial dimension.

    Args:
      data: array of rank >= 3 ``[N, C, D_1, ..., D_K]``; any dtype.
      block_size: an integer >= 1; ``block_size ** K`` must divide ``C``.
      mode: ``"blocks_first"`` or ``"depth_first"``.
      name: ignored (OpenVINO's node name).
      out: optional C-contiguous array of the output's shape and dtype.
      threads: None (every core), 1 (the calling thread) or a number of parts
        (at most 256).

    Returns:
      An array ``[N, C / block_size ** K, D_1 * block_size, ...,
      D_K * block_size]`` of the input's dtype.

    Raises:
      ValueError: a parameter breaks OpenVINO's rules (the message names it).
      TypeError: a parameter or ``out`` of the wrong type.

    Example::

      >>> import numpy as np, blockshuffle as bs
      >>> x = np.arange(8).reshape(1, 8, 1, 1)
      >>> bs.openvino.depth_to_space(x, 2, "blocks_first")[0].tolist()
      [[[0, 2], [4, 6]], [[1, 3], [5, 7]]]
    """
    return _core.run(_core.openvino_depth_to_space(block_size, mode), data, out, threads)
