"""TensorFlow's block-rearrangement operators, bit-exact with TensorFlow.

Named and parameterised as TensorFlow's Python API has them:
``tf.space_to_batch_nd``, ``tf.batch_to_space_nd``, the v1
``tf.compat.v1.space_to_batch`` / ``batch_to_space`` (4-D NHWC, a scalar
``block_size``), ``tf.nn.space_to_depth`` / ``tf.nn.depth_to_space`` (NHWC,
NCHW, NCHW_VECT_C). TensorFlow's ``name=`` is accepted and ignored.

Each also takes ``out=`` (a C-contiguous array of the output's shape and
dtype to write into) and ``threads=`` (None: every core for outputs of 1 MiB
and more, 1: the calling thread only, n: n parts), and has
``.output_shape(shape, ...)``: shape inference without data.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _core
from ._api import operator

__all__ = [
    "space_to_batch_nd",
    "batch_to_space_nd",
    "space_to_batch",
    "batch_to_space",
    "space_to_depth",
    "depth_to_space",
]


@operator(_core.tf_space_to_batch_nd)
def space_to_batch_nd(input: Any, block_shape: Any, paddings: Any, name: Any = None, *,
                      out: np.ndarray | None = None, threads: int | None = None) -> np.ndarray:
    """SpaceToBatch for N-D tensors of type T.

    Zero-pads the "spatial" dimensions ``[1, ..., M]`` of ``input`` by
    ``paddings``, then divides them into a grid of blocks of shape
    ``block_shape`` and interleaves these blocks with the "batch" dimension
    (0), so that in the output the spatial dimensions ``[1, ..., M]`` are the
    positions within the grid and the batch dimension combines the position
    within a spatial block with the original batch position.

    Args:
      input: N-D array of shape ``input_shape = [batch] + spatial_shape +
        remaining_shape``, where ``spatial_shape`` has M dimensions; any dtype.
      block_shape: 1-D, M integers, all >= 1.
      paddings: shape ``[M, 2]``, all >= 0. ``paddings[i] = [pad_start,
        pad_end]`` for input dimension ``i + 1``; ``block_shape[i]`` must
        divide ``input_shape[i + 1] + pad_start + pad_end``.
      name: ignored (TensorFlow's op name).
      out: optional C-contiguous array of the output's shape and dtype.
      threads: None (every core), 1 (the calling thread) or a number of parts
        (at most 256).

    Returns:
      An array of the input's dtype and shape ``[batch * prod(block_shape)] +
      [padded_shape[i] / block_shape[i] for i in 1..M] + remaining_shape``;
      batch index ``((b_1 * B_2 + b_2) ... ) * batch + n`` for the block
      position ``(b_1, ..., b_M)``.

    Raises:
      ValueError: a parameter breaks TensorFlow's rules (the message names it).
      TypeError: a parameter or ``out`` of the wrong type.

    Example (TensorFlow's example 3)::

      >>> import numpy as np, blockshuffle as bs
      >>> x = np.arange(1, 17, dtype=np.float32).reshape(1, 4, 4, 1)
      >>> y = bs.tf.space_to_batch_nd(x, block_shape=[2, 2], paddings=[[0, 0], [0, 0]])
      >>> y.shape
      (4, 2, 2, 1)
      >>> y[:, :, :, 0].tolist()[0]
      [[1.0, 3.0], [9.0, 11.0]]
      >>> bs.tf.space_to_batch_nd.output_shape((1, 4, 4, 1), [2, 2], [[0, 0], [0, 0]])
      (4, 2, 2, 1)
    """
    return _core.run(_core.tf_space_to_batch_nd(block_shape, paddings), input, out, threads)


@operator(_core.tf_batch_to_space_nd)
def batch_to_space_nd(input: Any, block_shape: Any, crops: Any, name: Any = None, *,
                      out: np.ndarray | None = None, threads: int | None = None) -> np.ndarray:
    """BatchToSpace for N-D tensors of type T.

    Reshapes the "batch" dimension 0 into ``M + 1`` dimensions of shape
    ``block_shape + [batch]``, interleaves these blocks back into the grid
    defined by the spatial dimensions ``[1, ..., M]``, to obtain a result with
    the same rank as the input, then crops the spatial dimensions by
    ``crops``. The inverse of ``space_to_batch_nd``.

    Args:
      input: N-D array of shape ``[batch] + spatial_shape + remaining_shape``,
        where ``spatial_shape`` has M dimensions; any dtype.
      block_shape: 1-D, M integers, all >= 1; ``prod(block_shape)`` must
        divide ``batch``.
      crops: shape ``[M, 2]``, all >= 0. ``crops[i] = [crop_start,
        crop_end]`` for input dimension ``i + 1``; ``crop_start + crop_end <=
        block_shape[i] * input_shape[i + 1]``.
      name: ignored (TensorFlow's op name).
      out: optional C-contiguous array of the output's shape and dtype.
      threads: None (every core), 1 (the calling thread) or a number of parts
        (at most 256).

    Returns:
      An array of the input's dtype and shape ``[batch / prod(block_shape)] +
      [input_shape[i + 1] * block_shape[i] - crop_start[i] - crop_end[i]] +
      remaining_shape``.

    Raises:
      ValueError: a parameter breaks TensorFlow's rules (the message names it).
      TypeError: a parameter or ``out`` of the wrong type.

    Example (TensorFlow's example 1)::

      >>> import numpy as np, blockshuffle as bs
      >>> x = np.array([[[[1]]], [[[2]]], [[[3]]], [[[4]]]])
      >>> bs.tf.batch_to_space_nd(x, block_shape=[2, 2], crops=[[0, 0], [0, 0]]).ravel().tolist()
      [1, 2, 3, 4]
      >>> bs.tf.batch_to_space_nd.output_shape((4, 1, 1, 1), [2, 2], [[0, 0], [0, 1]])
      (1, 2, 1, 1)
    """
    return _core.run(_core.tf_batch_to_space_nd(block_shape, crops), input, out, threads)


@operator(_core.tf_space_to_batch)
def space_to_batch(input: Any, paddings: Any, block_size: Any, name: Any = None, *,
                   out: np.ndarray | None = None, threads: int | None = None) -> np.ndarray:
    """SpaceToBatch for 4-D tensors of type T (``tf.compat.v1.space_to_batch``).

    Zero-pads and then rearranges (permutes) blocks of spatial data into
    batch: ``space_to_batch_nd`` of a 4-D NHWC input with ``block_shape =
    [block_size, block_size]``.

    Args:
      input: 4-D array ``[batch, height, width, depth]``; any dtype.
      paddings: shape ``[2, 2]``, all >= 0: ``[[pad_top, pad_bottom],
        [pad_left, pad_right]]``; ``block_size`` must divide the padded
        height and width.
      block_size: an integer >= 1.
      name: ignored (TensorFlow's op name).
      out: optional C-contiguous array of the output's shape and dtype.
      threads: None (every core), 1 (the calling thread) or a number of parts
        (at most 256).

    Returns:
      An array ``[batch * block_size ** 2, padded_height / block_size,
      padded_width / block_size, depth]`` of the input's dtype.

    Raises:
      ValueError: a parameter breaks TensorFlow's rules (the message names it).
      TypeError: a parameter or ``out`` of the wrong type.

    Example::

      >>> import numpy as np, blockshuffle as bs
      >>> x = np.arange(1, 13, dtype=np.int32).reshape(1, 2, 2, 3)
      >>> bs.tf.space_to_batch(x, paddings=[[0, 0], [0, 0]], block_size=2).shape
      (4, 1, 1, 3)
      >>> bs.tf.space_to_batch.output_shape((2, 3, 4, 1), [[1, 0], [0, 0]], 2)
      (8, 2, 2, 1)
    """
    return _core.run(_core.tf_space_to_batch(paddings, block_size), input, out, threads)


@operator(_core.tf_batch_to_space)
def batch_to_space(input: Any, crops: Any, block_size: Any, name: Any = None, *,
                   out: np.ndarray | None = None, threads: int | None = None) -> np.ndarray:
    """BatchToSpace for 4-D tensors of type T (``tf.compat.v1.batch_to_space``).

    Rearranges (permutes) data from batch into blocks of spatial data,
    followed by cropping: the inverse of ``space_to_batch``.

    Args:
      input: 4-D array ``[batch, height, width, depth]``; ``block_size ** 2``
        must divide ``batch``; any dtype.
      crops: shape ``[2, 2]``, all >= 0: ``[[crop_top, crop_bottom],
        [crop_left, crop_right]]``.
      block_size: an integer >= 1.
      name: ignored (TensorFlow's op name).
      out: optional C-contiguous array of the output's shape and dtype.
      threads: None (every core), 1 (the calling thread) or a number of parts
        (at most 256).

    Returns:
      An array ``[batch / block_size ** 2, height * block_size - crop_top -
      crop_bottom, width * block_size - crop_left - crop_right, depth]``.

    Raises:
      ValueError: a parameter breaks TensorFlow's rules (the message names it).
      TypeError: a parameter or ``out`` of the wrong type.

    Example::

      >>> import numpy as np, blockshuffle as bs
      >>> x = np.arange(1, 5, dtype=np.float32).reshape(4, 1, 1, 1)
      >>> bs.tf.batch_to_space(x, crops=[[0, 0], [0, 0]], block_size=2)[0, :, :, 0].tolist()
      [[1.0, 2.0], [3.0, 4.0]]
    """
    return _core.run(_core.tf_batch_to_space(crops, block_size), input, out, threads)


@operator(_core.tf_space_to_depth)
def space_to_depth(input: Any, block_size: Any, data_format: str = "NHWC", name: Any = None, *,
                   out: np.ndarray | None = None, threads: int | None = None) -> np.ndarray:
    """SpaceToDepth for tensors of type T (``tf.nn.space_to_depth``).

    Rearranges blocks of spatial data into depth: non-overlapping
    ``block_size x block_size`` blocks of the height and width dimensions go
    to the depth dimension, the block offset ``(by, bx)`` being the high part
    of the output channel: ``(by * block_size + bx) * depth + c``.

    Args:
      input: 4-D array (5-D ``[N, C/4, H, W, 4]`` for NCHW_VECT_C); any dtype.
      block_size: an integer >= 2 that divides height and width.
      data_format: ``"NHWC"`` (default), ``"NCHW"`` or ``"NCHW_VECT_C"``.
        TensorFlow runs NCHW and NCHW_VECT_C on GPUs only; blockshuffle runs
        them everywhere with TensorFlow's semantics.
      name: ignored (TensorFlow's op name).
      out: optional C-contiguous array of the output's shape and dtype.
      threads: None (every core), 1 (the calling thread) or a number of parts
        (at most 256).

    Returns:
      NHWC: ``[batch, height / block_size, width / block_size, depth *
      block_size ** 2]`` of the input's dtype (NCHW alike).

    Raises:
      ValueError: a parameter breaks TensorFlow's rules (the message names it).
      TypeError: a parameter or ``out`` of the wrong type.

    Example::

      >>> import numpy as np, blockshuffle as bs
      >>> x = np.array([1, 2, 3, 4]).reshape(1, 2, 2, 1)
      >>> bs.tf.space_to_depth(x, 2).tolist()
      [[[[1, 2, 3, 4]]]]
      >>> bs.tf.space_to_depth.output_shape((1, 4, 6, 3), 2, "NHWC")
      (1, 2, 3, 12)
    """
    return _core.run(_core.tf_space_to_depth(block_size, data_format), input, out, threads)


@operator(_core.tf_depth_to_space)
def depth_to_space(input: Any, block_size: Any, data_format: str = "NHWC", name: Any = None, *,
                   out: np.ndarray | None = None, threads: int | None = None) -> np.ndarray:
    """DepthToSpace for tensors of type T (``tf.nn.depth_to_space``).

    Rearranges data from depth into blocks of spatial data: the inverse of
    ``space_to_depth``. Input channel ``(by * block_size + bx) * C + c`` goes
    to offset ``(by, bx)`` of its block, channel ``c``.

    Args:
      input: 4-D array (5-D ``[N, C/4, H, W, 4]`` for NCHW_VECT_C); any dtype.
      block_size: an integer >= 2; ``block_size ** 2`` must divide the depth.
      data_format: ``"NHWC"`` (default), ``"NCHW"`` or ``"NCHW_VECT_C"``.
      name: ignored (TensorFlow's op name).
      out: optional C-contiguous array of the output's shape and dtype.
      threads: None (every core), 1 (the calling thread) or a number of parts
        (at most 256).

    Returns:
      NHWC: ``[batch, height * block_size, width * block_size, depth /
      block_size ** 2]`` of the input's dtype (NCHW alike).

    Raises:
      ValueError: a parameter breaks TensorFlow's rules (the message names it).
      TypeError: a parameter or ``out`` of the wrong type.

    Example::

      >>> import numpy as np, blockshuffle as bs
      >>> x = np.array([[[[1, 2, 3, 4]]]])
      >>> bs.tf.depth_to_space(x, 2)[0, :, :, 0].tolist()
      [[1, 2], [3, 4]]
    """
    return _core.run(_core.tf_depth_to_space(block_size, data_format), input, out, threads)
