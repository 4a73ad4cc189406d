"""Hypothesis: every operator, random valid parameters and shapes, random
dtypes and views (offsets, steps, permuted and zero strides; negative
steps in their own test), against the numpy reshape/transpose reference."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference import function, reference

DTYPES = ["u1", "<i2", ">i4", "<f4", "<f8", "c16", "V3", "S7", "U2", [("a", "u1"), ("b", "<f4")], "bfloat16"]
SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _dtype(d):
    if d == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(d)


@st.composite
def cases(draw):
    """(framework, op, kwargs, input shape) of a valid operation."""
    kind = draw(st.sampled_from([
        "tf s2b_nd", "tf b2s_nd", "tf s2b", "tf b2s", "tf s2d", "tf d2s",
        "ov s2b", "ov b2s", "ov s2d", "ov d2s", "onnx s2d", "onnx d2s", "torch ps", "torch pu",
    ]))
    dim = st.integers(0, 3)
    small = st.integers(1, 3)
    if kind in ("tf s2b_nd", "tf b2s_nd", "tf s2b", "tf b2s"):
        v1 = kind in ("tf s2b", "tf b2s")
        m = 2 if v1 else draw(st.integers(0, 3))
        rest = [draw(small)] if v1 else draw(st.lists(st.integers(1, 3), max_size=2))
        if v1:
            b = draw(small)
            block = [b, b]
        else:
            block = [draw(small) for _ in range(m)]
        if kind.split()[1].startswith("s2b"):
            pads, spatial = [], []
            for bi in block:
                outer = draw(dim)
                a = draw(st.integers(0, 3))
                total = outer * bi
                e = draw(st.integers(0, 3))
                # pad begin a, end e, spatial = total - a - e, kept >= 0
                a, e = min(a, total), min(e, max(0, total - min(a, total)))
                pads.append([a, e])
                spatial.append(total - a - e)
            shape = [draw(st.integers(0, 2))] + spatial + rest
            if v1:
                return "tf", "space_to_batch", {"paddings": pads, "block_size": block[0]}, shape
            return "tf", "space_to_batch_nd", {"block_shape": block, "paddings": pads}, shape
        crops, spatial = [], []
        for bi in block:
            s = draw(dim)
            full = s * bi
            a = draw(st.integers(0, full))
            e = draw(st.integers(0, full - a))
            crops.append([a, e])
            spatial.append(s)
        shape = [draw(st.integers(0, 2)) * math.prod(block)] + spatial + rest
        if v1:
            return "tf", "batch_to_space", {"crops": crops, "block_size": block[0]}, shape
        return "tf", "batch_to_space_nd", {"block_shape": block, "crops": crops}, shape
    if kind in ("ov s2b", "ov b2s"):
        n = draw(st.integers(2, 5))
        block = [1] + [draw(small) for _ in range(n - 1)]
        if kind == "ov s2b":
            begin, end, shape = [0], [0], [draw(st.integers(0, 2))]
            for bi in block[1:]:
                total = draw(dim) * bi
                a = draw(st.integers(0, total))
                e = draw(st.integers(0, total - a))
                begin.append(a)
                end.append(e)
                shape.append(total - a - e)
            return "openvino", "space_to_batch", {"block_shape": block, "pads_begin": begin, "pads_end": end}, shape
        begin, end, shape = [0], [0], [draw(st.integers(0, 2)) * math.prod(block)]
        for bi in block[1:]:
            s = draw(dim)
            a = draw(st.integers(0, s * bi))
            e = draw(st.integers(0, s * bi - a))
            begin.append(a)
            end.append(e)
            shape.append(s)
        return "openvino", "batch_to_space", {"block_shape": block, "crops_begin": begin, "crops_end": end}, shape
    if kind in ("tf s2d", "tf d2s"):
        b = draw(st.integers(2, 3))
        fmt = draw(st.sampled_from(["NHWC", "NCHW", "NCHW_VECT_C"]))
        n, c, h, w = draw(dim), draw(small), draw(dim), draw(dim)
        if kind == "tf s2d":
            h, w = h * b, w * b
        else:
            c = c * b * b
        shape = {"NHWC": [n, h, w, c], "NCHW": [n, c, h, w], "NCHW_VECT_C": [n, c, h, w, 4]}[fmt]
        return "tf", "space_to_depth" if kind == "tf s2d" else "depth_to_space", {"block_size": b, "data_format": fmt}, shape
    if kind in ("ov s2d", "ov d2s"):
        b = draw(small)
        k = draw(st.integers(1, 3))
        mode = draw(st.sampled_from(["blocks_first", "depth_first"]))
        c = draw(small)
        sp = [draw(st.integers(0, 2)) for _ in range(k)]
        if kind == "ov s2d":
            shape = [draw(st.integers(0, 2)), c] + [s * b for s in sp]
            return "openvino", "space_to_depth", {"block_size": b, "mode": mode}, shape
        shape = [draw(st.integers(0, 2)), c * b**k] + sp
        return "openvino", "depth_to_space", {"block_size": b, "mode": mode}, shape
    if kind in ("onnx s2d", "onnx d2s"):
        b = draw(small)
        n, c, h, w = draw(dim), draw(small), draw(dim), draw(dim)
        if kind == "onnx s2d":
            return "onnx", "space_to_depth", {"blocksize": b}, [n, c, h * b, w * b]
        mode = draw(st.sampled_from(["DCR", "CRD"]))
        return "onnx", "depth_to_space", {"blocksize": b, "mode": mode}, [n, c * b * b, h, w]
    r = draw(small)
    lead = draw(st.lists(st.integers(0, 2), max_size=2))
    c, h, w = draw(small), draw(dim), draw(dim)
    if kind == "torch ps":
        return "torch", "pixel_shuffle", {"upscale_factor": r}, lead + [c * r * r, h, w]
    return "torch", "pixel_unshuffle", {"downscale_factor": r}, lead + [c, h * r, w * r]


@st.composite
def views(draw, shape, negative: bool):
    """An array of ``shape`` as a view: a random axis order, per axis a step
    (negative ones if ``negative``) and an offset into a larger base, or a
    broadcast (zero stride)."""
    dtype = _dtype(draw(st.sampled_from(DTYPES)))
    n = len(shape)
    perm = draw(st.permutations(range(n)))
    steps = [draw(st.sampled_from([1, 2, 3, -1, -2] if negative else [1, 2, 3])) for _ in range(n)]
    offsets = [draw(st.integers(0, 2)) for _ in range(n)]
    broadcast = [draw(st.booleans()) and draw(st.booleans()) for _ in range(n)]
    base_shape = [(1 if broadcast[a] else shape[a]) * abs(steps[a]) + offsets[a] for a in range(n)]
    base_p = [base_shape[a] for a in perm]
    seed = draw(st.integers(0, 2**32 - 1))
    raw = np.random.default_rng(seed).integers(0, 256, size=math.prod(base_p) * dtype.itemsize, dtype=np.uint8)
    base = raw.view(dtype).reshape(base_p).transpose(np.argsort(perm))
    index = []
    for a in range(n):
        length = 1 if broadcast[a] else shape[a]
        if steps[a] > 0:
            index.append(slice(offsets[a], offsets[a] + length * steps[a], steps[a]))
        else:
            start = offsets[a] + length * abs(steps[a]) - 1
            index.append(slice(start, None if start - length * abs(steps[a]) < 0 else start - length * abs(steps[a]),
                               steps[a]))
    v = base[tuple(index)]
    v = np.broadcast_to(v, shape)
    assert v.shape == tuple(shape)
    return v


def check(fw, op, kw, x, threads):
    fn = function(fw, op)
    want = reference(fw, op, x, kw)
    got = fn(x, **kw, threads=threads)
    assert got.dtype == x.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    assert fn.output_shape(x.shape, **kw) == want.shape
    out = np.empty_like(want)
    fn(x, **kw, out=out)
    assert out.tobytes() == want.tobytes()


@SETTINGS
@given(st.data())
def test_against_numpy(data):
    fw, op, kw, shape = data.draw(cases())
    x = data.draw(views(shape, negative=False))
    check(fw, op, kw, x, data.draw(st.sampled_from([None, 1, 2])))


@SETTINGS
@given(st.data())
def test_against_numpy_negative_strides(data):
    fw, op, kw, shape = data.draw(cases())
    x = data.draw(views(shape, negative=True))
    check(fw, op, kw, x, None)


@settings(max_examples=100, deadline=None)
@given(cases())
def test_contiguous_input(case):
    fw, op, kw, shape = case
    x = np.arange(math.prod(shape), dtype=np.int32).reshape(shape)
    check(fw, op, kw, x, 1)
