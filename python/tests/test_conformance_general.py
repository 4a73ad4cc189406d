"""Every golden case of the general conformance set (``np.transpose`` and
``einops.rearrange``, conformance-general/) through the Python API:
bit-exact outputs, and the oracle's rejections as ValueError."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import blockshuffle as bs

DATA = Path(__file__).resolve().parents[2] / "crates" / "blockshuffle" / "tests" / "data" / "conformance-general"
CASES = [json.loads(line) for line in (DATA / "cases.jsonl").read_text().splitlines() if line.strip()]


def call(case: dict):
    """``(function, positional parameters, keyword parameters)`` of a case's
    command line (``--axes A0,A1`` / ``--pattern P --sizes name=v,...``)."""
    args = case["args"]
    flags = {args[i][2:]: args[i + 1] for i in range(0, len(args), 2)}
    if case["framework"] == "numpy":
        assert case["op"] == "transpose" and set(flags) <= {"axes"}
        if "axes" not in flags:
            return bs.numpy.transpose, (), {}
        axes = [int(v) for v in flags["axes"].split(",")] if flags["axes"] else []
        return bs.numpy.transpose, (axes,), {}
    assert (case["framework"], case["op"]) == ("einops", "rearrange") and set(flags) <= {"pattern", "sizes"}
    sizes = {}
    for item in filter(None, flags.get("sizes", "").split(",")):
        name, value = item.split("=")
        sizes[name] = int(value)
    return bs.einops.rearrange, (flags["pattern"],), sizes


def test_the_set_is_there():
    assert len(CASES) == 300
    assert sum(c["expect"] is None for c in CASES) == 49
    assert sum(np.load(DATA / c["input"]).ndim == 0 and c["framework"] == "numpy" and c["expect"] is not None
               for c in CASES) == ZERO_D_CASES


# The 21 cases of a 0-d input to np.transpose: their .out.npy holds shape
# (1,), but np.transpose of a 0-d array is 0-d (numpy documents
# ``transpose(a).shape == a.shape[::-1]``; the oracle's harness evidently
# passed the result through np.ascontiguousarray, which makes a 0-d array
# 1-d). As the Rust conformance test does, these are checked against
# numpy's own rule: the same dtype and element bytes, as a 0-d output.
ZERO_D_CASES = 21


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case):
    fn, args, kw = call(case)
    x = np.load(DATA / case["input"])
    if case["expect"] is None:
        with pytest.raises(ValueError):
            fn(x, *args, **kw)
        with pytest.raises(ValueError):
            fn.output_shape(x.shape, *args, **kw)
        return
    want = np.load(DATA / case["expect"])
    if case["framework"] == "numpy" and x.ndim == 0 and want.shape == (1,):
        want = want.reshape(())  # numpy's rule (see ZERO_D_CASES)
        assert np.transpose(x, *args).shape == ()
    got = fn(x, *args, **kw)
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    assert fn.output_shape(x.shape, *args, **kw) == want.shape
    # The same through out=, on one thread, and from a Fortran-ordered copy.
    # (np.asfortranarray makes a 0-d array 1-d: those stay as they are.)
    out = np.empty_like(want)
    assert fn(np.asfortranarray(x) if x.ndim else x, *args, **kw, out=out, threads=1) is out
    assert out.tobytes() == want.tobytes()
