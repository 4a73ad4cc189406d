"""Builds the Dask front-end's functions from the in-memory ones."""

from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from . import _graph


def _apply(fn_name: str, op, x: Any, chunks: Any = None):
    import dask.array as da
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph

    if not isinstance(x, da.Array):
        x = da.asarray(x)
    if x.dtype.hasobject:
        raise TypeError(f"arrays of dtype {x.dtype} hold Python objects; blockshuffle moves plain bytes only")
    if any(np.isnan(c).any() for c in map(np.asarray, x.chunks)):
        raise ValueError(f"{op.name}: the input's chunk sizes must be known (call x.compute_chunk_sizes())")
    model = op.model(x.shape)
    out_shape = model.out_len
    if chunks is None:
        chunks = _graph.auto_chunks(model, x.chunks)
    out_chunks = da.core.normalize_chunks(chunks, out_shape, dtype=x.dtype)
    name = f"{fn_name.replace('_', '-')}-" + tokenize(x, op.name, model, out_chunks)
    dsk = _graph.graph(name, x, model, out_chunks, x.dtype)
    hlg = HighLevelGraph.from_collections(name, dsk, dependencies=[x])
    return da.Array(hlg, name, out_chunks, meta=np.empty((0,) * len(out_shape), dtype=x.dtype))


def dask_version(fn: Callable[..., Any], module: str) -> Callable[..., Any]:
    """The Dask twin of a framework function ``fn``: same name and
    parameters, a Dask array first, ``chunks=`` instead of ``out=`` and
    ``threads=``."""
    sig = inspect.signature(fn)
    params = [p for n, p in sig.parameters.items() if n not in ("out", "threads")]
    first = params[0].name
    names = [p.name for p in params[1:] if p.name != "name"]
    build = fn.operator

    def wrapper(*args, **kwargs):
        bound = new_sig.bind(*args, **kwargs)
        bound.apply_defaults()
        a = bound.arguments
        op = build(*(a[n] for n in names))
        return _apply(fn.__name__, op, a[first], a["chunks"])

    chunks = inspect.Parameter("chunks", inspect.Parameter.KEYWORD_ONLY, default=None)
    # Before a ``**axes_lengths`` (einops.rearrange's), which comes last.
    var = [p for p in params if p.kind is inspect.Parameter.VAR_KEYWORD]
    new_sig = sig.replace(
        parameters=[p for p in params if p not in var] + [chunks] + var,
        return_annotation="dask.array.Array",
    )
    wrapper.__signature__ = new_sig
    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = fn.__qualname__
    wrapper.__module__ = module
    doc = inspect.getdoc(fn) or ""
    summary = " ".join(doc.split("\n\n")[0].split()) if doc else fn.__name__
    wrapper.__doc__ = (
        f"{summary}\n\n"
        f"The Dask version of ``{fn.__module__}.{fn.__name__}``: takes a ``dask.array.Array``\n"
        f"(anything else goes through ``dask.array.asarray``) and returns one, each output\n"
        f"chunk computed from just the input elements it needs (no rechunking).\n"
        f"``chunks=`` sets the output's chunks (default: about the input chunks' size).\n"
        f"Parameters are validated at once (ValueError / TypeError, as in memory).\n\n"
        f"Example::\n\n"
        f"  >>> import dask.array as da, blockshuffle.dask as bsd\n"
        f"  >>> x = da.zeros((4, 8, 8, 16), chunks=(2, 4, 4, 16))\n"
        f"  >>> bsd.tf.space_to_depth(x, 2).compute().shape\n"
        f"  (4, 4, 4, 64)\n\n"
        f"The in-memory function's documentation:\n\n{doc}"
    )
    wrapper.output_shape = fn.output_shape
    wrapper.operator = build
    return wrapper
