#!/usr/bin/env python3
"""Writes a set of benchmark workloads that `blockshuffle bench` has not
been tuned on, in the format of shared/bench/workloads.json:

    python3 tools/unseen_workloads.py > /tmp/unseen.json
    cargo run --release -- bench --threads 1 --workloads /tmp/unseen.json

594 workloads, each output about 64 MiB: TensorFlow NHWC space-to-batch
(unpadded and padded by 1 and a block less one on H and W), batch-to-space
(uncropped and cropped likewise), space-to-depth and depth-to-space, of 3 to
128 channels; ONNX NCHW space-to-depth and DCR depth-to-space, PyTorch
pixel_shuffle and pixel_unshuffle, and OpenVINO NCHW space-to-batch padded
and batch-to-space cropped on H and W, of 1 to 16 channels; blocks 2 to 4,
uint8, float16 and float32. Ids name the family, block, type and channels
(`s2bp_b3_float16_c4`). Standard library only.
"""
import json
import math
import sys

TARGET = 64 << 20
SIZE = {"uint8": 1, "float16": 2, "float32": 4}


def side(bytes_per_pixel, b, n=4):
    """A spatial side (a multiple of 4 blocks) for n images of ~TARGET bytes."""
    s = int(math.sqrt(TARGET / n / bytes_per_pixel))
    return s // (b * 4) * (b * 4)


def main():
    out = []

    def add(id_, fw, op, args, dt, shape):
        out.append({"id": id_, "framework": fw, "op": op, "args": args, "dtype": dt, "shape": shape, "what": id_})

    for b in (2, 3, 4):
        for dt in SIZE:
            for c in (3, 4, 8, 16, 32, 64, 128):
                if c * SIZE[dt] > 512:
                    continue
                s = side(c * SIZE[dt], b)
                hs = s // b
                blk = ["--block-shape", f"{b},{b}"]
                ends = f"1,{b - 1},1,{b - 1}"
                t = f"b{b}_{dt}_c{c}"
                add(f"s2b_{t}", "tf", "space-to-batch-nd", blk + ["--paddings", "0,0,0,0"], dt, [4, s, s, c])
                add(f"s2bp_{t}", "tf", "space-to-batch-nd", blk + ["--paddings", ends], dt, [4, s - b, s - b, c])
                add(f"b2s_{t}", "tf", "batch-to-space-nd", blk + ["--crops", "0,0,0,0"], dt, [4 * b * b, hs, hs, c])
                add(f"b2sc_{t}", "tf", "batch-to-space-nd", blk + ["--crops", ends], dt, [4 * b * b, hs, hs, c])
                add(f"s2d_{t}", "tf", "space-to-depth", ["--block-size", f"{b}"], dt, [4, s, s, c])
                add(f"d2s_{t}", "tf", "depth-to-space", ["--block-size", f"{b}"], dt, [4, hs, hs, c * b * b])
    for b in (2, 3, 4):
        for dt in SIZE:
            for c in (1, 3, 4, 16):
                s = side(c * SIZE[dt], b)
                hs = s // b
                t = f"b{b}_{dt}_c{c}"
                ov = ["--block-shape", f"1,1,{b},{b}"]
                begin, end = "0,0,1,1", f"0,0,{b - 1},{b - 1}"
                add(f"onnx_s2d_{t}", "onnx", "space-to-depth", ["--blocksize", f"{b}"], dt, [4, c, s, s])
                add(f"onnx_dcr_{t}", "onnx", "depth-to-space", ["--blocksize", f"{b}", "--mode", "DCR"], dt,
                    [4, c * b * b, hs, hs])
                add(f"ps_{t}", "torch", "pixel-shuffle", ["--upscale-factor", f"{b}"], dt, [4, c * b * b, hs, hs])
                add(f"pu_{t}", "torch", "pixel-unshuffle", ["--downscale-factor", f"{b}"], dt, [4, c, s, s])
                add(f"ov_s2b_{t}", "ov", "space-to-batch", ov + ["--pads-begin", begin, "--pads-end", end], dt,
                    [4, c, s - b, s - b])
                add(f"ov_b2s_{t}", "ov", "batch-to-space", ov + ["--crops-begin", begin, "--crops-end", end], dt,
                    [4 * b * b, c, hs, hs])
    json.dump({"about": __doc__.strip().splitlines()[0], "large": out, "small": []}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
