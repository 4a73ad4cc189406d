//! # How the four frameworks lay out the same operators
//!
//! (A documentation page; it has no items.)
//!
//! ## Space and batch
//!
//! | | TensorFlow `SpaceToBatchND` | TensorFlow v1 `SpaceToBatch` | OpenVINO `SpaceToBatch-2` |
//! | --- | --- | --- | --- |
//! | input | `[batch] + spatial[M] + remaining` | `[N, H, W, C]` | `[batch, D_1, ..., D_{N-1}]` |
//! | spatial dims | `1..=M`, M = `len(block_shape)` | H and W | every dim but the batch |
//! | block | `block_shape[M]` | scalar `block_size` | `block_shape[N]`, `block_shape[0] = 1` |
//! | padding | `paddings[M][2]` | `[[top, bottom], [left, right]]` | `pads_begin[N]`, `pads_end[N]` |
//! | output batch index | `(b_1, ..., b_M, n)`, block position outermost | same | same |
//!
//! The batch-to-space operators are the inverses, with crops for paddings.
//! In all of them, output batch entry `((b_1 * B_2 + b_2) * ... ) * batch + n`
//! holds the input positions `(n, o_1 * B_1 + b_1 - pad_1, ...)`.
//!
//! ## Space and depth
//!
//! Every framework splits each spatial dim `D` into `(D / b, b)` and folds the
//! block offsets `(by, bx)` into the channel; they differ in where the
//! channel axis is and whether the block offsets are the high or the low
//! part of the new channel index:
//!
//! | operator | layout | new channel index | name of that order |
//! | --- | --- | --- | --- |
//! | TensorFlow `SpaceToDepth` NHWC | `[N, H, W, C]` | `(by * b + bx) * C + c` | blocks first |
//! | TensorFlow `SpaceToDepth` NCHW | `[N, C, H, W]` | `(by * b + bx) * C + c` | blocks first |
//! | TensorFlow NCHW_VECT_C | `[N, C/4, H, W, 4]` | NCHW over groups of 4 channels | blocks first |
//! | OpenVINO `SpaceToDepth-1` `blocks_first` | `[N, C, D_1, ..., D_K]` | `(b_1, ..., b_K, c)` | blocks first |
//! | OpenVINO `SpaceToDepth-1` `depth_first` | `[N, C, D_1, ..., D_K]` | `(c, b_1, ..., b_K)` | depth first |
//! | ONNX `SpaceToDepth` | `[N, C, H, W]` | `(by * b + bx) * C + c` | DCR |
//! | ONNX `DepthToSpace` DCR | `[N, C, H, W]` | `(by * b + bx) * C' + c` | blocks first |
//! | ONNX `DepthToSpace` CRD | `[N, C, H, W]` | `(c * b + by) * b + bx` | depth first |
//! | PyTorch `pixel_shuffle` / `pixel_unshuffle` | `[*, C, H, W]` | `(c * r + by) * r + bx` | depth first (CRD) |
//!
//! So TensorFlow NCHW = ONNX DCR = OpenVINO `blocks_first` (K = 2), and
//! PyTorch = ONNX CRD = OpenVINO `depth_first` (K = 2):
//!
//! ```
//! use blockshuffle::{onnx, openvino, tf, torch, DataFormat, Operator};
//!
//! let x: Vec<u16> = (0..2 * 8 * 3 * 2).collect();
//! let shape = [2, 8, 3, 2];
//! let tf_nchw = tf::DepthToSpace::new(2, DataFormat::Nchw).apply(&x, &shape)?;
//! let onnx_dcr = onnx::DepthToSpace::dcr(2).apply(&x, &shape)?;
//! let ov_bf = openvino::DepthToSpace::blocks_first(2).apply(&x, &shape)?;
//! assert_eq!(tf_nchw, onnx_dcr);
//! assert_eq!(onnx_dcr, ov_bf);
//!
//! let torch = torch::PixelShuffle::new(2).apply(&x, &shape)?;
//! let onnx_crd = onnx::DepthToSpace::crd(2).apply(&x, &shape)?;
//! let ov_df = openvino::DepthToSpace::depth_first(2).apply(&x, &shape)?;
//! assert_eq!(torch, onnx_crd);
//! assert_eq!(onnx_crd, ov_df);
//! assert_ne!(torch, onnx_dcr);
//! # Ok::<(), blockshuffle::Error>(())
//! ```
//!
//! ## Validation differences
//!
//! | rule | TensorFlow | OpenVINO | ONNX (onnxruntime) | PyTorch |
//! | --- | --- | --- | --- | --- |
//! | smallest depth block | 2 | 1 | 1 | 1 |
//! | smallest space/batch block | 1 | 1 | | |
//! | depth-op ranks | 4 (5 for NCHW_VECT_C) | >= 3 | 4 | >= 3 |
//! | space/batch ranks | >= 1 + M (v1: 4) | >= 2 | | |
//! | most block dims | 4 after combining neutral leading/trailing ones | any | | |
//! | negative pads | rejected | rejected | | |
