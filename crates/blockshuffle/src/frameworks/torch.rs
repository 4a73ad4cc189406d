//! PyTorch: `pixel_shuffle` and `pixel_unshuffle`, over `[*, C, H, W]` with
//! any number of leading batch dims.
//!
//! | rule | operators |
//! | --- | --- |
//! | input rank >= 3 | both |
//! | factor > 0 (1 is valid) | both |
//! | `r^2` divides C | pixel_shuffle |
//! | `r` divides H and W | pixel_unshuffle |
//!
//! Channel order is CRD (OpenVINO `depth_first`): channel `(c * r + by) * r + bx`.
//! A zero-element input gets the documented output shape
//! `[*, C*r*r, H/r, W/r]`, where PyTorch 2.15's CPU `pixel_unshuffle` returns
//! the input's shape (an open PyTorch bug).

use super::{block_at_least, divisible, rank_at_least, spatial_divisible};
use crate::engine::geometry;
use crate::ops::{self, DepthAxes, DepthLayout};
use crate::{Operator, Plan, Result};

fn axes(rank: usize) -> DepthAxes {
    DepthAxes { lead: rank.saturating_sub(3), k: 2, layout: DepthLayout::DepthFirst }
}

/// `torch.nn.functional.pixel_shuffle`: `[*, C*r*r, H, W]` to `[*, C, H*r, W*r]`.
///
/// ```
/// use blockshuffle::{torch, Operator};
/// let (y, shape) = torch::PixelShuffle::new(2).apply(&[1, 2, 3, 4], &[4, 1, 1])?;
/// assert_eq!(shape.as_slice(), &[1, 2, 2]);
/// assert_eq!(y, [1, 2, 3, 4]);
/// # Ok::<(), blockshuffle::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PixelShuffle {
    /// `upscale_factor` r (> 0).
    pub upscale_factor: i64,
}

impl PixelShuffle {
    /// The operator with this factor (validated by [`Operator::plan`]).
    pub fn new(upscale_factor: i64) -> Self {
        PixelShuffle { upscale_factor }
    }
}

/// `torch.nn.functional.pixel_unshuffle`: `[*, C, H, W]` to `[*, C*r*r, H/r, W/r]`.
///
/// ```
/// use blockshuffle::{torch, Operator};
/// let x: Vec<u8> = (0..16).collect(); // [1, 4, 4]
/// let (y, shape) = torch::PixelUnshuffle::new(2).apply(&x, &[1, 4, 4])?;
/// assert_eq!(shape.as_slice(), &[4, 2, 2]);
/// assert_eq!(y, [0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15]);
/// # Ok::<(), blockshuffle::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PixelUnshuffle {
    /// `downscale_factor` r (> 0).
    pub downscale_factor: i64,
}

impl PixelUnshuffle {
    /// The operator with this factor (validated by [`Operator::plan`]).
    pub fn new(downscale_factor: i64) -> Self {
        PixelUnshuffle { downscale_factor }
    }
}

impl Operator for PixelShuffle {
    fn name(&self) -> &'static str {
        "torch pixel-shuffle"
    }

    fn plan(&self, input_shape: &[usize]) -> Result<Plan> {
        let op = self.name();
        let r = block_at_least(op, "upscale_factor", None, self.upscale_factor, 1)?;
        rank_at_least(op, input_shape.len(), 3, "[*, C, H, W]")?;
        let axes = axes(input_shape.len());
        let c = input_shape[axes.channel_axis()] as u64;
        let rr = geometry::mul(op, "upscale_factor^2", r, r)?;
        divisible(op, || format!("channel dim {c}"), c, || "upscale_factor^2".into(), rr)?;
        ops::depth_to_space(op, input_shape, axes, r)
    }
}

impl Operator for PixelUnshuffle {
    fn name(&self) -> &'static str {
        "torch pixel-unshuffle"
    }

    fn plan(&self, input_shape: &[usize]) -> Result<Plan> {
        let op = self.name();
        let r = block_at_least(op, "downscale_factor", None, self.downscale_factor, 1)?;
        rank_at_least(op, input_shape.len(), 3, "[*, C, H, W]")?;
        let axes = axes(input_shape.len());
        spatial_divisible(op, input_shape, axes, &["height", "width"], r, "downscale_factor")?;
        ops::space_to_depth(op, input_shape, axes, r)
    }
}
