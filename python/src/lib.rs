//! `blockshuffle._native`: the small Rust half of the Python package.
//!
//! It knows the operators by their command-line names (`"tf space-to-batch-nd"`)
//! with their parameters already normalised by the Python half (lists of
//! `int`, a list of `[begin, end]` pairs, a mode string), and offers two
//! things: shape inference ([`Op::output_shape`]) and a run from any numpy
//! array (any dtype without objects, any strides) into a C-contiguous numpy
//! array of the output shape ([`Op::run`]), without the GIL while the bytes
//! move. The framework signatures, defaults and docstrings live in Python.

use std::mem::MaybeUninit;
use std::os::raw::c_int;

use blockshuffle::{
    einops, numpy as np_ops, onnx, openvino, tf, torch, DataFormat, Operator, Parallelism, Plan, MAX_RANK,
};

use numpy::npyffi::flags::{NPY_ARRAY_CARRAY, NPY_ARRAY_WRITEABLE};
use numpy::npyffi::{_PyArray_GET_ITEM_DATA, get_type_object, npy_intp, NpyTypes, PY_ARRAY_API};
use numpy::{PyArrayDescr, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

mod pool;

/// One operator with its parameters, owned (the library's operators borrow
/// their lists).
#[derive(Debug, Clone)]
enum Spec {
    TfSpaceToBatchNd { block: Vec<i64>, pads: Vec<[i64; 2]> },
    TfBatchToSpaceNd { block: Vec<i64>, crops: Vec<[i64; 2]> },
    TfSpaceToBatch { block: i64, pads: [[i64; 2]; 2] },
    TfBatchToSpace { block: i64, crops: [[i64; 2]; 2] },
    TfSpaceToDepth { block: i64, format: DataFormat },
    TfDepthToSpace { block: i64, format: DataFormat },
    OvSpaceToBatch { block: Vec<i64>, begin: Vec<i64>, end: Vec<i64> },
    OvBatchToSpace { block: Vec<i64>, begin: Vec<i64>, end: Vec<i64> },
    OvSpaceToDepth { block: i64, mode: openvino::Mode },
    OvDepthToSpace { block: i64, mode: openvino::Mode },
    OnnxSpaceToDepth { block: i64 },
    OnnxDepthToSpace { block: i64, mode: onnx::DepthToSpaceMode },
    TorchPixelShuffle { factor: i64 },
    TorchPixelUnshuffle { factor: i64 },
    NumpyTranspose { axes: Option<Vec<i64>> },
    EinopsRearrange(einops::Rearrange),
}

fn value_error(e: blockshuffle::Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The one value of a scalar parameter given as a one-element list.
fn scalar(op: &str, name: &str, lists: &[Vec<i64>], i: usize) -> PyResult<i64> {
    match lists.get(i).map(Vec::as_slice) {
        Some(&[v]) => Ok(v),
        _ => Err(PyValueError::new_err(format!("{op}: {name} must be a single integer"))),
    }
}

fn list(op: &str, name: &str, lists: &[Vec<i64>], i: usize) -> PyResult<Vec<i64>> {
    lists.get(i).cloned().ok_or_else(|| PyValueError::new_err(format!("{op}: {name} is missing")))
}

/// A flat list of `2 M` values as `M` pairs.
fn pairs(op: &str, name: &str, lists: &[Vec<i64>], i: usize) -> PyResult<Vec<[i64; 2]>> {
    let flat = list(op, name, lists, i)?;
    if flat.len() % 2 != 0 {
        return Err(PyValueError::new_err(format!("{op}: {name} must have shape [M, 2]")));
    }
    Ok(flat.chunks_exact(2).map(|p| [p[0], p[1]]).collect())
}

fn two_pairs(op: &str, name: &str, lists: &[Vec<i64>], i: usize) -> PyResult<[[i64; 2]; 2]> {
    let p = pairs(op, name, lists, i)?;
    match p.as_slice() {
        &[a, b] => Ok([a, b]),
        _ => Err(PyValueError::new_err(format!("{op}: {name} must have shape [2, 2], not [{}, 2]", p.len()))),
    }
}

fn mode<T: std::str::FromStr<Err = blockshuffle::Error>>(op: &str, mode: Option<&str>) -> PyResult<T> {
    mode.ok_or_else(|| PyValueError::new_err(format!("{op}: a mode is required")))?.parse::<T>().map_err(value_error)
}

impl Spec {
    fn parse(name: &str, lists: &[Vec<i64>], m: Option<&str>, names: Option<&[String]>) -> PyResult<Spec> {
        let n = name;
        Ok(match name {
            "tf space-to-batch-nd" => Spec::TfSpaceToBatchNd {
                block: list(n, "block_shape", lists, 0)?,
                pads: pairs(n, "paddings", lists, 1)?,
            },
            "tf batch-to-space-nd" => {
                Spec::TfBatchToSpaceNd { block: list(n, "block_shape", lists, 0)?, crops: pairs(n, "crops", lists, 1)? }
            }
            "tf space-to-batch" => Spec::TfSpaceToBatch {
                block: scalar(n, "block_size", lists, 0)?,
                pads: two_pairs(n, "paddings", lists, 1)?,
            },
            "tf batch-to-space" => Spec::TfBatchToSpace {
                block: scalar(n, "block_size", lists, 0)?,
                crops: two_pairs(n, "crops", lists, 1)?,
            },
            "tf space-to-depth" => {
                Spec::TfSpaceToDepth { block: scalar(n, "block_size", lists, 0)?, format: mode(n, m)? }
            }
            "tf depth-to-space" => {
                Spec::TfDepthToSpace { block: scalar(n, "block_size", lists, 0)?, format: mode(n, m)? }
            }
            "ov space-to-batch" => Spec::OvSpaceToBatch {
                block: list(n, "block_shape", lists, 0)?,
                begin: list(n, "pads_begin", lists, 1)?,
                end: list(n, "pads_end", lists, 2)?,
            },
            "ov batch-to-space" => Spec::OvBatchToSpace {
                block: list(n, "block_shape", lists, 0)?,
                begin: list(n, "crops_begin", lists, 1)?,
                end: list(n, "crops_end", lists, 2)?,
            },
            "ov space-to-depth" => {
                Spec::OvSpaceToDepth { block: scalar(n, "block_size", lists, 0)?, mode: mode(n, m)? }
            }
            "ov depth-to-space" => {
                Spec::OvDepthToSpace { block: scalar(n, "block_size", lists, 0)?, mode: mode(n, m)? }
            }
            "onnx space-to-depth" => Spec::OnnxSpaceToDepth { block: scalar(n, "blocksize", lists, 0)? },
            "onnx depth-to-space" => {
                Spec::OnnxDepthToSpace { block: scalar(n, "blocksize", lists, 0)?, mode: mode(n, m)? }
            }
            "torch pixel-shuffle" => Spec::TorchPixelShuffle { factor: scalar(n, "upscale_factor", lists, 0)? },
            "torch pixel-unshuffle" => Spec::TorchPixelUnshuffle { factor: scalar(n, "downscale_factor", lists, 0)? },
            "numpy transpose" => Spec::NumpyTranspose {
                axes: match lists {
                    [] => None,
                    [axes] => Some(axes.clone()),
                    _ => return Err(PyValueError::new_err(format!("{n}: axes must be one list"))),
                },
            },
            "einops rearrange" => {
                let pattern = m.ok_or_else(|| PyValueError::new_err(format!("{n}: a pattern is required")))?;
                let values = lists.first().map(Vec::as_slice).unwrap_or(&[]);
                let names = names.unwrap_or(&[]);
                if names.len() != values.len() {
                    return Err(PyValueError::new_err(format!(
                        "{n}: {} axis names but {} lengths",
                        names.len(),
                        values.len()
                    )));
                }
                let mut sizes = Vec::with_capacity(names.len());
                for (name, &v) in names.iter().zip(values) {
                    let v = usize::try_from(v)
                        .map_err(|_| PyValueError::new_err(format!("{n}: size {name}={v} must be a length (>= 0)")))?;
                    sizes.push((name.as_str(), v));
                }
                Spec::EinopsRearrange(einops::Rearrange::new(pattern, &sizes).map_err(value_error)?)
            }
            _ => return Err(PyValueError::new_err(format!("unknown operator {name:?}"))),
        })
    }

    fn plan(&self, shape: &[usize]) -> PyResult<Plan> {
        if shape.len() > MAX_RANK {
            return Err(PyValueError::new_err(format!(
                "input rank {} exceeds blockshuffle's maximum of {MAX_RANK} dimensions",
                shape.len()
            )));
        }
        let plan = match self {
            Spec::TfSpaceToBatchNd { block, pads } => tf::SpaceToBatchNd::new(block, pads).plan(shape),
            Spec::TfBatchToSpaceNd { block, crops } => tf::BatchToSpaceNd::new(block, crops).plan(shape),
            Spec::TfSpaceToBatch { block, pads } => tf::SpaceToBatch::new(*block, *pads).plan(shape),
            Spec::TfBatchToSpace { block, crops } => tf::BatchToSpace::new(*block, *crops).plan(shape),
            Spec::TfSpaceToDepth { block, format } => tf::SpaceToDepth::new(*block, *format).plan(shape),
            Spec::TfDepthToSpace { block, format } => tf::DepthToSpace::new(*block, *format).plan(shape),
            Spec::OvSpaceToBatch { block, begin, end } => openvino::SpaceToBatch::new(block, begin, end).plan(shape),
            Spec::OvBatchToSpace { block, begin, end } => openvino::BatchToSpace::new(block, begin, end).plan(shape),
            Spec::OvSpaceToDepth { block, mode } => openvino::SpaceToDepth::new(*block, *mode).plan(shape),
            Spec::OvDepthToSpace { block, mode } => openvino::DepthToSpace::new(*block, *mode).plan(shape),
            Spec::OnnxSpaceToDepth { block } => onnx::SpaceToDepth::new(*block).plan(shape),
            Spec::OnnxDepthToSpace { block, mode } => onnx::DepthToSpace::new(*block, *mode).plan(shape),
            Spec::TorchPixelShuffle { factor } => torch::PixelShuffle::new(*factor).plan(shape),
            Spec::TorchPixelUnshuffle { factor } => torch::PixelUnshuffle::new(*factor).plan(shape),
            Spec::NumpyTranspose { axes: Some(axes) } => np_ops::Transpose::new(axes).plan(shape),
            Spec::NumpyTranspose { axes: None } => np_ops::Transpose::reversed().plan(shape),
            Spec::EinopsRearrange(r) => r.plan(shape),
        };
        plan.map_err(value_error)
    }
}

/// The bytes an input view covers, from its lowest-addressed byte, with its
/// strides in elements: what `Plan::run_bytes_strided_uninit` takes.
struct InputView {
    /// Lowest-addressed byte of the view.
    start: *const u8,
    /// Bytes from `start` to one past the highest-addressed element's last byte.
    len: usize,
    strides: Vec<isize>,
}

/// Lays out `shape` / `byte_strides` (numpy's, of `itemsize`-byte elements at
/// `data`) as an [`InputView`]. `None` when a stride is not a multiple of the
/// item size (`Op::run` copies such arrays first). Every product is
/// checked: numpy guarantees the view lies in memory, but nothing here
/// trusts that blindly.
fn input_view(
    data: *const u8,
    shape: &[usize],
    byte_strides: &[isize],
    itemsize: usize,
) -> PyResult<Option<InputView>> {
    let overflow = || PyValueError::new_err("input: the array's extent overflows the address space");
    let mut strides = Vec::with_capacity(shape.len());
    let (mut lo, mut hi) = (0isize, 0isize);
    let empty = shape.contains(&0);
    for (&d, &s) in shape.iter().zip(byte_strides) {
        // Axes of one element (or of none) never step: their strides are
        // meaningless, and numpy leaves them arbitrary.
        if d <= 1 || empty {
            strides.push(0);
            continue;
        }
        if itemsize == 0 || s % itemsize as isize != 0 {
            return Ok(None);
        }
        strides.push(s / itemsize as isize);
        let reach = isize::try_from(d - 1).ok().and_then(|d| d.checked_mul(s)).ok_or_else(overflow)?;
        if reach < 0 {
            lo = lo.checked_add(reach).ok_or_else(overflow)?;
        } else {
            hi = hi.checked_add(reach).ok_or_else(overflow)?;
        }
    }
    if empty {
        return Ok(Some(InputView { start: data, len: 0, strides }));
    }
    let len = hi
        .checked_sub(lo)
        .and_then(|span| span.checked_add(itemsize as isize))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(overflow)?;
    // `lo` is zero or negative: the view's lowest byte lies that far before
    // the data pointer (numpy's pointer is the element at index 0).
    Ok(Some(InputView { start: data.wrapping_offset(lo), len, strides }))
}

/// Most parts a run is split into: the library's work grows with the number
/// of parts asked for (a part per thread is what `threads` means; more than
/// this many only costs time).
const MAX_PARTS: usize = 256;

fn parallelism(threads: Option<i64>) -> PyResult<Parallelism> {
    match threads {
        None => Ok(Parallelism::Auto),
        Some(1) => Ok(Parallelism::Sequential),
        Some(n) if n >= 2 => Ok(Parallelism::Threads(usize::try_from(n).map_or(MAX_PARTS, |n| n.min(MAX_PARTS)))),
        Some(n) => Err(PyValueError::new_err(format!("threads = {n} must be >= 1 (or None for every core)"))),
    }
}

/// The data pointer of a live ndarray.
fn data_ptr(a: &Bound<'_, PyUntypedArray>) -> *const u8 {
    // SAFETY: a live ndarray (we hold a reference to it).
    unsafe { (*_PyArray_GET_ITEM_DATA(a.as_array_ptr())).data as *const u8 }
}

/// A new C-contiguous, uninitialised ndarray of `dtype` and `shape`
/// (`bytes` of data): numpy's own memory, or for large outputs a buffer of
/// the cache (`pool`), which the array holds as its `base`.
fn new_array<'py>(
    py: Python<'py>,
    dtype: &Bound<'py, PyArrayDescr>,
    shape: &[usize],
    bytes: usize,
) -> PyResult<Bound<'py, PyUntypedArray>> {
    let mut dims: Vec<npy_intp> = shape
        .iter()
        .map(|&d| npy_intp::try_from(d))
        .collect::<Result<_, _>>()
        .map_err(|_| PyValueError::new_err("the output's shape overflows the address space"))?;
    let nd = c_int::try_from(dims.len()).map_err(|_| PyValueError::new_err("too many dimensions"))?;
    let buffer = if bytes >= pool::MIN_BYTES { Some(Bound::new(py, pool::OutputBuffer::take(bytes)?)?) } else { None };
    let data = buffer.as_ref().map_or(std::ptr::null_mut(), |b| b.get().as_ptr().cast());
    let flags = if buffer.is_some() { NPY_ARRAY_CARRAY } else { 0 };
    // SAFETY: NewFromDescr steals the descriptor reference we hand it
    // (`into_dtype_ptr` gives up ours); with a null data pointer it
    // allocates the data itself, else it uses `bytes` bytes at `data`, a
    // buffer aligned for every dtype that the array keeps alive as its base
    // (SetBaseObject steals the reference `into_ptr` gives up). Null strides:
    // C order. Both return null / -1 with a Python error set on failure.
    unsafe {
        let ptr = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            get_type_object(py, NpyTypes::PyArray_Type),
            dtype.clone().into_dtype_ptr(),
            nd,
            dims.as_mut_ptr(),
            std::ptr::null_mut(),
            data,
            flags,
            std::ptr::null_mut(),
        );
        let array = Bound::from_owned_ptr_or_err(py, ptr)?;
        if let Some(buffer) = buffer {
            if PY_ARRAY_API.PyArray_SetBaseObject(py, array.as_ptr().cast(), buffer.into_ptr()) < 0 {
                return Err(PyErr::fetch(py));
            }
        }
        Ok(array.cast_into_unchecked())
    }
}

/// `(buffers, bytes)`: the free output buffers kept for reuse.
#[pyfunction]
fn output_cache_info() -> (usize, usize) {
    pool::info()
}

/// Sets the most bytes of large output buffers kept for reuse once their
/// arrays are gone (default 1 GiB; 0 keeps none).
#[pyfunction]
fn set_output_cache(max_bytes: usize) {
    pool::set_limit(max_bytes);
}

/// An operator with its parameters (internal: built by the Python functions).
#[pyclass(frozen, module = "blockshuffle._native")]
struct Op {
    name: String,
    spec: Spec,
}

#[pymethods]
impl Op {
    /// `Op(name, lists, mode=None, names=None)`: `name` as the command line
    /// has it (`"tf space-to-batch-nd"`), `lists` the integer parameters in
    /// the framework's order (a scalar as a one-element list, pairs
    /// flattened). `numpy transpose`: `[axes]`, or `[]` for the axes
    /// reversed. `einops rearrange`: the pattern as `mode`, the axis lengths
    /// as `names` and `lists[0]` (their values, in the same order).
    #[new]
    #[pyo3(signature = (name, lists, mode=None, names=None))]
    fn new(name: &str, lists: Vec<Vec<i64>>, mode: Option<&str>, names: Option<Vec<String>>) -> PyResult<Self> {
        Ok(Op { name: name.to_owned(), spec: Spec::parse(name, &lists, mode, names.as_deref())? })
    }

    /// The output shape for an input of `shape` (shape inference only).
    fn output_shape(&self, shape: Vec<usize>) -> PyResult<Vec<usize>> {
        Ok(self.spec.plan(&shape)?.output_shape().to_vec())
    }

    /// Runs on `input` (an ndarray) into `out`, or into a new C-contiguous
    /// array of the input's dtype when `out` is None; returns the output.
    /// `out` must be a C-contiguous, writeable ndarray of the output's shape
    /// and the input's dtype; if it overlaps the input, the input is copied
    /// first, as it is when its strides are not multiples of its item size.
    /// `threads`: None for every core, 1 for the calling thread alone, n for
    /// n parts. The GIL is released while the data moves.
    #[pyo3(signature = (input, out=None, threads=None))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        input: &Bound<'py, PyAny>,
        out: Option<&Bound<'py, PyAny>>,
        threads: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut input =
            input.cast::<PyUntypedArray>().map_err(|_| PyTypeError::new_err("input must be a numpy.ndarray"))?.clone();
        let dtype = input.dtype();
        if dtype.has_object() {
            return Err(PyTypeError::new_err(format!(
                "{}: arrays of dtype {} hold Python objects; blockshuffle moves plain bytes only",
                self.name,
                dtype.str()?
            )));
        }
        let plan = self.spec.plan(input.shape())?.with_parallelism(parallelism(threads)?);
        let itemsize = dtype.itemsize();
        let out_len = plan
            .output_len()
            .checked_mul(itemsize)
            .filter(|&n| n <= isize::MAX as usize)
            .ok_or_else(|| PyValueError::new_err("the output's byte count overflows the address space"))?;
        let (output, given) = match out {
            Some(out) => (self.check_out(out, &dtype, &plan)?, true),
            None => (new_array(py, &dtype, plan.output_shape(), out_len)?, false),
        };
        if out_len == 0 {
            return Ok(output.into_any());
        }
        let out_data = data_ptr(&output) as *mut u8;
        let mut view = input_view(data_ptr(&input), input.shape(), input.strides(), itemsize)?;
        let overlaps = |v: &InputView| {
            let (lo, hi) = (v.start as usize, v.start as usize + v.len);
            v.len > 0 && lo < out_data as usize + out_len && (out_data as usize) < hi
        };
        if view.as_ref().is_none_or(|v| given && overlaps(v)) {
            // A C-ordered copy: its strides are multiples of the item size,
            // and it is memory of its own.
            input = input.call_method0("copy")?.cast_into::<PyUntypedArray>()?;
            view = input_view(data_ptr(&input), input.shape(), input.strides(), itemsize)?;
        }
        let view = view.ok_or_else(|| PyValueError::new_err("input strides are not multiples of the item size"))?;
        if overlaps(&view) {
            return Err(PyValueError::new_err("out must not overlap the input"));
        }
        // SAFETY: numpy guarantees that every element of both arrays lies in
        // memory it owns or borrows, alive while we hold the references: the
        // input's from its lowest to its highest byte (`view`), the output's
        // `out_len` bytes from its data pointer (C-contiguous, checked or
        // made so). The two ranges do not overlap (checked), so the shared
        // and the unique borrow are sound. Another Python thread may write to
        // these arrays while the GIL is released, as with any numpy operation
        // that releases it; the bytes copied are then unspecified, never
        // unsafe to read as `u8` or write as `MaybeUninit<u8>`.
        let (src, dst) = unsafe {
            let src: &[u8] = if view.len == 0 { &[] } else { std::slice::from_raw_parts(view.start, view.len) };
            (src, std::slice::from_raw_parts_mut(out_data.cast::<MaybeUninit<u8>>(), out_len))
        };
        let strides = view.strides;
        py.detach(move || plan.run_bytes_strided_uninit(src, &strides, itemsize, dst)).map_err(value_error)?;
        Ok(output.into_any())
    }

    fn __repr__(&self) -> String {
        format!("<blockshuffle operator {}>", self.name)
    }
}

impl Op {
    /// `out` as the output array of `plan` for input elements of `dtype`.
    fn check_out<'py>(
        &self,
        out: &Bound<'py, PyAny>,
        dtype: &Bound<'py, PyArrayDescr>,
        plan: &Plan,
    ) -> PyResult<Bound<'py, PyUntypedArray>> {
        let output = out.cast::<PyUntypedArray>().map_err(|_| {
            PyTypeError::new_err(format!(
                "out must be a numpy.ndarray, not {}",
                out.get_type().name().map(|n| n.to_string()).unwrap_or_default()
            ))
        })?;
        let out_dtype = output.dtype();
        if !dtype.is_equiv_to(&out_dtype) {
            return Err(PyTypeError::new_err(format!(
                "out has dtype {} but the input's dtype is {}",
                out_dtype.str()?,
                dtype.str()?
            )));
        }
        if output.shape() != plan.output_shape() {
            return Err(PyValueError::new_err(format!(
                "out has shape {:?} but the output's shape is {:?}",
                output.shape(),
                plan.output_shape()
            )));
        }
        if !output.is_c_contiguous() {
            return Err(PyValueError::new_err("out must be C-contiguous"));
        }
        // SAFETY: a live ndarray (we hold a reference to it).
        let flags = unsafe { (*_PyArray_GET_ITEM_DATA(output.as_array_ptr())).flags };
        if flags & NPY_ARRAY_WRITEABLE == 0 {
            return Err(PyValueError::new_err("out is read-only"));
        }
        Ok(output.clone())
    }
}

/// The native half of blockshuffle's Python package.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Op>()?;
    m.add_class::<pool::OutputBuffer>()?;
    m.add_function(wrap_pyfunction!(set_output_cache, m)?)?;
    m.add_function(wrap_pyfunction!(output_cache_info, m)?)?;
    m.add("MAX_RANK", MAX_RANK)?;
    Ok(())
}
