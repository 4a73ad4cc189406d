"""The general front-ends' parameters: what numpy and einops take, the
errors they raise, and the functions' signatures and stubs."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import blockshuffle as bs

X = np.arange(24, dtype=np.int32).reshape(2, 3, 4)


@pytest.mark.parametrize("axes", [(2, 0, 1), [2, 0, 1], np.array([2, 0, 1]), [np.int64(2), 0, np.uint8(1)], (-1, 0, 1)])
def test_transpose_axes_forms(axes):
    assert bs.numpy.transpose(X, axes).tobytes() == np.transpose(X, (2, 0, 1)).tobytes()
    assert bs.numpy.transpose(X, axes=axes).shape == (4, 2, 3)


def test_transpose_defaults_and_scalars():
    assert bs.numpy.transpose(X).tobytes() == X.T.copy().tobytes()
    assert bs.numpy.transpose(X, None).shape == (4, 3, 2)
    v = np.arange(5, dtype=np.uint8)
    assert bs.numpy.transpose(v, 0).tolist() == np.transpose(v, 0).tolist()
    s = np.array(3.5)
    assert bs.numpy.transpose(s).shape == () and bs.numpy.transpose(s, ()).shape == ()
    assert bs.numpy.transpose.output_shape((4, 5, 6)) == (6, 5, 4)
    assert bs.numpy.transpose.output_shape((4, 5, 6), axes=[0, 2, 1]) == (4, 6, 5)
    # A list converts through np.asarray, as numpy's does.
    assert bs.numpy.transpose([[1, 2], [3, 4]]).tolist() == [[1, 3], [2, 4]]


def test_transpose_errors():
    for axes, match in [([0, 1], "axes"), ([0, 1, 3], "out of bounds"), ([0, 1, -4], "out of bounds"),
                        ([0, 1, 1], "repeat"), ([0, 2, -1], "repeat")]:
        with pytest.raises(ValueError, match=match):
            bs.numpy.transpose(X, axes)
        with pytest.raises(np.exceptions.AxisError if "bounds" in match else ValueError):
            np.transpose(X, axes)  # numpy rejects the same (AxisError is a ValueError)
    for axes in ([0.0, 1, 2], "012", [True, False, 2], [[0, 1, 2]]):
        with pytest.raises((TypeError, ValueError)):
            bs.numpy.transpose(X, axes)
    with pytest.raises(TypeError):
        bs.numpy.transpose(X, [0.5, 1, 2])


def test_rearrange_lengths_and_errors():
    y = bs.einops.rearrange(X, "a b (c d) -> (a c) b d", d=np.int64(2))
    assert y.tobytes() == X.reshape(2, 3, 2, 2).transpose(0, 2, 1, 3).tobytes()
    assert y.shape == (4, 3, 2)
    assert bs.einops.rearrange(X, b"a b c -> c b a").shape == (4, 3, 2)
    assert bs.einops.rearrange.output_shape(X.shape, pattern="a b (c d) -> (a c) b d", c=1) == (2, 3, 4)
    with pytest.raises(ValueError, match="names no axis"):
        bs.einops.rearrange(X, "a b c -> c b a", z=2)
    with pytest.raises(ValueError, match="divisible"):
        bs.einops.rearrange(X, "a b (c d) -> a b c d", d=3)
    with pytest.raises(ValueError, match="rank"):
        bs.einops.rearrange(X, "a b -> b a")
    with pytest.raises(ValueError):
        bs.einops.rearrange(X, "a b (c d) -> a b c d", d=-2)
    with pytest.raises(ValueError):
        bs.einops.rearrange(X, "a b c -> a b")
    with pytest.raises(TypeError):
        bs.einops.rearrange(X, "a b (c d) -> a b c d", d=2.0)
    with pytest.raises(TypeError):
        bs.einops.rearrange(X, "a b (c d) -> a b c d", d=True)
    with pytest.raises(TypeError):
        bs.einops.rearrange(X, 3)
    out = np.empty((4, 3, 2), dtype=np.int32)
    assert bs.einops.rearrange(X, "a b c -> c b a", out=out, threads=1) is out
    assert out.tobytes() == X.transpose(2, 1, 0).tobytes()


def test_signatures():
    assert list(inspect.signature(bs.numpy.transpose).parameters) == ["a", "axes", "out", "threads"]
    params = inspect.signature(bs.einops.rearrange).parameters
    assert list(params) == ["tensor", "pattern", "out", "threads", "axes_lengths"]
    assert params["axes_lengths"].kind is inspect.Parameter.VAR_KEYWORD
    assert list(inspect.signature(bs.einops.rearrange.output_shape).parameters) == [
        "shape", "pattern", "axes_lengths"]
    assert "**axes_lengths" in bs.einops.rearrange.output_shape.__doc__
    assert bs.numpy.transpose.operator((1, 0)).name == "numpy transpose"
    assert bs.einops.rearrange.operator("a b -> b a", {"a": 2}).output_shape((2, 3)) == (3, 2)
    assert "numpy" in bs.__all__ and "einops" in bs.__all__
