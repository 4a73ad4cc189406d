//! The planner: compiling a geometry, for one direction and pair of layouts,
//! into a canonical loop nest ([`CopyPlan`]).
//!
//! - [`compile`]: the plan and its compilation;
//! - [`rules`]: the predicates and constants that choose its paths;
//! - [`gathers`]: the rules of blocks gathered by byte permutes;
//! - [`order`]: the loop orders, and the moves that make them;
//! - [`repetitions`]: a tile's repetitions moved next to it, and a
//!   streamed matrix's rows in chunks;
//! - [`padded`]: a padded tile's block, staged a block at a time, and
//!   where other padded tiles are staged whole;
//! - [`streamed`]: the tiles of a streaming plan that store through the
//!   cache, and those of them that stream through the stage after all;
//! - [`writers`]: the streaming plans whose long units go through the
//!   line writers.
//!
//! Layer: plan; imports geometry, kernels (the loop nest's data, and what
//! kernels accept) and arch; never exec.

pub(crate) mod compile;
pub(crate) mod gathers;
pub(crate) mod order;
pub(crate) mod padded;
pub(crate) mod repetitions;
pub(crate) mod rules;
pub(crate) mod streamed;
#[cfg(test)]
mod tests;
pub(crate) mod writers;

pub use compile::Direction;
pub(crate) use compile::{CopyPlan, Layouts};
