//! The one engine behind every operator.
//!
//! - [`geometry`]: the validated description (pad/crop, split, permute, merge)
//!   and its shape inference;
//! - [`plan`]: compiling a geometry, for one direction and pair of layouts,
//!   into a canonical loop nest;
//! - [`exec`]: the executor that runs a loop nest, with the kernels it calls
//!   ([`kernels`], [`simd`] for short runs, [`lines`] for streaming stores):
//!   all of the crate's `unsafe` that touches tensor memory.
//!
//! The public face of the engine is [`crate::Plan`].

pub(crate) mod exec;
pub(crate) mod geometry;
pub(crate) mod kernels;
pub(crate) mod lines;
pub(crate) mod plan;
pub(crate) mod shuffle;
pub(crate) mod simd;

pub use plan::Direction;
