"""numpy's ``np.transpose``, bit-exact with numpy, on numpy arrays of any
dtype and strides, into a new C-contiguous array (numpy returns a view).

Takes ``out=`` and ``threads=`` (see ``blockshuffle``) and has
``.output_shape(shape, axes=None)``: shape inference without data.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _core
from ._api import operator

__all__ = ["transpose"]


@operator(_core.numpy_transpose)
def transpose(a: Any, axes: Any = None, *,
              out: np.ndarray | None = None, threads: int | None = None) -> np.ndarray:
    """Returns an array with axes transposed: output axis ``i`` is input
    axis ``axes[i]``, as ``np.transpose(a, axes)``, but with the elements
    moved into a C-contiguous array rather than a strided view.

    Args:
      a: array of any rank and dtype (any strides).
      axes: a permutation of ``[0, 1, ..., N-1]`` (N the rank of ``a``);
        negative axes count from the end. None (the default) reverses the
        axes, as ``a.T``.
      out: optional C-contiguous array of the output's shape and dtype.
      threads: None (every core), 1 (the calling thread) or a number of parts
        (at most 256).

    Returns:
      An array of shape ``[a.shape[i] for i in axes]`` of the input's dtype.
      A 0-d input gives a 0-d output, as in numpy.

    Raises:
      ValueError: ``axes`` is not a permutation of the input's axes: the
        wrong count, an axis out of range (numpy's ``AxisError`` is a
        ``ValueError`` too) or repeated.
      TypeError: ``axes`` or ``out`` of the wrong type.

    Example::

      >>> import numpy as np, blockshuffle as bs
      >>> x = np.arange(6, dtype=np.int16).reshape(2, 3)
      >>> bs.numpy.transpose(x).tolist()
      [[0, 3], [1, 4], [2, 5]]
      >>> y = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
      >>> np.array_equal(bs.numpy.transpose(y, (2, 0, -2)), np.transpose(y, (2, 0, 1)))
      True
      >>> bs.numpy.transpose.output_shape((4, 5, 6), [1, 2, 0])
      (5, 6, 4)
    """
    return _core.run(_core.numpy_transpose(axes), a, out, threads)
