//! Reading and checking a `.npy` header: nothing is allocated from a
//! header's claim before it is checked against the file's real size.

use std::io::Read;
use std::path::Path;

use npyz::{DType, NpyHeader, Order};

use super::{io_error, npy_error, MAGIC};
use crate::Result;

/// What a checked header says of the data: everything but the bytes.
pub(super) struct Layout {
    pub(super) dtype: DType,
    pub(super) shape: Vec<usize>,
    pub(super) fortran_order: bool,
    pub(super) elem_size: usize,
    /// Data bytes, at most what the file holds after the header.
    pub(super) bytes: u64,
}

/// Reads the fixed part and header text of a `.npy`; returns the parsed
/// header and the data offset. `file_len` is the file's real size.
pub(super) fn read_header(path: &Path, r: &mut impl Read, file_len: u64) -> Result<(NpyHeader, u64)> {
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
    r.read_exact(&mut text).map_err(|e| match e.kind() {
        // Only a stream (whose length is not known beforehand) ends here.
        std::io::ErrorKind::UnexpectedEof => npy_error(path, format!("ends inside its {header_len}-byte header")),
        _ => io_error(path, &e),
    })?;
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
/// Checks a parsed header (at data offset `offset` of a `len`-byte file)
/// and says what it describes.
pub(super) fn layout(path: &Path, header: &NpyHeader, offset: u64, len: u64) -> Result<Layout> {
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
    Ok(Layout { dtype, shape, fortran_order: header.order() == Order::Fortran, elem_size, bytes })
}
