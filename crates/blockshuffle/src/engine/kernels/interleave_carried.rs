//! The carried interleaving kernel ([`interleave_carried`], AVX512-VBMI):
//! whole streaming tiles whose destination is one run, each stream's
//! unfinished line carried in a register.
//!
//! Layer: kernels; imports [`carried`](super::carried),
//! [`simd`](super::simd), [`any_units`](super::any_units),
//! [`lines`](super::lines), [`nest`](super::nest) and arch.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;
#[cfg(target_arch = "x86_64")]
use std::mem::MaybeUninit;

#[cfg(target_arch = "x86_64")]
use super::any_units::{carry_permutes, carry_push, iota, AnyUnits, Gather, Gathers};
#[cfg(target_arch = "x86_64")]
use super::carried::{read, Thirds};
use super::lines::Writers;
use super::nest::Rows;
#[cfg(target_arch = "x86_64")]
use super::simd::{dispatch_carried, dispatch_groups, interleave_step};
#[cfg(target_arch = "x86_64")]
use crate::engine::arch::mem::prefetch;
use crate::engine::arch::Isa;

/// The source side of [`interleave_carried`]: destination rows follow one
/// another (`inner.ds` is a row's kept bytes, `outer.ds` is `inner.count`
/// rows), so that the whole destination is one contiguous run; row `(r,
/// i)` reads its `b` streams at `src + r * outer.ss + i * inner.ss + j *
/// ss`, and the destination keeps its interleaved bytes `keep.0..keep.1`
/// (all of them, or a crop of its ends: OpenVINO's batch-to-space).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Interleaved {
    pub outer: Rows,
    pub inner: Rows,
    pub ss: isize,
    pub keep: (usize, usize),
}

/// Interleaves `b` streams of `n` units of `size` bytes into each
/// destination row (`row[x * b + j] = stream_j[x]`), for every row of
/// `c.outer` and `c.inner`, and writes the rows' kept bytes (`c.keep`)
/// as one contiguous destination run from `dst`.
///
/// The run's bytes are carried across rows in a register (AVX512-VBMI
/// byte permutes), so that every line leaves whole with one 64-byte
/// streaming store however the rows fall on lines. The line the run
/// shares with the bytes before it continues the writers' stream that
/// reaches `dst`, if one does (a run before it, in an earlier call); the
/// line it shares with the bytes after it is left to the writers, for
/// the next run to finish. Where no run joins them, those two lines take
/// ordinary (masked) stores. Measured: uint8 depth-to-space with 500-byte
/// rows 8.4x memcpy through the cache, float32 pixel_shuffle of 255-wide
/// rows 2.3x (rows the 16-byte aligned kernel cannot stream). Returns
/// whether it did the work (if not, nothing is written): it needs
/// [`interleaves_carried`].
///
/// # Safety
/// Every source unit named above readable, every destination byte writable
/// and not held by the writers, no overlap; `isa` one this CPU runs (from
/// [`Isa::detect`] or below it).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn interleave_carried(
    isa: Isa,
    size: usize,
    b: usize,
    c: Interleaved,
    n: usize,
    src: *const u8,
    dst: *mut u8,
    w: &mut Writers,
) -> bool {
    let outer_ds = c.inner.count.checked_mul(c.keep.1.wrapping_sub(c.keep.0));
    let fits = interleaves_carried(isa, size, b, n, c.keep, c.inner.ds)
        && (c.outer.count <= 1 || outer_ds.is_some_and(|o| c.outer.ds == o as isize));
    if !fits || c.outer.count == 0 || c.inner.count == 0 {
        return fits;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU has AVX512-VBMI (`isa`, detected); the rest is
    // forwarded (for other units, with their reads `H` and windows `W`).
    unsafe {
        if !matches!(size, 1 | 2 | 4 | 8) {
            let units = AnyUnits { size, b };
            let Some(step) = units.groups_step() else { return false };
            return Gathers::with(units, Gather::InterleaveGroups, |g| {
                dispatch_groups!(interleaved_groups, b, step, (g, size, step, c, n, src, dst, w));
                true
            });
        }
        dispatch_carried!(interleaved, size, b, (c, n, src, dst, w))
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (src, dst, w);
    true
}

/// Whether [`interleave_carried`] runs rows of `b` streams of `n` units
/// of `size` bytes, of which the destination keeps the interleaved bytes
/// `keep.0..keep.1`, one row every `row_ds` bytes: with AVX512-VBMI
/// (`isa`) on x86_64, 2 to 4 streams of 1- to 8-byte units (or of units
/// that [`AnyUnits::groups_step`] takes), at least 64
/// bytes per stream in a row, and rows that follow one another (`row_ds`
/// the kept bytes).
pub(crate) fn interleaves_carried(
    isa: Isa,
    size: usize,
    b: usize,
    n: usize,
    keep: (usize, usize),
    row_ds: isize,
) -> bool {
    let row = n.checked_mul(size).and_then(|r| r.checked_mul(b));
    let units = matches!(size, 1 | 2 | 4 | 8) || AnyUnits { size, b }.groups_step().is_some();
    cfg!(target_arch = "x86_64")
        && isa >= Isa::Avx512Vbmi
        && units
        && matches!(b, 2..=4)
        && n.checked_mul(size).is_some_and(|r| r >= 64)
        && row.is_some_and(|row| keep.0 < keep.1 && keep.1 <= row)
        && row_ds == (keep.1 - keep.0) as isize
}

/// The body of [`interleave_carried`], which checked its conditions, for
/// units of 1 to 8 bytes: each row's body is `B` vectors per `64 / S`
/// units of each stream, covering `64 * B` bytes of the interleaved row; a
/// row's last units (fewer than `64 / S`) come from vectors of its last
/// `64 / S` units, of which only the new bytes are pushed. Carried by
/// [`interleaved_rows`].
///
/// # Safety
/// As [`interleave_carried`], whose conditions hold; the CPU has AVX-512F,
/// AVX-512BW and AVX512-VBMI.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
unsafe fn interleaved<const S: usize, const B: usize>(
    c: Interleaved,
    n: usize,
    src: *const u8,
    dst: *mut u8,
    w: &mut Writers,
) {
    let per = 64 / S;
    let row = n * S * B;
    let thirds = Thirds::new(|k, t| {
        let q = 64 * k + t;
        let u = q / S;
        (u % 3) * 64 + (u / 3) * S + q % S
    });
    // The `B` destination vectors of one vector of each stream at `sp`.
    let at = |sp: *const u8| -> [__m512i; B] {
        // SAFETY: one vector readable at `sp + j * c.ss` for each stream `j`
        // (the caller's); register operations of this function's features.
        unsafe {
            let v: [__m512i; B] =
                std::array::from_fn(|j| _mm512_loadu_si512(sp.wrapping_offset(j as isize * c.ss).cast()));
            if B == 3 {
                let o = thirds.pick([v[0], v[1], v[2]]);
                std::array::from_fn(|k| o[k])
            } else {
                interleave_step::<__m512i, S, B>(v)
            }
        }
    };
    // SAFETY: each step reads one vector of each stream of a row, at unit
    // `k * per` (`k < n / per`) or `n - per` (`n >= per`), inside the
    // stream's `n` units; the rest is forwarded.
    unsafe {
        interleaved_rows::<B>(
            c,
            row,
            64 * B,
            src,
            dst,
            w,
            |sr, k| fetch_streams::<B>(sr, c.ss, k * 64 + n * S),
            |sr, k| at(sr.add(k * 64)),
            |sr| (at(sr.add((n - per) * S)), row - 64 * B),
        )
    }
}

/// The body of [`interleave_carried`] for units of other sizes that
/// [`AnyUnits::groups_step`] takes (3 to 63 bytes, by 2 to 4: NHWC pixels
/// of three channels, and their blocks): a step reads one vector of each
/// stream, of which it takes `step` bytes, whole units, and gathers the
/// `b * step` interleaved bytes (more than `64 * (V - 1)`, at most `64 *
/// V`) into `V` vectors by the same tables every step, held in registers
/// (2 windows, a pair of streams each; of 3 streams, the second is stream
/// 2's vector twice). The gathers it replaced
/// (`interleaved_any`) read every stream again for each destination
/// vector, and tables by the vector's phase with it.
///
/// # Safety
/// As [`interleave_carried`], whose conditions hold, for `B` streams of
/// units of `size` bytes, `step` their [`AnyUnits::groups_step`], `g`
/// their tables ([`Gather::InterleaveGroups`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[allow(clippy::too_many_arguments)]
unsafe fn interleaved_groups<const B: usize, const V: usize, const STEP: usize>(
    g: &Gathers,
    size: usize,
    step: usize,
    c: Interleaved,
    n: usize,
    src: *const u8,
    dst: *mut u8,
    w: &mut Writers,
) {
    // The step's bytes known here (the usual ones: measured, units that
    // divide 48, by 4, 0.904 -> 0.971x memcpy over 9 NHWC interleaves of
    // them with it known at run time), or at run time (0).
    let step = if STEP != 0 { STEP } else { step };
    let (len, row) = (n * size, n * size * B);
    // SAFETY: loads of the tables' 64-byte arrays.
    let idx: [[__m512i; 2]; V] =
        std::array::from_fn(|k| std::array::from_fn(|w| unsafe { _mm512_loadu_si512(g.idx[k][w].as_ptr().cast()) }));
    let take: [u64; V] = std::array::from_fn(|k| g.take[k]);
    // The destination vectors of the groups from stream byte `base` on.
    let at = |sr: *const u8, base: usize| -> [__m512i; V] {
        // The vectors past the streams' ends read only their bytes.
        let masked = base + 64 > len;
        // SAFETY: each stream's `len` bytes readable (the caller's), and
        // no byte outside them read (`read`, masked past them); register
        // operations of this function's features.
        unsafe {
            let v: [__m512i; B] =
                std::array::from_fn(|j| read(sr.wrapping_offset(j as isize * c.ss), base, (0, len), masked));
            std::array::from_fn(|k| {
                let lo = _mm512_permutex2var_epi8(v[0], idx[k][0], v[1 % B]);
                if B == 2 {
                    return lo;
                }
                let hi = _mm512_permutex2var_epi8(v[2 % B], idx[k][1], v[(B - 1) % B]);
                _mm512_mask_blend_epi8(take[k], lo, hi)
            })
        }
    };
    let chunk = B * step;
    // SAFETY: step `k < row / chunk` reads stream bytes `step * k..step *
    // (k + 1)` of each stream, inside its `len`; the last, `len -
    // step..len` (`len >= 64 >= step`); each a whole number of units. The
    // rest is forwarded.
    unsafe {
        interleaved_rows::<V>(
            c,
            row,
            chunk,
            src,
            dst,
            w,
            |sr, k| fetch_streams::<B>(sr, c.ss, k * step + 2 * len),
            |sr, k| at(sr, k * step),
            |sr| (at(sr, len - step), row - chunk),
        )
    }
}

/// Fetches a line of each of `B` streams `ss` apart from `sr`, `at` bytes
/// into them. The callers fetch each stream a row or two of its own ahead,
/// not `PREFETCH_AHEAD`: the streams of OpenVINO's batch-to-space are
/// batches a power of two apart, 16 of them by 4x4, whose lines share sets
/// of the caches, and lines fetched far ahead are evicted before they are
/// read (measured, 2 runs alternating, 24 of those cropped, by 3 and 4, and
/// 24 pixel_shuffle and DCR by 4: two rows ahead, geomean 0.87 -> 0.83x
/// memcpy; the worst, uint8 of 16 channels by 4, 1.63 -> 1.11). One row
/// ahead, for the units of [`interleaved`]: 33 of those (by 2 to 4, and
/// pixel_shuffle and DCR by 4), 4 runs alternating, median per workload,
/// geomean 0.89 -> 0.84, above 1.10 1 -> 0 (another 27, 3 runs: 1.06
/// -> 0.98, uint8 of 16 channels by 4 1.26 -> 1.03); 49 other interleaves
/// (NHWC batch-to-space, space-to-depth, pixel_shuffle and DCR by 2 and 3)
/// alike, 0.808 -> 0.807. [`interleaved_groups`] keeps two (one measured
/// 0.821 on those 49 with the gathers before it).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn fetch_streams<const B: usize>(sr: *const u8, ss: isize, at: usize) {
    for j in 0..B {
        prefetch(sr.wrapping_offset(j as isize * ss).wrapping_add(at), 64);
    }
}

/// The row loop of [`interleaved`] and [`interleaved_groups`]: one
/// destination run from `dst`, `m` bytes past a line boundary (`base`);
/// `pos`, the next byte's offset from `base`, advances by every push (of
/// `len` bytes from `off` of a vector, `off + len <= 64`), whose line
/// leaves when it is whole. The run's bytes begin at `start`: `dst`, or before it, where the writers' stream that it
/// continues began (whose unfinished line it takes as its first `m`
/// bytes). Each row of `row` bytes from its source at `sr` gets `chunk`
/// bytes in `V` vectors per `step(sr, k)` (row bytes `chunk * k..`, the
/// last vector whole if `chunk` is `64 * V`, its first `chunk % 64` bytes
/// otherwise), for `k < row / chunk`, the middle ones after `fetch(sr,
/// k)`, and its end from `last(sr)`: the vectors of the chunk that ends
/// the row, and its row byte. Of a row's bytes, only those in `c.keep` are
/// pushed: the vectors inside it whole (but a short last one), with one
/// set of permutes a row (or a step, with a short last vector), those at
/// its ends in part.
///
/// # Safety
/// As [`interleave_carried`], whose conditions hold, with `step` and
/// `last` reading inside the streams; the caller is compiled for AVX-512F,
/// AVX-512BW and AVX512-VBMI.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[inline]
#[allow(clippy::too_many_arguments)]
unsafe fn interleaved_rows<const V: usize>(
    c: Interleaved,
    row: usize,
    chunk: usize,
    src: *const u8,
    dst: *mut u8,
    w: &mut Writers,
    fetch: impl Fn(*const u8, usize),
    step: impl Fn(*const u8, usize) -> [__m512i; V],
    last: impl Fn(*const u8) -> ([__m512i; V], usize),
) {
    debug_assert!(chunk > 64 * (V - 1) && chunk <= 64 * V);
    let whole = row / chunk;
    let (lo, hi) = c.keep;
    // The steps wholly inside the kept bytes: `first..end`.
    let first = lo.div_ceil(chunk).min(whole);
    let end = (hi / chunk).clamp(first, whole);
    let m = dst as usize % 64;
    let base = dst.wrapping_sub(m);
    let iota = iota();
    let mut line = [MaybeUninit::<u8>::uninit(); 64];
    let start = w.take(dst, &mut line);
    // Lanes of the line at offset `at` (a multiple of 64) from `base` that
    // are the run's: from `start` on.
    let own_from = start as isize - base as isize;
    // SAFETY: the lanes below `m` of `line` are the held bytes `take`
    // gave (masked-off lanes are not accessed); none if `start == dst`.
    let mut held = unsafe {
        let held = if start == dst || m == 0 { 0 } else { u64::MAX >> (64 - m) };
        _mm512_maskz_loadu_epi8(held, line.as_ptr().cast())
    };
    let mut pos = m;
    // SAFETY: loads: the caller's `step` and `last`. Stores: the run's
    // bytes sit at `own_from..m + total` from `base` (`total`, the kept
    // bytes of all rows); a line that leaves whole lies inside them
    // (aligned, streaming); the line at `start`, if it begins before it,
    // is stored masked to its bytes from `start` on, so no byte outside
    // the run is written (masked-off bytes are not accessed). The last
    // partial line goes to the writers.
    unsafe {
        let push = |held: &mut __m512i, pos: &mut usize, new: __m512i, p, len: usize| {
            let at = (*pos / 64 * 64) as isize;
            let own = if own_from > at { u64::MAX << (own_from - at) } else { u64::MAX };
            let emit = *pos % 64 + len >= 64;
            let at = if emit { Some((base.wrapping_offset(at), own)) } else { None };
            carry_push(held, new, p, at);
            *pos += len;
        };
        // The vectors of a step at row byte `a`, from row byte `from` on,
        // each in part: the bytes inside `lo..hi` (and the step's).
        let part = |held: &mut __m512i, pos: &mut usize, v: [__m512i; V], a: usize, from: usize| {
            for (k, v) in v.into_iter().enumerate() {
                let (va, vb) = ((a + 64 * k).max(from).max(lo), (a + 64 * k + 64).min(hi).min(a + chunk));
                if va < vb {
                    let p = carry_permutes(iota, *pos % 64, va - a - 64 * k);
                    push(held, pos, v, p, vb - va);
                }
            }
        };
        for r in 0..c.outer.count {
            for i in 0..c.inner.count {
                let sr = src.wrapping_offset(r as isize * c.outer.ss + i as isize * c.inner.ss);
                for k in 0..first {
                    part(&mut held, &mut pos, step(sr, k), k * chunk, 0);
                }
                // Whole vectors keep the line offset: one set of permutes
                // a row, or a step if its last vector is not whole.
                let mut p = carry_permutes(iota, pos % 64, 0);
                for k in first..end {
                    fetch(sr, k);
                    if !chunk.is_multiple_of(64) {
                        p = carry_permutes(iota, pos % 64, 0);
                    }
                    for (i, v) in step(sr, k).into_iter().enumerate() {
                        let len = if i + 1 < V { 64 } else { chunk - 64 * (V - 1) };
                        push(&mut held, &mut pos, v, p, len);
                    }
                }
                for k in end..whole {
                    part(&mut held, &mut pos, step(sr, k), k * chunk, 0);
                }
                if whole * chunk < row {
                    let (v, a) = last(sr);
                    part(&mut held, &mut pos, v, a, whole * chunk);
                }
            }
        }
        _mm512_storeu_si512(line.as_mut_ptr().cast(), held);
        w.hold(base.wrapping_add(pos), start, &line);
    }
}
