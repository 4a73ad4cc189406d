//! Development benchmarks (divan): the workload shapes of
//! `shared/bench/workloads.json` at a quarter of their size, each against a
//! memcpy of its output bytes, and every kernel variant (SIMD or portable,
//! streaming or cached stores). `blockshuffle bench` is the reporting tool;
//! these are for comparing changes: `cargo bench -p blockshuffle`.

use blockshuffle::catalog::OpSpec;
use blockshuffle::{Kernels, Operator, Plan, Streaming};
use divan::{black_box, Bencher};

fn main() {
    divan::main();
}

/// One workload: id, framework, op, flags, element bytes, input shape.
type Workload = (&'static str, &'static str, &'static str, &'static [&'static str], usize, &'static [usize]);

const WORKLOADS: &[Workload] = &[
    ("W1", "tf", "space-to-batch-nd", &["--block-shape", "2,2", "--paddings", "0,0,0,0"], 4, &[2, 256, 256, 64]),
    ("W2", "tf", "batch-to-space-nd", &["--block-shape", "2,2", "--crops", "0,0,0,0"], 4, &[8, 128, 128, 64]),
    ("W3", "tf", "space-to-batch-nd", &["--block-shape", "4,4", "--paddings", "3,3,3,3"], 4, &[2, 250, 250, 64]),
    ("W5", "tf", "space-to-depth", &["--block-size", "2"], 4, &[4, 256, 256, 32]),
    ("W7", "onnx", "space-to-depth", &["--blocksize", "2"], 4, &[2, 16, 512, 512]),
    ("W8", "torch", "pixel-shuffle", &["--upscale-factor", "2"], 4, &[2, 64, 256, 256]),
    ("W10", "torch", "pixel-unshuffle", &["--downscale-factor", "4"], 1, &[16, 3, 512, 512]),
    ("W12", "torch", "pixel-unshuffle", &["--downscale-factor", "2"], 2, &[2, 16, 512, 512]),
];

fn plan(id: &str) -> (Plan, usize) {
    let (_, fw, op, args, elem, shape) = WORKLOADS.iter().find(|w| w.0 == id).expect("a workload id");
    (OpSpec::parse(fw, op, args).unwrap().plan(shape).unwrap(), *elem)
}

const IDS: &[&str] = &["W1", "W2", "W3", "W5", "W7", "W8", "W10", "W12"];

#[divan::bench(args = IDS)]
fn operator(bencher: Bencher, id: &str) {
    let (plan, elem) = plan(id);
    let input = vec![7u8; plan.input_len() * elem];
    let mut out = vec![0u8; plan.output_len() * elem];
    bencher.counter(divan::counter::BytesCount::new(out.len())).bench_local(|| {
        plan.run_bytes_into(black_box(&input), elem, black_box(&mut out)).unwrap();
    });
}

#[divan::bench(args = IDS)]
fn memcpy_of_the_output(bencher: Bencher, id: &str) {
    let (plan, elem) = plan(id);
    let src = vec![7u8; plan.output_len() * elem];
    let mut dst = vec![0u8; src.len()];
    bencher.counter(divan::counter::BytesCount::new(dst.len())).bench_local(|| {
        black_box(&mut dst).copy_from_slice(black_box(&src));
    });
}

/// Every kernel variant on the short-run workloads: `V % 5` picks the
/// kernels (auto, at most AVX-512 without VBMI, at most AVX2, baseline
/// SSE2, portable), `V / 5` turns streaming stores off.
#[divan::bench(args = ["W7", "W8", "W10", "W12"], consts = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])]
fn kernel_variants<const V: usize>(bencher: Bencher, id: &str) {
    let (plan, elem) = plan(id);
    let kernels = [Kernels::Auto, Kernels::Avx512, Kernels::Avx2, Kernels::Baseline, Kernels::Portable][V % 5];
    let streaming = if V / 5 == 0 { Streaming::Always } else { Streaming::Never };
    let plan = plan.with_kernels(kernels).with_streaming(streaming);
    let input = vec![7u8; plan.input_len() * elem];
    let mut out = vec![0u8; plan.output_len() * elem];
    bencher.bench_local(|| plan.run_bytes_into(black_box(&input), elem, black_box(&mut out)).unwrap());
}

/// Per-call overhead on the small workloads: plan and run into a buffer.
/// In samples of 64 calls: left to choose, divan took one call a sample
/// from a slow first one (97 us), and each sample then timed its timer
/// too (279-293 ns against 266 in a loop of its own).
#[divan::bench(sample_size = 64)]
fn small_plan_and_run(bencher: Bencher) {
    let spec = OpSpec::parse("tf", "space-to-batch-nd", &["--block-shape", "2,2", "--paddings", "0,0,0,0"]).unwrap();
    let input = [0u8; 64];
    let mut out = [0u8; 64];
    bencher.bench_local(|| {
        let plan = spec.plan(black_box(&[1, 4, 4, 1])).unwrap();
        plan.run_bytes_into(black_box(&input), 4, &mut out).unwrap();
    });
}

/// The small workloads' shapes, to time a prepared plan's run and the
/// planning alone: (framework, op, flags, input shape), `float32`.
const SMALL: &[(&str, &str, &[&str], &[usize])] = &[
    ("tf", "space-to-batch-nd", &["--block-shape", "2,2", "--paddings", "0,0,0,0"], &[1, 4, 4, 1]),
    (
        "ov",
        "batch-to-space",
        &["--block-shape", "1,2,4,3,1", "--crops-begin", "0,0,1,0,0", "--crops-end", "0,0,1,0,0"],
        &[48, 3, 3, 1, 3],
    ),
    ("onnx", "depth-to-space", &["--blocksize", "2", "--mode", "CRD"], &[1, 8, 2, 3]),
];

/// A prepared plan's run into a buffer (S1, S2, S3 of the workloads).
#[divan::bench(args = [0, 1, 2])]
fn small_run_prepared(bencher: Bencher, i: usize) {
    let (fw, op, args, shape) = SMALL[i];
    let plan = OpSpec::parse(fw, op, args).unwrap().plan(shape).unwrap();
    let input = vec![0f32; plan.input_len()];
    let mut out = vec![0f32; plan.output_len()];
    bencher.bench_local(|| plan.run_into(black_box(&input), black_box(&mut out)).unwrap());
}

/// Planning alone: validation and shape inference (S1, S2, S3).
#[divan::bench(args = [0, 1, 2])]
fn small_plan_only(bencher: Bencher, i: usize) {
    let (fw, op, args, shape) = SMALL[i];
    let spec = OpSpec::parse(fw, op, args).unwrap();
    bencher.bench_local(|| spec.plan(black_box(shape)).unwrap());
}
