"""The Dask graph of an operator: every output chunk computed from exactly
the input elements it needs.

An operator on one input shape is a :class:`~blockshuffle._core.Model`:
input axes split into factors, output axes merged from the same factors in
another order (and padding or crops on the space side). Every factor belongs
to exactly one input axis and one output axis, so for an output chunk (a box
of index ranges) the input index along input axis ``k`` is a *sum* of terms,
one per output axis ``j``: the digits of the factors shared by ``k`` and ``j``
times their weights in ``k``. From these 1-D terms, for each output chunk:

- the graph (built here) knows the sorted set of input indices each input
  axis needs (the sums of the terms' values), which input chunks hold them,
  and which indices of each; one small task per such input chunk takes just
  those elements (``_take``);
- the chunk's task (``_assemble``) places them in a compact region (one
  extra zero slot per axis where the chunk reads padding); a chunk that is a
  box of factor digits (the default chunks mostly are) and reads no padding
  is then a reshape / transpose / reshape of the region, any other is
  gathered from it with the broadcast sums of the terms as indices.

A task holds at most one input chunk and its taken elements, or the
region, the output chunk and its index arrays: a few chunks, whatever the
array's size. No rechunking.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from .._core import Model


def _weights(sizes: tuple[int, ...], axes: tuple[tuple[int, ...], ...]) -> dict[int, int]:
    """Each factor's weight (stride in index units) within its axis."""
    w: dict[int, int] = {}
    for factors in axes:
        acc = 1
        for f in reversed(factors):
            w[f] = acc
            acc *= sizes[f]
    return w


def _terms(model: Model, ranges: list[tuple[int, int]]) -> list[list[np.ndarray | None]]:
    """``terms[k][j]``: for each position of output axis ``j`` in
    ``ranges[j]``, its contribution to the index along input axis ``k``
    (``None`` where the two axes share no factor)."""
    w_out = _weights(model.sizes, model.out_axes)
    w_in = _weights(model.sizes, model.in_axes)
    owner = {f: k for k, fs in enumerate(model.in_axes) for f in fs}
    terms: list[list[np.ndarray | None]] = [[None] * len(model.out_axes) for _ in model.in_axes]
    for j, (factors, (a, b)) in enumerate(zip(model.out_axes, ranges)):
        u = np.arange(a + model.out_offset[j], b + model.out_offset[j], dtype=np.int64)
        for f in factors:
            digit = (u // w_out[f]) % model.sizes[f]
            k = owner[f]
            t = digit * w_in[f]
            terms[k][j] = t if terms[k][j] is None else terms[k][j] + t
    return terms


def _needed(model: Model, terms) -> list[tuple[np.ndarray, bool]]:
    """Per input axis, the sorted valid input indices the chunk reads, and
    whether it also reads padding."""
    out = []
    for k, row in enumerate(terms):
        s = np.zeros(1, dtype=np.int64)
        for t in row:
            if t is not None:
                s = np.unique(np.add.outer(s, np.unique(t)).ravel())
        s = s - model.in_offset[k]
        valid = (s >= 0) & (s < model.in_len[k])
        out.append((s[valid], not bool(valid.all())))
    return out


def _index(local: np.ndarray) -> Any:
    """A slice where the indices are a contiguous run, else the array."""
    if len(local) and local[-1] - local[0] + 1 == len(local):
        return slice(int(local[0]), int(local[-1]) + 1)
    return local


def _take(block: np.ndarray, index: tuple) -> np.ndarray:
    """The elements ``index`` (per axis a slice or indices) of one input chunk."""
    out = block
    for axis, ix in enumerate(index):
        if isinstance(ix, slice):
            out = out[(slice(None),) * axis + (ix,)]
        else:
            out = np.take(out, ix, axis=axis)
    # (not np.ascontiguousarray, which makes a 0-d array 1-d)
    return out if out.flags.c_contiguous else out.copy(order="C")


def _box(model: Model, ranges) -> dict[int, tuple[int, int]] | None:
    """The chunk as a box of factor digits, ``{factor: (first, last)}``, if
    it is one: on every output axis the digits above one factor fixed, that
    one a range, those below it whole. ``None`` otherwise."""
    w_out = _weights(model.sizes, model.out_axes)
    box: dict[int, tuple[int, int]] = {}
    for j, (factors, (a, b)) in enumerate(zip(model.out_axes, ranges)):
        lo, hi = a + model.out_offset[j], b - 1 + model.out_offset[j]
        digits = [((lo // w_out[f]) % model.sizes[f], (hi // w_out[f]) % model.sizes[f]) for f in factors]
        varying = [i for i, (x, y) in enumerate(digits) if x != y]
        first = varying[0] if varying else len(factors)
        for i, f in enumerate(factors):
            x, y = digits[i]
            if i > first and (x, y) != (0, model.sizes[f] - 1):
                return None
            box[f] = (x, y)
        if varying and hi - lo + 1 != math.prod(y - x + 1 for x, y in digits):
            return None
    return box


def _assemble(spec: tuple, pieces: list[np.ndarray]) -> np.ndarray:
    """One output chunk: the region from the pieces, then a transpose of it
    (a chunk that is a box of factor digits, without padding) or a gather."""
    model, ranges, dtype, needed, places = spec
    shape = tuple(b - a for a, b in ranges)
    region_shape = tuple(len(v) + int(pad) for v, pad in needed)
    region = (np.zeros if any(p for _, p in needed) else np.empty)(region_shape, dtype=dtype)
    for piece, place in zip(pieces, places):
        region[place] = piece
    box = None if any(p for _, p in needed) else _box(model, ranges)
    if box is not None:
        # The region's axis k holds its factors' digit ranges in mixed radix
        # (sorted indices are in lexicographic digit order): split it into
        # them, order them as the output's axes, merge.
        order = [f for axis in model.in_axes for f in axis]
        pos = {f: i for i, f in enumerate(order)}
        split = [box[f][1] - box[f][0] + 1 for f in order]
        perm = [pos[f] for axis in model.out_axes for f in axis]
        out = region.reshape(split).transpose(perm).reshape(shape)
        return out if out.flags.c_contiguous else out.copy(order="C")  # (np.ascontiguousarray: 0-d to 1-d)
    terms = _terms(model, list(ranges))
    n = len(shape)
    index = []
    for k, row in enumerate(terms):
        idx = np.zeros((1,) * n, dtype=np.int64)
        for j, t in enumerate(row):
            if t is not None:
                idx = idx + t.reshape((1,) * j + (-1,) + (1,) * (n - j - 1))
        valid, pad = needed[k]
        idx = idx - model.in_offset[k]
        pos = np.searchsorted(valid, idx)
        if pad:
            inside = (idx >= 0) & (idx < model.in_len[k])
            pos = np.where(inside, pos, len(valid))
        index.append(pos)
    return region[tuple(index)] if region.size else np.zeros(shape, dtype=dtype)


def _empty(shape: tuple[int, ...], dtype) -> np.ndarray:
    return np.empty(shape, dtype=dtype)


def auto_chunks(model: Model, in_chunks: tuple[tuple[int, ...], ...]) -> tuple[int, ...]:
    """Output chunk sizes of about the input chunks' size: each factor gets
    the part of its input axis' chunk size it spans (least significant
    first), and an output axis takes its factors' parts, least significant
    first, up to the first that is not whole."""
    part: dict[int, int] = {}
    for factors, chunks in zip(model.in_axes, in_chunks):
        rem = max(chunks) if chunks else 1
        for f in reversed(factors):
            s = model.sizes[f]
            part[f] = max(1, min(s, rem))
            rem //= max(s, 1)
    out = []
    for factors, length in zip(model.out_axes, model.out_len):
        size = 1
        for f in reversed(factors):
            size *= part[f]
            if part[f] < model.sizes[f]:
                break
        out.append(max(1, min(size, length)))
    return tuple(out)


def graph(name: str, x, model: Model, out_chunks: tuple[tuple[int, ...], ...], dtype) -> dict:
    """The tasks of every output chunk of ``name`` from the Dask array ``x``."""
    in_bounds = [np.cumsum((0,) + tuple(c)) for c in x.chunks]
    out_bounds = [np.cumsum((0,) + tuple(c)) for c in out_chunks]
    dsk: dict = {}
    take_name = "take-" + name
    for idx in itertools.product(*(range(len(c)) for c in out_chunks)):
        ranges = tuple((int(b[i]), int(b[i + 1])) for b, i in zip(out_bounds, idx))
        if any(a == b for a, b in ranges):
            dsk[(name,) + idx] = (_empty, tuple(b - a for a, b in ranges), dtype)
            continue
        needed = _needed(model, _terms(model, list(ranges)))
        # Per input axis: (input chunk, indices within it, slice of the region).
        per_axis = []
        for (valid, _), bounds in zip(needed, in_bounds):
            parts = []
            which = np.searchsorted(bounds, valid, side="right") - 1
            for c in np.unique(which):
                sel = np.nonzero(which == c)[0]
                parts.append((int(c), _index(valid[sel] - bounds[c]), slice(int(sel[0]), int(sel[-1]) + 1)))
            per_axis.append(parts)
        keys, places = [], []
        for n, combo in enumerate(itertools.product(*per_axis)):
            key = (take_name,) + idx + (n,)
            dsk[key] = (_take, (x.name,) + tuple(c for c, _, _ in combo), tuple(ix for _, ix, _ in combo))
            keys.append(key)
            places.append(tuple(p for _, _, p in combo))
        dsk[(name,) + idx] = (_assemble, (model, ranges, dtype, needed, places), keys)
    return dsk
