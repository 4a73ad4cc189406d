"""Hypothesis: ``bs.numpy.transpose`` against ``np.transpose`` and
``bs.einops.rearrange`` against reshape / transpose / reshape, on random
shapes, patterns, dtypes and views (offsets, steps, permuted, zero and
negative strides), bit-exact."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import blockshuffle as bs
import test_properties as tp  # its views and dtypes (a module, so its tests are not collected twice)

NAMES = "abcdefgh"


@st.composite
def transposes(draw):
    """(input shape, axes or None)."""
    shape = draw(st.lists(st.integers(0, 4), max_size=5))
    n = len(shape)
    if draw(st.booleans()) and n:
        axes = None
    else:
        axes = [a - n if draw(st.booleans()) else a for a in draw(st.permutations(range(n)))]
    return shape, axes


def _partition(draw, items: list) -> list[list]:
    """``items`` cut into consecutive groups (some of one item)."""
    groups, i = [], 0
    while i < len(items):
        k = draw(st.integers(1, min(3, len(items) - i)))
        groups.append(items[i : i + k])
        i += k
    return groups


def _side(draw, groups: list[list[str]]) -> list[str]:
    """Axis texts of a side: a group of one name bare or parenthesised, of
    several parenthesised; a unit axis ``1`` or ``()`` here and there."""
    out = []
    for g in groups:
        if draw(st.integers(0, 5)) == 0:
            out.append(draw(st.sampled_from(["1", "()"])))
        if len(g) == 1 and g[0] == "...":
            out.append("...")
        elif len(g) == 1 and draw(st.booleans()):
            out.append(g[0])
        else:
            out.append("(" + " ".join(g) + ")")
    return out


@st.composite
def rearranges(draw):
    """(input shape, pattern, axes_lengths, elementary shape in the left
    side's order, the right side's order of those axes, output shape)."""
    k = draw(st.integers(0, 5))
    sizes = {n: draw(st.integers(0, 3) if draw(st.integers(0, 9)) == 0 else st.integers(1, 3)) for n in NAMES[:k]}
    ellipsis = draw(st.booleans())
    ell_shape = draw(st.lists(st.integers(1, 3), max_size=2)) if ellipsis else []
    left_names = draw(st.permutations(list(sizes)))
    right_names = draw(st.permutations(list(sizes)))
    left = _partition(draw, left_names)
    right = _partition(draw, right_names)
    if ellipsis:
        left.insert(draw(st.integers(0, len(left))), ["..."])  # bare on the left
        if right and draw(st.booleans()):
            g = draw(st.integers(0, len(right) - 1))
            right[g].insert(draw(st.integers(0, len(right[g]))), "...")
        else:
            right.insert(draw(st.integers(0, len(right))), ["..."])
    left_text, right_text = _side(draw, left), _side(draw, right)
    # Lengths: every name of a composition but at most one (a nonzero product known).
    lengths = {}
    for g in left:
        names = [n for n in g if n != "..."]
        unknown = draw(st.sampled_from([None] + names)) if names else None
        for n in names:
            if n != unknown or math.prod(sizes[m] for m in names if m != n) == 0:
                lengths[n] = sizes[n]
    shape, elem, order = [], [], []
    for t in left_text:
        if t == "...":
            shape += ell_shape
        elif t in ("1", "()"):
            shape.append(1)
        else:
            shape.append(math.prod(sizes[n] for n in t.strip("()").split()))
    for g in left:
        elem += ell_shape if g == ["..."] else [sizes[n] for n in g]
    pos, i = {}, 0
    for g in left:
        for n in g:
            if n == "...":
                pos.update({("...", j): i + j for j in range(len(ell_shape))})
                i += len(ell_shape)
            else:
                pos[n] = i
                i += 1
    out_shape = []
    for t in right_text:
        if t == "...":
            order += [pos[("...", j)] for j in range(len(ell_shape))]
            out_shape += ell_shape
            continue
        length = 1
        for n in t.strip("()").split():
            if n == "...":
                order += [pos[("...", j)] for j in range(len(ell_shape))]
                length *= math.prod(ell_shape)
            elif n != "1":
                order.append(pos[n])
                length *= sizes[n]
        out_shape.append(length)
    pattern = " ".join(left_text) + " -> " + " ".join(right_text)
    return shape, pattern, lengths, elem, order, out_shape


def _raw(x: np.ndarray) -> np.ndarray:
    """The elements as opaque bytes (void), C-contiguous."""
    return np.ascontiguousarray(x).view(f"V{x.dtype.itemsize}")


def _check(fn, args, kw, x, want, threads):
    got = fn(x, *args, **kw, threads=threads)
    assert got.dtype == x.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    assert got.flags.c_contiguous
    assert fn.output_shape(x.shape, *args, **kw) == want.shape
    out = np.empty_like(want)
    assert fn(x, *args, **kw, out=out) is out
    assert out.tobytes() == want.tobytes()


@tp.SETTINGS
@given(st.data())
def test_transpose_against_numpy(data):
    shape, axes = data.draw(transposes())
    x = data.draw(tp.views(shape, negative=data.draw(st.booleans())))
    want = np.transpose(x, axes).copy(order="C")  # (np.ascontiguousarray would make 0-d 1-d)
    args = () if axes is None and data.draw(st.booleans()) else (axes,)
    _check(bs.numpy.transpose, args, {}, x, want, data.draw(st.sampled_from([None, 1, 2])))


@tp.SETTINGS
@given(st.data())
def test_rearrange_against_numpy(data):
    shape, pattern, lengths, elem, order, out_shape = data.draw(rearranges())
    x = data.draw(tp.views(shape, negative=data.draw(st.booleans())))
    want = _raw(x).reshape(elem).transpose(order).reshape(out_shape)
    want = np.ascontiguousarray(want).view(x.dtype).reshape(out_shape)
    _check(bs.einops.rearrange, (pattern,), lengths, x, want, data.draw(st.sampled_from([None, 1, 2])))


@tp.SETTINGS
@given(transposes())
def test_transpose_is_a_rearrange(case):
    """The same transpose, written as a pattern, moves the same bytes."""
    shape, axes = case
    n = len(shape)
    perm = list(range(n))[::-1] if axes is None else [a % n for a in axes]
    pattern = " ".join(NAMES[:n]) + " -> " + " ".join(NAMES[a] for a in perm)
    x = np.arange(math.prod(shape), dtype=np.int32).reshape(shape)
    assert bs.einops.rearrange(x, pattern).tobytes() == bs.numpy.transpose(x, axes).tobytes()
