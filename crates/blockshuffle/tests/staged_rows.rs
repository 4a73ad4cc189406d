//! Rows gathered into a contiguous destination from units that are not
//! whole 16-byte vectors (36 and 72 bytes), which streamed go through a
//! stage and the line writers a row at a time (`stages_gathered_rows`):
//! TF NHWC space-to-batch, padded or not, batch-to-space with crops, and
//! depth-to-space, against the reference, with every kernel set, streamed
//! or not, from row-major buffers and from views whose image rows are
//! further apart (which run through the cache: only row-major buffers
//! stream).

use blockshuffle::{tf, DataFormat, Operator, Plan};

mod common;
use common::reference::*;
use common::{bytes, check_with_channels_apart as check};

/// [`check`]s `plan` on float32 input of `shape` from `seed` against the
/// `reference` of it, which also gives the output shape.
fn check_f32(plan: &Plan, shape: &[usize], seed: u8, reference: impl Fn(&[u8]) -> (Vec<u8>, Vec<usize>)) {
    let x = bytes(shape.iter().product::<usize>() * 4, seed);
    let (want, out_shape) = reference(&x);
    assert_eq!(plan.output_shape(), out_shape.as_slice());
    check(plan, &x, shape, 4, 1, &want);
}

/// Rows of 9 float32 channels (36-byte units): 15 (540 bytes, the
/// shortest staged) and 32 of them, padded or not, and 14 (504 bytes),
/// which store through the cache.
#[test]
fn space_to_batch_of_36_byte_units_matches_the_reference() {
    for (w, pad) in [(64, 0), (62, 1), (30, 0), (28, 0), (28, 1)] {
        let shape = [2usize, 8, w, 9];
        let pads = [[0usize, 0], [pad, pad]];
        let plan = tf::SpaceToBatchNd::new(&[2, 2], &[[0, 0], [pad as i64, pad as i64]]).plan(&shape).unwrap();
        check_f32(&plan, &shape, 7, |x| ref_space_to_batch(x, &shape, 4, &[2, 2], &pads));
    }
}

/// Batch-to-space by 1 x 16 of 36-byte units: each output row of a
/// block gathers a unit from each of 16 batches (576 bytes), the first
/// and last blocks' rows cropped by a window on them (uncropped, the
/// rows continue one another, and the plan takes them otherwise).
#[test]
fn batch_to_space_of_36_byte_units_matches_the_reference() {
    for crop in [0usize, 1, 5] {
        let shape = [32usize, 3, 4, 9];
        let crops = [[0usize, 0], [crop, crop]];
        let plan = tf::BatchToSpaceNd::new(&[1, 16], &[[0, 0], [crop as i64, crop as i64]]).plan(&shape).unwrap();
        check_f32(&plan, &shape, 11, |x| ref_batch_to_space(x, &shape, 4, &[1, 16], &crops));
    }
}

/// Depth-to-space by 2 into 9 float32 channels: each output row takes a
/// block row's two 36-byte units at a time (72 bytes) from every input
/// pixel of a row, 8 and 40 of them.
#[test]
fn nhwc_depth_to_space_of_72_byte_units_matches_the_reference() {
    for w in [8usize, 40] {
        let shape = [2usize, 6, w, 36];
        let plan = tf::DepthToSpace::new(2, DataFormat::Nhwc).plan(&shape).unwrap();
        check_f32(&plan, &shape, 13, |x| ref_depth_to_space_nhwc(x, &shape, 4, 2));
    }
}
