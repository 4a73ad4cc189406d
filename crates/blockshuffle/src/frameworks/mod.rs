//! Framework front-ends: one module per framework, each holding that
//! framework's operators, its exact validation rules and its wording.
//! Every operator only validates and builds a [`crate::Plan`]; the engine
//! does the rest.

pub mod einops;
pub mod numpy;
pub mod onnx;
pub mod openvino;
pub mod tf;
pub mod torch;

use arrayvec::ArrayVec;

use crate::error::Index;
use crate::{Error, Result, MAX_RANK};

/// Validated block sizes and `(begin, end)` pads or crops, one per spatial
/// dim. The front-ends' validation fills one in place: returned, its arrays
/// would be copied on every plan.
#[derive(Default)]
pub(crate) struct BlocksAndPads {
    pub blocks: ArrayVec<u64, MAX_RANK>,
    pub pads: ArrayVec<(u64, u64), MAX_RANK>,
}

/// `value >= min`, as a block size (returns it as u64).
pub(crate) fn block_at_least(
    op: &'static str,
    param: &'static str,
    index: Option<usize>,
    value: i64,
    min: i64,
) -> Result<u64> {
    if value < min {
        return Err(Error::BlockTooSmall { op, param, index: Index(index), value, min });
    }
    Ok(value as u64)
}

/// `value >= 0`, as a padding or crop amount.
pub(crate) fn non_negative(op: &'static str, param: &'static str, index: usize, value: i64) -> Result<u64> {
    if value < 0 {
        return Err(Error::Negative { op, param, index: Index(Some(index)), value });
    }
    Ok(value as u64)
}

/// `rank >= min`.
pub(crate) fn rank_at_least(op: &'static str, rank: usize, min: usize, why: &str) -> Result<()> {
    if rank < min {
        return Err(Error::Rank { op, rank, rule: format!("must be >= {min} ({why})") });
    }
    Ok(())
}

/// `rank == expected`.
pub(crate) fn rank_exactly(op: &'static str, rank: usize, expected: usize, why: &str) -> Result<()> {
    if rank != expected {
        return Err(Error::Rank { op, rank, rule: format!("must be {expected} ({why})") });
    }
    Ok(())
}

/// `len == expected` for a parameter list.
pub(crate) fn param_len(
    op: &'static str,
    param: &'static str,
    len: usize,
    expected: usize,
    why: &'static str,
) -> Result<()> {
    if len != expected {
        return Err(Error::ParamLength { op, param, len, expected, why });
    }
    Ok(())
}

/// `size % divisor == 0`, worded with the framework's names.
pub(crate) fn divisible(
    op: &'static str,
    what: impl FnOnce() -> String,
    size: u64,
    divisor_name: impl FnOnce() -> String,
    divisor: u64,
) -> Result<()> {
    if divisor == 0 || !size.is_multiple_of(divisor) {
        return Err(Error::NotDivisible { op, what: what(), size, divisor_name: divisor_name(), divisor });
    }
    Ok(())
}

/// Checks every spatial dim of a space-to-depth input is divisible by the block.
pub(crate) fn spatial_divisible(
    op: &'static str,
    input: &[usize],
    axes: crate::ops::DepthAxes,
    names: &[&str],
    block: u64,
    block_name: &'static str,
) -> Result<()> {
    for (n, i) in axes.spatial_axes().enumerate() {
        let name = names.get(n).copied().unwrap_or("spatial");
        divisible(
            op,
            || format!("{name} dim (axis {i}) {}", input[i]),
            input[i] as u64,
            || block_name.to_string(),
            block,
        )?;
    }
    Ok(())
}
