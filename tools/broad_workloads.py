#!/usr/bin/env python3
"""Writes the broad benchmark: a seed-reproducible set of workloads over every
operator, in the format of shared/bench/workloads.json:

    python3 tools/broad_workloads.py --seed 26 > /tmp/broad.json
    cargo run --release -- bench --threads 1 --reps 3 --workloads /tmp/broad.json

What it draws (uniformly unless said):
- the operator: the 14 framework operators, TensorFlow's depth ops in NHWC,
  NCHW and NCHW_VECT_C, numpy transposes of ranks 2 to 6, and einops
  rearranges; each family gets the same number of workloads;
- the element size: 1, 2, 3, 4, 6, 8, 12, 16 or 32 bytes (dtypes `V3`, `V12`
  ... are numpy's raw void types; NCHW_VECT_C is int8 only, as in TensorFlow);
- 1 to 3 spatial dims (OpenVINO's and torch's leading dims, TensorFlow's
  remaining dims after the blocked ones), blocks 2 to 16 per dim;
- the output size, log-uniform from 64 KiB to 256 MiB;
- padding or cropping on half of the space-to-batch and batch-to-space cases.

With `--powers-of-two`, every block and every dim drawn by splitting the
size is a power of two (channel counts, leading dims, TensorFlow's
remaining dims, pads and crops, and the extents space-to-batch pads, are
drawn as above): the shapes of images
and feature maps whose rows lie a power of two of bytes apart, and so
crowd a few sets of the caches, which the uniform draw seldom makes.

Ids say the family and the draw's number (`tf_s2bnd_017`); `what` says the
element size and the output size. Standard library only.
"""
import argparse
import json
import math
import random
import sys

ELEM = [1, 2, 3, 4, 6, 8, 12, 16, 32]
DTYPE = {1: "uint8", 2: "float16", 4: "float32", 8: "float64", 16: "complex128"}
LO, HI = 64 << 10, 256 << 20
FAMILIES = [
    "tf_s2bnd", "tf_b2snd", "tf_s2b", "tf_b2s",
    "tf_s2d_nhwc", "tf_d2s_nhwc", "tf_s2d_nchw", "tf_d2s_nchw", "tf_s2d_vect", "tf_d2s_vect",
    "ov_s2b", "ov_b2s", "ov_s2d", "ov_d2s",
    "onnx_s2d", "onnx_d2s", "torch_shuffle", "torch_unshuffle",
    "np_transpose", "einops",
]


def dtype(e):
    return DTYPE.get(e, f"V{e}")


def csv(xs):
    return ",".join(str(x) for x in xs)


# Set by --powers-of-two: blocks and split dims are powers of two.
POW2 = False


def block(r, lo, hi):
    """A block size from `lo` to `hi`: any, or with --powers-of-two a power of two."""
    if POW2:
        return r.choice([p for p in (2, 4, 8, 16) if lo <= p <= hi])
    return r.randint(lo, hi)


def split(r, total, parts, lo=1):
    """`parts` positive integers (each at least `lo`) whose product is about
    `total` (with --powers-of-two, each the nearest power of two)."""
    dims = []
    left = max(total, 1.0)
    for i in range(parts, 0, -1):
        share = left ** (1.0 / i)
        d = max(lo, int(round(share * math.exp(r.uniform(-0.4, 0.4)))))
        if POW2:
            d = max(lo, 2 ** round(math.log2(d)))
        dims.append(d)
        left = max(left / d, 1.0)
    r.shuffle(dims)
    return dims


def pads(r, extent, block):
    """Begin/end pads (or crops) for a dim: sometimes none, else any split of a
    total that makes the padded size a multiple of the block."""
    if r.random() < 0.5:
        need = (-extent) % block
        return 0, need
    total = (-extent) % block + block * r.randint(0, 1)
    begin = r.randint(0, total)
    return begin, total - begin


def draw(r, fam, target, e):
    """One workload of family `fam`: (framework, op, args, shape), the
    output about `target` bytes of `e`-byte elements."""
    units = target / e
    if fam in ("tf_s2bnd", "tf_b2snd", "tf_s2b", "tf_b2s", "ov_s2b", "ov_b2s"):
        v1 = fam in ("tf_s2b", "tf_b2s")
        m = 2 if v1 else r.randint(1, 3)
        blocks = [block(r, 2, 16)] * 2 if v1 else [block(r, 2, 16) for _ in range(m)]
        while math.prod(blocks) > units / 8:
            blocks = [max(2, b // 2) for b in blocks]
        rest = [] if v1 or fam.startswith("ov") else [r.choice([1, 2, 3, 4, 8, 16, 32, 64])] * r.randint(0, 2)
        lead = [r.choice([1, 3, 4, 16])] if fam.startswith("ov") else []
        if fam.startswith("ov") and r.random() < 0.5:
            lead = []
        batch = r.choice([1, 2, 4])
        outers = split(r, units / (batch * math.prod(blocks) * math.prod(rest) * math.prod(lead)), m)
        to_space = fam in ("tf_s2bnd", "tf_s2b", "ov_s2b")
        space, pad = [], []
        for b, o in zip(blocks, outers):
            if to_space:
                ext = o * b - r.randint(0, b - 1) if r.random() < 0.5 else o * b
                pb, pe = pads(r, ext, b)
                space.append(ext)
            else:
                ext = o * b
                pb, pe = (0, 0) if r.random() < 0.5 else (r.randint(0, b - 1), r.randint(0, b - 1))
                if pb + pe >= ext:
                    pb, pe = pb, 0
                space.append(o)
            pad.append((pb, pe))
        flat = [p for pe in pad for p in pe]
        if fam.startswith("ov"):
            bs = [1] + [1] * len(lead) + blocks
            begin = [0] * (1 + len(lead)) + [p[0] for p in pad]
            end = [0] * (1 + len(lead)) + [p[1] for p in pad]
            if to_space:
                shape = [batch] + lead + space
                return "ov", "space-to-batch", ["--block-shape", csv(bs), "--pads-begin", csv(begin), "--pads-end", csv(end)], shape
            shape = [batch * math.prod(blocks)] + lead + space
            return "ov", "batch-to-space", ["--block-shape", csv(bs), "--crops-begin", csv(begin), "--crops-end", csv(end)], shape
        if v1:
            blk = ["--block-size", str(blocks[0])]
            if to_space:
                return "tf", "space-to-batch", blk + ["--paddings", csv(flat)], [batch] + space + [r.choice([1, 3, 8, 64])]
            return "tf", "batch-to-space", blk + ["--crops", csv(flat)], [batch * blocks[0] ** 2] + space + [r.choice([1, 3, 8, 64])]
        if to_space:
            return "tf", "space-to-batch-nd", ["--block-shape", csv(blocks), "--paddings", csv(flat)], [batch] + space + rest
        return "tf", "batch-to-space-nd", ["--block-shape", csv(blocks), "--crops", csv(flat)], [batch * math.prod(blocks)] + space + rest
    if fam.startswith(("tf_s2d", "tf_d2s", "onnx", "torch")):
        b = block(r, 2, 16)
        c = r.choice([1, 2, 3, 4, 8, 16, 32, 64])
        while b * b * c > units / 4:
            b, c = max(2, b // 2), max(1, c // 2)
        to_depth = fam.startswith(("tf_s2d", "onnx_s2d", "torch_unshuffle"))
        lead = [r.choice([1, 2, 3])] * r.randint(0, 2) if fam.startswith("torch") else []
        n = r.choice([1, 2, 4])
        if fam.endswith("vect"):
            cg = max(1, c // 4)
            h, w = split(r, units / (n * cg * 4 * b * b), 2)
            shape = [n, cg, h * b, w * b, 4] if to_depth else [n, cg * b * b, h, w, 4]
            return "tf", "space-to-depth" if to_depth else "depth-to-space", ["--block-size", str(b), "--data-format", "NCHW_VECT_C"], shape
        h, w = split(r, units / (n * c * b * b * math.prod(lead)), 2)
        if fam.startswith("tf"):
            fmt = "NHWC" if fam.endswith("nhwc") else "NCHW"
            op = "space-to-depth" if to_depth else "depth-to-space"
            args = ["--block-size", str(b), "--data-format", fmt]
            if fmt == "NHWC":
                return "tf", op, args, [n, h * b, w * b, c] if to_depth else [n, h, w, c * b * b]
            return "tf", op, args, [n, c, h * b, w * b] if to_depth else [n, c * b * b, h, w]
        if fam == "onnx_s2d":
            return "onnx", "space-to-depth", ["--blocksize", str(b)], [n, c, h * b, w * b]
        if fam == "onnx_d2s":
            return "onnx", "depth-to-space", ["--blocksize", str(b), "--mode", r.choice(["DCR", "CRD"])], [n, c * b * b, h, w]
        if fam == "torch_shuffle":
            return "torch", "pixel-shuffle", ["--upscale-factor", str(b)], lead + [n, c * b * b, h, w]
        return "torch", "pixel-unshuffle", ["--downscale-factor", str(b)], lead + [n, c, h * b, w * b]
    if fam in ("ov_s2d", "ov_d2s"):
        k = r.randint(1, 3)
        b = block(r, 2, 16 if k < 3 else 6)
        c = r.choice([1, 2, 3, 4, 8, 16])
        while b**k * c > units / 4:
            b, c = max(2, b // 2), max(1, c // 2)
        n = r.choice([1, 2])
        ds = split(r, units / (n * c * b**k), k)
        mode = r.choice(["blocks_first", "depth_first"])
        args = ["--block-size", str(b), "--mode", mode]
        if fam == "ov_s2d":
            return "ov", "space-to-depth", args, [n, c] + [d * b for d in ds]
        return "ov", "depth-to-space", args, [n, c * b**k] + ds
    if fam == "np_transpose":
        rank = r.randint(2, 6)
        axes = list(range(rank))
        while axes == sorted(axes):
            r.shuffle(axes)
        return "numpy", "transpose", ["--axes", csv(axes)], split(r, units, rank, lo=2)
    # einops: a split, a permutation and a merge of a 4-D tensor.
    b1, b2 = block(r, 2, 16), block(r, 2, 16)
    c = r.choice([1, 3, 4, 16])
    n = r.choice([1, 2])
    h, w = split(r, units / (n * c * b1 * b2), 2)
    pattern = r.choice([
        "b c (h p1) (w p2) -> b (p1 p2 c) h w",
        "b (h p1) (w p2) c -> b h w (c p2 p1)",
        "b (h p1) (w p2) c -> (p1 b) h (w p2 c)",
        "b c (h p1) (w p2) -> (b h w) (p1 p2) c",
    ])
    shape = {
        "b c (h p1) (w p2) -> b (p1 p2 c) h w": [n, c, h * b1, w * b2],
        "b (h p1) (w p2) c -> b h w (c p2 p1)": [n, h * b1, w * b2, c],
        "b (h p1) (w p2) c -> (p1 b) h (w p2 c)": [n, h * b1, w * b2, c],
        "b c (h p1) (w p2) -> (b h w) (p1 p2) c": [n, c, h * b1, w * b2],
    }[pattern]
    return "einops", "rearrange", ["--pattern", pattern, "--sizes", f"p1={b1},p2={b2}"], shape


def out_bytes(fw, op, args, shape, e):
    """The output size: these operators move every element, so it is the
    input's, plus padding or minus cropping."""
    n = math.prod(shape) * e
    get = lambda flag: [int(x) for x in args[args.index(flag) + 1].split(",")]
    if op in ("space-to-batch-nd", "space-to-batch", "batch-to-space-nd", "batch-to-space"):
        if fw == "ov":
            blocks = get("--block-shape")
            flat = [p for pair in zip(get("--pads-begin" if "--pads-begin" in args else "--crops-begin"),
                                      get("--pads-end" if "--pads-end" in args else "--crops-end")) for p in pair]
            first = 0
        else:
            blocks = get("--block-shape") if "--block-shape" in args else [get("--block-size")[0]] * 2
            flat = get("--paddings") if "--paddings" in args else get("--crops")
            first = 1
        to_space = "space-to" in op
        out = list(shape)
        for i, b in enumerate(blocks):
            d = first + i
            pb, pe = flat[2 * i], flat[2 * i + 1]
            if fw == "ov" and i == 0:
                continue
            if to_space:
                out[d] = (shape[d] + pb + pe) // b
            else:
                out[d] = shape[d] * b - pb - pe
        bprod = math.prod(blocks)
        out[0] = shape[0] * bprod if to_space else shape[0] // bprod
        return math.prod(out) * e
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--per-family", type=int, default=32, help="workloads per family (20 families)")
    ap.add_argument("--powers-of-two", action="store_true", help="blocks and split dims powers of two")
    a = ap.parse_args()
    global POW2
    POW2 = a.powers_of_two
    r = random.Random(a.seed)
    large = []
    for fam in FAMILIES:
        i = 0
        while i < a.per_family:
            e = 1 if fam.endswith("vect") else r.choice(ELEM)
            target = math.exp(r.uniform(math.log(LO), math.log(HI)))
            fw, op, args, shape = draw(r, fam, target, e)
            size = out_bytes(fw, op, args, shape, e)
            if not LO <= size <= HI:
                continue
            i += 1
            large.append({
                "id": f"{fam}_{i:03d}", "framework": fw, "op": op, "args": args, "dtype": dtype(e),
                "shape": shape, "what": f"{e}-byte elements, {size / (1 << 20):.2f} MiB out",
            })
    pow2 = " --powers-of-two" if POW2 else ""
    about = f"tools/broad_workloads.py --seed {a.seed} --per-family {a.per_family}{pow2}: {len(large)} workloads"
    json.dump({"about": about, "large": large}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
