//! `SIGINT`, `SIGTERM` and `SIGHUP` during a run: the output's temporary
//! file, if it has one, is removed, and the process then dies of the signal
//! as it would have without this (the default action, re-raised: a shell
//! sees status 128 + the signal's number, 130 for Ctrl-C, 143 for SIGTERM).
//!
//! On filesystems with `O_TMPFILE` (Linux's ext4, xfs, btrfs, tmpfs) the
//! output has no name until it is complete, so there is nothing to remove
//! and even `SIGKILL` leaves nothing; elsewhere the hidden
//! `.blockshuffle-PID-XXXXXX.npy.tmp` is removed here, and one left by
//! `SIGKILL` is removed by the next run that writes to the same directory.

/// Starts the thread that waits for the signals.
#[cfg(unix)]
pub(crate) fn install() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        // Without the handlers the signals keep their default action: the
        // run dies as before, and its temporary file (if any) is removed by
        // the next run.
        return;
    };
    let spawned = std::thread::Builder::new().name("signals".into()).spawn(move || {
        if let Some(signal) = signals.forever().next() {
            blockshuffle::npy::abandon_outputs();
            let _ = signal_hook::low_level::emulate_default_handler(signal);
            // Not reached: the default action of these signals ends the process.
            std::process::exit(128 + signal);
        }
    });
    drop(spawned);
}

/// Elsewhere, the signals keep their default action.
#[cfg(not(unix))]
pub(crate) fn install() {}
