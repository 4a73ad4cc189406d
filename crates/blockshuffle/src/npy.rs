//! `.npy` input and output (feature `npy`, on by default): any dtype numpy
//! writes without pickling (every numeric type, bool, complex, `V` void types
//! such as bfloat16's `<V2`, bytes and unicode strings, structured dtypes),
//! little- or big-endian, C or Fortran order. The operators only move
//! elements, so the dtype is carried through untouched.
//!
//! Reading never allocates from a header's claim before checking it against
//! the file's real size; writing goes to a temporary file beside the output,
//! renamed over it only when complete, so an existing file (even the input
//! itself) is never lost or half-written.
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
use std::path::Path;

pub use npyz::DType;
use npyz::{NpyHeader, Order, WriteOptions, WriterBuilder};

use crate::{Error, Operator, Parallelism, Result, Shape};

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
    Error::Io { path: path.display().to_string(), kind: e.kind(), message: e.to_string() }
}

const MAGIC: &[u8] = b"\x93NUMPY";

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
        let n = self.shape.len();
        let mut strides = vec![0isize; n];
        let mut acc = 1isize;
        let order: Vec<usize> = if self.fortran_order { (0..n).collect() } else { (0..n).rev().collect() };
        for i in order {
            strides[i] = acc;
            acc = acc.wrapping_mul(self.shape[i] as isize);
        }
        strides
    }
}

/// Reads the fixed part and header text of a `.npy`; returns the parsed
/// header and the data offset. `file_len` is the file's real size.
fn read_header(path: &Path, r: &mut impl Read, file_len: u64) -> Result<(NpyHeader, u64)> {
    let mut fixed = [0u8; 8];
    r.read_exact(&mut fixed).map_err(|_| npy_error(path, "not a .npy file (shorter than its magic string)"))?;
    if &fixed[..6] != MAGIC {
        return Err(npy_error(path, "not a .npy file (no \\x93NUMPY magic string)"));
    }
    let (major, minor) = (fixed[6], fixed[7]);
    let len_size = match major {
        1 => 2,
        2 | 3 => 4,
        _ => return Err(npy_error(path, format!("unsupported .npy format version {major}.{minor}"))),
    };
    let mut len_bytes = [0u8; 4];
    r.read_exact(&mut len_bytes[..len_size]).map_err(|_| npy_error(path, "truncated header length"))?;
    let header_len = u32::from_le_bytes(len_bytes) as u64;
    let data_offset = 8 + len_size as u64 + header_len;
    if data_offset > file_len {
        return Err(npy_error(path, format!("header claims {header_len} bytes but the file has {file_len} in all")));
    }
    if header_len > MAX_HEADER_LEN {
        return Err(npy_error(
            path,
            format!("header of {header_len} bytes exceeds numpy's limit of {MAX_HEADER_LEN} (max_header_size)"),
        ));
    }
    let mut text = vec![0u8; header_len as usize];
    r.read_exact(&mut text).map_err(|e| io_error(path, &e))?;
    check_nesting(path, &text)?;
    check_shape_text(path, &text)?;
    let mut whole = Vec::with_capacity(data_offset as usize);
    whole.extend_from_slice(&fixed);
    whole.extend_from_slice(&len_bytes[..len_size]);
    whole.extend_from_slice(&text);
    let header = NpyHeader::from_reader(&whole[..]).map_err(|e| npy_error(path, format!("bad header: {e}")))?;
    Ok((header, data_offset))
}

/// numpy's own default limit on header size (`np.load(max_header_size=10000)`).
const MAX_HEADER_LEN: u64 = 10_000;

/// Deepest bracket nesting accepted in a header. A structured dtype with
/// sub-array fields inside records inside records nests 7 deep; the header
/// parser's time doubles or triples with each level of nested lists (fuzzing
/// found a header that hung it), so ten levels take milliseconds at worst.
const MAX_NESTING: usize = 10;

/// Rejects headers nested deeper than [`MAX_NESTING`]: the header parser
/// backtracks on nested literals, and a crafted header must be an error,
/// not a hang.
///
/// ```
/// let header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': {}1{}}}", "[".repeat(40), "]".repeat(40));
/// let mut file = b"\x93NUMPY\x01\x00".to_vec();
/// file.extend_from_slice(&(header.len() as u16).to_le_bytes());
/// file.extend_from_slice(header.as_bytes());
/// let err = blockshuffle::npy::read_bytes(&file).unwrap_err();
/// assert!(err.to_string().contains("nests brackets 41 deep"), "{err}");
/// ```
fn check_nesting(path: &Path, text: &[u8]) -> Result<()> {
    let (mut depth, mut max) = (0usize, 0usize);
    let mut quote: Option<u8> = None;
    for &c in text {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(c),
            (None, b'(' | b'[' | b'{') => {
                depth += 1;
                max = max.max(depth);
            }
            (None, b')' | b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if max > MAX_NESTING {
        return Err(npy_error(path, format!("header nests brackets {max} deep; at most {MAX_NESTING} are accepted")));
    }
    Ok(())
}

/// Checks, before the header is interpreted, that its shape's element count
/// fits in 64 bits (a header claiming more must be an error, not an
/// overflow). Every `'shape': (...)` in the text is checked, so a field name
/// that looks like the key cannot hide the real one.
fn check_shape_text(path: &Path, text: &[u8]) -> Result<()> {
    let text = String::from_utf8_lossy(text);
    let mut found = false;
    for quote in ["'shape'", "\"shape\""] {
        let mut from = 0;
        while let Some(at) = text[from..].find(quote) {
            let rest = text[from + at + quote.len()..].trim_start();
            from += at + quote.len();
            let Some(rest) = rest.strip_prefix(':') else { continue };
            let Some(rest) = rest.trim_start().strip_prefix('(') else {
                return Err(npy_error(path, "bad header: 'shape' is not a tuple"));
            };
            let Some(close) = rest.find(')') else {
                return Err(npy_error(path, "bad header: 'shape' is not a tuple"));
            };
            found = true;
            let mut count: u64 = 1;
            for item in rest[..close].split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let d: u64 = item
                    .parse()
                    .map_err(|_| npy_error(path, format!("bad header: shape entry {item:?} is not a dimension")))?;
                count = count.checked_mul(d).ok_or_else(|| {
                    npy_error(path, format!("shape ({}) has more than 2^64 elements", &rest[..close]))
                })?;
            }
        }
    }
    if !found {
        return Err(npy_error(path, "bad header: no 'shape' key"));
    }
    Ok(())
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
    if header.uses_pickled_array() {
        return Err(npy_error(path, "object arrays (pickled Python objects) are not supported"));
    }
    let dtype = header.dtype();
    let elem_size = dtype.num_bytes().ok_or_else(|| npy_error(path, "dtype has no fixed size"))?;
    let shape: Vec<usize> = header
        .shape()
        .iter()
        .map(|&d| {
            usize::try_from(d)
                .map_err(|_| npy_error(path, format!("dimension {d} exceeds this machine's address space")))
        })
        .collect::<Result<_>>()?;
    let bytes = header
        .len()
        .checked_mul(elem_size as u64)
        .ok_or_else(|| npy_error(path, format!("{} elements of {elem_size} bytes overflow 64 bits", header.len())))?;
    let available = len - offset;
    if bytes > available {
        return Err(npy_error(
            path,
            format!(
                "header needs {bytes} data bytes ({} elements of {elem_size} bytes) but the file holds {available}",
                header.len()
            ),
        ));
    }
    let mut data = Vec::new();
    reader.take(bytes).read_to_end(&mut data).map_err(|e| io_error(path, &e))?;
    if data.len() as u64 != bytes {
        return Err(npy_error(path, "file shrank while being read"));
    }
    Ok(NpyArray { dtype, shape, fortran_order: header.order() == Order::Fortran, elem_size, data })
}

/// Writes `array` to `path` in C order, atomically: a temporary file beside
/// `path` is written completely and then renamed over it. On any error no
/// file is left behind and an existing `path` is untouched.
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
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let tmp = tempfile::Builder::new()
        .prefix(".blockshuffle-")
        .suffix(".npy.tmp")
        .tempfile_in(dir)
        .map_err(|e| io_error(path, &e))?;
    let shape_u64: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
    let result = (|| -> io::Result<()> {
        let mut w = BufWriter::with_capacity(1 << 20, tmp.as_file());
        let mut w =
            WriteOptions::<u8>::new().dtype(dtype.clone()).shape(&shape_u64).writer(&mut w).write_header_only()?;
        body(&mut w)?;
        w.flush()?;
        tmp.as_file().sync_data()
    })();
    result.map_err(|e| io_error(path, &e))?;
    // Keep an existing file's permissions; a new file gets the usual
    // rw-r--r-- (the temporary file starts private). Set before the rename,
    // so the output never appears with the wrong mode.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let perms =
            std::fs::metadata(path).map(|m| m.permissions()).unwrap_or_else(|_| std::fs::Permissions::from_mode(0o644));
        tmp.as_file().set_permissions(perms).map_err(|e| io_error(path, &e))?;
    }
    tmp.persist(path).map_err(|e| io_error(path, &e.error))?;
    Ok(())
}

/// Reads `input`, runs `op` on it and writes the result to `output`
/// (atomically, see [`write()`]); returns the output shape.
pub fn run_file(op: &dyn Operator, input: &Path, output: &Path, parallelism: Parallelism) -> Result<Shape> {
    let array = read(input)?;
    let plan = op.plan(&array.shape)?.with_parallelism(parallelism);
    let out_len = plan
        .output_len()
        .checked_mul(array.elem_size)
        .ok_or_else(|| npy_error(output, "output byte count overflows"))?;
    let mut out = Vec::new();
    out.try_reserve_exact(out_len)
        .map_err(|_| npy_error(output, format!("cannot allocate {out_len} bytes for the output")))?;
    let spare = &mut out.spare_capacity_mut()[..out_len];
    if array.fortran_order {
        plan.run_bytes_strided_uninit(&array.data, &array.strides(), array.elem_size, spare)?;
    } else {
        plan.run_bytes_uninit(&array.data, array.elem_size, spare)?;
    }
    // SAFETY: the run succeeded, so every output byte was written.
    unsafe { out.set_len(out_len) };
    write_with(output, &array.dtype, plan.output_shape(), |w| w.write_all(&out))?;
    Ok(plan.output_shape().iter().copied().collect())
}
