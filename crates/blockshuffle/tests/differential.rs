//! The differential harness (see `common/differential.rs`) as a test: a
//! quick sweep of random cases within a time bound, every case checked
//! against the naive reference.
//!
//! `BLOCKSHUFFLE_DIFF_SECONDS` (default 20), `BLOCKSHUFFLE_DIFF_SEED`
//! (default a fixed seed: each run repeats the last) and
//! `BLOCKSHUFFLE_DIFF_MAX_BYTES` (default 4 MiB in debug builds, 64 MiB in
//! release) set a longer or larger sweep:
//!
//! ```text
//! BLOCKSHUFFLE_DIFF_SECONDS=1800 BLOCKSHUFFLE_DIFF_SEED=$RANDOM \
//!     cargo test --release --test differential -- --nocapture
//! ```

use std::time::{Duration, Instant};

mod common;
use common::differential::{run_one, Budget, Rng};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn random_cases_agree_with_the_reference() {
    let seconds = env("BLOCKSHUFFLE_DIFF_SECONDS", 20);
    let seed = env("BLOCKSHUFFLE_DIFF_SEED", 0x5eed);
    let max_bytes = env("BLOCKSHUFFLE_DIFF_MAX_BYTES", if cfg!(debug_assertions) { 4 << 20 } else { 64 << 20 });
    // The naive reference visits every element: debug builds take fewer.
    let budget = Budget { elems: if cfg!(debug_assertions) { 1 << 18 } else { 1 << 22 }, bytes: max_bytes as usize };
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut rng = Rng::new(seed);
    let (mut cases, mut bytes) = (0u64, 0u64);
    while Instant::now() < deadline || cases < 20 {
        // Each case from a seed of its own, so that a failure names it.
        let case_seed = rng.next();
        match run_one(&mut Rng::new(case_seed), budget) {
            Ok(what) => {
                bytes += what.rsplit(' ').nth(1).and_then(|b| b.parse::<u64>().ok()).unwrap_or(0);
                cases += 1;
            }
            Err(e) => panic!("case seed {case_seed:#x} (sweep seed {seed:#x}, case {cases}): {e}"),
        }
    }
    eprintln!("differential: {cases} cases, {} MiB of output, seed {seed:#x}", bytes >> 20);
}

/// One case by its seed (`BLOCKSHUFFLE_DIFF_CASE`, as a failure names it),
/// printed: for reproducing a failure.
#[test]
#[ignore = "reproduces one case: set BLOCKSHUFFLE_DIFF_CASE"]
fn one_case() {
    let seed = std::env::var("BLOCKSHUFFLE_DIFF_CASE").expect("BLOCKSHUFFLE_DIFF_CASE");
    let seed = u64::from_str_radix(seed.trim_start_matches("0x"), 16).expect("a hex seed");
    let max_bytes = env("BLOCKSHUFFLE_DIFF_MAX_BYTES", 64 << 20) as usize;
    match run_one(&mut Rng::new(seed), Budget { elems: 1 << 22, bytes: max_bytes }) {
        Ok(what) => eprintln!("{what}"),
        Err(e) => panic!("{e}"),
    }
}
