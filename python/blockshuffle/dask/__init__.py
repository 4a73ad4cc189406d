"""blockshuffle on Dask arrays: the same submodules and functions as
``blockshuffle`` (``blockshuffle.dask.tf.space_to_batch_nd(x, block_shape,
paddings)`` ...), taking a ``dask.array.Array`` and returning one.

Every output chunk is computed from exactly the input elements it needs:
one small task per input chunk it reads takes those elements, and the
chunk's task gathers them. There is no rechunking, and a task's memory is a
few chunks whatever the array's size, so arrays larger than memory (a Zarr
array, say) go through in bounded memory. ``chunks=`` sets the output's
chunks (by default, about the input chunks' size). Needs ``dask[array]``
(``pip install blockshuffle[dask]``)::

    import dask.array as da
    import blockshuffle.dask as bsd

    x = da.from_zarr("images.zarr")                 # (N, C, H, W), chunked
    y = bsd.torch.pixel_unshuffle(x, downscale_factor=2)
    y.to_zarr("unshuffled.zarr")
"""

from . import einops, numpy, onnx, openvino, tf, torch

__all__ = ["tf", "openvino", "onnx", "torch", "numpy", "einops"]
