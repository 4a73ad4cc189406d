#!/usr/bin/env python3
"""Times blockshuffle's Python API against the other implementations of each
operator that this interpreter has, in one process, on the workloads of
``workloads.json`` (the file ``blockshuffle bench`` reads):

- ``numpy``: the operator as numpy users write it (zero-pad into a new
  array, ``reshape``, ``transpose``, ``reshape``: the copy that makes it
  contiguous, then a crop);
- ``torch``: ``torch.nn.functional.pixel_shuffle`` / ``pixel_unshuffle`` for
  PyTorch's operators, ``reshape`` / ``permute`` / ``contiguous`` for the
  others;
- ``tf``: TensorFlow's own operators for its workloads;
- ``openvino``: a compiled one-node model for OpenVINO's workloads;
- ``onnxruntime``: a one-node ONNX model for ONNX's workloads.

Each allocates its output as it usually does (blockshuffle too, a new
array; ``ours-into`` is blockshuffle into a preallocated ``out=``). The
figure is the median of ``--reps`` runs after a warm-up; per-call workloads
(``small``) are timed as batches of calls. ``--threads 1`` sets every library
to one thread; ``--threads 0`` (the default) leaves each its default (all
cores). TensorFlow's thread pools are fixed when it starts, so run the two
settings as two processes.

    python bench/compare.py --workloads ../shared/bench/workloads.json --threads 1 [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

import blockshuffle as bs
from blockshuffle import _core

FRAMEWORK = {"tf": "tf", "ov": "openvino", "onnx": "onnx", "torch": "torch"}
DEFAULT_WORKLOADS = Path(__file__).resolve().parents[2] / "crates" / "blockshuffle-cli" / "data" / "workloads.json"


# ---------------------------------------------------------------------------
# Workloads


def call_of(wl: dict) -> tuple[str, str, dict]:
    """The workload's command line as (module, function, keyword arguments)."""
    fw = FRAMEWORK[wl["framework"]]
    fn = wl["op"].replace("-", "_")
    args = wl["args"]
    kw: dict[str, Any] = {}
    for i in range(0, len(args), 2):
        k, v = args[i][2:].replace("-", "_"), args[i + 1]
        if k in ("block_shape", "pads_begin", "pads_end", "crops_begin", "crops_end"):
            kw[k] = [int(t) for t in v.split(",")]
        elif k in ("paddings", "crops"):
            flat = [int(t) for t in v.split(",")]
            kw[k] = [flat[j : j + 2] for j in range(0, len(flat), 2)]
        elif k in ("block_size", "blocksize", "upscale_factor", "downscale_factor"):
            kw[k] = int(v)
        else:
            kw[k] = v
    return fw, fn, kw


def dtype_of(name: str) -> np.dtype:
    if name == "bfloat16":
        try:
            import ml_dtypes

            return np.dtype(ml_dtypes.bfloat16)
        except ImportError:
            return np.dtype("V2")
    return np.dtype(name)


def filled(shape: list[int], dtype: np.dtype) -> np.ndarray:
    n = math.prod(shape) * dtype.itemsize
    return (np.arange(n, dtype=np.uint64) * 2654435761 >> 13).astype(np.uint8).view(dtype).reshape(shape)


# ---------------------------------------------------------------------------
# Implementations: each returns a zero-argument callable, or None


def ours(fn, kw, x, threads):
    t = 1 if threads == 1 else None
    return lambda: fn(x, **kw, threads=t)


def ours_into(fn, kw, x, threads):
    out = np.empty(fn.output_shape(x.shape, **kw), dtype=x.dtype)
    t = 1 if threads == 1 else None
    return lambda: fn(x, **kw, out=out, threads=t)


def _plan(model: _core.Model):
    """reshape / transpose / reshape of a factor model, with its pads and crops."""
    order = [f for axis in model.in_axes for f in axis]
    pos = {f: i for i, f in enumerate(order)}
    perm = [pos[f] for axis in model.out_axes for f in axis]
    factors = [model.sizes[f] for f in order]
    u_in = [math.prod(model.sizes[f] for f in axis) for axis in model.in_axes]
    u_out = [math.prod(model.sizes[f] for f in axis) for axis in model.out_axes]
    pad = tuple(slice(o, o + n) for o, n in zip(model.in_offset, model.in_len))
    crop = tuple(slice(o, o + n) for o, n in zip(model.out_offset, model.out_len))
    padded = list(u_in) != list(model.in_len)
    cropped = list(u_out) != list(model.out_len)
    return factors, perm, u_in, u_out, pad, crop, padded, cropped


def numpy_impl(fn, kw, x, threads):
    factors, perm, u_in, u_out, pad, crop, padded, cropped = _plan(fn.operator(**kw).model(x.shape))

    def run():
        src = x
        if padded:
            src = np.zeros(u_in, dtype=x.dtype)
            src[pad] = x
        y = src.reshape(factors).transpose(perm).reshape(u_out)
        return np.ascontiguousarray(y[crop]) if cropped else y

    return run


def torch_impl(fn, kw, x, threads, fw, name):
    import torch

    if x.dtype.kind == "V" or x.dtype.name == "bfloat16":
        return None
    t = torch.from_numpy(x)
    if fw == "torch":
        f = getattr(torch.nn.functional, name)
        arg = kw.get("upscale_factor", kw.get("downscale_factor"))
        return lambda: f(t, arg)
    factors, perm, u_in, u_out, pad, crop, padded, cropped = _plan(fn.operator(**kw).model(x.shape))

    def run():
        src = t
        if padded:
            src = torch.zeros(u_in, dtype=t.dtype)
            src[pad] = t
        y = src.reshape(factors).permute(perm).reshape(u_out)
        return y[crop].contiguous() if cropped else y

    return run


def tf_impl(fn, kw, x, threads, fw, name):
    if fw != "tf":
        return None
    import tensorflow as tf

    t = tf.constant(x)
    if name == "space_to_batch_nd":
        return lambda: tf.space_to_batch_nd(t, kw["block_shape"], kw["paddings"])
    if name == "batch_to_space_nd":
        return lambda: tf.batch_to_space(t, kw["block_shape"], kw["crops"])
    if name == "space_to_batch":
        return lambda: tf.compat.v1.space_to_batch(t, kw["paddings"], kw["block_size"])
    if name == "batch_to_space":
        return lambda: tf.compat.v1.batch_to_space(t, kw["crops"], kw["block_size"])
    f = tf.nn.space_to_depth if name == "space_to_depth" else tf.nn.depth_to_space
    return lambda: f(t, kw["block_size"], data_format=kw.get("data_format", "NHWC"))


def openvino_impl(fn, kw, x, threads, fw, name):
    if fw != "openvino":
        return None
    import openvino as ov
    import openvino.opset8 as ops

    param = ops.parameter(list(x.shape), ov.Type(x.dtype), name="x")
    if name == "space_to_batch":
        node = ops.space_to_batch(param, kw["block_shape"], kw["pads_begin"], kw["pads_end"])
    elif name == "batch_to_space":
        node = ops.batch_to_space(param, kw["block_shape"], kw["crops_begin"], kw["crops_end"])
    elif name == "space_to_depth":
        node = ops.space_to_depth(param, kw["mode"], kw["block_size"])
    else:
        node = ops.depth_to_space(param, kw["mode"], kw["block_size"])
    model = ov.Model([node], [param])
    config = {"INFERENCE_NUM_THREADS": threads} if threads else {}
    compiled = ov.Core().compile_model(model, "CPU", config)
    request = compiled.create_infer_request()
    return lambda: request.infer({0: x}, share_inputs=True, share_outputs=False)[0]


def onnxruntime_impl(fn, kw, x, threads, fw, name):
    if fw != "onnx":
        return None
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    elem = helper.np_dtype_to_tensor_dtype(x.dtype)
    attrs = {"blocksize": kw["blocksize"]}
    if name == "depth_to_space":
        attrs["mode"] = kw.get("mode", "DCR")
    op = "SpaceToDepth" if name == "space_to_depth" else "DepthToSpace"
    out_shape = list(fn.output_shape(x.shape, **kw))
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"], **attrs)], "g",
        [helper.make_tensor_value_info("x", elem, list(x.shape))],
        [helper.make_tensor_value_info("y", elem, out_shape)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    options = ort.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    del onnx, TensorProto
    return lambda: session.run(None, {"x": x})[0]


OTHERS: dict[str, Callable] = {
    "torch": torch_impl,
    "tf": tf_impl,
    "openvino": openvino_impl,
    "onnxruntime": onnxruntime_impl,
}


def available(names: list[str]) -> list[str]:
    modules = {"torch": "torch", "tf": "tensorflow", "openvino": "openvino", "onnxruntime": "onnxruntime"}
    found = []
    for n in names:
        try:
            __import__(modules[n])
            found.append(n)
        except Exception:
            pass
    return found


# ---------------------------------------------------------------------------
# Timing


def timed(run: Callable[[], Any], reps: int, batch: int) -> float:
    run()  # warm-up (and the first-touch of any memory it keeps)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(batch):
            run()
        times.append((time.perf_counter() - t0) / batch)
    return statistics.median(times)


def set_threads(threads: int, others: list[str]) -> None:
    if threads and "torch" in others:
        import torch

        torch.set_num_threads(threads)
    if threads and "tf" in others:
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", type=Path, default=DEFAULT_WORKLOADS)
    ap.add_argument("--threads", type=int, default=0, help="1: every library on one thread; 0: their defaults")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--filter", default="", help="workload ids, comma-separated")
    ap.add_argument("--only", default="", help="other implementations to run, comma-separated (default: all found)")
    ap.add_argument("--json", type=Path)
    o = ap.parse_args(argv)

    spec = json.loads(o.workloads.read_text())
    wanted = set(filter(None, o.filter.split(",")))
    others = available(o.only.split(",") if o.only else list(OTHERS))
    set_threads(o.threads, others)
    names = ["ours", "ours-into", "numpy"] + others
    unit = {"large": ("ms", 1e3), "small": ("us", 1e6)}
    print(f"blockshuffle {bs.__version__}, numpy {np.__version__}, threads: {o.threads or 'default'}, "
          f"reps: {o.reps} (median after a warm-up); others: {', '.join(others) or 'none'}")
    rows = []
    for group in ("large", "small"):
        u, scale = unit[group]
        print(f"\n| id | op | dtype | MiB out | memcpy {u} | " + " | ".join(f"{n} {u}" for n in names)
              + " | best other | ours / best |")
        print("|" + " --- |" * (len(names) + 7))
        for wl in spec.get(group, []):
            if wanted and wl["id"] not in wanted:
                continue
            fw, name, kw = call_of(wl)
            fn = getattr(getattr(bs, fw), name)
            x = filled(wl["shape"], dtype_of(wl["dtype"]))
            out_shape = fn.output_shape(x.shape, **kw)
            nbytes = math.prod(out_shape) * x.dtype.itemsize
            batch = 1 if group == "large" else max(1, 200_000 // max(nbytes, 1))
            src, dst = np.empty(nbytes, np.uint8), np.empty(nbytes, np.uint8)
            src[:] = 1
            memcpy = timed(lambda: np.copyto(dst, src), o.reps, batch)
            del src, dst
            want = fn(x, **kw)
            result = {}
            for n in names:
                try:
                    if n == "ours":
                        run = ours(fn, kw, x, o.threads)
                    elif n == "ours-into":
                        run = ours_into(fn, kw, x, o.threads)
                    elif n == "numpy":
                        run = numpy_impl(fn, kw, x, o.threads)
                    else:
                        run = OTHERS[n](fn, kw, x, o.threads, fw, name)
                    if run is None:
                        continue
                    got = np.asarray(run())
                    if got.shape != want.shape or got.tobytes() != want.tobytes():
                        print(f"# {wl['id']}: {n} gives another result; not timed", file=sys.stderr)
                        continue
                    del got
                    result[n] = timed(run, o.reps, batch)
                except Exception as e:  # a library that lacks the operator or the dtype
                    print(f"# {wl['id']}: {n} failed: {type(e).__name__}: {str(e)[:120]}", file=sys.stderr)
            del want
            rivals = {n: t for n, t in result.items() if n not in ("ours", "ours-into")}
            best = min(rivals, key=rivals.get) if rivals else None
            ratio = result["ours"] / rivals[best] if best else float("nan")
            cells = [f"{result[n] * scale:.3f}" if n in result else "-" for n in names]
            print(f"| {wl['id']} | {wl['framework']} {wl['op']} | {wl['dtype']} | {nbytes / 2**20:.1f} | "
                  f"{memcpy * scale:.3f} | " + " | ".join(cells) + f" | {best or '-'} | {ratio:.2f} |", flush=True)
            rows.append({"id": wl["id"], "bytes_out": nbytes, "memcpy_s": memcpy, "times_s": result,
                         "best_other": best, "ratio": ratio})
            del x
    if o.json:
        o.json.write_text(json.dumps({"threads": o.threads, "others": others, "results": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
