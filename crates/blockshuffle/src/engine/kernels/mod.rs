//! The kernels: small functions that move bytes between offsets the plan has
//! proven valid, each documenting what its caller guarantees.
//!
//! - [`nest`]: the loop nest's plain data (`Loop`, `Window`, `Bounds`,
//!   `Rows`), which the planner builds and the executor walks;
//! - [`bytes`]: contiguous copies, streamed copies, fills, stack stages;
//! - [`copy`]: runs of units, the loop-nest walk, streaming gathers;
//! - [`grid`], [`tile`], [`stream`]: the innermost loops as a grid, a
//!   transposing tile, streamed rows;
//! - [`cropped`]: interleaved rows cropped at their ends, built in a stage;
//! - [`lines`]: the line writers (streaming stores of whole lines);
//! - [`shuffle`]: byte shuffles for 3-, 6- and 12-byte units;
//! - [`gather`]: small destination blocks gathered from a few source rows
//!   by byte permutes;
//! - [`permute`]: interleaves of 5 to 32 streams (and of units of other
//!   sizes) by byte permutes;
//! - [`transpose`]: the blocked transpose of two long sides;
//! - [`simd`], [`carried`], [`interleave_carried`], [`any_units`]: the
//!   vector interleaving kernels.
//!
//! Layer: kernels; imports arch (and geometry's limits), never plan or exec.
//! Each file imports only the files listed in its own docs, one way.

pub(crate) mod any_units;
pub(crate) mod bytes;
pub(crate) mod carried;
pub(crate) mod copy;
pub(crate) mod cropped;
pub(crate) mod gather;
pub(crate) mod grid;
pub(crate) mod interleave_carried;
pub(crate) mod lines;
pub(crate) mod nest;
pub(crate) mod pack;
pub(crate) mod permute;
pub(crate) mod shuffle;
pub(crate) mod simd;
pub(crate) mod stream;
pub(crate) mod tile;
pub(crate) mod transpose;

#[cfg(test)]
mod grid_tests;
#[cfg(all(test, target_arch = "x86_64"))]
mod simd_tests;
#[cfg(test)]
mod tests;
