from . import einops as einops, numpy as numpy, onnx as onnx, openvino as openvino, tf as tf, torch as torch

__version__: str
MAX_RANK: int

def set_output_cache(max_bytes: int) -> None:
    """Sets the most bytes of large output buffers kept for reuse (default 1 GiB; 0: none)."""

__all__ = ["tf", "openvino", "onnx", "torch", "numpy", "einops", "MAX_RANK", "set_output_cache"]
