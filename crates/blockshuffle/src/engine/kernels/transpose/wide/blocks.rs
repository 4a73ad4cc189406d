//! The blocks of [`super::units`]'s strips, streamed or with the tensors
//! past the caches: how many steps a block has ([`block_steps`]), the
//! next block's source lines fetched while one is moved ([`Ahead`]), and,
//! streamed, the source's lead columns, which go first so that every
//! square after them reads whole lines ([`source_lead`]).
//!
//! Through the cache, the strips go in blocks, fetched, where the caller
//! says the tensors are past the caches (the plan streams, though these
//! rows do not); otherwise a step at a time, nothing fetched, in an
//! instance of their own (`chunks`' `FETCH`: with the blocks' loops in
//! the code, though never more than a step, the cached tiles took 1.1
//! times as long). Measured on an AMD EPYC (Zen 5, L2 1 MiB, L3 32 MiB:
//! plans stream from 8 MiB), one thread, 4 alternated runs, paired
//! per-round ratios, time after over before, on the tiles in these
//! squares through the cache of broad seeds 26 and 801-803 (85% of their
//! time on the masked loads of the source rows, 16 or more streams that
//! the prefetchers do not follow): the 50 of 8 MiB and more 0.75, 41
//! faster by more than 5%, 5 slower (a numpy transpose of 3-byte units
//! in tiles of 19 x 29, 176 MiB, 3.8 -> 4.9x memcpy); held out, the 84
//! of seeds 804-810, 0.78, 65 faster, 14 slower (the most, a numpy
//! transpose of 4-byte units, 5,451 rows of 100, 1.66 times the time);
//! two threads, the 134, 0.77. Fetched at every size, the outputs under
//! 5 MiB (whose source stays in the last-level cache) took 1.06-1.17
//! times as long, and blocks without the fetch 1.04; of 8 MiB and more,
//! fetching only the first line or two of each row of a block took 1.17
//! and 1.04 times as long as fetching them whole.
//!
//! Layer: kernels; imports its parent's `Squares` and arch.

use std::mem::MaybeUninit;

use super::super::{Matrix, Rows2};
use super::Squares;
use crate::engine::arch::mem::{prefetch, LINE};

/// The columns before the source rows' first line boundary, which go
/// first, as a strip of their own (`chunk`), so that every square after
/// them reads whole lines (a row of a square that straddles two lines
/// costs two): where every source row starts at one offset in its line,
/// a whole number of units before the boundary, and is at least
/// [`ALIGNED_ROW`] bytes long; otherwise 0. (Not for packed units, whose
/// rows are 48 bytes.)
pub(super) fn source_lead<S: Squares>(mx: Matrix) -> usize {
    let Matrix { rows, cols, src, from, .. } = mx;
    match line_lead(src as usize, from, rows, S::U) {
        Some(lead) if S::U == S::L && cols.saturating_mul(S::U) >= ALIGNED_ROW => lead.min(cols),
        _ => 0,
    }
}

/// Where rows `0..n` of `rows`, from address `at`, all start at `at`'s
/// offset in its line (their stride, and their repetitions' where there
/// are two loops, whole lines), a whole number of `unit`-byte units before
/// the next boundary: those units (0 on the boundary). Both sides'
/// leads: the destination's rows streamed from their first boundary,
/// the source's columns ([`source_lead`]).
pub(super) fn line_lead(at: usize, rows: Rows2, n: usize, unit: usize) -> Option<usize> {
    let line = |v: isize| v.unsigned_abs().is_multiple_of(LINE);
    let bytes = (LINE - at % LINE) % LINE;
    let same = line(rows.stride) && (n <= rows.inner || line(rows.outer)) && bytes.is_multiple_of(unit);
    same.then_some(bytes / unit)
}

/// The shortest source rows whose squares start at a line boundary
/// ([`source_lead`]): a page. The lead's columns go a unit at a time in
/// AVX2's squares, as do the strip's last ones it leaves (up to two
/// squares' columns in all, of at least 512 for 8-byte units).
const ALIGNED_ROW: usize = 4096;

/// Bytes of the source rows a block of a strip's steps reads
/// ([`block_steps`]): a quarter of the first-level data cache of every
/// x86_64 core of the last decade (32 KiB and more), so that the block
/// and the next one, fetched while it is moved ([`Ahead`]), fit in half
/// of it. (16 KiB measured alike on the large matrices and lost on the
/// small ones, tiles of 32 x 32 and 48 x 48 float64 that a block of 32
/// rows takes whole: 2.9 -> 4.1x memcpy, one run.)
pub(super) const BLOCK_BYTES: usize = 8 << 10;

/// Most rows of a block (the source row pointers `chunk` keeps).
pub(super) const BLOCK_ROWS: usize = 64;

/// Most steps of a block: its rows in squares of 2 (the narrowest).
pub(super) const MAX_STEPS: usize = BLOCK_ROWS / 2;

/// The steps of a block in a strip of `bc` columns, of `rows` rows each
/// (a square's, or a shifted step's [`Squares::SHIFT_ROWS`]): as many as
/// read [`BLOCK_BYTES`] of the source rows, at least one, at most
/// [`BLOCK_ROWS`] rows.
pub(super) fn block_steps<S: Squares>(bc: usize, rows: usize) -> usize {
    (BLOCK_BYTES / bc.saturating_mul(S::U).max(1) / rows).clamp(1, (BLOCK_ROWS / rows).max(1))
}

/// The next block's source lines, fetched a few at a time while a block
/// is moved, spread evenly over its squares: no hardware prefetcher
/// follows a column of rows, and fetched all at once they would wait in
/// line behind the streaming stores.
///
/// Each row's lines from the one its first byte is in, as many as the
/// row that starts latest in its line spans: counted from the rows' first
/// bytes, a row off its line boundary went without its last line (half
/// the lines of a strip of 64 bytes). On an AMD EPYC (Zen 5), one thread,
/// 4 alternated runs, paired, time after over before: the 50 tiles of 8
/// MiB and more through the cache of broad seeds 26, 801-803 that fetch,
/// 0.94, 22 faster by more than 5%, 8 slower; held out, the 84 of seeds
/// 804-810, 1.01 and 1.00 in two sets of runs; `transpose.json`
/// (streamed), 0.986, 14 faster, 3 slower.
pub(super) struct Ahead {
    /// The starts of the lines that hold the rows' first bytes to fetch
    /// (the first `total / lines` written).
    rows: [MaybeUninit<*const u8>; BLOCK_ROWS],
    /// Lines a row.
    lines: usize,
    /// Lines in all, and the next to fetch.
    total: usize,
    next: usize,
    /// Lines a square.
    per: usize,
}

impl Ahead {
    pub(super) fn new() -> Self {
        Ahead { rows: [MaybeUninit::uninit(); BLOCK_ROWS], lines: 1, total: 0, next: 0, per: 0 }
    }

    /// Aims at `len` bytes from byte `at` of the `n` source rows from row
    /// `first` of `from` (at most [`BLOCK_ROWS`]), over `squares` squares.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn aim(
        &mut self,
        from: Rows2,
        src: *const u8,
        first: usize,
        at: usize,
        n: usize,
        len: usize,
        squares: usize,
    ) {
        let n = n.min(BLOCK_ROWS);
        let rows = &mut self.rows;
        // Each row from the start of its first line, and as many lines as
        // the row that starts latest in its line spans.
        let mut into = 0;
        from.walk(first, n, |i, o| {
            let row = src.wrapping_offset(o + at as isize);
            let skip = row as usize % LINE;
            into = into.max(skip);
            rows[i].write(row.wrapping_sub(skip));
        });
        self.lines = (into + len).div_ceil(LINE).max(1);
        self.total = n * self.lines;
        self.next = 0;
        self.per = self.total.div_ceil(squares.max(1));
    }
    /// Fetches a square's share of the lines.
    #[inline(always)]
    pub(super) fn issue(&mut self) {
        let end = (self.next + self.per).min(self.total);
        while self.next < end {
            let (i, l) = (self.next / self.lines, self.next % self.lines);
            // SAFETY: `i < total / lines == n`: written by `aim`.
            let row = unsafe { self.rows[i].assume_init() };
            prefetch(row.wrapping_add(l * LINE), 1);
            self.next += 1;
        }
    }
}
