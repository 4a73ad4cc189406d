//! The executor: runs a [`CopyPlan`] over raw buffers.
//!
//! All `unsafe` of the crate that touches tensor memory lives here, in small
//! kernels whose every offset the plan has proven to be inside the buffers:
//! the caller (`Plan::run_*` in `crate::run`) checks that the source and
//! destination hold exactly the shapes the plan was compiled for, and the loop
//! nest only produces offsets of positions inside those shapes; positions
//! outside a window (padding or crop) are never dereferenced on the side where
//! they do not exist.
//!
//! Each task (the whole run, or one thread's range) writes through its own
//! line writers (`kernels::lines`), which it finishes before it ends.
//!
//! Layer: exec; imports plan (for [`CopyPlan`]), kernels and arch; the
//! division of work among threads is in [`parts`], the tiles with a window
//! in [`windowed`].

use arrayvec::ArrayVec;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::ptr;

mod parts;
mod windowed;

use super::arch::mem::fence;
use super::kernels::bytes::{zero_bytes, Staging};
use super::kernels::carried::{deinterleave_carried, Ahead, Carried, Padding, PADDED_ROWS_BYTES};
use super::kernels::copy::{self, copy_run, odometer, Mode};
use super::kernels::gather;
use super::kernels::grid::Grid;

use super::kernels::interleave_carried::{interleave_carried, Interleaved};
use super::kernels::lines::Writers;
use super::kernels::nest::{Bounds, Loop, Rows, MAX_LOOPS};
use super::kernels::stream::gather_lines;
use super::kernels::tile::{copy_matrix, copy_tile, TileChoice, TileShape};
use super::plan::CopyPlan;

/// What padding positions receive.
#[derive(Clone, Copy)]
pub(crate) enum Fill<'a> {
    /// Zero bytes (the frameworks' padding).
    Zero,
    /// Repetitions of one element's bytes (the typed API's `T::default()`).
    Pattern(&'a [MaybeUninit<u8>]),
}

impl Fill<'_> {
    /// Fills `len` bytes at `dst`, a whole number of elements.
    ///
    /// # Safety
    /// `dst..dst + len` must be valid for writes.
    #[inline]
    unsafe fn fill(&self, dst: *mut u8, len: usize, nt: bool) {
        match self {
            // SAFETY: the caller guarantees `len` writable bytes at `dst`.
            Fill::Zero => unsafe { zero_bytes(dst, len, nt) },
            Fill::Pattern(p) => {
                let e = p.len().min(len);
                if e == 0 {
                    return;
                }
                // SAFETY: `dst..dst+len` is writable; the pattern is `e` readable
                // bytes that do not overlap the destination; each doubling copy
                // reads the already written prefix `[0, done)` and writes
                // `[done, done + n)` with `done + n <= len`, so the two never overlap.
                unsafe {
                    ptr::copy_nonoverlapping(p.as_ptr().cast::<u8>(), dst, e);
                    let mut done = e;
                    while done < len {
                        let n = done.min(len - done);
                        ptr::copy_nonoverlapping(dst, dst.add(done), n);
                        done += n;
                    }
                }
            }
        }
    }
}

/// A raw pointer pair that may cross threads: each task writes a disjoint part
/// of the destination and only reads the source.
#[derive(Clone, Copy)]
struct Buffers {
    src: *const u8,
    dst: *mut u8,
}
// SAFETY: the executor hands each thread a disjoint set of destination
// positions (a range of the flattened outer loops, or a byte range), and the
// source is only read.
unsafe impl Send for Buffers {}
// SAFETY: as above.
unsafe impl Sync for Buffers {}

/// Destination bytes below which work stays on the calling thread.
pub(crate) const PARALLEL_THRESHOLD: usize = 1 << 20;

/// The fewest destination bytes worth a part of their own when a run is
/// split between threads (a page).
const MIN_PART_BYTES: usize = 4096;

struct Exec<'a> {
    plan: &'a CopyPlan,
    buf: Buffers,
    fill: Fill<'a>,
    /// Stream stores past the cache.
    nt: bool,
}

/// Called between the chunks of a long run with `(destination bytes done, total)`.
pub(crate) type Progress<'a> = &'a mut dyn FnMut(u64, u64);

/// Destination bytes per chunk of a run that reports progress.
pub(crate) const CHUNK_BYTES: usize = 16 << 20;

/// Runs `plan` from `src` into `dst` on up to `threads` threads; with a
/// `progress` callback, in chunks of about [`CHUNK_BYTES`] of destination,
/// reporting after each.
///
/// # Safety
/// `src` and `dst` must point to buffers holding exactly the source and
/// destination layouts `plan` was compiled for (every offset the plan yields
/// for a valid position is inside them), and the destination must not overlap
/// the source.
pub(crate) unsafe fn execute(
    plan: &CopyPlan,
    src: *const u8,
    dst: *mut u8,
    fill: Fill<'_>,
    threads: usize,
    mut progress: Option<Progress<'_>>,
) {
    if plan.empty {
        return;
    }
    let ex = Exec { plan, buf: Buffers { src, dst }, fill, nt: plan.nt };
    // At most one part per page of destination: more parts than that only
    // cost their scheduling (and a caller's `usize::MAX` would never end).
    let threads =
        if plan.dst_bytes < PARALLEL_THRESHOLD { 1 } else { threads.clamp(1, plan.dst_bytes / MIN_PART_BYTES) };
    let chunks = if progress.is_some() { plan.dst_bytes.div_ceil(CHUNK_BYTES) } else { 1 };
    let total = plan.dst_bytes as u64;
    // SAFETY: forwarded from the caller.
    unsafe {
        if plan.all_padding || (threads == 1 && chunks == 1 && !plan.loops.is_empty()) {
            // One piece (only padding is rare enough, an empty input padded
            // to full blocks, to stay sequential).
            ex.sequential();
            if let Some(report) = progress.as_mut() {
                report(total, total);
            }
        } else if plan.loops.is_empty() {
            // A pure contiguous copy: ranges of bytes.
            let step = plan.dst_bytes.div_ceil(chunks);
            let mut a = 0;
            while a < plan.dst_bytes {
                let b = plan.dst_bytes.min(a + step);
                ex.bytes_on(a, b, threads);
                if let Some(report) = progress.as_mut() {
                    report(b as u64, total);
                }
                a = b;
            }
        } else {
            // Ranges of the flattened outer loops: every position of the
            // prefix is a destination block of the same size.
            let (prefix, positions) = ex.prefix(chunks.max(if threads > 1 { threads * 4 } else { 1 }));
            let step = positions.div_ceil(chunks.min(positions));
            let mut a = 0;
            while a < positions {
                let b = positions.min(a + step);
                ex.range_on(prefix, a, b, threads);
                if let Some(report) = progress.as_mut() {
                    report((total as u128 * b as u128 / positions as u128) as u64, total);
                }
                a = b;
            }
        }
        if ex.nt {
            fence();
        }
    }
}

impl Exec<'_> {
    /// Whether every unit and padding block goes through the [`Writers`]
    /// (streaming plans of long units, see `CopyPlan::lines`), or every
    /// gathered row and padding block (see `CopyPlan::gathered`).
    #[inline(always)]
    fn lines(&self) -> bool {
        self.nt && (self.plan.lines || self.plan.gathered)
    }

    unsafe fn sequential(&self) {
        let p = self.plan;
        // SAFETY (whole block): offsets come from the plan, see `execute`.
        unsafe {
            if p.all_padding {
                if p.fill {
                    let mut w = Writers::new();
                    self.fill_block(0, p.dst_base, &mut w);
                    w.finish();
                }
                return;
            }
            if p.units {
                // (The offsets include the bases.)
                return copy::listed(&p.offsets, self.buf.src, self.buf.dst, p.unit);
            }
            let mut w = Writers::new();
            let all = 0..p.loops.first().map_or(0, |l| l.count);
            if !self.flat(0, all, p.src_base, p.dst_base, &mut w) {
                let mut idx = [0usize; MAX_LOOPS];
                self.level(0, p.src_base, p.dst_base, &mut idx, &mut w);
            }
            w.finish();
        }
    }

    /// Runs indices `range` of loop `j`, and the loops inside it, of a plan
    /// stored through the cache whose innermost kernel is one grid (the
    /// last two loops, see [`Grid`]), one tile with its rows (the last
    /// three) or a row of gathered units (the last loop), and whose loops
    /// from `j` carry no window (but the grid's rows'): those loops only
    /// count, so they are one flat loop over their positions rather than a
    /// recursion through [`Exec::level`] (which tiny tensors, and each
    /// thread's part of a split plan, would mostly spend their time in).
    /// `false`, having done nothing, for any other plan.
    ///
    /// # Safety
    /// As [`Exec::level`] from `so` and `dof`, the offsets of index 0 of
    /// loop `j`; `range` within loop `j`.
    unsafe fn flat(&self, j: usize, range: Range<usize>, so: isize, dof: isize, w: &mut Writers) -> bool {
        let p = self.plan;
        let n = p.loops.len();
        if self.nt || n < j + 2 {
            return false;
        }
        let free = |loops: &[Loop]| loops.iter().all(|l| l.window.is_none());
        let (src, dst) = (self.buf.src, self.buf.dst);
        // Loops `j..`, loop `j` cut to `range`, from its first index.
        let mut loops: ArrayVec<Loop, MAX_LOOPS> = ArrayVec::new();
        loops.extend(p.loops[j..].iter().copied());
        let first = &mut loops[0];
        let (so, dof) = (
            so.wrapping_add((range.start as isize).wrapping_mul(first.ss)),
            dof.wrapping_add((range.start as isize).wrapping_mul(first.ds)),
        );
        first.count = range.len();
        let m = loops.len();
        // SAFETY (both arms): every position of the outer loops is valid
        // (they carry no window), and the kernel copies the valid units
        // inside it, as `level` would.
        unsafe {
            if let Some(g) = &p.gather {
                if !free(&loops) {
                    return false;
                }
                // The last two loops in each call (its setup paid once for both).
                let rows = Rows::of(&loops[m - 1]);
                let middle = Rows::of(&loops[m - 2]);
                odometer(&loops[..m - 2], so, dof, |so, dof| {
                    gather::run(g, middle, rows, src.wrapping_offset(so), dst.wrapping_offset(dof), false, p.isa)
                });
            } else if p.tile {
                if !free(&loops) {
                    return false;
                }
                let (x, y) = (&loops[m - 2], &loops[m - 1]);
                let mode = self.mode();
                if p.matrix && m >= 4 {
                    let (cols, rows) = (Rows::of(&loops[m - 4]), Rows::of(&loops[m - 3]));
                    odometer(&loops[..m - 4], so, dof, |so, dof| {
                        let (src, dst) = (src.wrapping_offset(so), dst.wrapping_offset(dof));
                        copy_matrix(cols, rows, x.count, y.count, src, y.ss, dst, x.ds, p.unit, mode)
                    });
                    return true;
                }
                let (outer, rows) = if m == 2 { (0, Rows::ONE) } else { (m - 3, Rows::of(&loops[m - 3])) };
                // One shape for every position of the outer loops: one choice.
                let tile = self.tile_choice(rows, x, y);
                odometer(&loops[..outer], so, dof, |so, dof| {
                    tile.run(src.wrapping_offset(so), dst.wrapping_offset(dof), w)
                });
            } else {
                if !free(&loops[..m - 1]) || !self.grid_rows(n - 2) {
                    return false;
                }
                // The grid's own rows, whole or (`m == 2`) the range of them:
                // a window on them counts from the range's first (see `grid`).
                let (s, e) = if m == 2 { (range.start, range.end) } else { (0, p.loops[n - 2].count) };
                let g = grid(&p.loops[n - 2], &loops[m - 1], s, e);
                let (src, dst) = (src.wrapping_offset(so), dst.wrapping_offset(dof));
                g.copy(&loops[..m - 2], src, dst, p.unit, Mode { nt: false, isa: p.isa, fetch: p.streaming });
            }
        }
        true
    }

    /// Whether loop `j + 1` (the last) runs as the rows of a [`Grid`]
    /// under loop `j`: without a window, or cropped by one that depends on
    /// loop `j` alone (backward: nothing to fill). Gathered units
    /// (`CopyPlan::gather`), which are not runs of bytes, go through the
    /// gather a run of the grid's rows at a time ([`Grid::row_runs`]).
    fn grid_rows(&self, j: usize) -> bool {
        let p = self.plan;
        p.loops[j + 1].window.is_none_or(|win| !p.fill && win.outer == Some(j as u8))
    }

    /// Whether loop `j + 1` (the last) runs as the rows of a [`Grid`]
    /// under loop `j` whose ends are padding (forward): a window that
    /// depends on loop `j` alone. Never for gathered units.
    fn padded_rows(&self, j: usize) -> bool {
        let p = self.plan;
        p.gather.is_none() && p.fill && p.loops[j + 1].window.is_some_and(|win| win.outer == Some(j as u8))
    }

    /// Whether the last two loops, from loop `j`, run as one
    /// [`Grid::padded`]: rows padded at their ends ([`Exec::padded_rows`])
    /// and contiguous in the destination, their padding zeros, not
    /// stored through the line writers.
    fn padded_grid(&self, j: usize) -> bool {
        let p = self.plan;
        self.padded_rows(j) && !self.lines() && matches!(self.fill, Fill::Zero) && p.loops[j + 1].ds == p.unit as isize
    }

    /// Runs loop `j` and everything inside it.
    #[inline]
    unsafe fn level(&self, j: usize, so: isize, dof: isize, idx: &mut [usize; MAX_LOOPS], w: &mut Writers) {
        let p = self.plan;
        let buf = self.buf;
        if j == p.loops.len() {
            // SAFETY: a valid position: `unit` bytes on both sides.
            unsafe { self.units(w, 1, buf.src.wrapping_offset(so), 0, buf.dst.wrapping_offset(dof), 0) };
            return;
        }
        if self.nt && p.carry_level == Some(j) {
            // SAFETY: loop j and the loops inside it carry no window (see
            // `carry_level`): all valid positions.
            return unsafe { self.carried(j, p.loops[j].count, so, dof, w) };
        }
        // SAFETY: forwarded, for all of loop j.
        unsafe { self.indices(j, 0..p.loops[j].count, so, dof, idx, w) }
    }

    /// Runs indices `range` of loop `j`, the loop outside a streamed matrix
    /// that continues its source rows (see `CopyPlan::matrix_chunk`): the
    /// matrix's rows `per` repetitions of its rows loop at a time, each
    /// chunk for every index of the range before the next. (Where threads
    /// split the matrix's own loops, more parts than loop `j` and those
    /// outside it have, each part runs its matrix whole.)
    ///
    /// # Safety
    /// As [`Exec::indices`]; the plan's `matrix_chunk` is `Some(per)`, and
    /// loop `j` the fifth from the last (then it and the matrix's four
    /// carry no window: all their positions are valid).
    unsafe fn matrix_in_chunks(&self, j: usize, range: Range<usize>, so: isize, dof: isize, per: usize) {
        let p = self.plan;
        // A real check, once a range: other loops, or a window on these,
        // would address positions the chunks do not have.
        let [l, cols, b, x, y] = &p.loops[j..] else {
            unreachable!("a matrix in chunks is the plan's last five loops, not {:?}", &p.loops[j..]);
        };
        assert!(
            p.loops[j..].iter().all(|l| l.window.is_none()),
            "a matrix in chunks has no window: {:?}",
            &p.loops[j..]
        );
        let (outer, reps) = (Rows::of(l), Rows::of(b));
        let (src, dst) = (self.buf.src.wrapping_offset(so), self.buf.dst.wrapping_offset(dof));
        // (`per` is at least 1: `matrix_chunk`.)
        for r in (0..b.count).step_by(per) {
            let rows = Rows { count: per.min(b.count - r), ..reps };
            let (src, dst) = reps.at(r, src, dst);
            for i in range.clone() {
                let (src, dst) = outer.at(i, src, dst);
                // SAFETY: repetitions `r..r + rows.count` of the rows loop
                // of index `i` of loop j, valid positions (caller).
                unsafe {
                    copy_matrix(Rows::of(cols), rows, x.count, y.count, src, y.ss, dst, x.ds, p.unit, self.mode())
                };
            }
        }
    }

    /// Runs indices `range` of loop `j` (not the carry level), and
    /// everything inside them, from the offsets `so` and `dof` of its index
    /// 0: those its window leaves valid copied, the rest filled.
    ///
    /// # Safety
    /// As [`Exec::level`]; `range` within loop `j`.
    #[inline]
    unsafe fn indices(
        &self,
        j: usize,
        range: Range<usize>,
        so: isize,
        dof: isize,
        idx: &mut [usize; MAX_LOOPS],
        w: &mut Writers,
    ) {
        let p = self.plan;
        let buf = self.buf;
        if let Some(per) = p.matrix_chunk.filter(|_| j + 5 == p.loops.len()) {
            // SAFETY: forwarded; loop j is the one outside the matrix.
            return unsafe { self.matrix_in_chunks(j, range, so, dof, per) };
        }
        let l = &p.loops[j];
        let (s, e) = match l.window {
            None => (0, l.count),
            Some(w) => w.range(w.outer.map_or(0, |o| idx[o as usize]), l.count),
        };
        let s = s.clamp(range.start, range.end);
        let e = e.clamp(s, range.end);
        // SAFETY: padding blocks are destination positions; the copied range
        // `[s, e)` holds valid positions only.
        unsafe {
            if p.fill && (s > range.start || e < range.end) {
                self.fill_range(j, dof, range.start, s, w);
                self.fill_range(j, dof, e, range.end, w);
            }
            if p.padded_block == Some(j) {
                // A padded tile's block from loop j, its kept indices
                // staged as many at a time as the stage holds.
                return self.padded_block(j, (s, e), so, dof, idx, w);
            }
            let so = so.wrapping_add((s as isize).wrapping_mul(l.ss));
            let dof = dof.wrapping_add((s as isize).wrapping_mul(l.ds));
            if j + 1 == p.loops.len() {
                self.units(w, e - s, buf.src.wrapping_offset(so), l.ss, buf.dst.wrapping_offset(dof), l.ds);
            } else if p.matrix && j + 4 == p.loops.len() {
                // The tile repeated along loop j's indices `[s, e)` and the
                // loop inside it (see `CopyPlan::matrix`), one matrix.
                let (b, x, y) = (&p.loops[j + 1], &p.loops[j + 2], &p.loops[j + 3]);
                let cols = Rows { count: e - s, ss: l.ss, ds: l.ds };
                let (src, dst) = (buf.src.wrapping_offset(so), buf.dst.wrapping_offset(dof));
                copy_matrix(cols, Rows::of(b), x.count, y.count, src, y.ss, dst, x.ds, p.unit, self.mode());
            } else if let Some((rows, x, y)) = self.tile_at(j, s, e) {
                // The transposing tile (the last two loops, see `CopyPlan::tile`;
                // the inner one may have a window on the outer one's index,
                // or a constant one).
                let (src, dst) = (buf.src.wrapping_offset(so), buf.dst.wrapping_offset(dof));
                match y.window {
                    None => self.tile_choice(rows, &x, &y).run(src, dst, w),
                    Some(win) => self.windowed_tile(rows, &x, &y, win, src, dst, w),
                }
            } else if j + 2 == p.loops.len() && self.grid_rows(j) {
                // The last two loops: one grid.
                let y = &p.loops[j + 1];
                let g = grid(l, y, s, e);
                let (src, dst) = (buf.src.wrapping_offset(so), buf.dst.wrapping_offset(dof));
                if let Some(gather) = &p.gather {
                    // A call for each run of whole rows, one for each row
                    // the window cuts (a gather's setup is dearer than a
                    // row of a few blocks).
                    g.row_runs(src, dst, |outer, rows, src, dst| {
                        gather::run(gather, outer, rows, src, dst, self.nt, p.isa)
                    });
                } else if self.lines() {
                    g.rows(|i, a, b| {
                        let (src, dst) = g.at(i, a, src, dst);
                        self.units(w, b - a, src, y.ss, dst, y.ds);
                    });
                } else {
                    g.copy(&[], src, dst, p.unit, self.mode());
                }
            } else if j + 2 == p.loops.len() && self.padded_rows(j) {
                // The last two loops, each row padded at its ends: one grid,
                // its rows' padding filled around their units.
                let y = &p.loops[j + 1];
                let g = grid(l, y, s, e);
                let (src, dst) = (buf.src.wrapping_offset(so), buf.dst.wrapping_offset(dof));
                if self.padded_grid(j) {
                    return g.padded(Rows::ONE, src, dst, p.unit, self.mode());
                }
                // In the destination's order (the line writers join what
                // follows on).
                g.rows(|i, a, b| {
                    let row = dof.wrapping_add((i as isize).wrapping_mul(l.ds));
                    self.fill_range(j + 1, row, 0, a, w);
                    let (src, dst) = g.at(i, a, src, dst);
                    self.units(w, b - a, src, y.ss, dst, y.ds);
                    self.fill_range(j + 1, row, b, y.count, w);
                });
            } else if j + 3 == p.loops.len() && p.loops[j + 1].window.is_none() && self.padded_grid(j + 1) {
                // The loop around a padded grid: its indices `[s, e)` as
                // repetitions of the grid, in one call.
                let (x, y) = (&p.loops[j + 1], &p.loops[j + 2]);
                let g = grid(x, y, 0, x.count);
                let rows = Rows { count: e - s, ss: l.ss, ds: l.ds };
                let (src, dst) = (buf.src.wrapping_offset(so), buf.dst.wrapping_offset(dof));
                g.padded(rows, src, dst, p.unit, self.mode());
            } else {
                let (mut so, mut dof) = (so, dof);
                for i in s..e {
                    idx[j] = i;
                    self.level(j + 1, so, dof, idx, w);
                    so = so.wrapping_add(l.ss);
                    dof = dof.wrapping_add(l.ds);
                }
            }
        }
    }

    /// The transposing tile that indices `[s, e)` of loop `j` run as one
    /// call: from the loop around the tile, `e - s` repetitions of it; from
    /// the tile's outer loop `x`, the tile of its indices `[s, e)` (a part
    /// of it when [`Exec::flat_range`] splits it), a window of `y` on `x`'s
    /// index moved to count from `s`. `None` for any other loop, and for a
    /// part of a tile whose window on `y` does not depend on `x` alone,
    /// which goes row by row.
    fn tile_at(&self, j: usize, s: usize, e: usize) -> Option<(Rows, Loop, Loop)> {
        let p = self.plan;
        let n = p.loops.len();
        if !p.tile || j + 3 < n || j + 1 == n {
            return None;
        }
        if j + 3 == n {
            let l = &p.loops[j];
            return Some((Rows { count: e - s, ss: l.ss, ds: l.ds }, p.loops[j + 1], p.loops[j + 2]));
        }
        let (x, mut y) = (Loop { count: e - s, ..p.loops[j] }, p.loops[j + 1]);
        if let Some(win) = y.window.as_mut().filter(|_| s > 0 || e < p.loops[j].count) {
            // A part of the tile: `lo <= oc * (s + i) + ic * k < hi` for
            // `x`'s index `i` from `s`.
            if win.outer != Some(j as u8) {
                return None;
            }
            let moved = win.oc.checked_mul(s as i64)?;
            (win.lo, win.hi) = (win.lo.checked_sub(moved)?, win.hi.checked_sub(moved)?);
        }
        Some((Rows::ONE, x, y))
    }

    /// The kernel of the tile of loops `x` and `y` (the last two) repeated
    /// along `rows`: the plan's choice where it is this tile's (its kernel
    /// chosen for this very shape: `CopyPlan::tile_choice`), else its own.
    /// (The plan's choice is compared where it is, and copied only if
    /// taken: see [`Loop`] on copies of the plan's structures.)
    #[inline(always)]
    fn tile_choice(&self, rows: Rows, x: &Loop, y: &Loop) -> TileChoice {
        let shape = TileShape::of_loops(rows, x, y, self.plan.unit, self.mode());
        match &self.plan.tile_choice {
            Some(c) if *c.shape() == shape => *c,
            _ => TileChoice::of(shape),
        }
    }

    /// Runs `rows` rows of loop `j`, the plan's carry level, from the one
    /// at `so` and `dof` (all of them, or a range of them that
    /// [`Exec::flat_range`] gives), and the tile inside it, with
    /// [`deinterleave_carried`] or [`interleave_carried`] (or, should it
    /// decline, loop by loop).
    ///
    /// # Safety
    /// As `level`, for the carry level of a plan with one; the `rows` rows
    /// are the loop's.
    #[inline(never)]
    unsafe fn carried(&self, j: usize, rows: usize, so: isize, dof: isize, w: &mut Writers) {
        let p = self.plan;
        let n = p.loops.len();
        let (x, y) = (p.loops[n - 2], p.loops[n - 1]);
        // Loop j (`rows` of it), and the loop between it and the tile if there is one.
        let level = Rows { count: rows, ..Rows::of(&p.loops[j]) };
        let middle = if j + 4 == n { Rows::of(&p.loops[j + 1]) } else { Rows::ONE };
        let (src, dst) = (self.buf.src.wrapping_offset(so), self.buf.dst.wrapping_offset(dof));
        if p.padded {
            // SAFETY: forwarded.
            return unsafe { self.padded_carried(level, middle, j, src, dst, w) };
        }
        // Real checks, once a call, of what the kernels below take on
        // trust. Every unit of loops j.. (at most one loop between j and
        // the tile) is copied, here and in the fallback alike: none of
        // them may have a window (the plan's `carry_level` and
        // `interleave_carry_level` took free loops), an assert. The
        // carried kernels also need a row's units contiguous
        // in the source along `x` and in the destination along `y` (the
        // tile's), and, deinterleaving, each source row its `x.count *
        // y.count` units back to back (they take no stride for `y`, which
        // `carry_level` does not test): otherwise they decline, and the
        // tile runs loop by loop.
        let free = p.loops[j..].iter().all(|l| l.window.is_none());
        assert!(free && j + 4 >= n, "a carry level with a window, or too far out");
        let tile = x.ss == p.unit as isize && y.ds == p.unit as isize;
        let source_rows = tile && y.ss == (x.count * p.unit) as isize;
        // SAFETY: the units of loops j.. at `so` and `dof`, all valid
        // positions (no window, checked above); each kernel runs on the
        // tile shape it reads and writes (`tile`, `source_rows`, checked
        // above) and checks the rest itself.
        unsafe {
            let done = if !tile {
                false
            } else if p.segments {
                // Each source row split into consecutive segments, one
                // stream each: deinterleaved row by row (the loop `j`).
                let rows = Rows { count: 1, ss: 0, ds: (y.count * p.unit) as isize };
                let c = Carried { rows, streams: Rows::ONE, ds: x.ds, ahead: Ahead::Source, pad: None };
                source_rows
                    && (0..level.count).all(|i| {
                        let (src, dst) = level.at(i, src, dst);
                        deinterleave_carried(p.isa, p.unit, x.count, c, y.count, src, dst)
                    })
            } else if x.ds == (y.count * p.unit) as isize {
                // Interleaving: the loops outside the tile step whole
                // destination rows.
                let (outer, inner) = if j + 4 == n { (level, middle) } else { (Rows::ONE, level) };
                let keep = (0, x.count * y.count * p.unit);
                let c = Interleaved { outer, inner, ss: y.ss, keep };
                interleave_carried(p.isa, p.unit, y.count, c, x.count, src, dst, w)
            } else {
                let c = Carried { rows: level, streams: middle, ds: x.ds, ahead: Ahead::Source, pad: None };
                source_rows && deinterleave_carried(p.isa, p.unit, x.count, c, y.count, src, dst)
            };
            if !done {
                let mode = self.mode();
                for i in 0..level.count {
                    let (src, dst) = level.at(i, src, dst);
                    copy_tile(middle, x.count, y.count, src, y.ss, dst, x.ds, p.unit, mode, w);
                }
            }
        }
    }

    /// The carried deinterleaving of a padded plan (see
    /// `plan::rules::padded_carry_level`): loop `j` (`level`, the rows) and
    /// `middle` (the stream groups, whose window on the row's index marks
    /// rows wholly padding) around the tile. The carried kernel reads the
    /// source rows in place, making up the padding in the reads that meet
    /// it (measured, ratio to memcpy: OpenVINO NCHW space-to-batch padded on
    /// H and W, float32 by 4 1.13-1.19x -> 0.74-0.80x, uint8 by 3
    /// 1.3-1.5x -> 1.06-1.25x; with AVX512-VBMI, whose own kernel reads
    /// whole rows, AVX-512's joined one, 36 such workloads by 2 to 4 of 1
    /// to 16 channels, 1.43 -> 0.77 geomean, from the stage). If it cannot
    /// (units or streams not aligned in the destination, a typed default
    /// as the padding),
    /// the source rows are each copied, padded, into a staging buffer a
    /// chunk of rows at a time, and the kernel runs each chunk from there
    /// as whole rows (the line a stream shares between two chunks takes
    /// ordinary stores).
    ///
    /// # Safety
    /// As `level`, for the carry level of a padded plan.
    #[inline(never)]
    unsafe fn padded_carried(
        &self,
        level: Rows,
        middle: Rows,
        j: usize,
        src: *const u8,
        dst: *mut u8,
        w: &mut Writers,
    ) {
        let p = self.plan;
        let n = p.loops.len();
        let (x, y) = (p.loops[n - 2], p.loops[n - 1]);
        let groups_window = if j + 4 == n { p.loops[j + 1].window } else { None };
        let unit = p.unit;
        // One source row: `x.count * y.count` units, the padded position
        // `q = x + nx * y` at `q * unit` (the tile's window says which are
        // data).
        let row = x.count * y.count * unit;
        // A real check, once a call, of what the plan's `padded_carry_level`
        // chose this for and what the reads below rely on: the tile's shape,
        // each source row its `x.count * y.count` units back to back (read
        // as one run, in place or into the stage), the tile's window keeping
        // the row positions `q = x + nx * y` in `[lo, hi)` (`oc == 1`, `ic ==
        // nx`: no unit outside it is read), the groups' window on the rows'
        // index alone, none on the rows, and a row of every group fitting
        // the stage (on the stack).
        let row_window = y.window.is_none_or(|w| w.outer == Some((n - 2) as u8) && w.oc == 1 && w.ic == x.count as i64);
        let staged =
            x.count.checked_mul(y.count).and_then(|q| q.checked_mul(unit)).and_then(|r| r.checked_mul(middle.count));
        assert!(
            x.ss == unit as isize
                && y.ds == unit as isize
                && y.ss == (x.count * unit) as isize
                && row_window
                && groups_window.is_none_or(|w| w.outer == Some(j as u8))
                && p.loops[j].window.is_none()
                && staged.is_some_and(|b| b > 0 && b <= PADDED_ROWS_BYTES),
            "padded carried rows: not the plan's shape, or outgrowing their stage"
        );
        let per_chunk = PADDED_ROWS_BYTES / (row * middle.count);
        // `q = oc * x + ic * y` with `oc == 1`, `ic == nx` (checked above):
        // the window's bounds are the row's data positions.
        // Without a window, every position is data (the groups' window
        // alone pads).
        let clamp = |v: i64| v.clamp(0, (x.count * y.count) as i64) as usize;
        let (lo, hi) = y.window.map_or((0, x.count * y.count), |win| (clamp(win.lo), clamp(win.hi)));
        // First in place: the kernel reads the source rows where they are,
        // making up the padding (zeros: a typed default goes through the
        // stage) only in the reads that meet it.
        if matches!(self.fill, Fill::Zero) {
            let pad = Padding { lo: lo * unit, hi: hi.max(lo) * unit, groups: groups_window };
            let c = Carried { rows: level, streams: middle, ds: x.ds, ahead: Ahead::Source, pad: Some(pad) };
            // SAFETY: the units of loops j.. at `src` and `dst` are valid
            // positions where the windows say they are data (`pad`, of the
            // shape checked above); the kernel checks the rest.
            if unsafe { deinterleave_carried(p.isa, unit, x.count, c, y.count, src, dst) } {
                return;
            }
        }
        let mut stage = Staging::<PADDED_ROWS_BYTES>::new();
        let mode = self.mode();
        let mut r0 = 0;
        while r0 < level.count {
            let k = per_chunk.min(level.count - r0);
            // SAFETY: the stage holds `k * middle.count` rows of `row` bytes
            // (`k <= per_chunk`, so `<= PADDED_ROWS_BYTES`, checked above);
            // each is filled, with the source units of its data positions
            // `[lo, hi)` (valid positions: the window's range, of the shape
            // checked above) copied in, or wholly filled for a row the
            // groups' window marks as padding. The carried kernel (or the
            // tile, should it decline) then writes the chunk's rows of
            // every stream.
            unsafe {
                for r in 0..k {
                    let s = src.wrapping_offset((r0 + r) as isize * level.ss);
                    let d = stage.ptr().add(r * middle.count * row);
                    let valid = groups_window.map_or((0, middle.count), |gw| gw.range(r0 + r, middle.count));
                    for i in 0..middle.count {
                        let (s, d) = (s.wrapping_offset(i as isize * middle.ss), d.add(i * row));
                        if !(valid.0..valid.1).contains(&i) || lo >= hi {
                            self.fill.fill(d, row, false);
                            continue;
                        }
                        self.fill.fill(d, lo * unit, false);
                        std::ptr::copy_nonoverlapping(s.add(lo * unit), d.add(lo * unit), (hi - lo) * unit);
                        self.fill.fill(d.add(hi * unit), row - hi * unit, false);
                    }
                }
                let rows = Rows { count: k, ss: (middle.count * row) as isize, ds: level.ds };
                let groups = Rows { count: middle.count, ss: row as isize, ds: middle.ds };
                // While the kernel runs this chunk from the stage, the
                // next chunk's source rows are fetched: the reads overlap
                // the streaming stores, rather than each waiting for the
                // other (measured: OpenVINO NCHW space-to-batch with
                // padding, 1.25-1.8x memcpy -> 1.0-1.4x).
                let ahead = Ahead::Rows {
                    base: src.wrapping_offset((r0 + k) as isize * level.ss).wrapping_add(lo * unit),
                    ss: level.ss,
                    gs: middle.ss,
                    len: (hi - lo) * unit,
                };
                let c = Carried { rows, streams: groups, ds: x.ds, ahead, pad: None };
                let (from, to) = (stage.ptr().cast_const(), dst.wrapping_offset(r0 as isize * level.ds));
                if !deinterleave_carried(p.isa, unit, x.count, c, y.count, from, to) {
                    for r in 0..k {
                        let (from, to) = rows.at(r, from, to);
                        copy_tile(groups, x.count, y.count, from, y.ss, to, x.ds, unit, mode, w);
                    }
                }
            }
            r0 += k;
        }
    }

    /// How the kernels store, and with which instructions.
    fn mode(&self) -> Mode {
        Mode { nt: self.nt, isa: self.plan.isa, fetch: self.plan.streaming }
    }

    /// Copies `n` units: unit `i` from `src + i*ss` to `dst + i*ds`, through
    /// the writers when the plan streams through them; gathered units
    /// (`CopyPlan::gather`) by their byte permutes.
    ///
    /// # Safety
    /// As [`copy_run`].
    #[inline(always)]
    unsafe fn units(&self, w: &mut Writers, n: usize, src: *const u8, ss: isize, dst: *mut u8, ds: isize) {
        let unit = self.plan.unit;
        // SAFETY: forwarded.
        unsafe {
            if let Some(g) = &self.plan.gather {
                gather::run(g, Rows::ONE, Rows { count: n, ss, ds }, src, dst, self.nt, self.plan.isa);
            } else if self.nt && self.plan.gathered && ds == unit as isize {
                gather_lines(w, n, src, ss, dst, unit, self.plan.isa);
            } else if self.lines() {
                w.push_runs(self.plan.isa, Rows { count: n, ss, ds }, src, dst, unit);
            } else {
                copy_run(n, src, ss, dst, ds, unit, self.mode());
            }
        }
    }

    /// Fills `len` destination bytes at `dst` (whole elements).
    ///
    /// # Safety
    /// `len` bytes writable at `dst`.
    #[inline]
    unsafe fn fill_bytes(&self, w: &mut Writers, dst: *mut u8, len: usize) {
        // SAFETY: forwarded.
        unsafe {
            match self.fill {
                Fill::Zero if self.lines() => w.zero(dst, len),
                _ => self.fill.fill(dst, len, self.nt),
            }
        }
    }

    /// Fills indices `[a, b)` of loop `j` (each a whole destination block).
    /// Inlined: padded rows call it twice a row, mostly for a unit or two.
    #[inline(always)]
    unsafe fn fill_range(&self, j: usize, dof: isize, a: usize, b: usize, w: &mut Writers) {
        if a >= b {
            return;
        }
        let p = self.plan;
        let l = &p.loops[j];
        let blk = p.dst_block[j];
        // SAFETY: destination positions of loop j's indices `[a, b)`.
        unsafe {
            if blk != 0 && l.ds == blk as isize {
                let start = self.buf.dst.wrapping_offset(dof + a as isize * l.ds);
                self.fill_bytes(w, start, (b - a) * blk);
            } else if !self.lines() && p.loops[j..].iter().all(|l| l.ds > 0) {
                self.fill_box(j, dof.wrapping_add(a as isize * l.ds), b - a);
            } else {
                for i in a..b {
                    self.fill_block(j + 1, dof.wrapping_add((i as isize).wrapping_mul(l.ds)), w);
                }
            }
        }
    }

    /// Fills indices `0..n` of loop `j` from `dof`, each with the whole
    /// destination block of the loops inside it, as one box: its
    /// dimensions ordered by destination step, the innermost that continue
    /// one another merged into one run, a fill for each run. A padding
    /// block that is not contiguous (a tile's columns) then takes a fill
    /// per run of all `n` indices, rather than one per piece of each block,
    /// each through a call a loop deep (OpenVINO space-to-batch of uint8
    /// by 8 x 10 x 12, padded on H and W: each padded block is 12 runs of
    /// 5 bytes, 500 bytes apart). Through the cache only: the line
    /// writers take their runs in the destination's order. Positive
    /// destination steps only (the caller checks).
    ///
    /// # Safety
    /// Destination positions of loop `j`'s indices `0..n` from `dof`.
    unsafe fn fill_box(&self, j: usize, dof: isize, n: usize) {
        let p = self.plan;
        let mut dims: ArrayVec<Loop, MAX_LOOPS> = ArrayVec::new();
        for (k, l) in p.loops[j..].iter().enumerate() {
            let count = if k == 0 { n } else { l.count };
            dims.push(Loop { count, ss: 0, ds: l.ds, window: None, is_outer: false });
        }
        // Outermost first (a few loops: the sort costs less than a fill).
        dims.sort_unstable_by_key(|l| std::cmp::Reverse(l.ds));
        // The run's bytes are destination bytes (a product of some of the
        // loops' counts and the unit, a factor of `dst_bytes`, which the
        // destination holds): the products cannot overflow.
        let mut run = p.unit;
        while let Some(l) = dims.last().filter(|l| l.ds == run as isize) {
            run *= l.count;
            dims.pop();
        }
        // SAFETY: each run is `run` contiguous bytes of the box, inside the
        // destination (the caller's positions, in another order).
        odometer(&dims, 0, dof, |_, d| unsafe { self.fill.fill(self.buf.dst.wrapping_offset(d), run, self.nt) });
    }

    /// Fills the whole destination block of loops `j..` at `dof`.
    unsafe fn fill_block(&self, j: usize, dof: isize, w: &mut Writers) {
        let p = self.plan;
        // SAFETY: destination positions of the block.
        unsafe {
            if j == p.loops.len() {
                self.fill_bytes(w, self.buf.dst.wrapping_offset(dof), p.unit);
            } else {
                self.fill_range(j, dof, 0, p.loops[j].count, w);
            }
        }
    }
}

/// The grid of indices `[s, e)` of loop `l` over the last loop `y` (see
/// `Exec::grid_rows`), from the position of index `s`.
fn grid(l: &Loop, y: &Loop, s: usize, e: usize) -> Grid {
    Grid {
        n1: e - s,
        ss1: l.ss,
        ds1: l.ds,
        n0: y.count,
        ss0: y.ss,
        ds0: y.ds,
        bounds: y.window.map_or(Bounds::ALL, |win| win.bounds(s)),
        oc: y.window.map_or(0, |win| win.oc),
    }
}
