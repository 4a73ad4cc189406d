//! Execution on small random tensors against the naive reference (the same
//! one the property tests use), with every kernel and store mode.

#![no_main]

use blockshuffle::{openvino, tf, Kernels, Operator, Parallelism, Streaming};
use libfuzzer_sys::fuzz_target;

#[path = "../../crates/blockshuffle/tests/common/reference.rs"]
mod reference;
use reference::*;

/// Larger tensors add nothing the small ones do not cover, and slow the
/// naive reference down.
const MAX_ELEMENTS: usize = 2048;

fuzz_target!(|data: &[u8]| {
    let mut it = data.iter().copied().chain(std::iter::repeat(0));
    let mut next = move |m: u8| it.next().unwrap() % m;
    let elem = [1usize, 2, 3, 4, 8, 16][next(6) as usize];
    let kernels = [Kernels::Auto, Kernels::Avx512, Kernels::Avx2, Kernels::Baseline, Kernels::Portable][next(5) as usize];
    let streaming = [Streaming::Auto, Streaming::Always, Streaming::Never][next(3) as usize];
    let parallelism = if next(2) == 0 { Parallelism::Sequential } else { Parallelism::Threads(3) };
    let tune = |p: blockshuffle::Plan| p.with_kernels(kernels).with_streaming(streaming).with_parallelism(parallelism);
    if next(2) == 0 {
        // Space-to-batch (and back) with padding.
        let m = 1 + next(3) as usize;
        let mut shape = vec![next(3) as usize];
        let (mut blocks, mut pads) = (Vec::new(), Vec::new());
        for _ in 0..m {
            let b = 1 + next(4) as usize;
            let padded = b * next(5) as usize;
            let pb = (next(4) as usize).min(padded);
            let pe = (next(4) as usize).min(padded - pb);
            shape.push(padded - pb - pe);
            blocks.push(b);
            pads.push([pb, pe]);
        }
        for _ in 0..next(3) {
            shape.push(next(4) as usize);
        }
        let b: Vec<i64> = blocks.iter().map(|&v| v as i64).collect();
        let p: Vec<[i64; 2]> = pads.iter().map(|&[s, e]| [s as i64, e as i64]).collect();
        let plan = tune(tf::SpaceToBatchNd::new(&b, &p).plan(&shape).unwrap());
        if plan.output_len() > MAX_ELEMENTS {
            return;
        }
        let x: Vec<u8> = (0..plan.input_len() * elem).map(|i| (i * 7 + 3) as u8).collect();
        let (want, want_shape) = ref_space_to_batch(&x, &shape, elem, &blocks, &pads);
        assert_eq!(plan.output_shape(), &want_shape[..]);
        assert_eq!(plan.run_bytes(&x, elem).unwrap(), want);
        let back = tune(tf::BatchToSpaceNd::new(&b, &p).plan(&want_shape).unwrap());
        let (x_again, _) = ref_batch_to_space(&want, &want_shape, elem, &blocks, &pads);
        assert_eq!(back.run_bytes(&want, elem).unwrap(), x_again);
        assert_eq!(x_again, x);
    } else {
        // Channels-first depth-to-space (and back), OpenVINO's modes.
        let k = 1 + next(3) as usize;
        let b = 1 + next(4) as usize;
        let blocks_first = next(2) == 0;
        let mut shape = vec![next(3) as usize, next(3) as usize * b.pow(k as u32)];
        for _ in 0..k {
            shape.push(next(5) as usize);
        }
        let mode = if blocks_first { openvino::Mode::BlocksFirst } else { openvino::Mode::DepthFirst };
        let plan = tune(openvino::DepthToSpace::new(b as i64, mode).plan(&shape).unwrap());
        if plan.output_len() > MAX_ELEMENTS {
            return;
        }
        let x: Vec<u8> = (0..plan.input_len() * elem).map(|i| (i * 13 + 1) as u8).collect();
        let (want, want_shape) = ref_depth_to_space_cf(&x, &shape, elem, 1, b, blocks_first);
        assert_eq!(plan.output_shape(), &want_shape[..]);
        assert_eq!(plan.run_bytes(&x, elem).unwrap(), want);
        let s2d = tune(openvino::SpaceToDepth::new(b as i64, mode).plan(&want_shape).unwrap());
        assert_eq!(s2d.run_bytes(&want, elem).unwrap(), x);
    }
});
