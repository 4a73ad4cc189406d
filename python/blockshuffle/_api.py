"""Glue between an operator builder of ``_core`` and a public function."""

from __future__ import annotations

import inspect
from typing import Any, Callable

from . import _core


def operator(build: Callable[..., _core.Operator]):
    """Attaches to a framework function ``f(input, *params, ...)``:

    - ``f.output_shape(shape, *params)``: shape inference without data;
    - ``f.operator(*params)``: the normalised operator (``blockshuffle.dask``
      runs the same one).
    """

    def wrap(fn: Callable[..., Any]):
        names = [n for n in list(inspect.signature(fn).parameters)[1:] if n not in ("out", "threads", "name")]

        def output_shape(shape, *args, **kwargs):
            return build(*args, **kwargs).output_shape(shape)

        output_shape.__signature__ = inspect.Signature(
            [inspect.Parameter("shape", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
            + [p for n, p in inspect.signature(build).parameters.items()]
        )
        output_shape.__name__ = "output_shape"
        output_shape.__qualname__ = f"{fn.__name__}.output_shape"
        output_shape.__module__ = fn.__module__
        output_shape.__doc__ = (
            f"The output shape of ``{fn.__name__}`` for an input of ``shape``, without data:\n"
            f"``{fn.__name__}.output_shape(shape, {', '.join(names)})``. Raises ValueError "
            f"as ``{fn.__name__}`` does."
        )
        fn.output_shape = output_shape
        fn.operator = build
        return fn

    return wrap
