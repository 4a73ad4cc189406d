//! The command's errors, apart from the library's: each says what was
//! wrong with the command line or the run, and maps to the exit status
//! (2 for a usage error, 1 for a failed run) that `--help` documents.

use std::path::PathBuf;

/// Exit status of a usage error: nothing was run.
pub(crate) const USAGE: u8 = 2;
/// Exit status of a run that failed.
pub(crate) const FAILURE: u8 = 1;

/// Everything the command reports as `error: ...`.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    /// The command line does not parse (clap's own message, with its
    /// suggestions and usage line).
    #[error("{0}")]
    Parse(#[source] clap::Error),

    /// An argument breaks a rule of this command that clap does not check.
    #[error("{arg} {problem}")]
    Usage {
        /// The argument, as written on the command line (`--input-shape`).
        arg: String,
        /// The rule it breaks, with the value given.
        problem: String,
    },

    /// An operator flag's value that the library's catalogue cannot parse
    /// (not an integer, an odd count of pair values, ...): a usage error.
    #[error("{0}")]
    Flag(#[source] blockshuffle::Error),

    /// The run failed in the library: the operator's rules rejected the
    /// parameters or the input, or a file could not be read or written.
    #[error("{0}")]
    Library(#[source] blockshuffle::Error),

    /// A file of the command's own (bench's workloads or report) could not
    /// be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },

    /// A workloads file that is not valid workloads JSON.
    #[error("{}: {source}", path.display())]
    Json {
        /// The file (`<built in>` for the built-in workloads).
        path: PathBuf,
        /// What is wrong, with its line and column.
        #[source]
        source: serde_json::Error,
    },

    /// A workload that cannot be run as written.
    #[error("workload {id}: {problem}")]
    Workload {
        /// The workload's id.
        id: String,
        /// What is wrong, with the value given.
        problem: String,
    },

    /// The thread pool could not be built.
    #[error("thread pool of {threads} threads: {source}")]
    Pool {
        /// Threads asked for.
        threads: usize,
        /// Rayon's error.
        #[source]
        source: rayon::ThreadPoolBuildError,
    },
}

impl CliError {
    /// The exit status: 2 for usage errors, 1 for failed runs.
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            CliError::Parse(e) => u8::try_from(e.exit_code()).unwrap_or(USAGE),
            CliError::Usage { .. } | CliError::Flag(_) => USAGE,
            CliError::Library(_)
            | CliError::Io { .. }
            | CliError::Json { .. }
            | CliError::Workload { .. }
            | CliError::Pool { .. } => FAILURE,
        }
    }
}

impl From<blockshuffle::Error> for CliError {
    /// A library error: a usage error when it is about the command line's
    /// flags or names, a failed run otherwise.
    fn from(e: blockshuffle::Error) -> Self {
        match e {
            blockshuffle::Error::Flag { .. }
            | blockshuffle::Error::UnknownValue { .. }
            | blockshuffle::Error::UnknownOperator { .. } => CliError::Flag(e),
            e => CliError::Library(e),
        }
    }
}

impl From<clap::Error> for CliError {
    fn from(e: clap::Error) -> Self {
        CliError::Parse(e)
    }
}
