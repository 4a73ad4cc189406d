"""blockshuffle.dask on a real distributed.LocalCluster (2 worker processes,
loopback only): byte for byte the in-memory result, for every operator, on
irregular chunks; every output chunk from just the elements it needs."""

from __future__ import annotations

import math

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import blockshuffle as bs  # noqa: E402
import blockshuffle.dask as bsd  # noqa: E402
from blockshuffle.dask import _graph  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None,
        worker_dashboard_address=None, protocol="tcp",
    ) as cluster, distributed.Client(cluster) as c:
        yield c


# (framework, function, params, input shape, input chunks)
CASES = [
    ("tf", "space_to_batch_nd", dict(block_shape=[2, 2], paddings=[[0, 0], [0, 0]]), (3, 8, 12, 5), (2, 3, 5, 2)),
    ("tf", "space_to_batch_nd", dict(block_shape=[3, 2], paddings=[[1, 2], [0, 1]]), (2, 9, 7, 3), (1, 4, 3, 3)),
    ("tf", "space_to_batch_nd", dict(block_shape=[2], paddings=[[3, 1]]), (5, 4, 6), (2, 3, 4)),
    ("tf", "batch_to_space_nd", dict(block_shape=[2, 2], crops=[[1, 0], [0, 3]]), (12, 4, 5, 3), (5, 3, 2, 2)),
    ("tf", "batch_to_space_nd", dict(block_shape=[3, 1, 2], crops=[[0, 2], [0, 0], [1, 1]]), (18, 3, 2, 4, 2), (7, 2, 1, 3, 1)),
    ("tf", "space_to_batch", dict(paddings=[[1, 1], [2, 0]], block_size=2), (2, 6, 6, 3), (1, 4, 4, 2)),
    ("tf", "batch_to_space", dict(crops=[[0, 1], [1, 0]], block_size=3), (18, 2, 3, 2), (4, 1, 2, 1)),
    ("tf", "space_to_depth", dict(block_size=2), (2, 8, 6, 6), (1, 3, 4, 4)),
    ("tf", "space_to_depth", dict(block_size=3, data_format="NCHW"), (2, 5, 9, 6), (2, 2, 4, 5)),
    ("tf", "space_to_depth", dict(block_size=2, data_format="NCHW_VECT_C"), (1, 3, 4, 6, 4), (1, 2, 3, 4, 3)),
    ("tf", "depth_to_space", dict(block_size=2), (2, 3, 5, 12), (1, 2, 2, 5)),
    ("tf", "depth_to_space", dict(block_size=2, data_format="NCHW"), (2, 12, 3, 4), (2, 5, 2, 3)),
    ("tf", "depth_to_space", dict(block_size=2, data_format="NCHW_VECT_C"), (2, 8, 3, 2, 4), (1, 3, 2, 1, 4)),
    ("openvino", "space_to_batch", dict(block_shape=[1, 2, 4, 3, 1], pads_begin=[0, 0, 1, 0, 0], pads_end=[0, 0, 1, 0, 0]),
     (2, 6, 10, 3, 3), (1, 4, 3, 2, 2)),
    ("openvino", "batch_to_space", dict(block_shape=[1, 2, 4, 3, 1], crops_begin=[0, 0, 1, 0, 0], crops_end=[0, 0, 1, 0, 0]),
     (48, 3, 3, 1, 3), (10, 2, 2, 1, 2)),
    ("openvino", "space_to_depth", dict(block_size=2, mode="blocks_first"), (2, 3, 4, 6, 2), (1, 2, 3, 4, 2)),
    ("openvino", "space_to_depth", dict(block_size=2, mode="depth_first"), (2, 3, 4, 6), (1, 2, 3, 5)),
    ("openvino", "depth_to_space", dict(block_size=2, mode="blocks_first"), (2, 12, 3, 5), (1, 5, 2, 3)),
    ("openvino", "depth_to_space", dict(block_size=2, mode="depth_first"), (1, 24, 2, 3, 2), (1, 7, 2, 2, 1)),
    ("onnx", "space_to_depth", dict(blocksize=2), (2, 3, 8, 6), (1, 2, 3, 4)),
    ("onnx", "depth_to_space", dict(blocksize=2, mode="DCR"), (2, 12, 3, 5), (1, 5, 2, 2)),
    ("onnx", "depth_to_space", dict(blocksize=3, mode="CRD"), (1, 18, 4, 3), (1, 7, 3, 2)),
    ("torch", "pixel_shuffle", dict(upscale_factor=2), (2, 3, 8, 5, 4), (1, 2, 3, 2, 3)),
    ("torch", "pixel_unshuffle", dict(downscale_factor=3), (2, 2, 9, 6), (1, 1, 4, 5)),
    ("numpy", "transpose", dict(axes=[2, 0, 3, 1]), (6, 5, 4, 3), (4, 2, 3, 2)),
    ("numpy", "transpose", dict(), (7, 5, 3), (3, 2, 2)),
    ("numpy", "transpose", dict(axes=[-1, 0, 1]), (4, 5, 6), (3, 3, 4)),
    ("einops", "rearrange", dict(pattern="b (h p1) (w p2) c -> b h w (p1 p2 c)", p1=2, p2=2), (2, 8, 6, 3),
     (1, 3, 4, 2)),
    ("einops", "rearrange", dict(pattern="... (c r1 r2) h w -> ... c (h r1) (w r2)", r1=2, r2=3), (2, 12, 3, 4),
     (1, 5, 2, 3)),
    ("einops", "rearrange", dict(pattern="a 1 (b c) ... -> (c a) () ... b", c=3), (4, 1, 6, 2, 3), (3, 1, 4, 2, 2)),
    ("einops", "rearrange", dict(pattern="b ... -> b (...)"), (3, 4, 5), (2, 3, 2)),
    ("einops", "rearrange", dict(pattern="(b1 b2) h w -> (h b1) (b2 w)", b1=2), (6, 5, 4), (4, 2, 3)),
]


def _operator(fw, fn, kw):
    """The operator of a case (einops' builder takes the lengths as one dict)."""
    build = getattr(getattr(bs, fw), fn).operator
    if fw == "einops":
        kw = dict(kw)
        return build(kw.pop("pattern"), kw)
    return build(**kw)


def _ids(c):
    return f"{c[0]}.{c[1]}-{'x'.join(map(str, c[3]))}"


def _data(shape, dtype):
    dtype = np.dtype(dtype)
    raw = np.random.default_rng(sum(shape)).integers(1, 256, size=math.prod(shape) * dtype.itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_equal_to_memory(client, case):
    fw, fn, kw, shape, chunks = case
    x = _data(shape, np.float32)
    want = getattr(getattr(bs, fw), fn)(x, **kw)
    dx = da.from_array(x, chunks=chunks)
    y = getattr(getattr(bsd, fw), fn)(dx, **kw)
    assert y.shape == want.shape and y.dtype == want.dtype
    got = client.compute(y).result()
    assert got.tobytes() == want.tobytes()
    # Only the input's and the operator's layers: nothing rechunked.
    assert len(y.dask.layers) == 2


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_chunks_of_one_and_bounded_regions(case):
    """Every chunk size 1 on input and output (the worst case for the
    index arithmetic), on the threaded scheduler; and with the default
    output chunks, each chunk's region holds at most 4 chunks' elements."""
    fw, fn, kw, shape, _ = case
    x = _data(shape, "<V3")
    want = getattr(getattr(bs, fw), fn)(x, **kw)
    dfn = getattr(getattr(bsd, fw), fn)
    y = dfn(da.from_array(x, chunks=1), **kw, chunks=1)
    assert y.compute(scheduler="threads").tobytes() == want.tobytes()

    dx = da.from_array(x, chunks=[max(1, d // 2) for d in shape])
    y = dfn(dx, **kw)
    assert y.compute(scheduler="sync").tobytes() == want.tobytes()
    op = _operator(fw, fn, kw)
    model = op.model(shape)
    checked = 0
    for key, task in dict(y.dask).items():
        if key[0] == y.name:
            spec = _task_spec(task)
            if spec is None:
                continue
            checked += 1
            _, ranges, _, needed, _ = spec
            region = math.prod(len(v) + int(p) for v, p in needed)
            assert region <= 4 * math.prod(b - a for a, b in ranges)
    assert checked > 0 or want.size == 0
    assert model.out_len == want.shape


def _task_spec(task):
    """The (model, ranges, dtype, needed, places) of an assembling task, in
    either of Dask's task representations."""
    if isinstance(task, tuple):
        return task[1] if task[0] is _graph._assemble else None
    func = getattr(task, "func", None)
    if func is not _graph._assemble:
        return None
    args = getattr(task, "args", ())
    spec = args[0]
    return getattr(spec, "value", spec)


def test_zero_size_and_padding_only():
    x = np.zeros((2, 0, 3, 1), dtype=np.int16)
    want = bs.tf.space_to_batch_nd(x, [2, 1], [[1, 1], [0, 0]])
    y = bsd.tf.space_to_batch_nd(da.from_array(x), [2, 1], [[1, 1], [0, 0]])
    assert y.compute().tobytes() == want.tobytes() and y.shape == want.shape
    x = np.zeros((0, 4, 4, 8), dtype=np.int16)
    assert bsd.tf.depth_to_space(da.from_array(x), 2).compute().shape == (0, 8, 8, 2)


def test_errors_are_raised_at_once():
    dx = da.zeros((1, 4, 4, 3), chunks=2)
    with pytest.raises(ValueError, match="block_shape"):
        bsd.tf.space_to_batch_nd(dx, [3, 3], [[0, 0], [0, 0]])
    with pytest.raises(TypeError):
        bsd.tf.space_to_batch_nd(dx, [2.5, 2], [[0, 0], [0, 0]])
    with pytest.raises(TypeError):
        bsd.tf.space_to_batch_nd(da.from_array(np.array([[[[None]]]], dtype=object), chunks=1), [1, 1], [[0, 0], [0, 0]])


def test_dtypes_and_signatures():
    import inspect

    import ml_dtypes

    for fw in ("tf", "openvino", "onnx", "torch", "numpy", "einops"):
        for name in getattr(bs, fw).__all__:
            mem, dsk = getattr(getattr(bs, fw), name), getattr(getattr(bsd, fw), name)
            p_mem = [p for p in inspect.signature(mem).parameters if p not in ("out", "threads")]
            # chunks= comes before a **axes_lengths (einops.rearrange's), which is last.
            var = ["axes_lengths"] if fw == "einops" else []
            assert list(inspect.signature(dsk).parameters) == [p for p in p_mem if p not in var] + ["chunks"] + var
            assert "Dask" in dsk.__doc__ and dsk.output_shape is mem.output_shape
    x = _data((2, 3, 4, 4), ml_dtypes.bfloat16)
    y = bsd.torch.pixel_unshuffle(da.from_array(x, chunks=(1, 2, 3, 3)), 2)
    assert y.dtype == x.dtype
    assert y.compute().tobytes() == bs.torch.pixel_unshuffle(x, 2).tobytes()


def test_general_errors_and_edges():
    dx = da.zeros((2, 6, 4), chunks=2)
    with pytest.raises(ValueError, match="repeat"):
        bsd.numpy.transpose(dx, [0, 0, 1])
    with pytest.raises(ValueError, match="out of bounds"):
        bsd.numpy.transpose(dx, [0, 1, 3])
    with pytest.raises(ValueError, match="infer"):
        bsd.einops.rearrange(dx, "a (b c) d -> a b c d")
    with pytest.raises(ValueError, match="divisible"):
        bsd.einops.rearrange(dx, "a (b c) d -> a b c d", b=4)
    with pytest.raises(TypeError):
        bsd.einops.rearrange(dx, "a (b c) d -> a b c d", b=2.5)
    # A length given with chunks=, and zero-size and 0-d inputs.
    x = _data((2, 6, 4), np.int16)
    y = bsd.einops.rearrange(da.from_array(x, chunks=(1, 4, 3)), "a (b c) d -> (d b) a c", c=3, chunks=(3, 1, 2))
    assert y.chunks == ((3, 3, 2), (1, 1), (2, 1))
    assert y.compute().tobytes() == bs.einops.rearrange(x, "a (b c) d -> (d b) a c", c=3).tobytes()
    z = np.zeros((0, 3, 4), dtype=np.uint8)
    assert bsd.einops.rearrange(da.from_array(z), "a b c -> c (a b)").compute().shape == (4, 0)
    assert bsd.numpy.transpose(da.from_array(z)).compute().shape == (4, 3, 0)
    s = np.array(7, dtype=np.int64)
    assert bsd.numpy.transpose(da.from_array(s)).compute() == 7
    assert bsd.einops.rearrange(da.from_array(s), "-> 1 ()").compute().tolist() == [[7]]


def test_zarr_to_zarr(client, tmp_path):
    zarr = pytest.importorskip("zarr")
    src = zarr.open_array(str(tmp_path / "in.zarr"), mode="w", shape=(4, 3, 64, 48), chunks=(1, 3, 32, 16),
                          dtype="uint8")
    x = _data((4, 3, 64, 48), np.uint8)
    src[...] = x
    y = bsd.torch.pixel_unshuffle(da.from_zarr(str(tmp_path / "in.zarr")), downscale_factor=4)
    y.to_zarr(str(tmp_path / "out.zarr"), compute=True)
    got = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")[...]
    assert got.tobytes() == bs.torch.pixel_unshuffle(x, 4).tobytes()


def test_box_chunks_are_transposed_not_gathered(monkeypatch):
    """Default chunks of an unpadded operator are boxes of factor digits:
    each is computed by a transpose of its region (no gather), equal to the
    in-memory result; an irregular chunking falls back on the gather."""
    x = _data((4, 3, 16, 24), np.uint16)
    want = bs.torch.pixel_unshuffle(x, 4)
    calls = {"gather": 0}
    real = np.searchsorted

    def counting(*args, **kwargs):
        calls["gather"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(_graph.np, "searchsorted", counting)
    y = bsd.torch.pixel_unshuffle(da.from_array(x, chunks=(1, 3, 8, 8)), 4)
    calls["gather"] = 0  # the graph's own searchsorted calls are done
    assert y.compute(scheduler="sync").tobytes() == want.tobytes()
    assert calls["gather"] == 0
    y = bsd.torch.pixel_unshuffle(da.from_array(x, chunks=(1, 3, 8, 8)), 4, chunks=(3, 7, 3, 5))
    calls["gather"] = 0
    assert y.compute(scheduler="sync").tobytes() == want.tobytes()
    assert calls["gather"] > 0


def test_random_rearranges_and_transposes():
    """The factor models of random einops patterns and transposes (the
    property tests' strategies), on random chunks, against memory."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    import test_properties_general as tg  # a module, so its tests are not collected twice

    def chunks_of(draw, shape):
        return tuple(draw(st.integers(1, max(1, d))) for d in shape)

    @settings(max_examples=60, deadline=None)
    @given(st.data())
    def check(data):
        if data.draw(st.booleans()):
            shape, pattern, lengths, *_ = data.draw(tg.rearranges())
            fn, mem, args = bsd.einops.rearrange, bs.einops.rearrange, (pattern,)
        else:
            shape, axes = data.draw(tg.transposes())
            lengths, fn, mem, args = {}, bsd.numpy.transpose, bs.numpy.transpose, (axes,)
        x = _data(shape, np.uint16)
        want = mem(x, *args, **lengths)
        y = fn(da.from_array(x, chunks=chunks_of(data.draw, shape)), *args, **lengths)
        assert y.shape == want.shape
        assert y.compute(scheduler="sync").tobytes() == want.tobytes()
        out_chunks = chunks_of(data.draw, want.shape)
        y = fn(da.from_array(x, chunks=chunks_of(data.draw, shape)), *args, chunks=out_chunks, **lengths)
        assert y.compute(scheduler="sync").tobytes() == want.tobytes()

    check()
