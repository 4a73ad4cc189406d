"""The Python API: signatures, parameter forms, dtypes, views, out=,
threads=, errors, and the GIL released while data moves."""

from __future__ import annotations

import array
import inspect
import threading
import time

import numpy as np
import pytest

import blockshuffle as bs
from reference import reference

def s2b(x, **kw):
    return bs.tf.space_to_batch_nd(x, [2, 2], [[0, 0], [0, 2]], **kw)


def s2b_ref(x):
    return reference("tf", "space_to_batch_nd", x, {"block_shape": [2, 2], "paddings": [[0, 0], [0, 2]]})


def same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


# -- signatures ---------------------------------------------------------------

SIGNATURES = {
    bs.tf.space_to_batch_nd: ["input", "block_shape", "paddings"],
    bs.tf.batch_to_space_nd: ["input", "block_shape", "crops"],
    bs.tf.space_to_batch: ["input", "paddings", "block_size"],
    bs.tf.batch_to_space: ["input", "crops", "block_size"],
    bs.tf.space_to_depth: ["input", "block_size", "data_format"],
    bs.tf.depth_to_space: ["input", "block_size", "data_format"],
    bs.openvino.space_to_batch: ["data", "block_shape", "pads_begin", "pads_end"],
    bs.openvino.batch_to_space: ["data", "block_shape", "crops_begin", "crops_end"],
    bs.openvino.space_to_depth: ["data", "block_size", "mode"],
    bs.openvino.depth_to_space: ["data", "block_size", "mode"],
    bs.onnx.space_to_depth: ["input", "blocksize"],
    bs.onnx.depth_to_space: ["input", "blocksize", "mode"],
    bs.torch.pixel_shuffle: ["input", "upscale_factor"],
    bs.torch.pixel_unshuffle: ["input", "downscale_factor"],
}


@pytest.mark.parametrize("fn", SIGNATURES, ids=lambda f: f"{f.__module__}.{f.__name__}")
def test_signature_docstring_and_output_shape(fn):
    params = list(inspect.signature(fn).parameters)
    assert params[: len(SIGNATURES[fn])] == SIGNATURES[fn]
    assert "out" in params and "threads" in params
    assert ">>>" in fn.__doc__ and "Raises:" in fn.__doc__
    assert callable(fn.output_shape) and fn.output_shape.__doc__


def test_defaults():
    x = np.arange(16).reshape(1, 2, 2, 4)
    assert same(bs.tf.depth_to_space(x, 2), bs.tf.depth_to_space(x, 2, "NHWC"))
    y = np.arange(32).reshape(1, 8, 2, 2)
    assert same(bs.onnx.depth_to_space(y, 2), bs.onnx.depth_to_space(y, 2, mode="DCR"))
    assert not same(bs.onnx.depth_to_space(y, 2), bs.onnx.depth_to_space(y, 2, mode="CRD"))


def test_keywords_and_positional_agree():
    x = np.arange(2 * 6 * 10 * 3 * 3, dtype=np.float32).reshape(2, 6, 10, 3, 3)
    args = ([1, 2, 4, 3, 1], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0])
    a = bs.openvino.space_to_batch(x, *args)
    b = bs.openvino.space_to_batch(pads_end=args[2], data=x, pads_begin=args[1], block_shape=args[0])
    assert same(a, b) and a.shape == (48, 3, 3, 1, 3)
    back = bs.openvino.batch_to_space(a, *args)
    assert same(back, x)


# -- parameter forms -------------------------------------------------------------

@pytest.mark.parametrize(
    "block, pads",
    [
        ([2, 2], [[0, 0], [0, 2]]),
        ((2, 2), ((0, 0), (0, 2))),
        (np.array([2, 2]), np.array([[0, 0], [0, 2]])),
        (np.array([2, 2], dtype=np.int32), np.array([[0, 0], [0, 2]], dtype=np.uint8)),
        ([np.int64(2), np.int16(2)], [np.array([0, 0]), (0, 2)]),
    ],
)
def test_parameter_forms(block, pads):
    x = np.arange(2 * 4 * 6 * 3, dtype=np.int16).reshape(2, 4, 6, 3)
    assert same(bs.tf.space_to_batch_nd(x, block, pads), s2b_ref(x))
    assert bs.tf.space_to_batch_nd.output_shape(x.shape, block, pads) == (8, 2, 4, 3)
    assert bs.tf.space_to_batch_nd.output_shape(list(x.shape), block, pads) == (8, 2, 4, 3)
    assert bs.tf.space_to_batch_nd.output_shape(np.array(x.shape), block, pads) == (8, 2, 4, 3)


def test_empty_block_shape():
    x = np.arange(6).reshape(2, 3)
    assert same(bs.tf.space_to_batch_nd(x, [], []), x)
    assert same(bs.tf.space_to_batch_nd(x, np.array([], dtype=np.int64), np.zeros((0, 2), dtype=np.int64)), x)


def test_scalar_parameters():
    x = np.arange(32).reshape(1, 8, 2, 2)
    want = bs.torch.pixel_shuffle(x, 2)
    for r in (np.int8(2), np.array(2), np.uint64(2)):
        assert same(bs.torch.pixel_shuffle(x, r), want)


# -- errors ---------------------------------------------------------------------

@pytest.mark.parametrize(
    "call, message",
    [
        (lambda x: bs.tf.space_to_batch_nd(x, [2, 2], [[0, 1], [0, 0]]), "block_shape[0] = 2"),
        (lambda x: bs.tf.space_to_batch_nd(x, [2, 2], [[0, 0]]), "paddings"),
        (lambda x: bs.tf.space_to_batch_nd(x, [2, 2], [0, 0, 0, 0]), "[M, 2]"),
        (lambda x: bs.tf.space_to_batch_nd(x, [0, 2], [[0, 0], [0, 0]]), "block_shape[0] = 0 must be >= 1"),
        (lambda x: bs.tf.space_to_batch_nd(x, [2, 2], [[-1, 1], [0, 0]]), "must be >= 0"),
        (lambda x: bs.tf.space_to_batch_nd(x, [2, 2], [[0, 0], [0, 0]], threads=0), "threads"),
        (lambda x: bs.tf.space_to_batch_nd(x, [2, 2], [[0, 0], [0, 0]], threads=-2**70), "threads"),
        (lambda x: bs.tf.space_to_batch_nd(x, [2**63 - 1, 2], [[0, 0], [0, 0]]), "space-to-batch-nd"),
        (lambda x: bs.tf.space_to_batch_nd(x, [2**64, 2], [[0, 0], [0, 0]]), "64-bit"),
        (lambda x: bs.tf.space_to_depth(x, 2, "NCWH"), "NCWH"),
        (lambda x: bs.openvino.space_to_depth(x, 2, "last"), "last"),
        (lambda x: bs.onnx.depth_to_space(x, 2, "XYZ"), "XYZ"),
        (lambda x: bs.onnx.depth_to_space(x[0], 2), "rank"),
        (lambda x: bs.torch.pixel_shuffle(x, 3), "divisible"),
        (lambda x: bs.torch.pixel_unshuffle(np.float32(1), 2), "rank"),
        (lambda x: bs.tf.space_to_batch_nd(np.zeros((1,) * 33), [1], [[0, 0]]), "rank"),
        (lambda x: bs.tf.space_to_batch_nd.output_shape((1, -4, 4, 1), [2, 2], [[0, 0], [0, 0]]), "negative"),
        (lambda x: bs.tf.space_to_batch_nd.output_shape((2**62, 2**62, 4, 1), [2, 2], [[0, 0], [0, 0]]), ""),
    ],
)
def test_value_errors(call, message):
    x = np.zeros((1, 4, 4, 4), dtype=np.float32)
    with pytest.raises(ValueError) as e:
        call(x)
    assert message in str(e.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda x: bs.tf.space_to_batch_nd(x, "22", [[0, 0], [0, 0]]),
        lambda x: bs.tf.space_to_batch_nd(x, [2.0, 2.0], [[0, 0], [0, 0]]),
        lambda x: bs.tf.space_to_batch_nd(x, np.array([2.0, 2.0]), [[0, 0], [0, 0]]),
        lambda x: bs.tf.space_to_batch_nd(x, [True, 2], [[0, 0], [0, 0]]),
        lambda x: bs.tf.space_to_batch_nd(x, 2, [[0, 0], [0, 0]]),
        lambda x: bs.tf.space_to_depth(x, 2.0),
        lambda x: bs.tf.space_to_depth(x, None),
        lambda x: bs.tf.space_to_depth(x, 2, data_format=1),
        lambda x: bs.tf.space_to_depth(x, 2, out=[0] * 64),
        lambda x: bs.tf.space_to_depth(x, 2, out=np.empty((1, 2, 2, 16), dtype=np.float64)),
        lambda x: bs.tf.space_to_depth(x, 2, threads=1.5),
        lambda x: bs.tf.space_to_depth(np.array([[[[object()]]]]), 1),
        lambda x: bs.tf.space_to_depth(np.zeros((1, 2, 2, 1), dtype=[("a", "O")]), 2),
        lambda x: bs.tf.space_to_depth(x, 2, nonsense=1),
    ],
)
def test_type_errors(call):
    x = np.zeros((1, 4, 4, 4), dtype=np.float32)
    with pytest.raises(TypeError):
        call(x)


def test_out_validation():
    x = np.arange(64, dtype=np.float32).reshape(1, 4, 4, 4)
    with pytest.raises(ValueError, match="shape"):
        bs.tf.space_to_depth(x, 2, out=np.empty((1, 2, 2, 15), dtype=np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        bs.tf.space_to_depth(x, 2, out=np.empty((1, 2, 2, 32), dtype=np.float32)[..., ::2])
    with pytest.raises(ValueError, match="C-contiguous"):
        bs.tf.space_to_depth(x, 2, out=np.empty((16, 2, 2, 1), dtype=np.float32).T)
    ro = np.empty((1, 2, 2, 16), dtype=np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        bs.tf.space_to_depth(x, 2, out=ro)
    with pytest.raises(TypeError, match="dtype"):
        bs.tf.space_to_depth(x, 2, out=np.empty((1, 2, 2, 16), dtype=np.int32))
    # The native half checks on its own too (it is reachable directly).
    op = bs.tf.space_to_depth.operator(2)
    with pytest.raises(TypeError):
        op.native.run(x, np.empty((1, 2, 2, 16), dtype=np.int32))
    with pytest.raises(TypeError):
        op.native.run([1, 2], np.empty((1, 2, 2, 16), dtype=np.float32))
    big = np.arange(128, dtype=np.float32)
    want = op.native.run(big[:64].reshape(1, 4, 4, 4).copy())
    assert same(op.native.run(big[:64].reshape(1, 4, 4, 4), big[32:96].reshape(1, 2, 2, 16)), want)


def test_out_is_written_and_returned():
    x = np.random.default_rng(0).random((2, 4, 6, 3))
    out = np.full((8, 2, 4, 3), np.nan)
    assert s2b(x, out=out) is out
    assert same(out, s2b_ref(x))


def test_out_overlapping_the_input_is_handled():
    buf = np.arange(2 * 64, dtype=np.int32)
    x = buf[:64].reshape(1, 4, 4, 4)
    want = bs.tf.space_to_depth(x.copy(), 2)
    out = buf[16:80].reshape(1, 2, 2, 16)
    bs.tf.space_to_depth(x, 2, out=out)
    assert same(out, want)
    # In place, the output the input itself.
    y = np.arange(64, dtype=np.int32).reshape(1, 4, 4, 4)
    want = bs.torch.pixel_unshuffle(y.copy(), 2)
    bs.torch.pixel_unshuffle(y, 2, out=y.reshape(want.shape))
    assert same(y.reshape(want.shape), want)


# -- dtypes ----------------------------------------------------------------------

def dtypes():
    import ml_dtypes

    return [
        np.bool_, np.int8, np.uint16, ">i4", np.float16, np.float32, np.float64, np.complex128, np.longdouble,
        "V3", "S5", "U3", np.dtype([("a", "u1"), ("b", "<f4")]), np.dtype([("a", "u1"), ("b", "<f4")], align=True),
        np.dtype(("<i2", (3,))).base, "M8[ns]", "m8[s]",
        ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.int4,
    ]


@pytest.mark.parametrize("dtype", dtypes(), ids=str)
def test_every_dtype(dtype):
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(1)
    raw = rng.integers(0, 256, size=2 * 4 * 6 * 3 * dtype.itemsize, dtype=np.uint8)
    x = raw.view(dtype).reshape(2, 4, 6, 3)
    y = s2b(x)
    assert y.dtype == x.dtype
    assert same(y, s2b_ref(x))


def test_bfloat16_as_v2_and_ml_dtypes_agree():
    import ml_dtypes

    x = np.arange(2 * 4 * 6 * 3, dtype=np.float32).astype(ml_dtypes.bfloat16).reshape(2, 4, 6, 3)
    a = s2b(x)
    b = s2b(x.view("V2"))
    assert a.dtype == ml_dtypes.bfloat16 and b.dtype == np.dtype("V2")
    assert a.tobytes() == b.tobytes()


def test_structured_views_with_odd_strides_are_copied():
    rec = np.zeros((2, 4, 6, 3), dtype=[("a", "u1"), ("b", "<i4")])
    rec["b"] = np.arange(rec.size).reshape(rec.shape)
    field = rec["b"]  # strides 5-byte multiples, item size 4
    assert field.strides[-1] == 5
    assert same(s2b(field), s2b_ref(np.ascontiguousarray(field)))


# -- inputs that are not ndarrays, and views ------------------------------------

def test_array_likes():
    x = np.arange(2 * 4 * 6 * 3, dtype=np.int64).reshape(2, 4, 6, 3)
    want = s2b_ref(x)
    assert same(s2b(x.tolist()), want)
    assert same(s2b(memoryview(x)), want)

    class Wrapper:
        def __array__(self, dtype=None, copy=None):
            return x

    assert same(s2b(Wrapper()), want)
    flat = array.array("h", range(16))
    assert same(bs.torch.pixel_unshuffle(np.frombuffer(flat, dtype=np.int16).reshape(1, 4, 4), 2),
                reference("torch", "pixel_unshuffle", np.array(flat, dtype=np.int16).reshape(1, 4, 4),
                          {"downscale_factor": 2}))
    m = np.ma.masked_array(x, mask=x % 2 == 0)
    assert same(s2b(m), want)


@pytest.mark.parametrize(
    "view",
    [
        lambda b: b[:, :, ::2],
        lambda b: b[::2, 1:5, 2:14:2, :3],
        lambda b: b.transpose(1, 0, 2, 3)[:2, :4],
        lambda b: np.asfortranarray(b)[:2, :4, :6],
        lambda b: np.broadcast_to(b[:1, :1, :6, :1], (2, 4, 6, 3)),
        lambda b: np.broadcast_to(b[0, 0, 0, 0], (2, 4, 6, 3)),
        lambda b: b[:, :, :, 1:2][:2, :4, :6],
    ],
)
def test_views_without_copy(view):
    base = np.arange(4 * 8 * 16 * 4, dtype=np.float32).reshape(4, 8, 16, 4)
    v = view(base)
    v = v[:2, :4, :6, : v.shape[3]]
    assert same(s2b(v), s2b_ref(v))


@pytest.mark.parametrize(
    "view",
    [
        lambda b: b[::-1],
        lambda b: b[:, ::-1, ::-2],
        lambda b: b[::-1, :, :, ::-1].transpose(0, 2, 1, 3),
    ],
)
def test_negative_strides(view):
    base = np.arange(2 * 8 * 12 * 3, dtype=np.float32).reshape(2, 8, 12, 3)
    v = view(base)[:2, :4, :6, :3]
    assert same(s2b(v), s2b_ref(v))


def test_zero_size():
    x = np.zeros((0, 4, 4, 3), dtype=np.float32)
    assert s2b(x).shape == (0, 2, 3, 3)
    # A spatial dim of 0 padded to a whole block: the output is all padding.
    x = np.zeros((1, 0, 2, 1), dtype=np.int8)
    y = bs.tf.space_to_batch_nd(x, [2], [[1, 1]])
    assert y.shape == (2, 1, 2, 1) and not y.any()


# -- threads and the GIL ---------------------------------------------------------

@pytest.mark.parametrize("threads", [None, 1, 2, 3, 8])
def test_threads(threads):
    x = np.random.default_rng(2).integers(0, 255, size=(4, 3, 512, 512), dtype=np.uint8)
    want = reference("torch", "pixel_unshuffle", x, {"downscale_factor": 4})
    assert same(bs.torch.pixel_unshuffle(x, 4, threads=threads), want)


def test_gil_is_released_while_data_moves():
    x = np.ones((64, 64, 256, 64), dtype=np.float32)  # 256 MiB
    out = np.empty((64, 256, 128, 32), dtype=np.float32)
    bs.torch.pixel_unshuffle(x, 2, out=out, threads=1)  # warm the pages
    span = []
    ticks = []
    stop = threading.Event()

    def run():
        t0 = time.perf_counter()
        for _ in range(3):
            bs.torch.pixel_unshuffle(x, 2, out=out, threads=1)
        span.extend([t0, time.perf_counter()])

    def count():
        while not stop.is_set():
            ticks.append(time.perf_counter())

    counter = threading.Thread(target=count)
    counter.start()
    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    stop.set()
    counter.join()
    t0, t1 = span
    inside = [t for t in ticks if t0 <= t <= t1]
    gaps = np.diff([t0] + inside + [t1])
    # Held, the GIL would stop the counter for a whole call (a third of the span).
    assert len(inside) > 1000
    assert gaps.max() < (t1 - t0) / 6, (gaps.max(), t1 - t0)


def test_huge_thread_counts_are_capped():
    x = np.zeros((4, 3, 64, 64), dtype=np.uint8)
    t0 = time.perf_counter()
    for t in (10**6, 2**62, 2**70, np.uint64(2**64 - 1)):
        bs.torch.pixel_unshuffle(x, 4, threads=t)
    assert time.perf_counter() - t0 < 5


def test_large_outputs_reuse_cached_buffers():
    from blockshuffle import _native

    x = np.arange(2 * 4 * 512 * 512, dtype=np.float32).reshape(2, 4, 512, 512)
    want = reference("torch", "pixel_unshuffle", x, {"downscale_factor": 2})
    try:
        bs.set_output_cache(1 << 30)
        y = bs.torch.pixel_unshuffle(x, 2)
        assert isinstance(y.base, _native.OutputBuffer) and same(y, want)
        address = y.ctypes.data
        view = y[1]
        del y
        # A view keeps the buffer: the next output gets other memory.
        z = bs.torch.pixel_unshuffle(x, 2)
        assert z.ctypes.data != address and same(view, want[1])
        del view, z
        # Both buffers are free now: the next output reuses one of them.
        w = bs.torch.pixel_unshuffle(x, 2)
        assert same(w, want)
        del w
        bs.set_output_cache(0)
        v = bs.torch.pixel_unshuffle(x, 2)
        assert same(v, want) and v.flags.writeable and v.flags.c_contiguous and v.flags.aligned
        # Small outputs are numpy's own.
        assert bs.torch.pixel_unshuffle(x[:, :, :8, :8], 2).base is None
    finally:
        bs.set_output_cache(1 << 30)


def test_the_cache_keeps_the_most_recently_freed_buffers():
    from blockshuffle import _native

    def output(mib):
        return bs.torch.pixel_unshuffle(np.zeros((1, 1, 2, mib << 19), dtype=np.uint8), 2)

    mib = 1 << 20
    try:
        bs.set_output_cache(0)
        assert _native.output_cache_info() == (0, 0)
        bs.set_output_cache(1 << 30)
        for size in (8, 12, 16, 20, 24):  # none fits another's buffer: the oldest is evicted
            output(size)
        assert _native.output_cache_info() == (4, (12 + 16 + 20 + 24) * mib)
        output(6)  # nothing fits 6 MiB (8 is more than a quarter more): new memory, then kept
        assert _native.output_cache_info() == (4, (16 + 20 + 24 + 6) * mib)
        a = output(20)  # reuses the 20 MiB buffer
        assert _native.output_cache_info() == (3, (16 + 24 + 6) * mib)
        del a
        bs.set_output_cache(30 * mib)  # the oldest go until 30 MiB are left
        assert _native.output_cache_info() == (2, (6 + 20) * mib)
    finally:
        bs.set_output_cache(1 << 30)
