//! Helpers shared by the integration tests.

pub mod differential;
pub mod golden;
pub mod guarded;
pub mod reference;

use std::mem::MaybeUninit;

use blockshuffle::{numpy, Kernels, Operator, Plan, Streaming};

use reference::{strided_span, unravel};

/// Every kernel set a plan can be pinned to (a set the CPU lacks runs the
/// widest one it has).
#[allow(dead_code)]
pub const ALL_KERNELS: [Kernels; 5] =
    [Kernels::Auto, Kernels::Avx512, Kernels::Avx2, Kernels::Baseline, Kernels::Portable];

/// `len` bytes of labels from `seed`: no two nearby alike, and not
/// repeating every 256 (the high bits of the index folded in).
#[allow(dead_code)]
pub fn bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(37).wrapping_add(seed) ^ ((i >> 8) as u8)).collect()
}

/// What an output buffer holds before a test's run: a fresh allocation
/// may be an earlier run's memory, whose bytes a run that skipped some
/// would leave right.
#[allow(dead_code)]
pub const POISON: u8 = 0xa5;

/// Runs `plan` on `x` (row-major, `elem`-byte elements) into a buffer of
/// [`POISON`].
#[allow(dead_code)]
pub fn run_poisoned(plan: &Plan, x: &[u8], elem: usize) -> Vec<u8> {
    let mut out = vec![POISON; plan.output_len() * elem];
    plan.run_bytes_into(x, elem, &mut out).unwrap();
    out
}

/// Runs `plan` on the strided view `x` (`strides` in elements, of
/// `elem`-byte elements) by the call into uninitialised memory, its
/// buffer filled with [`POISON`] all the same.
#[allow(dead_code)]
pub fn run_strided_poisoned(plan: &Plan, x: &[u8], strides: &[isize], elem: usize) -> Vec<u8> {
    let mut out = vec![MaybeUninit::new(POISON); plan.output_len() * elem];
    plan.run_bytes_strided_uninit(x, strides, elem, &mut out).unwrap();
    // SAFETY: every byte was initialised (the poison, then the run).
    out.into_iter().map(|b| unsafe { b.assume_init() }).collect()
}

/// [`run_poisoned`], and the allocating call (`Plan::run_bytes`, its own
/// path to fresh memory) on the same input, which must agree with it.
#[allow(dead_code)]
pub fn run_both(plan: &Plan, x: &[u8], elem: usize) -> Vec<u8> {
    let out = run_poisoned(plan, x, elem);
    assert!(plan.run_bytes(x, elem).unwrap() == out, "the allocating call differs from the one into a buffer");
    out
}

/// Runs `plan` on `x` (row-major, `shape`, `elem`-byte elements) and on a
/// copy of it whose axis `lead` (the channels) is 5 elements further
/// apart, with every kernel set, streamed or not, against `want`.
#[allow(dead_code)]
pub fn check_with_channels_apart(plan: &Plan, x: &[u8], shape: &[usize], elem: usize, lead: usize, want: &[u8]) {
    let what = format!("{} {shape:?} elem {elem}", plan.op());
    // Strides in elements, the channels `gap` further apart, and `x` laid
    // out so.
    let gap = 5;
    let mut strides = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for i in (0..shape.len()).rev() {
        strides[i] = acc;
        acc *= shape[i] as isize;
        if i == lead + 1 {
            acc += gap;
        }
    }
    let mut buf = vec![0u8; strided_span(shape, &strides, elem)];
    for f in 0..shape.iter().product::<usize>() {
        let idx = unravel(f, shape);
        let off = idx.iter().zip(&strides).map(|(&i, &s)| i * s as usize).sum::<usize>() * elem;
        buf[off..off + elem].copy_from_slice(&x[f * elem..(f + 1) * elem]);
    }
    for kernels in ALL_KERNELS {
        for streaming in [Streaming::Never, Streaming::Always] {
            let plan = plan.clone().with_kernels(kernels).with_streaming(streaming);
            let y = run_poisoned(&plan, x, elem);
            assert!(y == want, "{what} {kernels:?} {streaming:?}");
            let got = run_strided_poisoned(&plan, &buf, &strides, elem);
            assert!(got == want, "{what} {kernels:?} {streaming:?} strides {strides:?}");
        }
    }
}

/// numpy's transpose by `axes` of `shape` (`elem`-byte elements, the
/// input from `seed`), its output shape and [`check_with_channels_apart`]
/// (axis 0 apart): output index `o` is input index `i` with `i[axes[k]] =
/// o[k]`.
#[allow(dead_code)]
pub fn check_transpose(shape: &[usize], axes: &[i64], elem: usize, seed: u8) {
    let plan = numpy::Transpose::new(axes).plan(shape).unwrap();
    let out_shape: Vec<usize> = axes.iter().map(|&a| shape[a as usize]).collect();
    assert_eq!(plan.output_shape(), out_shape.as_slice());
    let x = bytes(shape.iter().product::<usize>() * elem, seed);
    let want = reference::reference(&x, shape, &out_shape, elem, |o| {
        let mut i = vec![0; o.len()];
        for (k, &a) in axes.iter().enumerate() {
            i[a as usize] = o[k];
        }
        Some(i)
    });
    check_with_channels_apart(&plan, &x, shape, elem, 0, &want);
}
