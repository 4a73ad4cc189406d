//! TensorFlow: `SpaceToBatchND`, `BatchToSpaceND`, the v1 `SpaceToBatch` /
//! `BatchToSpace` (4-D NHWC, scalar block) and `SpaceToDepth` /
//! `DepthToSpace` in NHWC, NCHW and NCHW_VECT_C.
//!
//! The rules are those of TensorFlow's kernels and shape functions
//! (`space_to_batch_nd_op.cc`, `batch_to_space_op.cc`, `spacetodepth_op.cc`,
//! `depthtospace_op.cc`, `array_ops.cc`):
//!
//! | rule | operators |
//! | --- | --- |
//! | `len(paddings)` / `len(crops)` = `len(block_shape)` = M | ND |
//! | input rank >= 1 + M | ND |
//! | input rank = 4 | v1 space/batch, depth ops in NHWC and NCHW |
//! | input rank = 5 with last dim 4 | depth ops in NCHW_VECT_C |
//! | block values >= 1 | space/batch ops (v1 and ND) |
//! | block size >= 2 | depth ops |
//! | paddings and crops >= 0 | space/batch ops |
//! | `block[i]` divides `input[i+1] + pad_start + pad_end` | space-to-batch |
//! | `prod(block)` divides the batch | batch-to-space |
//! | `crop_start + crop_end <= input[i+1] * block[i]` | batch-to-space |
//! | at most 4 block dims once leading and trailing ones with block 1 and no padding/crop are combined away | ND |
//! | `block` divides height and width | space-to-depth |
//! | `block^2` divides the depth (channel groups for VECT_C) | depth-to-space |
//!
//! TensorFlow's CPU kernels run only NHWC for the depth ops (NCHW and
//! NCHW_VECT_C are GPU-only there); this crate runs every layout on the CPU,
//! with TensorFlow's semantics: the output channel of input position
//! `(by, bx, c)` is `(by * block + bx) * C + c`. NCHW_VECT_C is NCHW in which
//! each group of 4 int8 channels (the last axis) moves as one unit. Where
//! TensorFlow's depth-to-space with NCHW_VECT_C hard-aborts (a last dim other
//! than 4), this crate returns [`crate::Error::VectSize`].

use std::str::FromStr;

use super::{
    block_at_least, divisible, non_negative, param_len, rank_at_least, rank_exactly, spatial_divisible, BlocksAndPads,
};
use crate::engine::geometry;
use crate::error::Error;
use crate::ops::{self, DepthAxes, DepthLayout};
use crate::{Operator, Plan, Result};

/// Most block dimensions TensorFlow's space/batch kernels handle after
/// combining away leading and trailing ones with block 1 and no padding.
pub const MAX_BLOCK_DIMS: usize = 4;

/// `tf.space_to_batch_nd`: zero-pad spatial dims `1..=M`, then move blocks of
/// `block_shape` into the batch.
///
/// Input `[batch] + spatial[M] + remaining`; output
/// `[batch * prod(block_shape)] + [(spatial[i] + pad_start[i] + pad_end[i]) / block_shape[i]] + remaining`.
/// Output batch index `((b_1 * B_2 + b_2) ... ) * batch + n` for the position
/// `(b_1, ..., b_M)` within the block.
///
/// ```
/// use blockshuffle::{tf, Operator};
/// // The spec's example (3): [1, 4, 4, 1], block 2x2.
/// let x: Vec<i32> = (1..=16).collect();
/// let (y, shape) = tf::SpaceToBatchNd::new(&[2, 2], &[[0, 0], [0, 0]]).apply(&x, &[1, 4, 4, 1])?;
/// assert_eq!(shape.as_slice(), &[4, 2, 2, 1]);
/// assert_eq!(y, [1, 3, 9, 11, 2, 4, 10, 12, 5, 7, 13, 15, 6, 8, 14, 16]);
/// # Ok::<(), blockshuffle::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpaceToBatchNd<'a> {
    /// `block_shape`, one value per spatial dim (M values).
    pub block_shape: &'a [i64],
    /// `paddings`, `[pad_start, pad_end]` per spatial dim.
    pub paddings: &'a [[i64; 2]],
}

impl<'a> SpaceToBatchNd<'a> {
    /// The operator with these parameters (validated by [`Operator::plan`]).
    pub fn new(block_shape: &'a [i64], paddings: &'a [[i64; 2]]) -> Self {
        SpaceToBatchNd { block_shape, paddings }
    }
}

/// `tf.batch_to_space_nd`: the inverse of [`SpaceToBatchNd`], cropping
/// instead of padding.
///
/// Input `[batch] + spatial[M] + remaining` with `prod(block_shape)` dividing
/// `batch`; output `[batch / prod(block_shape)] + [spatial[i] * block_shape[i] - crop_start[i] - crop_end[i]] + remaining`.
///
/// ```
/// use blockshuffle::{tf, Operator};
/// let x = [1, 3, 9, 11, 2, 4, 10, 12, 5, 7, 13, 15, 6, 8, 14, 16];
/// let (y, shape) = tf::BatchToSpaceNd::new(&[2, 2], &[[0, 0], [0, 1]]).apply(&x, &[4, 2, 2, 1])?;
/// assert_eq!(shape.as_slice(), &[1, 4, 3, 1]);
/// assert_eq!(y, [1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15]);
/// # Ok::<(), blockshuffle::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchToSpaceNd<'a> {
    /// `block_shape`, one value per spatial dim (M values).
    pub block_shape: &'a [i64],
    /// `crops`, `[crop_start, crop_end]` per spatial dim.
    pub crops: &'a [[i64; 2]],
}

impl<'a> BatchToSpaceNd<'a> {
    /// The operator with these parameters (validated by [`Operator::plan`]).
    pub fn new(block_shape: &'a [i64], crops: &'a [[i64; 2]]) -> Self {
        BatchToSpaceNd { block_shape, crops }
    }
}

/// Shared validation of the ND space/batch parameters; returns blocks and pads.
#[inline]
fn nd_params(
    op: &'static str,
    input: &[usize],
    block_shape: &[i64],
    pads_in: &[[i64; 2]],
    pads_name: &'static str,
    out: &mut BlocksAndPads,
) -> Result<()> {
    let m = block_shape.len();
    param_len(op, pads_name, pads_in.len(), m, "one [start, end] pair per block_shape value")?;
    rank_at_least(op, input.len(), 1 + m, "1 + len(block_shape)")?;
    crate::ops::check_max_rank(op, input.len())?;
    let BlocksAndPads { blocks, pads } = out;
    for (i, &b) in block_shape.iter().enumerate() {
        blocks.push(block_at_least(op, "block_shape", Some(i), b, 1)?);
    }
    for (i, &[s, e]) in pads_in.iter().enumerate() {
        pads.push((non_negative(op, pads_name, 2 * i, s)?, non_negative(op, pads_name, 2 * i + 1, e)?));
    }
    // TensorFlow combines away leading and trailing dims with block 1 and no
    // padding, then handles at most four.
    let neutral = |i: usize| blocks[i] == 1 && pads[i] == (0, 0);
    let prefix = (0..m).take_while(|&i| neutral(i)).count();
    let suffix = (prefix..m).rev().take_while(|&i| neutral(i)).count();
    let internal = m - prefix - suffix;
    if internal > MAX_BLOCK_DIMS {
        return Err(Error::TooManyBlockDims { op, count: internal, max: MAX_BLOCK_DIMS });
    }
    Ok(())
}

#[inline]
fn space_to_batch_nd(op: &'static str, input: &[usize], block_shape: &[i64], paddings: &[[i64; 2]]) -> Result<Plan> {
    let mut params = BlocksAndPads::default();
    nd_params(op, input, block_shape, paddings, "paddings", &mut params)?;
    let BlocksAndPads { blocks, pads } = &params;
    for (i, (&b, &(s, e))) in blocks.iter().zip(pads).enumerate() {
        let d = input[i + 1] as u64;
        let padded = geometry::add(op, "padded spatial dim", d, s)?;
        let padded = geometry::add(op, "padded spatial dim", padded, e)?;
        divisible(
            op,
            || format!("padded spatial dim {i} (input {d} + paddings {s} + {e} = {padded})"),
            padded,
            || format!("block_shape[{i}]"),
            b,
        )?;
    }
    ops::space_to_batch(op, input, blocks, pads)
}

#[inline]
fn batch_to_space_nd(op: &'static str, input: &[usize], block_shape: &[i64], crops: &[[i64; 2]]) -> Result<Plan> {
    let mut params = BlocksAndPads::default();
    nd_params(op, input, block_shape, crops, "crops", &mut params)?;
    ops::batch_to_space(op, input, &params.blocks, &params.pads, 0)
}

impl Operator for SpaceToBatchNd<'_> {
    fn name(&self) -> &'static str {
        "tf space-to-batch-nd"
    }

    fn plan(&self, input_shape: &[usize]) -> Result<Plan> {
        space_to_batch_nd(self.name(), input_shape, self.block_shape, self.paddings)
    }
}

impl Operator for BatchToSpaceNd<'_> {
    fn name(&self) -> &'static str {
        "tf batch-to-space-nd"
    }

    fn plan(&self, input_shape: &[usize]) -> Result<Plan> {
        batch_to_space_nd(self.name(), input_shape, self.block_shape, self.crops)
    }
}

/// `tf.compat.v1.space_to_batch`: 4-D NHWC input, a square block of
/// `block_size`, `paddings = [[top, bottom], [left, right]]`. The same as
/// [`SpaceToBatchNd`] with `block_shape = [block_size, block_size]`
/// (block size 1 is accepted, as TensorFlow 2's `tf.compat.v1.space_to_batch` does).
///
/// ```
/// use blockshuffle::{tf, Operator};
/// // The spec's example (4): [2, 2, 4, 1], block 2.
/// let x: Vec<u8> = (1..=16).collect();
/// let (y, shape) = tf::SpaceToBatch::new(2, [[0, 0], [0, 0]]).apply(&x, &[2, 2, 4, 1])?;
/// assert_eq!(shape.as_slice(), &[8, 1, 2, 1]);
/// assert_eq!(y, [1, 3, 9, 11, 2, 4, 10, 12, 5, 7, 13, 15, 6, 8, 14, 16]);
/// # Ok::<(), blockshuffle::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpaceToBatch {
    /// The square block's side.
    pub block_size: i64,
    /// `[[pad_top, pad_bottom], [pad_left, pad_right]]`.
    pub paddings: [[i64; 2]; 2],
}

impl SpaceToBatch {
    /// The operator with these parameters (validated by [`Operator::plan`]).
    pub fn new(block_size: i64, paddings: [[i64; 2]; 2]) -> Self {
        SpaceToBatch { block_size, paddings }
    }
}

/// `tf.compat.v1.batch_to_space`: the inverse of [`SpaceToBatch`], 4-D NHWC,
/// `crops = [[crop_top, crop_bottom], [crop_left, crop_right]]`.
///
/// ```
/// use blockshuffle::{tf, Operator};
/// let (y, shape) = tf::BatchToSpace::new(2, [[0, 0], [0, 0]]).apply(&[1, 2, 3, 4], &[4, 1, 1, 1])?;
/// assert_eq!(shape.as_slice(), &[1, 2, 2, 1]);
/// assert_eq!(y, [1, 2, 3, 4]);
/// # Ok::<(), blockshuffle::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchToSpace {
    /// The square block's side.
    pub block_size: i64,
    /// `[[crop_top, crop_bottom], [crop_left, crop_right]]`.
    pub crops: [[i64; 2]; 2],
}

impl BatchToSpace {
    /// The operator with these parameters (validated by [`Operator::plan`]).
    pub fn new(block_size: i64, crops: [[i64; 2]; 2]) -> Self {
        BatchToSpace { block_size, crops }
    }
}

impl Operator for SpaceToBatch {
    fn name(&self) -> &'static str {
        "tf space-to-batch"
    }

    fn plan(&self, input_shape: &[usize]) -> Result<Plan> {
        rank_exactly(self.name(), input_shape.len(), 4, "NHWC")?;
        let block = [self.block_size; 2];
        space_to_batch_nd(self.name(), input_shape, &block, &self.paddings)
    }
}

impl Operator for BatchToSpace {
    fn name(&self) -> &'static str {
        "tf batch-to-space"
    }

    fn plan(&self, input_shape: &[usize]) -> Result<Plan> {
        rank_exactly(self.name(), input_shape.len(), 4, "NHWC")?;
        let block = [self.block_size; 2];
        batch_to_space_nd(self.name(), input_shape, &block, &self.crops)
    }
}

/// TensorFlow's `data_format` for the depth operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DataFormat {
    /// `[batch, height, width, channels]` (the default).
    #[default]
    Nhwc,
    /// `[batch, channels, height, width]`.
    Nchw,
    /// `qint8 [batch, channels / 4, height, width, 4]`: NCHW whose elements are
    /// groups of 4 int8 channels.
    NchwVectC,
}

impl DataFormat {
    /// The name TensorFlow uses.
    pub fn as_str(self) -> &'static str {
        match self {
            DataFormat::Nhwc => "NHWC",
            DataFormat::Nchw => "NCHW",
            DataFormat::NchwVectC => "NCHW_VECT_C",
        }
    }

    fn axes(self) -> DepthAxes {
        match self {
            DataFormat::Nhwc => DepthAxes { lead: 1, k: 2, layout: DepthLayout::ChannelsLast },
            DataFormat::Nchw => DepthAxes { lead: 1, k: 2, layout: DepthLayout::BlocksFirst },
            DataFormat::NchwVectC => DepthAxes { lead: 1, k: 2, layout: DepthLayout::BlocksFirst },
        }
    }

    /// Input rank and, for NCHW_VECT_C, the vector dim.
    fn check_input(self, op: &'static str, input: &[usize]) -> Result<()> {
        let rank = if self == DataFormat::NchwVectC { 5 } else { 4 };
        rank_exactly(op, input.len(), rank, self.as_str())?;
        if self == DataFormat::NchwVectC && input[4] != 4 {
            return Err(Error::VectSize { op, size: input[4] });
        }
        Ok(())
    }
}

impl FromStr for DataFormat {
    type Err = Error;

    /// Parses `NHWC`, `NCHW` or `NCHW_VECT_C`.
    ///
    /// ```
    /// use blockshuffle::DataFormat;
    /// assert_eq!("NCHW_VECT_C".parse::<DataFormat>()?, DataFormat::NchwVectC);
    /// assert!("nhwc".parse::<DataFormat>().is_err());
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "NHWC" => Ok(DataFormat::Nhwc),
            "NCHW" => Ok(DataFormat::Nchw),
            "NCHW_VECT_C" => Ok(DataFormat::NchwVectC),
            _ => Err(Error::UnknownValue {
                op: "tf",
                param: "data_format",
                value: s.into(),
                allowed: "NHWC, NCHW, NCHW_VECT_C",
            }),
        }
    }
}

/// `tf.nn.space_to_depth`: blocks of `block_size x block_size` move into the
/// channels; output channel `(by * block_size + bx) * C + c`.
///
/// NHWC `[N, H, W, C]` gives `[N, H/b, W/b, C*b*b]`; NCHW `[N, C, H, W]` gives
/// `[N, C*b*b, H/b, W/b]`; NCHW_VECT_C `[N, C/4, H, W, 4]` gives `[N, C*b*b/4, H/b, W/b, 4]`.
///
/// ```
/// use blockshuffle::{tf, DataFormat, Operator};
/// // The spec's third example: [1, 4, 4, 1] with block 2.
/// let x = [1, 2, 5, 6, 3, 4, 7, 8, 9, 10, 13, 14, 11, 12, 15, 16];
/// let (y, shape) = tf::SpaceToDepth::new(2, DataFormat::Nhwc).apply(&x, &[1, 4, 4, 1])?;
/// assert_eq!(shape.as_slice(), &[1, 2, 2, 4]);
/// assert_eq!(y, (1..=16).collect::<Vec<_>>());
/// # Ok::<(), blockshuffle::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpaceToDepth {
    /// The square block's side (>= 2).
    pub block_size: i64,
    /// The layout of input and output.
    pub data_format: DataFormat,
}

impl SpaceToDepth {
    /// The operator with these parameters (validated by [`Operator::plan`]).
    pub fn new(block_size: i64, data_format: DataFormat) -> Self {
        SpaceToDepth { block_size, data_format }
    }
}

/// `tf.nn.depth_to_space`: the inverse of [`SpaceToDepth`].
///
/// NHWC `[N, H, W, C]` gives `[N, H*b, W*b, C/(b*b)]`, and likewise for NCHW and NCHW_VECT_C.
///
/// ```
/// use blockshuffle::{tf, DataFormat, Operator};
/// let (y, shape) = tf::DepthToSpace::new(2, DataFormat::Nchw).apply(&[1, 2, 3, 4], &[1, 4, 1, 1])?;
/// assert_eq!(shape.as_slice(), &[1, 1, 2, 2]);
/// assert_eq!(y, [1, 2, 3, 4]);
/// # Ok::<(), blockshuffle::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DepthToSpace {
    /// The square block's side (>= 2).
    pub block_size: i64,
    /// The layout of input and output.
    pub data_format: DataFormat,
}

impl DepthToSpace {
    /// The operator with these parameters (validated by [`Operator::plan`]).
    pub fn new(block_size: i64, data_format: DataFormat) -> Self {
        DepthToSpace { block_size, data_format }
    }
}

impl Operator for SpaceToDepth {
    fn name(&self) -> &'static str {
        "tf space-to-depth"
    }

    fn plan(&self, input_shape: &[usize]) -> Result<Plan> {
        let op = self.name();
        let block = block_at_least(op, "block_size", None, self.block_size, 2)?;
        self.data_format.check_input(op, input_shape)?;
        let axes = self.data_format.axes();
        spatial_divisible(op, input_shape, axes, &["height", "width"], block, "block_size")?;
        ops::space_to_depth(op, input_shape, axes, block)
    }
}

impl Operator for DepthToSpace {
    fn name(&self) -> &'static str {
        "tf depth-to-space"
    }

    fn plan(&self, input_shape: &[usize]) -> Result<Plan> {
        let op = self.name();
        let block = block_at_least(op, "block_size", None, self.block_size, 2)?;
        self.data_format.check_input(op, input_shape)?;
        let axes = self.data_format.axes();
        let c = input_shape[axes.channel_axis()] as u64;
        let bb = geometry::mul(op, "block_size^2", block, block)?;
        let what = if self.data_format == DataFormat::NchwVectC { "channel groups" } else { "depth" };
        divisible(op, || format!("{what} dim {c}"), c, || "block_size^2".into(), bb)?;
        ops::depth_to_space(op, input_shape, axes, block)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combines_neutral_block_dims_before_counting() {
        let pads = [[0, 0]; 5];
        // 5 dims, first neutral: 4 remain, accepted.
        let op = SpaceToBatchNd::new(&[1, 2, 3, 1, 2], &pads);
        assert!(op.output_shape(&[1, 3, 2, 3, 1, 2]).is_ok());
        // 5 non-neutral dims: rejected.
        let op = SpaceToBatchNd::new(&[2, 2, 2, 2, 2], &pads);
        assert_eq!(
            op.output_shape(&[1, 2, 2, 2, 2, 2]),
            Err(Error::TooManyBlockDims { op: "tf space-to-batch-nd", count: 5, max: 4 })
        );
        // A neutral dim in the middle still counts.
        let op = SpaceToBatchNd::new(&[2, 2, 1, 2, 2], &pads);
        assert!(matches!(op.output_shape(&[1, 2, 2, 2, 2, 2]), Err(Error::TooManyBlockDims { count: 5, .. })));
    }

    #[test]
    fn v1_ops_need_rank_4() {
        let err = SpaceToBatch::new(2, [[0, 0], [0, 0]]).output_shape(&[8, 2, 3, 3, 1]).unwrap_err();
        assert_eq!(err.to_string(), "tf space-to-batch: input rank is 5 but must be 4 (NHWC)");
    }

    #[test]
    fn vect_c_needs_groups_of_four() {
        let op = SpaceToDepth::new(2, DataFormat::NchwVectC);
        assert_eq!(op.output_shape(&[1, 2, 4, 6, 4]).unwrap().as_slice(), &[1, 8, 2, 3, 4]);
        assert_eq!(op.output_shape(&[1, 2, 4, 6, 3]), Err(Error::VectSize { op: "tf space-to-depth", size: 3 }));
        let op = DepthToSpace::new(2, DataFormat::NchwVectC);
        assert!(matches!(op.output_shape(&[1, 2, 2, 3, 4]), Err(Error::NotDivisible { size: 2, divisor: 4, .. })));
    }
}
