//! Interleaves of more streams than a kernel of their own takes, past the
//! caches (outputs of twice the size from which outputs stream, at most
//! 32 MiB: `plan::streamed::streams_staged`),
//! built in the stage and streamed through the line writers in the order
//! of a plan through the cache: OpenVINO depth-first depth-to-space of a
//! 1-D image (6 streams, the whole row one destination run), TF NCHW
//! depth-to-space (5 streams, each tile's block rows continuing its
//! destination run; 7 streams of float64 into runs of 2,184 bytes, each
//! ending with its tile's row) and TF batch-to-space cropped on H (6
//! streams of 16-byte units, the block rows a crop cuts at the image's
//! ends), against references, with every kernel set.

use blockshuffle::{openvino, tf, DataFormat, Operator, Plan, Streaming};

mod common;
use common::{bytes, run_poisoned, ALL_KERNELS};

/// Runs `plan` on every kernel set against `want`: streamed (`Auto`, as
/// `Always` would at these sizes: the same plan) and through the cache
/// (`Never`), the plan the staged one replaces.
fn check(plan: &Plan, x: &[u8], elem: usize, want: &[u8]) {
    for kernels in ALL_KERNELS {
        for streaming in [Streaming::Auto, Streaming::Never] {
            let plan = plan.clone().with_kernels(kernels).with_streaming(streaming);
            let y = run_poisoned(&plan, x, elem);
            let first = y.iter().zip(want).position(|(a, b)| a != b);
            assert!(first.is_none(), "{} {kernels:?} {streaming:?}: first wrong byte {first:?}", plan.op());
        }
    }
}

#[test]
fn depth_first_depth_to_space_of_a_long_row_matches_the_reference() {
    // [n, c * b, w] -> [n, c, w * b]: out[n][c][x * b + j] = in[n][c * b + j][x].
    let (n, c, w, b, elem) = (2usize, 3usize, 240_000usize, 6usize, 4usize);
    let plan = openvino::DepthToSpace::depth_first(b as i64).plan(&[n, c * b, w]).unwrap();
    assert_eq!(plan.output_shape(), [n, c, w * b]);
    assert!(plan.output_len() * elem >= 32 << 20);
    let x = bytes(n * c * b * w * elem, 3);
    let mut want = vec![0u8; x.len()];
    for (out, inp) in want.chunks_exact_mut(w * b * elem).zip(x.chunks_exact(w * b * elem)) {
        for j in 0..b {
            for (k, unit) in inp[j * w * elem..(j + 1) * w * elem].chunks_exact(elem).enumerate() {
                let at = (k * b + j) * elem;
                out[at..at + elem].copy_from_slice(unit);
            }
        }
    }
    check(&plan, &x, elem, &want);
}

#[test]
fn nchw_depth_to_space_by_5_matches_the_reference() {
    // [1, 25, h, w] -> [1, 1, 5h, 5w]: out[y * 5 + i][x * 5 + j] = in[i * 5 + j][y][x].
    let (h, w, b, elem) = (300usize, 1120usize, 5usize, 4usize);
    let plan = tf::DepthToSpace::new(b as i64, DataFormat::Nchw).plan(&[1, b * b, h, w]).unwrap();
    assert_eq!(plan.output_shape(), [1, 1, h * b, w * b]);
    assert!(plan.output_len() * elem >= 32 << 20);
    let x = bytes(b * b * h * w * elem, 5);
    let mut want = vec![0u8; x.len()];
    for (d, channel) in x.chunks_exact(h * w * elem).enumerate() {
        let (i, j) = (d / b, d % b);
        for (y, row) in channel.chunks_exact(w * elem).enumerate() {
            for (k, unit) in row.chunks_exact(elem).enumerate() {
                let at = ((y * b + i) * w * b + k * b + j) * elem;
                want[at..at + elem].copy_from_slice(unit);
            }
        }
    }
    check(&plan, &x, elem, &want);
}

#[test]
fn nchw_depth_to_space_of_short_runs_matches_the_reference() {
    // [1, 49c, h, w] -> [1, c, 7h, 7w]: out[ch][y * 7 + i][x * 7 + j] =
    // in[(i * 7 + j) * c + ch][y][x]. Each tile's destination run is a row
    // of 39 units of 7 streams (2,184 bytes, from the plan's
    // `MIN_STAGED_RUN`), the next tile (the channel's next row) elsewhere.
    let (c, h, w, b, elem) = (32usize, 69usize, 39usize, 7usize, 8usize);
    let plan = tf::DepthToSpace::new(b as i64, DataFormat::Nchw).plan(&[1, b * b * c, h, w]).unwrap();
    assert_eq!(plan.output_shape(), [1, c, h * b, w * b]);
    assert!(plan.output_len() * elem >= 32 << 20);
    let x = bytes(b * b * c * h * w * elem, 11);
    // TF's depth index is `(i * 7 + j) * c + ch`: blocks first.
    let (want, out_shape) = common::reference::ref_depth_to_space_cf(&x, &[1, b * b * c, h, w], elem, 1, b, true);
    assert_eq!(plan.output_shape(), out_shape.as_slice());
    check(&plan, &x, elem, &want);
}

#[test]
fn cropped_batch_to_space_matches_the_reference() {
    // TF batch-to-space by 6 of float32 NHWC with 4 channels, cropped on H
    // by 3 and 5: the loop of block rows around each 38,400-byte tile
    // carries the crop's window.
    let (h, w, c, b, elem) = (150usize, 400usize, 4usize, 6usize, 4usize);
    let crops = [[3usize, 5], [0, 0]];
    let shape = [b * b, h, w, c];
    let plan = tf::BatchToSpaceNd::new(&[b as i64, b as i64], &[[3, 5], [0, 0]]).plan(&shape).unwrap();
    let x = bytes(shape.iter().product::<usize>() * elem, 9);
    let (want, out_shape) = common::reference::ref_batch_to_space(&x, &shape, elem, &[b, b], &crops);
    assert_eq!(plan.output_shape(), out_shape.as_slice());
    assert!(plan.output_len() * elem >= 32 << 20);
    check(&plan, &x, elem, &want);
}
