//! The progress bar of long runs: shown on stderr once a run has taken a
//! second, and only when stderr is a terminal (never in pipes, logs or
//! tests).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a run goes before it gets a bar.
const DELAY: Duration = Duration::from_secs(1);

/// A progress bar that appears only for runs longer than [`DELAY`].
pub(crate) struct Bar {
    start: Instant,
    shown: Option<ProgressBar>,
    terminal: bool,
}

impl Bar {
    pub(crate) fn new() -> Self {
        Bar { start: Instant::now(), shown: None, terminal: std::io::stderr().is_terminal() }
    }

    /// Records `done` of `total` output bytes.
    pub(crate) fn update(&mut self, done: u64, total: u64) {
        if self.shown.is_none() && self.terminal && self.start.elapsed() >= DELAY && done < total {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            self.shown = Some(bar);
        }
        if let Some(bar) = &self.shown {
            bar.set_position(done);
        }
    }

    /// Removes the bar, if it was shown.
    pub(crate) fn finish(self) {
        if let Some(bar) = self.shown {
            bar.finish_and_clear();
        }
    }
}
