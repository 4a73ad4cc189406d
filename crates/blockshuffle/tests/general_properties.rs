//! Property tests of the general front-ends: numpy transpose and einops
//! rearrange against naive index-mapping references written here from the
//! operators' definitions (the rearrangement is generated as a structure,
//! its pattern written from it: the reference never sees the library's
//! parser), over element sizes, kernels, streaming, threads, and strided
//! inputs (byte strides, ndarray views reversed and transposed, strided
//! outputs).

use std::mem::MaybeUninit;

use blockshuffle::{einops, numpy, Kernels, Operator, OperatorNdarray, Parallelism, Plan, Streaming};
use ndarray::{ArrayD, Axis, IxDyn};
use proptest::prelude::*;

mod common;
use common::reference::{ravel, reference, unravel};
use common::{bytes, run_both};

fn settings() -> impl Strategy<Value = (usize, Streaming, Kernels, Parallelism)> {
    (
        prop::sample::select(vec![1usize, 2, 3, 4, 8, 16]),
        prop::sample::select(vec![Streaming::Auto, Streaming::Always, Streaming::Never]),
        prop::sample::select(vec![Kernels::Auto, Kernels::Avx2, Kernels::Portable]),
        prop::sample::select(vec![Parallelism::Sequential, Parallelism::Threads(2), Parallelism::Threads(3)]),
    )
}

/// A rearrangement as a structure: `sizes[i]` is elementary axis `i`'s
/// length (the named ones first, then the ellipsis' axes); the left side's
/// axes are groups of elementary axes (in order), the right side's any
/// grouping of a permutation of them.
#[derive(Debug, Clone)]
struct Rearrangement {
    sizes: Vec<usize>,
    names: usize,
    left: Vec<Side>,
    right: Vec<Side>,
    /// Names whose length is given (at least all but one of each left group).
    given: Vec<bool>,
}

/// One axis of a side.
#[derive(Debug, Clone)]
enum Side {
    /// A composition of elementary axes (empty: a unit axis, `unit` picks how it is written).
    Group { axes: Vec<usize>, unit: bool },
    /// `...` standing alone (the ellipsis' axes, each its own axis).
    Ellipsis,
}

const NAMES: [&str; 8] = ["b", "h", "w", "c", "p1", "p2", "h_out", "k"];

impl Rearrangement {
    fn ellipsis_axes(&self) -> std::ops::Range<usize> {
        self.names..self.sizes.len()
    }

    fn write(&self, side: &[Side]) -> String {
        let ell = self.ellipsis_axes();
        let word = |i: usize| if ell.contains(&i) { "...".to_string() } else { NAMES[i].to_string() };
        side.iter()
            .map(|a| match a {
                Side::Ellipsis => "...".to_string(),
                Side::Group { axes, unit } if axes.is_empty() => (if *unit { "1" } else { "()" }).to_string(),
                Side::Group { axes, .. } => {
                    let mut words: Vec<String> = Vec::new();
                    for &i in axes {
                        // The ellipsis' axes go in together, written once.
                        if !(ell.contains(&i) && words.last().is_some_and(|w| w == "...")) {
                            words.push(word(i));
                        }
                    }
                    if axes.len() == 1 && !ell.contains(&axes[0]) {
                        words.remove(0)
                    } else {
                        format!("({})", words.join(" "))
                    }
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn pattern(&self) -> String {
        format!("{} -> {}", self.write(&self.left), self.write(&self.right))
    }

    fn given_sizes(&self) -> Vec<(&'static str, usize)> {
        (0..self.names).filter(|&i| self.given[i]).map(|i| (NAMES[i], self.sizes[i])).collect()
    }

    /// A side's axes, each as the elementary axes it is made of.
    fn axes(&self, side: &[Side]) -> Vec<Vec<usize>> {
        side.iter()
            .flat_map(|a| match a {
                Side::Ellipsis => self.ellipsis_axes().map(|i| vec![i]).collect(),
                Side::Group { axes, .. } => vec![axes.clone()],
            })
            .collect()
    }

    fn shape(&self, side: &[Side]) -> Vec<usize> {
        self.axes(side).iter().map(|g| g.iter().map(|&i| self.sizes[i]).product()).collect()
    }

    /// The reference output of row-major `input` (`elem`-byte elements):
    /// each output index mapped back through the elementary axes.
    fn reference(&self, input: &[u8], elem: usize) -> Vec<u8> {
        let (left, right) = (self.axes(&self.left), self.axes(&self.right));
        let (in_shape, out_shape) = (self.shape(&self.left), self.shape(&self.right));
        let n: usize = out_shape.iter().product();
        let mut out = vec![0u8; n * elem];
        let mut value = vec![0usize; self.sizes.len()];
        for f in 0..n {
            for (group, &i) in right.iter().zip(&unravel(f, &out_shape)) {
                let sizes: Vec<usize> = group.iter().map(|&a| self.sizes[a]).collect();
                for (&a, v) in group.iter().zip(unravel(i, &sizes)) {
                    value[a] = v;
                }
            }
            let index: Vec<usize> = left
                .iter()
                .map(|group| {
                    let sizes: Vec<usize> = group.iter().map(|&a| self.sizes[a]).collect();
                    ravel(&group.iter().map(|&a| value[a]).collect::<Vec<_>>(), &sizes)
                })
                .collect();
            let s = ravel(&index, &in_shape) * elem;
            out[f * elem..(f + 1) * elem].copy_from_slice(&input[s..s + elem]);
        }
        out
    }
}

/// Random rearrangements of up to 6 named axes and a 3-axis ellipsis.
fn rearrangement() -> impl Strategy<Value = Rearrangement> {
    (prop::collection::vec(0usize..=4, 0..=6), prop::collection::vec(1usize..=3, 0..=3), any::<bool>(), any::<u64>())
        .prop_map(|(named, ellipsis, with_ellipsis, seed)| {
            let mut rng = seed | 1;
            let mut next = |n: usize| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                (rng % n.max(1) as u64) as usize
            };
            let names = named.len();
            let mut sizes = named;
            let ell: Vec<usize> = if with_ellipsis { ellipsis } else { Vec::new() };
            sizes.extend(&ell);
            let ell_axes: Vec<usize> = (names..sizes.len()).collect();
            let unit = |next: &mut dyn FnMut(usize) -> usize| Side::Group { axes: vec![], unit: next(2) == 0 };
            // The left side: the names in order, cut into groups; maybe a
            // unit axis; the ellipsis somewhere between groups.
            let mut left = Vec::new();
            let mut at = 0;
            while at < names {
                let take = 1 + next(3).min(names - at - 1);
                left.push(Side::Group { axes: (at..at + take).collect(), unit: false });
                at += take;
            }
            if next(3) == 0 {
                let pos = next(left.len() + 1);
                left.insert(pos, unit(&mut next));
            }
            if with_ellipsis {
                let pos = next(left.len() + 1);
                left.insert(pos, Side::Ellipsis);
            }
            // The right side: the names shuffled, cut into groups; the
            // ellipsis alone or inside a group; maybe unit axes.
            let mut order: Vec<usize> = (0..names).collect();
            for i in (1..order.len()).rev() {
                order.swap(i, next(i + 1));
            }
            let mut right = Vec::new();
            let mut at = 0;
            while at < order.len() {
                let take = 1 + next(3).min(order.len() - at - 1);
                right.push(Side::Group { axes: order[at..at + take].to_vec(), unit: false });
                at += take;
            }
            if with_ellipsis {
                if next(2) == 0 || right.is_empty() || ell_axes.is_empty() {
                    let pos = next(right.len() + 1);
                    right.insert(pos, Side::Ellipsis);
                } else {
                    let g = next(right.len());
                    if let Side::Group { axes, .. } = &mut right[g] {
                        let pos = next(axes.len() + 1);
                        axes.splice(pos..pos, ell_axes.iter().copied());
                    }
                }
            }
            for _ in 0..next(3) {
                let pos = next(right.len() + 1);
                right.insert(pos, unit(&mut next));
            }
            // Every name given but at most one per left group (whose other
            // names' lengths are not 0: einops cannot divide by 0).
            let mut given = vec![true; names];
            for a in &left {
                if let Side::Group { axes, .. } = a {
                    if !axes.is_empty() && next(3) != 0 {
                        let omit = axes[next(axes.len())];
                        if axes.iter().all(|&i| i == omit || sizes[i] != 0) {
                            given[omit] = false;
                        }
                    }
                }
            }
            Rearrangement { sizes, names, left, right, given }
        })
}

fn configured(plan: Plan, streaming: Streaming, kernels: Kernels, parallelism: Parallelism) -> Plan {
    plan.with_streaming(streaming).with_kernels(kernels).with_parallelism(parallelism)
}

/// `plan` from a buffer with `input`'s elements at positive strides: each
/// axis spread by 1 or 2 and stored in a permuted order (Fortran order
/// among them).
fn run_strided_bytes(plan: &Plan, input: &[u8], elem: usize, spread: &[bool], stored: &[usize]) -> Vec<u8> {
    let shape = plan.input_shape();
    let rank = shape.len();
    // Stored dims: axis `stored[j]` is the j-th outermost, spread if asked.
    let dims: Vec<usize> = stored.iter().map(|&a| shape[a] * if spread[a] { 2 } else { 1 }).collect();
    let mut strides = vec![0isize; rank];
    let mut acc = 1isize;
    for j in (0..rank).rev() {
        let a = stored[j];
        strides[a] = acc * if spread[a] { 2 } else { 1 };
        acc *= dims[j] as isize;
    }
    let total: usize = dims.iter().product::<usize>().max(1);
    let mut buffer = vec![0xEEu8; total * elem];
    let n: usize = shape.iter().product();
    for f in 0..n {
        let idx = unravel(f, shape);
        let at: isize = idx.iter().zip(&strides).map(|(&i, &s)| i as isize * s).sum();
        let at = at as usize * elem;
        buffer[at..at + elem].copy_from_slice(&input[f * elem..(f + 1) * elem]);
    }
    let mut out = vec![MaybeUninit::<u8>::uninit(); plan.output_len() * elem];
    plan.run_bytes_strided_uninit(&buffer, &strides, elem, &mut out).unwrap();
    // SAFETY: the successful run initialised every output byte.
    out.into_iter().map(|b| unsafe { b.assume_init() }).collect()
}

/// `plan` run on the bytes of `input` into a line-aligned buffer and into
/// one `skew` bytes past a line; `check` gets each output and its offset.
fn run_into_aligned_and_skewed(plan: &Plan, input: &[u8], elem: usize, skew: usize, check: impl Fn(&[u8], usize)) {
    let n = plan.output_len() * elem;
    let mut buffer = vec![0u8; n + 128];
    let aligned = buffer.as_ptr().align_offset(64);
    for at in [aligned, aligned + skew] {
        let out = &mut buffer[at..at + n];
        plan.run_bytes_into(input, elem, out).unwrap();
        check(out, at);
    }
}

/// `op` on `shape` from a view stored with some axes reversed and the
/// axes' order reversed, into a view with its first axis reversed.
fn run_views(op: &impl Operator, shape: &[usize], flip: &[bool], transpose: bool) -> (Vec<u32>, Vec<u32>) {
    let n: usize = shape.iter().product();
    let values: Vec<u32> = (0..n as u32).map(|v| v.wrapping_mul(2654435761)).collect();
    let base = ArrayD::from_shape_vec(IxDyn(shape), values).unwrap();
    let mut stored = base.clone();
    for (d, &f) in flip.iter().enumerate().take(shape.len()) {
        if f {
            stored.invert_axis(Axis(d));
        }
    }
    let stored = if transpose {
        stored.reversed_axes().as_standard_layout().into_owned()
    } else {
        stored.as_standard_layout().into_owned()
    };
    let mut view = if transpose { stored.view().reversed_axes() } else { stored.view() };
    for (d, &f) in flip.iter().enumerate().take(shape.len()) {
        if f {
            view.invert_axis(Axis(d));
        }
    }
    assert_eq!(view, base.view());
    let got = op.apply_array(view.clone()).unwrap();
    let mut out = ArrayD::<u32>::zeros(got.raw_dim());
    let mut out_view = out.view_mut();
    if out_view.ndim() > 0 {
        out_view.invert_axis(Axis(0));
    }
    op.apply_array_into(view, out_view).unwrap();
    if out.ndim() > 0 {
        out.invert_axis(Axis(0));
    }
    let want = op.apply(base.as_slice().unwrap(), shape).unwrap().0;
    assert_eq!(got.iter().copied().collect::<Vec<_>>(), want);
    (want, out.iter().copied().collect())
}

proptest! {

    #[test]
    fn transpose_matches_reference(
        shape in prop::collection::vec(0usize..=4, 0..=6),
        seed in any::<u64>(),
        negative in prop::collection::vec(any::<bool>(), 6),
        (elem, streaming, kernels, parallelism) in settings(),
        spread in prop::collection::vec(any::<bool>(), 6),
        fortran in any::<bool>(),
    ) {
        let rank = shape.len();
        let mut perm: Vec<usize> = (0..rank).collect();
        let mut rng = seed | 1;
        for i in (1..rank).rev() {
            rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
            perm.swap(i, (rng % (i as u64 + 1)) as usize);
        }
        let axes: Vec<i64> = perm.iter().zip(&negative).map(|(&p, &neg)| if neg { p as i64 - rank as i64 } else { p as i64 }).collect();
        let plan = configured(numpy::Transpose::new(&axes).plan(&shape).unwrap(), streaming, kernels, parallelism);
        let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
        prop_assert_eq!(plan.output_shape(), &out_shape[..]);
        let n: usize = shape.iter().product();
        let input = bytes(n * elem, seed as u8);
        let mut want = vec![0u8; n * elem];
        for f in 0..n {
            let o = unravel(f, &out_shape);
            let mut idx = vec![0; rank];
            for (i, &p) in perm.iter().enumerate() { idx[p] = o[i]; }
            let s = ravel(&idx, &shape) * elem;
            want[f * elem..(f + 1) * elem].copy_from_slice(&input[s..s + elem]);
        }
        prop_assert_eq!(&run_both(&plan, &input, elem), &want);
        let stored: Vec<usize> = if fortran { (0..rank).rev().collect() } else { (0..rank).collect() };
        prop_assert_eq!(&run_strided_bytes(&plan, &input, elem, &spread, &stored), &want);
        // Reversed (no axes) is the transpose by the reversed axes.
        let reversed: Vec<i64> = (0..rank as i64).rev().collect();
        prop_assert_eq!(
            numpy::Transpose::reversed().plan(&shape).unwrap(),
            numpy::Transpose::new(&reversed).plan(&shape).unwrap()
        );
    }

    #[test]
    fn rearrange_matches_reference(
        r in rearrangement(),
        (elem, streaming, kernels, parallelism) in settings(),
        spread in prop::collection::vec(any::<bool>(), 12),
        fortran in any::<bool>(),
        flip in prop::collection::vec(any::<bool>(), 12),
        transpose in any::<bool>(),
    ) {
        let pattern = r.pattern();
        let op = einops::Rearrange::new(&pattern, &r.given_sizes()).unwrap();
        let shape = r.shape(&r.left);
        let plan = configured(op.plan(&shape).unwrap(), streaming, kernels, parallelism);
        prop_assert_eq!(plan.output_shape(), &r.shape(&r.right)[..], "{}", pattern);
        let inferred = op.output_shape(&shape).unwrap();
        prop_assert_eq!(inferred.as_slice(), plan.output_shape());
        let n: usize = shape.iter().product();
        let input = bytes(n * elem, n as u8);
        let want = r.reference(&input, elem);
        prop_assert_eq!(&run_both(&plan, &input, elem), &want, "{}", pattern);
        let rank = shape.len();
        let stored: Vec<usize> = if fortran { (0..rank).rev().collect() } else { (0..rank).collect() };
        prop_assert_eq!(&run_strided_bytes(&plan, &input, elem, &spread, &stored), &want, "{}", pattern);
        let (contiguous, strided_out) = run_views(&op, &shape, &flip, transpose);
        prop_assert_eq!(contiguous, strided_out, "{}", pattern);
        // The inverse plan undoes it.
        let back = run_both(&plan.inverse(), &want, elem);
        prop_assert_eq!(back, input, "{}", pattern);
    }

    #[test]
    fn transpose_views(
        shape in prop::collection::vec(1usize..=4, 1..=5),
        flip in prop::collection::vec(any::<bool>(), 5),
        transpose in any::<bool>(),
    ) {
        let (a, b) = run_views(&numpy::Transpose::reversed(), &shape, &flip, transpose);
        prop_assert_eq!(a, b);
    }
}

#[test]
fn the_generator_writes_what_it_means() {
    let r = Rearrangement {
        sizes: vec![2, 3, 4, 5],
        names: 3,
        left: vec![
            Side::Group { axes: vec![0, 1], unit: false },
            Side::Group { axes: vec![], unit: true },
            Side::Ellipsis,
            Side::Group { axes: vec![2], unit: false },
        ],
        right: vec![Side::Group { axes: vec![2, 3, 0], unit: false }, Side::Group { axes: vec![1], unit: false }],
        given: vec![true, false, false],
    };
    assert_eq!(r.pattern(), "(b h) 1 ... w -> (w ... b) h");
    assert_eq!((r.shape(&r.left), r.shape(&r.right)), (vec![6, 1, 5, 4], vec![40, 3]));
    let op = einops::Rearrange::new(&r.pattern(), &r.given_sizes()).unwrap();
    let input: Vec<u8> = (0..120).collect();
    assert_eq!(run_both(&op.plan(&[6, 1, 5, 4]).unwrap(), &input, 1), r.reference(&input, 1));
}

/// A deinterleaving tile of 16-byte units from a Fortran-order source
/// (its rows' units apart in the source), streamed: the carried kernel,
/// which reads whole source rows, must not take it (it did below
/// AVX512-VBMI, and moved the wrong units), for a transpose or a
/// framework operator alike.
#[test]
fn strided_sources_of_streamed_tiles() {
    for shape in [[2usize, 2, 4], [3, 4, 8], [2, 4, 16]] {
        for axes in [[0i64, 1, 2], [0, 2, 1], [1, 0, 2], [2, 1, 0]] {
            for kernels in [Kernels::Auto, Kernels::Avx512, Kernels::Avx2, Kernels::Baseline, Kernels::Portable] {
                for elem in [1, 4, 8, 16] {
                    let transpose = numpy::Transpose::new(&axes).plan(&shape).unwrap();
                    let identity = blockshuffle::tf::SpaceToBatchNd::new(&[1], &[[0, 0]]).plan(&shape).unwrap();
                    for plan in [transpose, identity] {
                        let plan = plan.with_streaming(Streaming::Always).with_kernels(kernels);
                        let input = bytes(shape.iter().product::<usize>() * elem, 3);
                        let want = run_both(&plan, &input, elem);
                        let got = run_strided_bytes(&plan, &input, elem, &[false; 3], &[2, 1, 0]);
                        assert!(got == want, "{} {shape:?} {axes:?} {kernels:?} {elem}", plan.op());
                    }
                }
            }
        }
    }
}

/// Streamed transposes that keep a long last axis, with more destination
/// streams (20, the inner of the source's two outer axes) than the line
/// writers hold: units of whole 16-byte vectors from 4 KiB stream one at
/// a time (`plan::rules::streams_units`); from 512 bytes, written apart
/// so, and units from 256 bytes that are not whole vectors, read apart
/// through the line writers (`plan::rules::reads_units_apart`); shorter
/// ones store through the cache. Units on both sides of those limits,
/// every kernel set, one thread and three, into a line-aligned buffer and
/// one 16 and 8 bytes past it, against the naive reference.
#[test]
fn long_units_stream_one_at_a_time() {
    let units = [(1, 496), (1, 512), (1, 520), (1, 528), (8, 80), (2, 1000), (1, 4080), (1, 4096), (1, 4104)];
    for (elem, last) in units {
        let shape = [24usize, 20, last];
        let input = bytes(shape.iter().product::<usize>() * elem, 5);
        let unit = last * elem;
        let want = reference(&input, &shape, &[shape[1], shape[0], last], elem, |o| Some(vec![o[1], o[0], o[2]]));
        for kernels in [Kernels::Auto, Kernels::Avx2, Kernels::Portable] {
            for threads in [Parallelism::Sequential, Parallelism::Threads(3)] {
                let plan = numpy::Transpose::new(&[1, 0, 2]).plan(&shape).unwrap();
                let plan = plan.with_streaming(Streaming::Always).with_kernels(kernels).with_parallelism(threads);
                for skew in [16, 8] {
                    run_into_aligned_and_skewed(&plan, &input, elem, skew, |out, at| {
                        assert!(out == &want[..], "{unit} {kernels:?} {threads:?} at {at}");
                    });
                }
            }
        }
    }
}

/// Transposes of pixels (3-byte units: three uint8 channels; 6-byte: three
/// float16), whose matrices go in AVX2's packed squares where both sides
/// are more than two squares (33 and 17 units) and the kernels are AVX2's:
/// sides on both sides of that and of a strip (2,048 bytes of the source
/// rows), every kernel set, into a line-aligned buffer and one 8 bytes
/// past it, against the naive reference.
#[test]
fn pixel_transposes_in_packed_squares() {
    for (elem, sides) in [(1, [(32, 33), (33, 700), (690, 40)]), (2, [(16, 17), (17, 350), (345, 20)])] {
        for (h, w) in sides {
            let shape = [h, w, 3];
            let input = bytes(h * w * 3 * elem, 9);
            let want = reference(&input, &shape, &[w, h, 3], elem, |o| Some(vec![o[1], o[0], o[2]]));
            for kernels in [Kernels::Auto, Kernels::Avx2, Kernels::Baseline, Kernels::Portable] {
                let plan = numpy::Transpose::new(&[1, 0, 2]).plan(&shape).unwrap().with_kernels(kernels);
                run_into_aligned_and_skewed(&plan, &input, elem, 8, |out, at| {
                    assert!(out == &want[..], "{h} x {w} x 3 of {elem}-byte elements {kernels:?} at {at}");
                });
            }
        }
    }
}

/// Transposes whose tiles are long on both sides and large (at least
/// 512 KiB) are copied in square blocks (`kernels::tile_block`), streamed
/// where the destination rows are whole lines: every unit size, kernel set
/// and streaming setting against a direct transpose, into a line-aligned
/// buffer and a misaligned one, with sides that are not multiples of the
/// block (and one that is).
#[test]
fn long_tiles_copied_in_blocks() {
    for elem in [1, 2, 3, 4, 8, 16, 24] {
        // Sides just past what makes the tile 512 KiB.
        let side = ((512 << 10) as f64 / elem as f64).sqrt() as usize + 3;
        let cases: [(Vec<usize>, &[i64]); 3] = [
            (vec![side, side + 5], &[1, 0]),
            (vec![2, side + 64 - side % 64, side], &[0, 2, 1]),
            (vec![side + 1, side], &[1, 0]),
        ];
        for (shape, axes) in cases {
            let n: usize = shape.iter().product();
            let input = bytes(n * elem, elem as u8);
            // The last two axes swapped, directly.
            let (a, r, c) = if shape.len() == 3 { (shape[0], shape[1], shape[2]) } else { (1, shape[0], shape[1]) };
            let mut want = vec![0u8; n * elem];
            for k in 0..a {
                for i in 0..r {
                    for j in 0..c {
                        let (s, d) = (((k * r + i) * c + j) * elem, ((k * c + j) * r + i) * elem);
                        want[d..d + elem].copy_from_slice(&input[s..s + elem]);
                    }
                }
            }
            for streaming in [Streaming::Always, Streaming::Never] {
                for kernels in [Kernels::Auto, Kernels::Avx2, Kernels::Portable] {
                    let plan = numpy::Transpose::new(axes).plan(&shape).unwrap();
                    let plan = plan.with_streaming(streaming).with_kernels(kernels);
                    run_into_aligned_and_skewed(&plan, &input, elem, 16, |out, at| {
                        assert!(out == &want[..], "{shape:?} {axes:?} {elem} {streaming:?} {kernels:?} at {at}");
                    });
                }
            }
        }
    }
}

/// Small destination blocks gathered from a few source rows by one byte
/// permute (`kernels::gather`): einops' `b (h p1) (w p2) c -> b h w (c p2
/// p1)` and `b c (h p1) (w p2) -> (b h w) (p1 p2) c`, whose `(c p2 p1)` and
/// `(p1 p2) c` blocks the planner makes one unit each, of 16 to 256 bytes
/// (and blocks it declines: of one loop, or more than four registers hold). Every kernel set, streamed or not, one thread and three,
/// into a line-aligned buffer and a misaligned one, from row-major, spread
/// and Fortran-order sources, and typed from reversed and transposed views.
#[test]
fn gathered_blocks_match_reference() {
    let g = |axes: &[usize]| Side::Group { axes: axes.to_vec(), unit: false };
    // Elementary axes b, h, w, c, p1, p2 (`NAMES`' first six).
    let channels_last =
        (vec![g(&[0]), g(&[1, 4]), g(&[2, 5]), g(&[3])], vec![g(&[0]), g(&[1]), g(&[2]), g(&[3, 5, 4])]);
    let channels_first = (vec![g(&[0]), g(&[3]), g(&[1, 4]), g(&[2, 5])], vec![g(&[0, 1, 2]), g(&[4, 5]), g(&[3])]);
    // (pattern, sizes [b, h, w, c, p1, p2], element size). Gathered:
    // blocks of 54 to 256 bytes, in one to four registers (rows
    // straddling registers too), of 1-, 2- and 4-byte units, some taking
    // in `w` or a merged `w p2` loop. Declined: blocks of 18 rows, and of
    // 68 rows of a byte (its 272-byte `(c p2 p1)` past four registers).
    let cases = [
        (&channels_last, [1usize, 3, 5, 4, 2, 8], 1usize),
        (&channels_last, [1, 3, 2, 3, 7, 1], 2),
        (&channels_first, [2, 2, 3, 3, 3, 7], 1),
        (&channels_first, [1, 3, 2, 1, 16, 1], 4),
        (&channels_first, [1, 2, 2, 2, 8, 3], 1),
        (&channels_last, [1, 2, 3, 2, 3, 3], 1),
        (&channels_last, [1, 2, 2, 4, 4, 8], 1),
        (&channels_last, [1, 2, 2, 3, 6, 12], 1),
        (&channels_last, [1, 2, 3, 2, 4, 8], 2),
        (&channels_first, [1, 2, 2, 2, 6, 16], 1),
        (&channels_last, [2, 2, 3, 1, 4, 15], 1),
        (&channels_first, [1, 2, 2, 1, 16, 2], 1),
        (&channels_last, [1, 4, 3, 1, 31, 1], 1),
        (&channels_last, [1, 2, 2, 5, 13, 1], 1),
        (&channels_first, [1, 2, 2, 3, 6, 2], 1),
        (&channels_last, [1, 2, 2, 4, 4, 17], 1),
    ];
    rearrangements_match_reference(&cases);
}

/// A rearrangement's two sides (see [`Rearrangement`]).
type Sides = (Vec<Side>, Vec<Side>);

/// Each of `cases` (sides, sizes `[b, h, w, c, p1, p2]`, element size)
/// against the reference: every kernel set, streamed or not, one thread
/// and three, into a line-aligned buffer and a misaligned one, from
/// row-major, spread and Fortran-order sources, and typed from reversed
/// and transposed views.
fn rearrangements_match_reference(cases: &[(&Sides, [usize; 6], usize)]) {
    for &((left, right), sizes, elem) in cases {
        let r = Rearrangement {
            sizes: sizes.to_vec(),
            names: 6,
            left: left.clone(),
            right: right.clone(),
            given: vec![true; 6],
        };
        let sizes = r.given_sizes();
        let op = einops::Rearrange::new(&r.pattern(), &sizes).unwrap();
        let shape = r.shape(&r.left);
        let n: usize = shape.iter().product();
        let input = bytes(n * elem, elem as u8);
        let want = r.reference(&input, elem);
        for streaming in [Streaming::Never, Streaming::Always] {
            for kernels in [Kernels::Auto, Kernels::Avx512, Kernels::Avx2, Kernels::Portable] {
                for parallelism in [Parallelism::Sequential, Parallelism::Threads(3)] {
                    let plan = configured(op.plan(&shape).unwrap(), streaming, kernels, parallelism);
                    let what = format!("{} {shape:?} {elem} {streaming:?} {kernels:?} {parallelism:?}", r.pattern());
                    run_into_aligned_and_skewed(&plan, &input, elem, 1, |out, at| {
                        assert!(out == &want[..], "{what} at {at}");
                    });
                    let spread = [true, false, true, false];
                    let rank = shape.len();
                    for stored in [(0..rank).collect::<Vec<_>>(), (0..rank).rev().collect()] {
                        assert!(run_strided_bytes(&plan, &input, elem, &spread, &stored) == want, "{what} {stored:?}");
                    }
                }
            }
        }
        for (flip, transpose) in [([true, false, true, false], false), ([false, true, false, true], true)] {
            let (want, got) = run_views(&op, &shape, &flip, transpose);
            assert_eq!(got, want, "{} {flip:?} {transpose}", r.pattern());
        }
    }
}

/// Deinterleaves of packed units, which AVX512-VBMI plans make tiles
/// (`plan::rules::choose_tile`): TF NCHW space-to-depth as einops' `b c (h
/// p1) (w p2) -> b (p1 p2 c) h w`. Of 3-byte units (the byte permutes),
/// blocks of 1 x 2 to 6 x 8, rows of 64 bytes or more and shorter; of 6-
/// and 12-byte units (the transpose's full-line squares), 16 streams and
/// 15.
#[test]
fn deinterleaved_packed_units_match_reference() {
    let g = |axes: &[usize]| Side::Group { axes: axes.to_vec(), unit: false };
    let nchw = (vec![g(&[0]), g(&[3]), g(&[1, 4]), g(&[2, 5])], vec![g(&[0]), g(&[4, 5, 3]), g(&[1]), g(&[2])]);
    let cases = [
        (&nchw, [1usize, 3, 22, 2, 1, 2], 3usize),
        (&nchw, [1, 2, 10, 1, 1, 2], 3),
        (&nchw, [2, 2, 7, 3, 2, 5], 3),
        (&nchw, [1, 3, 13, 2, 3, 6], 3),
        (&nchw, [1, 2, 5, 1, 6, 6], 3),
        (&nchw, [1, 2, 9, 1, 4, 8], 3),
        (&nchw, [1, 1, 16, 1, 1, 16], 6),
        (&nchw, [1, 2, 17, 1, 2, 16], 12),
        (&nchw, [1, 2, 18, 2, 1, 15], 6),
    ];
    rearrangements_match_reference(&cases);
}

/// Every run form of a rearrange's plan (whose input axes split into
/// several of the engine's), and of its inverse, gives the reference.
#[test]
fn every_run_form_of_a_rearrange() {
    let op = einops::Rearrange::new("b (h p1) (w p2) c -> (p2 b) h (w p1 c)", &[("p1", 2), ("p2", 3)]).unwrap();
    let shape = [2, 4, 9, 5];
    let plan = op.plan(&shape).unwrap();
    assert_eq!(plan.input_shape(), &shape);
    assert_eq!(plan.output_shape(), &[6, 2, 3 * 2 * 5]);
    let n = plan.input_len();
    let x: Vec<u32> = (0..n as u32).map(|v| v.wrapping_mul(2654435761)).collect();
    let bytes_of = |v: &[u32]| v.iter().flat_map(|e| e.to_le_bytes()).collect::<Vec<u8>>();
    // The reference: output (p2 b, h, w p1 c) from input (b, h p1, w p2, c).
    let mut want = vec![0u32; n];
    for (f, slot) in want.iter_mut().enumerate() {
        let o = unravel(f, plan.output_shape());
        let (p2, b) = (o[0] / 2, o[0] % 2);
        let (w, p1, c) = (o[2] / 10, (o[2] / 5) % 2, o[2] % 5);
        *slot = x[ravel(&[b, o[1] * 2 + p1, w * 3 + p2, c], &shape)];
    }
    assert_eq!(plan.run(&x).unwrap(), want);
    let mut out = vec![0u32; n];
    plan.run_into(&x, &mut out).unwrap();
    assert_eq!(out, want);
    let mut uninit = vec![MaybeUninit::<u32>::uninit(); n];
    plan.run_uninit(&x, &mut uninit).unwrap();
    // SAFETY: the successful run initialised every element.
    assert_eq!(uninit.iter().map(|e| unsafe { e.assume_init() }).collect::<Vec<_>>(), want);
    let (xb, wb) = (bytes_of(&x), bytes_of(&want));
    assert_eq!(run_both(&plan, &xb, 4), wb);
    let mut ob = vec![0u8; n * 4];
    plan.run_bytes_into(&xb, 4, &mut ob).unwrap();
    assert_eq!(ob, wb);
    let mut ub = vec![MaybeUninit::<u8>::uninit(); n * 4];
    let mut last = None;
    plan.run_bytes_uninit_with_progress(&xb, 4, &mut ub, &mut |d, t| last = Some((d, t))).unwrap();
    // SAFETY: as above.
    assert_eq!(ub.iter().map(|e| unsafe { e.assume_init() }).collect::<Vec<_>>(), wb);
    assert_eq!(last, Some((n as u64 * 4, n as u64 * 4)));
    // Strided: Fortran order, bytes; and typed pointers into a transposed output.
    let fortran = run_strided_bytes(&plan, &xb, 4, &[false, true, false, true], &[3, 2, 1, 0]);
    assert_eq!(fortran, wb);
    let base = ArrayD::from_shape_vec(IxDyn(&shape), x.clone()).unwrap();
    let stored = base.clone().reversed_axes().as_standard_layout().into_owned();
    let view = stored.view().reversed_axes();
    let out_shape = plan.output_shape().to_vec();
    let mut t = ArrayD::<u32>::zeros(IxDyn(&out_shape.iter().rev().copied().collect::<Vec<_>>()));
    let mut tv = t.view_mut().reversed_axes();
    let (in_strides, out_strides) = (view.strides().to_vec(), tv.strides().to_vec());
    // SAFETY: both views address their shapes' elements; the output view's
    // are distinct and apart from the input's.
    unsafe { plan.run_strided(view.as_ptr(), &in_strides, tv.as_mut_ptr(), &out_strides).unwrap() };
    assert_eq!(tv.iter().copied().collect::<Vec<_>>(), want);
    assert_eq!(op.apply_array(view).unwrap().iter().copied().collect::<Vec<_>>(), want);
    // The inverse plan, contiguous and from a strided (Fortran-order) input.
    let inverse = plan.inverse();
    assert_eq!(inverse.run(&want).unwrap(), x);
    assert_eq!(run_strided_bytes(&inverse, &wb, 4, &[true, false, true], &[2, 1, 0]), xb);
}
