//! What the command's test files share.

use std::path::Path;
use std::process::{Command, Output};

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
