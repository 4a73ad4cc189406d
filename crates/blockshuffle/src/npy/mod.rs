//! `.npy` input and output (feature `npy`, on by default): any dtype numpy
//! writes without pickling (every numeric type, bool, complex, `V` void types
//! such as bfloat16's `<V2`, bytes and unicode strings, structured dtypes),
//! little- or big-endian, C or Fortran order. The operators only move
//! elements, so the dtype is carried through untouched.
//!
//! Reading never allocates from a header's claim before checking it against
//! the file's real size (a stream's data is held only as it arrives); a file
//! is written completely before it appears at the output's path (see
//! [`write()`]), so an existing file (even the input itself) is never lost
//! or half-written, and a run stopped part-way leaves nothing behind. A
//! symlinked output is written through to its target; a FIFO or a device
//! is streamed to.
//!
//! ```
//! use blockshuffle::{npy, torch, Parallelism};
//! # let dir = tempfile::tempdir().unwrap();
//! # let input = dir.path().join("x.npy");
//! # let output = dir.path().join("y.npy");
//! // Write a [1, 4, 1, 1] int16 array, then pixel-shuffle it into [1, 1, 2, 2].
//! let x = npy::NpyArray::from_bytes("<i2", vec![1, 4, 1, 1], vec![1, 0, 2, 0, 3, 0, 4, 0])?;
//! npy::write(&output, &x)?; // any path
//! # std::fs::rename(&output, &input).unwrap();
//! let shape = npy::run_file(&torch::PixelShuffle::new(2), &input, &output, Parallelism::Sequential)?;
//! assert_eq!(shape.as_slice(), &[1, 1, 2, 2]);
//! let y = npy::read(&output)?;
//! assert_eq!((y.shape(), y.data()), (&[1, 1, 2, 2][..], &[1, 0, 2, 0, 3, 0, 4, 0][..]));
//! # Ok::<(), blockshuffle::Error>(())
//! ```

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::mem::MaybeUninit;
use std::path::Path;

pub use npyz::DType;
use npyz::{WriteOptions, WriterBuilder};

use crate::{Error, Operator, Parallelism, Result, Shape};

#[cfg(target_os = "linux")]
mod guard;
mod header;
mod input;
mod output;

use header::{layout, read_header, Layout};
use input::{read_data, Input, Short};
pub use output::abandon_outputs;
use output::Sink;

/// An array read from (or to be written to) a `.npy` file: its dtype, shape,
/// memory order and raw element bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpyArray {
    dtype: DType,
    shape: Vec<usize>,
    fortran_order: bool,
    elem_size: usize,
    data: Vec<u8>,
}

fn npy_error(path: &Path, problem: impl Into<String>) -> Error {
    Error::Npy { path: path.display().to_string(), problem: problem.into() }
}

fn io_error(path: &Path, e: &io::Error) -> Error {
    // The error as the `Io` variant's source: an OS error by its code (the
    // same kind and message), any other by its kind and message.
    let whole = e.raw_os_error().map_or_else(|| io::Error::new(e.kind(), e.to_string()), io::Error::from_raw_os_error);
    Error::io(path.display().to_string(), whole)
}

const MAGIC: &[u8] = b"\x93NUMPY";

/// A new descriptor of a standard stream, as a `File` (sharing its position).
#[cfg(unix)]
fn duplicate(stream: &impl std::os::fd::AsFd) -> io::Result<File> {
    Ok(File::from(stream.as_fd().try_clone_to_owned()?))
}

#[cfg(windows)]
fn duplicate(stream: &impl std::os::windows::io::AsHandle) -> io::Result<File> {
    Ok(File::from(stream.as_handle().try_clone_to_owned()?))
}

#[cfg(not(any(unix, windows)))]
fn duplicate<T>(_stream: &T) -> io::Result<File> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

impl NpyArray {
    /// A C-order array of dtype `descr` (a numpy type string such as `<f4`
    /// or `<V2`) from its raw bytes.
    pub fn from_bytes(descr: &str, shape: Vec<usize>, data: Vec<u8>) -> Result<Self> {
        let here = Path::new("<memory>");
        let dtype = DType::Plain(descr.parse().map_err(|e| npy_error(here, format!("dtype {descr:?}: {e}")))?);
        Self::from_parts(dtype, shape, data)
    }

    /// An array of `dtype` in C order from its raw bytes.
    pub fn from_parts(dtype: DType, shape: Vec<usize>, data: Vec<u8>) -> Result<Self> {
        let here = Path::new("<memory>");
        let elem_size = dtype.num_bytes().ok_or_else(|| npy_error(here, "dtype has no fixed size"))?;
        let count = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        let expected = count.and_then(|c| c.checked_mul(elem_size));
        if expected != Some(data.len()) {
            return Err(npy_error(
                here,
                format!("{} data bytes do not make shape {shape:?} of {elem_size}-byte elements", data.len()),
            ));
        }
        Ok(NpyArray { dtype, shape, fortran_order: false, elem_size, data })
    }

    /// The dtype (npyz's description).
    pub fn descr_dtype(&self) -> &DType {
        &self.dtype
    }

    /// The dtype as numpy writes it in the header (`'<f4'`, `[('x', '<i4'), ...]`).
    pub fn descr(&self) -> String {
        self.dtype.descr()
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Bytes per element.
    pub fn elem_size(&self) -> usize {
        self.elem_size
    }

    /// Whether the data is in Fortran (column-major) order.
    pub fn fortran_order(&self) -> bool {
        self.fortran_order
    }

    /// The raw element bytes, in the file's order.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Element strides of the data, in elements.
    pub fn strides(&self) -> Vec<isize> {
        element_strides(&self.shape, self.fortran_order)
    }
}

/// Element strides of a C- or Fortran-order array of `shape`.
fn element_strides(shape: &[usize], fortran_order: bool) -> Vec<isize> {
    let n = shape.len();
    let mut strides = vec![0isize; n];
    let mut acc = 1isize;
    let order: Vec<usize> = if fortran_order { (0..n).collect() } else { (0..n).rev().collect() };
    for i in order {
        strides[i] = acc;
        acc = acc.wrapping_mul(shape[i] as isize);
    }
    strides
}

/// Reads a whole `.npy` file.
pub fn read(path: &Path) -> Result<NpyArray> {
    let mut file = File::open(path).map_err(|e| io_error(path, &e))?;
    let file_len = file.metadata().map_err(|e| io_error(path, &e))?.len();
    read_from(path, io::BufReader::new(&mut file), file_len)
}

/// Parses a `.npy` held in memory (the same checks as [`read`]).
///
/// ```
/// let err = blockshuffle::npy::read_bytes(b"\x93NUMPY\x01\x00\x10\x00{'descr': '<f4'").unwrap_err();
/// assert!(err.to_string().contains("header claims 16 bytes"), "{err}");
/// ```
pub fn read_bytes(bytes: &[u8]) -> Result<NpyArray> {
    read_from(Path::new("<memory>"), bytes, bytes.len() as u64)
}

/// Reads a `.npy` of `len` bytes from `reader`.
fn read_from(path: &Path, mut reader: impl Read, len: u64) -> Result<NpyArray> {
    let (header, offset) = read_header(path, &mut reader, len)?;
    let Layout { dtype, shape, fortran_order, elem_size, bytes } = layout(path, &header, offset, len)?;
    let data = read_data(path, reader, bytes, Short::File { end: offset + bytes })?;
    Ok(NpyArray { dtype, shape, fortran_order, elem_size, data })
}

/// Writes `array` to `path` in C order, atomically: the file is written
/// completely before it appears at `path` (on Linux as a file without a name,
/// linked into place; elsewhere under a hidden temporary name, renamed), so
/// that on any error no file is left behind and an existing `path` is
/// untouched. A symlink is written through (its target replaced); a FIFO or
/// a device is written to as a stream. A new file gets mode `0o666` less
/// the umask; a replaced one keeps its mode.
pub fn write(path: &Path, array: &NpyArray) -> Result<()> {
    let c_order;
    let array = if array.fortran_order && array.shape.len() > 1 {
        c_order = to_c_order(array);
        &c_order
    } else {
        array
    };
    write_with(path, &array.dtype, &array.shape, |w| w.write_all(&array.data))
}

fn to_c_order(a: &NpyArray) -> NpyArray {
    let n: usize = a.shape.iter().product();
    let mut out = vec![0u8; n * a.elem_size];
    let strides = a.strides();
    let mut idx = vec![0usize; a.shape.len()];
    for k in 0..n {
        let off: isize = idx.iter().zip(&strides).map(|(&i, &s)| i as isize * s).sum();
        let off = off as usize * a.elem_size;
        out[k * a.elem_size..(k + 1) * a.elem_size].copy_from_slice(&a.data[off..off + a.elem_size]);
        for d in (0..idx.len()).rev() {
            idx[d] += 1;
            if idx[d] < a.shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    NpyArray { data: out, fortran_order: false, ..a.clone() }
}

fn write_with(
    path: &Path,
    dtype: &DType,
    shape: &[usize],
    body: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<()> {
    let write = |file: &File| -> io::Result<()> {
        let mut w = BufWriter::with_capacity(1 << 20, file);
        let mut w = header_writer(&mut w, dtype, shape)?;
        body(&mut w)?;
        w.flush()
    };
    match Sink::open(Some(path), path)? {
        Sink::File(pending) => {
            write(pending.file()).map_err(|e| io_error(path, &e))?;
            pending.persist()
        }
        Sink::Stream(file) => write(&file).map_err(|e| io_error(path, &e)),
    }
}

/// Writes the `.npy` header for `dtype` and `shape` to `w`; the returned
/// writer takes the data bytes.
fn header_writer<'w>(w: &'w mut dyn Write, dtype: &DType, shape: &[usize]) -> io::Result<impl Write + 'w> {
    let shape_u64: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
    WriteOptions::<u8>::new().dtype(dtype.clone()).shape(&shape_u64).writer(w).write_header_only()
}

/// Reads `input`, runs `op` on it and writes the result to `output`
/// (atomically, see [`write()`]); returns the output shape. The same as
/// [`run_file_with_progress`] without the reports.
pub fn run_file(op: &dyn Operator, input: &Path, output: &Path, parallelism: Parallelism) -> Result<Shape> {
    run_file_with_progress(op, input, output, parallelism, &mut |_, _| {})
}

/// Where [`run`] reads or writes: a file (or FIFO, or device) by its path,
/// or the process's standard input (for the input) or standard output (for
/// the output).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place<'a> {
    /// The file at this path.
    Path(&'a Path),
    /// Standard input or standard output (named `<stdin>` and `<stdout>` in errors).
    Std,
}

/// [`run_file`] in bounded memory, reporting progress as
/// [`Plan::run_bytes_uninit_with_progress`] does. The same as [`run`] with
/// two paths.
///
/// ```
/// use blockshuffle::{npy, onnx, Parallelism};
/// # let dir = tempfile::tempdir().unwrap();
/// # let input = dir.path().join("x.npy");
/// # let output = dir.path().join("y.npy");
/// let x = npy::NpyArray::from_bytes("|u1", vec![1, 1, 2, 2], vec![1, 2, 3, 4])?;
/// npy::write(&input, &x)?;
/// let mut done = 0;
/// let op = onnx::SpaceToDepth::new(2);
/// npy::run_file_with_progress(&op, &input, &output, Parallelism::Sequential, &mut |d, _| done = d)?;
/// assert_eq!((done, npy::read(&output)?.shape()), (4, &[1, 4, 1, 1][..]));
/// # Ok::<(), blockshuffle::Error>(())
/// ```
///
/// [`Plan::run_bytes_uninit_with_progress`]: crate::Plan::run_bytes_uninit_with_progress
pub fn run_file_with_progress(
    op: &dyn Operator,
    input: &Path,
    output: &Path,
    parallelism: Parallelism,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Shape> {
    run(op, Place::Path(input), Place::Path(output), parallelism, progress)
}

/// Reads the `.npy` at `input`, runs `op` on it and writes the result to
/// `output`, reporting progress as [`Plan::run_bytes_uninit_with_progress`]
/// does; returns the output shape.
///
/// Memory: a regular input file's data is memory-mapped, not read (on Linux,
/// where a guard turns the file being truncated meanwhile into an error
/// rather than the process's death by `SIGBUS`; elsewhere it is read into
/// memory), and an output file is written through a memory map of the new
/// file, whose space is reserved first: the run then needs no memory of its
/// own beyond the page cache, which the system reclaims as it writes the
/// output back, so files larger than memory work. A stream (standard input,
/// a pipe, a device) is read once, into memory as it arrives: its data bytes
/// are held. An output streamed (standard output, a FIFO, a device) is made
/// in memory and then written: its data bytes are held too.
///
/// Errors: an input truncated while it is read is an error (`truncated while
/// being read: expected N bytes, got M`) and nothing is written. An output
/// file appears only complete (see [`write()`]); a stream may have received
/// part of the output when writing to it fails.
///
/// [`Plan::run_bytes_uninit_with_progress`]: crate::Plan::run_bytes_uninit_with_progress
pub fn run(
    op: &dyn Operator,
    input: Place<'_>,
    output: Place<'_>,
    parallelism: Parallelism,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Shape> {
    let (in_path, in_shown) = match input {
        Place::Path(p) => (Some(p), p),
        Place::Std => (None, Path::new("<stdin>")),
    };
    let (out_path, out_shown) = match output {
        Place::Path(p) => (Some(p), p),
        Place::Std => (None, Path::new("<stdout>")),
    };
    let Input { layout, data } = Input::open(in_path, in_shown)?;
    let plan = op.plan(&layout.shape)?.with_parallelism(parallelism);
    let out_len = plan
        .output_len()
        .checked_mul(layout.elem_size)
        .ok_or_else(|| npy_error(out_shown, "output byte count overflows"))?;
    let execute = |out: &mut [MaybeUninit<u8>], progress: &mut dyn FnMut(u64, u64)| -> Result<()> {
        if layout.fortran_order {
            let strides = element_strides(&layout.shape, true);
            plan.run_bytes_strided_uninit_with_progress(data.bytes(), &strides, layout.elem_size, out, progress)
        } else {
            plan.run_bytes_uninit_with_progress(data.bytes(), layout.elem_size, out, progress)
        }
    };
    let header = |w: &mut dyn Write| header_writer(w, &layout.dtype, plan.output_shape()).and_then(|mut h| h.flush());

    match Sink::open(out_path, out_shown)? {
        Sink::File(pending) => {
            let out_file = pending.file();
            // The header goes straight to the file (it is short); the data
            // follows through the map.
            header(&mut { out_file }).map_err(|e| io_error(out_shown, &e))?;
            let header_len = out_file.metadata().map_err(|e| io_error(out_shown, &e))?.len();
            if out_len > 0 {
                reserve(out_file, header_len, out_len as u64).map_err(|e| io_error(out_shown, &e))?;
                // SAFETY: the new file is ours alone (without a name, or
                // under a fresh hidden one), so nothing else changes it while
                // it is mapped; its space is reserved, so writes to the map
                // cannot hit a full disk.
                let mut map = unsafe { memmap2::MmapOptions::new().offset(header_len).len(out_len).map_mut(out_file) }
                    .map_err(|e| io_error(out_shown, &e))?;
                // Another process of ours could still shrink a named
                // temporary file: that is an error too, not SIGBUS.
                #[cfg(target_os = "linux")]
                let guard = guard::Guard::new(map.as_ptr(), map.len());
                // SAFETY: `[u8]` as `[MaybeUninit<u8>]`, written only with bytes.
                let out = unsafe { &mut *(&mut map[..] as *mut [u8] as *mut [MaybeUninit<u8>]) };
                execute(out, progress)?;
                #[cfg(target_os = "linux")]
                if guard.is_some_and(|g| g.faulted()) {
                    return Err(npy_error(
                        out_shown,
                        "the new file was truncated by another process while being written",
                    ));
                }
                map.flush().map_err(|e| io_error(out_shown, &e))?;
            }
            data.check(in_shown)?;
            pending.persist()?;
        }
        Sink::Stream(file) => {
            let mut out = Vec::new();
            out.try_reserve_exact(out_len).map_err(|_| Error::Allocation { bytes: out_len as u128 })?;
            execute(&mut out.spare_capacity_mut()[..out_len], progress)?;
            // SAFETY: `execute` initialised all `out_len` bytes (the plan
            // writes every output byte; it returned Ok).
            unsafe { out.set_len(out_len) };
            data.check(in_shown)?;
            let mut w = BufWriter::with_capacity(1 << 20, &file);
            header(&mut w)
                .and_then(|()| w.write_all(&out))
                .and_then(|()| w.flush())
                .map_err(|e| io_error(out_shown, &e))?;
        }
    }
    Ok(plan.output_shape().iter().copied().collect())
}

/// Sets `file`'s length to `start + len` with the last `len` bytes' disk
/// space allocated, so that writing them through a map cannot fail on a full
/// disk (which would kill the process with SIGBUS) or beyond a file-size
/// limit: those fail here, as errors.
fn reserve(file: &File, start: u64, len: u64) -> io::Result<()> {
    let end = start.checked_add(len).ok_or_else(|| io::Error::other("file size overflows"))?;
    file.set_len(end)?;
    #[cfg(unix)]
    {
        use std::os::unix::io::AsRawFd;
        let (start, len) = (libc::off_t::try_from(start), libc::off_t::try_from(len));
        let (Ok(start), Ok(len)) = (start, len) else { return Err(io::Error::other("file size overflows")) };
        // SAFETY: a plain system call on an open file descriptor we own.
        let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), start, len) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
    }
    Ok(())
}
/// What a `.npy` file's header says of its data, read by [`header`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The dtype as numpy writes it in the header (`'<f4'`, `[('x', '<i4'), ...]`).
    pub descr: String,
    /// The shape.
    pub shape: Vec<usize>,
    /// Whether the data is in Fortran (column-major) order.
    pub fortran_order: bool,
    /// Bytes per element.
    pub elem_size: usize,
    /// Where the data begins in the file.
    pub data_offset: u64,
}

/// Reads and checks a `.npy` file's header as [`read`] does (the data it
/// describes must be in the file), without reading the data.
///
/// ```
/// use blockshuffle::npy;
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("x.npy");
/// npy::write(&path, &npy::NpyArray::from_bytes("<i2", vec![2, 3], vec![0; 12])?)?;
/// let h = npy::header(&path)?;
/// assert_eq!((h.descr.as_str(), &h.shape[..], h.fortran_order, h.elem_size), ("'<i2'", &[2, 3][..], false, 2));
/// # Ok::<(), blockshuffle::Error>(())
/// ```
pub fn header(path: &Path) -> Result<Header> {
    let file = File::open(path).map_err(|e| io_error(path, &e))?;
    let file_len = file.metadata().map_err(|e| io_error(path, &e))?.len();
    let (header, offset) = read_header(path, &mut io::BufReader::new(&file), file_len)?;
    let l = layout(path, &header, offset, file_len)?;
    Ok(Header {
        descr: l.dtype.descr(),
        shape: l.shape,
        fortran_order: l.fortran_order,
        elem_size: l.elem_size,
        data_offset: offset,
    })
}
