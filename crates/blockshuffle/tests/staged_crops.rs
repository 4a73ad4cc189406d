//! Batch-to-space cropped on its innermost blocked axis, through the
//! cache: each output row interleaves the block's streams and is cropped
//! at its ends. Rows of up to 1 KiB are built in a stage whole rows at a
//! time and their kept bytes copied on; longer ones tile the columns whole
//! for every stream and copy the partial ones unit by unit
//! (`plan::rules::stages_cropped_rows`), and an interleave of many streams
//! that the byte permutes take makes such a tile from a kilobyte of rows
//! a call (`plan::rules::choose_tile`). Both sides of each limit, rows of
//! a few bytes, strided sources, every kernel set, one thread and three,
//! against the reference.

use blockshuffle::{tf, Kernels, Operator, Parallelism, Plan, Streaming};

mod common;
use common::{bytes, run_poisoned, run_strided_poisoned, ALL_KERNELS};

/// TF batch-to-space by `bh x bw` of NHWC `[bh * bw * n, h, w, c]`,
/// cropped on W by `crop`: rows of `w * bw * c` elements before the crop.
fn case(n: usize, h: usize, w: usize, c: usize, [bh, bw]: [usize; 2], crop: [usize; 2]) -> (Plan, Vec<usize>) {
    let shape = vec![bh * bw * n, h, w, c];
    let crops = [[0i64, 0], [crop[0] as i64, crop[1] as i64]];
    let plan = tf::BatchToSpaceNd::new(&[bh as i64, bw as i64], &crops).plan(&shape).unwrap();
    (plan, shape)
}

fn check(n: usize, h: usize, w: usize, c: usize, b: [usize; 2], elem: usize, crop: [usize; 2]) {
    let (plan, shape) = case(n, h, w, c, b, crop);
    let x = bytes(shape.iter().product::<usize>() * elem, 5);
    let crops = [[0, 0], crop];
    let (want, out_shape) = common::reference::ref_batch_to_space(&x, &shape, elem, &b, &crops);
    assert_eq!(plan.output_shape(), out_shape.as_slice());
    let what = format!("rows of {} bytes, {shape:?} x {elem}, crop {crop:?}", w * b[1] * c * elem);
    // Outputs of 1 MiB and more split among threads (ranges of rows).
    for kernels in ALL_KERNELS {
        for streaming in [Streaming::Auto, Streaming::Never] {
            for parallelism in [Parallelism::Sequential, Parallelism::Threads(3)] {
                let plan = plan.clone().with_kernels(kernels).with_streaming(streaming).with_parallelism(parallelism);
                let y = run_poisoned(&plan, &x, elem);
                let first = y.iter().zip(&want).position(|(a, b)| a != b);
                assert!(
                    first.is_none(),
                    "{what} {kernels:?} {streaming:?} {parallelism:?}: first wrong byte {first:?}"
                );
            }
        }
    }
}

#[test]
fn cropped_rows_around_the_stage_limit_match_the_reference() {
    // float32 by 4, one channel: rows of 1,008, 1,024 (the last staged),
    // 1,040 and 1,056 bytes.
    for w in [63, 64, 65, 66] {
        check(2, 9, w, 1, [4, 4], 4, [1, 2]);
        check(2, 9, w, 1, [4, 4], 4, [3, 0]);
    }
    // 2.4 MiB out, through the cache, on three threads too.
    check(2, 300, 64, 1, [4, 4], 4, [1, 2]);
}

#[test]
fn short_cropped_rows_match_the_reference() {
    // Rows of 16 bytes (uint8 by 2, eight columns, the first byte
    // cropped), of 3-byte units by 3 (90 bytes), of 8-byte units by 6
    // (240 bytes), and a row of 8 bytes cropped to a single unit.
    check(3, 7, 8, 1, [2, 2], 1, [1, 0]);
    check(2, 5, 10, 3, [3, 3], 1, [2, 4]);
    check(1, 4, 5, 2, [6, 6], 4, [4, 3]);
    check(1, 3, 2, 1, [2, 2], 2, [1, 2]);
}

#[test]
fn cropped_interleaves_of_many_streams_match_the_reference() {
    // 11 streams of 6-byte units (3 float16 channels), rows of 396 bytes:
    // with the byte permutes, a tile staged whole from a kilobyte of rows
    // a call (8 rows), rows of `y` below it (2 rows); 3-byte units by 12.
    for h in [1, 2, 3, 8, 9] {
        check(1, h, 6, 3, [1, 11], 2, [1, 2]);
        check(2, h, 4, 3, [1, 12], 1, [5, 0]);
    }
}

#[test]
fn cropped_rows_of_a_strided_source_match_the_reference() {
    // The source rows padded by 3 columns in their buffer: the view's
    // row stride is not its row's length.
    let (n, h, w, c, b, elem, crop) = (2usize, 6usize, 12usize, 2usize, [3usize, 3usize], 4usize, [2usize, 1usize]);
    let (plan, shape) = case(n, h, w, c, b, crop);
    let wp = w + 3;
    let buffer = bytes(b[0] * b[1] * n * h * wp * c * elem, 7);
    let strides = [(h * wp * c) as isize, (wp * c) as isize, c as isize, 1];
    // The view's elements, compacted, for the reference.
    let mut x = Vec::with_capacity(shape.iter().product::<usize>() * elem);
    for i in 0..b[0] * b[1] * n {
        for r in 0..h {
            let row = ((i * h + r) * wp * c) * elem;
            x.extend_from_slice(&buffer[row..row + w * c * elem]);
        }
    }
    let (want, _) = common::reference::ref_batch_to_space(&x, &shape, elem, &b, &[[0, 0], crop]);
    for kernels in [Kernels::Auto, Kernels::Portable] {
        let plan = plan.clone().with_kernels(kernels);
        let y = run_strided_poisoned(&plan, &buffer, &strides, elem);
        assert!(y == want, "{kernels:?}");
    }
}
