//! The loop nest's plain data, as the kernels take it: [`Loop`] (count and
//! strides on both sides, with an optional [`Window`] of padding or crop),
//! [`Bounds`], [`Rows`] and [`MAX_LOOPS`]. The planner builds them, the
//! executor walks them, the kernels read them.
//!
//! Layer: kernels (plain data); imports geometry's limits and arch's
//! prefetch hint.

use crate::engine::arch::mem::{prefetch, PREFETCH_AHEAD};
use crate::engine::geometry::MAX_FACTORS;

pub(crate) const MAX_LOOPS: usize = MAX_FACTORS + 1;
const _: () = assert!(MAX_LOOPS <= 128, "a u128 holds one bit per loop");

/// A padding/crop window on one loop (see the module docs).
///
/// In declaration order (`repr(C)`), as the [`Loop`] it is a field of
/// (see there).
#[repr(C)]
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
    pub(crate) fn scaled(&self, count: usize) -> Option<Window> {
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
///
/// In declaration order (`repr(C)`). The executor copies loops for each
/// tile, and in the compiler's own order (the window first, its outer
/// loop's two bytes at offset 32) a copy of the rest, from offset 34, was
/// one 38-byte run moved as overlapping 8- and 16-byte pieces: a later
/// read of a piece that spans two of those stores waits for both to reach
/// the cache (no store-to-load forward). On an AMD EPYC (Zen 4), TF
/// batch-to-space-ND of uint8 by 3 x 2 x 2 with a crop (14 MiB), one
/// thread, median of 3 alternated runs: 1.66x memcpy before; 2.5 once
/// `Exec::indices` had a smaller frame (the stall moved into its copies);
/// 1.50 with this order and the tile's choice compared in place
/// (`Exec::tile_choice`).
#[repr(C)]
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

    /// Whether the repetitions' `len`-byte sources begin apart: more than
    /// one, not each continuing the last (`ss != len`), so that each begins
    /// where the hardware prefetchers have not followed. Where
    /// [`Rows::fetch_ahead`] and the line writers' fetch (`lines::Ahead`)
    /// fetch a later repetition instead of the bytes that follow.
    #[inline(always)]
    pub(crate) fn apart(&self, len: usize) -> bool {
        self.count > 1 && self.ss != len as isize
    }

    /// Asks for the source bytes of repetition `r + AHEAD_ROWS` (from
    /// `src`, repetition 0's) that [`Rows::ahead`] names, ahead of their
    /// reads: each row whose source does not continue the last's begins
    /// where the hardware prefetchers have not followed (often a page or
    /// more from the last), and its first loads wait there. A hint: it
    /// never faults.
    #[inline(always)]
    pub(crate) fn fetch_ahead(&self, r: usize, src: *const u8, len: usize) {
        if let Some((offset, bytes)) = self.ahead(r, len) {
            prefetch(src.wrapping_offset(offset), bytes);
        }
    }

    /// What [`Rows::fetch_ahead`] asks for at repetition `r` of `len`-byte
    /// rows, as an offset from repetition 0's source and a length: the
    /// first bytes of repetition `r + AHEAD_ROWS`, `len` of them but at
    /// most [`PREFETCH_AHEAD`] (past those the prefetchers follow the
    /// row), where the rows are [`Rows::apart`] and that repetition is
    /// one of them; else `None`.
    ///
    /// Both limits measured on an AMD EPYC (Zen 1), where a row was
    /// fetched whole, one hint a line in one burst, past the last row too
    /// (one thread, each workload's minimum of alternated runs):
    /// OpenVINO space-to-batch of float16 by 14 padded in the innermost
    /// axis, two deinterleaved rows of 72 MB whose hints all fell past the
    /// last row, spent 87% of its time on them: 10.8x memcpy, 2.2x without
    /// (unpadded, one row: 2.2x). Every broad workload whose rows are
    /// longer than `PREFETCH_AHEAD` (seeds 26, 801 and 802: 10, 21 and 18),
    /// 3 runs, time after over before 0.85, 0.95 and 0.96 (that space-to-
    /// batch, 137 MiB: 7.1 -> 2.1; 2 slower by 5% or more, 23 faster so);
    /// rows fetched whole up to 10 KiB (3 of them in the 32 KiB L1)
    /// measured 0.87, 0.96 and 0.97.
    #[inline(always)]
    fn ahead(&self, r: usize, len: usize) -> Option<(isize, usize)> {
        let later = r.checked_add(AHEAD_ROWS).filter(|&k| k < self.count && self.apart(len))?;
        Some(((later as isize).wrapping_mul(self.ss), len.min(PREFETCH_AHEAD)))
    }
}

/// How many rows ahead [`Rows::fetch_ahead`] fetches, for the
/// deinterleaves of the byte permutes (AVX512-VBMI, `permute`) and of the
/// register transposes (SSE2 and AVX2, `transpose::streams`). Measured
/// (one thread, time or ratio to memcpy, each workload's minimum over
/// alternated runs):
/// - the permutes, on the 53 broad workloads (seed 26) with 3 rows or
///   more, 5 runs, ratio to memcpy: 16 MiB and more (22) 2.26 -> 2.02, 1
///   to 16 MiB (14) 3.44 -> 3.16, smaller (17, in the cache) 5.83 ->
///   5.78; TF NCHW space-to-depth of uint8 by 6 (47 MiB) 4.1 -> 2.1
///   (OpenVINO space-to-batch of float32 by 10, 145 MiB, had spent two
///   thirds of its time waiting on its rows' first loads). That was with
///   every row fetched; leaving out rows that continue the last, which
///   the prefetchers follow, measured the same, 3 runs.
/// - the register transposes, on the broad workloads whose tiles they
///   deinterleave with rows apart (seeds 26, 801 and 802: 60, 62 and 66
///   of them), 2 runs, time after over before: 0.83, 0.93 and 0.88 (the
///   46, 53 and 43 deinterleaves of 5 streams and more they leave alone:
///   1.03, 0.99 and 0.90, this machine's noise); TF NCHW space-to-depth
///   of uint8 by 10 (91 MiB) 8.7 -> 2.6x memcpy, ONNX space-to-depth of
///   uint8 by 9 (40 MiB, which had spent 43% of its time on one load a
///   row) 7.5 -> 4.1. 4 and 8 rows ahead measured the same as 2 there.
const AHEAD_ROWS: usize = 2;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceil_div_rounds_up_for_negatives() {
        assert_eq!(ceil_div(-3, 2), -1);
        assert_eq!(ceil_div(3, 2), 2);
        assert_eq!(ceil_div(4, 2), 2);
        assert_eq!(ceil_div(0, 5), 0);
    }

    #[test]
    fn rows_ahead_are_the_start_of_a_later_row_that_exists() {
        let rows = Rows { count: 5, ss: 1000, ds: 7 };
        // Short rows: the whole of the row two on, while there is one.
        assert_eq!(rows.ahead(0, 100), Some((2000, 100)));
        assert_eq!(rows.ahead(2, 100), Some((4000, 100)));
        assert_eq!(rows.ahead(3, 100), None);
        assert_eq!(rows.ahead(4, 100), None);
        assert_eq!(rows.ahead(usize::MAX, 100), None);
        // Long rows: their first `PREFETCH_AHEAD` bytes.
        let long = Rows { count: 4, ss: -(3 << 20), ds: 0 };
        assert_eq!(long.ahead(1, 3 << 20 >> 1), Some((-(9 << 20), PREFETCH_AHEAD)));
        assert_eq!(long.ahead(1, PREFETCH_AHEAD + 1), Some((-(9 << 20), PREFETCH_AHEAD)));
        assert_eq!(long.ahead(0, PREFETCH_AHEAD), Some((-(6 << 20), PREFETCH_AHEAD)));
        // Rows that continue one another, or one row: nothing.
        assert_eq!(Rows { count: 5, ss: 100, ds: 0 }.ahead(0, 100), None);
        assert_eq!(Rows { count: 1, ss: 1000, ds: 0 }.ahead(0, 100), None);
    }
}
