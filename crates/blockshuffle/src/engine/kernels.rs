//! The copy kernels: small functions that move bytes between offsets the
//! plan has proven valid. Each documents what its caller guarantees.

use std::mem::MaybeUninit;
use std::ptr;

use super::lines::{store_line as line, Writers, LINE};
use super::plan::{Bounds, Loop, Window, CROPPED_ROWS_BYTES, MAX_LOOPS};
use super::shuffle;
use super::simd::{self, Isa};

/// Copies `n` units of `unit` bytes: unit `i` from `src + i*ss` to `dst + i*ds`.
///
/// # Safety
/// Every one of those `n` source units must be readable and destination units
/// writable, and no destination unit may overlap a source unit.
#[inline]
pub(crate) unsafe fn copy_run(n: usize, src: *const u8, ss: isize, dst: *mut u8, ds: isize, unit: usize, m: Mode) {
    if n == 0 {
        return;
    }
    let nt = m.nt;
    // SAFETY: forwarded; a contiguous run on both sides (or a single unit)
    // is one block of `n * unit` bytes.
    unsafe {
        if n == 1 || (ss == unit as isize && ds == unit as isize) {
            return copy_bytes(src, dst, n * unit, nt);
        }
        if nt {
            if ds == unit as isize {
                return stream_gather(n, src, ss, dst, unit, m.isa);
            }
            if unit >= STREAM_MIN {
                for i in 0..n as isize {
                    stream_copy(src.offset(i * ss), dst.offset(i * ds), unit);
                }
                return;
            }
        }
        // Units of three channels gathered by byte shuffles.
        if ds == unit as isize && shuffle::gather(m.isa, n, src, ss, dst, unit) {
            return;
        }
        // The kind of unit chosen once per run, not per unit.
        if widens(unit, ss, ds) {
            return by_wide_unit!(unit, wide, exact => strided(n, src, ss, dst, ds, wide, exact));
        }
        by_unit!(unit, copy => strided(n, src, ss, dst, ds, copy, copy))
    }
}

/// Whether a run of units of `unit` bytes with these strides may copy each
/// unit but the last as one move of the power of two above it (see
/// [`by_wide_unit`]): the destination is contiguous, so that a move's
/// excess lands on the next unit's place, written next; and each next
/// source unit starts at least that many bytes on, so that the excess read
/// lies between two units of the source buffer. Units of 3, 6 or 12 bytes
/// (three channels) then take one load and one store each, not two of each.
#[inline(always)]
pub(crate) fn widens(unit: usize, ss: isize, ds: isize) -> bool {
    wide_move(unit).is_some_and(|wide| ds == unit as isize && ss >= wide as isize)
}

/// The power of two above a unit of 3, 5-7, 9-15, 17-31 or 33-63 bytes: the
/// move [`by_wide_unit`] copies it with; `None` for other units.
#[inline(always)]
fn wide_move(unit: usize) -> Option<usize> {
    match unit {
        3 => Some(4),
        5..=7 => Some(8),
        9..=15 => Some(16),
        17..=31 => Some(32),
        33..=63 => Some(64),
        _ => None,
    }
}

/// Evaluates `$body` with `$wide` bound to a closure that copies one unit
/// of `$unit` bytes (3, 5-7, 9-15, 17-31 or 33-63) as one move of the power of two
/// above it, and `$exact` to one that copies it exactly (two overlapping
/// moves), chosen once. The caller vouches that every unit it gives `$wide`
/// has that many bytes readable at its source and writable at its
/// destination ([`widens`]).
macro_rules! by_wide_unit {
    ($unit:expr, $wide:ident, $exact:ident => $body:expr) => {{
        let unit: usize = $unit;
        match unit {
            3 => {
                let $wide = |s, d| unit_copy::<4>(s, d);
                let $exact = |s, d| pair::<2>(s, d, 3);
                $body
            }
            5..=7 => {
                let $wide = |s, d| unit_copy::<8>(s, d);
                let $exact = |s, d| pair::<4>(s, d, unit);
                $body
            }
            9..=15 => {
                let $wide = |s, d| unit_copy::<16>(s, d);
                let $exact = |s, d| pair::<8>(s, d, unit);
                $body
            }
            17..=31 => {
                let $wide = |s, d| unit_copy::<32>(s, d);
                let $exact = |s, d| pair::<16>(s, d, unit);
                $body
            }
            _ => {
                let $wide = |s, d| unit_copy::<64>(s, d);
                let $exact = |s, d| pair::<32>(s, d, unit);
                $body
            }
        }
    }};
}
use by_wide_unit;

/// Evaluates `$body` with `$copy` bound to a closure that copies one unit of
/// `$unit` bytes, chosen once: each arm is its own loop nest, which never
/// dispatches on the unit inside it (tiny tensors are mostly this
/// overhead). The closures copy whatever they are given: the caller, in an
/// unsafe block, vouches for the units its loop gives them.
macro_rules! by_unit {
    ($unit:expr, $copy:ident => $body:expr) => {{
        let unit: usize = $unit;
        match unit {
            1 => {
                let $copy = |s, d| unit_copy::<1>(s, d);
                $body
            }
            2 => {
                let $copy = |s, d| unit_copy::<2>(s, d);
                $body
            }
            4 => {
                let $copy = |s, d| unit_copy::<4>(s, d);
                $body
            }
            8 => {
                let $copy = |s, d| unit_copy::<8>(s, d);
                $body
            }
            16 => {
                let $copy = |s, d| unit_copy::<16>(s, d);
                $body
            }
            12 => {
                let $copy = |s: *const u8, d: *mut u8| {
                    unit_copy::<8>(s, d);
                    unit_copy::<4>(s.add(8), d.add(8))
                };
                $body
            }
            // The pair's size chosen once too.
            3 => {
                let $copy = |s, d| pair::<2>(s, d, 3);
                $body
            }
            5..=7 => {
                let $copy = |s, d| pair::<4>(s, d, unit);
                $body
            }
            9..=15 => {
                let $copy = |s, d| pair::<8>(s, d, unit);
                $body
            }
            17..=32 => {
                let $copy = |s, d| pair::<16>(s, d, unit);
                $body
            }
            33..=64 => {
                let $copy = |s, d| pair::<32>(s, d, unit);
                $body
            }
            _ => {
                let $copy = |s, d| ptr::copy_nonoverlapping(s, d, unit);
                $body
            }
        }
    }};
}
use by_unit;

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
            // One out-of-line loop nest per kind of unit (`units` gives the
            // closures only the grid's units, which the caller vouches for).
            if widens(unit, self.ss0, self.ds0) {
                return by_wide_unit!(unit, wide, exact => self.units(outer, src, dst, wide, exact));
            }
            by_unit!(unit, copy => self.units(outer, src, dst, copy, copy))
        }
    }

    /// Streams every unit of a grid whose rows' units are contiguous in the
    /// source and go each to its own destination stream, which the next
    /// row continues (`N` of them, 0: `n0`): rows gathered a unit at a
    /// time taken in the source's order (see `plan::scatters_gathered_rows`,
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
    /// source, which the hardware prefetchers follow. The rows a window
    /// keeps whole go without bounds, those of 2 to 4 units of 16 to 64
    /// bytes each by a loop of constant shape ([`whole_rows`]): taken a
    /// bound at a time, rows of 64 bytes went 0.9-1.05x memcpy, and
    /// 1.03-1.13 with the plans that make them of 32-byte units instead of
    /// a tile (NHWC batch-to-space by 2, two runs in separate processes);
    /// so, 0.66-0.75.
    ///
    /// # Safety
    /// As [`Grid::copy`] without outer loops; `dst` is 16-byte aligned and
    /// the grid is one of [`streams_rows`] (so is every unit's destination).
    #[cfg(target_arch = "x86_64")]
    #[inline(never)]
    unsafe fn stream_rows(&self, src: *const u8, dst: *mut u8, unit: usize) {
        let (n0, ss0) = (self.n0, self.ss0);
        // Row `i`'s units `[a, b)`, one at a time.
        let part = |i: usize, a: usize, b: usize| {
            let (mut s, mut d) = self.at(i, a, src, dst);
            for _ in a..b {
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
                            ($u, 2) => whole_rows::<$u, 2>(end - first, s, ss0, d),
                            ($u, 3) => whole_rows::<$u, 3>(end - first, s, ss0, d),
                            ($u, 4) => whole_rows::<$u, 4>(end - first, s, ss0, d),
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

    /// Calls `copy` for every unit of the grid at every position of `outer`
    /// but the last of each row, and `last` for that one.
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
        // Row `i`'s units `[a, b)` at `src` and `dst`, its padding around them.
        let padded_row = |i: usize, a: usize, b: usize, src: *const u8, dst: *mut u8| {
            let (s, d) = self.at(i, a, src, dst);
            // SAFETY: units `[0, a)` and `[b, n0)` of the row are its
            // padding, contiguous before and after its units `[a, b)`.
            unsafe {
                if a > 0 {
                    zero_bytes(d.sub(a * unit), a * unit, nt);
                }
                row(b - a, s, d);
                if b < self.n0 {
                    zero_bytes(d.add((b - a) * unit), (self.n0 - b) * unit, nt);
                }
            }
        };
        for r in 0..outer.count {
            let (src, dst) = outer.at(r, src, dst);
            if few {
                for (i, &(a, b)) in ranges[..self.n1].iter().enumerate() {
                    padded_row(i, a, b, src, dst);
                }
            } else {
                self.rows(|i, a, b| padded_row(i, a, b, src, dst));
            }
        }
    }
}

/// Calls `f(source offset, destination offset)` for every position of
/// `loops` (none: once, at the bases), the last loop fastest.
#[inline(always)]
pub(crate) fn odometer(loops: &[Loop], src_base: isize, dst_base: isize, mut f: impl FnMut(isize, isize)) {
    let mut idx = [0usize; MAX_LOOPS];
    let (mut so, mut dof) = (src_base, dst_base);
    loop {
        f(so, dof);
        let mut k = loops.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            let l = &loops[k];
            idx[k] += 1;
            so = so.wrapping_add(l.ss);
            dof = dof.wrapping_add(l.ds);
            if idx[k] < l.count {
                break;
            }
            idx[k] = 0;
            so = so.wrapping_sub(l.ss.wrapping_mul(l.count as isize));
            dof = dof.wrapping_sub(l.ds.wrapping_mul(l.count as isize));
        }
    }
}

/// Copies one unit of `N` bytes as one (unaligned) value.
///
/// # Safety
/// `N` bytes readable at `src` and writable at `dst`, not overlapping.
#[inline(always)]
unsafe fn unit_copy<const N: usize>(src: *const u8, dst: *mut u8) {
    // SAFETY: forwarded; `MaybeUninit` makes copying padding bytes of a
    // caller's type sound.
    unsafe {
        let v = ptr::read_unaligned(src.cast::<MaybeUninit<[u8; N]>>());
        ptr::write_unaligned(dst.cast::<MaybeUninit<[u8; N]>>(), v);
    }
}

/// Copies `len <= 64` bytes, from 3 on as two overlapping moves of the
/// largest power of two not above `len` (no call into the C library for
/// units like 3, 6 or 12 bytes, or for the pieces of a line).
///
/// # Safety
/// `len` bytes readable at `src` and writable at `dst`, not overlapping,
/// and `len <= 64`.
#[inline(always)]
pub(crate) unsafe fn copy_short(src: *const u8, dst: *mut u8, len: usize) {
    debug_assert!(len <= 64);
    // SAFETY: forwarded; each arm's `N` is at most `len`, and `len <= 2 * N`.
    unsafe {
        match len {
            0..=2 => ptr::copy_nonoverlapping(src, dst, len),
            3 => pair::<2>(src, dst, len),
            4..=7 => pair::<4>(src, dst, len),
            8..=15 => pair::<8>(src, dst, len),
            16..=32 => pair::<16>(src, dst, len),
            _ => pair::<32>(src, dst, len),
        }
    }
}

/// Copies `len` bytes, `N <= len <= 2 * N`, as two overlapping `N`-byte moves.
///
/// # Safety
/// `len` bytes readable at `src` and writable at `dst`, not overlapping, and
/// `N <= len`.
#[inline(always)]
unsafe fn pair<const N: usize>(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: `N <= len`, so `[0, N)` and `[len - N, len)` are inside both ranges;
    // both values are read before either is written.
    unsafe {
        let a = ptr::read_unaligned(src.cast::<MaybeUninit<[u8; N]>>());
        let b = ptr::read_unaligned(src.add(len - N).cast::<MaybeUninit<[u8; N]>>());
        ptr::write_unaligned(dst.cast::<MaybeUninit<[u8; N]>>(), a);
        ptr::write_unaligned(dst.add(len - N).cast::<MaybeUninit<[u8; N]>>(), b);
    }
}

/// Calls `copy` for each of the `n` units of a [`copy_run`] but the last,
/// and `last` for the last: unit `i` from `src + i*ss` to `dst + i*ds`.
///
/// # Safety
/// `copy` and `last` must be sound for the units they are given (as
/// [`copy_run`]'s caller guarantees, and [`widens`] for a wide `copy`).
#[inline(always)]
unsafe fn strided(
    n: usize,
    src: *const u8,
    ss: isize,
    dst: *mut u8,
    ds: isize,
    copy: impl Fn(*const u8, *mut u8),
    last: impl Fn(*const u8, *mut u8),
) {
    let Some(n) = n.checked_sub(1) else { return };
    let (mut s, mut d) = (src, dst);
    for _ in 0..n {
        copy(s, d);
        s = s.wrapping_offset(ss);
        d = d.wrapping_offset(ds);
    }
    last(s, d);
}

/// Gathers `n` units into a contiguous destination with streaming stores,
/// while the source ahead is fetched ([`sweep`]) where the units are more
/// than [`UNFETCHED_GATHER_STRIDE`] units apart.
///
/// Units of whole 16-byte vectors at a 16-byte-aligned destination go
/// straight from the source; others are gathered into a staging buffer and
/// streamed out from it. Kept out of line: its stack buffer must not weigh
/// on the frames of the hot kernels.
///
/// # Safety
/// As [`copy_run`] with `ds == unit`.
#[inline(never)]
unsafe fn stream_gather(n: usize, src: *const u8, ss: isize, dst: *mut u8, unit: usize, isa: Isa) {
    let sweep_row = || sweep(src, n.saturating_mul(ss.unsigned_abs()), n * unit);
    #[cfg(target_arch = "x86_64")]
    if (dst as usize | unit).is_multiple_of(16) {
        let ahead = fetches_gathered(ss, unit).then(sweep_row);
        let (mut s, mut d) = (src, dst);
        for i in 0..n {
            if let Some(a) = ahead {
                prefetch(a.wrapping_add(i * unit), unit);
            }
            // SAFETY: a unit's `unit` bytes at `s` (readable) and `d`
            // (writable, 16-byte aligned as `dst` and `unit` are).
            unsafe { stream_vectors(s, d, unit) };
            s = s.wrapping_offset(ss);
            d = d.wrapping_add(unit);
        }
        return;
    }
    prefetch(sweep_row(), n * unit);
    // SAFETY: each chunk's bytes are those of units `i..` of the
    // destination, which holds `n * unit` bytes.
    unsafe { through_stage(n, src, ss, unit, isa, |part, i, len| stream_copy(part, dst.add(i * unit), len)) };
}

/// Units of rows that continue one another stream one by one
/// ([`streams_rows`]) up to this size (bytes). Longer units keep their
/// plans (the line writers): measured with the limit lifted, their plans
/// left the line writers for the cache and slowed down (float64 NHWC
/// batch-to-space 2x2 of 64 channels 0.82-0.93 -> 1.34-1.37x memcpy),
/// while units of 256 and 384 bytes streamed faster than through the
/// writers (uint8 space-to-depth by 2 of 128 channels 1.21-1.30 ->
/// 0.67-0.79, float32 batch-to-space 4x4 of 64 channels 0.97-1.00 ->
/// 0.48-0.52, float16 space-to-depth by 3 of 64 channels 0.79-0.87 ->
/// 0.58-0.63).
pub(crate) const MAX_STREAMED_UNIT: usize = 512;

/// Units of rows that continue one another stream one by one
/// ([`streams_rows`]) from this size (bytes), one 16-byte vector: measured
/// (ratio to memcpy, 2 runs in separate processes, through the cache or a
/// tile -> so) on NHWC batch-to-space of 16-byte units (16 uint8, 8
/// float16 or 4 float32 channels) by 3 and 4, 0.67-0.83 -> 0.68-0.75, and
/// cropped by 1, whose windowed tiles stored through the cache,
/// 1.13-1.18 -> 0.61-0.74. Rows of two such units (by 2) stream only
/// cropped (see `plan::MIN_STREAMED_ROW`).
pub(crate) const MIN_STREAMED_UNIT: usize = 16;

/// Most units in a row of [`streams_rows`]: each of a row's unit positions
/// is a source stream that the hardware prefetchers follow (blocks of 2 to
/// 4 measured).
pub(crate) const MAX_STREAMED_STREAMS: usize = 4;

/// Whether a grid streams its units straight from the source, one unit at
/// a time ([`Grid::stream_rows`]): units of whole 16-byte vectors
/// ([`MIN_STREAMED_UNIT`] to [`MAX_STREAMED_UNIT`] bytes), rows of up to
/// [`MAX_STREAMED_STREAMS`] units contiguous in the destination that
/// continue one another (one run), each row one unit on in the source
/// from the last (so that each unit position of a row reads a sequential
/// stream: the block rows of an NHWC space-to-depth, the batches of a
/// batch-to-space).
///
/// Measured in one process alternating the two, ratio to memcpy:
/// - through the cache -> so: uint8 NHWC space-to-depth by 2 of 32
///   channels (64-byte units, rows of 128 bytes) 1.06-1.08 -> 0.84-0.90;
///   batch-to-space 3x3 of 64 uint8 channels 1.04-1.31 -> 0.67-1.10 (4
///   runs, 3 of them 0.67-0.72), 2x2 of 96 1.11-1.13 -> 0.69-0.70, 2x2 of
///   16 float32 channels 0.96 -> 0.67-0.75;
/// - gathered row by row ([`stream_gather`], whose sweep fetches the
///   source ahead) -> so, 3 runs: rows of 256 bytes, space-to-depth by 2
///   of 32 float16 channels 0.80-0.86 -> 0.74-0.79, batch-to-space 2x2 of
///   32 float32 channels 0.86-0.88 -> 0.72-0.73; rows of 384, batch-to-space
///   3x3 of 64 float16 channels 0.69-0.76 -> 0.57-0.65; rows of 512,
///   space-to-depth by 4 of 16 float16 channels 0.72-0.80 -> 0.62-0.72,
///   batch-to-space 4x4 of 64 float16 channels 0.72-0.82 -> 0.48-0.56;
///   rows of 576, space-to-depth by 3 of 64 uint8 channels 0.68-0.76 ->
///   0.60-0.67. (An earlier single run had the rows of 512 and 576 bytes
///   slower, 0.59-0.60 -> 0.69-0.70.)
#[inline(always)]
pub(crate) fn streams_rows(unit: usize, n0: usize, ds0: isize, ss1: isize, ds1: isize) -> bool {
    (MIN_STREAMED_UNIT..MAX_STREAMED_UNIT).contains(&unit)
        && unit.is_multiple_of(16)
        && n0 <= MAX_STREAMED_STREAMS
        && ds0 == unit as isize
        && ss1 == unit as isize
        && ds1 == (n0 * unit) as isize
}

/// Copies `len` bytes (a multiple of 16) from `src` to the 16-byte-aligned
/// `dst` with streaming stores.
///
/// # Safety
/// `len` bytes readable at `src` and writable at `dst`, which is 16-byte
/// aligned.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn stream_vectors(src: *const u8, dst: *mut u8, len: usize) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
    for k in (0..len).step_by(16) {
        // SAFETY: 16 of the caller's bytes on both sides, at a
        // 16-byte-aligned destination; SSE2 is baseline on x86_64.
        unsafe { _mm_stream_si128(dst.add(k).cast::<__m128i>(), _mm_loadu_si128(src.add(k).cast::<__m128i>())) };
    }
}

/// Streams `rows` whole rows of a grid of [`streams_rows`] of `N` units
/// of `U` bytes: row `i`'s unit `k` from `src + i * U + k * ss0` to `dst +
/// (i * N + k) * U`. For short units, whose rows cost more in bookkeeping
/// than in stores when taken one bound at a time.
///
/// # Safety
/// Every unit readable at its source and writable at its destination;
/// `dst` 16-byte aligned.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn whole_rows<const U: usize, const N: usize>(rows: usize, src: *const u8, ss0: isize, dst: *mut u8) {
    let (mut s, mut d) = (src, dst);
    for _ in 0..rows {
        for k in 0..N {
            // SAFETY: unit `k` of the row, as the caller guarantees;
            // `d + k * U` stays 16-byte aligned (`U` is a multiple of 16).
            unsafe { stream_vectors(s.wrapping_offset(k as isize * ss0), d.add(k * U), U) };
        }
        s = s.wrapping_add(U);
        d = d.wrapping_add(N * U);
    }
}

/// Gathers `n` units, unit `i` from `src + i*ss`, into a staging buffer a
/// chunk at a time, and hands each chunk to `out` with the index of its
/// first unit and its bytes.
///
/// # Safety
/// Every unit readable; `isa` one this CPU runs.
#[inline(always)]
unsafe fn through_stage(
    n: usize,
    src: *const u8,
    ss: isize,
    unit: usize,
    isa: Isa,
    mut out: impl FnMut(*const u8, usize, usize),
) {
    let mut stage = Stage::new();
    let per = STAGE / unit;
    let mut done = 0;
    while done < n {
        let m = per.min(n - done);
        // SAFETY: `m` of the caller's units; the stage holds `per` units.
        unsafe {
            let from = src.wrapping_offset(done as isize * ss);
            copy_run(m, from, ss, stage.ptr(), unit as isize, unit, Mode { nt: false, isa });
        }
        out(stage.ptr(), done, m * unit);
        done += m;
    }
}

/// Gathers `n` units into the contiguous destination row at `dst` with
/// streaming stores: the row's whole lines straight from the source, and
/// the parts of lines at its ends through the writers `w`, which join them
/// with the rows that share those lines (before and after it in the
/// destination, whenever they come), so that every line is stored whole.
/// The source ahead is fetched ([`sweep`]) but for short rows of nearby
/// units (see [`UNFETCHED_GATHER_STRIDE`]).
///
/// A row stored straight to its ends leaves a line half-written at each
/// end whenever it does not start and end on line boundaries (a `Vec`'s
/// data is 16 bytes past one): measured, OpenVINO's 5-D space-to-batch of
/// uint8 (256-byte rows, 12 destination streams) ran at 2.1x memcpy so.
///
/// Units of whole 16-byte vectors at a 16-byte-aligned destination go
/// straight from the source, the parts of lines at the row's ends too
/// ([`Writers::push_pieces`]: measured, the 5-D space-to-batch of 128-byte
/// units, W11, 6 runs alternating, median 0.838 -> 0.773x memcpy, and 3
/// more, 1.14 -> 0.86, where they were gathered into a staging buffer
/// and pushed from it); others are gathered into a staging buffer and
/// pushed to the writers from it. Kept out of line: its stack buffer must
/// not weigh on the frames of the hot kernels.
///
/// # Safety
/// As [`copy_run`] with `ds == unit`, and as [`Writers::push`] for the
/// row; `isa` one this CPU runs.
#[inline(never)]
pub(crate) unsafe fn gather_lines(
    w: &mut Writers,
    n: usize,
    src: *const u8,
    ss: isize,
    dst: *mut u8,
    unit: usize,
    isa: Isa,
) {
    let len = n * unit;
    let sweep_row = || sweep(src, n.saturating_mul(ss.unsigned_abs()), len);
    // The row's whole lines: destination bytes `[a, b)`.
    let a = (dst as usize).wrapping_neg() % LINE;
    let b = if a < len { a + (len - a) / LINE * LINE } else { a };
    #[cfg(target_arch = "x86_64")]
    if (dst as usize | unit).is_multiple_of(16) && a < b {
        // SAFETY: every byte in `[0, len)` of the row is pushed or stored
        // once, in the destination's order; each store is 16 bytes of one
        // unit, at a 16-byte-aligned destination (`dst`, `unit` and `a` are
        // multiples of 16); `[a, b)` is whole lines that no other run
        // writes, so the stream that reached `a` goes on past them.
        unsafe {
            // Row bytes `at..at + bytes` of the source fetched ahead, if
            // they are fetched.
            let ahead = (fetches_gathered(ss, unit) || len > UNFETCHED_GATHER_ROW).then(sweep_row);
            let fetch = |at: usize, bytes: usize| {
                if let Some(ahead) = ahead {
                    prefetch(ahead.wrapping_add(at), bytes);
                }
            };
            // Piece `j` of the row's bytes from `from` on (within a unit).
            let pieces = |from: usize| {
                move |j: usize| {
                    let at = from + 16 * j;
                    src.wrapping_offset((at / unit) as isize * ss).wrapping_add(at % unit)
                }
            };
            fetch(0, a);
            w.push_pieces(dst, a, pieces(0));
            // The lines: the rest of the unit that `a` falls in, whole
            // units, and the first part of the unit that `b` falls in.
            let (i, k) = (a / unit, a % unit);
            let mut s = src.wrapping_offset(i as isize * ss);
            let mut at = a;
            if k != 0 {
                let part = (unit - k).min(b - at);
                stream_vectors(s.add(k), dst.add(at), part);
                at += part;
                s = s.wrapping_offset(ss);
            }
            while at + unit <= b {
                fetch(at, unit);
                stream_vectors(s, dst.add(at), unit);
                at += unit;
                s = s.wrapping_offset(ss);
            }
            if at < b {
                stream_vectors(s, dst.add(at), b - at);
            }
            w.skip(dst.add(a), b - a);
            fetch(b, len - b);
            w.push_pieces(dst.add(b), len - b, pieces(b));
        }
        return;
    }
    let _ = b;
    prefetch(sweep_row(), len);
    // SAFETY: each chunk's bytes are those of units `i..` of the row, pushed
    // in its order.
    unsafe { through_stage(n, src, ss, unit, isa, |part, i, len| w.push(part, dst.add(i * unit), len)) };
}

/// Rows of [`stream_gather`], and rows of [`gather_lines`] of at most
/// [`UNFETCHED_GATHER_ROW`] bytes, whose units are at most this many units
/// apart in the source (a third of the lines the row spans, or more,
/// read) stream without fetching the source ahead: the hardware
/// prefetchers do better alone. Measured, alternating, median per
/// workload: `stream_gather`, NHWC space-to-batch and depth-to-space by 2
/// and 3 of 16- to 128-byte units, 32 workloads, 3 runs: 0.888 -> 0.826x
/// memcpy (depth-to-space by 2 of 8 float16 channels 1.11 -> 0.94), and
/// again, 2 runs: 0.867 -> 0.817; OpenVINO's 5-D space-to-batch (W11, 1
/// KiB rows of units 3 apart, `gather_lines`), 6 runs, 1.01 -> 0.95, 1.09
/// -> 1.03, 1.03 -> 0.91. Longer rows of `gather_lines` (padded, their
/// ends joined) measured both ways (NHWC space-to-batch padded by 2 and 3
/// of 32- to 256-byte units, 16 workloads, 3 runs: 0.93 -> 0.86, then
/// 0.88 -> 0.95), so they keep the fetch; units 4 apart need it (8 of them
/// padded by 4, 0.90 -> 1.29 unfetched, 64-byte units 1.9).
const UNFETCHED_GATHER_STRIDE: usize = 3;

/// See [`UNFETCHED_GATHER_STRIDE`].
const UNFETCHED_GATHER_ROW: usize = 2 << 10;

/// Whether a gathered row of units `ss` bytes apart in the source fetches
/// it ahead, by their distance alone (see [`UNFETCHED_GATHER_STRIDE`]).
fn fetches_gathered(ss: isize, unit: usize) -> bool {
    ss.unsigned_abs() > UNFETCHED_GATHER_STRIDE * unit
}

/// The streaming windowed tile of interleaved rows cropped at their ends
/// (see `plan::crops_row_ends`): rows are interleaved into a stage, as
/// many whole rows at a time as it holds (or a row in pieces of whole
/// columns, where one row is longer than the stage), and each row's kept
/// bytes (the window's positions `[lo, hi)`) go out through the line
/// writers, which store whole lines whatever the rows' lengths (one row
/// continues the last in the destination).
///
/// # Safety
/// As [`copy_tile`] for the tile of `x` and `y` at each of `rows`: every
/// source unit of the tile exists, each destination position `q` in `[lo,
/// hi)` of a row is valid; `isa` one this CPU runs. The tile's shape (each
/// row one contiguous run of `x.count * y.count` units, the window's `q`
/// its row position) is checked here.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn cropped_rows(
    rows: Rows,
    x: &Loop,
    y: &Loop,
    win: Window,
    src: *const u8,
    dst: *mut u8,
    unit: usize,
    isa: Isa,
    w: &mut Writers,
) {
    // The stage holds whole columns of `y.count` units: a row (the `x`
    // columns) interleaves contiguously only where `x.ds` is one column.
    // A real check, once a call: each row's units are contiguous along
    // `x` in the source and along `y` in the destination, and the window
    // keeps the row positions `q = x * ny + y` (`oc == ny`, `ic == 1`).
    let shape = x.ss == unit as isize && y.ds == unit as isize && win.ic == 1 && win.oc == y.count as i64;
    let column = y.count.checked_mul(unit).filter(|&c| c > 0 && x.ds == c as isize && shape);
    let (Some(column), Some(units)) = (column, x.count.checked_mul(y.count)) else {
        panic!("cropped_rows: a tile whose rows are not contiguous ({x:?}, {y:?}, {win:?}, unit {unit})");
    };
    let row = units * unit;
    // A row's position `q` is the window's inner index at outer index 0.
    let (a, b) = win.range(0, units);
    let (lo, hi) = (a * unit, b * unit);
    if lo >= hi {
        return;
    }
    if column > CROPPED_ROWS_BYTES {
        // Not one column fits the stage: each kept unit goes to the
        // writers straight from the source.
        for r in 0..rows.count {
            let (src, dst) = rows.at(r, src, dst);
            for q in a..b {
                let (i, j) = (q / y.count, q % y.count);
                // SAFETY: unit `(i, j)` of the tile exists in the source;
                // its position `q` is kept, valid in the destination.
                unsafe {
                    let from = src.wrapping_add(i * unit).wrapping_offset(j as isize * y.ss);
                    w.push(from, dst.wrapping_add(q * unit), unit);
                }
            }
        }
        return;
    }
    // Whole rows a chunk, or (rows longer than the stage) columns a piece.
    let (per_chunk, per_piece) =
        if row <= CROPPED_ROWS_BYTES { (CROPPED_ROWS_BYTES / row, x.count) } else { (1, CROPPED_ROWS_BYTES / column) };
    let mut stage = Staging::<CROPPED_ROWS_BYTES>::new();
    let mode = Mode { nt: false, isa };
    let mut r0 = 0;
    while r0 < rows.count {
        let k = per_chunk.min(rows.count - r0);
        let (src, dst) = rows.at(r0, src, dst);
        let mut c0 = 0;
        while c0 < x.count {
            let cols = per_piece.min(x.count - c0);
            // The piece's bytes of each row, and what of them is kept.
            let (p0, p1) = (c0 * column, (c0 + cols) * column);
            let (k0, k1) = (lo.max(p0), hi.min(p1));
            if k0 < k1 {
                // SAFETY: the stage holds `k` pieces of `p1 - p0 <=
                // CROPPED_ROWS_BYTES` bytes (`per_chunk`, `per_piece`);
                // the tile reads the source units of columns `c0..c0 +
                // cols` of `k` rows (all exist) and writes the stage's;
                // the writers take each row's positions `[k0, k1)`, inside
                // `[lo, hi)`, valid in the destination.
                unsafe {
                    let piece = (p1 - p0) as isize;
                    let staged = Rows { count: k, ss: rows.ss, ds: piece };
                    let from = src.wrapping_add(c0 * unit);
                    copy_tile(staged, cols, y.count, from, y.ss, stage.ptr(), x.ds, unit, mode, w);
                    for r in 0..k {
                        let staged_row = stage.ptr().add(r * (p1 - p0));
                        let to = dst.wrapping_offset(r as isize * rows.ds).wrapping_add(k0);
                        w.push(staged_row.add(k0 - p0), to, k1 - k0);
                    }
                }
            }
            c0 += cols;
        }
        r0 += k;
    }
}

/// Copies an `nx x ny` tile whose source is contiguous along x and whose
/// destination is contiguous along y: unit `(x, y)` goes from
/// `src + x*unit + y*ssy` to `dst + x*dsx + y*unit`.
///
/// This is the shape of every short-run operator (NCHW space-to-depth,
/// pixel shuffle and unshuffle, channels-first depth-to-space): one side
/// moves in long runs, the other interleaves a few streams.
///
/// # Safety
/// Every one of those source units must be readable and destination units
/// writable, without overlap between source and destination.
///
/// The tile is repeated `rows.count` times (see [`Rows`]), so that a loop
/// around it costs one call, and one choice of kernel, in all.
#[inline]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn copy_tile(
    rows: Rows,
    nx: usize,
    ny: usize,
    src: *const u8,
    ssy: isize,
    dst: *mut u8,
    dsx: isize,
    unit: usize,
    m: Mode,
    w: &mut Writers,
) {
    // SAFETY: forwarded; each arm addresses exactly the tiles' units.
    unsafe {
        match unit {
            1 => tile::<u8>(rows, nx, ny, src, ssy, dst, dsx, m, w),
            2 => tile::<u16>(rows, nx, ny, src, ssy, dst, dsx, m, w),
            4 => tile::<u32>(rows, nx, ny, src, ssy, dst, dsx, m, w),
            8 => tile::<u64>(rows, nx, ny, src, ssy, dst, dsx, m, w),
            16 => tile::<u128>(rows, nx, ny, src, ssy, dst, dsx, m, w),
            _ => {
                for r in 0..rows.count {
                    let (src, dst) = rows.at(r, src, dst);
                    tile_rows(nx, ny, src, ssy, dst, dsx, unit, m);
                }
            }
        }
    }
}

/// A kernel's work repeated `count` times: repetition `r` reads from
/// `src + r*ss` and writes to `dst + r*ds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rows {
    pub count: usize,
    pub ss: isize,
    pub ds: isize,
}

impl Rows {
    /// Once.
    pub(crate) const ONE: Rows = Rows { count: 1, ss: 0, ds: 0 };

    /// Every index of loop `l`.
    pub(crate) fn of(l: &Loop) -> Rows {
        Rows { count: l.count, ss: l.ss, ds: l.ds }
    }

    /// The source and destination of repetition `r`.
    #[inline(always)]
    pub(crate) fn at(&self, r: usize, src: *const u8, dst: *mut u8) -> (*const u8, *mut u8) {
        (src.wrapping_offset(r as isize * self.ss), dst.wrapping_offset(r as isize * self.ds))
    }
}

/// How the kernels store and which instructions they may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mode {
    /// Non-temporal stores.
    pub nt: bool,
    /// The vector kernels for short runs.
    pub isa: Isa,
}

/// The tile for units that are plain integers of `size_of::<T>()` bytes.
///
/// # Safety
/// As [`copy_tile`] with `unit == size_of::<T>()`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn tile<T: Copy>(
    rows: Rows,
    nx: usize,
    ny: usize,
    src: *const u8,
    ssy: isize,
    dst: *mut u8,
    dsx: isize,
    m: Mode,
    w: &mut Writers,
) {
    let u = size_of::<T>() as isize;
    // SAFETY (all arms): forwarded from the caller; the interleave and
    // deinterleave kernels address the same units as the generic rows.
    unsafe {
        // Interleave a few source streams into one contiguous destination run.
        if dsx == ny as isize * u {
            match ny {
                2 => return staged_interleave::<T, 2>(rows, nx, src, ssy, dst, m, w),
                3 => return staged_interleave::<T, 3>(rows, nx, src, ssy, dst, m, w),
                4 => return staged_interleave::<T, 4>(rows, nx, src, ssy, dst, m, w),
                _ => {}
            }
        }
        // Deinterleave one contiguous source run into a few destination
        // streams: streaming, in whole lines of each stream where the
        // vector kernel can (parts of lines through the writers);
        // otherwise with ordinary stores (streaming stores that alternate
        // between several short destination runs measure far slower).
        if ssy == nx as isize * u {
            if m.nt && simd::deinterleave_streamed(m.isa, u as usize, nx, rows, ny, src, dst, dsx, w) {
                return;
            }
            match nx {
                2 => return deinterleave_any::<T, 2>(rows, ny, src, dst, dsx, m.isa),
                3 => return deinterleave_any::<T, 3>(rows, ny, src, dst, dsx, m.isa),
                4 => return deinterleave_any::<T, 4>(rows, ny, src, dst, dsx, m.isa),
                _ => {}
            }
        }
        for r in 0..rows.count {
            let (src, dst) = rows.at(r, src, dst);
            tile_rows(nx, ny, src, ssy, dst, dsx, u as usize, m);
        }
    }
}

/// [`interleave`], through a staging buffer streamed out when `nt`.
///
/// # Safety
/// As [`interleave`], for each of `rows`.
#[inline(always)]
unsafe fn staged_interleave<T: Copy, const B: usize>(
    rows: Rows,
    n: usize,
    src: *const u8,
    ss: isize,
    dst: *mut u8,
    mode: Mode,
    w: &mut Writers,
) {
    let u = size_of::<T>();
    // SAFETY: forwarded, row by row.
    unsafe {
        if !mode.nt || n * B * u < STREAM_MIN {
            return interleave_any::<T, B>(rows, n, src, ss, dst, mode.isa);
        }
        // Straight to the destination where the vector kernel can stream
        // every unit (measured: float32 pixel_shuffle 1.0x memcpy so, 1.4x
        // through the stage).
        if simd::interleave_streamed(mode.isa, u, B, rows, n, src, ss, dst) {
            return;
        }
        streamed_interleave::<T, B>(rows, n, src, ss, dst, mode.isa, w);
    }
}

/// The streaming half of [`staged_interleave`], out of line for the same
/// reason as [`stream_gather`]: staged chunks leave through the line
/// writers, which complete the line a row shares with the next (measured:
/// without AVX512-VBMI, uint8 depth-to-space with 500-byte rows 8.2x memcpy
/// streamed row by row, 1.2x so; float32 pixel_shuffle of 255-wide rows
/// 2.4x, 1.3x). Rows that continue one another in the destination go as
/// many at a time as the stage holds, pushed as one run (measured, against
/// a push per row: uint8 pixel_shuffle by 3 of 510-byte rows 1.06 -> 0.87x
/// memcpy, float16 by 4 1.08 -> 0.87x); other rows one at a time, a chunk
/// of their units at a time.
///
/// # Safety
/// As [`interleave`] for each of `rows`; `w` holds only runs of this run's
/// destination.
#[inline(never)]
unsafe fn streamed_interleave<T: Copy, const B: usize>(
    rows: Rows,
    n: usize,
    src: *const u8,
    ss: isize,
    dst: *mut u8,
    isa: Isa,
    w: &mut Writers,
) {
    let u = size_of::<T>();
    let row = n * B * u;
    debug_assert!(row >= STREAM_MIN, "the caller streams rows of a line or more");
    let (per_rows, per_units) =
        if rows.ds == row as isize && row <= STAGE { (STAGE / row, n) } else { (1, STAGE / (B * u)) };
    // SAFETY: chunks of the caller's rows and units; the stage holds `k`
    // rows of `m` units per stream (`k * m * B * u <= STAGE`: `k == 1`, or
    // `m == n`), which continue one another in the destination.
    unsafe {
        let mut stage = Stage::new();
        let mut r0 = 0;
        while r0 < rows.count {
            let k = per_rows.min(rows.count - r0);
            let (src, dst) = rows.at(r0, src, dst);
            let mut done = 0;
            while done < n {
                let m = per_units.min(n - done);
                let staged = Rows { count: k, ss: rows.ss, ds: (m * B * u) as isize };
                interleave_any::<T, B>(staged, m, src.add(done * u), ss, stage.ptr(), isa);
                w.push(stage.ptr(), dst.add(done * B * u), k * m * B * u);
                done += m;
            }
            r0 += k;
        }
    }
}

/// [`interleave`] for each of `rows`, its body by the vector kernel of `isa`
/// where there is one.
///
/// # Safety
/// As [`interleave`], for each of `rows`.
#[inline(always)]
unsafe fn interleave_any<T: Copy, const B: usize>(
    rows: Rows,
    n: usize,
    src: *const u8,
    ss: isize,
    dst: *mut u8,
    isa: Isa,
) {
    let u = size_of::<T>();
    // SAFETY: the vector kernel does the first `done` units of every stream
    // (the first `done * B` of the destination) of every row; the portable
    // one the rest. `isa` is one the CPU runs (the plan detected it).
    // (Runs shorter than one 16-byte vector skip the vector entry point.)
    unsafe {
        let done = if n * u >= 16 { simd::interleave(isa, u, B, rows, n, src, ss, dst) } else { 0 };
        if done < n {
            for r in 0..rows.count {
                let (src, dst) = rows.at(r, src, dst);
                interleave::<T, B>(n - done, src.add(done * u), ss, dst.add(done * B * u));
            }
        }
    }
}

/// [`deinterleave`] for each of `rows`, its body by the vector kernel of
/// `isa` where there is one.
///
/// # Safety
/// As [`deinterleave`], for each of `rows`.
#[inline(always)]
unsafe fn deinterleave_any<T: Copy, const B: usize>(
    rows: Rows,
    n: usize,
    src: *const u8,
    dst: *mut u8,
    ds: isize,
    isa: Isa,
) {
    let u = size_of::<T>();
    // SAFETY: as `interleave_any`, mirrored.
    unsafe {
        let done = if n * u >= 16 { simd::deinterleave(isa, u, B, rows, n, src, dst, ds) } else { 0 };
        if done < n {
            for r in 0..rows.count {
                let (src, dst) = rows.at(r, src, dst);
                deinterleave::<T, B>(n - done, src.add(done * B * u), dst.add(done * u), ds);
            }
        }
    }
}

/// Generic tile: one strided run per row of the shorter side; or, for an
/// interleaving tile whose destination is its rows one after the other
/// (`dsx == ny * unit`), the destination in order, [`zip`]ped from the
/// streams.
///
/// # Safety
/// As [`copy_tile`].
#[allow(clippy::too_many_arguments)]
unsafe fn tile_rows(nx: usize, ny: usize, src: *const u8, ssy: isize, dst: *mut u8, dsx: isize, unit: usize, m: Mode) {
    let (u, nt) = (unit as isize, m.nt);
    // SAFETY: rows of the tile, each inside it.
    unsafe {
        if dsx == ny as isize * u && shuffle::interleave(m.isa, ny, nx, src, ssy, dst, unit, nt) {
            return;
        }
        if !nt && nx > ny && ny > 1 && dsx == ny as isize * u && unit <= 64 {
            // A destination run of `ny` units from each column: wide moves
            // where the unit allows them (each move's excess lands on the
            // next unit, written next, and reads the next unit of the same
            // stream: all but the last column).
            let streams = Streams { nx, ny, src, ssy, unit: u };
            if wide_move(unit).is_some() {
                return by_wide_unit!(unit, wide, exact => zip_streams(streams, dst, wide, exact));
            }
            return by_unit!(unit, copy => zip_streams(streams, dst, copy, copy));
        }
        if let Some((b, nt)) = tile_block(nx, ny, dst, dsx, unit, nt) {
            let m = Mode { nt, ..m };
            // Both sides long (a transpose's tile): square blocks of `b`
            // units a side, whose source rows and destination rows stay in
            // the cache while the block is copied, instead of a whole
            // column of the source (one line and one page a unit) for
            // each destination row.
            for x0 in (0..nx).step_by(b) {
                let bx = b.min(nx - x0) as isize;
                for y0 in (0..ny).step_by(b) {
                    let by = b.min(ny - y0);
                    let (s, d) = (
                        src.offset(x0 as isize * u + y0 as isize * ssy),
                        dst.offset(x0 as isize * dsx + y0 as isize * u),
                    );
                    // The next block's source rows, one fetched ahead per
                    // destination row copied.
                    let (nx0, ny0) = if y0 + b < ny { (x0, y0 + b) } else { (x0 + b, 0) };
                    let next = (nx0 < nx).then(|| {
                        let (bx, by) = (b.min(nx - nx0), b.min(ny - ny0));
                        (src.wrapping_offset(nx0 as isize * u + ny0 as isize * ssy), bx * unit, by as isize)
                    });
                    for x in 0..bx {
                        copy_run(by, s.offset(x * u), ssy, d.offset(x * dsx), u, unit, m);
                        if let Some((n, len, rows)) = next {
                            if x < rows {
                                prefetch(n.wrapping_offset(x * ssy), len);
                            }
                        }
                    }
                }
            }
            return;
        }
        if nx <= ny {
            for x in 0..nx as isize {
                copy_run(ny, src.offset(x * u), ssy, dst.offset(x * dsx), u, unit, m);
            }
        } else {
            for y in 0..ny as isize {
                copy_run(nx, src.offset(y * ssy), u, dst.offset(y * u), dsx, unit, m);
            }
        }
    }
}

/// The side, in units, of the square blocks [`tile_rows`] copies a tile in
/// when both its sides are longer than one and the tile is large (a
/// transpose's tile: thousands of source rows gathered into thousands of
/// destination rows), so that a
/// block's rows of both sides stay in the L1 cache: 512 bytes a row, 8 to
/// 64 units; and whether the blocks stream: only where every block's
/// destination rows are whole lines (a line shared between a streamed and
/// a cached store is slow), through the cache otherwise. `None`: the tile
/// is copied whole.
fn tile_block(nx: usize, ny: usize, dst: *mut u8, dsx: isize, unit: usize, nt: bool) -> Option<(usize, bool)> {
    let b = (TILE_BLOCK_BYTES / unit).clamp(8, 64);
    let lines = |v: usize| v.is_multiple_of(64);
    let whole_lines = lines(dst as usize) && lines(dsx.unsigned_abs()) && lines(b * unit) && lines(ny * unit);
    let large = nx.saturating_mul(ny).saturating_mul(unit) >= TILE_BLOCKED_BYTES;
    (nx > b && ny > b && large).then_some((b, nt && whole_lines))
}

/// The smallest tile [`tile_block`] blocks: smaller ones stay in the L2
/// cache whole, and copied whole they keep their streaming stores
/// (measured: a 96 x 96 float64 tile, HPTT's T19, 2.7-2.8x memcpy whole
/// and streamed, 4.4-5.0x blocked through the cache).
const TILE_BLOCKED_BYTES: usize = 512 << 10;

/// The bytes of a [`tile_block`]'s rows.
const TILE_BLOCK_BYTES: usize = 512;

/// The streams of an interleaving tile: `ny` of them, stream `y` at
/// `src + y*ssy`, each `nx` units of `unit` bytes, contiguous.
#[derive(Clone, Copy)]
struct Streams {
    nx: usize,
    ny: usize,
    src: *const u8,
    ssy: isize,
    unit: isize,
}

/// The interleaving tile in destination order: unit `x` of each stream,
/// then the next column, into a contiguous destination; `copy` for every
/// column but the last, `last` for the last.
///
/// # Safety
/// `copy` and `last` must be sound for the units they are given (as
/// [`copy_tile`]'s caller guarantees, with a wide `copy` as in [`tile_rows`]).
#[inline(never)]
unsafe fn zip_streams(
    streams: Streams,
    dst: *mut u8,
    copy: impl Fn(*const u8, *mut u8),
    last: impl Fn(*const u8, *mut u8),
) {
    // With the streams counted at compile time (the usual two to four),
    // each column is straight-line code.
    match streams.ny {
        2 => zip::<2>(streams, dst, copy, last),
        3 => zip::<3>(streams, dst, copy, last),
        4 => zip::<4>(streams, dst, copy, last),
        _ => zip::<0>(streams, dst, copy, last),
    }
}

/// [`zip_streams`] of `B` streams (`B == ny`), or of `ny` (`B == 0`).
#[inline(always)]
fn zip<const B: usize>(
    streams: Streams,
    dst: *mut u8,
    copy: impl Fn(*const u8, *mut u8),
    last: impl Fn(*const u8, *mut u8),
) {
    let ny = if B == 0 { streams.ny } else { B };
    let mut d = dst;
    for x in 0..streams.nx - 1 {
        d = column(streams, ny, x, d, &copy);
    }
    column(streams, ny, streams.nx - 1, d, &last);
}

/// Column `x` of `ny` streams to `dst`, by `f`; the destination after it.
#[inline(always)]
fn column(streams: Streams, ny: usize, x: usize, mut dst: *mut u8, f: &impl Fn(*const u8, *mut u8)) -> *mut u8 {
    let mut s = streams.src.wrapping_offset(x as isize * streams.unit);
    for _ in 0..ny {
        f(s, dst);
        s = s.wrapping_offset(streams.ssy);
        dst = dst.wrapping_offset(streams.unit);
    }
    dst
}

/// `dst[x * B + j] = stream_j[x]` for `x < n`, where stream `j` starts at
/// `src + j * ss` and is contiguous.
///
/// # Safety
/// `n` units readable in each stream, `n * B` writable at `dst`, no overlap.
#[inline(always)]
unsafe fn interleave<T: Copy, const B: usize>(n: usize, src: *const u8, ss: isize, dst: *mut u8) {
    let streams: [*const T; B] = std::array::from_fn(|j| src.wrapping_offset(j as isize * ss).cast::<T>());
    let dst = dst.cast::<T>();
    for x in 0..n {
        for (j, s) in streams.iter().enumerate() {
            // SAFETY: unit x of stream j and unit x*B+j of the destination (caller).
            unsafe { dst.add(x * B + j).write_unaligned(s.add(x).read_unaligned()) };
        }
    }
}

/// `stream_j[y] = src[y * B + j]` for `y < n`, where destination stream `j`
/// starts at `dst + j * ds` and is contiguous.
///
/// # Safety
/// `n * B` units readable at `src`, `n` writable in each stream, no overlap.
#[inline(always)]
unsafe fn deinterleave<T: Copy, const B: usize>(n: usize, src: *const u8, dst: *mut u8, ds: isize) {
    let streams: [*mut T; B] = std::array::from_fn(|j| dst.wrapping_offset(j as isize * ds).cast::<T>());
    let src = src.cast::<T>();
    for y in 0..n {
        for (j, d) in streams.iter().enumerate() {
            // SAFETY: unit y*B+j of the source and unit y of stream j (caller).
            unsafe { d.add(y).write_unaligned(src.add(y * B + j).read_unaligned()) };
        }
    }
}

/// Streamed copies from this length on read and write in four interleaved
/// quarters ([`stream_region`]).
const REGION_MIN: usize = 16 << 10;

/// Runs shorter than this are copied with ordinary stores even in streaming mode.
const STREAM_MIN: usize = 64;

/// Bytes of the staging buffer that short-run kernels gather into before
/// streaming out (small enough to stay in L1).
const STAGE: usize = 8 << 10;

/// A cache-line-aligned, uninitialised staging buffer of `N` bytes on the stack.
#[repr(C, align(64))]
pub(crate) struct Staging<const N: usize>([MaybeUninit<u8>; N]);

impl<const N: usize> Staging<N> {
    #[inline(always)]
    pub(crate) fn new() -> Self {
        Staging([MaybeUninit::uninit(); N])
    }

    #[inline(always)]
    pub(crate) fn ptr(&mut self) -> *mut u8 {
        self.0.as_mut_ptr().cast()
    }
}

/// The short-run kernels' staging buffer.
type Stage = Staging<STAGE>;

/// Copies `len` bytes, streaming (non-temporal stores) when `nt`.
///
/// # Safety
/// `len` bytes readable at `src` and writable at `dst`, not overlapping.
#[inline(always)]
pub(crate) unsafe fn copy_bytes(src: *const u8, dst: *mut u8, len: usize, nt: bool) {
    // SAFETY: forwarded.
    unsafe {
        if nt && len >= REGION_MIN {
            stream_region(src, dst, len)
        } else if nt && len >= STREAM_MIN {
            stream_copy(src, dst, len)
        } else {
            ptr::copy_nonoverlapping(src, dst, len)
        }
    }
}

/// Copies `len` bytes with non-temporal stores for the 16-byte-aligned body
/// of the destination (ordinary stores for the unaligned head and tail), so
/// a large output does not first read every destination line into the cache.
/// The executor issues the store fence when a run ends ([`fence`]).
///
/// The body is aligned to 16 bytes, not to a cache line: runs written one
/// after another then complete each other's lines with streaming stores.
/// Aligning to 64 with ordinary stores for the partial lines mixes the two
/// kinds of store on one line, which measured 16x slower (256-byte runs).
///
/// # Safety
/// `len` bytes readable at `src` and writable at `dst`, not overlapping.
#[inline]
pub(crate) unsafe fn stream_copy(src: *const u8, dst: *mut u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of the x86_64 baseline. Every load reads 16 bytes
    // inside `src[..len]` (unaligned loads), every store writes 16 aligned
    // bytes inside `dst[..len]`; head and tail are plain copies inside the range.
    unsafe {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        let head = dst.align_offset(16).min(len);
        ptr::copy_nonoverlapping(src, dst, head);
        let mut i = head;
        while i + 64 <= len {
            line(src.add(i), dst.add(i));
            i += 64;
        }
        while i + 16 <= len {
            _mm_stream_si128(dst.add(i).cast::<__m128i>(), _mm_loadu_si128(src.add(i).cast::<__m128i>()));
            i += 16;
        }
        ptr::copy_nonoverlapping(src.add(i), dst.add(i), len - i);
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: forwarded.
    unsafe {
        ptr::copy_nonoverlapping(src, dst, len)
    }
}

/// Streams a whole region out: its 64-byte-aligned body split in four
/// quarters whose lines are copied in turn (line `i` of each quarter, then
/// line `i + 1`, ...), with non-temporal stores. Four concurrent streams far
/// apart keep more of the memory system busy than one: on the development
/// machine this copies 128 MiB faster than the C library's `memcpy`, where a
/// single sequential streaming loop is a third slower.
///
/// # Safety
/// `len` bytes readable at `src` and writable at `dst`, not overlapping.
unsafe fn stream_region(src: *const u8, dst: *mut u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: head and tail are plain copies inside the range; every line
    // copied lies inside the 64-byte-aligned body `[head, head + 4 * q)` or
    // the remainder handled by `stream_copy`, all inside `len`.
    unsafe {
        let head = dst.align_offset(64).min(len);
        ptr::copy_nonoverlapping(src, dst, head);
        let body = (len - head) / 64 * 64;
        let q = body / 4 / 64 * 64;
        let (s, d) = (src.add(head), dst.add(head));
        let mut off = 0;
        while off < q {
            line(s.add(off), d.add(off));
            line(s.add(q + off), d.add(q + off));
            line(s.add(2 * q + off), d.add(2 * q + off));
            line(s.add(3 * q + off), d.add(3 * q + off));
            off += 64;
        }
        let done = head + 4 * q;
        stream_copy(src.add(done), dst.add(done), len - done);
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: forwarded.
    unsafe {
        ptr::copy_nonoverlapping(src, dst, len)
    }
}

/// Fills `len` bytes with zeros, streaming when `nt`.
///
/// # Safety
/// `len` bytes writable at `dst`.
#[inline]
pub(crate) unsafe fn zero_bytes(dst: *mut u8, len: usize, nt: bool) {
    #[cfg(target_arch = "x86_64")]
    if nt && len >= STREAM_MIN {
        // SAFETY: as `stream_copy`, with a zero register as the source.
        unsafe {
            use std::arch::x86_64::{__m128i, _mm_setzero_si128, _mm_stream_si128};
            let head = dst.align_offset(16).min(len);
            ptr::write_bytes(dst, 0, head);
            let mut i = head;
            let z = _mm_setzero_si128();
            while i + 16 <= len {
                _mm_stream_si128(dst.add(i).cast::<__m128i>(), z);
                i += 16;
            }
            ptr::write_bytes(dst.add(i), 0, len - i);
        }
        return;
    }
    // SAFETY: forwarded; `ZEROS` holds 64 readable bytes, apart from any
    // destination.
    unsafe {
        if len <= ZEROS.len() {
            // The padding at a row's ends: no call into the C library.
            return copy_short(ZEROS.as_ptr(), dst, len);
        }
        ptr::write_bytes(dst, 0, len)
    }
}

/// The source of short zero fills.
static ZEROS: [u8; 64] = [0; 64];

/// Orders this thread's streaming stores before anything that follows.
#[inline]
pub(crate) fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sfence` has no preconditions (SSE, x86_64 baseline).
    unsafe {
        std::arch::x86_64::_mm_sfence()
    }
}

/// How far ahead of their reads the streaming kernels have the source
/// fetched ([`prefetch`]): with streaming stores in flight, the hardware
/// prefetchers alone leave reads waiting (measured: NCHW space-to-depth
/// 1.3x memcpy -> 1.2x, float16 pixel_unshuffle 1.5x -> 1.25x; 1 to 8 KiB
/// all measured alike, the cache's own `prefetchnta` worse).
pub(crate) const PREFETCH_AHEAD: usize = 4096;

/// How far ahead of a streaming gather's source [`sweep`] fetches at
/// least: about the source block of the next position of the loops around
/// the rows (measured on NHWC depth-to-space by 4 of 64-byte units, 64 KiB
/// blocks: 16 KiB ahead 2.5x memcpy, 64 KiB 1.6x, 256 KiB 1.9x).
const SWEEP_AHEAD: usize = 64 << 10;

/// How far ahead [`sweep`] fetches at most: a row's source span, when it
/// is longer than [`SWEEP_AHEAD`], is the block all rows over it read
/// (depth-to-space by 4 of 128-byte units, 128 KiB: 1.37x memcpy 64 KiB
/// ahead, 1.27x a span ahead), up to what the second-level cache holds.
const MAX_SWEEP_AHEAD: usize = 256 << 10;

std::thread_local! {
    /// Where this thread's sweep has fetched the source up to.
    static SWEPT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Where a streaming gather of `bytes` from a row at `src`, whose units
/// span `span` bytes of the source, should fetch the source ahead: the next
/// `bytes` of one sweep through the source that far (within
/// [`SWEEP_AHEAD`]..=[`MAX_SWEEP_AHEAD`]) in front of the rows.
///
/// Streaming gathers read their rows' units far apart, in a different
/// order than the source's (every row of a block takes a slice of each
/// unit); the hardware prefetchers fetch those strided parts late and a
/// DRAM page once per row. Plans that stream gathered rows visit the
/// source block by block in its order, and read about as many bytes as
/// they write: so one sequential sweep that moves on by each row's bytes
/// stays a block ahead of the rows, and reads every page in one go
/// (measured on a gather of 64-byte units: 1.15-1.5x memcpy fetching each
/// unit's place a block on, 1.04-1.1x so). A row far from the sweep (a new
/// region, another thread's range) starts a new one.
fn sweep(src: *const u8, span: usize, bytes: usize) -> *const u8 {
    let ahead = span.clamp(SWEEP_AHEAD, MAX_SWEEP_AHEAD);
    let want = (src as usize).wrapping_add(ahead);
    SWEPT.with(|swept| {
        let mut at = swept.get();
        if at.wrapping_sub(want.wrapping_sub(ahead / 2)) > ahead * 3 / 2 {
            at = want;
        }
        swept.set(at.wrapping_add(bytes));
        at as *const u8
    })
}

/// Asks the CPU to bring the `len` bytes at `p` into the cache ahead of
/// their use (one hint per 64-byte line); does nothing on other targets.
/// A hint never faults, so `p` need not be valid.
#[inline(always)]
pub(crate) fn prefetch(p: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let mut k = 0;
        while k < len {
            // SAFETY: a prefetch is a hint: it reads nothing the program sees
            // and never faults, whatever the address.
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.wrapping_add(k).cast()) };
            k += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, len);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::plan::Window;

    /// A grid of `n1 x n0` units of `unit` bytes, rows `ss1` apart in the
    /// source and units `ss0` apart, written to a contiguous destination,
    /// cropped by `window` on the row index (as the executor builds it),
    /// against the window's definition unit by unit.
    fn check_grid(unit: usize, n1: usize, n0: usize, window: Option<Window>) {
        let (ss0, ss1) = ((unit * n1) as isize, unit as isize);
        let (ds0, ds1) = (unit as isize, (unit * n0) as isize);
        let src: Vec<u8> = (0..unit * n0 * n1).map(|i| (i * 7 + 1) as u8).collect();
        let mut expected = vec![0u8; unit * n0 * n1];
        for i in 0..n1 {
            let (a, b) = window.map_or((0, n0), |w| w.range(i, n0));
            for k in a..b {
                let (s, d) = (i as isize * ss1 + k as isize * ss0, i as isize * ds1 + k as isize * ds0);
                expected[d as usize..d as usize + unit].copy_from_slice(&src[s as usize..s as usize + unit]);
            }
        }
        for (nt, isa) in [(false, Isa::Portable), (false, Isa::detect()), (true, Isa::detect())] {
            let g = Grid {
                n1,
                ss1,
                ds1,
                n0,
                ss0,
                ds0,
                bounds: window.map_or(Bounds::ALL, |w| w.bounds(0)),
                oc: window.map_or(0, |w| w.oc),
            };
            let mut dst = vec![0u8; expected.len()];
            // SAFETY: every unit of the grid is inside both buffers.
            unsafe {
                g.copy(&[], src.as_ptr(), dst.as_mut_ptr(), unit, Mode { nt, isa });
                fence();
            }
            assert_eq!(dst, expected, "unit {unit}, {n1}x{n0}, {window:?}, nt {nt}, {isa:?}");
        }
    }

    /// A padded grid (see [`Grid::padded`]) against units copied one by
    /// one: row `i`'s unit `k` is space position `n1 * k + i` (the grid's
    /// source strides), and the units outside the row's bounds are zeros
    /// in a destination that held other bytes; once, and repeated over
    /// two copies of the buffers (the loop around the grid).
    fn check_padded_grid(unit: usize, n1: usize, n0: usize, window: Window) {
        let (ss0, ss1) = ((unit * n1) as isize, unit as isize);
        let len = unit * n0 * n1;
        for reps in [1, 2] {
            let src: Vec<u8> = (0..reps * len).map(|i| (i * 7 + i / 253 + 1) as u8).collect();
            let mut expected = vec![0u8; reps * len];
            for r in 0..reps {
                for i in 0..n1 {
                    let (a, b) = window.range(i, n0);
                    for k in a..b {
                        let s = r * len + (i as isize * ss1 + k as isize * ss0) as usize;
                        let d = r * len + (i * n0 + k) * unit;
                        expected[d..d + unit].copy_from_slice(&src[s..s + unit]);
                    }
                }
            }
            for (nt, isa) in [(false, Isa::Portable), (false, Isa::detect()), (true, Isa::detect())] {
                let g = Grid {
                    n1,
                    ss1,
                    ds1: (unit * n0) as isize,
                    n0,
                    ss0,
                    ds0: unit as isize,
                    bounds: window.bounds(0),
                    oc: window.oc,
                };
                let outer = Rows { count: reps, ss: len as isize, ds: len as isize };
                let mut dst = vec![0xA5u8; expected.len()];
                // SAFETY: every unit of each repetition of the grid is inside
                // both buffers, and each row's destination is contiguous; the
                // CPU runs `isa`.
                unsafe {
                    g.padded(outer, src.as_ptr(), dst.as_mut_ptr(), unit, Mode { nt, isa });
                    fence();
                }
                assert_eq!(dst, expected, "unit {unit}, {reps} x {n1}x{n0}, {window:?}, nt {nt}, {isa:?}");
            }
        }
    }

    /// `rows` of `nx x ny` interleaved units cropped at both ends (the
    /// window keeps row positions `[lo, hi)`), through `cropped_rows`,
    /// against the definition unit by unit: whole rows a chunk of the
    /// stage, rows in pieces of columns, and columns longer than the stage.
    fn check_cropped_rows(unit: usize, nx: usize, ny: usize, rows: usize, (lo, hi): (usize, usize)) {
        let units = nx * ny;
        let src: Vec<u8> = (0..rows * units * unit).map(|i| (i * 7 + i / 251 + 1) as u8).collect();
        let kept = hi - lo;
        let mut expected = vec![0u8; rows * kept * unit];
        for r in 0..rows {
            for q in lo..hi {
                let (i, j) = (q / ny, q % ny);
                let s = r * units * unit + (j * nx + i) * unit;
                let d = (r * kept + q - lo) * unit;
                expected[d..d + unit].copy_from_slice(&src[s..s + unit]);
            }
        }
        let x = Loop { count: nx, ss: unit as isize, ds: (ny * unit) as isize, window: None, is_outer: true };
        let win = Window { outer: Some(0), oc: ny as i64, ic: 1, lo: lo as i64, hi: hi as i64 };
        let y = Loop { count: ny, ss: (nx * unit) as isize, ds: unit as isize, window: Some(win), is_outer: false };
        let outer = Rows { count: rows, ss: (units * unit) as isize, ds: (kept * unit) as isize };
        for isa in [Isa::Portable, Isa::detect()] {
            let mut dst = vec![0u8; expected.len()];
            let mut w = Writers::new();
            // SAFETY: every source unit of every row exists; the kept
            // positions of row `r` are `dst[r * kept..][..kept]`, shifted
            // back by `lo` (never dereferenced outside `[lo, hi)`).
            unsafe {
                let to = dst.as_mut_ptr().wrapping_sub(lo * unit);
                cropped_rows(outer, &x, &y, win, src.as_ptr(), to, unit, isa, &mut w);
                w.finish();
                fence();
            }
            assert!(dst == expected, "unit {unit}, {rows} x {nx}x{ny}, [{lo}, {hi}), {isa:?}");
        }
    }

    #[test]
    fn cropped_rows_of_every_length() {
        // Rows that fit the stage several times, rows longer than the stage
        // (in pieces of columns), columns longer than the stage.
        for (unit, nx, ny) in [(1, 100, 2), (4, 1000, 3), (1, 20_000, 2), (4, 3000, 4), (8, 3, 2100), (16, 2, 1500)] {
            let units = nx * ny;
            for (lo, hi) in [(0, units), (1, units - 3), (ny - 1, units - ny + 1), (units / 2, units / 2 + 1)] {
                check_cropped_rows(unit, nx, ny, 3, (lo, hi));
            }
        }
    }

    /// A window whose inner index is not the row position `q = x * ny + y`
    /// (here `x + nx * y`, a deinterleave's) would have the kept range
    /// name destination positions that do not exist: refused before any
    /// byte is read or written.
    #[test]
    #[should_panic(expected = "rows are not contiguous")]
    fn cropped_rows_refuse_a_window_of_another_shape() {
        let (unit, nx, ny) = (4, 16, 2);
        let src = vec![0u8; nx * ny * unit];
        let mut dst = vec![0u8; nx * ny * unit];
        let x = Loop { count: nx, ss: unit as isize, ds: (ny * unit) as isize, window: None, is_outer: true };
        let win = Window { outer: Some(0), oc: 1, ic: nx as i64, lo: 1, hi: (nx * ny) as i64 - 1 };
        let y = Loop { count: ny, ss: (nx * unit) as isize, ds: unit as isize, window: Some(win), is_outer: false };
        let mut w = Writers::new();
        // SAFETY: the call panics before it touches either buffer.
        unsafe { cropped_rows(Rows::ONE, &x, &y, win, src.as_ptr(), dst.as_mut_ptr(), unit, Isa::detect(), &mut w) };
    }

    #[test]
    fn padded_grids_zero_the_units_outside_their_windows() {
        // Units of the shuffle kernels (3, rows long enough and not), the
        // widened ones (6, 12, 20, 36) and others.
        for unit in [1, 2, 3, 4, 6, 8, 12, 16, 20, 36, 64] {
            for (n1, n0) in [(3, 40), (3, 5), (2, 33), (4, 17)] {
                let (n1i, n0i) = (n1 as i64, n0 as i64);
                let rows = Some(0);
                // NHWC space-to-batch: padding before and after (1 and 2).
                check_padded_grid(unit, n1, n0, Window { outer: rows, oc: 1, ic: n1i, lo: 1, hi: n1i * n0i - 2 });
                // Padding after only; rows that keep one unit or none.
                check_padded_grid(unit, n1, n0, Window { outer: rows, oc: 1, ic: n1i, lo: 0, hi: n1i * n0i - 5 });
                check_padded_grid(unit, n1, n0, Window { outer: rows, oc: 1, ic: n1i, lo: 5, hi: 6 });
                // A window on the block factor: row `i` keeps `3 <= n0 * i + k < n1 * n0 - 3`.
                check_padded_grid(unit, n1, n0, Window { outer: rows, oc: n0i, ic: 1, lo: 3, hi: n1i * n0i - 3 });
            }
        }
    }

    /// Interleaving tiles of units without a vector kernel: `ny` streams of
    /// `nx` units, each stream contiguous, zipped into a contiguous
    /// destination, with both buffers exactly their size.
    #[test]
    fn interleaving_tiles_of_other_units_zip_their_streams() {
        for unit in [3, 5, 6, 10, 12, 20, 24, 32, 36, 48, 63, 64] {
            for ny in [2, 3, 4, 5] {
                for nx in [1, 2, 7] {
                    let ssy = (nx * unit) as isize;
                    let src: Vec<u8> = (0..nx * ny * unit).map(|i| (i * 13 + 5) as u8).collect();
                    let mut expected = vec![0u8; src.len()];
                    for x in 0..nx {
                        for y in 0..ny {
                            let (s, d) = (y * nx * unit + x * unit, (x * ny + y) * unit);
                            expected[d..d + unit].copy_from_slice(&src[s..s + unit]);
                        }
                    }
                    let mut dst = vec![0u8; src.len()];
                    let (dsx, mode) = ((ny * unit) as isize, Mode { nt: false, isa: Isa::Portable });
                    // SAFETY: the tile's units are inside both buffers.
                    unsafe {
                        let mut w = Writers::new();
                        copy_tile(Rows::ONE, nx, ny, src.as_ptr(), ssy, dst.as_mut_ptr(), dsx, unit, mode, &mut w);
                        w.finish();
                    }
                    assert_eq!(dst, expected, "unit {unit}, {nx} x {ny}");
                }
            }
        }
    }

    /// Streaming gathers of `n` units `ss` apart into a contiguous
    /// destination, at a 16-byte-aligned destination and 8 bytes off one
    /// (units of whole vectors go straight to the destination, others
    /// through the stage), with the source exactly the units' span.
    #[test]
    fn streaming_gathers_copy_their_units() {
        for unit in [12, 16, 32, 36, 48, 64, 128] {
            for n in [1, 2, 5, 40, 200] {
                for ss in [unit, unit * 3, unit * 4 + 16] {
                    let src: Vec<u8> = (0..(n - 1) * ss + unit).map(|i| (i * 11 + 3) as u8).collect();
                    let expected: Vec<u8> = (0..n).flat_map(|i| src[i * ss..i * ss + unit].to_vec()).collect();
                    for off in [0, 8] {
                        let mut buf = vec![0u128; (n * unit + off).div_ceil(16)];
                        // SAFETY: u128 is plain bytes; the view is the buffer's own length.
                        let dst =
                            unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<u8>(), buf.len() * 16) };
                        let dst = &mut dst[off..off + n * unit];
                        // SAFETY: `n` units `ss` apart inside `src`, `n * unit` bytes at `dst`.
                        unsafe {
                            copy_run(
                                n,
                                src.as_ptr(),
                                ss as isize,
                                dst.as_mut_ptr(),
                                unit as isize,
                                unit,
                                Mode { nt: true, isa: Isa::detect() },
                            );
                            fence();
                        }
                        assert_eq!(dst, &expected[..], "unit {unit}, n {n}, ss {ss}, offset {off}");
                    }
                }
            }
        }
    }

    /// Gathered rows through the line writers: two destination streams,
    /// their rows pushed in turn (each row continuing its stream's last),
    /// at every byte offset from a line (16-byte-aligned ones store whole
    /// lines straight, others go through the stage), against the units,
    /// and nothing written around the streams.
    #[test]
    fn gathered_rows_join_their_ends_through_the_writers() {
        for unit in [16, 32, 48, 64, 80, 128] {
            for n in [1, 3, 4, 9, 40] {
                let ss = unit * 3 + 16;
                let rows = 3;
                // Row `r` of stream `t`: source units from `(t * rows + r) * n * ss`.
                let src: Vec<u8> = (0..2 * rows * n * ss).map(|i| (i * 7 + i / 251) as u8).collect();
                let row = n * unit;
                let want = |t: usize| -> Vec<u8> {
                    (0..rows * n)
                        .flat_map(|u| {
                            let at = (t * rows * n + u) * ss;
                            src[at..at + unit].to_vec()
                        })
                        .collect()
                };
                for off in 0..64 {
                    // Stream `t` at `off + t * (rows * row + 100)`, 64 guard bytes after.
                    let gap = rows * row + 100;
                    let mut buf = vec![0u128; (off + 2 * gap + 64).div_ceil(16)];
                    let base = buf.as_mut_ptr().cast::<u8>();
                    let mut w = Writers::new();
                    // SAFETY: each row's units lie in `src`; stream `t`'s rows
                    // are `rows * row` bytes at `base + off + t * gap`, inside
                    // `buf`; the CPU runs `Isa::detect()`.
                    unsafe {
                        for r in 0..rows {
                            for t in 0..2 {
                                let from = src.as_ptr().add((t * rows + r) * n * ss);
                                let to = base.add(off + t * gap + r * row);
                                gather_lines(&mut w, n, from, ss as isize, to, unit, Isa::detect());
                            }
                        }
                        w.finish();
                        fence();
                    }
                    // SAFETY: u128 is plain bytes; the view is the buffer's own length.
                    let out = unsafe { std::slice::from_raw_parts(base, buf.len() * 16) };
                    for t in 0..2 {
                        let at = off + t * gap;
                        assert_eq!(
                            &out[at..at + rows * row],
                            &want(t)[..],
                            "unit {unit}, n {n}, offset {off}, stream {t}"
                        );
                        let after = &out[at + rows * row..at + gap];
                        assert!(after.iter().all(|&b| b == 0), "unit {unit}, n {n}, offset {off}: written after {t}");
                    }
                    assert!(out[..off].iter().all(|&b| b == 0), "unit {unit}, n {n}, offset {off}: written before");
                }
            }
        }
    }

    #[test]
    fn grids_copy_the_units_of_their_windows() {
        // 16 to 496 in rows of up to 4 units: streamed (`streams_rows`),
        // whole rows of 16 to 64 by `whole_rows`.
        for unit in [1, 3, 4, 6, 12, 16, 20, 24, 31, 32, 36, 48, 63, 64, 100, 256, 496, 512] {
            check_grid(unit, 5, 7, None);
            check_grid(unit, 7, 3, None);
            // A crop of the block factor (OpenVINO batch-to-space): row `i`
            // keeps `3 <= 4i + k < 17`.
            check_grid(unit, 5, 4, Some(Window { outer: Some(0), oc: 4, ic: 1, lo: 3, hi: 17 }));
            // A crop on an outer factor inside its block factor: `2 <= i + 3k < 11`.
            check_grid(unit, 3, 5, Some(Window { outer: Some(0), oc: 1, ic: 3, lo: 2, hi: 11 }));
            // Rows that keep nothing.
            check_grid(unit, 4, 3, Some(Window { outer: Some(0), oc: 3, ic: 1, lo: 4, hi: 5 }));
            // Rows of two units, whole and cropped at the run's ends.
            check_grid(unit, 9, 2, None);
            check_grid(unit, 9, 2, Some(Window { outer: Some(0), oc: 2, ic: 1, lo: 1, hi: 17 }));
            // Crops past a row at each end: row 0 keeps nothing, row 1
            // its last three units, rows 2 and 3 all, row 4 its first
            // three, row 5 nothing.
            check_grid(unit, 6, 4, Some(Window { outer: Some(0), oc: 4, ic: 1, lo: 5, hi: 19 }));
        }
    }

    /// Grids whose rows' units are contiguous in the source, each to its
    /// own destination stream, continued by the next row (the source's
    /// order of rows gathered a unit at a time: [`Grid::stream_scattered`]
    /// when streaming), at every 16-byte offset from a line, against the
    /// units copied one by one, nothing written between the streams.
    #[test]
    fn scattered_grids_continue_each_stream() {
        for unit in [16, 32, 48, 64, 192] {
            // Streams a row of `n1` units and a gap apart: of 80 bytes, or
            // 88 (streams off 16-byte alignment, which stream elsewhere).
            for (n1, n0, gap) in [(9, 2, 80), (7, 3, 80), (5, 4, 80), (7, 3, 88)] {
                let (ss0, ss1, ds1) = (unit as isize, (n0 * unit) as isize, unit as isize);
                let ds0 = (n1 * unit + gap) as isize;
                let src: Vec<u8> = (0..n0 * n1 * unit).map(|i| (i * 7 + i / 253 + 1) as u8).collect();
                for off in [0, 16, 32, 48] {
                    let len = off + n0 * ds0 as usize;
                    let mut expected = vec![0xA5u8; len];
                    for i in 0..n1 {
                        for k in 0..n0 {
                            let s = i * ss1 as usize + k * unit;
                            let d = off + k * ds0 as usize + i * unit;
                            expected[d..d + unit].copy_from_slice(&src[s..s + unit]);
                        }
                    }
                    for (nt, isa) in [(false, Isa::Portable), (true, Isa::detect())] {
                        let g = Grid { n1, ss1, ds1, n0, ss0, ds0, bounds: Bounds::ALL, oc: 0 };
                        let mut buf = vec![0xA5A5_A5A5_A5A5_A5A5_A5A5_A5A5_A5A5_A5A5u128; len.div_ceil(16)];
                        // SAFETY: every unit of the grid is inside both
                        // buffers; `buf` is 16-byte aligned, so is `off`.
                        let out = unsafe {
                            let base = buf.as_mut_ptr().cast::<u8>();
                            g.copy(&[], src.as_ptr(), base.add(off), unit, Mode { nt, isa });
                            fence();
                            std::slice::from_raw_parts(base, len)
                        };
                        assert_eq!(out, &expected[..], "unit {unit}, {n1}x{n0}, gap {gap}, offset {off}, nt {nt}");
                    }
                }
            }
        }
    }
}
