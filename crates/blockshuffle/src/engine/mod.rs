//! The one engine behind every operator.
//!
//! - [`geometry`]: the validated description (pad/crop, split, permute, merge)
//!   and its shape inference;
//! - [`plan`]: compiling a geometry, for one direction and pair of layouts,
//!   into a canonical loop nest;
//! - [`exec`]: the executor that runs a loop nest;
//! - [`kernels`]: the kernels it calls (runs, grids, tiles, streamed rows,
//!   line writers, shuffles, vector interleaves) and the loop nest's data;
//! - [`arch`]: ISA detection, the per-ISA vectors and memory primitives.
//!
//! Exec, kernels and arch hold all of the crate's `unsafe` that touches
//! tensor memory.
//!
//! The layers import one way, each only from the layers below it:
//!
//! ```text
//! frameworks, ops, run -> geometry -> plan -> exec -> kernels -> arch
//! ```
//!
//! (plan asks kernels what they accept and builds their loop-nest data;
//! exec runs a plan through the kernels; arch imports nothing from the
//! engine.)
//!
//! The public face of the engine is [`crate::Plan`].

pub(crate) mod arch;
pub(crate) mod exec;
pub(crate) mod geometry;
pub(crate) mod kernels;
pub(crate) mod plan;

pub use plan::Direction;
