//! What the command's test files share.

use std::path::Path;
use std::process::{Command, Output};

/// The built `blockshuffle`.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_blockshuffle"))
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
