//! The differential harness (`crates/blockshuffle/tests/common/differential.rs`)
//! driven by the fuzzer: the input seeds one random case (operator, shape,
//! element size, layouts, kernels, streaming, threads), checked against the
//! naive reference with guard bytes around the output and the input
//! against an inaccessible page. Outputs of up to 64 MiB.

#![no_main]

use libfuzzer_sys::fuzz_target;

// The harness and the two modules it uses (`super::guarded`,
// `super::reference`), not the tests' whole `common` module.
#[path = "../../crates/blockshuffle/tests/common/differential.rs"]
mod differential;
#[path = "../../crates/blockshuffle/tests/common/guarded.rs"]
mod guarded;
#[path = "../../crates/blockshuffle/tests/common/reference.rs"]
mod reference;
use differential::{run_one, Budget, Rng};

fuzz_target!(|data: &[u8]| {
    let mut seed = [0u8; 8];
    let n = data.len().min(8);
    seed[..n].copy_from_slice(&data[..n]);
    let budget = Budget { elems: 1 << 21, bytes: 64 << 20 };
    if let Err(e) = run_one(&mut Rng::new(u64::from_le_bytes(seed)), budget) {
        panic!("{e}");
    }
});
