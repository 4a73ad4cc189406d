//! Plans through the cache whose destination streams: each chunk of
//! whole destination blocks built in a stage by the plan's own kernels,
//! then streamed out (the planner's `DestinationStage`). Shapes of the
//! broad benchmark's operators that reach it (tiles of units without a
//! streaming kernel, grids of rows, padded and not), run streamed into
//! outputs full of a sentinel against the naive reference and the run
//! through the cache, with every kernel set, on 1 to 3 threads; blocks
//! that do not divide the chunks, and chunks of one block. (Strided views
//! do not stream, so have no stage: `Streaming`.)

use blockshuffle::catalog::OpSpec;
use blockshuffle::{Kernels, Operator, Parallelism, Plan, Streaming};

mod common;
use common::reference::{ref_depth_to_space_cf, ref_space_to_batch};
use common::{bytes, run_both, run_poisoned, ALL_KERNELS};

/// One operator run: framework, op, flags, element bytes, input shape.
type Case = (&'static str, &'static str, &'static [&'static str], usize, &'static [usize]);

const CASES: &[Case] = &[
    // NCHW depth-to-space of 3-byte units by 2: blocks of two output rows
    // (5,232 bytes), 25 to a chunk, 602 of them (3 MiB: split between
    // threads).
    ("tf", "depth-to-space", &["--block-size", "2", "--data-format", "NCHW"], 3, &[1, 8, 301, 436]),
    // Space-to-batch padded on the first blocked axis (a window inside
    // each block, its padding filled in the stage).
    ("tf", "space-to-batch-nd", &["--block-shape", "16,12,3", "--paddings", "0,15,0,0,0,0"], 8, &[1, 17, 24, 6, 3, 3]),
    // Interleaves of 2-byte units (einops, blocks of 13 x 12) and a
    // pixel unshuffle by 14.
    (
        "einops",
        "rearrange",
        &["--pattern", "b (h p1) (w p2) c -> b h w (c p2 p1)", "--sizes", "p1=13,p2=12"],
        2,
        &[2, 39, 48, 3],
    ),
    ("torch", "pixel-unshuffle", &["--downscale-factor", "14"], 2, &[1, 4, 56, 70]),
    // NHWC depth-to-space of rows of 7 float16 units (a grid, no tile).
    ("tf", "depth-to-space", &["--block-size", "7", "--data-format", "NHWC"], 2, &[1, 20, 30, 98]),
    // OpenVINO depth-to-space of 3-byte units by 5, 3-D, depth first.
    ("ov", "depth-to-space", &["--block-size", "5", "--mode", "depth_first"], 3, &[1, 250, 3, 7, 4]),
    // Pixel unshuffles whose blocks (a channel's 196 output planes) are
    // 127,008 bytes, one to a chunk, and 134,064, past the stage: their
    // blocks are then 14 planes (9,576 bytes), 13 to a chunk, 28 of them.
    ("torch", "pixel-unshuffle", &["--downscale-factor", "14"], 2, &[1, 2, 252, 252]),
    ("torch", "pixel-unshuffle", &["--downscale-factor", "14"], 2, &[1, 2, 266, 252]),
];

/// The plan of a case, streamed or not, with `kernels`.
fn plan(case: &Case, streaming: Streaming, kernels: Kernels) -> Plan {
    let &(framework, op, args, _, shape) = case;
    OpSpec::parse(framework, op, args).unwrap().plan(shape).unwrap().with_streaming(streaming).with_kernels(kernels)
}

#[test]
fn staged_destinations_match_the_reference_and_the_cached_run() {
    for (i, case) in CASES.iter().enumerate() {
        let &(framework, op, args, elem, shape) = case;
        let x = bytes(shape.iter().product::<usize>() * elem, i as u8);
        let reference = match (framework, op) {
            ("tf", "depth-to-space") if args[3] == "NCHW" => Some(ref_depth_to_space_cf(&x, shape, elem, 1, 2, true).0),
            ("tf", "space-to-batch-nd") => {
                Some(ref_space_to_batch(&x, shape, elem, &[16, 12, 3], &[[0, 15], [0, 0], [0, 0]]).0)
            }
            _ => None,
        };
        let cached = run_poisoned(&plan(case, Streaming::Never, Kernels::Portable), &x, elem);
        if let Some(want) = &reference {
            assert!(cached == *want, "case {i}: the run through the cache differs from the reference");
        }
        for kernels in ALL_KERNELS {
            let streamed = plan(case, Streaming::Always, kernels);
            for threads in [1, 2, 3] {
                let plan = streamed.clone().with_parallelism(Parallelism::Threads(threads));
                let got = if threads == 1 { run_both(&plan, &x, elem) } else { run_poisoned(&plan, &x, elem) };
                let first = got.iter().zip(&cached).position(|(a, b)| a != b);
                assert_eq!(
                    first, None,
                    "{framework} {op} {args:?} {shape:?} {kernels:?} {threads} threads: first difference"
                );
            }
        }
    }
}
