//! The differential harness: random cases of all 14 operators (ranks,
//! blocks, paddings and crops, element sizes 1 to 64 and odd ones, outputs
//! from a few bytes to tens of MiB around every size at which the engine
//! switches paths), random source layouts (C, Fortran, permuted, reversed,
//! gapped, broadcast) and destination views, every kernel set, streaming on
//! and off, thread counts and progress reporting, each checked against the
//! naive reference of `reference.rs`, with guard bytes around the output
//! and the input against an inaccessible page. Shared by
//! `tests/differential.rs` and the `differential` fuzz target.

#![allow(dead_code)]

use std::mem::MaybeUninit;

use blockshuffle::{numpy, onnx, openvino, tf, torch, DataFormat, Kernels, Operator, Parallelism, Plan, Streaming};

use super::guarded::{Edge, Guarded};
use super::reference::*;

/// xorshift64*: reproducible from its seed, no dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// Output sizes at which the engine switches paths: a crop stage and tile
/// stage (16 KiB), rows of a few KiB, threading (1 MiB), streaming stores
/// (a quarter of the last-level cache: 8 MiB for 32 MiB, 16 MiB for 64 MiB
/// and more) and progress chunks (16 MiB).
const THRESHOLDS: [usize; 7] = [4 << 10, 16 << 10, 64 << 10, 1 << 20, 8 << 20, 16 << 20, 32 << 20];

/// Element sizes: the vector units, three-channel pixels and odd ones.
const ELEMS: [usize; 19] = [1, 1, 1, 2, 2, 3, 4, 4, 5, 6, 7, 8, 8, 12, 16, 24, 32, 48, 64];

/// The naive reference of a case: the dense input's bytes to the output's.
type Reference = Box<dyn Fn(&[u8]) -> Vec<u8>>;

/// One operator on one input: the plan and the naive reference.
pub struct Case {
    pub what: String,
    pub plan: Plan,
    pub elem: usize,
    reference: Reference,
}

/// How big a case may be: the naive reference visits every element.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Most output elements.
    pub elems: usize,
    /// Most output bytes.
    pub bytes: usize,
}

/// The count of the one large axis that brings `rest` elements near `target`.
fn grow(target: usize, rest: usize) -> usize {
    (target / rest.max(1)).max(1)
}

fn as_i64(v: &[usize]) -> Vec<i64> {
    v.iter().map(|&x| x as i64).collect()
}

/// A random case whose output is near one of the engine's thresholds (or
/// anywhere below the budget), its input and output within the budget.
pub fn generate(rng: &mut Rng, budget: Budget) -> Case {
    // A shape's random base (blocks, short axes) may alone exceed a small
    // budget: such cases are drawn again.
    loop {
        let case = draw(rng, budget);
        let most = case.plan.output_len().max(case.plan.input_shape().iter().product());
        if most <= budget.elems && most * case.elem <= budget.bytes.max(case.elem) {
            return case;
        }
    }
}

fn draw(rng: &mut Rng, budget: Budget) -> Case {
    let elem = rng.pick(&ELEMS);
    let bytes = if rng.chance(30) {
        rng.range(1, 4096)
    } else {
        let t = rng.pick(&THRESHOLDS);
        // Just below, at or just above the threshold.
        (t as f64 * [0.9, 0.99, 1.0, 1.01, 1.1, 2.0][rng.below(6)]) as usize
    };
    let bytes = bytes.min(budget.bytes);
    let target = (bytes / elem).clamp(1, budget.elems);
    let backward = rng.chance(50);
    match rng.below(8) {
        7 => np_transpose(rng, elem, target),
        0 => tf_batch(rng, elem, target, backward),
        1 => tf_batch_v1(rng, elem, target, backward),
        2 => ov_batch(rng, elem, target, backward),
        3 => tf_depth(rng, elem, target, backward),
        4 => ov_depth(rng, elem, target, backward),
        5 => onnx_depth(rng, elem, target, backward),
        _ => torch_depth(rng, elem, target, backward),
    }
}

/// A space side of `m` padded axes: per axis `(block, outer, pad begin, pad
/// end)`, one of them (or the batch, or a trailing axis) grown to `target`.
struct Padded {
    batch: usize,
    axes: Vec<(usize, usize, usize, usize)>,
    trailing: Vec<usize>,
}

impl Padded {
    fn random(rng: &mut Rng, m: usize, trailing: usize, target: usize, max_block: usize) -> Padded {
        let mut p = Padded { batch: rng.range(1, 3), axes: Vec::new(), trailing: Vec::new() };
        for _ in 0..m {
            let b = rng.range(1, max_block);
            let outer = rng.range(1, 4);
            let padded = b * outer;
            let pb = if rng.chance(50) { rng.range(0, padded) } else { 0 };
            let pe = if rng.chance(50) { rng.range(0, padded - pb) } else { 0 };
            p.axes.push((b, outer, pb, pe));
        }
        for _ in 0..trailing {
            p.trailing.push(rng.range(1, 5));
        }
        // Grow one axis so that the block side holds about `target` elements.
        let size = |p: &Padded| {
            p.batch * p.axes.iter().map(|a| a.0 * a.1).product::<usize>() * p.trailing.iter().product::<usize>()
        };
        let which = rng.below(1 + m + trailing);
        let rest = size(&p);
        let f = grow(target, rest);
        if which == 0 {
            p.batch *= f;
        } else if which <= m {
            let a = &mut p.axes[which - 1];
            a.1 *= f;
        } else {
            p.trailing[which - 1 - m] *= f;
        }
        p
    }

    fn blocks(&self) -> Vec<usize> {
        self.axes.iter().map(|a| a.0).collect()
    }

    fn pads(&self) -> Vec<[usize; 2]> {
        self.axes.iter().map(|a| [a.2, a.3]).collect()
    }

    /// The space side's shape: `[batch, extents.., trailing..]`.
    fn space_shape(&self) -> Vec<usize> {
        let mut s = vec![self.batch];
        s.extend(self.axes.iter().map(|&(b, o, pb, pe)| b * o - pb - pe));
        s.extend(&self.trailing);
        s
    }

    /// The block side's shape: `[batch * Πb, outers.., trailing..]`.
    fn block_shape(&self) -> Vec<usize> {
        let mut s = vec![self.batch * self.blocks().iter().product::<usize>()];
        s.extend(self.axes.iter().map(|a| a.1));
        s.extend(&self.trailing);
        s
    }
}

/// The case of a batch operator: forward from the space side, or backward
/// with the pads as crops.
fn batch_case(what: String, p: &Padded, elem: usize, backward: bool, plan: Plan) -> Case {
    let (blocks, pads) = (p.blocks(), p.pads());
    let reference: Reference = if backward {
        let shape = p.block_shape();
        Box::new(move |x| ref_batch_to_space(x, &shape, elem, &blocks, &pads).0)
    } else {
        let shape = p.space_shape();
        Box::new(move |x| ref_space_to_batch(x, &shape, elem, &blocks, &pads).0)
    };
    Case { what, plan, elem, reference }
}

fn tf_batch(rng: &mut Rng, elem: usize, target: usize, backward: bool) -> Case {
    let (m, trailing) = (rng.range(1, 3), rng.range(0, 2));
    let p = Padded::random(rng, m, trailing, target, 8);
    let (b, pads) = (as_i64(&p.blocks()), p.pads().iter().map(|&[s, e]| [s as i64, e as i64]).collect::<Vec<_>>());
    let plan = if backward {
        tf::BatchToSpaceNd::new(&b, &pads).plan(&p.block_shape())
    } else {
        tf::SpaceToBatchNd::new(&b, &pads).plan(&p.space_shape())
    };
    let what = format!("tf {} b {b:?} pads {pads:?}", if backward { "b2s-nd" } else { "s2b-nd" });
    batch_case(what, &p, elem, backward, plan.unwrap())
}

fn tf_batch_v1(rng: &mut Rng, elem: usize, target: usize, backward: bool) -> Case {
    let b = rng.range(2, 6);
    // Grown with blocks of 1, then blocked by `b` on both axes.
    let mut p = Padded::random(rng, 2, 1, (target / (b * b)).max(1), 1);
    for a in &mut p.axes {
        let padded = b * a.1;
        a.0 = b;
        a.2 = a.2.min(padded);
        a.3 = a.3.min(padded - a.2);
    }
    let pads = [[p.axes[0].2 as i64, p.axes[0].3 as i64], [p.axes[1].2 as i64, p.axes[1].3 as i64]];
    let plan = if backward {
        tf::BatchToSpace::new(b as i64, pads).plan(&p.block_shape())
    } else {
        tf::SpaceToBatch::new(b as i64, pads).plan(&p.space_shape())
    };
    let what = format!("tf {} v1 b {b} pads {pads:?}", if backward { "b2s" } else { "s2b" });
    batch_case(what, &p, elem, backward, plan.unwrap())
}

fn ov_batch(rng: &mut Rng, elem: usize, target: usize, backward: bool) -> Case {
    let m = rng.range(1, 4);
    let p = Padded::random(rng, m, 0, target, 8);
    let mut block = vec![1i64];
    block.extend(as_i64(&p.blocks()));
    let begin: Vec<i64> = [0].into_iter().chain(p.axes.iter().map(|a| a.2 as i64)).collect();
    let end: Vec<i64> = [0].into_iter().chain(p.axes.iter().map(|a| a.3 as i64)).collect();
    let plan = if backward {
        openvino::BatchToSpace::new(&block, &begin, &end).plan(&p.block_shape())
    } else {
        openvino::SpaceToBatch::new(&block, &begin, &end).plan(&p.space_shape())
    };
    let what = format!("ov {} b {block:?} {begin:?} {end:?}", if backward { "b2s" } else { "s2b" });
    batch_case(what, &p, elem, backward, plan.unwrap())
}

/// A depth geometry: `lead` leading dims, `c` channels on the space side,
/// `k` spatial outer counts, block `b`; one count grown to `target`.
struct Depth {
    lead: Vec<usize>,
    c: usize,
    outer: Vec<usize>,
    b: usize,
}

impl Depth {
    fn random(rng: &mut Rng, lead: usize, k: usize, blocks: (usize, usize), target: usize) -> Depth {
        let mut d = Depth {
            lead: (0..lead).map(|_| rng.range(1, 3)).collect(),
            c: rng.range(1, 4),
            outer: (0..k).map(|_| rng.range(1, 4)).collect(),
            b: rng.range(blocks.0, blocks.1),
        };
        let size =
            |d: &Depth| d.lead.iter().product::<usize>() * d.c * d.outer.iter().product::<usize>() * d.b.pow(k as u32);
        let f = grow(target, size(&d));
        match rng.below(lead + 1 + k) {
            i if i < lead => d.lead[i] *= f,
            i if i == lead => d.c *= f,
            i => d.outer[i - lead - 1] *= f,
        }
        d
    }

    fn bk(&self) -> usize {
        self.b.pow(self.outer.len() as u32)
    }

    /// Channels first: `[lead.., c, outer * b..]`.
    fn space_cf(&self) -> Vec<usize> {
        let mut s = self.lead.clone();
        s.push(self.c);
        s.extend(self.outer.iter().map(|o| o * self.b));
        s
    }

    /// Channels first: `[lead.., c * b^k, outer..]`.
    fn block_cf(&self) -> Vec<usize> {
        let mut s = self.lead.clone();
        s.push(self.c * self.bk());
        s.extend(&self.outer);
        s
    }
}

/// The case of a channels-first depth operator (`blocks_first` or depth
/// first), forward (space-to-depth) or backward, on `unit`-element groups
/// of `elem` bytes each (NCHW_VECT_C's groups of 4).
fn depth_case(
    what: String,
    d: &Depth,
    elem: usize,
    unit: usize,
    blocks_first: bool,
    backward: bool,
    plan: Plan,
) -> Case {
    let block = d.block_cf();
    let (lead, b) = (d.lead.len(), d.b);
    let e = elem * unit;
    let d2s = move |x: &[u8], e: usize| ref_depth_to_space_cf(x, &block, e, lead, b, blocks_first).0;
    let reference: Reference = if backward {
        Box::new(move |x| d2s(x, e))
    } else {
        Box::new(move |x| invert(x, x.len() / e, e, |labels| d2s(labels, 8)))
    };
    Case { what, plan, elem, reference }
}

fn tf_depth(rng: &mut Rng, elem: usize, target: usize, backward: bool) -> Case {
    let format = rng.pick(&[DataFormat::Nhwc, DataFormat::Nchw, DataFormat::NchwVectC]);
    let vect = format == DataFormat::NchwVectC;
    let d = Depth::random(rng, 1, 2, (2, 8), target / if vect { 4 } else { 1 });
    let b = d.b;
    let op_s2d = tf::SpaceToDepth::new(b as i64, format);
    let op_d2s = tf::DepthToSpace::new(b as i64, format);
    let what = format!("tf {} {format:?} b {b}", if backward { "d2s" } else { "s2d" });
    if format == DataFormat::Nhwc {
        let (n, h, w, c) = (d.lead[0], d.outer[0], d.outer[1], d.c);
        let space = vec![n, h * b, w * b, c];
        let block = vec![n, h, w, c * b * b];
        let plan = if backward { op_d2s.plan(&block) } else { op_s2d.plan(&space) }.unwrap();
        let d2s = move |x: &[u8], e: usize| ref_depth_to_space_nhwc(x, &block, e, b).0;
        let reference: Reference = if backward {
            Box::new(move |x| d2s(x, elem))
        } else {
            Box::new(move |x| invert(x, x.len() / elem, elem, |labels| d2s(labels, 8)))
        };
        return Case { what, plan, elem, reference };
    }
    let with_vect = |mut s: Vec<usize>| {
        if vect {
            s.push(4);
        }
        s
    };
    let plan = if backward { op_d2s.plan(&with_vect(d.block_cf())) } else { op_s2d.plan(&with_vect(d.space_cf())) };
    depth_case(what, &d, elem, if vect { 4 } else { 1 }, true, backward, plan.unwrap())
}

fn ov_depth(rng: &mut Rng, elem: usize, target: usize, backward: bool) -> Case {
    let k = rng.range(1, 3);
    let d = Depth::random(rng, 1, k, (1, 6), target);
    let blocks_first = rng.chance(50);
    let mode = if blocks_first { openvino::Mode::BlocksFirst } else { openvino::Mode::DepthFirst };
    let plan = if backward {
        openvino::DepthToSpace::new(d.b as i64, mode).plan(&d.block_cf())
    } else {
        openvino::SpaceToDepth::new(d.b as i64, mode).plan(&d.space_cf())
    };
    let what = format!("ov {} {mode:?} b {} k {k}", if backward { "d2s" } else { "s2d" }, d.b);
    depth_case(what, &d, elem, 1, blocks_first, backward, plan.unwrap())
}

fn onnx_depth(rng: &mut Rng, elem: usize, target: usize, backward: bool) -> Case {
    let d = Depth::random(rng, 1, 2, (1, 8), target);
    // SpaceToDepth is DCR's inverse; CRD has only depth-to-space.
    let crd = backward && rng.chance(50);
    let plan = if crd {
        onnx::DepthToSpace::crd(d.b as i64).plan(&d.block_cf())
    } else if backward {
        onnx::DepthToSpace::dcr(d.b as i64).plan(&d.block_cf())
    } else {
        onnx::SpaceToDepth::new(d.b as i64).plan(&d.space_cf())
    };
    let what = format!(
        "onnx {} b {}",
        if crd {
            "d2s CRD"
        } else if backward {
            "d2s DCR"
        } else {
            "s2d"
        },
        d.b
    );
    depth_case(what, &d, elem, 1, !crd, backward, plan.unwrap())
}

fn torch_depth(rng: &mut Rng, elem: usize, target: usize, backward: bool) -> Case {
    let lead = rng.range(0, 3);
    let d = Depth::random(rng, lead, 2, (1, 8), target);
    let plan = if backward {
        torch::PixelShuffle::new(d.b as i64).plan(&d.block_cf())
    } else {
        torch::PixelUnshuffle::new(d.b as i64).plan(&d.space_cf())
    };
    let what = format!("torch {} b {} lead {lead}", if backward { "pixel_shuffle" } else { "pixel_unshuffle" }, d.b);
    depth_case(what, &d, elem, 1, false, backward, plan.unwrap())
}

/// A numpy transpose of rank 2 to 6: a random permutation of a shape grown
/// to `target` elements, a few axes long (the blocked transpose's sides).
fn np_transpose(rng: &mut Rng, elem: usize, target: usize) -> Case {
    let rank = rng.range(2, 6);
    let mut axes: Vec<usize> = (0..rank).collect();
    for i in (1..rank).rev() {
        axes.swap(i, rng.below(i + 1));
    }
    let mut shape = vec![1usize; rank];
    while shape.iter().product::<usize>() * 2 <= target {
        let a = rng.below(rank);
        shape[a] *= rng.range(2, 7);
        if shape.iter().product::<usize>() > target {
            shape[a] = (shape[a] / 2).max(1);
            break;
        }
    }
    let plan = numpy::Transpose::new(&as_i64(&axes)).plan(&shape).unwrap();
    let what = format!("numpy transpose {shape:?} axes {axes:?}");
    let out_shape: Vec<usize> = axes.iter().map(|&a| shape[a]).collect();
    let reference: Reference = Box::new(move |x| {
        reference(x, &shape, &out_shape, elem, |o| {
            let mut i = vec![0; o.len()];
            for (k, &a) in axes.iter().enumerate() {
                i[a] = o[k];
            }
            Some(i)
        })
    });
    Case { what, plan, elem, reference }
}

/// A source layout: strides in elements for `shape`, and a name.
fn layout(rng: &mut Rng, shape: &[usize]) -> (Vec<isize>, &'static str) {
    let n = shape.len();
    // Row-major strides of `shape` taken in `order` (outermost first), with
    // `gap` elements after each axis while the span stays within 4 times
    // the dense size (gaps after many short axes would multiply it: six
    // axes of one element, three times each).
    let packed = |order: &[usize], gap: isize| {
        let mut strides = vec![0isize; n];
        let (mut acc, mut dense) = (1isize, 1isize);
        for &a in order.iter().rev() {
            strides[a] = acc;
            let d = shape[a].max(1) as isize;
            dense *= d;
            acc *= if acc * (d + gap) <= 4 * dense { d + gap } else { d };
        }
        strides
    };
    let c: Vec<usize> = (0..n).collect();
    match rng.below(10) {
        0 => (packed(&c.iter().rev().copied().collect::<Vec<_>>(), 0), "fortran"),
        1 => {
            let mut order = c.clone();
            for i in (1..n).rev() {
                order.swap(i, rng.below(i + 1));
            }
            (packed(&order, 0), "permuted")
        }
        2 => {
            let mut s = packed(&c, 0);
            for v in &mut s {
                if rng.chance(50) {
                    *v = -*v;
                }
            }
            (s, "reversed")
        }
        3 => (packed(&c, rng.range(1, 3) as isize), "gapped"),
        4 if n > 0 => {
            let mut s = packed(&c, 0);
            s[rng.below(n)] = 0;
            (s, "broadcast")
        }
        _ => (packed(&c, 0), "c"),
    }
}

fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut v = Vec::with_capacity(len);
    while v.len() < len {
        v.extend_from_slice(&rng.next().to_le_bytes());
    }
    v.truncate(len);
    v
}

/// Bytes of guard around an output.
const GUARD: usize = 64;
const SENTINEL: u8 = 0xA5;

/// Runs a random case: a random layout, kernels, streaming, threads and
/// call, against the reference. Returns what it ran, or the mismatch.
pub fn run_one(rng: &mut Rng, budget: Budget) -> Result<String, String> {
    let case = generate(rng, budget);
    let kernels = rng.pick(&[Kernels::Auto, Kernels::Avx512, Kernels::Avx2, Kernels::Baseline, Kernels::Portable]);
    let streaming = rng.pick(&[Streaming::Auto, Streaming::Always, Streaming::Never]);
    let threads =
        rng.pick(&[Parallelism::Sequential, Parallelism::Threads(2), Parallelism::Threads(3), Parallelism::Auto]);
    let plan = case.plan.clone().with_kernels(kernels).with_streaming(streaming).with_parallelism(threads);
    let elem = case.elem;
    let shape = plan.input_shape().to_vec();
    let (strides, name) = layout(rng, &shape);
    let span = strided_span(&shape, &strides, elem);
    let buf = bytes(span, rng.next());
    let dense = gather_strided(&buf, &shape, &strides, elem);
    let want = (case.reference)(&dense);
    let what = format!(
        "{} {shape:?} elem {elem} {name} {strides:?} {kernels:?} {streaming:?} {threads:?} -> {} bytes",
        case.what,
        want.len()
    );
    if want.len() != plan.output_len() * elem {
        return Err(format!("{what}: the reference has {} bytes, the plan {}", want.len(), plan.output_len() * elem));
    }
    let edge = if rng.chance(50) { Edge::End } else { Edge::Start };
    let input = Guarded::new(&buf, edge);
    // The output between guards of sentinel bytes.
    let mut out = vec![MaybeUninit::new(SENTINEL); want.len() + 2 * GUARD];
    let body = &mut out[GUARD..GUARD + want.len()];
    let call = rng.below(3);
    let result = match call {
        0 if name == "c" => plan.run_bytes_uninit(input.bytes(), elem, body),
        1 => {
            let mut last = (0, 0);
            let r = plan
                .run_bytes_strided_uninit_with_progress(input.bytes(), &strides, elem, body, &mut |d, t| last = (d, t));
            let total = want.len() as u64;
            if r.is_ok() && total > 0 && last != (total, total) {
                return Err(format!("{what}: progress ended at {last:?}"));
            }
            r
        }
        _ => plan.run_bytes_strided_uninit(input.bytes(), &strides, elem, body),
    };
    result.map_err(|e| format!("{what}: {e}"))?;
    // SAFETY: every byte was initialised (sentinels, then the run's output).
    let got: Vec<u8> = out.iter().map(|b| unsafe { b.assume_init() }).collect();
    if got[..GUARD].iter().chain(&got[GUARD + want.len()..]).any(|&b| b != SENTINEL) {
        return Err(format!("{what}: wrote outside the output"));
    }
    if got[GUARD..GUARD + want.len()] != want[..] {
        let first = got[GUARD..].iter().zip(&want).position(|(a, b)| a != b).unwrap_or(0);
        return Err(format!("{what}: output differs from byte {first}"));
    }
    // A destination view too, for the element sizes a typed run takes (the
    // buffers above freed first: a case may hold tens of MiB).
    drop((got, out, input, buf));
    if rng.chance(30) {
        destination_view(rng, &plan, elem, &dense, &want).map_err(|e| format!("{what}: {e}"))?;
    }
    Ok(what)
}

/// Runs `plan` from the dense input into a random view of a larger buffer
/// (permuted, reversed or gapped), through [`Plan::run_strided`] with an
/// element type of `elem` bytes; checks the view and that nothing outside
/// it was written.
fn destination_view(rng: &mut Rng, plan: &Plan, elem: usize, dense: &[u8], want: &[u8]) -> Result<(), String> {
    macro_rules! typed {
        ($($n:literal)*) => {
            match elem {
                $($n => view::<[u8; $n]>(rng, plan, dense, want),)*
                _ => Ok(()),
            }
        };
    }
    typed!(1 2 3 4 5 6 7 8 12 16 24 32)
}

fn view<T: Copy + Default>(rng: &mut Rng, plan: &Plan, dense: &[u8], want: &[u8]) -> Result<(), String> {
    let elem = std::mem::size_of::<T>();
    let shape = plan.output_shape().to_vec();
    let (mut strides, name) = layout(rng, &shape);
    if name == "broadcast" {
        // Distinct output indices must address distinct elements.
        strides = layout(rng, &shape).0;
        if strides.contains(&0) && shape.iter().product::<usize>() > 1 {
            return Ok(());
        }
    }
    let span = strided_span(&shape, &strides, elem).max(elem);
    let base = strided_base(&shape, &strides, elem);
    let mut buf: Vec<T> = vec![T::default(); span / elem];
    // SAFETY: a `T` is `elem` plain bytes.
    let raw = unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<u8>(), span) };
    raw.fill(SENTINEL);
    let input: Vec<T> = dense
        .chunks(elem)
        .map(|c| {
            let mut t = T::default();
            // SAFETY: `c` holds `elem` bytes, `t` as many.
            unsafe { std::ptr::copy_nonoverlapping(c.as_ptr(), (&mut t as *mut T).cast::<u8>(), elem) };
            t
        })
        .collect();
    let in_strides: Vec<isize> = {
        let mut s = vec![0isize; plan.input_shape().len()];
        let mut acc = 1isize;
        for (v, &d) in s.iter_mut().zip(plan.input_shape()).rev() {
            *v = acc;
            acc *= d as isize;
        }
        s
    };
    // SAFETY: the input is the dense row-major input; every in-range
    // output index lands inside `buf` (its span), distinct indices on
    // distinct elements (no zero stride but on single-element views).
    unsafe {
        let out = buf.as_mut_ptr().cast::<u8>().add(base).cast::<T>();
        plan.run_strided(input.as_ptr(), &in_strides, out, &strides).map_err(|e| e.to_string())?;
    }
    // SAFETY: as above.
    let raw = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), span) };
    if shape.contains(&0) {
        return Ok(());
    }
    let got = gather_strided(raw, &shape, &strides, elem);
    if got != want {
        return Err(format!("destination view {name} {strides:?} differs"));
    }
    // Every byte outside the view's elements keeps its sentinel.
    let mut touched = vec![false; span];
    let n: usize = shape.iter().product();
    for f in 0..n {
        let idx = unravel(f, &shape);
        let off =
            base as isize + idx.iter().zip(&strides).map(|(&i, &s)| i as isize * s).sum::<isize>() * elem as isize;
        touched[off as usize..off as usize + elem].fill(true);
    }
    if raw.iter().zip(&touched).any(|(&b, &t)| !t && b != SENTINEL) {
        return Err(format!("destination view {name} {strides:?}: wrote outside the view"));
    }
    Ok(())
}
