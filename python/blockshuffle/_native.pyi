from typing import Any

import numpy as np
from numpy.typing import NDArray

MAX_RANK: int

def set_output_cache(max_bytes: int) -> None: ...
def output_cache_info() -> tuple[int, int]: ...

class OutputBuffer:
    """The memory of a large output array (its ``base``), reused once the array is gone."""

class Op:
    """An operator with its parameters (internal: built by the Python functions)."""

    def __init__(self, name: str, lists: list[list[int]], mode: str | None = None, names: list[str] | None = None) -> None: ...
    def output_shape(self, shape: list[int]) -> list[int]: ...
    def run(self, input: NDArray[Any], out: NDArray[Any] | None = None, threads: int | None = None) -> NDArray[Any]: ...
