//! The operator family, framework-neutral: each builds the engine's geometry
//! for an input shape whose parameters the framework front-end has already
//! validated with its own rules and wording. Only checked arithmetic can fail
//! here (and the re-checks that keep a geometry consistent).

use arrayvec::ArrayVec;

use crate::engine::geometry::{self, k, o, Factor, SpaceAxis, MAX_FACTORS};
use crate::engine::Direction;
use crate::{Error, Plan, Result, MAX_RANK};

/// Fails with [`Error::RankTooLarge`] beyond [`MAX_RANK`].
pub(crate) fn check_max_rank(op: &'static str, rank: usize) -> Result<()> {
    if rank > MAX_RANK {
        return Err(Error::RankTooLarge { op, rank, max: MAX_RANK });
    }
    Ok(())
}

/// Space-to-batch: `input = [batch] + spatial[M] + remaining`, `blocks[i]`
/// and `pads[i] = (begin, end)` for spatial dim `i`.
/// Output: `[batch * prod(blocks)] + [padded_i / block_i] + remaining`,
/// where the batch index is `(k_1, ..., k_M, n)` (block positions outermost).
#[inline]
pub(crate) fn space_to_batch(op: &'static str, input: &[usize], blocks: &[u64], pads: &[(u64, u64)]) -> Result<Plan> {
    check_max_rank(op, input.len())?;
    let mut space: ArrayVec<SpaceAxis, MAX_RANK> = ArrayVec::new();
    space.push(SpaceAxis::plain(input[0] as u64));
    for (i, (&b, &(pb, pe))) in blocks.iter().zip(pads).enumerate() {
        SpaceAxis::push(&mut space, op, input[i + 1] as u64, pb, pe, b)?;
    }
    for &d in &input[1 + blocks.len()..] {
        space.push(SpaceAxis::plain(d as u64));
    }
    batch_plan(op, &space, blocks.len(), Direction::Forward)
}

/// Batch-to-space, the inverse: `input = [batch] + spatial[M] + remaining`
/// (batch divisible by `prod(blocks)`, crops within `spatial_i * block_i`).
/// Output: `[batch / prod(blocks)] + [spatial_i * block_i - crops] + remaining`.
/// A crop larger than its dim is reported as axis `first_axis + i` for
/// spatial dim `i` (the framework's numbering).
#[inline]
pub(crate) fn batch_to_space(
    op: &'static str,
    input: &[usize],
    blocks: &[u64],
    crops: &[(u64, u64)],
    first_axis: usize,
) -> Result<Plan> {
    check_max_rank(op, input.len())?;
    let prod = geometry::product(op, "product of block sizes", blocks)?;
    let batch = input[0] as u64;
    if prod == 0 || !batch.is_multiple_of(prod) {
        return Err(Error::NotDivisible {
            op,
            what: format!("batch dim {batch}"),
            size: batch,
            divisor_name: "the product of block sizes".into(),
            divisor: prod,
        });
    }
    let mut space: ArrayVec<SpaceAxis, MAX_RANK> = ArrayVec::new();
    space.push(SpaceAxis::plain(batch / prod));
    for (i, (&b, &(cb, ce))) in blocks.iter().zip(crops).enumerate() {
        let full = geometry::mul(op, "uncropped spatial dimension", input[i + 1] as u64, b)?;
        #[allow(
            clippy::unnecessary_lazy_evaluations,
            reason = "an `Error` has drop glue: built eagerly, it is built and dropped on every success"
        )]
        let extent = full.checked_sub(cb).and_then(|v| v.checked_sub(ce)).ok_or_else(|| Error::CropTooLarge {
            op,
            axis: first_axis + i,
            size: full,
            begin: cb,
            end: ce,
        })?;
        SpaceAxis::push(&mut space, op, extent, cb, ce, b)?;
    }
    for &d in &input[1 + blocks.len()..] {
        space.push(SpaceAxis::plain(d as u64));
    }
    batch_plan(op, &space, blocks.len(), Direction::Backward)
}

/// The plan whose block side is space-to-batch's: `[k_1..k_M, n], [o_1], ..., [o_M], [r]...`.
#[inline]
fn batch_plan(op: &'static str, space: &[SpaceAxis], m: usize, dir: Direction) -> Result<Plan> {
    // Extended in place, not collected: a collected `ArrayVec` is built
    // apart and copied whole, on every plan's path.
    let mut batch: ArrayVec<Factor, MAX_FACTORS> = ArrayVec::new();
    batch.extend((1..=m).map(k));
    batch.push(o(0));
    let mut singles: ArrayVec<[Factor; 1], MAX_RANK> = ArrayVec::new();
    singles.extend((1..space.len()).map(|i| [o(i)]));
    let mut groups: ArrayVec<&[Factor], MAX_RANK> = ArrayVec::new();
    groups.push(&batch);
    groups.extend(singles.iter().map(|g| g.as_slice()));
    Plan::new(op, space, &groups, dir)
}

/// Where the channels are, and in which order space-to-depth stacks
/// `(block position, channel)` into the depth axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DepthLayout {
    /// `[lead.., S_1..S_K, C]`; depth index `(k_1..k_K, c)`, blocks first (TensorFlow NHWC).
    ChannelsLast,
    /// `[lead.., C, S_1..S_K, trail..]`; depth index `(k_1..k_K, c)`
    /// (OpenVINO blocks_first, ONNX DCR / SpaceToDepth, TensorFlow NCHW).
    BlocksFirst,
    /// `[lead.., C, S_1..S_K, trail..]`; depth index `(c, k_1..k_K)`
    /// (OpenVINO depth_first, ONNX CRD, PyTorch pixel_shuffle).
    DepthFirst,
}

/// Axes of a depth-operator input: `lead` leading batch-like axes, `k` spatial
/// axes and the channel axis placed by `layout`; any axes after those are
/// carried along (NCHW_VECT_C's groups of 4).
#[derive(Debug, Clone, Copy)]
pub(crate) struct DepthAxes {
    pub lead: usize,
    pub k: usize,
    pub layout: DepthLayout,
}

impl DepthAxes {
    /// The channel axis of an input shape.
    pub fn channel_axis(&self) -> usize {
        match self.layout {
            DepthLayout::ChannelsLast => self.lead + self.k,
            _ => self.lead,
        }
    }

    fn spatial(&self, i: usize) -> usize {
        match self.layout {
            DepthLayout::ChannelsLast => self.lead + i,
            _ => self.lead + 1 + i,
        }
    }

    /// The spatial axes of an input shape.
    pub fn spatial_axes(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.k).map(|i| self.spatial(i))
    }
}

/// Space-to-depth: every spatial dim (divisible by `block`) shrinks by
/// `block`, the channel dim grows by `block^k`.
#[inline]
pub(crate) fn space_to_depth(op: &'static str, input: &[usize], axes: DepthAxes, block: u64) -> Result<Plan> {
    check_max_rank(op, input.len())?;
    let mut space: ArrayVec<SpaceAxis, MAX_RANK> = ArrayVec::new();
    for (i, &d) in input.iter().enumerate() {
        if axes.spatial_axes().any(|s| s == i) {
            SpaceAxis::push(&mut space, op, d as u64, 0, 0, block)?;
        } else {
            space.push(SpaceAxis::plain(d as u64));
        }
    }
    depth_plan(op, &space, axes, Direction::Forward)
}

/// Depth-to-space: the channel dim (divisible by `block^k`) shrinks by
/// `block^k`, every spatial dim grows by `block`.
#[inline]
pub(crate) fn depth_to_space(op: &'static str, input: &[usize], axes: DepthAxes, block: u64) -> Result<Plan> {
    check_max_rank(op, input.len())?;
    let per = block_power(op, block, axes.k)?;
    let mut space: ArrayVec<SpaceAxis, MAX_RANK> = ArrayVec::new();
    for (i, &d) in input.iter().enumerate() {
        let d = d as u64;
        if i == axes.channel_axis() {
            if per == 0 || !d.is_multiple_of(per) {
                return Err(Error::NotDivisible {
                    op,
                    what: format!("channel dim {d}"),
                    size: d,
                    divisor_name: "block^spatial_dims".into(),
                    divisor: per,
                });
            }
            space.push(SpaceAxis::plain(d / per));
        } else if axes.spatial_axes().any(|s| s == i) {
            let extent = geometry::mul(op, "output spatial dimension", d, block)?;
            SpaceAxis::push(&mut space, op, extent, 0, 0, block)?;
        } else {
            space.push(SpaceAxis::plain(d));
        }
    }
    depth_plan(op, &space, axes, Direction::Backward)
}

/// `block^k`, checked.
pub(crate) fn block_power(op: &'static str, block: u64, k: usize) -> Result<u64> {
    (0..k).try_fold(1u64, |acc, _| geometry::mul(op, "block_size^spatial_dims", acc, block))
}

/// The plan whose block side is space-to-depth's (see [`DepthLayout`]).
#[inline]
fn depth_plan(op: &'static str, space: &[SpaceAxis], axes: DepthAxes, dir: Direction) -> Result<Plan> {
    let c = axes.channel_axis();
    let mut depth: ArrayVec<Factor, MAX_FACTORS> = ArrayVec::new();
    match axes.layout {
        DepthLayout::ChannelsLast | DepthLayout::BlocksFirst => {
            depth.extend(axes.spatial_axes().map(k));
            depth.push(o(c));
        }
        DepthLayout::DepthFirst => {
            depth.push(o(c));
            depth.extend(axes.spatial_axes().map(k));
        }
    }
    let mut singles: ArrayVec<[Factor; 1], MAX_RANK> = ArrayVec::new();
    singles.extend((0..space.len()).map(|i| [o(i)]));
    let mut groups: ArrayVec<&[Factor], MAX_RANK> = ArrayVec::new();
    for (i, single) in singles.iter().enumerate() {
        if i == c {
            // Channels-last: the depth group sits where the channel axis is.
            // Channels-first: likewise, right after the leading axes.
            groups.push(&depth);
        } else {
            groups.push(single);
        }
    }
    Plan::new(op, space, &groups, dir)
}
