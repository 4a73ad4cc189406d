//! Deinterleaves of bytes by the register transposes, without masks
//! (SSE2 and AVX2): one contiguous run of groups of `b` bytes into `b`
//! streams, for the deinterleaves no kernel of their own takes on those
//! machines (5 streams and more: NCHW space-to-depth, pixel unshuffle,
//! space-to-batch of bytes by blocks of 5 and more).
//!
//! The run goes in squares of 16 groups: each group read as one vector
//! from its start (its bytes, and the next groups' where the run goes on),
//! transposed, and each stream's 16 bytes of them written as one vector; a
//! group of more than 16 bytes goes in columns of 16. At the run's end,
//! the reads and writes are exactly the bytes' (two overlapping plain
//! moves each: `x86::load_part`, `x86::store_part`).
//!
//! The other way, interleaving 5 to 16 streams in such squares (each
//! stream's 16 bytes read as one vector, each group written as one from
//! its start) measured slower than the tile's own kernels: 1.2 times
//! their time on the 18 broad workloads (seed 26) whose tiles interleave
//! bytes, up to 3.4 on short rows (a square's fixed cost over 16 groups
//! of 5 bytes), 2 on TF NCHW depth-to-space of uint8 by 5 (78-byte
//! rows).
//!
//! Layer: kernels; imports [`nest`](super::super::nest) and arch.

use super::steps;
use crate::engine::arch::Isa;
use crate::engine::kernels::nest::Rows;

/// The side of a square: 16 bytes.
const SIDE: usize = 16;

/// The fewest streams [`deinterleave`] takes: fewer have the tile's own
/// kernels.
const MIN_STREAMS: usize = 5;

/// The most streams [`deinterleave`] takes: two squares a group.
const MAX_STREAMS: usize = 32;

/// The fewest groups a row (or rows that continue one another)
/// [`deinterleave`] takes: half a square. A square costs the same for
/// fewer, and the tile's own kernels measured faster on rows of 2 to 7
/// groups (pixel unshuffle of uint8 by 2 x 5, 2 groups of 10: 9 times the
/// time; ONNX space-to-depth of uint8 by 7, 7 groups: 1.2).
const MIN_GROUPS: usize = SIDE / 2;

/// Whether [`deinterleave`] moves rows of `n` groups of `b` units of
/// `unit` bytes on `isa`: x86_64 from SSE2 on without AVX-512's masks
/// (which have the masked squares and the byte permutes), bytes,
/// [`MIN_STREAMS`] to [`MAX_STREAMS`] streams, rows of [`MIN_GROUPS`]
/// groups or more. (2-byte units in squares of 8 measured no
/// faster than the tile's own kernels: 5 to 8 streams 1.14 times their
/// time, 9 to 16 1.02, on the broad workloads of seed 26.)
pub(crate) fn takes(n: usize, b: usize, unit: usize, isa: Isa) -> bool {
    super::plain_edges(isa) && unit == 1 && (MIN_STREAMS..=MAX_STREAMS).contains(&b) && n >= MIN_GROUPS
}

/// Moves, for each of `rows`, one contiguous run of `n` groups of `b`
/// units of `unit` bytes at `src` into `b` streams of `n` units (stream
/// `j` at `j * ds` bytes from the row's destination): unit `x * b + j` to
/// unit `x` of stream `j`. Rows whose runs and streams both continue the
/// last's go as one run (whose groups [`takes`] counts). `false`, having
/// done nothing, unless it takes them.
///
/// # Safety
/// Every source unit of every row readable, every destination unit
/// writable, without overlap; `isa` one this CPU runs.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn deinterleave(
    rows: Rows,
    n: usize,
    b: usize,
    unit: usize,
    src: *const u8,
    dst: *mut u8,
    ds: isize,
    isa: Isa,
) -> bool {
    let (rows, n) = if rows.count > 1 && rows.ss == (n * b * unit) as isize && rows.ds == (n * unit) as isize {
        (Rows::ONE, rows.count * n)
    } else {
        (rows, n)
    };
    if !takes(n, b, unit, isa) {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: forwarded; AVX2 where `isa` has it (one this CPU runs).
    unsafe {
        if isa >= Isa::Avx2 {
            x86::deinterleave_avx2(rows, n, b, src, dst, ds);
        } else {
            deinterleave_squares::<false>(rows, n, b, src, dst, ds);
        }
    }
    true
}

/// [`deinterleave`]'s rows of bytes, in squares of 16 groups: byte `j`
/// (from `at`) of each of the `from.len()` groups at `from` to byte `i` of
/// stream `j` of the `to.len()` at `to`, reading a group's whole vector
/// where it ends by the run's end: AVX2's squares (`x86::square`) or
/// SSE2's (`x86::square_edge`).
///
/// # Safety
/// As [`deinterleave`]; with `AVX2`, the CPU has AVX2 (and the caller is
/// compiled for it).
#[inline(always)]
unsafe fn deinterleave_squares<const AVX2: bool>(
    rows: Rows,
    n: usize,
    b: usize,
    src: *const u8,
    dst: *mut u8,
    ds: isize,
) {
    for r in 0..rows.count {
        let (s, d) = rows.at(r, src, dst);
        // The run's end: a square reads a whole vector from a group's
        // start up to it.
        let end = (s as usize).wrapping_add(n * b);
        for x in steps(0, n, SIDE) {
            let nr = SIDE.min(n - x);
            let mut from = [std::ptr::null::<u8>(); SIDE];
            for (i, p) in from[..nr].iter_mut().enumerate() {
                *p = s.wrapping_add((x + i) * b);
            }
            for c in steps(0, b, SIDE) {
                let nc = SIDE.min(b - c);
                let mut to = [std::ptr::null_mut::<u8>(); SIDE];
                for (j, p) in to[..nc].iter_mut().enumerate() {
                    *p = d.wrapping_offset((c + j) as isize * ds).wrapping_add(x);
                }
                let (from, to, at) = (&from[..nr], &to[..nc], c as isize);
                // SAFETY: the square's `nr` groups' bytes `c..c + nc`, and
                // the streams' `nr` bytes from `x` (caller); whole vectors
                // read only up to the run's end.
                #[cfg(target_arch = "x86_64")]
                unsafe {
                    if AVX2 {
                        x86::square(from, at, to, end)
                    } else {
                        super::x86::square_edge(1, from, at, to, 0, end)
                    }
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::super::x86::{load_upto, store_part};
    use super::{deinterleave_squares, Rows};

    /// [`super::deinterleave_squares`] by AVX2's squares ([`square`]).
    ///
    /// # Safety
    /// As [`super::deinterleave`]; the CPU has AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn deinterleave_avx2(rows: Rows, n: usize, b: usize, src: *const u8, dst: *mut u8, ds: isize) {
        // SAFETY: forwarded; the CPU has AVX2 (caller).
        unsafe { deinterleave_squares::<true>(rows, n, b, src, dst, ds) }
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
    /// `to.len()` bytes ([`load_upto`]), and a column's `from.len()` bytes
    /// written ([`store_part`]: one vector for 16).
    ///
    /// # Safety
    /// Those bytes readable and writable; the CPU has AVX2.
    #[inline(always)]
    pub(super) unsafe fn square(from: &[*const u8], at: isize, to: &[*mut u8], reads: usize) {
        const H: usize = 8;
        let (nr, nc) = (from.len(), to.len());
        // SAFETY: the rows' `nc` bytes, or whole vectors that end by
        // `reads`; the columns' `nr` (caller); the CPU has AVX2 (caller).
        unsafe {
            let mut v = [_mm256_setzero_si256(); H];
            for (i, v) in v.iter_mut().enumerate() {
                // Rows `i` and `i + H`, those past the last zero (no
                // closure, whose intrinsics the compiler may leave as
                // calls: `.ci/inlined`).
                let mut rows = [_mm_setzero_si128(); 2];
                for (row, r) in rows.iter_mut().zip([i, i + H]) {
                    if r < nr {
                        *row = load_upto(from[r].wrapping_offset(at), nc, reads);
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
                        store_part(to[c], nr, half);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the kernel on 3 rows of `n` groups (rows apart by more than
    /// they span on both sides, or, if `continued`, each continuing the
    /// last), the source exactly its rows' bytes, and compares the whole
    /// destination, a vector past its end too, with the oracle's.
    fn check(b: usize, unit: usize, n: usize, continued: bool, isa: Isa) {
        let (group, stream) = (b * unit, n * unit);
        let (ss, ds, streams) = if continued {
            (n * group, stream, 3 * stream + 5)
        } else {
            (n * group + 7, b * (stream + 3) + 5, stream + 3)
        };
        let rows = Rows { count: 3, ss: ss as isize, ds: ds as isize };
        let src_len = 2 * ss + n * group;
        let dst_len = 2 * ds + (b - 1) * streams + stream;
        let src: Vec<u8> = (0..src_len).map(|i| (i * 7 + i / 251) as u8).collect();
        let mut got = vec![0xA5u8; dst_len + 16];
        // SAFETY: the rows lie inside the buffers (as built).
        let ran = unsafe { deinterleave(rows, n, b, unit, src.as_ptr(), got.as_mut_ptr(), streams as isize, isa) };
        let groups = if continued { 3 * n } else { n };
        assert_eq!(ran, takes(groups, b, unit, isa), "{b} streams of {n} {unit}-byte units, {isa:?}");
        let mut want = vec![0xA5u8; dst_len + 16];
        for r in 0..if ran { 3 } else { 0 } {
            for x in 0..n {
                for j in 0..b {
                    let (a, o) = (r * ss + (x * b + j) * unit, r * ds + j * streams + x * unit);
                    want[o..o + unit].copy_from_slice(&src[a..a + unit]);
                }
            }
        }
        assert!(got == want, "{b} streams of {n} {unit}-byte units, continued {continued}, {isa:?}");
    }

    #[test]
    fn every_stream_count_and_length_matches_the_oracle() {
        for isa in Isa::every_runnable() {
            for unit in 1..=3 {
                for b in 1..=MAX_STREAMS + 1 {
                    // Around a square's side, and the run's end, where the
                    // last squares read exactly their units.
                    for n in [0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 50] {
                        for continued in [false, true] {
                            check(b, unit, n, continued, isa);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn takes_five_to_32_streams_of_bytes_without_masks_in_rows_of_half_a_square() {
        assert!(!takes(100, 8, 1, Isa::Portable));
        assert!(!takes(100, 4, 1, Isa::Sse2) && !takes(100, 33, 1, Isa::Sse2) && !takes(100, 8, 4, Isa::Sse2));
        assert!(!takes(7, 8, 1, Isa::Sse2) && !takes(100, 8, 2, Isa::Avx2));
        if cfg!(target_arch = "x86_64") {
            assert!(takes(8, 5, 1, Isa::Sse2) && takes(100, 32, 1, Isa::Sse2) && takes(8, 16, 1, Isa::Avx2));
        }
    }
}
