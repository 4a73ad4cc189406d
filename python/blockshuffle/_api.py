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
        params = list(inspect.signature(fn).parameters.values())[1:]
        names = [p.name for p in params if p.name not in ("out", "threads", "name")]
        shape_param = inspect.Parameter("shape", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        var = [p.name for p in params if p.kind is inspect.Parameter.VAR_KEYWORD]

        if var:
            # ``f(x, pattern, **axes_lengths)``: the builder takes the keywords
            # as one dict (``build(pattern, axes_lengths)``).
            sig = inspect.Signature([shape_param] + [p for p in params if p.name not in ("out", "threads")])

            params_of_build = list(names)

            def output_shape(shape, *args, **kwargs):
                a = sig.bind(shape, *args, **kwargs).arguments
                return build(*(a.get(n, {}) for n in params_of_build)).output_shape(a["shape"])

            names = [n if n not in var else f"**{n}" for n in names]
        else:
            sig = inspect.Signature([shape_param] + list(inspect.signature(build).parameters.values()))

            def output_shape(shape, *args, **kwargs):
                return build(*args, **kwargs).output_shape(shape)

        output_shape.__signature__ = sig
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
