//! Where a run's `.npy` comes from: a regular file, mapped (read where it
//! cannot be mapped safely), or a stream (standard input, a pipe, a
//! device), read once as it comes.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

use super::header::{layout, read_header, Layout};
use super::{io_error, npy_error};
use crate::{Error, Result};

/// A checked header and the data it describes.
pub(super) struct Input {
    pub(super) layout: Layout,
    pub(super) data: Data,
}

impl Input {
    /// Opens `path` (`None`: standard input), named `shown` in errors.
    pub(super) fn open(path: Option<&Path>, shown: &Path) -> Result<Input> {
        let file = match path {
            Some(path) => File::open(path),
            None => super::duplicate(&io::stdin()),
        }
        .map_err(|e| io_error(shown, &e))?;
        let meta = file.metadata().map_err(|e| io_error(shown, &e))?;
        if !meta.is_file() {
            // A stream: its length is unknown until it ends.
            let mut reader = BufReader::new(file);
            let (header, offset) = read_header(shown, &mut reader, u64::MAX)?;
            let layout = layout(shown, &header, offset, u64::MAX)?;
            let data = read_data(shown, reader, layout.bytes, Short::Stream)?;
            return Ok(Input { layout, data: Data::Read(data) });
        }
        let len = meta.len();
        let mut reader = BufReader::new(&file);
        let (header, offset) = read_header(shown, &mut reader, len)?;
        let layout = layout(shown, &header, offset, len)?;
        let data = match Mapped::new(&file, offset, layout.bytes, shown)? {
            Some(mapped) => Data::Mapped(mapped),
            None => Data::Read(read_data(shown, reader, layout.bytes, Short::File { end: offset + layout.bytes })?),
        };
        Ok(Input { layout, data })
    }
}

/// What a short read means.
#[derive(Clone, Copy)]
pub(super) enum Short {
    /// A file of this many bytes (by its size when opened) that shrank.
    File { end: u64 },
    /// A stream that ended early.
    Stream,
}

/// Reads exactly `bytes` data bytes, in memory that grows with what
/// arrives (never sized from the header's claim alone).
pub(super) fn read_data(path: &Path, reader: impl Read, bytes: u64, short: Short) -> Result<Vec<u8>> {
    let mut reader = reader.take(bytes);
    let mut data = Vec::new();
    loop {
        let left = bytes - data.len() as u64;
        if left == 0 {
            return Ok(data);
        }
        // Grow by what is held (at least 64 KiB), so that the copies add up
        // to less than the data and the capacity never exceeds `bytes`.
        let step = left.min((data.len() as u64).max(64 << 10));
        let step_usize = usize::try_from(step).map_err(|_| Error::Allocation { bytes: step.into() })?;
        data.try_reserve_exact(step_usize).map_err(|_| Error::Allocation { bytes: u128::from(bytes) })?;
        let got = (&mut reader).take(step).read_to_end(&mut data).map_err(|e| io_error(path, &e))?;
        if got == 0 {
            let got = data.len();
            return Err(npy_error(
                path,
                match short {
                    Short::File { end } => {
                        let header = end - bytes;
                        format!("truncated while being read: expected {end} bytes, got {}", header + got as u64)
                    }
                    Short::Stream => format!("ended after {got} of the {bytes} data bytes its header declares"),
                },
            ));
        }
    }
}

/// An input's data bytes: a guarded read-only map of the file, or read into
/// memory.
pub(super) enum Data {
    Mapped(Mapped),
    Read(Vec<u8>),
}

impl Data {
    pub(super) fn bytes(&self) -> &[u8] {
        match self {
            Data::Mapped(m) => m.bytes(),
            Data::Read(v) => v,
        }
    }

    /// Checks, once the data has been used, that it was the file's: an error
    /// if the file shrank while mapped (the missing pages read as zeros).
    pub(super) fn check(&self, path: &Path) -> Result<()> {
        match self {
            Data::Mapped(m) => m.check(path),
            Data::Read(_) => Ok(()),
        }
    }
}

/// A read-only map of an input's data, guarded against the file shrinking.
#[cfg(target_os = "linux")]
pub(super) struct Mapped {
    /// Dropped before the map (fields drop in order).
    guard: super::guard::Guard,
    map: memmap2::Mmap,
    file: File,
    /// The file's size the data needs.
    end: u64,
}

#[cfg(target_os = "linux")]
impl Mapped {
    /// Maps `bytes` bytes at `offset` of `file` under a guard; `None` where
    /// that cannot be done (no data, not mappable, no guard: then the data
    /// is read).
    fn new(file: &File, offset: u64, bytes: u64, path: &Path) -> Result<Option<Mapped>> {
        if bytes == 0 || !super::guard::ready() {
            return Ok(None);
        }
        let len = usize::try_from(bytes).map_err(|_| npy_error(path, "data larger than the address space"))?;
        // SAFETY: the map is read-only and only read. Another process may
        // shrink the file meanwhile: the guard (made before any read) turns
        // the SIGBUS of reading past the new end into zeros and a fault that
        // `check` reports.
        let Ok(map) = (unsafe { memmap2::MmapOptions::new().offset(offset).len(len).map(file) }) else {
            return Ok(None);
        };
        let Some(guard) = super::guard::Guard::new(map.as_ptr(), map.len()) else { return Ok(None) };
        let file = file.try_clone().map_err(|e| io_error(path, &e))?;
        Ok(Some(Mapped { guard, map, file, end: offset + bytes }))
    }

    fn bytes(&self) -> &[u8] {
        &self.map
    }

    fn check(&self, path: &Path) -> Result<()> {
        let now = self.file.metadata().map_err(|e| io_error(path, &e))?.len();
        if self.guard.faulted() || now < self.end {
            return Err(npy_error(path, format!("truncated while being read: expected {} bytes, got {now}", self.end)));
        }
        Ok(())
    }
}

/// Without the guard (off Linux) nothing is mapped: the data is read.
#[cfg(not(target_os = "linux"))]
pub(super) enum Mapped {}

#[cfg(not(target_os = "linux"))]
impl Mapped {
    fn new(_file: &File, _offset: u64, _bytes: u64, _path: &Path) -> Result<Option<Mapped>> {
        Ok(None)
    }

    fn bytes(&self) -> &[u8] {
        match *self {}
    }

    fn check(&self, _path: &Path) -> Result<()> {
        match *self {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_mapped_input_truncated_meanwhile_is_an_error_not_sigbus() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.npy");
        let data: Vec<u8> = (0..1 << 20).map(|i| (i % 251) as u8 + 1).collect();
        crate::npy::write(&path, &crate::npy::NpyArray::from_bytes("|u1", vec![1 << 20], data.clone()).unwrap())
            .unwrap();
        let input = Input::open(Some(&path), &path).unwrap();
        assert!(matches!(input.data, Data::Mapped(_)));
        assert_eq!(input.data.check(&path), Ok(()));
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(4096).unwrap();
        // Every byte past the new end reads as zero instead of killing us.
        let bytes = input.data.bytes();
        assert_eq!(bytes.len(), 1 << 20);
        assert_eq!(bytes[..4096 - 128], data[..4096 - 128]);
        assert!(bytes[8192..].iter().all(|&b| b == 0));
        let err = input.data.check(&path).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("{}: truncated while being read: expected {} bytes, got 4096", path.display(), (1 << 20) + 128)
        );
    }

    #[test]
    fn a_short_stream_says_how_much_came() {
        let err = read_data(Path::new("<stdin>"), &[1u8, 2, 3][..], 5, Short::Stream).unwrap_err();
        assert_eq!(err.to_string(), "<stdin>: ended after 3 of the 5 data bytes its header declares");
        let err = read_data(Path::new("x.npy"), &[1u8, 2, 3][..], 5, Short::File { end: 133 }).unwrap_err();
        assert_eq!(err.to_string(), "x.npy: truncated while being read: expected 133 bytes, got 131");
        let big: Vec<u8> = (0..300_000).map(|i| i as u8).collect();
        assert_eq!(read_data(Path::new("-"), &big[..], 300_000, Short::Stream).unwrap(), big);
    }
}
