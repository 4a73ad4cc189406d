from . import onnx as onnx, openvino as openvino, tf as tf, torch as torch

__version__: str
MAX_RANK: int
__all__ = ["tf", "openvino", "onnx", "torch", "MAX_RANK"]
