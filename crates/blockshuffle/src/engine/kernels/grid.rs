//! The grid kernel: a plan's innermost two loops as one [`Grid`] of units,
//! copied through the cache, streamed, or padded.
//!
//! Layer: kernels; imports [`copy`](super::copy), [`bytes`](super::bytes),
//! [`stream`](super::stream), [`lines`](super::lines),
//! [`shuffle`](super::shuffle), [`pack`](super::pack), [`nest`](super::nest)
//! and arch.

use std::ptr;

use super::bytes::zero_bytes;
use super::copy::{
    by_run_unit, by_unit, by_wide_unit, copy_run, odometer, stream_vectors, strided, unit_copy, whole_rows, widens,
    Mode, STREAM_AHEAD,
};
use super::nest::{Bounds, Loop, Rows};
use super::pack::{self, Table, Units};
use super::shuffle;
use super::stream::{fetches_streams, streams_rows};
use crate::engine::arch::mem::{pair, prefetch};
use crate::engine::arch::Isa;

/// The innermost two loops of a plan as one grid of units: row `i < n1`
/// starts at `src + i*ss1` and `dst + i*ds1`, and copies units `[a, b)` of
/// its `n0`, unit `k` from `row src + k*ss0` to `row dst + k*ds0`. Row 0's
/// `[a, b)` is `bounds`' range, and each row's bounds are the last row's
/// stepped by `oc` (a crop window on the inner loop that depends on the
/// outer one: the rest of a row does not exist in the destination). Without
/// a window, `Bounds::ALL` and `oc == 0`: every row copies all `n0` units.
#[derive(Clone, Copy)]
pub(crate) struct Grid {
    pub n1: usize,
    pub ss1: isize,
    pub ds1: isize,
    pub n0: usize,
    pub ss0: isize,
    pub ds0: isize,
    pub bounds: Bounds,
    pub oc: i64,
}

impl Grid {
    /// The source and destination of unit `a` of row `i`.
    #[inline(always)]
    pub(crate) fn at(&self, i: usize, a: usize, src: *const u8, dst: *mut u8) -> (*const u8, *mut u8) {
        let (i, a) = (i as isize, a as isize);
        (
            src.wrapping_offset(i.wrapping_mul(self.ss1).wrapping_add(a.wrapping_mul(self.ss0))),
            dst.wrapping_offset(i.wrapping_mul(self.ds1).wrapping_add(a.wrapping_mul(self.ds0))),
        )
    }

    /// Calls `row(i, a, b)` for every row `i` and its units `[a, b)`.
    #[inline(always)]
    pub(crate) fn rows(&self, mut row: impl FnMut(usize, usize, usize)) {
        let mut bounds = self.bounds;
        for i in 0..self.n1 {
            let (a, b) = bounds.range(self.n0);
            row(i, a, b);
            bounds = bounds.step(self.oc);
        }
    }

    /// Calls `run(outer, units, src, dst)` for the grid's rows in the
    /// fewest calls of a kernel that repeats a row: each run of consecutive
    /// whole rows (all `n0` units) as one call of that many rows, and each
    /// row its window cuts as a call of one row of its units `[a, b)`
    /// (rows left with none: no call), in the rows' order. For kernels
    /// whose setup costs more than a row of a few units (a gather's
    /// permute indices).
    #[inline(always)]
    pub(crate) fn row_runs(&self, src: *const u8, dst: *mut u8, mut run: impl FnMut(Rows, Rows, *const u8, *mut u8)) {
        let whole = Rows { count: self.n0, ss: self.ss0, ds: self.ds0 };
        let whole_rows = |n: usize| Rows { count: n, ss: self.ss1, ds: self.ds1 };
        // The run of whole rows not yet passed on: its first row and length.
        let (mut first, mut n) = (0, 0);
        self.rows(|i, a, b| {
            if (a, b) == (0, self.n0) {
                if n == 0 {
                    first = i;
                }
                n += 1;
                return;
            }
            if n > 0 {
                let (s, d) = self.at(first, 0, src, dst);
                run(whole_rows(n), whole, s, d);
                n = 0;
            }
            if a < b {
                let (s, d) = self.at(i, a, src, dst);
                run(Rows::ONE, Rows { count: b - a, ..whole }, s, d);
            }
        });
        if n > 0 {
            let (s, d) = self.at(first, 0, src, dst);
            run(whole_rows(n), whole, s, d);
        }
    }

    /// Copies every unit of the grid, once at each position of the loops
    /// `outer` around it (none: once), with the choice of unit kernel made
    /// once for all of them (tiny tensors are mostly this overhead).
    ///
    /// # Safety
    /// As [`copy_run`] for every row's range at every position.
    #[inline]
    pub(crate) unsafe fn copy(&self, outer: &[Loop], src: *const u8, dst: *mut u8, unit: usize, m: Mode) {
        // SAFETY: forwarded; each row's range is the caller's.
        unsafe {
            #[cfg(target_arch = "x86_64")]
            if m.nt
                && outer.is_empty()
                && (dst as usize).is_multiple_of(16)
                && streams_rows(unit, self.n0, self.ds0, self.ss1, self.ds1)
            {
                return self.stream_rows(src, dst, unit);
            }
            #[cfg(target_arch = "x86_64")]
            if m.nt
                && outer.is_empty()
                && (dst as usize | unit | self.ds0 as usize).is_multiple_of(16)
                && self.ss0 == unit as isize
                && self.ds1 == unit as isize
                && self.oc == 0
                && self.bounds.range(self.n0) == (0, self.n0)
            {
                return match self.n0 {
                    2 => self.stream_scattered::<2>(src, dst, unit),
                    3 => self.stream_scattered::<3>(src, dst, unit),
                    _ => self.stream_scattered::<0>(src, dst, unit),
                };
            }
            let shuffled = self.ds0 == unit as isize && shuffle::gathers(m.isa, unit, self.ss0);
            if m.nt || shuffled || (self.ss0 == unit as isize && self.ds0 == unit as isize) {
                odometer(outer, 0, 0, |so, dof| {
                    let (src, dst) = (src.wrapping_offset(so), dst.wrapping_offset(dof));
                    self.rows(|i, a, b| {
                        let (s, d) = self.at(i, a, src, dst);
                        copy_run(b - a, s, self.ss0, d, self.ds0, unit, m);
                    })
                });
                return;
            }
            let packs = self.oc == 0 && pack::takes(m.isa, unit) && widens(unit, self.ss0, self.ds0);
            if packs && self.packed(outer, src, dst, unit, m.isa) {
                return;
            }
            // One out-of-line loop nest per kind of unit (`units` gives the
            // closures only the grid's units, which the caller vouches for).
            by_run_unit!(unit, self.ss0, self.ds0, copy, last => self.units(outer, src, dst, copy, last))
        }
    }

    /// Streams every unit of a grid whose rows' units are contiguous in the
    /// source and go each to its own destination stream, which the next
    /// row continues (`N` of them, 0: `n0`): rows gathered a unit at a
    /// time taken in the source's order (see `plan::rules::scatters_gathered_rows`,
    /// whose plans ran slower than gathered through `copy_run` a row at a
    /// time). The streams' lines fill over consecutive rows; the rows that
    /// start and end them leave partial lines only at the streams' ends.
    ///
    /// # Safety
    /// As [`Grid::copy`] without outer loops or bounds; `dst`, `unit` and
    /// `ds0`, so every unit's destination, are 16-byte aligned.
    #[cfg(target_arch = "x86_64")]
    #[inline(never)]
    unsafe fn stream_scattered<const N: usize>(&self, src: *const u8, dst: *mut u8, unit: usize) {
        let n0 = if N == 0 { self.n0 } else { N };
        let (mut s, mut d) = (src, dst);
        for _ in 0..self.n1 {
            for a in 0..n0 {
                // SAFETY: unit `a` of the row, the grid's, at a 16-byte-aligned
                // destination (`dst`, `unit` and `ds0` are multiples of 16).
                unsafe { stream_vectors(s.add(a * unit), d.wrapping_offset(a as isize * self.ds0), unit) };
            }
            s = s.wrapping_offset(self.ss1);
            d = d.wrapping_add(unit);
        }
    }

    /// Streams every unit of a grid of [`streams_rows`] straight from the
    /// source to the destination, rows in order: the destination is one
    /// sequential run, whose lines the streaming stores fill in turn, and
    /// each of a row's unit positions reads a sequential stream of the
    /// source, which the hardware prefetchers follow, and which is fetched
    /// [`STREAM_AHEAD`] bytes ahead along each stream where they fall
    /// behind ([`fetches_streams`]). The rows a window keeps whole go
    /// without bounds, those of 2 to 4 units of 16 to 64 bytes each by a
    /// loop of constant shape ([`whole_rows`]): taken a bound at a time,
    /// rows of 64 bytes went 0.9-1.05x memcpy, and 1.03-1.13 with the plans
    /// that make them of 32-byte units instead of a tile (NHWC
    /// batch-to-space by 2, two runs in separate processes); so,
    /// 0.66-0.75.
    ///
    /// # Safety
    /// As [`Grid::copy`] without outer loops; `dst` is 16-byte aligned and
    /// the grid is one of [`streams_rows`] (so is every unit's destination).
    #[cfg(target_arch = "x86_64")]
    #[inline(never)]
    unsafe fn stream_rows(&self, src: *const u8, dst: *mut u8, unit: usize) {
        let (n0, ss0) = (self.n0, self.ss0);
        let fetch = fetches_streams(n0, ss0, unit);
        // Row `i`'s units `[a, b)`, one at a time.
        let part = |i: usize, a: usize, b: usize| {
            let (mut s, mut d) = self.at(i, a, src, dst);
            for _ in a..b {
                // The unit `STREAM_AHEAD` bytes on along its stream (the
                // rows continue one another in the source: `ss1 == unit`).
                if fetch {
                    prefetch(s.wrapping_add(STREAM_AHEAD), unit);
                }
                // SAFETY: one of the grid's units, readable at `s` and
                // writable at `d`, which is 16-byte aligned: `dst` is, and
                // `ds1` and `ds0` are multiples of `unit`, itself one of 16.
                unsafe { stream_vectors(s, d, unit) };
                s = s.wrapping_offset(ss0);
                d = d.wrapping_add(unit);
            }
        };
        // A window keeps one interval of the run's positions (its bounds
        // move one way from row to row), so the rows it keeps whole are
        // one range `[first, end)`, with partial rows only before and
        // after: those take the bounds row by row, the whole ones none.
        let whole = |b: Bounds| b.range(n0) == (0, n0);
        let mut bounds = self.bounds;
        let mut first = 0;
        while first < self.n1 {
            let (a, b) = bounds.range(n0);
            if (a, b) == (0, n0) {
                break;
            }
            part(first, a, b);
            bounds = bounds.step(self.oc);
            first += 1;
        }
        let at_row = |i: usize| bounds.step(self.oc.wrapping_mul((i - first) as i64));
        let mut end = self.n1;
        while end > first && !whole(at_row(end - 1)) {
            end -= 1;
        }
        let (s, d) = self.at(first, 0, src, dst);
        // SAFETY: rows `[first, end)` are whole: every unit of theirs is
        // the grid's (as above).
        unsafe {
            // Rows of 2 to 4 units of these sizes in a loop of constant shape.
            macro_rules! whole_rows_of {
                ($($u:literal),*) => {
                    match (unit, n0) {
                        $(
                            ($u, 2) => whole_rows::<$u, 2>(end - first, s, ss0, d, fetch),
                            ($u, 3) => whole_rows::<$u, 3>(end - first, s, ss0, d, fetch),
                            ($u, 4) => whole_rows::<$u, 4>(end - first, s, ss0, d, fetch),
                        )*
                        _ => {
                            for i in first..end {
                                part(i, 0, n0);
                            }
                        }
                    }
                };
            }
            whole_rows_of!(16, 32, 48, 64)
        }
        for i in end..self.n1 {
            let (a, b) = at_row(i).range(n0);
            part(i, a, b);
        }
    }

    /// Copies every unit of a grid of packed units gathered into
    /// contiguous rows ([`pack`]), at every position of `outer`, if its
    /// rows all keep the same units: the whole grid as one run where each
    /// row continues the last in the destination (depth-to-space's block
    /// positions, pixel shuffles) and a [`Table`] of its sources takes
    /// it, else row by row where a row has [`pack::ROW_BYTES`] or more.
    /// `false`, having done nothing, for any other grid.
    ///
    /// # Safety
    /// As [`Grid::copy`]; `oc == 0` (the rows' bounds all the same), `ds0
    /// == unit` and `ss0` at least the power of two above it ([`widens`]);
    /// `pack::takes(isa, unit)`, `isa` one this CPU runs.
    #[inline(never)]
    unsafe fn packed(&self, outer: &[Loop], src: *const u8, dst: *mut u8, unit: usize, isa: Isa) -> bool {
        let (n0, ss0) = (self.n0, self.ss0);
        let (a, b) = self.bounds.range(n0);
        let continued = (a, b) == (0, n0) && self.ds1 == (n0 * unit) as isize;
        let repeats = outer.iter().fold(1usize, |r, l| r.saturating_mul(l.count));
        let whole = Units { rows: self.n1, n0, ss0, ss1: self.ss1 };
        let table = continued.then(|| Table::of(isa, unit, whole, repeats)).flatten();
        if table.is_none() && (b - a) * unit < pack::ROW_BYTES {
            return false;
        }
        let rows = Rows { count: self.n1, ss: self.ss1, ds: self.ds1 };
        let (src, dst) = self.at(0, a, src, dst);
        // SAFETY: forwarded: the grid's units, each row's destination
        // contiguous (`ds0 == unit`), continued by the next row's where
        // the grid goes as one run (`continued`); the kernels check their
        // reads.
        unsafe {
            match &table {
                Some(table) => table.run(outer, src, dst),
                None => pack::rows(isa, unit, outer, rows, b - a, ss0, src, dst),
            }
        }
        true
    }

    /// Calls `copy` for every unit of the grid at every position of `outer`
    /// but the last of each row, and `last` for that one. Where every
    /// row keeps the same units (`oc == 0`), the rows go one after
    /// another by their strides, without working out each row's bounds
    /// and offsets: measured (one thread, alternated runs, each
    /// workload's minimum, time after over before) on the broad
    /// workloads that spend their time here, seed 26's 58: 0.90 (OpenVINO
    /// depth-to-space of 3-byte units by 6, 14 -> 8.5x memcpy); the 232
    /// of seeds 801 and 802 that take this path, 0.95.
    ///
    /// # Safety
    /// `copy` and `last` must be sound for the units they are given (as
    /// [`Grid::copy`]'s caller guarantees, and [`widens`] for a wide `copy`).
    #[inline(never)]
    unsafe fn units(
        &self,
        outer: &[Loop],
        src: *const u8,
        dst: *mut u8,
        copy: impl Fn(*const u8, *mut u8),
        last: impl Fn(*const u8, *mut u8),
    ) {
        if self.oc == 0 {
            // Every row's bounds the same: the rows one after another by
            // their strides, no bounds or offsets worked out a row.
            let (a, b) = self.bounds.range(self.n0);
            odometer(outer, 0, 0, |so, dof| {
                let (mut s, mut d) = self.at(0, a, src.wrapping_offset(so), dst.wrapping_offset(dof));
                for _ in 0..self.n1 {
                    // SAFETY: forwarded (the row's units `[a, b)`).
                    unsafe { strided(b - a, s, self.ss0, d, self.ds0, &copy, &last) }
                    s = s.wrapping_offset(self.ss1);
                    d = d.wrapping_offset(self.ds1);
                }
            });
            return;
        }
        odometer(outer, 0, 0, |so, dof| {
            let (src, dst) = (src.wrapping_offset(so), dst.wrapping_offset(dof));
            self.rows(|i, a, b| {
                let (s, d) = self.at(i, a, src, dst);
                // SAFETY: forwarded (the row's units `[a, b)`).
                unsafe { strided(b - a, s, self.ss0, d, self.ds0, &copy, &last) }
            })
        });
    }

    /// Copies each row's units inside its bounds and zero-fills the units
    /// outside them, the row's padding (forward plans whose last loop's
    /// window depends on the grid's rows: NHWC space-to-batch with
    /// padding), at each of `outer`'s repetitions of the grid. The rows'
    /// kernel is chosen once, and the padding at a row's ends is one short
    /// store each: a row of a few hundred bytes otherwise spends as long
    /// choosing and calling as copying. Measured on uint8 three-channel
    /// space-to-batch 3x3 with padding (rows of 384 bytes, 3 to a grid):
    /// 10.6 million instructions a run through the executor's row loop,
    /// 9.4 with one grid a call, 8.2 with the loop around the grid as its
    /// repetitions, of which the shuffle kernel is 5.3; the best of 200
    /// runs 1.13-1.53 ms -> 0.97-1.33 (four runs), then 0.96 -> 0.80-0.82
    /// (three runs).
    ///
    /// # Safety
    /// As [`Grid::copy`] without outer loops, at each repetition of
    /// `outer`, and each row's destination is contiguous: `ds0 == unit`,
    /// every unit of a row writable.
    #[inline]
    pub(crate) unsafe fn padded(&self, outer: Rows, src: *const u8, dst: *mut u8, unit: usize, m: Mode) {
        // A real check, once a call (the executor's `padded_grid` chose
        // this for `ds0 == unit`): each row's padding is zeroed as the
        // contiguous bytes before and after its units.
        assert_eq!(self.ds0, unit as isize, "a padded grid's rows must be contiguous");
        let ss = self.ss0;
        // SAFETY: forwarded; each row's copied units are those inside its
        // bounds, its padding the bytes around them (`ds0 == unit`, checked
        // above), and the shuffle kernel runs on the plan's `isa`.
        unsafe {
            if let Some(kernel) = shuffle::gather_kernel(m.isa, unit, ss).filter(|_| !m.nt) {
                return self.padded_rows(outer, src, dst, unit, m.nt, |n, s, d| {
                    if !kernel(n, s, ss, d) {
                        copy_run(n, s, ss, d, unit as isize, unit, m)
                    }
                });
            }
            if !m.nt && widens(unit, ss, unit as isize) {
                return by_wide_unit!(unit, wide, exact => self.padded_rows(outer, src, dst, unit, false, |n, s, d| {
                    strided(n, s, ss, d, unit as isize, wide, exact)
                }));
            }
            self.padded_rows(outer, src, dst, unit, m.nt, |n, s, d| copy_run(n, s, ss, d, unit as isize, unit, m))
        }
    }

    /// Calls `row(n, src, dst)` for each row's `n` units inside its bounds,
    /// and zero-fills the units before and after them, at each repetition
    /// of `outer`.
    ///
    /// # Safety
    /// As [`Grid::padded`]; `row` sound for the units it is given.
    #[inline(never)]
    unsafe fn padded_rows(
        &self,
        outer: Rows,
        src: *const u8,
        dst: *mut u8,
        unit: usize,
        nt: bool,
        row: impl Fn(usize, *const u8, *mut u8),
    ) {
        // The rows' ranges, worked out once for all repetitions where the
        // grid has few rows (a block's positions), rather than with two
        // divisions a row (measured on S3q, best of 200 runs: faster in 4
        // of 5 runs, 0.68-0.85 -> 0.65-0.84 ms; float32 S3p 1.01-1.16 ->
        // 0.99-1.13).
        let mut ranges = [(0usize, 0usize); 8];
        let few = outer.count > 1 && self.n1 <= ranges.len();
        if few {
            self.rows(|i, a, b| ranges[i] = (a, b));
        }
        /// Row `i`'s units `[a, b)` at `src` and `dst`, its padding around
        /// them: a function inlined into each loop below. As a closure it
        /// was compiled out of line, a call a row (measured, one thread, 8
        /// alternated runs, the 6 broad workloads of seed 26 that spend
        /// their time here, TF and OpenVINO space-to-batch: 0.93 of the
        /// time; TF's of seeds 801 to 803, 96, 0.99).
        ///
        /// # Safety
        /// `i < g.n1` and `a <= b <= g.n0` (a row's bounds); row `i`'s
        /// `n0` units, from `dst + i * g.ds1`, writable and contiguous
        /// (`g.ds0 == unit`); `row` sound for its `b - a` units.
        #[inline(always)]
        unsafe fn padded_row(
            g: &Grid,
            row: &impl Fn(usize, *const u8, *mut u8),
            unit: usize,
            nt: bool,
            (i, a, b): (usize, usize, usize),
            src: *const u8,
            dst: *mut u8,
        ) {
            let (s, d) = g.at(i, a, src, dst);
            // SAFETY: `d` is `a` units past the row's start (`ds0 ==
            // unit`), so units `[0, a)` and `[b, n0)` of the row, its
            // padding, are the contiguous bytes before and after its units
            // `[a, b)`, all writable (# Safety).
            unsafe {
                if a > 0 {
                    zero_bytes(d.sub(a * unit), a * unit, nt);
                }
                row(b - a, s, d);
                if b < g.n0 {
                    zero_bytes(d.add((b - a) * unit), (g.n0 - b) * unit, nt);
                }
            }
        }
        for r in 0..outer.count {
            let (src, dst) = outer.at(r, src, dst);
            if few {
                for (i, &(a, b)) in ranges[..self.n1].iter().enumerate() {
                    // SAFETY: `(i, a, b)` from `self.rows` (`i < n1`, `a <=
                    // b <= n0`); `ds0 == unit`, asserted by `padded`, the
                    // one caller; the caller vouches for `row` and the units.
                    unsafe { padded_row(self, &row, unit, nt, (i, a, b), src, dst) };
                }
            } else {
                // SAFETY: as above, the bounds straight from `self.rows`.
                self.rows(|i, a, b| unsafe { padded_row(self, &row, unit, nt, (i, a, b), src, dst) });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::kernels::nest::Window;

    /// The calls of [`Grid::row_runs`] on a grid of `n1 x n0` units, rows
    /// 1,000 source bytes apart and units 10 (destination: 100 and 1),
    /// cropped by `window` on the row index: `(rows, units, source offset,
    /// destination offset)` each.
    fn runs(n1: usize, n0: usize, window: Option<Window>) -> Vec<(usize, usize, usize, usize)> {
        let g = Grid {
            n1,
            ss1: 1000,
            ds1: 100,
            n0,
            ss0: 10,
            ds0: 1,
            bounds: window.map_or(Bounds::ALL, |w| w.bounds(0)),
            oc: window.map_or(0, |w| w.oc),
        };
        let (src, dst) = (ptr::null::<u8>(), ptr::null_mut::<u8>());
        let mut calls = Vec::new();
        g.row_runs(src, dst, |outer, units, s, d| {
            if outer.count > 1 {
                assert_eq!((outer.ss, outer.ds), (1000, 100), "whole rows step by the grid's rows");
            }
            assert_eq!((units.ss, units.ds), (10, 1), "units step by the grid's units");
            calls.push((outer.count, units.count, s as usize, d as usize));
        });
        calls
    }

    #[test]
    fn runs_of_whole_rows_go_in_one_call_and_cut_rows_alone() {
        // No window: every row in one call.
        assert_eq!(runs(7, 2, None), [(7, 2, 0, 0)]);
        // OpenVINO batch-to-space of 3-byte units by 16 x 2 x 3, cropped by
        // one at both ends of W (`1 <= 2i + k < 13`): the first row keeps
        // its last unit, the last its first, the five between are whole.
        let both = Window { outer: Some(0), oc: 2, ic: 1, lo: 1, hi: 13 };
        assert_eq!(runs(7, 2, Some(both)), [(1, 1, 10, 1), (5, 2, 1000, 100), (1, 1, 6000, 600)]);
        // Cut at the end only, the last rows keeping nothing (`2i + k <
        // 9`): a run of four whole rows, then row 4's first unit, no call
        // for rows 5 and 6.
        let end = Window { outer: Some(0), oc: 2, ic: 1, lo: 0, hi: 9 };
        assert_eq!(runs(7, 2, Some(end)), [(4, 2, 0, 0), (1, 1, 4000, 400)]);
        // Cut rows before a run of whole rows (`3 <= i + 3k`, rows of 3
        // units, a factor inside its block): rows 0 to 2 keep units 1 and
        // 2 only, where the unit index's step is 3 (`ic`).
        let inner = Window { outer: Some(0), oc: 1, ic: 3, lo: 3, hi: 100 };
        assert_eq!(runs(5, 3, Some(inner)), [(1, 2, 10, 1), (1, 2, 1010, 101), (1, 2, 2010, 201), (2, 3, 3000, 300)]);
        // A run of one whole row, the last.
        let start = Window { outer: Some(0), oc: 2, ic: 1, lo: 1, hi: 100 };
        assert_eq!(runs(2, 2, Some(start)), [(1, 1, 10, 1), (1, 2, 1000, 100)]);
    }
}
