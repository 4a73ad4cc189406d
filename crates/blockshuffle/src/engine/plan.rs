//! Compiling a [`Geometry`] into a loop nest: the copy plan the executor runs.
//!
//! The loop nest walks the destination in its own order. Each loop has a
//! count and a byte stride on both sides; a loop may carry a *range*: the
//! padded coordinate `p = oc * i_outer + ic * i` of one space axis must lie in
//! `[lo, hi)`, where `i_outer` is the index of another (outer) loop. Positions
//! outside are padding (forward: filled) or crop (backward: never written,
//! because the destination has no such position).
//!
//! Canonicalisation drops loops of count 1, merges loops that are contiguous
//! on both sides, and folds the innermost contiguous run into one wide unit.
//! Short units make a transposing tile ([`choose_tile`]), which may carry
//! a padding or crop window on its block position. Then, for large
//! (streaming) outputs, it reorders the loops: long units sweep a few
//! destination streams together for the line writers ([`stream_order`]),
//! unless their destination runs gather source runs in order
//! ([`gathers_source_runs`]); transposing tiles walk the source in its
//! order, except those whose rows a vector kernel carries as one
//! destination run (`CopyPlan::carry_level`; padded rows,
//! [`padded_carry_level`]).

use arrayvec::ArrayVec;

use super::geometry::{Factor, Geometry, Part, MAX_FACTORS};
use super::kernels;
use super::lines::WRITERS;
use super::shuffle;
use super::simd::{interleaves_carried, AnyUnits, Isa, CARRIED_STREAMS};
use crate::MAX_RANK;

/// Which way a geometry is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Space side to block side (space-to-batch, space-to-depth, pixel-unshuffle).
    Forward,
    /// Block side to space side (batch-to-space, depth-to-space, pixel-shuffle).
    Backward,
}

impl Direction {
    /// The other direction.
    pub fn reverse(self) -> Self {
        match self {
            Direction::Forward => Direction::Backward,
            Direction::Backward => Direction::Forward,
        }
    }
}

pub(crate) const MAX_LOOPS: usize = MAX_FACTORS + 1;
const _: () = assert!(MAX_LOOPS <= 128, "a u128 holds one bit per loop");

/// A padding/crop window on one loop (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    /// Index of the outer loop the window depends on, if any.
    pub outer: Option<u8>,
    pub oc: i64,
    pub ic: i64,
    pub lo: i64,
    pub hi: i64,
}

impl Window {
    /// The valid index range `[s, e)` of the inner loop, within `[0, count)`.
    #[inline(always)]
    pub fn range(&self, outer_index: usize, count: usize) -> (usize, usize) {
        self.bounds(outer_index).range(count)
    }

    /// The bounds on the inner index at outer index `outer_index`.
    #[inline(always)]
    pub fn bounds(&self, outer_index: usize) -> Bounds {
        let base = self.oc * outer_index as i64;
        Bounds { ic: self.ic, lo: self.lo - base, hi: self.hi - base }
    }

    /// The window of a loop merged with an inner loop of `count` (for a
    /// window with `ic == 1`): merged index `m = i * count + r` is valid
    /// exactly when `i` is, that is when `lo * count <= oc * count * outer
    /// + m < hi * count`. `None` if a scaled bound overflows.
    fn scaled(&self, count: usize) -> Option<Window> {
        debug_assert_eq!(self.ic, 1);
        let c = i64::try_from(count).ok()?;
        Some(Window { oc: self.oc.checked_mul(c)?, lo: self.lo.checked_mul(c)?, hi: self.hi.checked_mul(c)?, ..*self })
    }
}

/// A window at one outer index: the inner index `i` is valid when
/// `lo <= ic * i < hi`. All of one size, so that kernels copy it cheaply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bounds {
    pub ic: i64,
    pub lo: i64,
    pub hi: i64,
}

impl Bounds {
    /// No bound: every index valid.
    pub const ALL: Bounds = Bounds { ic: 1, lo: i64::MIN, hi: i64::MAX };

    /// The valid index range `[s, e)`, within `[0, count)`.
    #[inline(always)]
    pub fn range(&self, count: usize) -> (usize, usize) {
        // (Comparisons rather than `clamp` and `div_euclid`, which the
        // compiler may leave out of line once enough kernels inline this:
        // measured, a call each in the executor's windowed loops, NHWC
        // batch-to-space with crops 0.95x -> 1.06x memcpy.)
        let clamp = |v: i64| {
            if v <= 0 {
                0
            } else if v >= count as i64 {
                count
            } else {
                v as usize
            }
        };
        let (s, e) = if self.ic == 1 {
            // The common case (the window's loop is the block factor): no division.
            (clamp(self.lo), clamp(self.hi))
        } else {
            (clamp(ceil_div(self.lo, self.ic)), clamp(ceil_div(self.hi, self.ic)))
        };
        (s, e.max(s))
    }

    /// The bounds at the next outer index, for a window of outer coefficient `oc`.
    #[inline(always)]
    pub fn step(self, oc: i64) -> Bounds {
        Bounds { lo: self.lo.wrapping_sub(oc), hi: self.hi.wrapping_sub(oc), ..self }
    }
}

/// `a / d` rounded up, for `d > 0`.
#[inline(always)]
fn ceil_div(a: i64, d: i64) -> i64 {
    debug_assert!(d > 0);
    // Division truncates toward zero: up by one for a positive remainder.
    a / d + i64::from(a % d > 0)
}

/// One loop of the nest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Loop {
    pub count: usize,
    /// Source stride in bytes.
    pub ss: isize,
    /// Destination stride in bytes.
    pub ds: isize,
    pub window: Option<Window>,
    /// Whether another loop's window reads this loop's index.
    pub is_outer: bool,
}

/// A compiled, canonical copy plan for one direction, element size and pair of layouts.
#[derive(Debug, Clone)]
pub(crate) struct CopyPlan {
    pub loops: ArrayVec<Loop, MAX_LOOPS>,
    /// Bytes of the innermost contiguous run (one "wide element").
    pub unit: usize,
    /// Byte offset of the source position with all indices 0 (may be outside
    /// the buffer when that position is padding; never dereferenced then).
    pub src_base: isize,
    pub dst_base: isize,
    /// Forward: positions outside a window are filled. Backward: skipped.
    pub fill: bool,
    /// No destination bytes at all.
    pub empty: bool,
    /// Every destination position is padding (forward only).
    pub all_padding: bool,
    /// For each loop j: bytes of the contiguous destination block that one
    /// index of loop j covers, or 0 if that block is not contiguous.
    pub dst_block: ArrayVec<usize, MAX_LOOPS>,
    /// Total destination bytes.
    pub dst_bytes: usize,
    /// The last two loops form a transposing tile: the outer one is
    /// contiguous in the source (`ss == unit`), the inner one in the
    /// destination (`ds == unit`), and neither carries a window.
    pub tile: bool,
    /// Store with non-temporal (cache-bypassing) stores: for destinations
    /// much larger than the cache, this saves reading every destination line
    /// before writing it.
    pub nt: bool,
    /// The vector kernels for short runs (see `engine::simd`).
    pub isa: Isa,
    /// With streaming stores, a tile whose destination streams each continue
    /// contiguously across an outer loop: see [`TileStage`].
    pub tile_stage: Option<TileStage>,
    /// With streaming stores, a tile whose destination streams each
    /// continue contiguously across this loop (and the one inside it, if it
    /// is not the tile's), run whole by `simd::deinterleave_carried` (see
    /// [`carry_level`]) or `simd::interleave_carried` (see
    /// [`interleave_carry_level`]), which carry each stream's bytes from
    /// row to row in a register.
    pub carry_level: Option<usize>,
    /// The carry level of a padded deinterleaving tile: the carried kernel
    /// reads the source rows in place and makes up their padding (see
    /// [`padded_carry_level`]).
    pub padded: bool,
    /// The carry level of a tile whose source rows each split into
    /// consecutive destination segments, run row by row by
    /// `simd::deinterleave_carried` (see [`segments_carry_level`]).
    pub segments: bool,
    /// With streaming stores: every unit goes through the line writers
    /// (`engine::lines`), the loops ordered by [`stream_order`] so that a
    /// few destination streams advance together.
    pub lines: bool,
    /// With streaming stores: the innermost loop gathers rows into the
    /// destination (see [`streams_gathered_rows`]) that do not continue one
    /// another, shorter than [`MAX_JOINED_ROW`] or padded or cropped. Each
    /// row's whole lines go straight from the source; the parts of lines
    /// at its ends, and the padding, go through the line writers, which
    /// join them with the rows on either side (see
    /// `kernels::gather_lines`).
    pub gathered: bool,
}

/// Strides (in bytes) of both sides of a geometry.
pub(crate) struct Layouts<'a> {
    pub space: &'a [isize],
    pub block: &'a [isize],
}

#[derive(Clone, Copy)]
struct RawLoop {
    count: usize,
    ss: isize,
    ds: isize,
}

impl CopyPlan {
    /// Compiles `geom` run in `dir` for elements of `elem` bytes.
    ///
    /// The caller guarantees that both tensors fit in memory (their byte sizes
    /// fit in `isize`), which bounds every count, padding and stride used here.
    /// `streaming`: the destination is large enough to bypass the cache
    /// (see [`CopyPlan::nt`]); it also changes the loop order.
    /// `isa`: the vector kernels for short runs (one the CPU runs).
    #[cfg(test)]
    pub fn compile(
        geom: &Geometry,
        dir: Direction,
        elem: usize,
        strides: &Layouts<'_>,
        streaming: bool,
        isa: Isa,
    ) -> Self {
        let mut plan = CopyPlan::placeholder();
        plan.build(geom, dir, elem, strides, streaming, isa);
        plan
    }

    /// A plan with nothing in it, to [`CopyPlan::build`] in place (plans
    /// are kilobytes: building one where it will be used saves copying it).
    pub const fn placeholder() -> Self {
        CopyPlan {
            loops: ArrayVec::new_const(),
            unit: 1,
            src_base: 0,
            dst_base: 0,
            fill: false,
            empty: true,
            all_padding: false,
            dst_block: ArrayVec::new_const(),
            dst_bytes: 0,
            tile: false,
            nt: false,
            isa: Isa::Portable,
            tile_stage: None,
            carry_level: None,
            padded: false,
            segments: false,
            lines: false,
            gathered: false,
        }
    }

    /// `CopyPlan::compile` (tests only), into `self` (whatever it held before).
    pub fn build(
        &mut self,
        geom: &Geometry,
        dir: Direction,
        elem: usize,
        strides: &Layouts<'_>,
        streaming: bool,
        isa: Isa,
    ) {
        let n_space = geom.space.len();
        let space_count = |f: Factor| geom.factor_count(f) as usize;

        // Per-factor strides on the space side, and the space side's base offset.
        let space_stride = |f: Factor| -> isize {
            let s = strides.space[f.axis as usize];
            match f.part {
                Part::Outer => s.wrapping_mul(geom.space[f.axis as usize].block as isize),
                Part::Block => s,
            }
        };
        let space_base = geom
            .space
            .iter()
            .zip(strides.space)
            .fold(0isize, |acc, (ax, &s)| acc.wrapping_sub((ax.begin as isize).wrapping_mul(s)));

        // Per-factor strides on the block side: within a group, the last factor
        // varies fastest.
        // Only the space axes' entries are used (every factor's is set below).
        let mut block_stride: ArrayVec<[isize; 2], MAX_RANK> = (0..n_space).map(|_| [0isize; 2]).collect();
        let mut at = 0;
        for (g, &n) in geom.groups.iter().enumerate() {
            let mut s = strides.block[g];
            for f in geom.order[at..at + n as usize].iter().rev() {
                block_stride[f.axis as usize][f.part as usize] = s;
                s = s.wrapping_mul(space_count(*f) as isize);
            }
            at += n as usize;
        }
        let block_stride = |f: Factor| block_stride[f.axis as usize][f.part as usize];

        // Loop order: the destination's.
        let mut factors: ArrayVec<Factor, MAX_FACTORS> = ArrayVec::new();
        match dir {
            Direction::Forward => factors.extend(geom.order.iter().copied()),
            Direction::Backward => {
                for i in 0..n_space {
                    factors.push(Factor { axis: i as u8, part: Part::Outer });
                    factors.push(Factor { axis: i as u8, part: Part::Block });
                }
            }
        }

        // Pushed in place rather than collected: these arrays are kilobytes.
        let mut raw: ArrayVec<RawLoop, MAX_LOOPS> = ArrayVec::new();
        let mut windows: ArrayVec<Option<Window>, MAX_LOOPS> = ArrayVec::new();
        for &f in &factors {
            let (ss, ds) = match dir {
                Direction::Forward => (space_stride(f), block_stride(f)),
                Direction::Backward => (block_stride(f), space_stride(f)),
            };
            raw.push(RawLoop { count: space_count(f), ss, ds });
            windows.push(None);
        }
        for (i, ax) in geom.space.iter().enumerate() {
            if ax.begin == 0 && ax.end == 0 {
                continue;
            }
            let find = |part| factors.iter().position(|f| f.axis as usize == i && f.part == part);
            let po = find(Part::Outer).expect("outer factor present");
            let lo = ax.begin as i64;
            let hi = lo + ax.extent as i64;
            let block = ax.block as i64;
            match find(Part::Block) {
                Some(pk) if pk > po => windows[pk] = Some(Window { outer: Some(po as u8), oc: block, ic: 1, lo, hi }),
                Some(pk) => windows[po] = Some(Window { outer: Some(pk as u8), oc: 1, ic: block, lo, hi }),
                None => windows[po] = Some(Window { outer: None, oc: 0, ic: block, lo, hi }),
            }
        }
        let (src_base, dst_base) = match dir {
            Direction::Forward => (space_base, 0),
            Direction::Backward => (0, space_base),
        };
        // The element itself is the innermost, contiguous loop.
        raw.push(RawLoop { count: elem, ss: 1, ds: 1 });
        windows.push(None);

        // The destination's size: every factor (forward, the block side) or the
        // space extents without padding (backward).
        // Zero if any count is; otherwise the destination buffer's real size.
        let dst_bytes = match dir {
            Direction::Forward => count_product(raw.iter().map(|l| l.count)),
            Direction::Backward => count_product(geom.space.iter().map(|a| a.extent as usize).chain([elem])),
        };
        let empty = dst_bytes == 0;
        // Every field is set: `self` may hold an earlier plan.
        self.loops.clear();
        self.unit = 1;
        self.src_base = src_base;
        self.dst_base = dst_base;
        self.fill = dir == Direction::Forward;
        self.empty = empty;
        self.all_padding = false;
        self.dst_block.clear();
        self.dst_bytes = dst_bytes;
        self.tile = false;
        self.nt = streaming;
        self.isa = isa;
        self.tile_stage = None;
        self.carry_level = None;
        self.padded = false;
        self.segments = false;
        self.lines = false;
        self.gathered = false;
        if !empty {
            self.canonicalise(&raw, &mut windows);
        }
    }

    fn canonicalise(&mut self, raw: &[RawLoop], windows: &mut [Option<Window>]) {
        // 1. Drop loops of count 1, moving windows that depend on them.
        let mut keep: ArrayVec<usize, MAX_LOOPS> = ArrayVec::new();
        // Loops that some window depends on (bit `j`: loop `j`).
        let mut outers = 0u128;
        for w in windows.iter().flatten() {
            if let Some(o) = w.outer {
                outers |= 1 << o;
            }
        }
        for j in 0..raw.len() {
            // The element loop (last) always stays: it becomes the unit.
            if raw[j].count != 1 || j + 1 == raw.len() {
                keep.push(j);
                continue;
            }
            // Loop j always has index 0.
            if let Some(w) = windows[j].take() {
                match w.outer {
                    // The window now constrains the outer loop alone: p = oc * i_outer.
                    Some(o) => {
                        let o = o as usize;
                        debug_assert!(windows[o].is_none(), "a loop carries at most one window");
                        windows[o] = Some(self_window(w));
                    }
                    // A constant position: valid or not, whatever the indices.
                    None => {
                        if !(w.lo <= 0 && 0 < w.hi) {
                            self.all_padding = true;
                        }
                    }
                }
            }
            if outers & (1 << j) != 0 {
                for w in windows.iter_mut().flatten() {
                    if w.outer == Some(j as u8) {
                        w.outer = None;
                    }
                }
            }
        }
        // Built in place: these arrays are kilobytes, and copies of them are
        // most of what a tiny run costs.
        let loops = &mut self.loops;
        loops.clear();
        for &j in &keep {
            let mut window = windows[j];
            if let Some(w) = window.as_mut() {
                if let Some(o) = w.outer {
                    w.outer = Some(keep.iter().position(|&x| x == o as usize).unwrap() as u8);
                }
            }
            loops.push(Loop { count: raw[j].count, ss: raw[j].ss, ds: raw[j].ds, window, is_outer: false });
        }
        for j in 0..loops.len() {
            if let Some(Window { outer: Some(o), .. }) = loops[j].window {
                loops[o as usize].is_outer = true;
            }
        }

        // 2. Merge neighbours contiguous on both sides (inner into outer).
        // The outer one may carry a window on its own index (not one
        // divided by a block: `ic == 1`), which the merged loop keeps,
        // scaled by the inner count (a crop of whole rows, such as
        // OpenVINO's batch-to-space crops of a block factor).
        let mut j = loops.len();
        while j >= 2 {
            j -= 1;
            let (a, b) = (loops[j - 1], loops[j]);
            if a.is_outer
                || !free(&b)
                || a.ss != b.ss.wrapping_mul(b.count as isize)
                || a.ds != b.ds.wrapping_mul(b.count as isize)
            {
                continue;
            }
            let window = match a.window {
                None => None,
                // A scaled bound beyond i64: left unmerged.
                Some(w) if w.ic == 1 => match w.scaled(b.count) {
                    Some(scaled) => Some(scaled),
                    None => continue,
                },
                Some(_) => continue,
            };
            loops[j - 1] = Loop { count: a.count * b.count, window, ..b };
            loops.remove(j);
            for l in loops.iter_mut() {
                if let Some(w) = l.window.as_mut() {
                    if let Some(o) = w.outer {
                        if o as usize > j - 1 {
                            w.outer = Some(o - 1);
                        }
                    }
                }
            }
        }

        // 3. The innermost loop, contiguous on both sides, becomes the unit.
        let last = *loops.last().expect("the element loop is never dropped");
        if last.ss == 1 && last.ds == 1 && free(&last) {
            self.unit = last.count;
            loops.pop();
        } else {
            self.unit = 1;
        }

        // 4. Short runs: when the innermost loop is contiguous only in the
        // destination, bring the nearest loop contiguous in the source next to
        // it, so the two run as one transposing tile (read long runs, write
        // long runs, interleave a few streams in between).
        let gathered = self.unit < MANY_STREAMS_UNIT && gathers_source_runs(loops, self.unit);
        // Long rows gathered into the destination stream out directly (see
        // step 6); up to `MANY_STREAMS_UNIT`, faster than the line writers
        // (measured: NHWC space-to-batch 2x2 and depth-to-space by 2 of
        // 128-byte units 1.2x memcpy through the writers, 0.7-0.8x so).
        // So do rows that continue one another, unit by unit, whatever
        // their length (see `kernels::MAX_STREAMED_UNIT`).
        let continued_rows = self.nt && streams_continued_rows(loops, self.unit, self.fill);
        let gathered_rows =
            continued_rows || (self.nt && self.unit < MANY_STREAMS_UNIT && streams_gathered_rows(loops, self.unit));
        // The plan of a tile of units without a kernel of their own, should
        // no carried kernel take it (see below).
        let mut unless_carried = None;
        if self.nt && self.unit >= MIN_LINES_UNIT && !gathered && !gathered_rows && stream_order(loops) {
            // 4''. Streaming long units: a few destination streams written
            // together through the line writers.
            self.lines = true;
        } else if self.unit >= MIN_SOURCE_ORDER_UNIT || continued_rows {
            // 4'. Long units: keep a long run of the destination innermost (so
            // stores go out in long sequential runs), and walk the loops
            // outside it in the source's order, so that the source is swept
            // once instead of once per block position (a strided sweep also
            // has the prefetchers fetch the parts it skips). So do continued
            // rows of 32- and 48-byte units, rather than make a tile of
            // them (measured in separate processes alternating, ratio to
            // memcpy: 45 NHWC batch-to-space of such units by 2 to 4,
            // cropped or not, geomean 1.15 -> 0.73, the worst 1.43 -> 0.80;
            // with `kernels::Grid::stream_rows` taking whole rows at once:
            // without that, rows of 64 bytes went 0.9-1.05 -> 1.03-1.13).
            source_order_outside_run(loops, self.unit);
        } else {
            // Tiny plans keep the destination's order outside their rows:
            // it measured faster for them (the S2 workload 0.9 us a call,
            // against 1.2 us in the source's order), and costs nothing to
            // build.
            let arranged = choose_tile(loops, self.unit, self.dst_bytes >= SOURCE_ORDER_BYTES);
            let tiled = arranged == Some(true);
            let shuffled = tiled && streams_shuffled_rows(loops, self.unit, self.isa);
            // Units that no tile kernel of their own takes (three-channel
            // pixels, 3 to 48 bytes, and their blocks) make a tile for the
            // carried kernels of AVX512-VBMI, which gather them with byte
            // permutes (`simd::AnyUnits`), 2 to 4 streams of them
            // (interleaving 2: below); if neither takes it, the plan is the
            // one it was (saved here).
            // Measured (ratio to memcpy, 2 runs alternating, best of each):
            // NHWC space-to-batch, batch-to-space (cropped or not) and
            // space-to-depth by 3 and 4 of three uint8, float16 or float32
            // channels and of four uint8, 32 workloads: geomean 1.14 ->
            // 1.02, the worst 1.60 -> 1.33, above 1.10 17 -> 10. Two
            // streams are gathered only from consecutive source rows
            // (space-to-depth by 2), in place of the byte-shuffle kernel
            // too: see `interleave_units`.
            let pair = |loops: &[Loop]| match loops {
                [.., x, y] => y.count == 2 && interleave_units(x, y, self.unit),
                _ => false,
            };
            let any = arranged.is_some()
                && self.nt
                && self.isa >= Isa::Avx512Vbmi
                && !vector_unit(self.unit)
                && (!shuffled || pair(loops));
            unless_carried = any.then(|| (loops.clone(), tiled));
            self.tile = tiled || any;
            if tiled && !vector_unit(self.unit) && !shuffled && !any {
                // No vector kernel: its runs would each be short streaming
                // stores (measured: float32 NHWC batch-to-space of 8
                // channels 1.11 -> 1.05x memcpy, uint8 depth-to-space of 3
                // channels by 4 1.25-1.3 -> 1.0-1.1x through the cache).
                self.nt = false;
            }
            let windowed = self.tile && loops[loops.len() - 1].window.is_some();
            if self.tile && self.nt {
                // Streaming tiles walk the loops outside the tile in the
                // source's order, so that the source is swept once; the
                // destination streams this creates are written in whole
                // lines by the deinterleaving kernel, or gathered in a
                // staging buffer (see `tile_stage`).
                let dst_order = loops.clone();
                source_order_outside(loops, loops.len() - 2);
                let n = loops.len();
                let (x, y) = (loops[n - 2], loops[n - 1]);
                let row = y.count * self.unit;
                let deinterleaving = x.ds != row as isize;
                let lines =
                    vector_streams(x.count, self.isa) && vector_unit(self.unit) && row >= MIN_LINES_DEINTERLEAVE_ROW;
                if deinterleaving {
                    if !windowed {
                        self.carry_level = carry_level(loops, self.unit, self.isa);
                    }
                    if self.carry_level.is_none() && self.fill {
                        // Padding rows of the source (a window on the
                        // tile, or on the loop of stream groups alone:
                        // rows wholly padding): read in place, the padding
                        // made up where a read meets it (the carried
                        // kernels run whole tiles). Measured, OpenVINO
                        // NCHW space-to-batch padded on H alone: uint8 by
                        // 3, 1.75x memcpy through the tile stage, 1.03-1.1x
                        // carried; float32 by 4, 1.43x -> 0.75x.
                        self.carry_level = padded_carry_level(loops, self.unit, self.isa);
                        self.padded = self.carry_level.is_some();
                    }
                } else if !windowed && self.isa >= Isa::Avx512Vbmi {
                    if let Some(level) = interleave_carry_level(&dst_order, self.unit) {
                        // The destination's order: its rows one run.
                        *loops = dst_order.clone();
                        self.carry_level = Some(level);
                    } else if let Some(level) = segments_carry_level(&dst_order, self.unit, self.isa) {
                        *loops = dst_order.clone();
                        self.carry_level = Some(level);
                        self.segments = true;
                    }
                }
                let direct = self.carry_level.is_some() || (deinterleaving && lines);
                if windowed && !self.padded {
                    // Its edges take ordinary stores, which would share
                    // lines with streamed ones (measured: OpenVINO
                    // batch-to-space of NCHW uint8 cropped 16x memcpy so):
                    // through the cache, in the destination's order. But
                    // interleaved rows cropped at their ends stream: with
                    // AVX512-VBMI, interleaved in registers and their kept
                    // bytes carried from row to row (see `crops_carried`);
                    // rows of whole lines, built whole in a stage and their
                    // kept bytes sent through the line writers (see
                    // `crops_row_ends`).
                    *loops = dst_order.clone();
                    self.nt =
                        !self.fill && (crops_carried(loops, self.unit, self.isa) || crops_row_ends(loops, self.unit));
                } else if !direct {
                    self.tile_stage = tile_stage(loops, self.unit);
                }
                if !windowed && !direct && self.tile_stage.is_none() {
                    // Unstaged, the destination's order is the better one
                    // (measured: uint8 and float16 pixel_shuffle 2.0x
                    // memcpy in the source's, 1.6-1.7x in it).
                    *loops = dst_order;
                    if deinterleaving {
                        // A deinterleaving tile with rows too short for
                        // whole lines and too many streams to stage:
                        // streaming stores alternating between their short
                        // runs are slow, so it stores through the cache
                        // (measured: uint8 pixel_unshuffle by 4, 16 streams,
                        // 2.2x memcpy staged, 1.6x so).
                        self.nt = false;
                    }
                }
            }
        }

        if let Some((saved, tiled)) = unless_carried {
            let carried = self.carry_level.is_some();
            let cropped = self.tile && loops[loops.len() - 1].window.is_some() && self.nt;
            if !(carried || (cropped && crops_carried(loops, self.unit, self.isa))) {
                *loops = saved;
                self.tile = tiled;
                // As above: a tile of them stores through the cache; other
                // plans stream or not by step 6.
                self.nt = !tiled;
                (self.carry_level, self.padded, self.segments, self.tile_stage) = (None, false, false, None);
            }
        }

        // 5. Contiguous destination blocks, for filling padding in whole runs.
        destination_blocks(loops, self.unit, &mut self.dst_block);

        // 6. Other streaming plans (short units that make no tile, and long
        // units whose runs outnumber the line writers or gather source runs)
        // store through the cache: their units would each be a short
        // streaming store, and building whole destination regions in a
        // staging buffer to stream out cost more than it saved. Measured on
        // an AVX2 machine (Zen 3), ratio to memcpy staged -> through the
        // cache: three-channel float32 NHWC space-to-depth 1.5-1.6 -> 1.2,
        // depth-to-space by 2 and 3 1.1-1.6 -> 1.0-1.2; six-channel
        // 1.2-1.5 -> 0.9-1.0; NHWC space-to-batch of 8 float32 channels
        // 1.6-1.75 -> 1.3; batch-to-space of 32 float32 channels 0.91-0.95
        // -> 0.91-0.95. Unstaged, with a streaming store per unit, NHWC
        // space-to-batch of 16 float32 channels ran at 1.45-1.9. Rows of
        // a few whole-vector units that continue one another stream unit
        // by unit (see `streams_continued_rows`).
        if self.nt && !self.tile && !self.lines && scatters_gathered_rows(loops, self.unit) {
            // Rows gathered from a few source positions, in the source's
            // order: the rows' loop goes inside (streamed as a grid).
            let n = loops.len();
            loops.swap(n - 2, n - 1);
            self.gathered = false;
        } else if self.nt && !self.tile && !self.lines {
            self.nt = streams_continued_rows(loops, self.unit, self.fill) || streams_gathered_rows(loops, self.unit);
            let joins = |last: &Loop| last.count.saturating_mul(self.unit) < MAX_JOINED_ROW || last.window.is_some();
            self.gathered = self.nt && !continues_rows(loops, self.unit) && loops.last().is_some_and(joins);
        }
    }
}

/// Whether the last two loops gather long rows of units a few apart (`y`
/// a row's units, `x.count` apart in the source; `x` the rows, their units
/// one apart, which together read every unit of the source rows) that are
/// better taken in the source's order: each run of `x.count` units of the
/// source goes a unit to each row in turn (`kernels::Grid::copy` streams
/// them), so the source is read once, in order, rather than once a row, a
/// unit in every `x.count`, and the `x.count` rows are written together.
/// Rows of [`MAX_JOINED_ROW`] bytes or more, of units of whole 16-byte
/// vectors from 32 bytes, and no window on either loop; at most
/// [`MAX_SCATTERED_ROWS`] rows.
///
/// Measured (ratio to memcpy, alternating, one thread, median of 2 runs,
/// gathered row by row -> so): NHWC space-to-batch and depth-to-space by 2
/// and 3 of 16 to 128 channels, 48 workloads, geomean 0.822 -> 0.680
/// (depth-to-space by 3 of 64 uint8 channels 1.03 -> 0.62, space-to-batch
/// 3x3 of 32 float32 1.09 -> 0.61); two threads, 1 run, NHWC and
/// OpenVINO space-to-batch and depth-to-space by 2 and 3, 0.867 -> 0.792.
/// Through `copy_run` a row at a time, not a kernel of its own, the same
/// plans were slower than gathered (48 workloads by 2 and 3 of 3 to 128
/// channels, 0.809 -> 0.926).
fn scatters_gathered_rows(loops: &[Loop], unit: usize) -> bool {
    let n = loops.len();
    let [.., x, y] = loops else { return false };
    let refers = loops.iter().any(|l| l.window.is_some_and(|w| w.outer.is_some_and(|o| o as usize >= n - 2)));
    !refers
        && x.window.is_none()
        && y.window.is_none()
        && unit >= 32
        && unit.is_multiple_of(16)
        && (2..=MAX_SCATTERED_ROWS).contains(&x.count)
        && x.ss == unit as isize
        && y.ss == (x.count * unit) as isize
        && y.ds == unit as isize
        && y.count.saturating_mul(unit) >= MAX_JOINED_ROW
}

/// Most rows [`scatters_gathered_rows`] takes in the source's order. By 4,
/// one thread ran faster so (31 NHWC space-to-batch and depth-to-space
/// workloads, 0.776 -> 0.703x memcpy, but space-to-batch 4x4 of 32-byte
/// units 0.78-0.89 -> 0.85-1.04), and two threads slower (14 workloads of
/// 16 to 128 channels, 2 runs: 0.71-0.90 gathered, 0.64-2.10 so, the
/// median of 8 of them above 1.2).
const MAX_SCATTERED_ROWS: usize = 3;

/// Whether the innermost loop gathers long rows of units of whole 16-byte
/// vectors (from 32 bytes) into a contiguous destination: with streaming
/// stores these go straight from the source to the destination (see
/// `kernels::stream_gather`), the source fetched ahead by one sequential
/// sweep. Measured, ratio to memcpy through the cache -> so: NHWC
/// space-to-batch 4x4 with padding of 64 uint8 channels 1.46 -> 0.8,
/// depth-to-space by 4 of 256 uint8 channels 2.0 -> 1.2, space-to-batch 4x4
/// of 32 uint8 channels 1.26 -> 0.7. Rows from [`MIN_GATHERED_ROW`], or
/// from [`MIN_CONTINUED_ROW`] where they continue one another (an earlier
/// measurement of the 5-D space-to-batch's 1 KiB rows, 1.04 -> 1.18, no
/// longer holds: see [`MIN_GATHERED_ROW`]); units of other sizes would go
/// through a staging buffer, slower than the cache (1.1 -> 1.9 for 36-byte
/// units).
fn streams_gathered_rows(loops: &[Loop], unit: usize) -> bool {
    let Some(last) = loops.last() else { return false };
    let row = last.count.saturating_mul(unit);
    let continued = continues_rows(loops, unit);
    unit >= 32
        && unit.is_multiple_of(16)
        && last.ds == unit as isize
        && last.ss >= unit as isize
        && (row >= MIN_GATHERED_ROW || (continued && row >= MIN_CONTINUED_ROW))
}

/// Whether the last two loops make a grid whose units stream one by one
/// ([`kernels::streams_rows`]: rows of a few whole-vector units that
/// continue one another, each unit position a sequential stream of the
/// source), in runs of at least [`MIN_STREAMED_RUN`] bytes. A backward
/// plan (`!fill`) may crop the run's ends: a window on the rows' units
/// that depends on the rows' index alone, `lo <= x * y.count + y < hi`
/// (batch-to-space with crops: the grid's rows keep what the bounds
/// give, and its destination stays one run). Measured in separate
/// processes alternating, ratio to memcpy through the line writers -> so:
/// float32 batch-to-space 4x4 of 64 channels cropped by 3 (W4, 256-byte
/// units) 1.18-1.27 -> 0.81-0.83 on one thread, 0.91-0.95 -> 0.73-0.79 on
/// two.
fn streams_continued_rows(loops: &[Loop], unit: usize, fill: bool) -> bool {
    let [.., x, y] = loops else { return false };
    let n = loops.len();
    let ends_cropped =
        |win: Window| !fill && win.outer == Some((n - 2) as u8) && win.ic == 1 && win.oc == y.count as i64;
    y.window.is_none_or(ends_cropped)
        && kernels::streams_rows(unit, y.count, y.ds, x.ss, x.ds)
        && x.count.saturating_mul(y.count).saturating_mul(unit) >= MIN_STREAMED_RUN
        && (y.count * unit >= MIN_STREAMED_ROW || y.window.is_some())
}

/// Shortest uncropped row that [`streams_continued_rows`] streams: rows of
/// two 16-byte units make a faster tile (measured, ratio to memcpy, 2 runs
/// in separate processes, tile -> so: NHWC batch-to-space 2x2 of 16 uint8
/// channels 0.74 -> 0.89, of 4 float32 0.67 -> 0.75 (of 8 float16 0.70 ->
/// 0.67); space-to-depth by 2 of 8 uint8 channels 0.93 -> 1.19), while
/// cropped ones, whose windowed tile stores through the cache, stream
/// faster (1.14-1.18 -> 0.62-0.69).
const MIN_STREAMED_ROW: usize = 48;

/// Shortest run of continued rows that [`streams_continued_rows`] streams:
/// at a run's ends its streaming stores leave lines partly written, which
/// cost (rows of 256 bytes that each began a new run of one of 12
/// destination streams went 1.4 -> 2.1x memcpy streamed, see
/// [`MIN_GATHERED_ROW`]). A guard, not a measured optimum: the runs
/// measured streaming faster were 8 to 64 KiB.
const MIN_STREAMED_RUN: usize = 4 << 10;

/// Whether the loop outside the last continues its rows in the
/// destination: the rows are one run.
fn continues_rows(loops: &[Loop], unit: usize) -> bool {
    let n = loops.len();
    n >= 2 && loops[n - 2].ds == loops[n - 1].count.saturating_mul(unit) as isize
}

/// Shortest row (bytes) that [`streams_gathered_rows`] streams. Measured
/// (ratio to memcpy, through the cache -> streamed, one thread / two):
/// OpenVINO's 5-D space-to-batch (W11) of 1 KiB rows 1.03 / 1.36 -> 1.00 /
/// 0.96; TensorFlow batch-to-space 4x4 of 128-byte units, 512-byte rows,
/// 0.93 / 1.11 -> 0.79 / 0.81; space-to-depth by 3 of 192-byte units, 576
/// bytes, 0.87 / 1.0 -> 0.70 / 0.78. Rows of 256 bytes that do not
/// continue one another went 1.4 -> 2.1 (W11 in uint8: each row starts a
/// short piece of one of 12 destination streams), and still 2.0 with their
/// ends joined into whole lines (see [`MAX_JOINED_ROW`]): the short runs
/// themselves cost, not their partial lines.
const MIN_GATHERED_ROW: usize = 512;

/// Longest unwindowed gathered row whose ends [`CopyPlan::gathered`]
/// joins through the line writers; windowed rows (padded or cropped) join
/// theirs whatever their length. The lines a row leaves half-written are
/// 2 of 9 of a 512-byte row, 2 of 65 of a 4 KiB one, where rows do not
/// start on a line (a large destination from the allocator starts 16
/// bytes past one). Measured (ratio to memcpy, alternating, straight ->
/// joined): OpenVINO's 5-D space-to-batch of 512-byte rows 1.31-1.52 ->
/// 0.93-1.06, of 1 KiB rows 0.92-0.98 -> 0.77-0.84; unpadded NHWC
/// space-to-batch and depth-to-space by 2 of 32- to 256-byte units, rows
/// of 4 to 16 KiB, 0.68-0.84 -> 0.67-0.85 (3 runs, same binary: 64-byte
/// units 0.79 -> 0.84). Padded rows pay more for their ends (uint8 NHWC
/// space-to-batch 2x2 of 64 channels padded on W, rows of 8 KiB streamed
/// straight, 0.96x memcpy into a destination on a line, 1.88 16 bytes
/// past): joined, 3 runs in separate processes, one thread / two, uint8
/// of 32 channels padded by 1, 2x2 1.21 / 0.97 -> 1.01 / 0.81, 3x3 1.20
/// / 1.16 -> 1.01 / 0.76, 4x4 1.19 / 1.03 -> 0.93 / 0.79; of 64 channels
/// (2 runs, one thread), 3x3 and 4x4 1.67 -> 0.88-0.92.
const MAX_JOINED_ROW: usize = 2 << 10;

/// Shortest row (bytes) that [`streams_gathered_rows`] streams when the
/// rows continue one another in the destination, one run (measured: NHWC
/// space-to-depth by 2 of 128-byte units, 256-byte rows, 1.0 -> 0.82-0.89;
/// rows of 128 bytes went 1.06 -> 1.3).
const MIN_CONTINUED_ROW: usize = 256;

/// Whether a tile plan's last two loops `x` and `y` interleave whole
/// destination rows (`y` the streams, contiguous in the destination, `x`
/// the units of each, contiguous in the source) cropped only at the row's
/// ends: `y`'s window on `x` keeps the row positions `q = x * ny + y` in
/// `[lo, hi)`. Such a crop leaves every source unit of the row in the
/// source (batch-to-space crops what the source has), so a row can be
/// interleaved whole into a stage of [`CROPPED_ROWS_BYTES`] and its kept
/// bytes sent on through the line writers (`kernels::cropped_rows`). Rows of
/// whole lines only: streamed so, OpenVINO NCHW batch-to-space with crops
/// measured (ratio to memcpy, through the cache -> so) uint8 4x4 of
/// 512-byte rows 1.55-1.7 -> 1.0-1.35, float32 2x2 of 1-2 KiB rows
/// 1.0 -> 0.8-0.9; other rows were slower streamed (block 3, 510-1020
/// bytes: 1.1-1.25 -> 1.3-1.5). With AVX512-VBMI, [`crops_carried`] takes
/// such rows of any length first.
pub(crate) fn crops_row_ends(loops: &[Loop], unit: usize) -> bool {
    let row = cropped_row(loops, unit).map(|(x, y, _)| x.count * y.count * unit);
    row.is_some_and(|row| row <= CROPPED_ROWS_BYTES && row.is_multiple_of(64))
}

/// Whether the last two loops are a tile of interleaved rows cropped only
/// at their ends (see [`cropped_row`]), whatever the rows' length: the
/// executor's check before it runs the kernels that take such tiles.
pub(crate) fn crops_interleaved_rows(loops: &[Loop], unit: usize) -> bool {
    cropped_row(loops, unit).is_some()
}

/// The last two loops `x` and `y` of a tile that interleaves whole
/// destination rows cropped only at their ends (see [`crops_row_ends`]),
/// and the window's range of kept row positions, if they are such a tile.
fn cropped_row(loops: &[Loop], unit: usize) -> Option<(&Loop, &Loop, (usize, usize))> {
    let [.., x, y] = loops else { return None };
    let win = y.window?;
    let units = x.count.checked_mul(y.count)?;
    units.checked_mul(unit)?;
    let fits = win.outer == Some((loops.len() - 2) as u8)
        && win.ic == 1
        && win.oc == y.count as i64
        && y.ds == unit as isize
        && x.ss == unit as isize
        && x.ds == (y.count * unit) as isize;
    fits.then(|| (x, y, win.range(0, units)))
}

/// Whether `simd::interleave_carried` runs a tile that [`crops_row_ends`]
/// but for the rows' length (with AVX512-VBMI): each row interleaved in
/// registers and its kept bytes carried on to the next row's, the rows
/// (the loop around the tile) following one another in the destination.
/// Measured (ratio to memcpy, 2 runs alternating, best of each): OpenVINO
/// NCHW batch-to-space by 2 to 4 cropped on H and W (1 at the start, a
/// block less one at the end), 1 to 16 channels of uint8, float16 and
/// float32, 36 workloads: geomean 1.18 -> 0.87, above 1.10 24 -> 3
/// (before, through the cache, or rows of whole lines through a stage).
pub(crate) fn crops_carried(loops: &[Loop], unit: usize, isa: Isa) -> bool {
    let Some((x, y, (a, b))) = cropped_row(loops, unit) else { return false };
    let n = loops.len();
    let kept = (b.saturating_sub(a) * unit) as isize;
    let row_ds = if n >= 3 { loops[n - 3].ds } else { kept };
    interleave_units(x, y, unit) && interleaves_carried(isa, unit, y.count, x.count, (a * unit, b * unit), row_ds)
}

/// Bytes of the stage cropped interleaved rows are built in (see
/// [`crops_row_ends`]).
pub(crate) const CROPPED_ROWS_BYTES: usize = 16 << 10;

/// For each loop `j`: bytes of the contiguous destination block that one
/// index of loop `j` covers, or 0 if that block is not contiguous.
fn destination_blocks(loops: &[Loop], unit: usize, blocks: &mut ArrayVec<usize, MAX_LOOPS>) {
    blocks.clear();
    blocks.extend(loops.iter().map(|_| 0));
    let mut blk = Some(unit);
    for j in (0..loops.len()).rev() {
        blocks[j] = blk.unwrap_or(0);
        blk = blk.and_then(|b| (loops[j].ds == b as isize).then(|| b * loops[j].count));
    }
}

/// The product of counts: zero if any is zero, however large the others
/// (otherwise it is the size of a buffer that exists, so it fits).
fn count_product(mut counts: impl Iterator<Item = usize>) -> usize {
    counts.try_fold(1usize, |a, c| (c != 0).then(|| a.wrapping_mul(c))).unwrap_or(0)
}

/// Smallest unit (bytes) that streaming plans write through the line
/// writers. Below it a run costs more than it moves (measured, 64-byte
/// units: NHWC space-to-batch with 16 float32 channels 1.8-2.4x memcpy
/// through the writers, 0.95-0.98x through the cache).
const MIN_LINES_UNIT: usize = 128;

/// Most destination streams (a line writer each) that [`stream_order`]
/// has advance together.
const MAX_WRITE_STREAMS: usize = WRITERS;

/// Units from this size (bytes) on stay with the line writers rather than
/// being gathered or streamed row by row (see step 4 of
/// [`CopyPlan::build`]).
const MANY_STREAMS_UNIT: usize = 256;

/// Orders the loops for the line writers.
///
/// One loop is the *sweep*: the one whose steps are shortest on both sides.
/// Inside it run the loops that must (a shorter step on either side), and
/// no more: each destination stream, a position of the loops inside the
/// sweep (up to those that interleave inside its destination step), then
/// advances through the sweep as one contiguous stretch, written in whole
/// lines, while the sweep reads a few source streams. Outside it the loops
/// go in the source's order, except that loops which would keep more
/// streams open than there are writers are moved outermost.
///
/// More loops inside the sweep (in order of source step, up to 16 source
/// and 16 destination streams, for units from 256 bytes or sweeps of 4 KiB)
/// measured faster on earlier machines (256-byte units 1.0-1.2x memcpy
/// with 16 streams, 1.3-1.5x with 2 to 4) and slower on a Zen 4 (ratio to
/// memcpy, in one binary alternating, best of each: W1 0.77 -> 0.61, W3
/// 0.81 -> 0.66, W6 0.75 -> 0.61 over 5 runs, W11 0.92 -> 0.93; 72 unseen
/// NHWC workloads of 256- to 2048-byte units, 2 runs, geomean 0.82 ->
/// 0.66, above 1.10 16 -> 0).
///
/// Returns false, leaving the loops in their order, if the loops that must
/// run inside the sweep already make more destination streams than there
/// are writers.
fn stream_order(loops: &mut ArrayVec<Loop, MAX_LOOPS>) -> bool {
    let n = loops.len();
    let (ss, ds) = (|l: &Loop| l.ss.unsigned_abs(), |l: &Loop| l.ds.unsigned_abs());
    let Some(r) = (0..n).rev().min_by_key(|&j| ss(&loops[j]).max(ds(&loops[j]))) else {
        return true;
    };
    let (rs, rd) = (ss(&loops[r]), ds(&loops[r]));
    // Streams a loop inside the sweep multiplies: a destination stream
    // unless it interleaves inside the sweep's step.
    let writes = |l: &Loop| if ds(l) > rd { l.count } else { 1 };
    let mut inner = [false; MAX_LOOPS];
    let mut w = 1usize;
    for (j, l) in loops.iter().enumerate() {
        if j != r && (ss(l) < rs || ds(l) < rd) {
            inner[j] = true;
            w = w.saturating_mul(writes(l));
        }
    }
    if w > MAX_WRITE_STREAMS {
        return false;
    }
    let mut order: ArrayVec<usize, MAX_LOOPS> = (0..n).filter(|&j| j != r && !inner[j]).collect();
    order.sort_by_key(|&j| std::cmp::Reverse(ss(&loops[j])));
    // The outer loops that continue every stream (each steps by the
    // stretch the loops inside it cover): another loop inside one of these
    // keeps its streams open while it runs, multiplying them. Such loops
    // move outermost, outer ones first, until the open streams fit the writers.
    let mut chain = [false; MAX_LOOPS];
    let mut stretch = rd.saturating_mul(loops[r].count);
    while let Some(&j) = order.iter().find(|&&j| !chain[j] && ds(&loops[j]) == stretch) {
        chain[j] = true;
        stretch = stretch.saturating_mul(loops[j].count);
    }
    let mut moved = 0;
    while open_streams(&order, &chain, w, loops) > WRITERS {
        let Some(k) = (moved..order.len()).find(|&k| !chain[order[k]]) else { break };
        let j = order.remove(k);
        order.insert(moved, j);
        moved += 1;
    }
    order.push(r);
    let at = order.len();
    order.extend((0..n).filter(|&j| inner[j]));
    // Streams first, the loops interleaving inside a stream's step last.
    order[at..].sort_by_key(|&j| std::cmp::Reverse(ds(&loops[j])));
    permute(loops, &order);
    true
}

/// Destination streams open at once when the loops outside the sweep run
/// in `order` (outer first), `inner` streams inside the sweep: those inside
/// the sweep, times every non-chain loop inside a chain loop.
fn open_streams(order: &[usize], chain: &[bool; MAX_LOOPS], inner: usize, loops: &[Loop]) -> usize {
    let (mut open, mut pending) = (inner, 1usize);
    for &j in order.iter().rev() {
        if chain[j] {
            open = open.saturating_mul(pending);
            pending = 1;
        } else {
            pending = pending.saturating_mul(loops[j].count);
        }
    }
    open
}

/// Splits loop `j` (without a window, and not the outer loop of one) into
/// an outer loop of `count / f` steps of `f` and an inner loop of `f`,
/// right after it. `f` divides the count, and the nest has room for a loop.
fn split_loop(loops: &mut ArrayVec<Loop, MAX_LOOPS>, j: usize, f: usize) {
    let l = loops[j];
    debug_assert!(free(&l) && l.count.is_multiple_of(f));
    loops[j] = Loop { count: l.count / f, ss: l.ss * f as isize, ds: l.ds * f as isize, ..l };
    loops.insert(j + 1, Loop { count: f, ..l });
    for m in loops.iter_mut() {
        if let Some(o) = m.window.as_mut().and_then(|w| w.outer.as_mut()) {
            if *o as usize > j {
                *o += 1;
            }
        }
    }
}

/// Whether the innermost contiguous run of the destination reaches
/// [`MIN_DST_RUN`] and gathers runs of the source (one of its loops up to
/// that length steps one unit in the source): then writing it in order reads a few
/// source streams in order too, which the line writers would only slow
/// (measured, NHWC batch-to-space of 128-byte units: 1.9x memcpy through
/// the writers, 1.0x so; space-to-batch, whose runs read the source every
/// other unit, the other way round). Units from [`MANY_STREAMS_UNIT`] on
/// stay with the writers (NHWC space-to-depth of 256-byte units gathers
/// two source rows: 0.9-1.0x through them, 1.2-1.3x so).
fn gathers_source_runs(loops: &[Loop], unit: usize) -> bool {
    let mut run = unit;
    let mut gathers = false;
    for l in loops.iter().rev() {
        if l.ds != run as isize || run >= MIN_DST_RUN {
            break;
        }
        gathers |= l.ss == unit as isize;
        run = run.saturating_mul(l.count);
    }
    gathers && run >= MIN_DST_RUN
}

/// Smallest unit (bytes) for which streaming plans walk the source in order.
const MIN_SOURCE_ORDER_UNIT: usize = 64;

/// Bytes of contiguous destination kept innermost by [`source_order_outside_run`].
const MIN_DST_RUN: usize = 4 << 10;

/// Shortest destination run that [`source_order_outside_run`] keeps
/// innermost when the run reads one compact source block: one spread
/// over at most [`COMPACT_SPAN`] times its bytes.
const MIN_COMPACT_RUN: usize = 512;

/// See [`MIN_COMPACT_RUN`].
const COMPACT_SPAN: usize = 4;

/// Longest run [`source_order_outside_run`] keeps whole (a longer one is
/// split: the source block it reads stays in the cache).
const MAX_DST_RUN: usize = 64 << 10;

/// Orders the loops outside the innermost contiguous destination run of at
/// least [`MIN_DST_RUN`] bytes by decreasing source stride.
///
/// A run that would be much longer (past [`MAX_DST_RUN`]) is cut: its
/// outermost loop is split in two, and the outer part is ordered with the
/// others. Then a block of the source is read once for all the runs that
/// take from it, while it is in the cache (a 1-D space-to-batch by 4 read its
/// whole source four times, a quarter each time, at 3x memcpy).
fn source_order_outside_run(loops: &mut ArrayVec<Loop, MAX_LOOPS>, unit: usize) {
    let mut run = unit;
    // The source bytes the run's units lie in.
    let mut span = unit;
    let mut k = loops.len();
    while k > 0 && run < MIN_DST_RUN && loops[k - 1].ds == run as isize {
        if run >= MIN_COMPACT_RUN && span <= COMPACT_SPAN * run {
            // A run that reads one compact source block stops there: the
            // loops outside, in the source's order, then read the source
            // rows whole, rather than each run reading slices of rows
            // far apart (the 5-D space-to-batch in float16, W11's shape,
            // 1.6-1.75 -> 1.3x memcpy).
            break;
        }
        let l = loops[k - 1];
        span = span.saturating_add((l.count - 1).saturating_mul(l.ss.unsigned_abs()));
        let whole = run.saturating_mul(l.count);
        if whole > MAX_DST_RUN && free(&l) && loops.len() < MAX_LOOPS {
            if let Some(f) = run_factor(l.count, run) {
                // Loop k-1 becomes the outer part; the inner part, `f` of its
                // iterations, joins the run.
                split_loop(loops, k - 1, f);
                break;
            }
        }
        run = whole;
        k -= 1;
    }
    source_order_outside(loops, k);
}

/// The largest divisor `f` of `count` that makes a run of `run * f` bytes
/// between [`MIN_DST_RUN`] and [`MAX_DST_RUN`].
fn run_factor(count: usize, run: usize) -> Option<usize> {
    let most = (MAX_DST_RUN / run).min(count);
    (2..=most).rev().take_while(|&f| run * f >= MIN_DST_RUN).find(|&f| count.is_multiple_of(f))
}

/// Orders loops `..k` by decreasing source stride (a stable sort: ties keep
/// the destination's order).
fn source_order_outside(loops: &mut ArrayVec<Loop, MAX_LOOPS>, k: usize) {
    let mut order: ArrayVec<usize, MAX_LOOPS> = (0..loops.len()).collect();
    order[..k].sort_by_key(|&i| std::cmp::Reverse(loops[i].ss.unsigned_abs()));
    permute(loops, &order);
}

/// Puts loop `order[j]` at position `j`, re-anchoring each window on
/// whichever of its two loops is now inner.
fn permute(loops: &mut ArrayVec<Loop, MAX_LOOPS>, order: &[usize]) {
    let n = loops.len();
    let mut pos = [0usize; MAX_LOOPS];
    for (new, &old) in order.iter().enumerate() {
        pos[old] = new;
    }
    let mut out: ArrayVec<Loop, MAX_LOOPS> =
        order.iter().map(|&i| Loop { window: None, is_outer: false, ..loops[i] }).collect();
    for (old, l) in loops.iter().enumerate() {
        let Some(w) = l.window else { continue };
        match w.outer {
            None => out[pos[old]].window = Some(w),
            Some(o) => {
                let (inner, outer) = (pos[old], pos[o as usize]);
                if outer < inner {
                    out[inner].window = Some(Window { outer: Some(outer as u8), ..w });
                } else {
                    // p = oc * i_outer + ic * i_inner, with the roles swapped.
                    out[outer].window = Some(Window { outer: Some(inner as u8), oc: w.ic, ic: w.oc, ..w });
                }
            }
        }
    }
    for j in 0..n {
        if let Some(Window { outer: Some(o), .. }) = out[j].window {
            out[o as usize].is_outer = true;
        }
    }
    *loops = out;
}

/// Destination bytes from which rows of units without a vector kernel walk
/// the loops around them in the source's order (see [`choose_tile`]): past
/// the first-level caches, where the order of memory traffic matters.
const SOURCE_ORDER_BYTES: usize = 256 << 10;

/// Largest unit (bytes) worth a transposing tile (or, without a vector
/// kernel, the move of its source-contiguous loop next to the rows; from
/// 64 bytes on, [`source_order_outside_run`] orders the loops).
const MAX_TILE_UNIT: usize = 63;

/// Chooses the transposing tile (see [`CopyPlan::tile`]): the innermost
/// loop `y`, contiguous in the destination, and the nearest loop `x`
/// contiguous in the source, moved next to it. `y` may carry a window on
/// `x`'s index alone, or a constant one (padding or crop of an axis whose
/// block position `x` is, as OpenVINO's space-to-batch of NCHW tensors
/// pads `W`): the executor runs the tile where every unit is valid and the
/// few units at its edges one by one (`Exec::windowed_tile`). Returns
/// `None` if there is no such `x` (nothing moved), or else whether the last
/// two loops make a tile: `x` is moved next to `y` even where they do not
/// (see below), and then with `source_order` the loops outside them are
/// put in the source's order.
fn choose_tile(loops: &mut ArrayVec<Loop, MAX_LOOPS>, unit: usize, source_order: bool) -> Option<bool> {
    let n = loops.len();
    if n < 2 {
        return None;
    }
    // Long units already move as whole runs in destination order.
    if unit > MAX_TILE_UNIT {
        return None;
    }
    let u = unit as isize;
    let y = loops[n - 1];
    if y.is_outer || y.ds != u || y.ss == u {
        return None;
    }
    // The nearest source-contiguous loop that carries no window and is the
    // outer loop of no window but `y`'s: moving it inside the loops after
    // it leaves every window's outer loop outside the windowed one.
    let movable = |i: usize| {
        loops[i].window.is_none()
            && loops[..n - 1].iter().all(|l| l.window.is_none_or(|w| w.outer != Some(i as u8)))
            && y.window.is_none_or(|w| w.outer.is_none_or(|o| o as usize == i))
    };
    let x = (0..n - 1).rev().find(|&i| loops[i].ss == u && movable(i))?;
    // Units without a vector kernel run as plain strided runs (and one by
    // one at a window's edges): such a tile pays only where it turns short
    // rows of `y` into long runs of `x` (NHWC depth-to-space and
    // batch-to-space of a few channels); otherwise the loops run as rows of
    // `y`, with `x` moved next to them all the same, so that each source
    // block is read once (measured, ratio to memcpy: NHWC space-to-batch of
    // three float32 channels with padding 2.1 -> 1.5, of 8 channels
    // 1.5 -> 1.1; uint8 depth-to-space of 5 channels by 2 1.25 -> 1.0).
    let tile = vector_unit(unit) || y.count < loops[x].count;
    // `x` moves inward past loops none of whose windows involves it, so no
    // window changes sides: only the outer indices shift (`permute` would
    // rebuild every loop, 1,300 more instructions a call for S1).
    let moved = loops.remove(x);
    loops.insert(n - 2, moved);
    for l in loops.iter_mut() {
        if let Some(o) = l.window.as_mut().and_then(|w| w.outer.as_mut()) {
            if *o as usize == x {
                *o = (n - 2) as u8;
            } else if *o as usize > x {
                *o -= 1;
            }
        }
    }
    if !tile && source_order {
        // The rows read their source block once; the loops around them go
        // in the source's order, so that the source is read in order too
        // (NHWC space-to-batch with padding, float16 three channels 1.8 ->
        // 1.4x memcpy, float32 8 channels 1.17 -> 1.06x).
        source_order_outside(loops, n - 2);
    }
    Some(tile)
}

/// Whether a tile of units without a vector kernel interleaves its rows
/// with a byte-shuffle kernel (`engine::shuffle`) straight into whole
/// 16-byte vectors of the destination, every row 16-byte aligned: such a
/// tile streams.
fn streams_shuffled_rows(loops: &[Loop], unit: usize, isa: Isa) -> bool {
    let n = loops.len();
    let (x, y) = (&loops[n - 2], &loops[n - 1]);
    let row = x.count * y.count * unit;
    y.window.is_none()
        && x.ds == (y.count * unit) as isize
        && shuffle::interleaves(isa, unit, y.count)
        && row.is_multiple_of(16)
        && loops[..n - 2].iter().all(|l| l.ds.unsigned_abs().is_multiple_of(16))
}

/// Whether the vector tile kernels take units of `unit` bytes (integers of
/// 1 to 16 bytes; other units run as strided runs).
fn vector_unit(unit: usize) -> bool {
    matches!(unit, 1 | 2 | 4 | 8 | 16)
}

/// Shortest row (bytes per destination stream) of a streaming deinterleaving
/// tile that is not carried written straight into whole lines rather than
/// staged or stored through the cache. Measured on an AVX2 machine (Zen 3),
/// with streams not a line multiple apart (so not carried): uint8
/// pixel_unshuffle of 500- and 254-byte rows 0.86-0.95x memcpy so, against
/// 1.1-1.85x with 512 here; float16 of 500-byte rows 0.81-0.87x, against
/// 1.6x. (Earlier, on an AVX-512 machine before the carried kernels,
/// 512: float32 and float16 rows of 512 bytes and more 1.2-1.45x so,
/// 1.45-2.8x staged.)
const MIN_LINES_DEINTERLEAVE_ROW: usize = 128;

/// Bytes of the buffer a streaming tile is staged in (see [`TileStage`]).
pub(crate) const TILE_STAGE_BYTES: usize = 32 << 10;

/// Most destination streams a staged tile may write (each leaves as its own
/// streamed run per chunk: measured, 16 streams are slower than cached
/// stores, 4 much faster).
const MAX_TILE_STREAMS: usize = 8;

/// Shortest run of one destination stream worth staging a tile for.
const MIN_TILE_STREAM_RUN: usize = 1 << 10;

/// How a streaming tile plan is staged: `chunk` iterations of loop `level`
/// at a time, with every loop inside it (at most one more loop, the
/// *streams* loop, then the tile's two) run into a staging buffer where
/// each destination stream (a pair of streams-loop and tile-x indices) is
/// one contiguous run of `chunk` tile rows; each run then leaves with
/// streaming stores as one long write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TileStage {
    pub level: usize,
    pub chunk: usize,
}

/// The [`TileStage`] of a streaming tile plan, if it has one: the staged
/// loop must step every destination stream by exactly one tile row
/// (`ds == ny * unit`), so that `k` of its iterations put `k * ny * unit`
/// contiguous bytes in each stream, and neither it nor the streams loop may
/// carry a window.
fn tile_stage(loops: &[Loop], unit: usize) -> Option<TileStage> {
    let n = loops.len();
    let row = loops[n - 1].count * unit;
    let (level, streams) = row_level(loops, unit)?;
    if streams > MAX_TILE_STREAMS {
        return None;
    }
    let per_iteration = streams.checked_mul(row).filter(|&b| b <= TILE_STAGE_BYTES)?;
    let chunk = (TILE_STAGE_BYTES / per_iteration).min(loops[level].count);
    (chunk * row >= MIN_TILE_STREAM_RUN).then_some(TileStage { level, chunk })
}

/// The loop of a tile plan that steps every destination stream by exactly
/// one tile row (`ds == ny * unit`), with at most one loop (the *streams*
/// loop) between it and the tile, neither of them carrying a window, and
/// the number of destination streams inside it; `None` for an
/// interleaving tile (one destination stream, `x.ds == row`).
fn row_level(loops: &[Loop], unit: usize) -> Option<(usize, usize)> {
    let n = loops.len();
    let row = loops[n - 1].count * unit;
    if loops[n - 2].ds == row as isize {
        return None;
    }
    let level = (n.saturating_sub(4)..n - 2).rev().find(|&j| loops[j].ds == row as isize)?;
    if !loops[level..n - 2].iter().all(free) {
        return None;
    }
    Some((level, loops[level + 1..n - 1].iter().map(|l| l.count).product()))
}

/// The [`CopyPlan::carry_level`] of a streaming deinterleaving tile plan, if
/// `simd::deinterleave_carried` can run it: a [`row_level`] with at most
/// [`CARRIED_STREAMS`] streams, whose tile [`carries`], from whole source
/// rows (`y.ss` the `x.count` units of a row: the kernel takes no source
/// stride for `y`, which a strided input's plan need not have).
fn carry_level(loops: &[Loop], unit: usize, isa: Isa) -> Option<usize> {
    let n = loops.len();
    let (level, streams) = row_level(loops, unit)?;
    let (x, y) = (&loops[n - 2], &loops[n - 1]);
    let src_row = y.ss == (x.count * unit) as isize;
    (src_row && carries(x, y, unit, isa) && streams <= CARRIED_STREAMS).then_some(level)
}

/// Whether the carried kernels of `isa` run a deinterleaving tile of loops
/// `x` (the streams of a group) and `y` (a row of each): 2 to 4 streams
/// ([`vector_streams`]), below AVX512-VBMI a line multiple apart (joined in
/// the source, one offset in a line for the group), of units of 1 to 8
/// bytes (16 below VBMI; with it, units of other sizes too,
/// `simd::AnyUnits::groups_step`), rows of at least 64 bytes.
fn carries(x: &Loop, y: &Loop, unit: usize, isa: Isa) -> bool {
    let units = matches!(unit, 1 | 2 | 4 | 8)
        || (unit == 16 && isa < Isa::Avx512Vbmi)
        || (isa >= Isa::Avx512Vbmi && AnyUnits { size: unit, b: x.count }.groups_step().is_some());
    vector_streams(x.count, isa)
        && (isa >= Isa::Avx512Vbmi || x.ds.unsigned_abs().is_multiple_of(64))
        && units
        && y.count * unit >= 64
}

/// Bytes of the padded source rows that the executor stages for a
/// [`padded_carry_level`] at a time (at least one row of every stream
/// group).
pub(crate) const PADDED_ROWS_BYTES: usize = 64 << 10;

/// The [`CopyPlan::carry_level`] of a streaming tile that deinterleaves
/// padded source rows (OpenVINO's space-to-batch of NCHW tensors padded on
/// W, or on H alone): its inner loop's window, if it has one, covers a run
/// of each source row (`p = x + nx * y`, the padded position along the
/// row), the loop between the level and the tile (the stream groups, the
/// block rows) may have a window on the level's index (rows wholly
/// padding), one of the two has one, and the level none; the rows of every
/// group fit [`PADDED_ROWS_BYTES`]. The carried kernel reads the rows in
/// place, making up the padding where a read meets it (`simd::Padding`);
/// where it cannot (streams or units not aligned in the destination), the
/// executor copies the rows, padded, into a buffer and runs it on whole
/// rows from there.
fn padded_carry_level(loops: &[Loop], unit: usize, isa: Isa) -> Option<usize> {
    let n = loops.len();
    if n < 3 {
        return None;
    }
    let (x, y) = (&loops[n - 2], &loops[n - 1]);
    let row = y.count * unit;
    let src_row = y.ss == (x.count * unit) as isize
        && y.window.is_none_or(|w| w.outer == Some((n - 2) as u8) && w.oc == 1 && w.ic == x.count as i64);
    if !src_row {
        return None;
    }
    let level = (n.saturating_sub(4)..n - 2).rev().find(|&j| loops[j].ds == row as isize)?;
    // The stream groups' loop, if there is one between the level and the tile.
    let groups = (level + 1 < n - 2).then(|| &loops[level + 1]);
    if groups.is_some_and(|g| g.is_outer || g.window.is_some_and(|w| w.outer != Some(level as u8))) {
        return None;
    }
    if y.window.is_none() && groups.is_none_or(|g| g.window.is_none()) {
        // Not padded: `carry_level`'s.
        return None;
    }
    let groups = groups.map_or(1, |g| g.count);
    // Padded rows are read in place by the joined kernel, with
    // AVX512-VBMI too (AVX-512's, which also takes 16-byte units: NHWC
    // space-to-batch of 16 bytes a pixel padded on W); with VBMI, units of
    // other sizes by their gathers' masked reads (measured, ratio to
    // memcpy, 2 runs alternating: NHWC space-to-batch by 3 and 4 padded on
    // H and W, three uint8, float16 and float32 channels, 1.34-1.70 ->
    // 1.02-1.27; staged instead, 1.58-1.98).
    let fits = loops[level].window.is_none()
        && (carries(x, y, unit, isa) || carries(x, y, unit, isa.min(Isa::Avx512)))
        && groups.saturating_mul(x.count) <= CARRIED_STREAMS
        && groups.saturating_mul(row * x.count) <= PADDED_ROWS_BYTES;
    fits.then_some(level)
}

/// Whether the vector kernels of `isa` (below the carried ones of
/// AVX512-VBMI) split or zip `b` streams of a tile: 2 and 4 with every
/// vector, 3 with AVX2's byte shuffles.
fn vector_streams(b: usize, isa: Isa) -> bool {
    match b {
        2 | 4 => isa != Isa::Portable,
        3 => isa >= Isa::Avx2,
        _ => false,
    }
}

/// Whether `simd::interleave_carried` takes the units of an interleaving
/// tile (`x` its units, `y` its streams): 1 to 8 bytes (its own kernels),
/// or units of other sizes that it gathers (`simd::AnyUnits`) from 3 or 4
/// streams, or from 2 that are consecutive source rows (space-to-depth by
/// 2) or cropped at the rows' ends (a window on the streams). Two streams
/// of those elsewhere measured faster through the older kernels: NHWC
/// batch-to-space by 2 of three uint8, float16 and float32 channels,
/// cropped or not, 4 runs alternating, medians 0.60-0.97x memcpy so,
/// 0.76-1.07 gathered; space-to-depth by 2 of them 1.11-1.26 through the
/// byte-shuffle kernel or the cache, 0.88-1.06 gathered. With the kernels
/// of whole groups (`simd::interleaved_groups`), uncropped batch-to-space
/// by 2 still measured faster without (0.65-0.66 -> 0.73-0.80, 2 runs),
/// and cropped faster with (6 NHWC and OpenVINO workloads, 2 runs
/// alternating, geomean 0.849 -> 0.800 on one thread, 0.849 -> 0.728 on
/// two, where the cropped NHWC ones had stored through the cache).
fn interleave_units(x: &Loop, y: &Loop, unit: usize) -> bool {
    matches!(unit, 1 | 2 | 4 | 8)
        || (AnyUnits { size: unit, b: y.count }.groups_step().is_some()
            && (y.count > 2 || y.window.is_some() || x.count.checked_mul(unit).is_some_and(|row| y.ss == row as isize)))
}

/// The [`CopyPlan::carry_level`] of a streaming interleaving tile plan in
/// the destination's order, if `simd::interleave_carried` can run it: 2 to
/// 4 streams (the tile's inner loop) of at least 64 bytes each per row (its
/// outer loop) of units that [`interleave_units`] takes, inside a loop
/// stepping one
/// destination row (`ds` the row's bytes), itself perhaps inside a loop
/// stepping all of its rows, neither carrying a window: the destination
/// rows are one run.
fn interleave_carry_level(loops: &[Loop], unit: usize) -> Option<usize> {
    let n = loops.len();
    if n < 3 {
        return None;
    }
    let (x, y) = (&loops[n - 2], &loops[n - 1]);
    let row = x.count * y.count * unit;
    let fits = x.ds == (y.count * unit) as isize
        && matches!(y.count, 2..=4)
        && interleave_units(x, y, unit)
        && x.count * unit >= 64
        && loops[n - 3].ds == row as isize
        && free(&loops[n - 3]);
    if !fits {
        return None;
    }
    let rows = loops[n - 3].count * row;
    Some(if n >= 4 && loops[n - 4].ds == rows as isize && free(&loops[n - 4]) { n - 4 } else { n - 3 })
}

/// The [`CopyPlan::carry_level`] of a streaming tile plan in the
/// destination's order whose source rows each split into consecutive
/// destination segments, one of each of the `x.count` streams that
/// `simd::deinterleave_carried` splits the row into, row by row: the
/// tile's outer loop `x` steps a unit in the source (`x.ss == unit`) and a
/// segment in the destination (`x.ds`, the segment's bytes), its inner
/// loop `y` the row's `x.count` units (`y.ss == x.count * unit`), and the
/// loop around them, with no window, a row's segments: NHWC
/// depth-to-space of three-channel pixels, whose units (`b * c`
/// elements) have no kernel of their own (`simd::AnyUnits`; the others
/// stream as a tile). A whole source row is read once for its segments
/// (measured, ratio to memcpy, 2 runs alternating: by 3 and 4 of three
/// uint8, float16 and float32 channels and four uint8 by 3, 1.20-1.62 ->
/// 0.87-1.11; gathering each segment from the row, which then reads the
/// row once a segment, 1.26-1.57 at best).
fn segments_carry_level(loops: &[Loop], unit: usize, isa: Isa) -> Option<usize> {
    let n = loops.len();
    if n < 3 {
        return None;
    }
    let (x, y) = (&loops[n - 2], &loops[n - 1]);
    let seg = y.count.checked_mul(unit)?;
    let fits = isa >= Isa::Avx512Vbmi
        && AnyUnits { size: unit, b: x.count }.groups_step().is_some()
        && x.ss == unit as isize
        && x.ds == seg as isize
        && y.ss == (x.count * unit) as isize
        && y.window.is_none()
        && seg >= 64
        && x.count.checked_mul(seg).is_some_and(|r| loops[n - 3].ds == r as isize)
        && free(&loops[n - 3]);
    fits.then_some(n - 3)
}

/// A loop with no window and not the outer loop of one: a plain
/// repetition, which may merge, split, move or be run whole by a kernel.
fn free(l: &Loop) -> bool {
    l.window.is_none() && !l.is_outer
}

/// The window of a dropped inner loop (index always 0), moved onto its outer
/// loop: `p = oc * i_outer` alone. The outer loop of a window belongs to the
/// same space axis and carries no window of its own.
fn self_window(moved: Window) -> Window {
    Window { outer: None, oc: 0, ic: moved.oc, lo: moved.lo, hi: moved.hi }
}

#[cfg(test)]
mod tests {
    use super::super::geometry::{k, o, SpaceAxis};
    use super::*;

    fn c_strides(shape: &[usize], elem: usize) -> Vec<isize> {
        let mut s = vec![0isize; shape.len()];
        let mut acc = elem as isize;
        for i in (0..shape.len()).rev() {
            s[i] = acc;
            acc *= shape[i] as isize;
        }
        s
    }

    /// An NHWC tensor of `shape` blocked by `block` on H and W: the block
    /// positions go to the batch (space-to-batch) or to the channels
    /// (depth-to-space's input).
    fn nhwc(shape: [usize; 4], block: usize, to_batch: bool) -> Geometry {
        nhwc_padded(shape, block, [0, 0], to_batch)
    }

    /// [`nhwc`] with H and W padded by `pad[0]` and `pad[1]` at each end
    /// (cropped, run backward): `shape` is the tensor's without them.
    fn nhwc_padded(shape: [usize; 4], block: usize, pad: [usize; 2], to_batch: bool) -> Geometry {
        let op = "t";
        let [n, h, w, c] = shape.map(|d| d as u64);
        let [ph, pw] = pad.map(|p| p as u64);
        let block = block as u64;
        let space = [
            SpaceAxis::plain(n),
            SpaceAxis::new(op, h, ph, ph, block).unwrap(),
            SpaceAxis::new(op, w, pw, pw, block).unwrap(),
            SpaceAxis::plain(c),
        ];
        let groups: [&[Factor]; 4] = if to_batch {
            [&[k(1), k(2), o(0)], &[o(1)], &[o(2)], &[o(3)]]
        } else {
            [&[o(0)], &[o(1)], &[o(2)], &[k(1), k(2), o(3)]]
        };
        Geometry::new(op, &space, &groups).unwrap()
    }

    /// Compiles `g` for float32 row-major tensors of the two shapes.
    fn compile_f32(g: &Geometry, dir: Direction, space: &[usize], block: &[usize], streaming: bool) -> CopyPlan {
        compile_c(g, dir, 4, space, block, streaming)
    }

    /// The plan of C-contiguous layouts of `elem`-byte elements.
    fn compile_c(
        g: &Geometry,
        dir: Direction,
        elem: usize,
        space: &[usize],
        block: &[usize],
        streaming: bool,
    ) -> CopyPlan {
        let (ss, bs) = (c_strides(space, elem), c_strides(block, elem));
        CopyPlan::compile(g, dir, elem, &Layouts { space: &ss, block: &bs }, streaming, Isa::baseline())
    }

    #[test]
    fn nhwc_space_to_depth_backward_coalesces_block_and_channels() {
        let g = nhwc([2, 4, 6, 3], 2, false);
        let p = compile_f32(&g, Direction::Backward, &[2, 4, 6, 3], &[2, 2, 3, 12], false);
        // Depth-to-space writes runs of block * C = 6 elements = 24 bytes.
        assert_eq!(p.unit, 24);
        // Batch and outer height merge (contiguous on both sides); then block row, outer width.
        assert_eq!(p.loops.iter().map(|l| l.count).collect::<Vec<_>>(), vec![4, 2, 3]);
        assert!(!p.fill && !p.empty && !p.all_padding);
    }

    #[test]
    fn identity_geometry_is_one_memcpy() {
        let op = "t";
        let space = [SpaceAxis::plain(5), SpaceAxis::plain(7)];
        let g = Geometry::new(op, &space, &[&[o(0)], &[o(1)]]).unwrap();
        let s = c_strides(&[5, 7], 2);
        for streaming in [false, true] {
            let layouts = Layouts { space: &s, block: &s };
            let p = CopyPlan::compile(&g, Direction::Forward, 2, &layouts, streaming, Isa::baseline());
            assert!(p.loops.is_empty(), "streaming {streaming}");
            assert_eq!(p.unit, 70, "streaming {streaming}");
        }
    }

    #[test]
    fn padding_makes_windows() {
        // space-to-batch of [1, 3] with block 2 and paddings [1, 0] on axis 1.
        let op = "t";
        let space = [SpaceAxis::plain(1), SpaceAxis::new(op, 3, 1, 0, 2).unwrap()];
        let g = Geometry::new(op, &space, &[&[k(1), o(0)], &[o(1)]]).unwrap();
        let ss = c_strides(&[1, 3], 1);
        let bs = c_strides(&[2, 2], 1);
        let p =
            CopyPlan::compile(&g, Direction::Forward, 1, &Layouts { space: &ss, block: &bs }, false, Isa::baseline());
        assert_eq!(p.loops.len(), 2);
        let w = p.loops[1].window.unwrap();
        assert_eq!((w.outer, w.oc, w.ic, w.lo, w.hi), (Some(0), 1, 2, 1, 4));
        // k = 0: p = 2*o in [1, 4) -> o in [1, 2); k = 1: p = 2*o + 1 -> o in [0, 2).
        assert_eq!(w.range(0, 2), (1, 2));
        assert_eq!(w.range(1, 2), (0, 2));
    }

    #[test]
    fn a_cropped_block_loop_merges_with_the_loop_inside_it() {
        // OpenVINO's 5-D batch-to-space example (the S2 workload): input
        // [48, 3, 3, 1, 3], block [1, 2, 4, 3, 1], crops 1 and 1 on axis 2.
        let op = "t";
        let space = [
            SpaceAxis::plain(2),
            SpaceAxis::new(op, 6, 0, 0, 2).unwrap(),
            SpaceAxis::new(op, 10, 1, 1, 4).unwrap(),
            SpaceAxis::new(op, 3, 0, 0, 3).unwrap(),
            SpaceAxis::plain(3),
        ];
        let g = Geometry::new(op, &space, &[&[k(1), k(2), k(3), o(0)], &[o(1)], &[o(2)], &[o(3)], &[o(4)]]).unwrap();
        let p = compile_f32(&g, Direction::Backward, &[2, 6, 10, 3, 3], &[48, 3, 3, 1, 3], false);
        // The cropped block factor of axis 2 (4) and the block factor of
        // axis 3 (3) are one loop of 12 rows of 3 floats (a tiny plan: the
        // loops around them stay in the destination's order).
        assert_eq!(p.unit, 12);
        assert_eq!(p.loops.iter().map(|l| l.count).collect::<Vec<_>>(), vec![6, 2, 3, 12]);
        let w = p.loops[3].window.unwrap();
        assert_eq!((w.outer, w.oc, w.ic, w.lo, w.hi), (Some(2), 12, 1, 3, 33));
        // Outer index 0 loses its first block row (3 merged rows), 2 its last.
        assert_eq!([w.range(0, 12), w.range(1, 12), w.range(2, 12)], [(3, 12), (0, 12), (0, 9)]);
    }

    #[test]
    fn a_scaled_window_that_overflows_is_not_merged() {
        let w = Window { outer: Some(0), oc: 1 << 40, ic: 1, lo: 0, hi: 1 << 40 };
        assert_eq!(w.scaled(1 << 23), None);
        assert_eq!(w.scaled(2).map(|s| (s.oc, s.lo, s.hi)), Some((1 << 41, 0, 1 << 41)));
    }

    /// NCHW tensors of `space` blocked by `block` on H and W, the block
    /// positions after the channels (pixel_unshuffle's output,
    /// pixel_shuffle's input), compiled for streaming `elem`-byte elements
    /// with `isa`.
    fn nchw_blocked(space: [usize; 4], block: usize, elem: usize, dir: Direction, isa: Isa) -> CopyPlan {
        let op = "t";
        let b = block as u64;
        let axes = [
            SpaceAxis::plain(space[0] as u64),
            SpaceAxis::plain(space[1] as u64),
            SpaceAxis::new(op, space[2] as u64, 0, 0, b).unwrap(),
            SpaceAxis::new(op, space[3] as u64, 0, 0, b).unwrap(),
        ];
        let g = Geometry::new(op, &axes, &[&[o(0)], &[o(1), k(2), k(3)], &[o(2)], &[o(3)]]).unwrap();
        let blocked = [space[0], space[1] * block * block, space[2] / block, space[3] / block];
        let (ss, bs) = (c_strides(&space, elem), c_strides(&blocked, elem));
        CopyPlan::compile(&g, dir, elem, &Layouts { space: &ss, block: &bs }, true, isa)
    }

    /// Streaming uint8 pixel_unshuffle by 4 (W10 of the benchmarks): the
    /// loop over output rows carries the sixteen streams (four block rows of
    /// four block columns, each 128-byte row continuing the last), walked in
    /// the source's order, with every vector kernel: in registers with
    /// AVX512-VBMI, joined in the source below it, where the four streams
    /// of a block row are a line multiple apart. Planes that are not (127 x
    /// 127 bytes) are carried with VBMI alone; the portable kernels carry
    /// nothing. Sixteen streams are too many to stage, so a tile that is not
    /// carried stores through the cache.
    #[test]
    fn streaming_deinterleave_carries_rows() {
        let space = [64, 3, 512, 512];
        for isa in [Isa::Avx512Vbmi, Isa::Avx512, Isa::Avx2, Isa::Sse2] {
            let p = nchw_blocked(space, 4, 1, Direction::Forward, isa);
            assert!(p.tile && p.nt && !p.lines && p.tile_stage.is_none(), "{isa:?}");
            assert_eq!(p.carry_level, Some(p.loops.len() - 4), "{isa:?}");
            let inner: Vec<_> = p.loops[p.loops.len() - 4..].iter().map(|l| (l.count, l.ss, l.ds)).collect();
            let plane = 128 * 128;
            assert_eq!(inner, vec![(128, 2048, 128), (4, 512, 4 * plane), (4, 1, plane), (128, 4, 1)], "{isa:?}");
        }
        let p = nchw_blocked(space, 4, 1, Direction::Forward, Isa::Portable);
        assert!(p.tile && !p.nt && p.carry_level.is_none() && p.tile_stage.is_none());
        let odd = [64, 3, 508, 508];
        let p = nchw_blocked(odd, 4, 1, Direction::Forward, Isa::Avx512Vbmi);
        assert_eq!(p.carry_level, Some(p.loops.len() - 4));
        for isa in [Isa::Avx512, Isa::Avx2, Isa::Sse2] {
            let p = nchw_blocked(odd, 4, 1, Direction::Forward, isa);
            assert!(p.tile && !p.nt && p.carry_level.is_none(), "{isa:?}");
        }
    }

    /// OpenVINO's space-to-batch of an NCHW uint8 tensor padded by 2 on H
    /// and W, block 4: the block column's loop moves inside the loop over
    /// output rows, next to the output columns, whose padding window it is
    /// the outer loop of: a windowed tile. Streaming, its rows are carried,
    /// their padding made up where it is read (the loop over output rows,
    /// the block rows inside it with their window on it); with 15 channels
    /// of 127 x 127, whose batches are not a line multiple long, it stores
    /// through the cache.
    #[test]
    fn padded_columns_make_a_windowed_tile() {
        let p = ov_space_to_batch_by_4(16, (508, 2), (508, 2));
        assert!(p.tile && p.nt && p.padded && p.tile_stage.is_none());
        let n = p.loops.len();
        assert_eq!(p.carry_level, Some(n - 4));
        let (x, y) = (p.loops[n - 2], p.loops[n - 1]);
        assert_eq!((x.count, x.ss, x.ds, x.window), (4, 1, 16 * 16 * 128 * 128, None));
        assert_eq!((y.count, y.ss, y.ds), (128, 4, 1));
        let w = y.window.unwrap();
        assert_eq!((w.outer, w.oc, w.ic, w.lo, w.hi), (Some((n - 2) as u8), 1, 4, 2, 510));
        // Block column 0 is padded at the start of a row, 3 at its end.
        assert_eq!((w.range(0, 128), w.range(3, 128)), ((1, 128), (0, 127)));
        // The block rows (4, one source row each) inside the output rows
        // (128, four source rows each), with the window of the padded rows.
        let (rows, groups) = (p.loops[n - 4], p.loops[n - 3]);
        assert_eq!((rows.count, rows.ss, rows.ds, groups.count, groups.ss), (128, 4 * 508, 128, 4, 508));
        assert_eq!(groups.window.map(|w| (w.outer, w.lo, w.hi)), Some((Some((n - 4) as u8), 2, 510)));
        let p = ov_space_to_batch_by_4(15, (504, 2), (504, 2));
        assert!(p.tile && !p.nt && !p.padded && p.carry_level.is_none() && p.tile_stage.is_none());
        let n = p.loops.len();
        assert!(p.loops[n - 1].window.is_some_and(|w| w.outer == Some((n - 2) as u8)));
    }

    /// The same padded on H alone: the tile has no window, the block rows'
    /// loop has (rows wholly padding), and the rows are carried as padded
    /// rows all the same. Without padding, the ordinary carry level.
    #[test]
    fn rows_padded_on_h_alone_are_carried() {
        let p = ov_space_to_batch_by_4(16, (504, 2), (508, 0));
        let n = p.loops.len();
        assert!(p.tile && p.nt && p.padded && p.carry_level == Some(n - 4), "{p:?}");
        let (rows, groups, x, y) = (p.loops[n - 4], p.loops[n - 3], p.loops[n - 2], p.loops[n - 1]);
        assert_eq!((x.count, y.count, y.ss, y.window), (4, 127, 4, None));
        assert_eq!((rows.count, rows.ds, groups.count, groups.ss), (127, 127, 4, 508));
        assert_eq!(groups.window.map(|w| (w.outer, w.lo, w.hi)), Some((Some((n - 4) as u8), 2, 506)));
        let p = ov_space_to_batch_by_4(16, (508, 0), (508, 0));
        assert!(p.tile && p.nt && !p.padded && p.carry_level.is_some(), "{p:?}");
    }

    /// Streaming NHWC space-to-batch 2x2 padded by 1 on H and W: pixels of
    /// 16 bytes (16 uint8 channels) and of 8 make a padded deinterleaving
    /// tile whose rows are carried, with AVX512-VBMI (the joined kernel of
    /// AVX-512 reads them in place, 16-byte units too) as with AVX-512;
    /// 16-byte units are not carried unpadded with VBMI (its own kernel
    /// takes units of up to 8 bytes).
    #[test]
    fn padded_rows_of_16_byte_units_are_carried_with_vbmi() {
        for (c, isa) in [(16, Isa::Avx512Vbmi), (16, Isa::Avx512), (8, Isa::Avx512Vbmi)] {
            let shape = [4, 510, 510, c];
            let g = nhwc_padded(shape, 2, [1, 1], true);
            let (ss, bs) = (c_strides(&shape, 1), c_strides(&[16, 256, 256, c], 1));
            let p = CopyPlan::compile(&g, Direction::Forward, 1, &Layouts { space: &ss, block: &bs }, true, isa);
            assert_eq!(p.unit, c, "{c} {isa:?}");
            assert!(p.tile && p.nt && p.padded && p.carry_level.is_some(), "{c} {isa:?}: {p:?}");
        }
        let g = nhwc([4, 512, 512, 16], 2, true);
        let (ss, bs) = (c_strides(&[4, 512, 512, 16], 1), c_strides(&[16, 256, 256, 16], 1));
        let p =
            CopyPlan::compile(&g, Direction::Forward, 1, &Layouts { space: &ss, block: &bs }, true, Isa::Avx512Vbmi);
        assert!(p.tile && p.carry_level.is_none() && !p.padded, "{p:?}");
    }

    /// The streaming AVX2 plan of OpenVINO's space-to-batch of a uint8
    /// tensor `[16, c, h, w]`, block 4 on H and W, H padded by `ph` at
    /// both ends and W by `pw`.
    fn ov_space_to_batch_by_4(c: usize, (h, ph): (usize, usize), (w, pw): (usize, usize)) -> CopyPlan {
        let op = "t";
        let space = [
            SpaceAxis::plain(16),
            SpaceAxis::plain(c as u64),
            SpaceAxis::new(op, h as u64, ph as u64, ph as u64, 4).unwrap(),
            SpaceAxis::new(op, w as u64, pw as u64, pw as u64, 4).unwrap(),
        ];
        let g = Geometry::new(op, &space, &[&[k(2), k(3), o(0)], &[o(1)], &[o(2)], &[o(3)]]).unwrap();
        let out = [256, c, (h + 2 * ph) / 4, (w + 2 * pw) / 4];
        let (ss, bs) = (c_strides(&[16, c, h, w], 1), c_strides(&out, 1));
        CopyPlan::compile(&g, Direction::Forward, 1, &Layouts { space: &ss, block: &bs }, true, Isa::Avx2)
    }

    /// Streaming float32 pixel_shuffle by 2 (W8 of the benchmarks): with
    /// AVX512-VBMI, in the destination's order, the output rows (outer row,
    /// then block row) one run carried across rows; the tile interleaves
    /// the block columns' two planes.
    #[test]
    fn streaming_interleave_carries_rows_with_vbmi() {
        let space = [8, 16, 512, 512];
        let p = nchw_blocked(space, 2, 4, Direction::Backward, Isa::Avx512Vbmi);
        assert!(p.tile && p.nt && p.tile_stage.is_none());
        assert_eq!(p.carry_level, Some(p.loops.len() - 4));
        let inner: Vec<_> = p.loops[p.loops.len() - 4..].iter().map(|l| (l.count, l.ss, l.ds)).collect();
        let (row, plane) = (512 * 4, 256 * 256 * 4);
        assert_eq!(inner, vec![(256, 1024, 2 * row), (2, 2 * plane, row), (256, 4, 8), (2, plane, 4)]);
        let p = nchw_blocked(space, 2, 4, Direction::Backward, Isa::Avx512);
        assert!(p.tile && p.nt && p.carry_level.is_none());
    }

    /// Streaming NHWC batch-to-space 2x2 of 128-byte units (32 float32
    /// channels): each output pixel pair gathers one unit from each of its
    /// two block columns, 256-byte rows that continue one another, written
    /// in order without the line writers: streamed straight from the
    /// source, unit by unit (`streams_continued_rows`). So are 256-byte
    /// units (W2 of the benchmarks); with 512-byte units the writers run.
    #[test]
    fn gathered_runs_of_short_units_skip_the_line_writers() {
        for c in [32, 64, 128] {
            let p = compile_f32(
                &nhwc([8, 256, 256, c], 2, true),
                Direction::Backward,
                &[8, 256, 256, c],
                &[32, 128, 128, c],
                true,
            );
            let unit = 4 * c;
            assert_eq!(p.unit, unit);
            assert!(p.nt && !p.tile, "{c} channels");
            assert_eq!(p.lines, unit == 512, "{c} channels");
            if !p.lines {
                let [.., x, y] = p.loops[..] else { panic!("{c} channels: {} loops", p.loops.len()) };
                assert_eq!((x.ss, x.ds, y.count, y.ds), (unit as isize, 2 * unit as isize, 2, unit as isize));
                assert!(streams_continued_rows(&p.loops, p.unit, p.fill), "{c} channels");
            }
        }
    }

    /// Streaming NHWC space-to-depth of three float32 channels: 24-byte
    /// units, with no vector kernel. An output pixel takes one unit from
    /// each of two source rows (rows of two units); the tile runs them as
    /// two long runs instead, one per source row, through the cache.
    #[test]
    fn short_units_without_a_vector_kernel_store_through_the_cache() {
        let g = nhwc([1, 12, 512, 3], 2, false);
        let p = compile_f32(&g, Direction::Forward, &[1, 12, 512, 3], &[1, 6, 256, 12], true);
        assert!(!p.nt && p.tile && !p.lines);
        assert_eq!(p.unit, 24);
        let n = p.loops.len();
        let (x, y) = (p.loops[n - 2], p.loops[n - 1]);
        assert_eq!([(x.count, x.ss, x.ds), (y.count, y.ss, y.ds)], [(256, 24, 48), (2, 512 * 12, 24)]);
    }

    /// Streaming NHWC space-to-depth by 2 of three uint8 channels: 6-byte
    /// units (two pixels), a tile interleaving two source rows. With the
    /// byte-shuffle kernels (AVX2 plans), rows of whole 16-byte vectors
    /// (512 pixels: 3072 bytes) stream; rows of 510 pixels, and baseline
    /// plans, store through the cache.
    #[test]
    fn interleaved_three_channel_rows_of_whole_vectors_stream() {
        for (w, isa, streams) in [(512, Isa::Avx2, true), (510, Isa::Avx2, false), (512, Isa::Sse2, false)] {
            let g = nhwc([1, 12, w, 3], 2, false);
            let (ss, bs) = (c_strides(&[1, 12, w, 3], 1), c_strides(&[1, 6, w / 2, 12], 1));
            let p = CopyPlan::compile(&g, Direction::Forward, 1, &Layouts { space: &ss, block: &bs }, true, isa);
            assert!(p.tile && !p.lines, "{w} {isa:?}");
            assert_eq!((p.unit, p.nt), (6, streams), "{w} {isa:?}");
        }
    }

    /// Blocks and instruction sets, and whether the carried kernels take
    /// units of other sizes (`simd::AnyUnits`) with them, deinterleaving
    /// and interleaving: 2 to 4 streams, with AVX512-VBMI (interleaving 2
    /// only from consecutive source rows or cropped ones, which these are
    /// not).
    const CARRIED_OTHER_UNITS: [(usize, Isa, [bool; 2]); 4] = [
        (3, Isa::Avx512Vbmi, [true, true]),
        (4, Isa::Avx512Vbmi, [true, true]),
        (2, Isa::Avx512Vbmi, [true, false]),
        (3, Isa::Avx512, [false, false]),
    ];

    /// NHWC space-to-batch and batch-to-space of three uint8 channels
    /// (3-byte units, which no tile kernel of their own takes): with
    /// AVX512-VBMI, a streaming tile that the carried kernels gather
    /// (`simd::AnyUnits`), deinterleaving (by 2 to 4) and interleaving (by
    /// 3 and 4); otherwise the plan they had, through the cache.
    #[test]
    fn three_channel_tiles_of_two_to_four_streams_are_carried_with_vbmi() {
        for (b, isa, [deinterleaved, interleaved]) in CARRIED_OTHER_UNITS {
            // Rows of 120 pixels: by 2, 360 bytes, not whole 16-byte
            // vectors (which the byte-shuffle kernel would stream).
            let g = nhwc([1, 12, 120, 3], b, true);
            let (space, batch) = ([1, 12, 120, 3], [b * b, 12 / b, 120 / b, 3]);
            let (ss, bs) = (c_strides(&space, 1), c_strides(&batch, 1));
            for (dir, carried) in [(Direction::Forward, deinterleaved), (Direction::Backward, interleaved)] {
                let p = CopyPlan::compile(&g, dir, 1, &Layouts { space: &ss, block: &bs }, true, isa);
                let what = format!("by {b}, {isa:?}, {dir:?}");
                assert_eq!(p.unit, 3, "{what}");
                assert_eq!(p.carry_level.is_some(), carried, "{what}");
                assert_eq!(p.nt, carried, "{what}");
                if carried {
                    assert!(p.tile && !p.padded && p.tile_stage.is_none(), "{what}");
                }
            }
        }
    }

    /// NHWC batch-to-space by 2 of three uint8 channels cropped by 1 at each
    /// end of W: with AVX512-VBMI, its two streams (batches far apart)
    /// interleaved in registers and the kept bytes streamed
    /// ([`crops_carried`]); below VBMI, through the cache. Uncropped, such
    /// streams are not carried (see [`CARRIED_OTHER_UNITS`]).
    #[test]
    fn three_channel_batch_to_space_by_two_cropped_is_carried_with_vbmi() {
        let space = [1, 12, 118, 3];
        let g = nhwc_padded(space, 2, [0, 1], true);
        let (ss, bs) = (c_strides(&space, 1), c_strides(&[4, 6, 60, 3], 1));
        for (isa, carried) in [(Isa::Avx512Vbmi, true), (Isa::Avx512, false)] {
            let p = CopyPlan::compile(&g, Direction::Backward, 1, &Layouts { space: &ss, block: &bs }, true, isa);
            assert_eq!(p.unit, 3, "{isa:?}");
            assert!(p.tile && p.loops[p.loops.len() - 1].window.is_some(), "{isa:?}");
            assert_eq!(p.nt, carried, "{isa:?}");
            assert!(!carried || crops_carried(&p.loops, p.unit, isa), "{isa:?}");
        }
    }

    /// NHWC space-to-depth by 2 of three channels: two consecutive source
    /// rows interleaved, units of 6 bytes (uint8) or 24 (float32). With
    /// AVX512-VBMI, a streaming tile whose rows the carried kernels gather
    /// (`interleave_units`), the uint8 rows of whole 16-byte vectors
    /// too (which the byte-shuffle kernel streams otherwise); below VBMI,
    /// not. So is depth-to-space by 2 (two streams deinterleaved).
    #[test]
    fn three_channel_space_to_depth_by_two_is_carried_with_vbmi() {
        // Rows of 128 pixels: 384 bytes of uint8, whole 16-byte vectors.
        let g = nhwc([1, 12, 128, 3], 2, false);
        let (space, depth) = ([1, 12, 128, 3], [1, 6, 64, 12]);
        for elem in [1, 4] {
            let (ss, ds) = (c_strides(&space, elem), c_strides(&depth, elem));
            for isa in [Isa::Avx512Vbmi, Isa::Avx512, Isa::Avx2] {
                for dir in [Direction::Forward, Direction::Backward] {
                    let p = CopyPlan::compile(&g, dir, elem, &Layouts { space: &ss, block: &ds }, true, isa);
                    let what = format!("{elem}-byte elements, {isa:?}, {dir:?}");
                    let carried = isa == Isa::Avx512Vbmi;
                    assert_eq!(p.unit, 6 * elem, "{what}");
                    assert_eq!(p.carry_level.is_some(), carried, "{what}");
                    if carried && dir == Direction::Forward {
                        let [.., x, y] = &p.loops[..] else { panic!("{what}: no tile") };
                        assert_eq!((x.count, y.count, y.ss), (64, 2, (384 * elem) as isize), "{what}");
                        assert!(p.tile && p.nt && !p.segments && p.tile_stage.is_none(), "{what}");
                    }
                }
            }
        }
    }

    /// NHWC depth-to-space of three uint8 channels (units of `3 * b`
    /// bytes): with AVX512-VBMI, by 2 to 4, each input row deinterleaved
    /// into the output rows it holds, carried row by row (`segments`);
    /// below VBMI, not.
    #[test]
    fn three_channel_depth_to_space_carries_segments_with_vbmi() {
        for (b, isa, [carried, _]) in CARRIED_OTHER_UNITS {
            let g = nhwc([1, 12, 120, 3], b, false);
            let (space, depth) = ([1, 12, 120, 3], [1, 12 / b, 120 / b, 3 * b * b]);
            let (ss, ds) = (c_strides(&space, 1), c_strides(&depth, 1));
            let p = CopyPlan::compile(&g, Direction::Backward, 1, &Layouts { space: &ss, block: &ds }, true, isa);
            let what = format!("by {b}, {isa:?}");
            assert_eq!(p.unit, 3 * b, "{what}");
            assert_eq!((p.segments, p.carry_level.is_some()), (carried, carried), "{what}");
            if carried {
                let [.., x, y] = &p.loops[..] else { panic!("{what}: no tile") };
                assert_eq!((x.count, x.ds, y.ss), (b, 360, (3 * b * b) as isize), "{what}");
            }
        }
    }

    /// NHWC space-to-batch 2x2 of three float32 channels with one pixel of
    /// padding on each side, and its inverse: 12-byte units, which have no
    /// vector kernel. Forward, the block column moves next to the output
    /// row (each source row is read once) without making a tile: the rows
    /// of 128 units run as they are. Backward, the two block columns
    /// interleave in each output row; the tile runs them as two long runs.
    #[test]
    fn windowed_units_without_a_vector_kernel_tile_only_short_rows() {
        let op = "t";
        let space = [
            SpaceAxis::plain(16),
            SpaceAxis::new(op, 254, 1, 1, 2).unwrap(),
            SpaceAxis::new(op, 254, 1, 1, 2).unwrap(),
            SpaceAxis::plain(3),
        ];
        let g = Geometry::new(op, &space, &[&[k(1), k(2), o(0)], &[o(1)], &[o(2)], &[o(3)]]).unwrap();
        let (space, block) = ([16, 254, 254, 3], [64, 128, 128, 3]);
        let p = compile_f32(&g, Direction::Forward, &space, &block, false);
        assert_eq!(p.unit, 12);
        assert!(!p.tile);
        let n = p.loops.len();
        let (x, y) = (p.loops[n - 2], p.loops[n - 1]);
        assert_eq!((x.count, x.ss, y.count, y.ss, y.ds), (2, 12, 128, 24, 12));
        assert_eq!(y.window.map(|w| w.outer), Some(Some(n as u8 - 2)));
        // Outside the rows, the source's order: batch, row, block row.
        let outer: Vec<_> = p.loops[..n - 2].iter().map(|l| (l.count, l.ss)).collect();
        assert_eq!(outer, vec![(16, 254 * 254 * 12), (128, 2 * 254 * 12), (2, 254 * 12)]);
        let p = compile_f32(&g, Direction::Backward, &space, &block, false);
        assert!(p.tile);
        let (x, y) = (p.loops[n - 2], p.loops[n - 1]);
        assert_eq!((x.count, x.ss, x.ds, y.count, y.ds), (128, 12, 24, 2, 12));
    }

    /// Streaming NHWC space-to-batch 2x2 (W1 of the benchmarks): the output
    /// row is the sweep (128 units of 256 bytes, read every other unit),
    /// with the two block columns inside it (they interleave inside its
    /// source step): two destination streams, through the line writers;
    /// the block rows and the output rows outside it, in the source's
    /// order.
    #[test]
    fn streaming_long_units_sweep_block_columns() {
        let (space, block) = ([8, 256, 256, 64], [32, 128, 128, 64]);
        let g = nhwc(space, 2, true);
        let p = compile_f32(&g, Direction::Forward, &space, &block, true);
        assert!(p.lines && p.nt);
        assert_eq!(p.unit, 256);
        let loops: Vec<_> = p.loops.iter().map(|l| (l.count, l.ss, l.ds)).collect();
        let (row, batch) = (256 * 256, 8 * 128 * 128 * 256);
        assert_eq!(loops, vec![(8 * 128, 2 * row, 128 * 256), (2, row, 2 * batch), (128, 512, 256), (2, 256, batch)]);
        // Not streaming: no writers, the destination's order.
        let p = compile_f32(&g, Direction::Forward, &space, &block, false);
        assert!(!p.lines && !p.nt);
    }

    /// Streaming 5-D space-to-batch of float16 by (2, 4, 3) over 32
    /// channels, padded on the middle axis (W11's shape): each 512-byte
    /// destination run gathers 8 units of one compact source block (every
    /// third 64-byte unit of 1.5 KiB), so it stays the innermost run, and the
    /// loops outside it walk the source rows in order: the padded axis's
    /// outer loop (its rows 6 KiB apart) before the block positions inside a
    /// row. Without the stop, runs of 20 rows (10 KiB) read slices of rows
    /// 6 KiB apart.
    #[test]
    fn compact_source_blocks_keep_short_runs_innermost() {
        let op = "t";
        let space = [
            SpaceAxis::plain(2),
            SpaceAxis::new(op, 4, 0, 0, 2).unwrap(),
            SpaceAxis::new(op, 78, 1, 1, 4).unwrap(),
            SpaceAxis::new(op, 24, 0, 0, 3).unwrap(),
            SpaceAxis::plain(32),
        ];
        let groups: [&[Factor]; 5] = [&[k(1), k(2), k(3), o(0)], &[o(1)], &[o(2)], &[o(3)], &[o(4)]];
        let g = Geometry::new(op, &space, &groups).unwrap();
        let p = compile_c(&g, Direction::Forward, 2, &[2, 4, 78, 24, 32], &[48, 2, 20, 8, 32], true);
        assert!(!p.tile && !p.lines);
        assert_eq!(p.unit, 64);
        let inner: Vec<_> = p.loops[p.loops.len() - 4..].iter().map(|l| (l.count, l.ss, l.ds)).collect();
        let (row, batch) = (24 * 64, 2 * 20 * 8 * 64);
        // Batch `((b1 * 4 + b2) * 3 + b3) * 2 + n`.
        assert_eq!(inner, vec![(20, 4 * row, 512), (4, row, 3 * 2 * batch), (3, 64, 2 * batch), (8, 192, 64)]);
    }

    /// Streaming NHWC depth-to-space by 2 (W6): each input row writes two
    /// output rows, the two destination streams inside the sweep (an input
    /// row's units); the loop over rows is not split to run more of them
    /// together.
    #[test]
    fn streaming_long_units_keep_the_streams_the_sweep_needs() {
        let (space, block) = ([16, 256, 256, 32], [16, 128, 128, 128]);
        let g = nhwc(space, 2, false);
        let p = compile_f32(&g, Direction::Backward, &space, &block, true);
        assert!(p.lines);
        let loops: Vec<_> = p.loops.iter().map(|l| (l.count, l.ss, l.ds)).collect();
        assert_eq!(loops, vec![(16 * 128, 2 * 32768, 2 * 32768), (128, 512, 256), (2, 256, 32768)]);
    }

    /// Streaming NHWC depth-to-space by 2 of 64-byte and 128-byte units
    /// (uint8 input of 128 or 256 channels): each output row gathers every
    /// other unit of an input row, 8 KiB and 16 KiB rows. They stream
    /// straight to the destination, not through the cache nor through the
    /// line writers, in the source's order: the two output rows of an input
    /// row take its units in turn ([`scatters_gathered_rows`]). Not
    /// streaming, through the cache.
    #[test]
    fn long_gathered_rows_of_vector_units_stream() {
        for (c, unit) in [(128, 64), (256, 128)] {
            let (space, block) = ([16, 256, 256, c / 4], [16, 128, 128, c]);
            let g = nhwc(space, 2, false);
            let p = compile_c(&g, Direction::Backward, 1, &space, &block, true);
            assert!(p.nt && !p.lines && !p.tile && !p.gathered, "unit {unit}");
            assert_eq!(p.unit, unit);
            let [.., x, y] = &p.loops[..] else { panic!("unit {unit}: {:?}", p.loops) };
            assert_eq!((x.count, x.ss, x.ds), (128, 2 * unit as isize, unit as isize));
            assert_eq!((y.count, y.ss, y.ds), (2, unit as isize, 256 * c as isize / 4));
            let p = compile_c(&g, Direction::Backward, 1, &space, &block, false);
            assert!(!p.nt && !p.lines);
        }
        // Rows of 8 units of 64 bytes (512 bytes) stream, and of 4 (256
        // bytes), whose rows continue one another (the two output rows of
        // an input row); of 2 (128 bytes), not.
        for (w, streams) in [(8, true), (4, true), (2, false)] {
            let (space, block) = ([64, 256, 2 * w, 32], [64, 128, w, 128]);
            let g = nhwc(space, 2, false);
            let p = compile_c(&g, Direction::Backward, 1, &space, &block, true);
            assert_eq!(p.nt, streams, "{w} units a row");
        }
    }

    /// Which gathered rows [`streams_gathered_rows`] streams: 512 bytes and
    /// more; 256 and more where the loop outside continues the row in the
    /// destination; whole 16-byte vectors of at least 32 bytes.
    #[test]
    fn gathered_rows_stream_from_512_bytes_or_256_continued() {
        let l = |count: usize, ss: isize, ds: isize| Loop { count, ss, ds, window: None, is_outer: false };
        let far = 1 << 20;
        for (outer_ds, count, unit, streams) in [
            (far, 8, 64, true),
            (far, 4, 64, false),
            (256, 4, 64, true),
            (128, 2, 64, false),
            (far, 16, 32, true),
            (far, 8, 48, false),
            (far, 32, 16, false),
        ] {
            let loops = [l(10, far, outer_ds), l(count, 3 * unit as isize, unit as isize)];
            assert_eq!(streams_gathered_rows(&loops, unit), streams, "{count} x {unit}, outer {outer_ds}");
        }
    }

    /// Streaming NHWC space-to-batch of 32 float32 channels: each
    /// destination row gathers every `block`-th 128-byte unit of a source
    /// row, and the next row of its batch comes after the other block
    /// positions' rows. Rows of 1 KiB, shorter than [`MAX_JOINED_ROW`],
    /// store their whole lines straight and join their ends through the
    /// line writers; rows of 4 KiB store every byte straight, unless W is
    /// padded (by 1 at each end: a window on the rows). Unpadded rows of 4
    /// KiB by 2 are taken in the source's order instead (see
    /// [`scatters_gathered_rows`]): by 5, gathered.
    #[test]
    fn short_or_padded_gathered_rows_join_their_ends() {
        for (block, w, pad, joined) in [(2, 16, 0, true), (5, 160, 0, false), (2, 64, 1, true)] {
            let h = 64 / block * block;
            let shape = [8, h, w - 2 * pad, 32];
            let g = nhwc_padded(shape, block, [0, pad], true);
            let batch = 8 * block * block;
            let p = compile_f32(&g, Direction::Forward, &shape, &[batch, h / block, w / block, 32], true);
            let case = format!("block {block}, width {w}, padding {pad}");
            assert!(p.nt && !p.lines && !p.tile, "{case}");
            let last = p.loops[p.loops.len() - 1];
            assert_eq!((p.unit, last.count, last.ds), (128, w / block, 128), "{case}");
            assert_eq!(last.window.is_some(), pad > 0, "{case}");
            assert!(!continues_rows(&p.loops, p.unit), "{case}");
            assert_eq!(p.gathered, joined, "{case}");
        }
        let shape = [8, 64, 64, 32];
        let p = compile_f32(&nhwc(shape, 2, true), Direction::Forward, &shape, &[32, 32, 32, 32], true);
        assert!(p.nt && !p.lines && !p.tile && !p.gathered);
        let [.., x, y] = &p.loops[..] else { panic!("{:?}", p.loops) };
        assert_eq!((x.count, x.ss, x.ds, y.count, y.ss), (32, 256, 128, 2, 128));
    }

    /// Which gathered rows [`scatters_gathered_rows`] takes in the
    /// source's order: 2 or 3 rows (the loop outside the rows, its units
    /// one apart) that together read
    /// every unit of the source rows, rows of [`MAX_JOINED_ROW`] bytes or
    /// more, units of whole 16-byte vectors from 32 bytes, and no window on
    /// either loop.
    #[test]
    fn few_rows_of_every_other_unit_scatter() {
        let l = |count: usize, ss: isize, ds: isize| Loop { count, ss, ds, window: None, is_outer: false };
        let far = 1 << 20;
        for (rows, count, unit, ss, scatters) in [
            (2, 32, 64, 128, true),
            (3, 32, 64, 192, true),
            (3, 16, 128, 384, true),
            (4, 32, 64, 256, false),
            (2, 31, 64, 128, false),
            (2, 64, 16, 32, false),
            (2, 48, 48, 96, true),
            (2, 64, 40, 80, false),
            (2, 32, 64, 192, false),
        ] {
            let loops = [l(10, far, far), l(rows, unit as isize, far), l(count, ss, unit as isize)];
            assert_eq!(scatters_gathered_rows(&loops, unit), scatters, "{rows} rows of {count} x {unit}, {ss} apart");
        }
        let window = Some(Window { outer: Some(0), oc: 2, ic: 1, lo: 1, hi: 19 });
        let loops = [l(10, far, far), l(2, 64, far), Loop { window, ..l(32, 128, 64) }];
        assert!(!scatters_gathered_rows(&loops, 64));
    }

    /// Streaming NHWC space-to-depth by 2 of 32 uint8 channels: each
    /// destination row is a 64-byte unit from each of the two source rows
    /// of a block row (128 bytes), and a block row's destination rows
    /// continue one another. Runs of 4 KiB stream unit by unit; runs of
    /// 1 KiB store through the cache.
    #[test]
    fn short_continued_rows_stream_unit_by_unit() {
        for (w, streams) in [(64, true), (16, false)] {
            let (space, block) = ([2, 64, w, 32], [2, 32, w / 2, 128]);
            let g = nhwc(space, 2, false);
            let p = compile_c(&g, Direction::Forward, 1, &space, &block, true);
            assert!(!p.lines && !p.tile && !p.gathered, "width {w}");
            assert_eq!(p.nt, streams, "width {w}");
            let [.., x, y] = p.loops[..] else { panic!("width {w}: {} loops", p.loops.len()) };
            assert_eq!((p.unit, x.count, x.ss, x.ds, y.count, y.ds), (64, w / 2, 64, 128, 2, 64), "width {w}");
        }
    }

    /// Streaming TensorFlow batch-to-space 4x4 of 64, 8 or 4 float32
    /// channels (256-, 32- or 16-byte units; the W4 workload scaled down),
    /// cropped by `c` at each end of H and W: each destination row is one
    /// run of units from the four block columns in turn, which the crop
    /// only shortens at its ends. Cropped or not, the rows stream unit by
    /// unit, the crop a window on the block columns; 32- and 16-byte units
    /// too, rather than make a tile.
    #[test]
    fn cropped_continued_rows_stream_unit_by_unit() {
        for (ch, c) in [(64, 0), (64, 3), (8, 0), (8, 3), (4, 0), (4, 3)] {
            let side = 256 - 2 * c;
            let g = nhwc_padded([2, side, side, ch], 4, [c, c], true);
            let p = compile_f32(&g, Direction::Backward, &[2, side, side, ch], &[32, 64, 64, ch], true);
            let case = format!("{ch} channels, crop {c}");
            assert!(p.nt && !p.lines && !p.tile && !p.gathered, "{case}");
            let [.., x, y] = p.loops[..] else { panic!("{case}: {} loops", p.loops.len()) };
            let u = 4 * ch as isize;
            assert_eq!((p.unit, x.count, x.ss, x.ds, y.count, y.ds), (u as usize, 64, u, 4 * u, 4, u), "{case}");
            let crop =
                Window { outer: Some((p.loops.len() - 2) as u8), oc: 4, ic: 1, lo: c as i64, hi: 256 - c as i64 };
            assert_eq!(y.window, (c > 0).then_some(crop), "{case}");
        }
    }

    /// Streaming TensorFlow batch-to-space 2x2 of 4 float32 channels:
    /// destination rows of two 16-byte units, shorter than
    /// [`MIN_STREAMED_ROW`]. Cropped by 1, they stream unit by unit;
    /// uncropped, they make a tile.
    #[test]
    fn rows_of_two_vectors_stream_only_cropped() {
        for c in [0, 1] {
            let side = 256 - 2 * c;
            let g = nhwc_padded([2, side, side, 4], 2, [c, c], true);
            let p = compile_f32(&g, Direction::Backward, &[2, side, side, 4], &[8, 128, 128, 4], true);
            assert_eq!((p.unit, p.tile), (16, c == 0), "crop {c}");
            if c > 0 {
                assert!(p.nt && !p.lines && !p.gathered, "crop {c}");
                let [.., x, y] = p.loops[..] else { panic!("crop {c}: {} loops", p.loops.len()) };
                assert_eq!((x.count, x.ss, x.ds, y.count, y.ds), (128, 16, 32, 2, 16), "crop {c}");
            }
        }
    }

    /// The streaming plan, for `isa`, of OpenVINO's batch-to-space 1x1x4x4
    /// of a uint8 tensor `[32, 16, 128, w]`, cropped by 2 at each end of H
    /// and W.
    fn ov_batch_to_space_cropped(w: usize, isa: Isa) -> CopyPlan {
        let op = "t";
        let axis = |d: usize| SpaceAxis::new(op, d as u64 * 4 - 4, 2, 2, 4).unwrap();
        let space = [SpaceAxis::plain(2), SpaceAxis::plain(16), axis(128), axis(w)];
        let g = Geometry::new(op, &space, &[&[k(2), k(3), o(0)], &[o(1)], &[o(2)], &[o(3)]]).unwrap();
        let (sp, bl) = (c_strides(&[2, 16, 508, w * 4 - 4], 1), c_strides(&[32, 16, 128, w], 1));
        CopyPlan::compile(&g, Direction::Backward, 1, &Layouts { space: &sp, block: &bl }, true, isa)
    }

    /// Streaming OpenVINO batch-to-space 1x1x4x4 of NCHW uint8, cropped by
    /// 2 at each end of H and W: each output row interleaves four block
    /// columns, 512 bytes before the crop. Rows of whole lines are built
    /// in a stage and streamed; a row of 504 bytes is stored through the
    /// cache.
    #[test]
    fn cropped_interleaved_rows_of_whole_lines_stream() {
        for (w, streams) in [(128, true), (126, false)] {
            let p = ov_batch_to_space_cropped(w, Isa::baseline());
            assert!(p.tile && !p.padded, "{w}");
            assert_eq!(p.nt, streams, "{w}");
            assert_eq!(crops_row_ends(&p.loops, 1), streams, "{w}");
            let n = p.loops.len();
            let (x, y) = (p.loops[n - 2], p.loops[n - 1]);
            assert_eq!((x.count, x.ss, x.ds, y.count, y.ds), (w, 1, 4, 4, 1));
        }
    }

    /// The same batch-to-space with AVX512-VBMI: rows whose streams hold
    /// 64 bytes or more are interleaved in registers and their kept bytes
    /// carried on from row to row (`crops_carried`), whole lines or not;
    /// streams of 15 bytes are not, and neither is any row below VBMI but
    /// those of whole lines.
    #[test]
    fn cropped_interleaved_rows_carry_with_vbmi() {
        for (w, isa, carried, streams) in [
            (128, Isa::Avx512Vbmi, true, true),
            (126, Isa::Avx512Vbmi, true, true),
            (64, Isa::Avx512Vbmi, true, true),
            (15, Isa::Avx512Vbmi, false, false),
            (126, Isa::Avx512, false, false),
            (128, Isa::Avx512, false, true),
        ] {
            let p = ov_batch_to_space_cropped(w, isa);
            assert!(p.tile && !p.padded, "{w} {isa:?}");
            assert_eq!(crops_carried(&p.loops, 1, isa), carried, "{w} {isa:?}");
            assert_eq!(p.nt, streams, "{w} {isa:?}");
            // The rows (block rows of each output row) follow one another.
            let n = p.loops.len();
            assert_eq!(p.loops[n - 3].ds, (w * 4 - 4) as isize, "{w} {isa:?}");
        }
    }

    #[test]
    fn ceil_div_rounds_up_for_negatives() {
        assert_eq!(ceil_div(-3, 2), -1);
        assert_eq!(ceil_div(3, 2), 2);
        assert_eq!(ceil_div(4, 2), 2);
        assert_eq!(ceil_div(0, 5), 0);
    }
}
