from . import einops as einops, numpy as numpy, onnx as onnx, openvino as openvino, tf as tf, torch as torch

__all__ = ["tf", "openvino", "onnx", "torch", "numpy", "einops"]
