//! Runs on threads against the same run on one: the executor splits the
//! flattened outer loops of a plan into ranges, each run a row of the
//! range's last loop at a time, and that loop may be a tile's own (a
//! transpose of two axes split between threads), windowed or not. Outputs
//! of 1 MiB and more (smaller ones stay on the calling thread), with
//! thread counts that split rows unevenly, every kernel set, streaming
//! stores or not, from row-major buffers and from strided views.

use blockshuffle::catalog::OpSpec;
use blockshuffle::{Kernels, Operator, Parallelism, Streaming};

mod common;
use common::ALL_KERNELS;
use common::{bytes, run_poisoned, run_strided_poisoned};

/// One operator run: framework, op, flags, element bytes, input shape.
type Case = (&'static str, &'static str, &'static [&'static str], usize, &'static [usize]);

const CASES: &[Case] = &[
    // A transpose of two axes: the tile alone, its rows split (the first at
    // exactly 1 MiB, the smallest output that is split).
    ("numpy", "transpose", &["--axes", "1,0"], 1, &[1024, 1024]),
    ("numpy", "transpose", &["--axes", "1,0"], 1, &[1031, 1029]),
    ("numpy", "transpose", &["--axes", "1,0"], 4, &[515, 517]),
    // A tile whose inner loop is cropped at the end of the outer one's last
    // index (a window on the split loop's index), and at both ends.
    ("tf", "batch-to-space-nd", &["--block-shape", "2", "--crops", "0,1"], 12, &[2, 45_000]),
    ("tf", "batch-to-space-nd", &["--block-shape", "3", "--crops", "1,1"], 4, &[3, 90_000]),
    // Padded at both ends.
    ("ov", "space-to-batch", &["--block-shape", "1,3", "--pads-begin", "0,1", "--pads-end", "0,2"], 2, &[4, 180_000]),
    ("tf", "space-to-batch-nd", &["--block-shape", "2,2", "--paddings", "1,1,0,2"], 4, &[1, 254, 300, 4]),
    // Grids and tiles under outer loops, whose parts run as one flat loop.
    ("ov", "space-to-depth", &["--block-size", "4", "--mode", "depth_first"], 6, &[2, 16, 12, 16, 32]),
    ("onnx", "depth-to-space", &["--blocksize", "15", "--mode", "CRD"], 32, &[2, 3600, 3, 2]),
    (
        "einops",
        "rearrange",
        &["--pattern", "b (h p1) (w p2) c -> b h w (c p2 p1)", "--sizes", "p1=9,p2=5"],
        3,
        &[2, 90, 850, 3],
    ),
    // Tiles next to a loop whose repetitions continue their source rows
    // (moved there by the planner), split between threads in that loop.
    ("torch", "pixel-shuffle", &["--upscale-factor", "13"], 4, &[2, 2, 338, 28, 19]),
    ("tf", "depth-to-space", &["--block-size", "16", "--data-format", "NCHW"], 1, &[4, 256, 40, 30]),
    // A tile repeated along a loop continuing its source rows and one
    // continuing its destination rows, one matrix (float64, AVX-512;
    // destination rows of whole lines, streamed): the loop outside them
    // too short to split alone, so the matrix's outer loop is split
    // between threads.
    ("numpy", "transpose", &["--axes", "4,3,2,1,0"], 8, &[32, 9, 2, 13, 40]),
    // A matrix of 4 x 272 rows streamed in chunks of 3 repetitions and 1
    // across the loop continuing its source rows (float32, AVX-512): 2 and
    // 3 threads each run a range of that loop in chunks; 7 split the
    // matrix's own loops, each part's matrix whole.
    ("numpy", "transpose", &["--axes", "4,3,2,1,0"], 4, &[272, 4, 16, 2, 16]),
    // Tiles repeated over an outer loop.
    ("ov", "depth-to-space", &["--block-size", "6", "--mode", "depth_first"], 4, &[2, 36, 4000]),
    ("onnx", "space-to-depth", &["--blocksize", "2"], 1, &[1, 4, 512, 600]),
];

#[test]
fn threaded_runs_match_the_run_on_one_thread() {
    for (i, &(framework, op, args, elem, shape)) in CASES.iter().enumerate() {
        let plan = OpSpec::parse(framework, op, args).unwrap().plan(shape).unwrap();
        assert!(plan.output_len() * elem >= 1 << 20, "case {i} too small to be split");
        let x = bytes(plan.input_len() * elem, i as u8);
        for kernels in ALL_KERNELS {
            for streaming in [Streaming::Never, Streaming::Always] {
                let plan = plan.clone().with_kernels(kernels).with_streaming(streaming);
                let want = run_poisoned(&plan, &x, elem);
                for threads in [2, 3, 7] {
                    let got = run_poisoned(&plan.clone().with_parallelism(Parallelism::Threads(threads)), &x, elem);
                    let first = got.iter().zip(&want).position(|(a, b)| a != b);
                    assert!(
                        first.is_none(),
                        "{framework} {op} {args:?} {shape:?} {kernels:?} {streaming:?} {threads} threads: \
                         first difference at byte {first:?}"
                    );
                }
            }
        }
    }
}

/// The same from a Fortran-order view of the input (strides in elements,
/// the first axis fastest): a layout that is not row-major, copied through
/// the cache by the kernels that follow the strides.
#[test]
fn threaded_runs_of_strided_views_match_the_run_on_one_thread() {
    for (i, &(framework, op, args, elem, shape)) in CASES.iter().enumerate() {
        let plan = OpSpec::parse(framework, op, args).unwrap().plan(shape).unwrap();
        let x = bytes(plan.input_len() * elem, i as u8);
        let strides: Vec<isize> = (0..shape.len()).map(|d| shape[..d].iter().product::<usize>() as isize).collect();
        let run = |plan: &blockshuffle::Plan| run_strided_poisoned(plan, &x, &strides, elem);
        for kernels in [Kernels::Auto, Kernels::Portable] {
            let plan = plan.clone().with_kernels(kernels);
            let want = run(&plan);
            for threads in [2, 3] {
                let got = run(&plan.clone().with_parallelism(Parallelism::Threads(threads)));
                let first = got.iter().zip(&want).position(|(a, b)| a != b);
                assert!(
                    first.is_none(),
                    "{framework} {op} {args:?} {shape:?} Fortran order {kernels:?} {threads} threads: \
                     first difference at byte {first:?}"
                );
            }
        }
    }
}
