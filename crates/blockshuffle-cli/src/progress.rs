//! The progress bar of long runs: shown on stderr once a run has taken a
//! second, and only when stderr is a terminal (never in pipes, logs or
//! tests).
//!
//! The rate and the time left are computed here from the run's real start
//! (not from when the bar appeared, which would count the first second's
//! work as done in an instant): the rate is the bytes done over the time
//! since the start, the time left what remains at that rate.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{BinaryBytes, HumanDuration, ProgressBar, ProgressDrawTarget, ProgressStyle};

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
        let elapsed = self.start.elapsed();
        if self.shown.is_none() && self.terminal && elapsed >= DELAY && done < total {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            self.shown = Some(bar);
        }
        if let Some(bar) = &self.shown {
            bar.set_position(done);
            bar.set_message(rate_text(done, total, elapsed));
        }
    }

    /// Removes the bar, if it was shown.
    pub(crate) fn finish(self) {
        if let Some(bar) = self.shown {
            bar.finish_and_clear();
        }
    }
}

/// The bytes per second since the start, and the time left at that rate
/// (`None` until something is done).
fn rate(done: u64, total: u64, elapsed: Duration) -> (f64, Option<Duration>) {
    let seconds = elapsed.as_secs_f64();
    if done == 0 || seconds <= 0.0 {
        return (0.0, None);
    }
    let per_second = done as f64 / seconds;
    let left = total.saturating_sub(done) as f64 / per_second;
    (per_second, Duration::try_from_secs_f64(left).ok())
}

/// `rate`, as the bar shows it: "1.50 GiB/s eta 3 seconds".
fn rate_text(done: u64, total: u64, elapsed: Duration) -> String {
    match rate(done, total, elapsed) {
        (per_second, Some(left)) => format!("{}/s eta {}", BinaryBytes(per_second as u64), HumanDuration(left)),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_counts_from_the_real_start() {
        // 3 GiB of 12 done 2 s after the start: 1.5 GiB/s, 6 s left, however
        // late the bar appeared.
        let gib = 1u64 << 30;
        assert_eq!(rate(3 * gib, 12 * gib, Duration::from_secs(2)), (1.5 * gib as f64, Some(Duration::from_secs(6))));
        assert_eq!(rate_text(3 * gib, 12 * gib, Duration::from_secs(2)), "1.50 GiB/s eta 6 seconds");
        assert_eq!(rate(0, 12 * gib, Duration::from_secs(2)), (0.0, None));
        assert_eq!(rate(5, 10, Duration::ZERO), (0.0, None));
        assert_eq!(rate_text(0, 10, Duration::from_secs(1)), "");
        assert_eq!(rate(10, 10, Duration::from_secs(4)), (2.5, Some(Duration::ZERO)));
    }
}
