"""What every front-end shares: parameter normalisation, running an operator
on an array, and the description of each operator as factors (for Dask).

Each operator is built by one function here, ``<framework>_<op>(...)``, that
normalises the framework's parameters and returns an :class:`Operator`: the
native operator (validation, shape inference and the data movement, in Rust)
and, for the Dask front-end, its factor model (:func:`Operator.model`). The
framework modules (``blockshuffle.tf`` ...) give these their framework's
signatures and documentation; ``blockshuffle.dask`` reuses them unchanged.

Adding a front-end (as ``bs.numpy.transpose`` and ``bs.einops.rearrange``
were added):

1. the native operator: a ``Spec`` variant in ``python/src/lib.rs`` named as
   the command line names the operator (``"numpy transpose"``), planned by
   the library's operator struct;
2. here, a builder ``numpy_transpose(axes)`` that normalises the parameters
   and returns ``Operator(name, lists, mode, model_fn, *args)``; its factor
   model is the same kind of description: a transpose is one factor per
   axis, permuted; an einops pattern splits input axes into factors and
   merges them in the output's order (``_model`` builds the space/block
   form, or build a :class:`Model` directly);
3. a module ``blockshuffle/numpy.py`` whose functions call ``run`` on the
   builder's operator, decorated with ``_api.operator(builder)``, imported
   in ``blockshuffle/__init__.py``; ``blockshuffle/dask/numpy.py`` is the
   four lines the other Dask modules are, and stubs as ``tf.pyi`` has them.
"""

from __future__ import annotations

import operator as _operator
import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from . import _native

__all__ = ["Operator", "Model", "run", "as_array"]


# --------------------------------------------------------------------------
# Parameters


def _int(value: Any, op: str, name: str) -> int:
    """One integer parameter: an ``int`` or anything with ``__index__`` (numpy
    integers, 0-d integer arrays), not a bool or a float."""
    if type(value) is int and -(2**63) <= value < 2**63:
        return value
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{op}: {name} must be an integer, not bool")
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    try:
        v = _operator.index(value)
    except TypeError:
        raise TypeError(f"{op}: {name} must be an integer, not {type(value).__name__}") from None
    if not -(2**63) <= v < 2**63:
        raise ValueError(f"{op}: {name} = {v} is out of the 64-bit range")
    return v


def _nested(value: Any, op: str, name: str) -> list:
    """A list, tuple or numpy integer array as nested Python lists of int."""
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{op}: {name} must be a list of integers, not {type(value).__name__}")
    if not isinstance(value, (list, tuple)) and (isinstance(value, np.ndarray) or hasattr(value, "__array__")):
        arr = np.asarray(value)
        if arr.ndim == 0:
            raise TypeError(f"{op}: {name} must be a list of integers, not a scalar")
        if arr.dtype.kind not in "iu":
            if arr.size == 0 and arr.dtype.kind == "f":
                arr = arr.astype(np.int64)
            else:
                raise TypeError(f"{op}: {name} must hold integers, not {arr.dtype}")
        value = arr.tolist()
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{op}: {name} must be a list, tuple or integer array, not {type(value).__name__}")
    return [_nested(v, op, name) if isinstance(v, (list, tuple, np.ndarray)) else _int(v, op, name) for v in value]


def _ints(value: Any, op: str, name: str) -> list[int]:
    """A one-dimensional integer parameter (``block_shape``, ``pads_begin`` ...)."""
    if type(value) in (list, tuple) and all(type(v) is int for v in value):
        return list(value)  # the common case, fast (the native side checks the range)
    v = _nested(value, op, name)
    if any(isinstance(x, list) for x in v):
        raise ValueError(f"{op}: {name} must be one-dimensional")
    return v


def _pairs(value: Any, op: str, name: str) -> list[int]:
    """A ``[M, 2]`` parameter (``paddings``, ``crops``), flattened row-major."""
    if type(value) in (list, tuple):
        flat = [x for p in value if type(p) in (list, tuple) and len(p) == 2 for x in p]
        if len(flat) == 2 * len(value) and all(type(x) is int for x in flat):
            return flat  # the common case, fast (the native side checks the range)
    v = _nested(value, op, name)
    if not all(isinstance(p, list) and len(p) == 2 and not any(isinstance(x, list) for x in p) for p in v):
        raise ValueError(f"{op}: {name} must have shape [M, 2] (a [begin, end] pair per block dimension)")
    return [x for p in v for x in p]


def _str(value: Any, op: str, name: str) -> str:
    if isinstance(value, bytes):
        value = value.decode()
    if not isinstance(value, str):
        raise TypeError(f"{op}: {name} must be a string, not {type(value).__name__}")
    return value


def _shape(shape: Any, op: str) -> list[int]:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    dims = _ints(shape, op, "shape")
    for d in dims:
        if d < 0:
            raise ValueError(f"{op}: shape {tuple(dims)} has a negative dimension")
    return dims


# --------------------------------------------------------------------------
# Factor models (for blockshuffle.dask)


@dataclass(frozen=True)
class Model:
    """An operator on one input shape as factors: the input's axes split into
    factors (most significant first), the output's axes merged from the same
    factors in another order. Index on an axis = the factors' digits in mixed
    radix, minus the axis' ``offset`` (padding before it on the space side);
    an input index outside ``[0, len)`` is padding (zero)."""

    sizes: tuple[int, ...]
    in_axes: tuple[tuple[int, ...], ...]
    in_offset: tuple[int, ...]
    in_len: tuple[int, ...]
    out_axes: tuple[tuple[int, ...], ...]
    out_offset: tuple[int, ...]
    out_len: tuple[int, ...]


def _model(space: Sequence[int], blocks: Sequence[int], pads: Sequence[tuple[int, int]],
           groups: Sequence[Sequence[tuple[str, int]]], forward: bool) -> Model:
    """The model of: pad each space axis ``k`` by ``pads[k]``, split it into
    ``(outer, block)`` of ``blocks[k]``, and merge the factors named by
    ``groups`` (``("o", k)`` or ``("b", k)``) into the block side's axes.
    ``forward``: the input is the space side."""
    sizes: list[int] = []
    space_axes = []
    fid: dict[tuple[str, int], int] = {}
    for k, (s, b, (pb, pe)) in enumerate(zip(space, blocks, pads)):
        u = s + pb + pe
        fid[("o", k)] = len(sizes)
        sizes.append(u // b)
        fid[("b", k)] = len(sizes)
        sizes.append(b)
        space_axes.append((fid[("o", k)], fid[("b", k)]))
    block_axes = [tuple(fid[f] for f in g) for g in groups]
    used = sorted(f for g in block_axes for f in g)
    # Every factor appears once on the block side; unused ones have size 1.
    missing = [f for f in range(len(sizes)) if f not in used]
    assert all(sizes[f] == 1 for f in missing), "an operator's factor model lost a factor"
    if missing:
        block_axes[0] = block_axes[0] + tuple(missing)
    block_len = tuple(int(np.prod([sizes[f] for f in g], dtype=object)) for g in block_axes)
    space_off = tuple(pb for pb, _ in pads)
    space_len = tuple(space)
    zeros = (0,) * len(block_axes)
    if forward:
        return Model(tuple(sizes), tuple(space_axes), space_off, space_len, tuple(block_axes), zeros, block_len)
    return Model(tuple(sizes), tuple(block_axes), zeros, block_len, tuple(space_axes), space_off, space_len)


# --------------------------------------------------------------------------
# Operators


class Operator:
    """A framework's operator with its parameters, normalised: the native
    operator, and how to build its factor model (for ``blockshuffle.dask``)."""

    __slots__ = ("name", "native", "_model")

    def __init__(self, name: str, lists: list[list[int]], mode: str | None, model: Callable[..., Model], *args: Any,
                 names: list[str] | None = None):
        self.name = name
        try:
            self.native = _native.Op(name, lists, mode, names)
        except OverflowError:
            raise ValueError(f"{name}: a parameter is out of the 64-bit range") from None
        self._model = (model, args)

    def output_shape(self, shape: Any) -> tuple[int, ...]:
        return tuple(self.native.output_shape(_shape(shape, self.name)))

    def model(self, shape: Sequence[int]) -> Model:
        """The factor model on an input of ``shape`` (validated first)."""
        shape = list(shape)
        out = list(self.output_shape(shape))
        build, args = self._model
        return build(shape, out, *args)

    def __repr__(self) -> str:
        return f"<blockshuffle {self.name}>"


def _space_batch_model(shape: list[int], out: list[int], blocks: list[int], pads: list[tuple[int, int]],
                       forward: bool) -> Model:
    """TF's and OpenVINO's space/batch operators: batch = (block factors...,
    batch), every other axis its outer factor. ``blocks`` and ``pads`` per
    space axis."""
    space = shape if forward else out
    n = len(space)
    groups = [[("b", k) for k in range(1, n)] + [("o", 0)]] + [[("o", k)] for k in range(1, n)]
    return _model(space, blocks, pads, groups, forward)


def _tf_nd_model(shape, out, b: list[int], p: list[int], forward: bool) -> Model:
    n, m = len(shape), len(b)
    blocks = [1] + b + [1] * (n - 1 - m)
    pads = [(0, 0)] + [(p[2 * i], p[2 * i + 1]) for i in range(m)] + [(0, 0)] * (n - 1 - m)
    return _space_batch_model(shape, out, blocks, pads, forward)


def _ov_space_batch_model(shape, out, b: list[int], begin: list[int], end: list[int], forward: bool) -> Model:
    return _space_batch_model(shape, out, b, list(zip(begin, end)), forward)


def _depth_model(shape, out, block: int, lead: int | None, k: int | None, channel: int | None,
                 blocks_first: bool, forward: bool) -> Model:
    """The depth operators: ``k`` spatial axes after ``lead`` leading ones,
    each split by the block; the channel (axis ``channel``) merged with the
    blocks, blocks first or depth first. ``None``: from the rank (OpenVINO's
    spatial axes are all after the channel, PyTorch's are the last two)."""
    space = shape if forward else out
    n = len(space)
    if lead is None:  # OpenVINO: [N, C, D_1 .. D_K]
        lead, k, channel = 2, n - 2, 1
    elif lead < 0:  # PyTorch: [*, C, H, W]
        lead, k, channel = n - 2, 2, n - 3
    spatial = range(lead, lead + k)
    blocks = [block if a in spatial else 1 for a in range(n)]
    blk = [("b", a) for a in spatial]
    ch = blk + [("o", channel)] if blocks_first else [("o", channel)] + blk
    groups = [ch if a == channel else [("o", a)] for a in range(n)]
    return _model(space, blocks, [(0, 0)] * n, groups, forward)


def tf_space_to_batch_nd(block_shape, paddings) -> Operator:
    op = "tf space-to-batch-nd"
    b, p = _ints(block_shape, op, "block_shape"), _pairs(paddings, op, "paddings")
    return Operator(op, [b, p], None, _tf_nd_model, b, p, True)


def tf_batch_to_space_nd(block_shape, crops) -> Operator:
    op = "tf batch-to-space-nd"
    b, c = _ints(block_shape, op, "block_shape"), _pairs(crops, op, "crops")
    return Operator(op, [b, c], None, _tf_nd_model, b, c, False)


def tf_space_to_batch(paddings, block_size) -> Operator:
    op = "tf space-to-batch"
    bs, p = _int(block_size, op, "block_size"), _pairs(paddings, op, "paddings")
    return Operator(op, [[bs], p], None, _tf_nd_model, [bs, bs], p, True)


def tf_batch_to_space(crops, block_size) -> Operator:
    op = "tf batch-to-space"
    bs, c = _int(block_size, op, "block_size"), _pairs(crops, op, "crops")
    return Operator(op, [[bs], c], None, _tf_nd_model, [bs, bs], c, False)


def _tf_depth(op: str, block_size, data_format, forward: bool) -> Operator:
    bs = _int(block_size, op, "block_size")
    fmt = _str(data_format, op, "data_format")
    # NHWC: channel last; NCHW and NCHW_VECT_C (the native side rejects
    # anything else): channel 1, then H and W (then VECT_C's 4, carried).
    geometry = (1, 2, 3) if fmt == "NHWC" else (2, 2, 1)
    return Operator(op, [[bs]], fmt, _depth_model, bs, *geometry, True, forward)


def tf_space_to_depth(block_size, data_format="NHWC") -> Operator:
    return _tf_depth("tf space-to-depth", block_size, data_format, True)


def tf_depth_to_space(block_size, data_format="NHWC") -> Operator:
    return _tf_depth("tf depth-to-space", block_size, data_format, False)


def _ov_space_batch(op: str, block_shape, begin, end, names, forward: bool) -> Operator:
    b, pb, pe = _ints(block_shape, op, "block_shape"), _ints(begin, op, names[0]), _ints(end, op, names[1])
    return Operator(op, [b, pb, pe], None, _ov_space_batch_model, b, pb, pe, forward)


def openvino_space_to_batch(block_shape, pads_begin, pads_end) -> Operator:
    return _ov_space_batch("ov space-to-batch", block_shape, pads_begin, pads_end, ("pads_begin", "pads_end"), True)


def openvino_batch_to_space(block_shape, crops_begin, crops_end) -> Operator:
    return _ov_space_batch("ov batch-to-space", block_shape, crops_begin, crops_end, ("crops_begin", "crops_end"),
                           False)


def _ov_depth(op: str, block_size, mode, forward: bool) -> Operator:
    bs = _int(block_size, op, "block_size")
    mode = _str(mode, op, "mode")
    return Operator(op, [[bs]], mode, _depth_model, bs, None, None, None, mode == "blocks_first", forward)


def openvino_space_to_depth(block_size, mode) -> Operator:
    return _ov_depth("ov space-to-depth", block_size, mode, True)


def openvino_depth_to_space(block_size, mode) -> Operator:
    return _ov_depth("ov depth-to-space", block_size, mode, False)


def onnx_space_to_depth(blocksize) -> Operator:
    op = "onnx space-to-depth"
    bs = _int(blocksize, op, "blocksize")
    return Operator(op, [[bs]], None, _depth_model, bs, 2, 2, 1, True, True)


def onnx_depth_to_space(blocksize, mode="DCR") -> Operator:
    op = "onnx depth-to-space"
    bs = _int(blocksize, op, "blocksize")
    mode = _str(mode, op, "mode")
    return Operator(op, [[bs]], mode, _depth_model, bs, 2, 2, 1, mode == "DCR", False)


def torch_pixel_shuffle(upscale_factor) -> Operator:
    op = "torch pixel-shuffle"
    r = _int(upscale_factor, op, "upscale_factor")
    return Operator(op, [[r]], None, _depth_model, r, -1, None, None, False, False)


def torch_pixel_unshuffle(downscale_factor) -> Operator:
    op = "torch pixel-unshuffle"
    r = _int(downscale_factor, op, "downscale_factor")
    return Operator(op, [[r]], None, _depth_model, r, -1, None, None, False, True)


def _transpose_model(shape, out, axes: list[int] | None) -> Model:
    """One factor per axis; output axis ``i`` is input factor ``axes[i]``."""
    n = len(shape)
    perm = list(range(n))[::-1] if axes is None else [a % n for a in axes]
    return Model(tuple(shape), tuple((k,) for k in range(n)), (0,) * n, tuple(shape),
                 tuple((a,) for a in perm), (0,) * len(out), tuple(out))


def numpy_transpose(axes=None) -> Operator:
    op = "numpy transpose"
    if axes is None:
        return Operator(op, [], None, _transpose_model, None)
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, (bool, np.bool_)):
        axes = [axes]  # numpy takes one int as a one-axis permutation
    a = _ints(axes, op, "axes")
    return Operator(op, [a], None, _transpose_model, a)


_ELLIPSIS = "..."


def _einops_side(text: str) -> list[list[str] | str]:
    """One side of a (valid) pattern: per axis the names of its composition
    (unit axes dropped: they hold no factor), or ``"..."`` for a bare
    ellipsis (which stands for any number of axes)."""
    axes: list[list[str] | str] = []
    group: list[str] | None = None
    for tok in re.findall(r"\.\.\.|…|\(|\)|[^\s()…]+", text):
        if tok == "…":
            tok = _ELLIPSIS
        if tok == "(":
            group = []
        elif tok == ")":
            axes.append(group)
            group = None
        elif group is not None:
            if tok != "1":
                group.append(tok)
        elif tok == _ELLIPSIS:
            axes.append(_ELLIPSIS)
        else:
            axes.append([] if tok == "1" else [tok])
    return axes


def _rearrange_model(shape, out, pattern: str, lengths: dict[str, int]) -> Model:
    """The elementary axes (and each axis ``...`` stands for) as factors:
    the left side splits the input's axes into them, the right side merges
    them in its order. Unit axes hold no factor. The pattern and the shape
    are already validated (by the native side)."""
    left_text, right_text = pattern.split("->")
    left, right = _einops_side(left_text), _einops_side(right_text)
    n_ell = len(shape) - (len(left) - 1) if _ELLIPSIS in left else 0
    ell = [f"...{i}" for i in range(n_ell)]
    sizes: list[int] = []
    fid: dict[str, int] = {}
    in_axes = []
    dims = iter(shape)
    for axis in left:
        comps = [[e] for e in ell] if axis == _ELLIPSIS else [axis]
        for names in comps:
            length = next(dims)
            known = 1
            for nm in names:
                if nm in lengths:
                    known *= lengths[nm]
            ids = []
            for nm in names:
                fid[nm] = len(sizes)
                if nm in lengths:
                    sizes.append(lengths[nm])
                elif nm.startswith("..."):
                    sizes.append(length)
                else:  # the one unknown length of the composition
                    sizes.append(length // known if known else 0)
                ids.append(fid[nm])
            in_axes.append(tuple(ids))
    out_axes = []
    for axis in right:
        if axis == _ELLIPSIS:
            out_axes += [(fid[e],) for e in ell]
        else:
            ids: list[int] = []
            for nm in axis:
                ids += [fid[e] for e in ell] if nm == _ELLIPSIS else [fid[nm]]
            out_axes.append(tuple(ids))
    n, m = len(shape), len(out)
    assert len(in_axes) == n and len(out_axes) == m, "an einops pattern's factor model lost an axis"
    return Model(tuple(sizes), tuple(in_axes), (0,) * n, tuple(shape), tuple(out_axes), (0,) * m, tuple(out))


def einops_rearrange(pattern, axes_lengths=None) -> Operator:
    op = "einops rearrange"
    p = _str(pattern, op, "pattern")
    lengths: dict[str, int] = {}
    for name, value in (axes_lengths or {}).items():
        lengths[_str(name, op, "an axis name")] = _int(value, op, f"size {name}")
    return Operator(op, [list(lengths.values())], p, _rearrange_model, p, lengths, names=list(lengths))


# --------------------------------------------------------------------------
# Running


def as_array(input: Any) -> np.ndarray:
    """``input`` as an ndarray without a copy where numpy can avoid one
    (anything with ``__array__`` or the buffer protocol)."""
    a = np.asarray(input)
    if a.dtype.hasobject:
        raise TypeError(f"arrays of dtype {a.dtype} hold Python objects; blockshuffle moves plain bytes only")
    return a


def run(op: Operator, input: Any, out: Any = None, threads: Any = None) -> np.ndarray:
    """Runs ``op`` on ``input`` into ``out`` (or a new C-contiguous array).

    The native half checks ``out`` (TypeError for another type or dtype,
    ValueError for another shape or a layout other than C-contiguous and
    writeable) and ``threads`` (None, or an integer >= 1), copies the input
    first where it overlaps ``out`` or its strides are not multiples of its
    item size, and releases the GIL while the data moves."""
    if type(input) is not np.ndarray:
        input = as_array(input)
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)):
            raise TypeError(f"threads must be None or an integer, not {type(threads).__name__}")
        if threads < 1:
            raise ValueError(f"threads = {threads} must be >= 1 (or None for every core)")
        threads = min(int(threads), 256)  # as the native side caps it
    return op.native.run(input, out, threads)
