"""Every golden case of the project's conformance set, through the Python
API: bit-exact outputs, and the framework's rejections as ValueError."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from reference import case_call, function

DATA = Path(__file__).resolve().parents[2] / "crates" / "blockshuffle" / "tests" / "data" / "conformance"
CASES = [json.loads(line) for line in (DATA / "cases.jsonl").read_text().splitlines() if line.strip()]


def test_the_set_is_there():
    assert len(CASES) >= 293


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case):
    fw, op, kw = case_call(case)
    fn = function(fw, op)
    x = np.load(DATA / case["input"])
    if case["expect"] is None:
        with pytest.raises(ValueError):
            fn(x, **kw)
        with pytest.raises(ValueError):
            fn.output_shape(x.shape, **kw)
        return
    want = np.load(DATA / case["expect"])
    got = fn(x, **kw)
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    assert fn.output_shape(x.shape, **kw) == want.shape
    # The same through out=, on one thread, and from a Fortran-ordered copy.
    out = np.empty_like(want)
    assert fn(np.asfortranarray(x), **kw, out=out, threads=1) is out
    assert out.tobytes() == want.tobytes()
