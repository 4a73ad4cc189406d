//! What the command's test files share: the built binary, and `.npy`
//! inputs written by the library or by hand.

// Each test file uses some of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use blockshuffle::npy;

/// The built `blockshuffle`.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_blockshuffle"))
}

/// The built `blockshuffle`, run by `sh` after `setup` (`umask 077`,
/// `ulimit -f 64`, ...): the shell execs it, so its pid is the child's.
pub fn bin_after(setup: &str) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(format!("{setup} && exec \"$0\" \"$@\"")).arg(env!("CARGO_BIN_EXE_blockshuffle"));
    cmd
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Files in `dir`, hidden ones too, sorted (to prove nothing, not even a
/// temporary file, is left behind).
pub fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

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
