"""numpy reference implementations of every operator (pad / reshape /
transpose / reshape, as the frameworks' specifications write them), and the
mapping of the conformance set's command lines onto the Python API."""

from __future__ import annotations

import math

import numpy as np

import blockshuffle as bs


def _interleave(n: int) -> list[int]:
    return [a for i in range(n) for a in (2 * i, 2 * i + 1)]


def space_to_batch(x: np.ndarray, block: list[int], pads: list[tuple[int, int]], first: int = 1) -> np.ndarray:
    """Pads axes ``first .. first + M - 1``, moves their blocks into axis 0
    (block positions outermost): TF's SpaceToBatchND and OpenVINO's
    SpaceToBatch (first = 1 with the batch's own block and pads dropped)."""
    m = len(block)
    rest = list(x.shape[1 + m:])
    widths = [(0, 0)] + list(pads) + [(0, 0)] * len(rest)
    p = np.zeros([d + a + b for d, (a, b) in zip(x.shape, widths)], dtype=x.dtype)  # zero bytes
    p[tuple(slice(a, a + d) for d, (a, _) in zip(x.shape, widths))] = x
    n = p.shape[0]
    split = [n] + [v for i in range(m) for v in (p.shape[1 + i] // block[i], block[i])] + rest
    y = p.reshape(split)
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + list(range(1 + 2 * m, len(split)))
    y = y.transpose(perm)
    return y.reshape([n * math.prod(block)] + [p.shape[1 + i] // block[i] for i in range(m)] + rest)


def batch_to_space(x: np.ndarray, block: list[int], crops: list[tuple[int, int]]) -> np.ndarray:
    m = len(block)
    rest = list(x.shape[1 + m:])
    n = x.shape[0] // math.prod(block)
    y = x.reshape(list(block) + [n] + list(x.shape[1:]))
    # axes: B_1..B_M, n, s_1..s_M, rest
    perm = [m] + [a for i in range(m) for a in (m + 1 + i, i)] + list(range(2 * m + 1, y.ndim))
    y = y.transpose(perm).reshape([n] + [x.shape[1 + i] * block[i] for i in range(m)] + rest)
    idx = (slice(None),) + tuple(slice(c0, y.shape[1 + i] - c1) for i, (c0, c1) in enumerate(crops))
    return y[idx]


def space_to_depth(x: np.ndarray, b: int, lead: int, k: int, channel: int, blocks_first: bool) -> np.ndarray:
    """Splits the ``k`` axes after ``lead`` by ``b`` and merges the blocks
    into axis ``channel`` (before the channel or after it)."""
    shape = list(x.shape)
    split = []
    for a, d in enumerate(shape):
        split += [d // b, b] if lead <= a < lead + k else [d]
    y = x.reshape(split)
    pos = {}  # original axis -> index in split (outer), block factors after
    i = 0
    for a in range(len(shape)):
        pos[a] = i
        i += 2 if lead <= a < lead + k else 1
    blocks = [pos[a] + 1 for a in range(lead, lead + k)]
    perm = []
    for a in range(len(shape)):
        if a == channel:
            perm += blocks + [pos[a]] if blocks_first else [pos[a]] + blocks
        else:
            perm.append(pos[a])
    out = [d // b if lead <= a < lead + k else d for a, d in enumerate(shape)]
    out[channel] *= b**k
    return y.transpose(perm).reshape(out)


def depth_to_space(x: np.ndarray, b: int, lead: int, k: int, channel: int, blocks_first: bool) -> np.ndarray:
    shape = list(x.shape)
    c = shape[channel] // b**k
    ch = [b] * k + [c] if blocks_first else [c] + [b] * k
    split, where = [], {}
    for a, d in enumerate(shape):
        where[a] = len(split)
        split += ch if a == channel else [d]
    y = x.reshape(split)
    cbase = where[channel]
    c_axis = cbase + k if blocks_first else cbase
    block_axes = [cbase + i for i in range(k)] if blocks_first else [cbase + 1 + i for i in range(k)]
    perm = []
    for a in range(len(shape)):
        if a == channel:
            perm.append(c_axis)
        elif lead <= a < lead + k:
            perm += [where[a], block_axes[a - lead]]
        else:
            perm.append(where[a])
    out = [d * b if lead <= a < lead + k else d for a, d in enumerate(shape)]
    out[channel] = c
    return y.transpose(perm).reshape(out)


# ----------------------------------------------------------------------------
# Operators: (our function, reference, parameters) built from one description


def _pairs(flat):
    return [(flat[2 * i], flat[2 * i + 1]) for i in range(len(flat) // 2)]


def reference(framework: str, op: str, x: np.ndarray, p: dict) -> np.ndarray:
    """The reference result of the operator with keyword parameters ``p``
    (on the raw bytes of the elements: padding is zero bytes)."""
    x = np.asarray(x)
    raw = np.ascontiguousarray(x).view(f"V{x.dtype.itemsize}") if x.dtype.itemsize else x
    return np.ascontiguousarray(_reference(framework, op, raw, p)).view(x.dtype)


def _reference(framework: str, op: str, x: np.ndarray, p: dict) -> np.ndarray:
    n = x.ndim
    if framework == "tf":
        if op == "space_to_batch_nd":
            return space_to_batch(x, list(p["block_shape"]), [tuple(v) for v in p["paddings"]])
        if op == "batch_to_space_nd":
            return batch_to_space(x, list(p["block_shape"]), [tuple(v) for v in p["crops"]])
        if op == "space_to_batch":
            return space_to_batch(x, [p["block_size"]] * 2, [tuple(v) for v in p["paddings"]])
        if op == "batch_to_space":
            return batch_to_space(x, [p["block_size"]] * 2, [tuple(v) for v in p["crops"]])
        fmt = p.get("data_format", "NHWC")
        geo = (1, 2, 3, True) if fmt == "NHWC" else (2, 2, 1, True)
        fn = space_to_depth if op == "space_to_depth" else depth_to_space
        return fn(x, p["block_size"], *geo)
    if framework == "openvino":
        if op in ("space_to_batch", "batch_to_space"):
            block = list(p["block_shape"])[1:]
            if op == "space_to_batch":
                return space_to_batch(x, block, list(zip(p["pads_begin"], p["pads_end"]))[1:])
            return batch_to_space(x, block, list(zip(p["crops_begin"], p["crops_end"]))[1:])
        fn = space_to_depth if op == "space_to_depth" else depth_to_space
        return fn(x, p["block_size"], 2, n - 2, 1, p["mode"] == "blocks_first")
    if framework == "onnx":
        if op == "space_to_depth":
            return space_to_depth(x, p["blocksize"], 2, 2, 1, True)
        return depth_to_space(x, p["blocksize"], 2, 2, 1, p.get("mode", "DCR") == "DCR")
    if framework == "torch":
        if op == "pixel_shuffle":
            return depth_to_space(x, p["upscale_factor"], n - 2, 2, n - 3, False)
        return space_to_depth(x, p["downscale_factor"], n - 2, 2, n - 3, False)
    raise KeyError((framework, op))


def function(framework: str, op: str):
    return getattr(getattr(bs, framework), op)


# ----------------------------------------------------------------------------
# The conformance set's command lines as Python calls

FRAMEWORK = {"tf": "tf", "ov": "openvino", "onnx": "onnx", "torch": "torch"}


def _ints(s: str) -> list[int]:
    return [int(v) for v in s.split(",")] if s else []


def _pairs_or_flat(s: str):
    v = _ints(s)
    return [v[i : i + 2] for i in range(0, len(v), 2)] if len(v) % 2 == 0 else v


def case_call(case: dict) -> tuple[str, str, dict]:
    """``(framework module, function, keyword arguments)`` of a case."""
    fw = FRAMEWORK[case["framework"]]
    op = case["op"].replace("-", "_")
    args = case["args"]
    flags = {args[i][2:].replace("-", "_"): args[i + 1] for i in range(0, len(args), 2)}
    kw: dict = {}
    for k, v in flags.items():
        if k in ("block_shape", "pads_begin", "pads_end", "crops_begin", "crops_end"):
            kw[k] = _ints(v)
        elif k in ("paddings", "crops"):
            kw[k] = _pairs_or_flat(v)
        elif k in ("block_size", "blocksize", "upscale_factor", "downscale_factor"):
            kw[k] = int(v)
        else:  # mode, data_format
            kw[k] = v
    return fw, op, kw
