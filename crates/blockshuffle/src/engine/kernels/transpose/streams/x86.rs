//! The stream squares' x86_64 kernels: AVX2's byte squares and squares of
//! wider units, compiled for AVX2 where the caller dispatched on it.
//!
//! Layer: kernels; imports its parent, [`transpose`](super::super)'s x86
//! moves and arch.

use std::arch::x86_64::*;

use super::super::x86::store_part;
use super::{byte_squares, Rows};
use crate::engine::arch::vector::load_part;
use crate::engine::arch::vector::transpose4_lanes;

/// [`super::byte_squares`] by AVX2's squares ([`square`]), deinterleaving.
///
/// # Safety
/// As [`super::deinterleave`]; the CPU has AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn deinterleave_avx2(rows: Rows, n: usize, b: usize, src: *const u8, dst: *mut u8, ds: isize) {
    // SAFETY: forwarded; the CPU has AVX2 (caller).
    unsafe { byte_squares::<true, false>(rows, n, b, src, dst, ds) }
}

/// [`super::byte_squares`] by AVX2's squares ([`square`]), interleaving.
///
/// # Safety
/// As [`super::interleave`]; the CPU has AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn interleave_avx2(rows: Rows, n: usize, b: usize, src: *const u8, ss: isize, dst: *mut u8) {
    // SAFETY: forwarded; the CPU has AVX2 (caller).
    unsafe { byte_squares::<true, true>(rows, n, b, src, dst, ss) }
}

/// [`super::wide`] for `unit` (one [`super::sides`] names), compiled
/// for AVX2.
///
/// # Safety
/// As [`super::wide`]; the CPU has AVX2.
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn wide_avx2<const INTERLEAVE: bool>(
    joined: bool,
    rows: Rows,
    n: usize,
    b: usize,
    unit: usize,
    src: *const u8,
    dst: *mut u8,
    stride: isize,
) {
    // SAFETY: forwarded; the CPU has AVX2 (caller).
    unsafe {
        match unit {
            2 => super::wide::<2, INTERLEAVE>(joined, rows, n, b, src, dst, stride),
            3 => super::wide::<3, INTERLEAVE>(joined, rows, n, b, src, dst, stride),
            4 => super::wide::<4, INTERLEAVE>(joined, rows, n, b, src, dst, stride),
            6 => super::wide::<6, INTERLEAVE>(joined, rows, n, b, src, dst, stride),
            _ => super::wide::<8, INTERLEAVE>(joined, rows, n, b, src, dst, stride),
        }
    }
}

/// [`super::block_squares`] of `unit`-byte units (3, 4 or 8),
/// compiled for AVX2.
///
/// # Safety
/// As [`super::block`]; the CPU has AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn block_avx2(
    nx: usize,
    ny: usize,
    unit: usize,
    src: *const u8,
    ssy: isize,
    dst: *mut u8,
    dsx: isize,
) {
    // SAFETY: forwarded; the CPU has AVX2 (caller).
    unsafe {
        match unit {
            3 => super::block_squares::<3>(nx, ny, src, ssy, dst, dsx),
            4 => super::block_squares::<4>(nx, ny, src, ssy, dst, dsx),
            _ => super::block_squares::<8>(nx, ny, src, ssy, dst, dsx),
        }
    }
}

/// A square of `U`-byte units, rows at `src + i * ss` and columns to
/// `dst + k * ds`: deinterleaving (`!INTERLEAVE`), rows of the
/// [`sides`](super::sides)' streams from its units' groups, into as
/// many columns; interleaving, rows of its units from its streams. Of
/// it, only the last half of its rows or of its columns where `part`
/// says so (and [`halves`] has them).
///
/// # Safety
/// Those bytes readable and writable; the CPU has AVX2.
#[inline(always)]
pub(super) unsafe fn wide_square<const U: usize, const INTERLEAVE: bool>(
    src: *const u8,
    ss: isize,
    dst: *mut u8,
    ds: isize,
    part: Part,
) {
    // SAFETY: forwarded.
    unsafe { wide_square_at::<U, INTERLEAVE>(|i| src.wrapping_offset(i * ss), |k| dst.wrapping_offset(k * ds), part) }
}

/// Which of a square [`wide_square`] moves: all of it, or the last half
/// of its rows (`rows`), of its units along each row (`cols`: the
/// columns written), or both, where [`halves`] has that half.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Part {
    /// Only the last half of the square's rows.
    pub rows: bool,
    /// Only the last half of its columns (each row's last units).
    pub cols: bool,
}

/// Which halves of a square of `unit`-byte units [`wide_square`] moves
/// alone: (rows, columns). Units of 4 and 8 bytes both (4 of 8 rows or
/// columns, 2 of 4); packed units of 3 and 6 bytes their columns (each
/// row half's slots, as the whole square takes them); 2-byte units
/// neither.
pub(super) const fn halves(unit: usize) -> (bool, bool) {
    match unit {
        4 | 8 => (true, true),
        3 | 6 => (false, true),
        _ => (false, false),
    }
}

/// [`wide_square`] whose row `i` is at `row(i)` and column `k` goes
/// to `col(k)`.
///
/// # Safety
/// As [`wide_square`], for those rows and columns.
#[inline(always)]
pub(super) unsafe fn wide_square_at<const U: usize, const INTERLEAVE: bool>(
    row: impl Fn(isize) -> *const u8,
    col: impl Fn(isize) -> *mut u8,
    part: Part,
) {
    // A real check: a half a kernel does not have would be moved whole,
    // outside the bytes the caller gave for it.
    let (rows, cols) = halves(U);
    assert!((rows || !part.rows) && (cols || !part.cols), "no such half of a square of {U}-byte units: {part:?}");
    // SAFETY: forwarded.
    unsafe {
        match (U, INTERLEAVE) {
            (2, false) => square2_tall(row, col),
            (2, true) => square2_wide(row, col),
            (3 | 4, _) => square4::<U>(row, col, part),
            _ => square8::<U>(row, col, part),
        }
    }
}

/// A square of 16 rows of 8 units of 2 bytes into 8 columns of 16:
/// rows `i` and `i + 8` in the two lanes of one register, the 8 x 8
/// transpose in each lane ([`transpose2`]) leaves column `k` whole in
/// register `k`: 16 loads, 24 shuffles and 8 stores.
///
/// # Safety
/// Those bytes readable and writable; the CPU has AVX2.
#[inline(always)]
unsafe fn square2_tall(row: impl Fn(isize) -> *const u8, col: impl Fn(isize) -> *mut u8) {
    const H: isize = 8;
    // SAFETY: rows `0..16`, 16 bytes each, and columns `0..8`, 32
    // bytes each (caller); AVX2 (caller).
    unsafe {
        let mut v = [_mm256_setzero_si256(); H as usize];
        for (i, v) in (0..).zip(v.iter_mut()) {
            *v = _mm256_loadu2_m128i(row(i + H).cast(), row(i).cast());
        }
        for (k, c) in (0..).zip(transpose2(v)) {
            _mm256_storeu_si256(col(k).cast(), c);
        }
    }
}

/// A square of 8 rows of 16 units of 2 bytes into 16 columns of 8:
/// each row one vector, the 8 x 8 transpose in each lane
/// ([`transpose2`]) leaves column `k` in register `k`'s low lane and
/// column `k + 8` in its high: 8 loads, 24 shuffles and 16 stores.
///
/// # Safety
/// Those bytes readable and writable; the CPU has AVX2.
#[inline(always)]
unsafe fn square2_wide(row: impl Fn(isize) -> *const u8, col: impl Fn(isize) -> *mut u8) {
    const H: isize = 8;
    // SAFETY: rows `0..8`, 32 bytes each, and columns `0..16`, 16
    // bytes each (caller); AVX2 (caller).
    unsafe {
        let mut v = [_mm256_setzero_si256(); H as usize];
        for (i, v) in (0..).zip(v.iter_mut()) {
            *v = _mm256_loadu_si256(row(i).cast());
        }
        for (k, c) in (0..).zip(transpose2(v)) {
            _mm_storeu_si128(col(k).cast(), _mm256_castsi256_si128(c));
            _mm_storeu_si128(col(k + H).cast(), _mm256_extracti128_si256::<1>(c));
        }
    }
}

/// In each lane, the 8 x 8 transpose of 2-byte units of `v`'s lanes:
/// three rounds of unpacks, of 2, 4 and 8 bytes.
///
/// # Safety
/// The CPU has AVX2.
#[inline(always)]
unsafe fn transpose2(v: [__m256i; 8]) -> [__m256i; 8] {
    // SAFETY: AVX2 (caller).
    unsafe {
        let mut t = [_mm256_setzero_si256(); 8];
        for i in 0..4 {
            t[2 * i] = _mm256_unpacklo_epi16(v[2 * i], v[2 * i + 1]);
            t[2 * i + 1] = _mm256_unpackhi_epi16(v[2 * i], v[2 * i + 1]);
        }
        // `t[2i]`: columns 0 to 3 of rows `2i` and `2i + 1`; `t[2i + 1]`,
        // columns 4 to 7.
        let mut u = [_mm256_setzero_si256(); 8];
        for (g, base) in [0, 4].into_iter().enumerate() {
            for h in 0..2 {
                let (a, b) = (t[base + h], t[base + 2 + h]);
                u[4 * g + 2 * h] = _mm256_unpacklo_epi32(a, b);
                u[4 * g + 2 * h + 1] = _mm256_unpackhi_epi32(a, b);
            }
        }
        // `u[4g + j]`: columns `2j` and `2j + 1` of rows `4g..4g + 4`.
        let mut c = [_mm256_setzero_si256(); 8];
        for j in 0..4 {
            c[2 * j] = _mm256_unpacklo_epi64(u[j], u[4 + j]);
            c[2 * j + 1] = _mm256_unpackhi_epi64(u[j], u[4 + j]);
        }
        c
    }
}

/// A square of 4 rows of 4 units of `U` bytes, 8 or 6 (in 8-byte
/// slots, [`Slots`]): each row's two halves, rows `i` and `i + 2` in
/// the two lanes of one register, so that one unpack of 8 bytes inside
/// the lanes leaves a column whole: 8 loads, 4 shuffles and 4 stores
/// (6-byte units: 12 shuffles more and 4 stores more). Its last two
/// columns alone (`part.cols`) are the second half of that; its last
/// two rows (8-byte units), each one vector, unpacked into the last 16
/// bytes of each column ([`half_rows8`]).
///
/// # Safety
/// Those bytes readable and writable (of the `part`); the CPU has AVX2.
#[inline(always)]
unsafe fn square8<const U: usize>(row: impl Fn(isize) -> *const u8, col: impl Fn(isize) -> *mut u8, part: Part) {
    // SAFETY: rows `0..4`, `4 * U` bytes each, and columns `0..4`
    // (caller), or the part's; AVX2 (caller). The whole square's halves
    // as constants, as before there were parts.
    unsafe {
        if part.rows {
            return half_rows8(row, col, part.cols);
        }
        if !part.cols {
            half8::<U>(&row, &col, 0);
        }
        half8::<U>(&row, &col, 1);
    }
}

/// Columns `2h` and `2h + 1` of [`square8`]'s square (half `h` of each
/// row).
///
/// # Safety
/// As [`square8`], for those columns.
#[inline(always)]
unsafe fn half8<const U: usize>(row: &impl Fn(isize) -> *const u8, col: &impl Fn(isize) -> *mut u8, h: usize) {
    // SAFETY: half `h` of rows `0..4` and columns `2h..2h + 2` (caller);
    // AVX2 (caller).
    unsafe {
        let mut v = [_mm256_setzero_si256(); 2];
        for (i, v) in (0..).zip(v.iter_mut()) {
            *v = Slots::<U>::load(row(i), row(i + 2), h);
        }
        let cols = [_mm256_unpacklo_epi64(v[0], v[1]), _mm256_unpackhi_epi64(v[0], v[1])];
        for (k, c) in (0..).zip(cols) {
            Slots::<U>::store(col(2 * h as isize + k), c);
        }
    }
}

/// Rows 2 and 3 of [`square8`]'s square of 8-byte units (`cols`: their
/// units 2 and 3 alone) into the last 16 bytes of each column: each row
/// one vector, one unpack of 8 bytes leaves columns `k` and `k + 2` in
/// one register's lanes.
///
/// # Safety
/// Those bytes readable and writable; the CPU has AVX2.
#[inline(always)]
unsafe fn half_rows8(row: impl Fn(isize) -> *const u8, col: impl Fn(isize) -> *mut u8, cols: bool) {
    // SAFETY: rows 2 and 3, their 32 bytes or (`cols`) their last 16,
    // and the last 16 bytes of columns `0..4` or `2..4` (caller); AVX2
    // (caller).
    unsafe {
        if cols {
            let (a, b) = (_mm_loadu_si128(row(2).add(16).cast()), _mm_loadu_si128(row(3).add(16).cast()));
            _mm_storeu_si128(col(2).add(16).cast(), _mm_unpacklo_epi64(a, b));
            _mm_storeu_si128(col(3).add(16).cast(), _mm_unpackhi_epi64(a, b));
            return;
        }
        let (a, b) = (_mm256_loadu_si256(row(2).cast()), _mm256_loadu_si256(row(3).cast()));
        for (k, c) in (0..).zip([_mm256_unpacklo_epi64(a, b), _mm256_unpackhi_epi64(a, b)]) {
            _mm_storeu_si128(col(k).add(16).cast(), _mm256_castsi256_si128(c));
            _mm_storeu_si128(col(k + 2).add(16).cast(), _mm256_extracti128_si256::<1>(c));
        }
    }
}

/// A square of 8 rows of 8 units of `U` bytes, 4 or 3 (in 4-byte
/// slots, [`Slots`]), row `i` at `row(i)`, column `k` to `col(k)`:
/// each row's two halves, rows `i` and `i + 4` in the
/// two lanes of one register, so that two rounds of unpacks (of 4
/// bytes, then of 8) inside the lanes leave column `k` whole in one
/// register: 16 loads, 16 shuffles (none across lanes) and 8 stores
/// (3-byte units: 24 shuffles more and 8 stores more). Its last four
/// columns alone (`part.cols`) are the second half of that; its last
/// four rows (4-byte units), each one vector, transposed into the last
/// 16 bytes of each column ([`half_rows4`]).
///
/// # Safety
/// Those bytes readable and writable (of the `part`); the CPU has AVX2.
#[inline(always)]
unsafe fn square4<const U: usize>(row: impl Fn(isize) -> *const u8, col: impl Fn(isize) -> *mut u8, part: Part) {
    // SAFETY: rows `0..8`, `8 * U` bytes each, and columns `0..8`
    // (caller), or the part's; AVX2 (caller). The whole square's halves
    // as constants, as before there were parts.
    unsafe {
        if part.rows {
            return half_rows4(row, col, part.cols);
        }
        if !part.cols {
            half4::<U>(&row, &col, 0);
        }
        half4::<U>(&row, &col, 1);
    }
}

/// Columns `4h..4h + 4` of [`square4`]'s square (half `h` of each row).
///
/// # Safety
/// As [`square4`], for those columns.
#[inline(always)]
unsafe fn half4<const U: usize>(row: &impl Fn(isize) -> *const u8, col: &impl Fn(isize) -> *mut u8, h: usize) {
    const H: isize = 4;
    // SAFETY: half `h` of rows `0..8` and columns `4h..4h + 4` (caller);
    // AVX2 (caller).
    unsafe {
        let mut v = [_mm256_setzero_si256(); H as usize];
        for (i, v) in (0..).zip(v.iter_mut()) {
            *v = Slots::<U>::load(row(i), row(i + H), h);
        }
        for (k, c) in (0..).zip(transpose4_lanes(v)) {
            Slots::<U>::store(col(H * h as isize + k), c);
        }
    }
}

/// Rows 4 to 7 of [`square4`]'s square of 4-byte units (`cols`: their
/// units 4 to 7 alone) into the last 16 bytes of each column: each row
/// one vector, the 4 x 4 transpose in each lane leaves columns `k` and
/// `k + 4` in one register's lanes.
///
/// # Safety
/// Those bytes readable and writable; the CPU has AVX2.
#[inline(always)]
unsafe fn half_rows4(row: impl Fn(isize) -> *const u8, col: impl Fn(isize) -> *mut u8, cols: bool) {
    // SAFETY: rows `4..8`, their 32 bytes or (`cols`) their last 16, and
    // the last 16 bytes of columns `0..8` or `4..8` (caller); AVX2
    // (caller).
    unsafe {
        let mut v = [_mm256_setzero_si256(); 4];
        for (i, v) in (4..).zip(v.iter_mut()) {
            *v = if cols {
                _mm256_castsi128_si256(_mm_loadu_si128(row(i).add(16).cast()))
            } else {
                _mm256_loadu_si256(row(i).cast())
            };
        }
        for (k, c) in (0..).zip(transpose4_lanes(v)) {
            if cols {
                _mm_storeu_si128(col(k + 4).add(16).cast(), _mm256_castsi256_si128(c));
            } else {
                _mm_storeu_si128(col(k).add(16).cast(), _mm256_castsi256_si128(c));
                _mm_storeu_si128(col(k + 4).add(16).cast(), _mm256_extracti128_si256::<1>(c));
            }
        }
    }
}

/// The rows and columns of [`square4`] and [`square8`]: a row of 8
/// (or 4) units of `U` bytes, 4 or 8, is two 16-byte halves; units of
/// 3 (or 6) bytes, packed, are widened to slots of 4 (or 8) bytes, a
/// half's 12 bytes each into a lane by one byte shuffle, and a
/// column's narrowed back by one byte shuffle in the lanes and one
/// permute of 4-byte quarters across them, then stored as 16 bytes and
/// 8. Every load and store is of the units' own bytes.
struct Slots<const U: usize>;

impl<const U: usize> Slots<U> {
    /// Whether the units are packed: 3 or 6 bytes.
    const PACKED: bool = U == 3 || U == 6;
    /// Bytes of a slot.
    const SLOT: usize = match U {
        3 => 4,
        6 => 8,
        _ => U,
    };
    /// In each lane, the shuffle that widens the half of a packed row
    /// at byte `4 * h` of a lane (read from byte `8 * h` of the row, so
    /// that it ends at the row's end) into slots (zero past each unit).
    const WIDEN: [[u8; 32]; 2] = [Self::widen(0), Self::widen(1)];
    /// In each lane, the shuffle that narrows slots into the lane's
    /// first 12 bytes.
    const NARROW: [u8; 32] = Self::narrow();

    const fn widen(h: usize) -> [u8; 32] {
        let mut c = [0x80; 32];
        let mut i = 0;
        while i < 32 {
            let (slot, at) = ((i % 16) / Self::SLOT, i % Self::SLOT);
            if at < U {
                c[i] = (4 * h + slot * U + at) as u8;
            }
            i += 1;
        }
        c
    }

    const fn narrow() -> [u8; 32] {
        let mut c = [0x80; 32];
        let mut i = 0;
        while i < 32 {
            let (slot, at) = ((i % 16) / U, i % 16 % U);
            if i % 16 < 12 {
                c[i] = (slot * Self::SLOT + at) as u8;
            }
            i += 1;
        }
        c
    }

    /// Half `h` of the rows at `lo` and `hi`, in the low and high lane,
    /// in slots.
    ///
    /// # Safety
    /// Both rows' bytes readable; the CPU has AVX2.
    #[inline(always)]
    unsafe fn load(lo: *const u8, hi: *const u8, h: usize) -> __m256i {
        let at = if Self::PACKED { 8 * h } else { 16 * h };
        // SAFETY: bytes `at..at + 16` of a row of `2 * 12` (packed) or
        // `2 * 16` bytes (caller); AVX2 (caller).
        unsafe {
            let v = _mm256_loadu2_m128i(hi.add(at).cast(), lo.add(at).cast());
            if Self::PACKED {
                _mm256_shuffle_epi8(v, _mm256_loadu_si256(Self::WIDEN[h].as_ptr().cast()))
            } else {
                v
            }
        }
    }

    /// Stores a column of slots (the low lane's first) as units at
    /// `dst`.
    ///
    /// # Safety
    /// A column's bytes writable (`32 / SLOT * U`); the CPU has AVX2.
    #[inline(always)]
    unsafe fn store(dst: *mut u8, col: __m256i) {
        // SAFETY: 32 bytes, or packed 24 (caller); AVX2 (caller).
        unsafe {
            if !Self::PACKED {
                return _mm256_storeu_si256(dst.cast(), col);
            }
            let narrow = _mm256_shuffle_epi8(col, _mm256_loadu_si256(Self::NARROW.as_ptr().cast()));
            let packed = _mm256_permutevar8x32_epi32(narrow, _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7));
            _mm_storeu_si128(dst.cast(), _mm256_castsi256_si128(packed));
            _mm_storel_epi64(dst.add(16).cast(), _mm256_extracti128_si256::<1>(packed));
        }
    }
}

/// A square of 16 rows of 16 bytes: rows `i` and `i + 8` in the two
/// lanes of one register, three rounds of byte unpacks (row `i` with
/// row `i + 4`, the perfect shuffle) leave columns `2k` and `2k + 1`
/// of each lane's rows in register `k`, and a permute of its 8-byte
/// quarters puts column `2k` in the low lane and `2k + 1` in the high:
/// 8 registers and 40 shuffles (SSE2's square, 16 registers and 64
/// unpacks, spills with 16 vector registers). Rows past `from.len()`
/// are zero, columns past `to.len()` not written; a row's 16 bytes
/// are read whole where they end by `reads`, otherwise only its
/// `to.len()` bytes ([`load_part`]), and a column's `from.len()` bytes
/// written ([`store_part`]: one vector for 16).
///
/// # Safety
/// Those bytes readable and writable; the CPU has AVX2.
#[inline(always)]
pub(super) unsafe fn square(from: &[*const u8], at: isize, to: &[*mut u8], reads: usize) {
    let row = |r: usize| from[r].wrapping_offset(at);
    // SAFETY: forwarded.
    unsafe { square_at::<false, false>(from.len(), row, to.len(), |c| to[c], |r| ends_by(row(r), reads)) }
}

/// Whether the 16 bytes at `p` end by address `reads`.
#[inline(always)]
fn ends_by(p: *const u8, reads: usize) -> bool {
    (p as usize).wrapping_add(16) <= reads
}

/// Deinterleaves squares of 16 groups of `b` bytes, the groups `b`
/// bytes apart from `src`, one from each group in `starts`: byte `j` of
/// group `x` to byte `x` of column `j` (at `cols[j]`), for the
/// `cols.len()` columns (at most 16). Each row's address an offset worked
/// out once; `WHOLE`: every group's 16 bytes read whole, without the
/// edges' checks, otherwise only where they end by `reads`.
///
/// # Safety
/// The 16 groups from each start readable (each group's 16 bytes from
/// its start with `WHOLE`, else where they end by `reads`, and its
/// `cols.len()` bytes), and the columns' 16 bytes from each start
/// writable; the CPU has AVX2.
#[inline(always)]
pub(super) unsafe fn deinterleave_squares<const WHOLE: bool>(
    src: *const u8,
    b: usize,
    starts: impl Iterator<Item = usize>,
    cols: &[*mut u8],
    reads: usize,
) {
    let rows: [usize; 16] = std::array::from_fn(|i| i * b);
    for x in starts {
        let from = src.wrapping_add(x * b);
        let row = |i: usize| from.wrapping_add(rows[i]);
        // SAFETY: the square's 16 groups and 16 bytes of each column
        // (caller); AVX2 (caller).
        unsafe {
            square_at::<WHOLE, true>(16, row, cols.len(), |j| cols[j].wrapping_add(x), |i| ends_by(row(i), reads))
        }
    }
}

/// Interleaves one row of `b` streams of `n` bytes (at least 16), stream
/// `j` at `src + j * stride`, into `n` groups of `b` bytes at `dst`, in
/// squares of 16 bytes of each of 16 streams (or the rest of them) from
/// each of `starts`, each stream's 16 bytes read whole. Each column of a
/// square is written as one vector where the square's last ends by the
/// run's end: the bytes it writes past the square's streams (fewer than
/// 16, zero) are the first of the next group, which the next column
/// writes again, or, past the square's last column, a later square; a
/// group's later streams go first, so that its first 16 streams' square
/// writes again what those wrote past the group. A square whose last
/// column would end past the run writes exactly its bytes
/// ([`store_part`]).
///
/// # Safety
/// The streams' bytes readable, the run's `n * b` writable; `n >= 16`,
/// every start at most `n - 16` and after the one before, every group in
/// some square; the CPU has AVX2.
#[inline(always)]
pub(super) unsafe fn interleave_squares(
    src: *const u8,
    stride: isize,
    b: usize,
    n: usize,
    starts: impl Iterator<Item = usize>,
    dst: *mut u8,
) {
    let rows: [isize; 16] = std::array::from_fn(|i| i as isize * stride);
    let writes = n * b;
    for x in starts {
        for c in (0..b.div_ceil(16)).rev().map(|k| 16 * k) {
            let nr = 16.min(b - c);
            let (from, at) = (src.wrapping_offset(c as isize * stride).wrapping_add(x), x * b + c);
            let (row, col) = (|i| from.wrapping_offset(rows[i]), |j| dst.wrapping_add(at + j * b));
            // SAFETY: the streams' bytes `x..x + 16` (`x <= n - 16`),
            // and the groups' (`at + 15 * b + 16 <= n * b` where written
            // whole, exactly otherwise) (caller); AVX2 (caller).
            unsafe {
                if at + 15 * b + 16 <= writes {
                    square_at::<true, true>(nr, row, 16, col, |_| true)
                } else {
                    square_at::<true, false>(nr, row, 16, col, |_| true)
                }
            }
        }
    }
}

/// [`square`] of `nr` rows, row `r` read from `row(r)`, and `nc` columns,
/// column `c` written to `col(c)`: `ROWS`, each row's 16 bytes read whole
/// (else where `whole(r)`, otherwise only its `nc`: `load_part`);
/// `COLUMNS`, each column's 16 bytes written whole, the rows' past `nr`
/// zero (else only its `nr`).
///
/// # Safety
/// As [`square`], for those rows and columns.
#[inline(always)]
pub(super) unsafe fn square_at<const ROWS: bool, const COLUMNS: bool>(
    nr: usize,
    row: impl Fn(usize) -> *const u8,
    nc: usize,
    col: impl Fn(usize) -> *mut u8,
    whole: impl Fn(usize) -> bool,
) {
    const H: usize = 8;
    // SAFETY: the rows' `nc` bytes, or whole vectors where `ROWS` or
    // `whole`; the columns' `nr`, or 16 with `COLUMNS` (caller); the CPU
    // has AVX2 (caller).
    unsafe {
        let mut v = [_mm256_setzero_si256(); H];
        for (i, v) in v.iter_mut().enumerate() {
            // Rows `i` and `i + H`, those past the last zero (no
            // closure, whose intrinsics the compiler may leave as
            // calls: `.ci/inlined`).
            let mut rows = [_mm_setzero_si128(); 2];
            for (lane, r) in rows.iter_mut().zip([i, i + H]) {
                if r < nr {
                    *lane = if ROWS || whole(r) { _mm_loadu_si128(row(r).cast()) } else { load_part(row(r), nc) };
                }
            }
            *v = _mm256_set_m128i(rows[1], rows[0]);
        }
        for _ in 0..3 {
            let mut next = v;
            for i in 0..H / 2 {
                let (a, b) = (v[i], v[i + H / 2]);
                (next[2 * i], next[2 * i + 1]) = (_mm256_unpacklo_epi8(a, b), _mm256_unpackhi_epi8(a, b));
            }
            v = next;
        }
        for (k, v) in v.iter().enumerate() {
            let v = _mm256_permute4x64_epi64::<0b11_01_10_00>(*v);
            for (c, half) in [(2 * k, _mm256_castsi256_si128(v)), (2 * k + 1, _mm256_extracti128_si256::<1>(v))] {
                if c < nc {
                    if COLUMNS {
                        _mm_storeu_si128(col(c).cast(), half);
                    } else {
                        store_part(col(c), nr, half);
                    }
                }
            }
        }
    }
}
