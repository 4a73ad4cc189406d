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
//! With AVX512-VBMI, a small destination block of several loops (at most
//! 256 bytes from a few source rows) becomes the unit, gathered by byte
//! permutes ([`gather_block`](super::gathers::gather_block)).
//! Short units make a transposing tile ([`choose_tile`](super::rules::choose_tile)), which may carry
//! a padding or crop window on its block position. Then, for large
//! (streaming) outputs, it reorders the loops: long units sweep a few
//! destination streams together for the line writers ([`stream_order`](super::order::stream_order)),
//! where [`takes_lines`](super::writers::takes_lines) takes them,
//! unless their destination runs gather source runs in order
//! ([`gathers_source_runs`](super::order::gathers_source_runs)); transposing tiles walk the source in its
//! order, except those whose rows a vector kernel carries as one
//! destination run (`CopyPlan::carry_level`; padded rows,
//! [`padded_carry_level`](super::rules::padded_carry_level)). A tile
//! through the cache has next to it a loop whose repetitions continue it
//! ([`repeat_continuing`](super::repetitions::repeat_continuing)); a streamed
//! one whose destination block is one run (or a streamed matrix), a loop
//! that continues its source rows
//! ([`repeat_source_rows`](super::repetitions::repeat_source_rows)), and a
//! streamed matrix of many rows goes a chunk of them at a time across it
//! ([`matrix_chunk`](super::repetitions::matrix_chunk)); past the
//! caches, an interleaving one that only the stage would stream is
//! streamed through the stage where its destination runs are long
//! ([`streams_staged`](super::streamed::streams_staged)); one that streamed
//! the register transposes would take (or, of units under 4 bytes, only
//! the tile's own kernels), and through the cache the byte permutes,
//! stores through the cache
//! ([`interleave_through_cache`]).
//!
//! This file holds the plan ([`CopyPlan`]) and its compilation; the rules
//! it applies are in [`rules`](super::rules),
//! [`repetitions`](super::repetitions) and [`streamed`](super::streamed),
//! the loop orders in [`order`](super::order).
//!
//! Layer: plan; imports [`rules`](super::rules),
//! [`repetitions`](super::repetitions), [`streamed`](super::streamed),
//! [`order`](super::order), [`padded`](super::padded),
//! [`gathers`](super::gathers), geometry,
//! kernels (the loop nest's data, and what kernels accept) and arch; never
//! exec.

use arrayvec::ArrayVec;

use super::gathers::gather_block;
use super::order::*;
use super::padded::{padded_block, stages_padded_tiles_whole};
use super::repetitions::*;
use super::rules::*;
use super::streamed::{interleave_through_cache, streams_packed_squares, streams_staged, tile_choice};
use super::writers::{gathers_far_apart, takes_lines};
use crate::engine::arch::Isa;
use crate::engine::geometry::{Factor, Geometry, Part, MAX_FACTORS};
use crate::engine::kernels::copy::Mode;
use crate::engine::kernels::gather::Gather;
use crate::engine::kernels::nest::{Loop, Window, MAX_LOOPS};
use crate::engine::kernels::tile::TileChoice;
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
    /// A tiny plan: every unit copied one at a time, in the destination's
    /// order, from the list in `offsets`, by `kernels::copy::listed` (see
    /// [`TINY_UNITS`]). Its loops carry no window, and it does not stream.
    pub units: bool,
    /// A tiny plan's units, listed when it is compiled (see [`list_units`]):
    /// each unit's source and destination byte offsets, bases included,
    /// in the destination's order. Empty for other plans.
    pub offsets: ArrayVec<[isize; 2], TINY_UNITS>,
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
    /// The plan streams (its output is past the stream threshold), whether
    /// or not its stores do (`nt`): its tensors are past the caches, so
    /// the kernels fetch the source ahead where they read more streams
    /// than the prefetchers follow (see `kernels::copy::Mode::fetch`).
    pub streaming: bool,
    /// With streaming stores, a tile whose destination streams each
    /// continue contiguously across this loop (and the one inside it, if it
    /// is not the tile's), run whole by `kernels::carried::deinterleave_carried` (see
    /// [`carry_level`]) or `kernels::interleave_carried::interleave_carried` (see
    /// [`interleave_carry_level`]), which carry each stream's bytes from
    /// row to row in a register.
    pub carry_level: Option<usize>,
    /// The carry level of a padded deinterleaving tile: the carried kernel
    /// reads the source rows in place and makes up their padding (see
    /// [`padded_carry_level`]).
    pub padded: bool,
    /// The carry level of a tile whose source rows each split into
    /// consecutive destination segments, run row by row by
    /// `kernels::carried::deinterleave_carried` (see [`segments_carry_level`]).
    pub segments: bool,
    /// The two loops outside the tile continue its source rows (the outer
    /// one, `ss == nx * unit`) and its destination rows (the inner one,
    /// `ds == ny * unit`): the tile and its repetitions along both are one
    /// matrix for the transpose (see [`repeat_both`]).
    pub matrix: bool,
    /// A streamed matrix's rows go this many repetitions of its rows loop
    /// at a time, each chunk for every repetition of the loop outside it,
    /// which continues their source rows (see [`matrix_chunk`]). `None`
    /// for other plans.
    pub matrix_chunk: Option<usize>,
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
    /// `kernels::stream::gather_lines`). So do rows that continue one
    /// another with padding between them (see [`joins_padded_runs`]), and
    /// every row of units that are not whole vectors, through a stage (see
    /// [`stages_gathered_rows`]).
    pub gathered: bool,
    /// The unit is a small destination block gathered from a few source
    /// rows by byte permutes (see [`gather_block`]), not a contiguous run.
    pub gather: Option<Gather>,
    /// The kernel of the tile that each index of the loops outside it runs
    /// whole (with the loop around it, its repetitions), chosen once for
    /// its shape: see [`tile_choice`]. `None` for plans whose tiles go
    /// otherwise (the matrix, the carried kernels, a window on the tile).
    pub tile_choice: Option<TileChoice>,
    /// The outermost loop of a padded tile's block: the loops from it to
    /// the tile continue the tile's destination rows, and their padded
    /// source rows are staged together, a block a call (see
    /// [`padded_block`]). `None` for other plans.
    pub padded_block: Option<usize>,
    /// Whether a padded tile whose source positions run on, and which the
    /// stage holds, is staged whole (exec's `padded_source_tile`) rather
    /// than its middle read straight from the source: where the tensors
    /// fit the second-level cache (see [`stages_padded_tiles_whole`]).
    /// Unused (`true`) for other plans.
    pub padded_whole: bool,
    /// Whether a windowed tile through the cache of interleaved rows
    /// cropped at their ends is built in a stage, whole rows at a time
    /// (see [`stages_cropped_rows`]).
    pub staged_crops: bool,
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

    /// The loops [`CopyPlan::nest`] makes of raw loops `(count, ss, ds)`,
    /// none with a window, by its path for geometries with windows
    /// (`windowed`) or the one without (tests).
    #[cfg(test)]
    pub fn nested(raw: &[(usize, isize, isize)], windowed: bool) -> ArrayVec<Loop, MAX_LOOPS> {
        let raw: ArrayVec<RawLoop, MAX_LOOPS> = raw.iter().map(|&(count, ss, ds)| RawLoop { count, ss, ds }).collect();
        let mut plan = CopyPlan::placeholder();
        if windowed {
            plan.nest::<true>(&raw, &mut [None; MAX_LOOPS][..raw.len()]);
        } else {
            plan.nest::<false>(&raw, &mut []);
        }
        plan.loops
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
            units: false,
            offsets: ArrayVec::new_const(),
            all_padding: false,
            dst_block: ArrayVec::new_const(),
            dst_bytes: 0,
            tile: false,
            nt: false,
            isa: Isa::Portable,
            streaming: false,
            carry_level: None,
            padded: false,
            segments: false,
            matrix: false,
            matrix_chunk: None,
            lines: false,
            gathered: false,
            gather: None,
            tile_choice: None,
            padded_block: None,
            padded_whole: true,
            staged_crops: false,
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
        // The geometry's arrays as slices, taken once (each access to an
        // inline-or-heap array would otherwise ask which it is).
        let (space, order, groups) = (geom.space.as_slice(), geom.order.as_slice(), geom.groups.as_slice());
        let n_space = space.len();
        let space_count = |f: Factor| space[f.axis as usize].count(f.part) as usize;

        // Per-factor strides on the space side, and the space side's base offset.
        let space_stride = |f: Factor| -> isize {
            let s = strides.space[f.axis as usize];
            match f.part {
                Part::Outer => s.wrapping_mul(space[f.axis as usize].block as isize),
                Part::Block => s,
            }
        };
        let space_base = space
            .iter()
            .zip(strides.space)
            .fold(0isize, |acc, (ax, &s)| acc.wrapping_sub((ax.begin as isize).wrapping_mul(s)));

        // Per-factor strides on the block side: within a group, the last factor
        // varies fastest.
        // Only the space axes' entries are used (every factor's is set below).
        // (Pushed: a collected `ArrayVec` is built apart and copied whole.)
        let mut block_stride: ArrayVec<[isize; 2], MAX_RANK> = ArrayVec::new();
        for _ in 0..n_space {
            block_stride.push([0; 2]);
        }
        let mut at = 0;
        for (g, &n) in groups.iter().enumerate() {
            let mut s = strides.block[g];
            for f in order[at..at + n as usize].iter().rev() {
                block_stride[f.axis as usize][f.part as usize] = s;
                s = s.wrapping_mul(space_count(*f) as isize);
            }
            at += n as usize;
        }
        let block_stride = |f: Factor| block_stride[f.axis as usize][f.part as usize];

        // Loop order: the destination's.
        let mut factors: ArrayVec<Factor, MAX_FACTORS> = ArrayVec::new();
        match dir {
            Direction::Forward => factors.extend(order.iter().copied()),
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
        // Windows only where some axis is padded or cropped (see `nest`).
        let windowed = space.iter().any(|ax| ax.begin != 0 || ax.end != 0);
        for &f in &factors {
            let (ss, ds) = match dir {
                Direction::Forward => (space_stride(f), block_stride(f)),
                Direction::Backward => (block_stride(f), space_stride(f)),
            };
            raw.push(RawLoop { count: space_count(f), ss, ds });
            if windowed {
                windows.push(None);
            }
        }
        for (i, ax) in space.iter().enumerate() {
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
        if windowed {
            windows.push(None);
        }

        // The destination's size: every factor (forward, the block side) or the
        // space extents without padding (backward).
        // Zero if any count is; otherwise the destination buffer's real size.
        let dst_bytes = match dir {
            Direction::Forward => count_product(raw.iter().map(|l| l.count)),
            Direction::Backward => count_product(space.iter().map(|a| a.extent as usize).chain([elem])),
        };
        let empty = dst_bytes == 0;
        // Every field is set: `self` may hold an earlier plan.
        self.loops.clear();
        self.unit = 1;
        self.src_base = src_base;
        self.dst_base = dst_base;
        self.fill = dir == Direction::Forward;
        self.empty = empty;
        self.units = false;
        self.offsets.clear();
        self.all_padding = false;
        self.dst_block.clear();
        self.dst_bytes = dst_bytes;
        self.tile = false;
        self.nt = streaming;
        self.isa = isa;
        self.streaming = streaming;
        self.carry_level = None;
        self.padded = false;
        self.segments = false;
        self.matrix = false;
        self.matrix_chunk = None;
        self.lines = false;
        self.gathered = false;
        self.gather = None;
        self.tile_choice = None;
        self.padded_block = None;
        self.padded_whole = true;
        self.staged_crops = false;
        if !empty {
            if windowed {
                self.nest::<true>(&raw, &mut windows);
            } else {
                self.nest::<false>(&raw, &mut []);
            }
            self.canonicalise(streaming);
        }
    }

    /// Steps 1 and 2 of canonicalisation: the raw loops (and their
    /// `windows`, one a loop, when `W`) into `self.loops`. Without padding
    /// or crops (`W` false, `windows` empty), as most geometries are, no
    /// loop carries a window, and the steps compile without any: measured
    /// on the per-call workloads (plan and run, one call each, 9 alternated
    /// runs), S1 (64 bytes) 283 -> 259 to 262 ns, S3 325 -> 276 ns; S2
    /// (cropped: the path with windows) 640 -> 644 to 658 ns.
    fn nest<const W: bool>(&mut self, raw: &[RawLoop], windows: &mut [Option<Window>]) {
        // 1. Drop loops of count 1, moving windows that depend on them.
        if !W {
            self.loops.clear();
            for (j, r) in raw.iter().enumerate() {
                // The element loop (last) always stays: it becomes the unit.
                if r.count != 1 || j + 1 == raw.len() {
                    self.loops.push(Loop { count: r.count, ss: r.ss, ds: r.ds, window: None, is_outer: false });
                }
            }
        } else {
            self.drop_ones(raw, windows);
        }
        let loops = &mut self.loops;

        // 2. Merge neighbours contiguous on both sides (inner into outer).
        // The outer one may carry a window on its own index (not one
        // divided by a block: `ic == 1`), which the merged loop keeps,
        // scaled by the inner count (a crop of whole rows, such as
        // OpenVINO's batch-to-space crops of a block factor).
        let mut j = loops.len();
        while j >= 2 {
            j -= 1;
            // (By reference: a copy of each is 144 bytes, on every plan's path.)
            let (a, b) = (&loops[j - 1], &loops[j]);
            if a.is_outer
                || !free(b)
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
            loops[j - 1] = Loop { count: a.count * b.count, window, ..*b };
            loops.remove(j);
            if !W {
                continue;
            }
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
    }

    /// Step 1 of [`CopyPlan::nest`] with windows: the loops of count 1
    /// dropped, and the windows that depend on them moved.
    fn drop_ones(&mut self, raw: &[RawLoop], windows: &mut [Option<Window>]) {
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
    }

    /// Canonicalisation from step 3 on: the unit, and the loops arranged
    /// for the kernels. Inlined into its one caller: out of line, the
    /// per-call workload S2 measured 5% slower. `streaming`: the
    /// destination is past the caches (the plan's `nt` before its rules).
    #[inline(always)]
    fn canonicalise(&mut self, streaming: bool) {
        let loops = &mut self.loops;
        // 3. The innermost loop, contiguous on both sides, becomes the unit.
        let last = *loops.last().expect("the element loop is never dropped");
        if last.ss == 1 && last.ds == 1 && free(&last) {
            self.unit = last.count;
            loops.pop();
        } else {
            self.unit = 1;
        }

        // 3'. A plan whose every destination position is padding only
        // fills (`Exec::sequential`): no kernel. A kernel's plan may no
        // longer be the loops of whole destination blocks that the fill
        // walks (a gather of several blocks at once divides its loop's
        // count: the fill then left two of every three blocks unwritten).
        if self.all_padding {
            destination_blocks(loops, self.unit, &mut self.dst_block);
            return;
        }

        // 3''. Tiny plans copy unit by unit: no kernel would pay for its
        // choosing (nor would the rules below for their running).
        if !self.nt
            && self.dst_bytes <= TINY_UNITS.saturating_mul(self.unit)
            && loops.iter().all(free)
            && list_units(loops, self.src_base, self.dst_base, &mut self.offsets)
        {
            self.units = true;
            destination_blocks(loops, self.unit, &mut self.dst_block);
            return;
        }

        // 3'''. Small destination blocks from a few source rows: each one
        // unit, gathered by byte permutes (streamed: blocks of whole lines).
        if let Some(block) = gather_block(loops, self.unit, self.nt, self.fill, self.isa) {
            loops.truncate(block.k);
            // The loop whose repetitions are gathered a few at once: each
            // index now the next copies (a loop of one, where it is all;
            // its strides times a divisor of its count stay within its
            // extent).
            if let Some(o) = block.copies_of {
                let (l, m) = (&mut loops[o], block.gather.copies());
                (l.count, l.ss, l.ds) = (l.count / m, l.ss.wrapping_mul(m as isize), l.ds.wrapping_mul(m as isize));
            }
            self.unit = block.gather.len();
            self.gather = Some(block.gather);
            destination_blocks(loops, self.unit, &mut self.dst_block);
            return;
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
        // Not rows that read their units far apart, which the line writers
        // take in the source's order where they would take them.
        let gathered_rows = continued_rows
            || (self.nt
                && self.unit < MANY_STREAMS_UNIT
                && streams_gathered_rows(loops, self.unit)
                && !gathers_far_apart(loops, self.unit));
        // The plan of a tile of units without a kernel of their own, should
        // no carried kernel take it (see below).
        // (Its loops in a vector of their own, filled only when needed: an
        // `Option` of the whole array was a 5 KB copy on every compile.)
        let mut unless_carried = None;
        let mut saved: ArrayVec<Loop, MAX_LOOPS> = ArrayVec::new();
        if self.nt
            && !gathered
            && !gathered_rows
            && takes_lines(loops, self.unit)
            && stream_order(loops, reads_units_apart(loops, self.unit))
        {
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
            let crops = !self.nt && !self.fill && !self.streaming;
            let arranged =
                choose_tile(loops, self.unit, self.dst_bytes >= SOURCE_ORDER_BYTES, !self.nt, crops, self.isa);
            let tiled = arranged == Some(true);
            let shuffled = tiled && streams_shuffled_rows(loops, self.unit, self.isa);
            // Units that no tile kernel of their own takes (three-channel
            // pixels, 3 to 48 bytes, and their blocks) make a tile for the
            // carried kernels of AVX512-VBMI, which gather them with byte
            // permutes (`kernels::any_units::AnyUnits`), 2 to 4 streams of them
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
            // Unless the transpose's squares stream it (packed units in
            // long rows: see `streams_packed_squares`).
            let squares = tiled && self.nt && streams_packed_squares(loops, self.unit, self.isa);
            let any = arranged.is_some()
                && !squares
                && self.nt
                && self.isa >= Isa::Avx512Vbmi
                && !vector_unit(self.unit)
                && (!shuffled || pair(loops));
            if any {
                saved.extend(loops.iter().copied());
                unless_carried = Some(tiled);
            }
            self.tile = tiled || any;
            if tiled && !vector_unit(self.unit) && !shuffled && !any && !squares {
                // No vector kernel: its runs would each be short streaming
                // stores (measured: float32 NHWC batch-to-space of 8
                // channels 1.11 -> 1.05x memcpy, uint8 depth-to-space of 3
                // channels by 4 1.25-1.3 -> 1.0-1.1x through the cache).
                self.nt = false;
            }
            let windowed = self.tile && loops[loops.len() - 1].window.is_some();
            if self.tile && self.nt {
                // Streaming tiles walk the loops outside the tile in the
                // source's order, so that the source is swept once, where
                // a kernel writes the destination streams this creates in
                // whole lines (the carried kernels, the deinterleaving
                // kernel through the line writers); the others go in the
                // destination's order, or through the cache (below).
                let dst_order = loops.clone();
                source_order_outside(loops, loops.len() - 2);
                let n = loops.len();
                let (x, y) = (loops[n - 2], loops[n - 1]);
                let row = y.count * self.unit;
                let deinterleaving = x.ds != row as isize;
                let lines =
                    vector_streams(x.count, self.isa) && vector_unit(self.unit) && row >= MIN_LINES_DEINTERLEAVE_ROW;
                if deinterleaving {
                    // The rows' carry level: whole rows (`carry_level`),
                    // or padded rows of the source (`padded_carry_level`:
                    // a window on the tile, or on the loop of stream
                    // groups alone, rows wholly padding), read in place,
                    // the padding made up where a read meets it (the
                    // carried kernels run whole tiles; measured, OpenVINO
                    // NCHW space-to-batch padded on H alone: uint8 by 3,
                    // 1.75x memcpy through the tile stage, 1.03-1.1x
                    // carried; float32 by 4, 1.43x -> 0.75x).
                    let level = |loops: &[Loop]| {
                        let whole = if windowed { None } else { carry_level(loops, self.unit, self.isa) };
                        let padded = || if self.fill { padded_carry_level(loops, self.unit, self.isa) } else { None };
                        whole.map(|l| (l, false)).or_else(|| padded().map(|l| (l, true)))
                    };
                    // In the source's order, else in the destination's.
                    // In the source's, the loop of block rows may fall
                    // between the rows and the tile as their stream
                    // groups: more streams than the carried kernels take
                    // (`CARRIED_STREAMS`), or padded rows that outgrow
                    // their stage (`PADDED_ROWS_BYTES`). In the
                    // destination's, it goes outside the rows, which are
                    // next to the tile: one group, the source read a
                    // block row at a time. Measured (ratio to memcpy,
                    // medians of 5 alternated runs, one thread): the 5
                    // padded plans of 16 MiB and more of broad seeds 26
                    // and 801-823 it changes (TF and OpenVINO
                    // space-to-batch), 0.59 to 0.88 of the time (0.50 to
                    // 0.86 on two threads; TF of one float32 channel
                    // padded on W, 252 MiB, 2.77 -> 1.62x); the 4
                    // plans of whole rows of those seeds it changes
                    // (einops' `b c (h p1) (w p2) -> b (p1 p2 c) h w`
                    // by 10 x 3 and 9 x 3 of three channels, 30 and 27
                    // streams as groups; TF and OpenVINO space-to-batch
                    // unpadded), 0.62 to 0.81 (two threads 0.51 to 0.76;
                    // OpenVINO of float64 by 1 x 3 x 14 x 4, 25 MiB,
                    // 3.20 -> 1.97x).
                    let found = level(loops).or_else(|| {
                        let found = level(&dst_order);
                        if found.is_some() {
                            *loops = dst_order.clone();
                        }
                        found
                    });
                    self.carry_level = found.map(|(l, _)| l);
                    self.padded = found.is_some_and(|(_, padded)| padded);
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
                }
                if !windowed && !direct {
                    // Here the destination's order is the better one
                    // (measured: uint8 and float16 pixel_shuffle 2.0x
                    // memcpy in the source's, 1.6-1.7x in it).
                    *loops = dst_order;
                    if !deinterleaving {
                        // An interleaving tile that streamed would be slow
                        // stores through the cache, in the order and with
                        // the repetitions of a plan through the cache
                        // (see `interleave_through_cache`).
                        self.nt = !interleave_through_cache(loops, self.unit, self.isa, shuffled);
                        if self.nt {
                            // Streamed, its repetitions along the source's
                            // rows go next to it (see `repeat_source_rows`).
                            repeat_source_rows(loops, self.unit, false);
                        }
                    } else if squares_stream(loops, self.unit, self.isa) {
                        // Unless the transpose's full-line squares take
                        // it, whose stores are whole lines and stream
                        // (see `squares_stream`).
                        self.matrix = repeat_both(loops, self.unit, self.isa, true);
                        if self.matrix {
                            // And the loop that continues its source rows
                            // next to it (see `repeat_source_rows`).
                            repeat_source_rows(loops, self.unit, true);
                        }
                    } else {
                        // A deinterleaving tile with rows too short for
                        // whole lines: streaming stores alternating between
                        // their short runs are slow, so it stores through
                        // the cache (measured: uint8 pixel_unshuffle by 4,
                        // 16 streams, 2.2x memcpy staged, 1.6x so). Nor
                        // did staging its rows pay where it was measured
                        // on more than one machine. On an AMD EPYC (Zen
                        // 1), 5 to 16 streams deinterleaved in a stage in
                        // this order, each pushed through the line
                        // writers, took 1.04 of the time (the 31 such tiles
                        // of broad seed 26, outputs of 16 MiB and more).
                        // Chunks of rows in the source's order, staged
                        // with a slot a stream (up to 256), took 0.87-0.92
                        // there (the 14 broad workloads of seed 26 and 44
                        // of seeds 801 and 802 it staged, 4- to 16-byte
                        // units, mostly NCHW space-to-depth); on an
                        // AMD EPYC (Zen 3), one thread, 2 alternated runs,
                        // those of seeds 801 and 802 (44) took 0.83 of the
                        // time through the cache instead (2 slower by more
                        // than 3%, the worst TF NCHW_VECT_C space-to-depth
                        // by 6, 143 MiB, 1.47 -> 1.56x memcpy; ONNX
                        // space-to-depth of complex128 by 12, 16 MiB, 1.79
                        // -> 1.04), so that stage went.
                        self.nt = false;
                    }
                }
            }
        }

        if let Some(tiled) = unless_carried {
            let carried = self.carry_level.is_some();
            let cropped = self.tile && loops[loops.len() - 1].window.is_some() && self.nt;
            if !(carried || (cropped && crops_carried(loops, self.unit, self.isa))) {
                loops.clear();
                loops.extend(saved.iter().copied());
                self.tile = tiled;
                // As above: a tile of them stores through the cache; other
                // plans stream or not by step 6.
                self.nt = !tiled;
                (self.carry_level, self.padded, self.segments) = (None, false, false);
            }
        }

        // 4'''. A tile through the cache: the loops of repetitions that
        // continue it go next to it, so that its kernel runs them as one (see
        // `repeat_both`, `repeat_continuing`). Past the caches, a
        // deinterleave's passes over the source (NCHW space-to-depth's block
        // rows, each reading short runs of every source row) sweep the whole
        // source one after another, as through the cache. Blocked into chunks
        // of rows of 256 KiB of the source, every pass inside each chunk
        // (padded rows, which cannot split: the passes just outside the rows),
        // they measured 0.92-0.94 of the time on an AMD Zen 3 (padded, 0.875 on
        // a Zen 1) but 1.34 on an AMD EPYC (Zen 5: the 49 such plans of broad
        // seeds 26 and 801, 6 of them padded, 41 slower by more than 5%, none
        // faster; chunks of 512 KiB, half its second-level cache, 1.34 as well;
        // chunks that write 4 KiB a stream, 1.26), so they go whole. The tile's
        // destination is written in place, even past the caches: chunks of
        // whole destination blocks built in a stage that stayed in the
        // second-level cache, then streamed out, took 0.85-0.91 of the time on
        // an AMD EPYC (Zen 1; 20 broad workloads of seed 26, 47 of seeds 801
        // and 802), but 1.17 on an AMD EPYC (Zen 3: the same 47, one thread, 3
        // alternated runs; ONNX DCR depth-to-space of 3-byte units by 4, 23
        // MiB, 0.92x memcpy in place, 1.29x staged; 3 faster by more than 5%,
        // the most an einops space-to-depth of 32-byte units by 8 x 3, 31 MiB,
        // 1.08x staged, 1.47x in place), so that stage went.
        if self.tile && !self.nt {
            self.matrix = repeat_both(loops, self.unit, self.isa, false);
            if !self.matrix {
                repeat_continuing(loops, self.unit, past_second_level(streaming, self.dst_bytes));
            }
        }

        // 4''''. Past the caches, an interleaving tile through the cache
        // that the stage would stream (see step 4: more than 4 streams, or
        // units with no interleave of their own) streams after all in this
        // order, where its destination runs are long and each push of the
        // stage reads few source rows (see `streams_staged`): each tile's
        // rows built in the stage and pushed through the line writers,
        // which store whole lines (but for the partial lines at a run's
        // ends), so that next to no destination line is read before it is
        // written. The rule with runs of a stage, measured on an Intel
        // Xeon (Emerald Rapids), one thread, medians of 2 alternated
        // runs, ratio to memcpy: the 244 plans it changes among the
        // outputs of 16 MiB and more of broad seeds 26 and 801 to 810
        // (2,400 plans), geomean 1.50 -> 1.20, 217 faster by more than 5%,
        // 9 slower (TF batch-to-space of float32 by 14 cropped on H, 42
        // MiB, 1.14 -> 1.53); of them, the 88 of seeds 807 to 810, which
        // the rule's bounds were not drawn from, 1.53 -> 1.22, 81 faster,
        // 2 slower (1.08 at most).
        if streaming && self.tile && !self.nt && !self.matrix && streams_staged(loops, self.unit, self.dst_bytes) {
            let streamed = tile_choice(loops, self.unit, Mode { nt: true, isa: self.isa, fetch: true });
            self.nt = streamed.is_some_and(|c| c.staged());
        }

        // 5. Contiguous destination blocks, for filling padding in whole runs.
        destination_blocks(loops, self.unit, &mut self.dst_block);

        // 6. Other streaming plans (short units that make no tile, and long
        // units whose runs outnumber the line writers or gather source runs)
        // store through the cache: their units would each be a short
        // streaming store, and building whole destination regions in a
        // staging buffer to stream out cost more than it saved (but for
        // those taken below, which include the units and rows that
        // `writers::takes_lines` keeps from the writers). Measured on
        // an AVX2 machine (Zen 3), ratio to memcpy staged -> through the
        // cache: three-channel float32 NHWC space-to-depth 1.5-1.6 -> 1.2,
        // depth-to-space by 2 and 3 1.1-1.6 -> 1.0-1.2; six-channel
        // 1.2-1.5 -> 0.9-1.0; NHWC space-to-batch of 8 float32 channels
        // 1.6-1.75 -> 1.3; batch-to-space of 32 float32 channels 0.91-0.95
        // -> 0.91-0.95. Unstaged, with a streaming store per unit, NHWC
        // space-to-batch of 16 float32 channels ran at 1.45-1.9. Rows of
        // up to 16 whole-vector units that continue one another stream unit
        // by unit (see `streams_continued_rows`); so do long units of
        // whole vectors, each a run of whole lines (see `streams_units`).
        // Long gathered rows of units from 32 bytes that are not whole
        // vectors stream through a stage a row at a time (see
        // `stages_gathered_rows`, measured on an Intel Xeon).
        if self.nt && !self.tile && !self.lines && scatters_gathered_rows(loops, self.unit) {
            // Rows gathered from a few source positions, in the source's
            // order: the rows' loop goes inside (streamed as a grid).
            let n = loops.len();
            loops.swap(n - 2, n - 1);
            self.gathered = false;
        } else if self.nt && !self.tile && !self.lines {
            // Gathered rows of units that are not whole vectors: every row
            // through a stage into the line writers.
            let staged = stages_gathered_rows(loops, self.unit);
            let rows = staged
                || streams_continued_rows(loops, self.unit, self.fill)
                || streams_gathered_rows(loops, self.unit);
            let joins = |last: &Loop| last.count.saturating_mul(self.unit) < MAX_JOINED_ROW || last.window.is_some();
            // Rows that continue one another are one run, streamed whole,
            // unless padding falls between them.
            let joined = joins_padded_runs(loops, self.fill) || !continues_rows(loops, self.unit);
            self.gathered = staged || (rows && joined && loops.last().is_some_and(joins));
            // Long units that neither takes stream one at a time.
            self.nt = rows || streams_units(self.unit);
        }

        // 7. The tile's kernel, chosen once (see `tile_choice`); a
        // streamed matrix's rows in chunks (see `matrix_chunk`).
        let plain = self.tile && !self.matrix && self.carry_level.is_none();
        if plain {
            self.tile_choice =
                tile_choice(loops, self.unit, Mode { nt: self.nt, isa: self.isa, fetch: self.streaming });
        }
        if self.matrix && self.nt {
            self.matrix_chunk = matrix_chunk(loops, self.unit);
        }
        // 8. A padded tile's block, staged a block at a time; other padded
        // tiles staged whole or their middle straight from the source.
        if self.tile && self.fill && !self.matrix && self.carry_level.is_none() {
            self.padded_block = padded_block(loops, self.unit);
            self.padded_whole = stages_padded_tiles_whole(self.dst_bytes);
        }
        // 9. A windowed tile through the cache that crops interleaved rows,
        // short ones built in a stage.
        let windowed = self.tile && loops.last().is_some_and(|y| y.window.is_some());
        self.staged_crops =
            windowed && !self.nt && !self.fill && !self.streaming && stages_cropped_rows(loops, self.unit);
    }
}
