//! Helpers shared by the integration tests.

pub mod differential;
pub mod golden;
pub mod guarded;
pub mod reference;

use blockshuffle::Kernels;

/// Every kernel set a plan can be pinned to (a set the CPU lacks runs the
/// widest one it has).
#[allow(dead_code)]
pub const ALL_KERNELS: [Kernels; 5] =
    [Kernels::Auto, Kernels::Avx512, Kernels::Avx2, Kernels::Baseline, Kernels::Portable];

/// `len` bytes of labels from `seed`: no two nearby alike, and not
/// repeating every 256 (the high bits of the index folded in).
#[allow(dead_code)]
pub fn bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(37).wrapping_add(seed) ^ ((i >> 8) as u8)).collect()
}
