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
