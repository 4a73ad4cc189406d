//! ONNX: `SpaceToDepth-13` and `DepthToSpace-13` (modes DCR and CRD), with
//! onnxruntime's rules:
//!
//! | rule | operators |
//! | --- | --- |
//! | input rank = 4 (`[N, C, H, W]`) | both |
//! | `blocksize` > 0 (1 is valid) | both |
//! | `blocksize` divides H and W | SpaceToDepth |
//! | `blocksize^2` divides C | DepthToSpace |
//!
//! SpaceToDepth stacks blocks DCR-wise: output channel `(by * b + bx) * C + c`.

use std::str::FromStr;

use super::{block_at_least, divisible, rank_exactly, spatial_divisible};
use crate::engine::geometry;
use crate::error::Error;
use crate::ops::{self, DepthAxes, DepthLayout};
use crate::{Operator, Plan, Result};

/// The `mode` of `DepthToSpace`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DepthToSpaceMode {
    /// depth-column-row: input channel `(by * b + bx) * C' + c` (the default).
    #[default]
    Dcr,
    /// column-row-depth: input channel `(c * b + by) * b + bx`.
    Crd,
}

impl FromStr for DepthToSpaceMode {
    type Err = Error;

    /// Parses `DCR` or `CRD`.
    ///
    /// ```
    /// use blockshuffle::onnx::DepthToSpaceMode;
    /// assert_eq!("CRD".parse::<DepthToSpaceMode>()?, DepthToSpaceMode::Crd);
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "DCR" => Ok(DepthToSpaceMode::Dcr),
            "CRD" => Ok(DepthToSpaceMode::Crd),
            _ => Err(Error::UnknownValue { op: "onnx", param: "mode", value: s.into(), allowed: "DCR, CRD" }),
        }
    }
}

fn axes(layout: DepthLayout) -> DepthAxes {
    DepthAxes { lead: 1, k: 2, layout }
}

/// `SpaceToDepth-13`: `[N, C, H, W]` to `[N, C*b*b, H/b, W/b]`.
///
/// ```
/// use blockshuffle::{onnx, Operator};
/// let x: Vec<u8> = (0..16).collect(); // [1, 1, 4, 4]
/// let (y, shape) = onnx::SpaceToDepth::new(2).apply(&x, &[1, 1, 4, 4])?;
/// assert_eq!(shape.as_slice(), &[1, 4, 2, 2]);
/// assert_eq!(y, [0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15]);
/// # Ok::<(), blockshuffle::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpaceToDepth {
    /// The square block's side (> 0).
    pub blocksize: i64,
}

impl SpaceToDepth {
    /// The operator with this block size (validated by [`Operator::plan`]).
    pub fn new(blocksize: i64) -> Self {
        SpaceToDepth { blocksize }
    }
}

/// `DepthToSpace-13`: `[N, C, H, W]` to `[N, C/(b*b), H*b, W*b]`.
///
/// ```
/// use blockshuffle::{onnx, Operator};
/// // The ONNX documentation's examples: [1, 8, 2, 3], blocksize 2.
/// let x: Vec<f32> = (0..48).map(|v| v as f32).collect();
/// let (y, shape) = onnx::DepthToSpace::dcr(2).apply(&x, &[1, 8, 2, 3])?;
/// assert_eq!(shape.as_slice(), &[1, 2, 4, 6]);
/// assert_eq!(&y[..12], &[0., 12., 1., 13., 2., 14., 24., 36., 25., 37., 26., 38.]);
/// let (y, _) = onnx::DepthToSpace::crd(2).apply(&x, &[1, 8, 2, 3])?;
/// assert_eq!(&y[..12], &[0., 6., 1., 7., 2., 8., 12., 18., 13., 19., 14., 20.]);
/// # Ok::<(), blockshuffle::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DepthToSpace {
    /// The square block's side (> 0).
    pub blocksize: i64,
    /// DCR or CRD.
    pub mode: DepthToSpaceMode,
}

impl DepthToSpace {
    /// The operator with these parameters (validated by [`Operator::plan`]).
    pub fn new(blocksize: i64, mode: DepthToSpaceMode) -> Self {
        DepthToSpace { blocksize, mode }
    }

    /// Mode DCR (the default).
    pub fn dcr(blocksize: i64) -> Self {
        Self::new(blocksize, DepthToSpaceMode::Dcr)
    }

    /// Mode CRD.
    pub fn crd(blocksize: i64) -> Self {
        Self::new(blocksize, DepthToSpaceMode::Crd)
    }
}

impl Operator for SpaceToDepth {
    fn name(&self) -> &'static str {
        "onnx space-to-depth"
    }

    fn plan(&self, input_shape: &[usize]) -> Result<Plan> {
        let op = self.name();
        rank_exactly(op, input_shape.len(), 4, "[N, C, H, W]")?;
        let block = block_at_least(op, "blocksize", None, self.blocksize, 1)?;
        let axes = axes(DepthLayout::BlocksFirst);
        spatial_divisible(op, input_shape, axes, &["height", "width"], block, "blocksize")?;
        ops::space_to_depth(op, input_shape, axes, block)
    }
}

impl Operator for DepthToSpace {
    fn name(&self) -> &'static str {
        "onnx depth-to-space"
    }

    fn plan(&self, input_shape: &[usize]) -> Result<Plan> {
        let op = self.name();
        rank_exactly(op, input_shape.len(), 4, "[N, C, H, W]")?;
        let block = block_at_least(op, "blocksize", None, self.blocksize, 1)?;
        let c = input_shape[1] as u64;
        let bb = geometry::mul(op, "blocksize^2", block, block)?;
        divisible(op, || format!("channel dim {c}"), c, || "blocksize^2".into(), bb)?;
        let layout = match self.mode {
            DepthToSpaceMode::Dcr => DepthLayout::BlocksFirst,
            DepthToSpaceMode::Crd => DepthLayout::DepthFirst,
        };
        ops::depth_to_space(op, input_shape, axes(layout), block)
    }
}
