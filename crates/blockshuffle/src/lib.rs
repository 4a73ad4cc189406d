//! # blockshuffle
//!
//! The tensor block-rearrangement operators of TensorFlow, OpenVINO, ONNX
//! and PyTorch, bit-exact with each framework, on one engine; and the
//! general forms they are special cases of, numpy's transpose and einops'
//! rearrange, on the same engine.
//!
//! | framework | operators |
//! | --- | --- |
//! | [`tf`] | [`tf::SpaceToBatchNd`], [`tf::BatchToSpaceNd`], [`tf::SpaceToBatch`], [`tf::BatchToSpace`], [`tf::SpaceToDepth`], [`tf::DepthToSpace`] (NHWC, NCHW, NCHW_VECT_C) |
//! | [`openvino`] | [`openvino::SpaceToBatch`], [`openvino::BatchToSpace`], [`openvino::SpaceToDepth`], [`openvino::DepthToSpace`] (blocks_first, depth_first) |
//! | [`onnx`] | [`onnx::SpaceToDepth`], [`onnx::DepthToSpace`] (DCR, CRD) |
//! | [`torch`] | [`torch::PixelShuffle`], [`torch::PixelUnshuffle`] |
//! | [`numpy`] | [`numpy::Transpose`] (`np.transpose`) |
//! | [`einops`] | [`einops::Rearrange`] (`einops.rearrange`, einops 0.8) |
//!
//! Every operator is the same thing: pad (or crop) some axes, split axes into
//! `(outer, block)` factors, permute the factors and merge them. Each
//! framework's operator validates its parameters with that framework's own
//! rules and builds a [`Plan`]: shape inference, with no data and no
//! allocation. A plan then runs on any element type (`T: Copy`, or raw bytes
//! of any element size), into a new buffer or into yours; [`Plan::inverse`]
//! runs the same plan the other way.
//!
//! ## The specification's worked examples
//!
//! TensorFlow `SpaceToBatchND` (and v1 `SpaceToBatch`) with a 2x2 block moves
//! each position within a block into its own batch entry. Example (1): `[1, 2, 2, 1]`
//! becomes `[4, 1, 1, 1]`; example (3): `[1, 4, 4, 1]` becomes `[4, 2, 2, 1]`:
//!
//! ```
//! use blockshuffle::{tf, Operator};
//!
//! let s2b = tf::SpaceToBatchNd::new(&[2, 2], &[[0, 0], [0, 0]]);
//! let (y, shape) = s2b.apply(&[1, 2, 3, 4], &[1, 2, 2, 1])?;
//! assert_eq!((shape.as_slice(), y), (&[4, 1, 1, 1][..], vec![1, 2, 3, 4]));
//!
//! let x: Vec<i32> = (1..=16).collect();
//! let (y, shape) = s2b.apply(&x, &[1, 4, 4, 1])?;
//! assert_eq!(shape.as_slice(), &[4, 2, 2, 1]);
//! assert_eq!(y, [1, 3, 9, 11, 2, 4, 10, 12, 5, 7, 13, 15, 6, 8, 14, 16]);
//! # Ok::<(), blockshuffle::Error>(())
//! ```
//!
//! Example (2) carries the depth along, and example (4) shows the batch index
//! order: block position outermost, original batch innermost:
//!
//! ```
//! use blockshuffle::{tf, Operator};
//!
//! let s2b = tf::SpaceToBatch::new(2, [[0, 0], [0, 0]]);
//! let x: Vec<i32> = (1..=12).collect();
//! let (y, shape) = s2b.apply(&x, &[1, 2, 2, 3])?;
//! assert_eq!((shape.as_slice(), y), (&[4, 1, 1, 3][..], x));
//!
//! let x: Vec<i32> = (1..=16).collect();
//! let (y, shape) = s2b.apply(&x, &[2, 2, 4, 1])?;
//! assert_eq!(shape.as_slice(), &[8, 1, 2, 1]);
//! assert_eq!(y, [1, 3, 9, 11, 2, 4, 10, 12, 5, 7, 13, 15, 6, 8, 14, 16]);
//! # Ok::<(), blockshuffle::Error>(())
//! ```
//!
//! OpenVINO `SpaceToBatch-2` pads and blocks every non-batch dim; its example
//! turns `[2, 6, 10, 3, 3]` into `[48, 3, 3, 1, 3]`, and `BatchToSpace-2` with
//! the same numbers as crops turns it back:
//!
//! ```
//! use blockshuffle::{openvino, Operator};
//!
//! let (block, begin, end) = ([1, 2, 4, 3, 1], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0]);
//! let s2b = openvino::SpaceToBatch::new(&block, &begin, &end);
//! let x: Vec<f32> = (0..2 * 6 * 10 * 3 * 3).map(|v| v as f32).collect();
//! let (y, shape) = s2b.apply(&x, &[2, 6, 10, 3, 3])?;
//! assert_eq!(shape.as_slice(), &[48, 3, 3, 1, 3]);
//! // Batch entry 0 is block position (0, 0, 0, 0): its first row is padding.
//! assert_eq!(&y[..3], &[0.0, 0.0, 0.0]);
//!
//! let b2s = openvino::BatchToSpace::new(&block, &begin, &end);
//! let (back, shape) = b2s.apply(&y, &[48, 3, 3, 1, 3])?;
//! assert_eq!(shape.as_slice(), &[2, 6, 10, 3, 3]);
//! assert_eq!(back, x);
//! # Ok::<(), blockshuffle::Error>(())
//! ```
//!
//! TensorFlow `SpaceToDepth` moves each 2x2 block into the channels, the block
//! offsets being the high part of the output channel:
//!
//! ```
//! use blockshuffle::{tf, DataFormat, Operator};
//!
//! let s2d = tf::SpaceToDepth::new(2, DataFormat::Nhwc);
//! let (y, shape) = s2d.apply(&[1, 2, 3, 4], &[1, 2, 2, 1])?;
//! assert_eq!((shape.as_slice(), y), (&[1, 1, 1, 4][..], vec![1, 2, 3, 4]));
//!
//! let x: Vec<i32> = (1..=12).collect();
//! let (y, shape) = s2d.apply(&x, &[1, 2, 2, 3])?;
//! assert_eq!((shape.as_slice(), y), (&[1, 1, 1, 12][..], x));
//!
//! let x = [1, 2, 5, 6, 3, 4, 7, 8, 9, 10, 13, 14, 11, 12, 15, 16];
//! let (y, shape) = s2d.apply(&x, &[1, 4, 4, 1])?;
//! assert_eq!(shape.as_slice(), &[1, 2, 2, 4]);
//! assert_eq!(y, (1..=16).collect::<Vec<_>>());
//! # Ok::<(), blockshuffle::Error>(())
//! ```
//!
//! ## General rearrangements
//!
//! A block operator is a rearrangement einops can write; written so, it
//! compiles to the same loop nest. numpy's transpose permutes plain axes:
//!
//! ```
//! use blockshuffle::{einops, numpy, tf, DataFormat, Operator};
//!
//! let s2d = einops::Rearrange::new("b (h p1) (w p2) c -> b h w (p1 p2 c)", &[("p1", 2), ("p2", 2)])?;
//! let x: Vec<i32> = (0..48).collect();
//! assert_eq!(s2d.apply(&x, &[1, 4, 4, 3])?, tf::SpaceToDepth::new(2, DataFormat::Nhwc).apply(&x, &[1, 4, 4, 3])?);
//!
//! let (y, shape) = numpy::Transpose::new(&[1, 0]).apply(&[1, 2, 3, 4, 5, 6], &[2, 3])?;
//! assert_eq!((shape.as_slice(), y), (&[3, 2][..], vec![1, 4, 2, 5, 3, 6]));
//! # Ok::<(), blockshuffle::Error>(())
//! ```
//!
//! ## Shape inference without data
//!
//! ```
//! use blockshuffle::{torch, Operator};
//! let shape = torch::PixelShuffle::new(3).output_shape(&[2, 5, 18, 7, 9])?;
//! assert_eq!(shape.as_slice(), &[2, 5, 2, 21, 27]);
//! # Ok::<(), blockshuffle::Error>(())
//! ```
//!
//! ## Errors
//!
//! Bad parameters are an [`Error`] naming the operator, the parameter and
//! the rule, with the numbers that broke it; nothing panics, and all shape
//! arithmetic is checked:
//!
//! ```
//! use blockshuffle::{onnx, Operator};
//! let err = onnx::DepthToSpace::dcr(2).output_shape(&[1, 6, 2, 2]).unwrap_err();
//! assert_eq!(err.to_string(), "onnx depth-to-space: channel dim 6 is not divisible by blocksize^2 = 4");
//! ```
//!
//! See [`conventions`] for how the four frameworks order their axes and channels.

#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

pub mod catalog;
pub mod conventions;
mod engine;
mod error;
mod frameworks;
#[cfg(feature = "ndarray")]
mod ndarray_support;
#[cfg(feature = "npy")]
pub mod npy;
mod ops;
mod run;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme {}

pub use arrayvec;
pub use engine::Direction;
pub use error::{Error, Index, IoError, Result};
pub use frameworks::{einops, numpy, onnx, openvino, tf, torch};
pub use run::{Kernels, Parallelism, Plan, Streaming};
pub use tf::DataFormat;

#[cfg(feature = "ndarray")]
pub use ndarray_support::OperatorNdarray;

/// Most dimensions a tensor may have (numpy's limit is 32 in its 1.x format, 64 in 2.x).
pub const MAX_RANK: usize = 32;

/// A tensor shape, stored inline.
pub type Shape = arrayvec::ArrayVec<usize, MAX_RANK>;

/// A framework's operator with its parameters: validates them against an
/// input shape and builds a [`Plan`].
///
/// `plan` is the one required method; the others are conveniences on top.
pub trait Operator {
    /// `"framework op"`, as the command line names it (`"tf space-to-batch-nd"`).
    fn name(&self) -> &'static str;

    /// Validates the parameters for `input_shape` with the framework's rules
    /// and returns the plan. Touches no data, and allocates nothing up to 8
    /// axes (a plan holds more, up to [`MAX_RANK`], on the heap; einops
    /// counts its elementary axes).
    ///
    /// ```
    /// use blockshuffle::{tf, Operator};
    /// let plan = tf::BatchToSpaceNd::new(&[2], &[[0, 1]]).plan(&[4, 3])?;
    /// assert_eq!(plan.output_shape(), &[2, 5]);
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    fn plan(&self, input_shape: &[usize]) -> Result<Plan>;

    /// The output shape for `input_shape` (shape inference only).
    ///
    /// ```
    /// use blockshuffle::{openvino, Operator};
    /// let shape = openvino::DepthToSpace::blocks_first(2).output_shape(&[1, 8, 3, 4, 5])?;
    /// assert_eq!(shape.as_slice(), &[1, 1, 6, 8, 10]);
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    fn output_shape(&self, input_shape: &[usize]) -> Result<Shape> {
        Ok(self.plan(input_shape)?.output_shape().iter().copied().collect())
    }

    /// Plans and runs on a row-major `input` of shape `shape`, returning the
    /// output and its shape.
    ///
    /// ```
    /// use blockshuffle::{torch, Operator};
    /// let (y, shape) = torch::PixelUnshuffle::new(1).apply(&[true, false], &[1, 1, 2])?;
    /// assert_eq!((y, shape.as_slice()), (vec![true, false], &[1, 1, 2][..]));
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    fn apply<T: Copy + Default>(&self, input: &[T], shape: &[usize]) -> Result<(Vec<T>, Shape)>
    where
        Self: Sized,
    {
        let plan = self.plan(shape)?;
        let out = plan.run(input)?;
        Ok((out, plan.output_shape().iter().copied().collect()))
    }

    /// Plans and runs into `output` (exactly the output's element count).
    /// Allocates nothing; returns the output shape.
    ///
    /// ```
    /// use blockshuffle::{onnx, Operator};
    /// let mut out = [0u16; 4];
    /// let shape = onnx::SpaceToDepth::new(2).apply_into(&[1, 2, 3, 4], &[1, 1, 2, 2], &mut out)?;
    /// assert_eq!((out, shape.as_slice()), ([1, 2, 3, 4], &[1, 4, 1, 1][..]));
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    fn apply_into<T: Copy + Default>(&self, input: &[T], shape: &[usize], output: &mut [T]) -> Result<Shape>
    where
        Self: Sized,
    {
        let plan = self.plan(shape)?;
        plan.run_into(input, output)?;
        Ok(plan.output_shape().iter().copied().collect())
    }
}
