//! Helpers of the command's tests: `.npy` inputs written by the library or by hand.

use std::path::{Path, PathBuf};

use blockshuffle::npy;

/// Writes a C-order `.npy` of `descr`, `shape` and raw `data` into `dir`.
pub fn write_input(dir: &Path, name: &str, descr: &str, shape: Vec<usize>, data: Vec<u8>) -> PathBuf {
    let path = dir.join(name);
    npy::write(&path, &npy::NpyArray::from_bytes(descr, shape, data).unwrap()).unwrap();
    path
}

/// A version 1.0 `.npy` file with this header dict and data, padded as numpy pads.
pub fn npy_file(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut header = dict.as_bytes().to_vec();
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut file = b"\x93NUMPY\x01\x00".to_vec();
    file.extend_from_slice(&(header.len() as u16).to_le_bytes());
    file.extend_from_slice(&header);
    file.extend_from_slice(data);
    file
}
