"""blockshuffle: the tensor block-rearrangement operators of TensorFlow,
OpenVINO, ONNX and PyTorch, and the general ``np.transpose`` and
``einops.rearrange``, bit-exact with each framework, on numpy arrays
of any dtype and strides (and, with ``blockshuffle.dask``, on Dask arrays).

One submodule per framework, each function named and parameterised as that
framework's Python API has it::

    import numpy as np
    import blockshuffle as bs

    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    y = bs.tf.space_to_batch_nd(x, block_shape=[2, 2], paddings=[[0, 0], [0, 0]])
    y.shape                                   # (4, 2, 2, 1)
    bs.tf.space_to_batch_nd.output_shape((1, 4, 4, 1), [2, 2], [[0, 0], [0, 0]])

Every function also takes ``out=`` (an existing C-contiguous array of the
output's shape and dtype) and ``threads=`` (None: every core for outputs of
1 MiB and more; 1: the calling thread only; n: n parts). The GIL is released
while the data moves.

New outputs of 4 MiB and more live in buffers that are kept for reuse when
their arrays go (as TensorFlow's allocator does; a fresh multi-megabyte
array costs more to fault in than the operator takes to fill it): at most 4
buffers and 1 GiB, set by ``set_output_cache(max_bytes)`` (0 keeps none).
Such an array's ``base`` is the buffer.
"""

from . import einops, numpy, onnx, openvino, tf, torch
from ._native import MAX_RANK, set_output_cache

__version__ = "0.1.0"
__all__ = ["tf", "openvino", "onnx", "torch", "numpy", "einops", "MAX_RANK", "set_output_cache"]
