//! OpenVINO: `SpaceToBatch-2`, `BatchToSpace-2`, `SpaceToDepth-1` and
//! `DepthToSpace-1` (modes `blocks_first` and `depth_first`).
//!
//! | rule | operators |
//! | --- | --- |
//! | input rank >= 2 | SpaceToBatch, BatchToSpace |
//! | `block_shape`, pads / crops: one value per input dim | SpaceToBatch, BatchToSpace |
//! | block values >= 1 | all |
//! | pads and crops >= 0 | SpaceToBatch (as its reference implementation), BatchToSpace |
//! | `block_shape[i]` divides `data_shape[i] + pads_begin[i] + pads_end[i]` | SpaceToBatch |
//! | `prod(block_shape)` divides the batch | BatchToSpace |
//! | `crops_begin[i] + crops_end[i] <= data_shape[i] * block_shape[i]` | BatchToSpace |
//! | input rank >= 3 (`[N, C, D1..DK]`) | SpaceToDepth, DepthToSpace |
//! | `block_size` divides every spatial dim | SpaceToDepth |
//! | `block_size^K` divides C | DepthToSpace |
//!
//! The specification expects `block_shape[0] = 1` and zero pads / crops on
//! the batch axis but OpenVINO does not check it, and its CPU plugin and
//! reference implementation then disagree. This crate rejects such
//! parameters with [`crate::Error::Unsupported`].

use std::str::FromStr;

use super::{block_at_least, divisible, non_negative, param_len, rank_at_least, spatial_divisible, BlocksAndPads};
use crate::engine::geometry;
use crate::error::{Error, Index};
use crate::ops::{self, DepthAxes, DepthLayout};
use crate::{Operator, Plan, Result};

const BATCH_WHY: &str = "OpenVINO leaves the batch axis unchecked and its implementations disagree";

/// `SpaceToBatch-2`: like TensorFlow's `SpaceToBatchND` with every non-batch
/// dim spatial. Output `[batch * prod(block_shape), (D_i + pads_begin[i] + pads_end[i]) / block_shape[i], ...]`.
///
/// ```
/// use blockshuffle::{openvino, Operator};
/// // The specification's example: [2, 6, 10, 3, 3] -> [48, 3, 3, 1, 3].
/// let op = openvino::SpaceToBatch::new(&[1, 2, 4, 3, 1], &[0, 0, 1, 0, 0], &[0, 0, 1, 0, 0]);
/// assert_eq!(op.output_shape(&[2, 6, 10, 3, 3])?.as_slice(), &[48, 3, 3, 1, 3]);
/// # Ok::<(), blockshuffle::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpaceToBatch<'a> {
    /// One block value per input dim; `block_shape[0]` must be 1.
    pub block_shape: &'a [i64],
    /// Padding at the start of each dim; `pads_begin[0]` must be 0.
    pub pads_begin: &'a [i64],
    /// Padding at the end of each dim; `pads_end[0]` must be 0.
    pub pads_end: &'a [i64],
}

impl<'a> SpaceToBatch<'a> {
    /// The operator with these parameters (validated by [`Operator::plan`]).
    pub fn new(block_shape: &'a [i64], pads_begin: &'a [i64], pads_end: &'a [i64]) -> Self {
        SpaceToBatch { block_shape, pads_begin, pads_end }
    }
}

/// `BatchToSpace-2`: the inverse of [`SpaceToBatch`]. Output
/// `[batch / prod(block_shape), D_i * block_shape[i] - crops_begin[i] - crops_end[i], ...]`.
///
/// ```
/// use blockshuffle::{openvino, Operator};
/// // The specification's 2-D example: [10, 2] -> [2, 8].
/// let op = openvino::BatchToSpace::new(&[1, 5], &[0, 2], &[0, 0]);
/// let x: Vec<i32> = (0..20).collect();
/// let (y, shape) = op.apply(&x, &[10, 2])?;
/// assert_eq!(shape.as_slice(), &[2, 8]);
/// assert_eq!(y[..8], [8, 12, 16, 1, 5, 9, 13, 17]);
/// # Ok::<(), blockshuffle::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchToSpace<'a> {
    /// One block value per input dim; `block_shape[0]` must be 1.
    pub block_shape: &'a [i64],
    /// Crop at the start of each dim; `crops_begin[0]` must be 0.
    pub crops_begin: &'a [i64],
    /// Crop at the end of each dim; `crops_end[0]` must be 0.
    pub crops_end: &'a [i64],
}

impl<'a> BatchToSpace<'a> {
    /// The operator with these parameters (validated by [`Operator::plan`]).
    pub fn new(block_shape: &'a [i64], crops_begin: &'a [i64], crops_end: &'a [i64]) -> Self {
        BatchToSpace { block_shape, crops_begin, crops_end }
    }
}

/// Validates the space/batch parameters; returns the spatial blocks and pads (dims 1..).
fn batch_params(
    op: &'static str,
    input: &[usize],
    block_shape: &[i64],
    begin: (&'static str, &[i64]),
    end: (&'static str, &[i64]),
    out: &mut BlocksAndPads,
) -> Result<()> {
    rank_at_least(op, input.len(), 2, "[batch, D_1, ...]")?;
    ops::check_max_rank(op, input.len())?;
    let n = input.len();
    let why = "one value per input dim";
    param_len(op, "block_shape", block_shape.len(), n, why)?;
    param_len(op, begin.0, begin.1.len(), n, why)?;
    param_len(op, end.0, end.1.len(), n, why)?;
    let BlocksAndPads { blocks, pads } = out;
    for (i, ((&b, &s), &e)) in block_shape.iter().zip(begin.1).zip(end.1).enumerate() {
        let b = block_at_least(op, "block_shape", Some(i), b, 1)?;
        let s = non_negative(op, begin.0, i, s)?;
        let e = non_negative(op, end.0, i, e)?;
        if i == 0 {
            for (param, value, required) in [("block_shape", b, 1), (begin.0, s, 0), (end.0, e, 0)] {
                if value != required {
                    return Err(Error::Unsupported {
                        op,
                        param,
                        index: Index(Some(0)),
                        value: value as i64,
                        required: required as i64,
                        why: BATCH_WHY,
                    });
                }
            }
        } else {
            blocks.push(b);
            pads.push((s, e));
        }
    }
    Ok(())
}

impl Operator for SpaceToBatch<'_> {
    fn name(&self) -> &'static str {
        "ov space-to-batch"
    }

    fn plan(&self, input_shape: &[usize]) -> Result<Plan> {
        let op = self.name();
        let mut params = BlocksAndPads::default();
        batch_params(
            op,
            input_shape,
            self.block_shape,
            ("pads_begin", self.pads_begin),
            ("pads_end", self.pads_end),
            &mut params,
        )?;
        let BlocksAndPads { blocks, pads } = &params;
        for (i, (&b, &(s, e))) in blocks.iter().zip(pads).enumerate() {
            let d = input_shape[i + 1] as u64;
            let padded = geometry::add(op, "padded dim", geometry::add(op, "padded dim", d, s)?, e)?;
            let axis = i + 1;
            divisible(
                op,
                || format!("padded dim {axis} (data {d} + pads {s} + {e} = {padded})"),
                padded,
                || format!("block_shape[{axis}]"),
                b,
            )?;
        }
        ops::space_to_batch(op, input_shape, blocks, pads)
    }
}

impl Operator for BatchToSpace<'_> {
    fn name(&self) -> &'static str {
        "ov batch-to-space"
    }

    fn plan(&self, input_shape: &[usize]) -> Result<Plan> {
        let op = self.name();
        let mut params = BlocksAndPads::default();
        batch_params(
            op,
            input_shape,
            self.block_shape,
            ("crops_begin", self.crops_begin),
            ("crops_end", self.crops_end),
            &mut params,
        )?;
        // OpenVINO counts the batch axis: spatial dim i is axis i + 1.
        ops::batch_to_space(op, input_shape, &params.blocks, &params.pads, 1)
    }
}

/// OpenVINO's `mode` for the depth operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Depth index `(block position, channel)`: the block offsets are the
    /// outer part of the channel index.
    BlocksFirst,
    /// Depth index `(channel, block position)`.
    DepthFirst,
}

impl Mode {
    /// The name OpenVINO uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::BlocksFirst => "blocks_first",
            Mode::DepthFirst => "depth_first",
        }
    }

    fn axes(self, rank: usize) -> DepthAxes {
        let layout = match self {
            Mode::BlocksFirst => DepthLayout::BlocksFirst,
            Mode::DepthFirst => DepthLayout::DepthFirst,
        };
        DepthAxes { lead: 1, k: rank.saturating_sub(2), layout }
    }
}

impl FromStr for Mode {
    type Err = Error;

    /// Parses `blocks_first` or `depth_first`.
    ///
    /// ```
    /// use blockshuffle::openvino::Mode;
    /// assert_eq!("depth_first".parse::<Mode>()?, Mode::DepthFirst);
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "blocks_first" => Ok(Mode::BlocksFirst),
            "depth_first" => Ok(Mode::DepthFirst),
            _ => Err(Error::UnknownValue {
                op: "ov",
                param: "mode",
                value: s.into(),
                allowed: "blocks_first, depth_first",
            }),
        }
    }
}

/// `SpaceToDepth-1`: `[N, C, D1, ..., DK]` to `[N, C * b^K, D1/b, ..., DK/b]`.
///
/// ```
/// use blockshuffle::{openvino, Operator};
/// let x = [0, 1, 2, 3]; // [1, 1, 4]: one spatial dim
/// let (y, shape) = openvino::SpaceToDepth::blocks_first(2).apply(&x, &[1, 1, 4])?;
/// assert_eq!(shape.as_slice(), &[1, 2, 2]);
/// assert_eq!(y, [0, 2, 1, 3]);
/// # Ok::<(), blockshuffle::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpaceToDepth {
    /// The block's side, the same along every spatial dim (>= 1).
    pub block_size: i64,
    /// How block offsets and channels combine into the depth index.
    pub mode: Mode,
}

impl SpaceToDepth {
    /// The operator with these parameters (validated by [`Operator::plan`]).
    pub fn new(block_size: i64, mode: Mode) -> Self {
        SpaceToDepth { block_size, mode }
    }

    /// Mode `blocks_first`.
    pub fn blocks_first(block_size: i64) -> Self {
        Self::new(block_size, Mode::BlocksFirst)
    }

    /// Mode `depth_first`.
    pub fn depth_first(block_size: i64) -> Self {
        Self::new(block_size, Mode::DepthFirst)
    }
}

/// `DepthToSpace-1`: `[N, C, D1, ..., DK]` to `[N, C / b^K, D1*b, ..., DK*b]`.
///
/// ```
/// use blockshuffle::{openvino, Operator};
/// let (y, shape) = openvino::DepthToSpace::depth_first(2).apply(&[0, 2, 1, 3], &[1, 2, 2])?;
/// assert_eq!(shape.as_slice(), &[1, 1, 4]);
/// assert_eq!(y, [0, 1, 2, 3]);
/// # Ok::<(), blockshuffle::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DepthToSpace {
    /// The block's side, the same along every spatial dim (>= 1).
    pub block_size: i64,
    /// How the depth index splits into block offsets and channels.
    pub mode: Mode,
}

impl DepthToSpace {
    /// The operator with these parameters (validated by [`Operator::plan`]).
    pub fn new(block_size: i64, mode: Mode) -> Self {
        DepthToSpace { block_size, mode }
    }

    /// Mode `blocks_first`.
    pub fn blocks_first(block_size: i64) -> Self {
        Self::new(block_size, Mode::BlocksFirst)
    }

    /// Mode `depth_first`.
    pub fn depth_first(block_size: i64) -> Self {
        Self::new(block_size, Mode::DepthFirst)
    }
}

impl Operator for SpaceToDepth {
    fn name(&self) -> &'static str {
        "ov space-to-depth"
    }

    fn plan(&self, input_shape: &[usize]) -> Result<Plan> {
        let op = self.name();
        rank_at_least(op, input_shape.len(), 3, "[N, C, D1, ..., DK] with K >= 1")?;
        let block = block_at_least(op, "block_size", None, self.block_size, 1)?;
        let axes = self.mode.axes(input_shape.len());
        spatial_divisible(op, input_shape, axes, &[], block, "block_size")?;
        ops::space_to_depth(op, input_shape, axes, block)
    }
}

impl Operator for DepthToSpace {
    fn name(&self) -> &'static str {
        "ov depth-to-space"
    }

    fn plan(&self, input_shape: &[usize]) -> Result<Plan> {
        let op = self.name();
        rank_at_least(op, input_shape.len(), 3, "[N, C, D1, ..., DK] with K >= 1")?;
        let block = block_at_least(op, "block_size", None, self.block_size, 1)?;
        let axes = self.mode.axes(input_shape.len());
        let per = ops::block_power(op, block, axes.k)?;
        let c = input_shape[1] as u64;
        divisible(op, || format!("channel dim {c}"), c, || format!("block_size^{}", axes.k), per)?;
        ops::depth_to_space(op, input_shape, axes, block)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_axis_must_be_neutral() {
        let op = SpaceToBatch::new(&[2, 1], &[0, 0], &[0, 0]);
        assert_eq!(
            op.output_shape(&[2, 2]),
            Err(Error::Unsupported {
                op: "ov space-to-batch",
                param: "block_shape",
                index: Index(Some(0)),
                value: 2,
                required: 1,
                why: BATCH_WHY
            })
        );
        let op = BatchToSpace::new(&[1, 1], &[1, 0], &[0, 0]);
        assert!(matches!(op.output_shape(&[2, 2]), Err(Error::Unsupported { param: "crops_begin", .. })));
    }

    #[test]
    fn crop_too_large_names_the_input_axis() {
        let op = BatchToSpace::new(&[1, 2, 3], &[0, 5, 0], &[0, 4, 0]);
        assert_eq!(
            op.output_shape(&[6, 4, 1]),
            Err(Error::CropTooLarge { op: "ov batch-to-space", axis: 1, size: 8, begin: 5, end: 4 })
        );
    }
}
