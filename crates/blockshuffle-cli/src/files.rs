//! The files of a run: `-` for standard input (as INPUT) and standard output
//! (as OUTPUT), and a pause that the tests use to act on a run in progress.

use std::path::{Path, PathBuf};
use std::time::Duration;

use blockshuffle::npy::Place;

/// The place an INPUT or OUTPUT argument names.
pub(crate) fn place(arg: &Path) -> Place<'_> {
    if arg == Path::new("-") {
        Place::Std
    } else {
        Place::Path(arg)
    }
}

/// For the tests only, not for users: with `BLOCKSHUFFLE_TEST_PAUSE=DIR`,
/// the run stops at its first progress report (the input open and mapped,
/// the output begun), creates `DIR/paused`, and goes on once `DIR/go`
/// exists. The tests signal, truncate the input or kill the process there.
const PAUSE_VAR: &str = "BLOCKSHUFFLE_TEST_PAUSE";

/// The test pause, if asked for and not yet taken.
pub(crate) struct TestPause(Option<PathBuf>);

impl TestPause {
    pub(crate) fn from_env() -> Self {
        TestPause(std::env::var_os(PAUSE_VAR).map(PathBuf::from))
    }

    /// Pauses the first time it is called (see [`PAUSE_VAR`]).
    pub(crate) fn at_progress(&mut self) {
        let Some(dir) = self.0.take() else { return };
        if std::fs::write(dir.join("paused"), b"").is_err() {
            return;
        }
        while !dir.join("go").exists() {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}
