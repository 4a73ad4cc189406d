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

use blockshuffle::{onnx, openvino, tf, torch, DataFormat, Operator, Parallelism, Plan, MAX_RANK};
use numpy::npyffi::flags::NPY_ARRAY_WRITEABLE;
use numpy::npyffi::_PyArray_GET_ITEM_DATA;
use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

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
    fn parse(name: &str, lists: &[Vec<i64>], m: Option<&str>) -> PyResult<Spec> {
        let n = name;
        Ok(match name {
            "tf space-to-batch-nd" => {
                Spec::TfSpaceToBatchNd { block: list(n, "block_shape", lists, 0)?, pads: pairs(n, "paddings", lists, 1)? }
            }
            "tf batch-to-space-nd" => {
                Spec::TfBatchToSpaceNd { block: list(n, "block_shape", lists, 0)?, crops: pairs(n, "crops", lists, 1)? }
            }
            "tf space-to-batch" => {
                Spec::TfSpaceToBatch { block: scalar(n, "block_size", lists, 0)?, pads: two_pairs(n, "paddings", lists, 1)? }
            }
            "tf batch-to-space" => {
                Spec::TfBatchToSpace { block: scalar(n, "block_size", lists, 0)?, crops: two_pairs(n, "crops", lists, 1)? }
            }
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
            "ov space-to-depth" => Spec::OvSpaceToDepth { block: scalar(n, "block_size", lists, 0)?, mode: mode(n, m)? },
            "ov depth-to-space" => Spec::OvDepthToSpace { block: scalar(n, "block_size", lists, 0)?, mode: mode(n, m)? },
            "onnx space-to-depth" => Spec::OnnxSpaceToDepth { block: scalar(n, "blocksize", lists, 0)? },
            "onnx depth-to-space" => {
                Spec::OnnxDepthToSpace { block: scalar(n, "blocksize", lists, 0)?, mode: mode(n, m)? }
            }
            "torch pixel-shuffle" => Spec::TorchPixelShuffle { factor: scalar(n, "upscale_factor", lists, 0)? },
            "torch pixel-unshuffle" => Spec::TorchPixelUnshuffle { factor: scalar(n, "downscale_factor", lists, 0)? },
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
/// item size (the Python half copies such arrays first). Every product is
/// checked: numpy guarantees the view lies in memory, but nothing here
/// trusts that blindly.
fn input_view(data: *const u8, shape: &[usize], byte_strides: &[isize], itemsize: usize) -> PyResult<Option<InputView>> {
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

fn parallelism(threads: Option<i64>) -> PyResult<Parallelism> {
    match threads {
        None => Ok(Parallelism::Auto),
        Some(1) => Ok(Parallelism::Sequential),
        Some(n) if n >= 2 => {
            Ok(Parallelism::Threads(usize::try_from(n).map_err(|_| PyValueError::new_err("threads is too large"))?))
        }
        Some(n) => Err(PyValueError::new_err(format!("threads = {n} must be >= 1 (or None for every core)"))),
    }
}

/// An operator with its parameters (internal: built by the Python functions).
#[pyclass(frozen, module = "blockshuffle._native")]
struct Op {
    name: String,
    spec: Spec,
}

#[pymethods]
impl Op {
    /// `Op(name, lists, mode=None)`: `name` as the command line has it
    /// (`"tf space-to-batch-nd"`), `lists` the integer parameters in the
    /// framework's order (a scalar as a one-element list, pairs flattened).
    #[new]
    #[pyo3(signature = (name, lists, mode=None))]
    fn new(name: &str, lists: Vec<Vec<i64>>, mode: Option<&str>) -> PyResult<Self> {
        Ok(Op { name: name.to_owned(), spec: Spec::parse(name, &lists, mode)? })
    }

    /// The output shape for an input of `shape` (shape inference only).
    fn output_shape(&self, shape: Vec<usize>) -> PyResult<Vec<usize>> {
        Ok(self.spec.plan(&shape)?.output_shape().to_vec())
    }

    /// Runs on `input` (an ndarray) into `out` (a C-contiguous, writeable
    /// ndarray of the output shape and the input's dtype), releasing the
    /// GIL while the data moves. `threads`: None for every core, 1 for the
    /// calling thread alone, n for n parts. Returns `out`.
    #[pyo3(signature = (input, out, threads=None))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        input: &Bound<'py, PyAny>,
        out: &Bound<'py, PyAny>,
        threads: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let input = input.cast::<PyUntypedArray>().map_err(|_| PyTypeError::new_err("input must be a numpy.ndarray"))?;
        let output = out.cast::<PyUntypedArray>().map_err(|_| PyTypeError::new_err("out must be a numpy.ndarray"))?;
        let (in_dtype, out_dtype) = (input.dtype(), output.dtype());
        if in_dtype.has_object() {
            return Err(PyTypeError::new_err(format!(
                "{}: arrays of dtype {} hold Python objects; blockshuffle moves plain bytes only",
                self.name,
                in_dtype.str()?
            )));
        }
        if !in_dtype.is_equiv_to(&out_dtype) {
            return Err(PyTypeError::new_err(format!(
                "out has dtype {} but the input's dtype is {}",
                out_dtype.str()?,
                in_dtype.str()?
            )));
        }
        let plan = self.spec.plan(input.shape())?.with_parallelism(parallelism(threads)?);
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
        // SAFETY: both are live ndarrays (we hold references to them).
        let (in_data, out_data, out_flags) = unsafe {
            let i = &*_PyArray_GET_ITEM_DATA(input.as_array_ptr());
            let o = &*_PyArray_GET_ITEM_DATA(output.as_array_ptr());
            (i.data as *const u8, o.data as *mut u8, o.flags)
        };
        if out_flags & NPY_ARRAY_WRITEABLE == 0 {
            return Err(PyValueError::new_err("out is read-only"));
        }
        let itemsize = in_dtype.itemsize();
        let out_len = plan.output_len().checked_mul(itemsize).ok_or_else(|| {
            PyValueError::new_err("the output's byte count overflows the address space")
        })?;
        if out_len == 0 {
            return Ok(out.clone());
        }
        let view = input_view(in_data, input.shape(), input.strides(), itemsize)?.ok_or_else(|| {
            PyValueError::new_err("input strides must be multiples of the item size (copy the array first)")
        })?;
        let (in_lo, in_hi) = (view.start as usize, view.start as usize + view.len);
        let (out_lo, out_hi) = (out_data as usize, out_data as usize + out_len);
        if view.len > 0 && in_lo < out_hi && out_lo < in_hi {
            return Err(PyValueError::new_err("out must not overlap the input"));
        }
        // SAFETY: numpy guarantees that every element of both arrays lies in
        // memory it owns or borrows, alive while we hold the references: the
        // input's from its lowest to its highest byte (`view`), the output's
        // `out_len` bytes from its data pointer (C-contiguous, checked). The
        // two ranges do not overlap (checked), so the shared and the unique
        // borrow are sound. Another Python thread may write to these arrays
        // while the GIL is released, as with any numpy operation that
        // releases it; the bytes we then copy are unspecified, never unsafe
        // to read as `u8` / write as `MaybeUninit<u8>`.
        let (src, dst) = unsafe {
            let src: &[u8] = if view.len == 0 { &[] } else { std::slice::from_raw_parts(view.start, view.len) };
            (src, std::slice::from_raw_parts_mut(out_data.cast::<MaybeUninit<u8>>(), out_len))
        };
        let strides = view.strides;
        py.detach(move || plan.run_bytes_strided_uninit(src, &strides, itemsize, dst)).map_err(value_error)?;
        Ok(out.clone())
    }

    fn __repr__(&self) -> String {
        format!("<blockshuffle operator {}>", self.name)
    }
}

/// The native half of blockshuffle's Python package.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Op>()?;
    m.add("MAX_RANK", MAX_RANK)?;
    Ok(())
}
