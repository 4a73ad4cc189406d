//! Full-line squares without AVX-512 ([`Halves`]): an `N x N` square of
//! `U`-byte units whose rows are one line (16 x 16 of 4 bytes, 8 x 8 of
//! 8), moved as four squares of AVX2's 32-byte vectors, one a row (8 x 8
//! of 4 bytes, 4 x 4 of 8). The square reads one line of each of
//! its source rows and writes one whole line of each of its destination
//! rows, both halves of it one after the other, so that streamed it needs
//! no stage, as AVX-512's. The edges go a unit at a time.
//!
//! Packed units of 3 and 6 bytes go in such squares of their lanes
//! ([`Packed`]: 16 x 16 in lanes of 4 bytes, 8 x 8 in lanes of 8), each
//! quarter's 24-byte rows widened to a vector on the way in and packed
//! again on the way out by byte shuffles (AVX-512's packed squares do
//! both in their first and last rounds' permutes); never streamed (a row
//! is 48 bytes), their edges whole squares over the ones before them
//! (`Squares::OVERLAPS`).
//!
//! The loop nest around the squares is `wide`'s (strips of 512 bytes of
//! the source rows, 2,048 for the packed squares (see [`Packed`]'s
//! `STRIP`), chunks of rows the TLB holds, a line of every
//! destination row of a strip per step; streamed, the steps in blocks
//! of 8 KiB of the strip's source rows, the next block fetched ahead).
//! In standalone models on this project's machine (AMD Zen 3, AVX2, one
//! thread, ratio to memcpy), a 7,264 x 7,264 float64 transpose took
//! 1.5-2.1x memcpy a step at a time and 2.0-2.5x in blocks of 64 x 64
//! units without fetching ahead (a C model); 1.6-1.7x a step at a time
//! and 1.36-1.46x in blocks of 32 rows of 512-byte strips with the next
//! block's lines fetched a few per square (a Rust one); with rows of 384
//! float64 (`transpose.json`'s T07), 3.1x and 1.8x (the Rust one).
//!
//! Layer: kernels; imports its parents' `Squares` and unit-by-unit loop, and arch.

use std::arch::x86_64::*;

use super::Squares;
use crate::engine::arch::vector::transpose4_lanes;

/// How [`quarters`] reads a quarter's rows and writes a square's: a
/// quarter's row is half a square's (`N / 2` units of `U` bytes, 32 or
/// 24), one 32-byte vector of `L`-byte lanes in the registers.
trait Quarter: Squares {
    /// A quarter's row at `p` as a vector of lanes.
    ///
    /// # Safety
    /// `N * U / 2` bytes readable at `p`; the CPU has AVX2.
    unsafe fn load(p: *const u8) -> __m256i;

    /// A square's destination row at `p` from its two quarters' rows,
    /// `first` and `second` (`N * U / 2` bytes on), streamed (`stream`) or
    /// through the cache.
    ///
    /// # Safety
    /// `N * U` bytes writable at `p`, 32-byte aligned if streamed; the CPU
    /// has AVX2.
    unsafe fn store_row(p: *mut u8, first: __m256i, second: __m256i, stream: bool);
}

/// A square of two quarters a side (`N = 2 * 32 / L` units, `h = N / 2`,
/// a quarter's row `row = h * U` bytes): quarter `(a, b)` (row half,
/// column half) reads bytes `row * b..` of source rows `a * h..`
/// (`rows[i] + at`) and writes as many of destination rows `b * h..`
/// (`out[j] + to`), `row * a` on. Both quarters of a column half are
/// transposed before either is stored, so that each destination row is
/// stored whole, by [`Quarter::store_row`]: streamed, a line's two halves
/// go one after the other, so that its write-combining buffer is full at
/// once, not after the other rows' first halves; packed, a row takes two
/// stores, not four, each holding a store-buffer entry while its line is
/// read in. Measured against a quarter at a time (Intel Xeon, the AVX2
/// kernels, one thread, ratio to memcpy, alternated runs, each workload's
/// best): HPTT's 57 float64 transposes (`transpose.json`, 2 runs),
/// geomean 2.22 -> 1.61; the 28 broad workloads in packed squares (6
/// runs), 2.21 -> 2.13 (numpy `2,0,1` of 225 MiB of 3-byte units 7.3 ->
/// 6.3), 13 faster and 5 slower by more than 5%, the worst two
/// depth-to-space of 6-byte units by 16 into a stage (33 MiB, where the
/// shuffles count more than the stores), 1.09 to 1.23 the time.
///
/// # Safety
/// Those rows' bytes readable and writable (the caller's square), not
/// overlapping; as [`Quarter::store_row`] where streamed; the CPU has AVX2.
#[inline(always)]
unsafe fn quarters<Q: Quarter>(rows: &[*const u8], at: isize, out: &[*mut u8], to: isize, stream: bool) {
    let h = Q::N / 2;
    let row = (h * Q::U) as isize;
    // SAFETY: as the caller guarantees.
    unsafe {
        for b in 0..2 {
            let mut halves = [[_mm256_setzero_si256(); 8]; 2];
            for (a, half) in halves.iter_mut().enumerate() {
                let mut v = [_mm256_setzero_si256(); 8];
                for (k, v) in v.iter_mut().take(h).enumerate() {
                    *v = Q::load(rows[a * h + k].offset(at + row * b as isize));
                }
                *half = if Q::L == 4 { transpose8x4(v) } else { transpose4x8(v) };
            }
            for j in 0..h {
                Q::store_row(out[b * h + j].offset(to), halves[0][j], halves[1][j], stream);
            }
        }
    }
}

/// AVX2's full-line squares of `U`-byte units (4 or 8), `N` a side (16
/// or 8): each quarter of `N / 2` rows and columns one 32-byte vector a
/// row.
pub(in super::super) struct Halves<const U: usize, const N: usize>;

impl<const U: usize, const N: usize> Halves<U, N> {
    /// The side of a quarter: one 32-byte vector of units.
    const H: usize = 32 / U;

    /// A real check at compile time: a square is two quarters a side, a
    /// row one line.
    const WHOLE: () = assert!(matches!(U, 4 | 8) && N == 2 * Self::H && N * U == 64);
}

impl<const U: usize, const N: usize> Quarter for Halves<U, N> {
    #[inline(always)]
    unsafe fn load(p: *const u8) -> __m256i {
        // SAFETY: as the caller guarantees.
        unsafe { _mm256_loadu_si256(p.cast()) }
    }

    /// Two 32-byte stores.
    #[inline(always)]
    unsafe fn store_row(p: *mut u8, first: __m256i, second: __m256i, stream: bool) {
        // SAFETY: 64 bytes writable at `p`, 32-byte aligned if streamed
        // (caller), and so the second half, 32 bytes on.
        unsafe {
            if stream {
                _mm256_stream_si256(p.cast(), first);
                _mm256_stream_si256(p.add(32).cast(), second);
            } else {
                _mm256_storeu_si256(p.cast(), first);
                _mm256_storeu_si256(p.add(32).cast(), second);
            }
        }
    }
}

impl<const U: usize, const N: usize> Squares for Halves<U, N> {
    const U: usize = U;
    const L: usize = U;
    const N: usize = N;

    #[inline(always)]
    unsafe fn square(rows: &[*const u8], at: isize, out: &[*mut u8], to: isize, stream: bool) {
        let () = Self::WHOLE;
        // SAFETY: forwarded: rows `0..N` of `N * U` bytes at `at`, columns
        // `0..N` of as many at `to`, each quarter's rows (32 bytes) inside
        // them; streamed, every `out[j] + to` is line-aligned, so each
        // half, 32 bytes on, is 32-byte aligned, as the streaming store
        // needs; AVX2 (caller).
        unsafe { quarters::<Self>(rows, at, out, to, stream) }
    }

    /// A unit at a time, by the blocked transpose's own loop: `to` is
    /// `wide`'s byte offset of the square's first row (`r0 * U`, never
    /// negative), that loop's row `r0`.
    #[inline(always)]
    unsafe fn part(rows: &[*const u8], at: isize, out: &[*mut u8], to: isize) {
        // SAFETY: forwarded; unit `(i, j)` at `rows[i] + at + j * U` and
        // `out[j] + to + i * U`, as `units` addresses it from row `to / U`.
        unsafe { super::super::units(rows, to as usize / U, at, out, U) }
    }
}

/// AVX2's squares of packed `U`-byte units (3 or 6) in lanes of `L`
/// bytes (4 or 8), `N` a side (16 or 8): [`Halves`]' quarters, each row of
/// a quarter 24 bytes of the source (`N / 2` units), read by two 16-byte
/// loads (bytes 0-15 and 8-23) and spread to a 32-byte vector of lanes by
/// one byte shuffle ([`widen`]); each destination row's two transposed
/// quarter rows packed back to 24 bytes each and stored as its 48 bytes
/// by a 32- and a 16-byte store ([`pack_row`]). Every load and store stays
/// inside the square's rows. Never streamed.
pub(in super::super) struct Packed<const U: usize, const L: usize, const N: usize>;

impl<const U: usize, const L: usize, const N: usize> Packed<U, L, N> {
    /// The side of a quarter: one 32-byte vector of lanes.
    const H: usize = 32 / L;

    /// A real check at compile time: 3-byte units in 4-byte lanes or
    /// 6-byte ones in 8-byte lanes, a square two quarters a side, a
    /// quarter's row 24 bytes.
    const WHOLE: () = assert!(matches!((U, L), (3, 4) | (6, 8)) && N == 2 * Self::H && Self::H * U == 24);
}

impl<const U: usize, const L: usize, const N: usize> Quarter for Packed<U, L, N> {
    #[inline(always)]
    unsafe fn load(p: *const u8) -> __m256i {
        // SAFETY: forwarded.
        unsafe { widen::<U, L>(p) }
    }

    /// The row's 48 bytes by a 32- and a 16-byte store ([`pack_row`]),
    /// through the cache only (never streamed).
    #[inline(always)]
    unsafe fn store_row(p: *mut u8, first: __m256i, second: __m256i, _stream: bool) {
        // SAFETY: forwarded (48 bytes writable at `p`).
        unsafe { pack_row::<U, L>(first, second, p) }
    }
}

impl<const U: usize, const L: usize, const N: usize> Squares for Packed<U, L, N> {
    const U: usize = U;
    const L: usize = L;
    const N: usize = N;
    /// Edges as whole squares over the ones before them, rather than a
    /// unit at a time; with them, tiles of one square a side and more
    /// (`takes::long_enough`) rather than more than two. Measured (Intel
    /// Xeon, the AVX2 kernels, one thread, 8 alternated runs, each
    /// workload's best, ratio to memcpy) on the 28 broad workloads of
    /// seeds 26, 801 and 802 whose tiles these squares take, before and
    /// after: geomean 2.51 -> 2.20, 16 faster and 5 slower by more than 5%.
    /// numpy `5,1,0,4,3,2` of 3-byte units, 176 MiB (19 x 29 tiles, a
    /// unit at a time before), 6.8 -> 3.7; NCHW space-to-depth of 3-byte
    /// units by 16 (16 streams, the stream kernels' before), 2.2 -> 1.6.
    /// The worst, TF space-to-batch of 3-byte elements by 16 with padding
    /// (0.4 MiB, 25 x 16 tiles, windowed), 3.6 -> 4.1-4.4; TF NCHW
    /// depth-to-space of them by 16 (3.7 MiB, a 16-stream interleave, the
    /// stream kernels' before), 1.2 -> 1.4.
    const OVERLAPS: bool = true;
    /// Strips of 2,048 bytes of the source rows, against the streamed
    /// squares' 512: through the cache, the fewer passes over the source
    /// rows, the better, while the lines a step writes (48 bytes of each
    /// of the strip's destination rows, up to 682 of them) stay in the
    /// second-level cache. Measured (AMD EPYC Zen 1, one thread, ratio
    /// to memcpy, 3 alternated runs), the 13 broad workloads (seeds 26,
    /// 801 and 802) that these squares take: geomean 2.83 in strips of
    /// 512 bytes, 2.58 of 1,024, 2.44 of 2,048 (numpy `1,0` of 3,354 x
    /// 4,228 RGB pixels, 41 MiB, 2.15 -> 1.83).
    const STRIP: usize = 2048;
    /// Full strips in large matrices too, not `strip_cols`' 16 columns
    /// (which AVX-512's squares take from 256 KiB on). Measured on an AMD
    /// EPYC (Zen 3; one thread, ratio to memcpy, 4 alternated runs, each
    /// workload's best) on the 10 broad workloads (seeds 26, 801 and 802,
    /// all numpy transposes of 3-byte units) whose strips were narrowed:
    /// 3.64 -> 2.53, none slower (`0,2,1` of `[331, 348, 523]`, 172 MiB,
    /// 3.9 -> 2.5; `1,0` of 3,354 x 4,228, 41 MiB, 3.8 -> 2.6; `2,0,1` of
    /// `[418, 347, 543]`, 225 MiB, 6.9 -> 5.0).
    const FULL_STRIPS: bool = true;

    #[inline(always)]
    unsafe fn square(rows: &[*const u8], at: isize, out: &[*mut u8], to: isize, _stream: bool) {
        let () = Self::WHOLE;
        // SAFETY: forwarded: rows `0..N` of `N * U` (48) bytes at `at`,
        // columns `0..N` of as many at `to`, each quarter's rows (24
        // bytes) inside them; AVX2 (caller).
        unsafe { quarters::<Self>(rows, at, out, to, false) }
    }

    /// As [`Halves`]': a unit at a time (only a matrix narrower than a
    /// square: past one, the edges overlap).
    #[inline(always)]
    unsafe fn part(rows: &[*const u8], at: isize, out: &[*mut u8], to: isize) {
        // SAFETY: forwarded, as `Halves::part`.
        unsafe { super::super::units(rows, to as usize / U, at, out, U) }
    }
}

/// The 24 bytes at `p` (`24 / U` packed units) spread to lanes of `L`
/// bytes: the 128-bit halves loaded from bytes 0-15 and 8-23, the first
/// taking units from its byte 0, the second from its byte 4 (source byte
/// 12); the lanes' other bytes are zero.
///
/// # Safety
/// 24 bytes readable at `p`; the CPU has AVX2.
#[inline(always)]
unsafe fn widen<const U: usize, const L: usize>(p: *const u8) -> __m256i {
    // SAFETY: bytes 0-15 and 8-23 at `p` (caller); AVX2 (caller).
    unsafe {
        let lo = _mm_loadu_si128(p.cast());
        let hi = _mm_loadu_si128(p.add(8).cast());
        let v = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi);
        _mm256_shuffle_epi8(v, _mm256_loadu_si256(const { &spread(U, L) }.as_ptr().cast()))
    }
}

/// [`widen`]'s inverse for a square's destination row: the two quarters'
/// transposed rows `first` and `second`, their lanes' units packed to 24
/// bytes each (12 from each 128-bit half, joined by a dword permute), stored
/// as the row's 48 bytes at `p` by a 32-byte store (`first`'s 24 bytes
/// and `second`'s first 8) and a 16-byte store (`second`'s last 16).
///
/// # Safety
/// 48 bytes writable at `p`; the CPU has AVX2.
#[inline(always)]
unsafe fn pack_row<const U: usize, const L: usize>(first: __m256i, second: __m256i, p: *mut u8) {
    // SAFETY: bytes 0-31 and 32-47 at `p` (caller); AVX2 (caller).
    unsafe {
        let order = _mm256_loadu_si256(const { &gather(U, L) }.as_ptr().cast());
        // Each half's 12 packed bytes in its dwords 0-2 and 4-6.
        let (a, b) = (_mm256_shuffle_epi8(first, order), _mm256_shuffle_epi8(second, order));
        // `first`'s 24 bytes in dwords 0-5; `second`'s first 8 bytes in
        // dwords 6-7, its last 16 in dwords 0-3.
        let a = _mm256_permutevar8x32_epi32(a, _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 6, 6));
        let b = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(2, 4, 5, 6, 6, 6, 0, 1));
        _mm256_storeu_si256(p.cast(), _mm256_blend_epi32::<0b1100_0000>(a, b));
        _mm_storeu_si128(p.add(32).cast(), _mm256_castsi256_si128(b));
    }
}

/// Byte `l * i + j` of a row widened to lanes of `l` bytes is byte `u * i
/// + j` of the packed one (`j < u`; the others byte 0, whatever it holds):
/// the order [`spread`] puts each 16-byte half in.
const fn widening(u: usize, l: usize) -> [u8; 64] {
    let mut idx = [0u8; 64];
    let mut k = 0;
    while k < 64 {
        let (i, j) = (k / l, k % l);
        idx[k] = if j < u { (u * i + j) as u8 } else { 0 };
        k += 1;
    }
    idx
}

/// Byte `u * i + j` of a packed row is byte `l * i + j` of the widened
/// one (the 16 bytes past the row's 48 are not stored): [`widening`]'s
/// inverse, the order [`gather`] packs each half in.
const fn packing(u: usize, l: usize) -> [u8; 64] {
    let mut idx = [0u8; 64];
    let mut k = 0;
    while k < 48 {
        idx[k] = (l * (k / u) + k % u) as u8;
        k += 1;
    }
    idx
}

/// [`widen`]'s shuffle: in each 16-byte half, the units widened to their
/// lanes ([`widening`]: lane byte `k * L + i` takes unit byte `k *
/// U + i`) for its `16 / L` units, those of the second half 4
/// bytes on (its load begins at byte 8, its units at byte 12); the lanes'
/// other bytes zeroed (index 0x80).
const fn spread(u: usize, l: usize) -> [u8; 32] {
    let order = widening(u, l);
    let mut t = [0x80u8; 32];
    let mut x = 0;
    while x < 16 {
        if x % l < u {
            t[x] = order[x];
            t[16 + x] = order[x] + 4;
        }
        x += 1;
    }
    t
}

/// [`pack_row`]'s shuffle: in each 16-byte half, the lanes' units packed
/// ([`packing`]: unit byte `k * U + i` takes lane byte `k * L +
/// i`) for its `16 / L` units, packed into its first 12 bytes.
const fn gather(u: usize, l: usize) -> [u8; 32] {
    let order = packing(u, l);
    let mut t = [0x80u8; 32];
    let mut x = 0;
    while x < 12 {
        t[x] = order[x];
        t[16 + x] = order[x];
        x += 1;
    }
    t
}

/// The 4 x 4 transpose of 8-byte units of `v[..4]` (the rest unused):
/// unpacks of qwords in the lanes, then the lanes exchanged.
///
/// # Safety
/// The CPU has AVX2.
#[inline(always)]
unsafe fn transpose4x8(v: [__m256i; 8]) -> [__m256i; 8] {
    // SAFETY: AVX2 (caller).
    unsafe {
        let (t0, t1) = (_mm256_unpacklo_epi64(v[0], v[1]), _mm256_unpackhi_epi64(v[0], v[1]));
        let (t2, t3) = (_mm256_unpacklo_epi64(v[2], v[3]), _mm256_unpackhi_epi64(v[2], v[3]));
        let z = _mm256_setzero_si256();
        [
            _mm256_permute2x128_si256::<0x20>(t0, t2),
            _mm256_permute2x128_si256::<0x20>(t1, t3),
            _mm256_permute2x128_si256::<0x31>(t0, t2),
            _mm256_permute2x128_si256::<0x31>(t1, t3),
            z,
            z,
            z,
            z,
        ]
    }
}

/// The 8 x 8 transpose of 4-byte units of `v`: a 4 x 4 transpose in each
/// lane of rows 0-3 and of rows 4-7, then the lanes exchanged.
///
/// # Safety
/// The CPU has AVX2.
#[inline(always)]
unsafe fn transpose8x4(v: [__m256i; 8]) -> [__m256i; 8] {
    // SAFETY: AVX2 (caller).
    unsafe {
        // In each lane, rows 0-3 (4-7) of column `k` in `lo[k]` (`hi[k]`).
        let lo = transpose4_lanes([v[0], v[1], v[2], v[3]]);
        let hi = transpose4_lanes([v[4], v[5], v[6], v[7]]);
        let mut cols = [_mm256_setzero_si256(); 8];
        for k in 0..4 {
            cols[k] = _mm256_permute2x128_si256::<0x20>(lo[k], hi[k]);
            cols[4 + k] = _mm256_permute2x128_si256::<0x31>(lo[k], hi[k]);
        }
        cols
    }
}
