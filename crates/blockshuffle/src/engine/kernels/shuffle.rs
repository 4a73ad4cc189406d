//! Byte-shuffle kernels for units of 3, 6 and 12 bytes: the three channels
//! of an NHWC image in uint8, float16 or float32, which no vector kernel of
//! [`simd`](super::simd) moves (its units are powers of two); and for
//! bytes in 5 to 8 streams and 2- and 4-byte units in 5 to 7, which no
//! other vector kernel without AVX512-VBMI interleaves (NCHW depth-to-space
//! and pixel shuffles by 5 to 8, batch-to-space by 5 to 7).
//!
//! Two shapes of run, both building a contiguous destination:
//!
//! - a *gather* of every `k`-th unit of one source row (`k` of 2 to 4: a
//!   block position of NHWC space-to-batch, space-to-depth's inverse), for
//!   units of 3 bytes (see [`gathers`]);
//! - an *interleave* of `b` source rows (2 to 4), one unit of each in turn
//!   (NHWC batch-to-space and space-to-depth), of 5 to 8 rows of bytes
//!   and of 5 to 7 rows of 2- and 4-byte units (see
//!   [`interleaves_streams`]).
//!
//! Either way each 16-byte destination vector is the OR of a few 16-byte
//! source loads, each byte-shuffled (`pshufb`) into place. The pattern of
//! loads and shuffles repeats after a *period* of a few vectors, a whole
//! number of units; [`Pattern`] computes it at compile time, for each unit,
//! shape and `k` or `b`, so each kernel is a straight run of loads,
//! shuffles and stores with constant masks. Every load lies inside the
//! source bytes of its own period, so a period may start at any unit: a row
//! whose length is not a whole number of periods ends with one period that
//! overlaps the last (storing the same values again). Interleaves through
//! the cache take their vectors two at a time (see `paired_period`): one
//! 32-byte shuffle, OR and store for two vectors.
//!
//! An interleave into a 16-byte aligned destination of whole vectors may
//! also store with streaming stores: a large output's tiles of such rows
//! stream (`plan::rules::streams_shuffled_rows`); other tiles of these units store
//! through the cache.
//!
//! The kernels need SSSE3's byte shuffle; they run in plans of
//! [`Isa::Avx2`] and wider (AVX-512 plans use them too). Below that, and
//! for rows shorter than a period, the portable kernels of
//! [`copy`](super::copy) run instead.
//!
//! Layer: kernels; imports arch only.

use crate::engine::arch::Isa;

/// The most vectors a period has (an interleave of 3 rows: 144 bytes,
/// doubled for pairs of vectors: 288).
const MAX_VECTORS: usize = 18;
/// The most loads a vector takes (an interleave of 8 rows of bytes: one
/// of each).
const MAX_LOADS: usize = 8;
/// The most rows an interleave takes.
const MAX_ROWS: usize = 8;

/// Where each destination byte of a period comes from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Every `k`-th unit of one row: destination unit `m` is source unit
    /// `m * k`.
    Gather,
    /// `b` rows in turn: destination unit `m` is unit `m / b` of row `m % b`.
    Interleave,
}

/// The loads and shuffles of one period, for units of `unit` bytes.
#[derive(Clone, Copy)]
struct Pattern {
    /// Whether the shape fits in [`MAX_VECTORS`], [`MAX_LOADS`] and
    /// [`MAX_ROWS`].
    ok: bool,
    /// Destination vectors a period stores.
    vectors: usize,
    /// Units of each source row a period takes.
    units: usize,
    /// Loads of each vector.
    loads: [usize; MAX_VECTORS],
    /// Load `q` of vector `v`: its row, and its byte offset from the row's
    /// first byte in the period.
    at: [[(usize, usize); MAX_LOADS]; MAX_VECTORS],
    /// The shuffle of load `q` of vector `v` (`-128`: a byte from another
    /// load).
    masks: [[[i8; 16]; MAX_LOADS]; MAX_VECTORS],
}

const fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The bytes of each source row that a period of `bytes` destination
/// bytes reads, from its first unit's first byte to its last unit's last.
const fn span(shape: Shape, unit: usize, n: usize, bytes: usize) -> usize {
    match shape {
        Shape::Gather => (bytes / unit - 1) * n * unit + unit,
        Shape::Interleave => bytes / (unit * n) * unit,
    }
}

/// Destination byte `o` of a period: its source row and its offset from
/// the row's first byte in the period.
const fn source(shape: Shape, unit: usize, n: usize, o: usize) -> (usize, usize) {
    let (m, e) = (o / unit, o % unit);
    match shape {
        Shape::Gather => (0, m * n * unit + e),
        Shape::Interleave => (m % n, m / n * unit + e),
    }
}

/// The destination bytes of a period of `shape` (see [`Pattern`]): the
/// destination repeats every `rows` units (1 for a gather, `n` for an
/// interleave); a period is the first whole number of vectors after that,
/// doubled until every row's bytes in it hold a whole load.
const fn period_bytes(shape: Shape, unit: usize, n: usize) -> usize {
    let group = match shape {
        Shape::Gather => unit,
        Shape::Interleave => unit * n,
    };
    let mut bytes = group / gcd(group, 16) * 16;
    while span(shape, unit, n, bytes) < 16 {
        bytes *= 2;
    }
    bytes
}

impl Pattern {
    /// The pattern of `shape` for units of `unit` bytes and `n` (`k` or
    /// `b`). Not [`ok`](Pattern::ok) if it needs more vectors or loads than
    /// the kernels hold.
    const fn new(shape: Shape, unit: usize, n: usize) -> Pattern {
        Pattern::with_parity(shape, unit, n, false)
    }

    /// As [`Pattern::new`], over twice the period if that has an odd
    /// number of vectors: a whole number of pairs of vectors, which the
    /// 32-byte kernel stores together.
    const fn paired(shape: Shape, unit: usize, n: usize) -> Pattern {
        Pattern::with_parity(shape, unit, n, true)
    }

    const fn with_parity(shape: Shape, unit: usize, n: usize, even: bool) -> Pattern {
        let mut p = Pattern {
            ok: false,
            vectors: 0,
            units: 0,
            loads: [0; MAX_VECTORS],
            at: [[(0, 0); MAX_LOADS]; MAX_VECTORS],
            masks: [[[-128; 16]; MAX_LOADS]; MAX_VECTORS],
        };
        let rows = match shape {
            Shape::Gather => 1,
            Shape::Interleave => n,
        };
        if rows > MAX_ROWS {
            return p;
        }
        let group = unit * rows;
        let mut bytes = period_bytes(shape, unit, n);
        if even && (bytes / 16) % 2 == 1 {
            bytes *= 2;
        }
        if bytes / 16 > MAX_VECTORS {
            return p;
        }
        p.vectors = bytes / 16;
        p.units = bytes / group;
        let span = span(shape, unit, n, bytes);
        let mut v = 0;
        while v < p.vectors {
            // Each row's bytes in this vector: `[first, end)`.
            let mut first = [usize::MAX; MAX_ROWS];
            let mut end = [0; MAX_ROWS];
            let mut t = 0;
            while t < 16 {
                let (r, off) = source(shape, unit, n, v * 16 + t);
                if off < first[r] {
                    first[r] = off;
                }
                if off + 1 > end[r] {
                    end[r] = off + 1;
                }
                t += 1;
            }
            // The loads: whole 16-byte pieces from each row's first byte,
            // the last moved back to end inside the period's bytes.
            let mut k = 0;
            let mut r = 0;
            while r < rows {
                if first[r] != usize::MAX {
                    let mut at = first[r];
                    while at < end[r] {
                        if k == MAX_LOADS {
                            return p;
                        }
                        let put = if at + 16 <= span { at } else { span - 16 };
                        p.at[v][k] = (r, put);
                        // The bytes this load gives (the first load that has each).
                        let mut t = 0;
                        while t < 16 {
                            let (rt, off) = source(shape, unit, n, v * 16 + t);
                            if rt == r && off >= at && off < at + 16 {
                                p.masks[v][k][t] = (off - put) as i8;
                            }
                            t += 1;
                        }
                        k += 1;
                        at += 16;
                    }
                }
                r += 1;
            }
            p.loads[v] = k;
            v += 1;
        }
        p.ok = true;
        p
    }
}

/// Whether [`gather`] has a kernel for units of `unit` bytes `ss` apart
/// that `isa` runs (for rows of at least a period): units of 3 bytes, 2 to
/// 4 units apart. Units of 6 and 12 bytes take one load and one store each
/// already (`copy::widens`), which measured faster than a shuffle's
/// three loads for each 16 bytes (NHWC space-to-batch with padding of
/// three float32 channels 1.2 -> 1.5x memcpy, of float16 1.1 -> 1.2x).
#[inline]
pub(crate) fn gathers(isa: Isa, unit: usize, ss: isize) -> bool {
    // No division: a row of a few hundred bytes pays for each.
    cfg!(target_arch = "x86_64") && isa >= Isa::Avx2 && unit == 3 && matches!(ss, 6 | 9 | 12)
}

/// Gathers `n` units of `unit` bytes, unit `i` from `src + i*ss`, into the
/// contiguous destination at `dst`, if a shuffle kernel has this shape
/// ([`gathers`], `n` at least a period) and `isa` runs it; `false`, having
/// done nothing, if not.
///
/// # Safety
/// As [`copy_run`](super::copy::copy_run) with `ds == unit`; `isa` one
/// this CPU runs.
#[inline]
pub(crate) unsafe fn gather(isa: Isa, n: usize, src: *const u8, ss: isize, dst: *mut u8, unit: usize) -> bool {
    // SAFETY: forwarded; the kernel needs `isa`, one this CPU runs.
    unsafe { gather_kernel(isa, unit, ss).is_some_and(|kernel| kernel(n, src, ss, dst)) }
}

/// A gather kernel: `n` units from `src`, `ss` apart, into the contiguous
/// destination at `dst`; `false`, having done nothing, for a row shorter
/// than a period.
pub(crate) type GatherKernel = unsafe fn(n: usize, src: *const u8, ss: isize, dst: *mut u8) -> bool;

/// The kernel [`gather`] runs for units of `unit` bytes `ss` apart, if
/// [`gathers`]: chosen once for many rows of one shape, which then each
/// pay one call rather than the choice. Calling it needs `isa`: a kernel
/// of [`Isa::Avx2`] or wider.
#[inline]
pub(crate) fn gather_kernel(isa: Isa, unit: usize, ss: isize) -> Option<GatherKernel> {
    if !gathers(isa, unit, ss) {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    {
        let kernel: GatherKernel = match ss {
            6 => x86::run::<true, 3, 2, false>,
            9 => x86::run::<true, 3, 3, false>,
            _ => x86::run::<true, 3, 4, false>,
        };
        Some(kernel)
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

/// Whether [`interleave`] has a kernel for `b` streams of units of `unit`
/// bytes that `isa` runs (for rows of at least a period), which streams
/// too: 2 to 4 streams of 3-, 6- and 12-byte units.
#[inline]
pub(crate) fn interleaves(isa: Isa, unit: usize, b: usize) -> bool {
    cfg!(target_arch = "x86_64") && isa >= Isa::Avx2 && matches!((unit, b), (3 | 6 | 12, 2..=4))
}

/// The units of each row that [`interleave`]'s kernel for `b` streams of
/// `unit`-byte units ([`interleaves`]) moves a period: its shortest row.
/// Rows of fewer go by the portable kernels.
#[inline]
pub(crate) const fn interleave_period(unit: usize, b: usize) -> usize {
    period_bytes(Shape::Interleave, unit, b) / (unit * b)
}

/// Whether [`interleave`] takes `b` streams of `n` units of `unit` bytes
/// on `isa` in whole vectors of the destination, each the OR of one
/// shuffled load of each stream it holds units of, a period
/// [`STREAM_PERIOD`] bytes of each stream: bytes in 5 to 8 streams of a
/// period or more, and units of 2 and 4 bytes in 5 to 7 streams (8 and
/// more go in the transpose's squares) of two periods or more. Through
/// the cache (streamed, such tiles go through a stage: `tile::copy_tile`),
/// where the byte permutes do not run (AVX512-VBMI: `permute`, which take
/// such interleaves first). The row's length is checked here, before the
/// call: tiles of shorter rows are small, and would pay for it; and a
/// row's last, partial period is a whole one that ends the row, moving
/// again the units before it: rows of 9 and 12 units of 2 bytes (one
/// period and a part) measured slower so than the tile's own kernels.
///
/// Measured against the tile's own kernels, which zip the streams a unit
/// at a time (one thread, each workload's minimum of 4 alternated runs,
/// ratio to memcpy), on the broad workloads that reach it:
/// - bytes: seed 26, 10 of them, geomean 5.68 -> 2.50 (TF NCHW
///   depth-to-space of uint8 by 5, 0.6 MiB, 7.6 -> 2.5; TF batch-to-space
///   of uint8 by 5, 55 MiB, 3.3 -> 1.2); held out, seeds 801 and 802, 9,
///   4.85 -> 2.80.
/// - 2- and 4-byte units: seeds 26, 801 and 802, 39 of them, 0.83 of the
///   time (seed 26's 17: 0.83; held out, 801's 9: 0.92, 802's 13: 0.77).
///   2-byte units (5 workloads) 0.67, none slower (TF batch-to-space of
///   float16 by 6, 28 MiB, 1.48 -> 0.92x memcpy); 4-byte units (34) 0.86,
///   in 5 streams 0.96, 6 streams 0.74, 7 streams 0.88, two of them
///   slower in every run: OpenVINO batch-to-space of float32 by 1 x 7 x 5
///   x 7, cropped, 169 MiB, 1.71 -> 2.71, and TF NCHW_VECT_C
///   depth-to-space by 5, 8.7 MiB, 1.36 -> 1.89 (a 4-byte unit takes a
///   load, a shuffle and an OR, where a zip takes a load and a store).
#[inline]
pub(crate) fn interleaves_streams(isa: Isa, unit: usize, b: usize, n: usize) -> bool {
    let periods = match (unit, b) {
        (1, 5..=8) => 1,
        (2 | 4, 5..=7) => 2,
        _ => return false,
    };
    cfg!(target_arch = "x86_64") && isa >= Isa::Avx2 && !isa.runs_vbmi() && n * unit >= periods * STREAM_PERIOD
}

/// The bytes of each stream in a period of [`interleaves_streams`]'
/// kernels: 16 bytes, 16 or 8 or 4 units, whole vectors.
const STREAM_PERIOD: usize = 16;

/// Interleaves `b` streams of `n` contiguous units of `unit` bytes, stream
/// `y` at `src + y*ss`, into the contiguous destination at `dst` (unit
/// `x` of stream `y` to `dst + (x*b + y)*unit`), if a shuffle kernel has
/// this shape ([`interleaves`], [`interleaves_streams`]; `n` at least a
/// period) and `isa` runs it; with
/// streaming stores (`nt`), also only into a 16-byte aligned destination
/// of whole vectors. `false`, having done nothing, if not.
///
/// # Safety
/// Every source unit readable, every destination unit writable, without
/// overlap; `isa` one this CPU runs.
#[inline]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn interleave(
    isa: Isa,
    b: usize,
    n: usize,
    src: *const u8,
    ss: isize,
    dst: *mut u8,
    unit: usize,
    nt: bool,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if interleaves(isa, unit, b) || interleaves_streams(isa, unit, b, n) {
        // SAFETY: forwarded; AVX2 (the plan's `isa`).
        unsafe {
            let run = if nt { x86::interleave::<true> } else { x86::interleave::<false> };
            return run(unit, b, n, src, ss, dst);
        }
    }
    let _ = (isa, b, n, src, ss, dst, unit, nt);
    false
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m128i, __m256i, _mm256_loadu2_m128i, _mm256_loadu_si256, _mm256_or_si256, _mm256_setzero_si256,
        _mm256_shuffle_epi8, _mm256_storeu_si256, _mm_loadu_si128, _mm_or_si128, _mm_setzero_si128, _mm_shuffle_epi8,
        _mm_storeu_si128, _mm_stream_si128,
    };

    use super::{Pattern, Shape, MAX_LOADS, MAX_VECTORS};

    /// The interleave of `b` rows of units of `unit` bytes, if there is
    /// one: `false` if not.
    ///
    /// # Safety
    /// As [`run`].
    #[inline]
    pub(super) unsafe fn interleave<const NT: bool>(
        unit: usize,
        b: usize,
        n: usize,
        src: *const u8,
        ss: isize,
        dst: *mut u8,
    ) -> bool {
        // SAFETY: forwarded.
        unsafe {
            match (unit, b) {
                (3, 2) => run::<false, 3, 2, NT>(n, src, ss, dst),
                (3, 3) => run::<false, 3, 3, NT>(n, src, ss, dst),
                (3, 4) => run::<false, 3, 4, NT>(n, src, ss, dst),
                (6, 2) => run::<false, 6, 2, NT>(n, src, ss, dst),
                (6, 3) => run::<false, 6, 3, NT>(n, src, ss, dst),
                (6, 4) => run::<false, 6, 4, NT>(n, src, ss, dst),
                (12, 2) => run::<false, 12, 2, NT>(n, src, ss, dst),
                (12, 3) => run::<false, 12, 3, NT>(n, src, ss, dst),
                (12, 4) => run::<false, 12, 4, NT>(n, src, ss, dst),
                (1, 5) => run::<false, 1, 5, NT>(n, src, ss, dst),
                (1, 6) => run::<false, 1, 6, NT>(n, src, ss, dst),
                (1, 7) => run::<false, 1, 7, NT>(n, src, ss, dst),
                (1, 8) => run::<false, 1, 8, NT>(n, src, ss, dst),
                (2, 5) => run::<false, 2, 5, NT>(n, src, ss, dst),
                (2, 6) => run::<false, 2, 6, NT>(n, src, ss, dst),
                (2, 7) => run::<false, 2, 7, NT>(n, src, ss, dst),
                (4, 5) => run::<false, 4, 5, NT>(n, src, ss, dst),
                (4, 6) => run::<false, 4, 6, NT>(n, src, ss, dst),
                (4, 7) => run::<false, 4, 7, NT>(n, src, ss, dst),
                _ => false,
            }
        }
    }

    /// The pattern of one kernel, a constant of its type.
    struct Kernel<const GATHER: bool, const U: usize, const N: usize, const NT: bool>;

    /// The 32-byte shuffles of a paired pattern: pair `v` (vectors `2v`
    /// and `2v + 1`), load `q`, the two vectors' masks side by side (a
    /// vector with fewer loads takes nothing from the rest).
    const fn pair_masks(p: &Pattern) -> [[[i8; 32]; MAX_LOADS]; MAX_VECTORS / 2] {
        let mut m = [[[-128; 32]; MAX_LOADS]; MAX_VECTORS / 2];
        let mut v = 0;
        while v < p.vectors / 2 {
            let mut q = 0;
            while q < MAX_LOADS {
                let mut t = 0;
                while t < 16 {
                    m[v][q][t] = p.masks[2 * v][q][t];
                    m[v][q][16 + t] = p.masks[2 * v + 1][q][t];
                    t += 1;
                }
                q += 1;
            }
            v += 1;
        }
        m
    }

    impl<const GATHER: bool, const U: usize, const N: usize, const NT: bool> Kernel<GATHER, U, N, NT> {
        const P: Pattern = Pattern::new(if GATHER { Shape::Gather } else { Shape::Interleave }, U, N);
        /// The period in pairs of vectors.
        const W: Pattern = Pattern::paired(if GATHER { Shape::Gather } else { Shape::Interleave }, U, N);
        const W_MASKS: [[[i8; 32]; MAX_LOADS]; MAX_VECTORS / 2] = pair_masks(&Self::W);

        /// One period of [`Kernel::W`], two vectors at a time: each 32-byte
        /// load is the two vectors' 16-byte loads side by side, shuffled
        /// (within each half) by their two masks at once, so a pair takes
        /// half the shuffles, ORs and stores of two vectors.
        ///
        /// # Safety
        /// As [`Kernel::period`] for `W`'s units; the CPU has AVX2.
        #[inline(always)]
        unsafe fn paired_period(src: *const u8, ss: isize, dst: *mut u8) {
            let p = &Self::W;
            let mut v = 0;
            while v < p.vectors / 2 {
                let (a, b) = (2 * v, 2 * v + 1);
                let loads = if p.loads[a] > p.loads[b] { p.loads[a] } else { p.loads[b] };
                // SAFETY: a register operation (AVX).
                let mut acc = unsafe { _mm256_setzero_si256() };
                let mut q = 0;
                while q < loads {
                    // A vector without load `q` loads its first again (its
                    // mask takes nothing from it).
                    let (ra, at_a) = p.at[a][if q < p.loads[a] { q } else { 0 }];
                    let (rb, at_b) = p.at[b][if q < p.loads[b] { q } else { 0 }];
                    let row = |r: usize| if GATHER { 0 } else { r as isize * ss };
                    // SAFETY: each half's load lies in its row's bytes of
                    // the period (`Pattern::new`), as in `period`; the
                    // mask is 32 bytes.
                    unsafe {
                        let lo = src.wrapping_offset(row(ra)).add(at_a).cast::<__m128i>();
                        let hi = src.wrapping_offset(row(rb)).add(at_b).cast::<__m128i>();
                        let x = _mm256_loadu2_m128i(hi, lo);
                        let m = _mm256_loadu_si256(Self::W_MASKS[v][q].as_ptr().cast::<__m256i>());
                        acc = _mm256_or_si256(acc, _mm256_shuffle_epi8(x, m));
                    }
                    q += 1;
                }
                // SAFETY: vectors `a` and `b` of the caller's destination.
                unsafe { _mm256_storeu_si256(dst.add(a * 16).cast::<__m256i>(), acc) };
                v += 1;
            }
        }

        /// One period from the units at `src` (an interleave's row `r` at
        /// `src + r * ss`), its destination at `dst`.
        ///
        /// # Safety
        /// `P.units` units of each row readable from there (and the bytes
        /// between them, for a gather), `P.vectors * 16` bytes writable at
        /// `dst`; the CPU has SSSE3.
        #[inline(always)]
        unsafe fn period(src: *const u8, ss: isize, dst: *mut u8) {
            let p = &Self::P;
            let mut v = 0;
            while v < p.vectors {
                // SAFETY: a register operation (SSE2).
                let mut acc = unsafe { _mm_setzero_si128() };
                let mut q = 0;
                while q < p.loads[v] {
                    let (r, at) = p.at[v][q];
                    let row = if GATHER { 0 } else { r as isize * ss };
                    // SAFETY: the load lies in row `r`'s bytes of the period
                    // (`Pattern::new`): the caller's units or the bytes
                    // between two of them; the mask is 16 bytes.
                    unsafe {
                        let x = _mm_loadu_si128(src.wrapping_offset(row).add(at).cast::<__m128i>());
                        let m = _mm_loadu_si128(p.masks[v][q].as_ptr().cast::<__m128i>());
                        acc = _mm_or_si128(acc, _mm_shuffle_epi8(x, m));
                    }
                    q += 1;
                }
                // SAFETY: vector `v` of the caller's destination (16-byte
                // aligned when streamed).
                unsafe {
                    if NT {
                        _mm_stream_si128(dst.add(v * 16).cast::<__m128i>(), acc)
                    } else {
                        _mm_storeu_si128(dst.add(v * 16).cast::<__m128i>(), acc)
                    }
                };
                v += 1;
            }
        }
    }

    /// The kernel of one shape: a gather (`GATHER`, every `N`-th unit of
    /// the row at `src`, units `ss` apart) or an interleave (`N` rows,
    /// `ss` apart), of units of `U` bytes. `false` if `n` is shorter than
    /// a period.
    ///
    /// # Safety
    /// As [`gather`](super::gather) or [`interleave`](super::interleave),
    /// and the CPU has AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn run<const GATHER: bool, const U: usize, const N: usize, const NT: bool>(
        n: usize,
        src: *const u8,
        ss: isize,
        dst: *mut u8,
    ) -> bool {
        type K<const G: bool, const U: usize, const N: usize, const NT: bool> = Kernel<G, U, N, NT>;
        const { assert!(K::<GATHER, U, N, NT>::P.ok && K::<GATHER, U, N, NT>::W.ok) };
        let units = K::<GATHER, U, N, NT>::P.units;
        // Per unit of each row: the step in the source (the row's unit
        // stride, or the unit) and in the destination.
        let (step, out) = if GATHER { (ss, U) } else { (U as isize, N * U) };
        // Streamed, every period must start 16-byte aligned: the
        // destination and its length whole vectors (a period is, so the
        // last one, which ends the destination, is too).
        if n < units || (NT && !(dst as usize | (n * out)).is_multiple_of(16)) {
            return false;
        }
        // SAFETY: each period starts at a unit `i <= n - units` of the
        // caller's rows: a partial last period is the whole one that ends
        // the rows, storing again the same values over the units before it.
        unsafe {
            let mut i = 0;
            if !NT && !GATHER {
                // Pairs of vectors, for interleaves. Measured, best of 60
                // to 100 runs, NHWC batch-to-space 3x3 of three channels:
                // uint8 faster in 7 of 8 runs (0.75-1.08 -> 0.72-0.88 ms),
                // float32 in 4 of 5 (1.14-1.41 -> 1.01-1.51). Gathers
                // measured slower so (0.77-0.87 -> 0.82-0.95 ms, 3 runs),
                // though a pair takes no more 16-byte loads than its two
                // vectors alone; why was not found.
                // Streamed, a pair need not be 32-byte aligned: those keep
                // 16-byte stores.
                let paired = K::<GATHER, U, N, NT>::W.units;
                while i + paired <= n {
                    K::<GATHER, U, N, NT>::paired_period(src.wrapping_offset(i as isize * step), ss, dst.add(i * out));
                    i += paired;
                }
            }
            while i + units <= n {
                K::<GATHER, U, N, NT>::period(src.wrapping_offset(i as isize * step), ss, dst.add(i * out));
                i += units;
            }
            if i < n {
                let i = n - units;
                K::<GATHER, U, N, NT>::period(src.wrapping_offset(i as isize * step), ss, dst.add(i * out));
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every shape the kernels take has a pattern.
    #[test]
    fn patterns_cover_every_shape() {
        for unit in [3, 6, 12] {
            for n in 2..=4 {
                let (p, paired) =
                    (Pattern::new(Shape::Interleave, unit, n), Pattern::paired(Shape::Interleave, unit, n));
                assert!(p.ok, "interleave {unit} x {n}");
                // Whole pairs of vectors: the period, or twice it if odd.
                assert!(paired.ok && paired.vectors.is_multiple_of(2), "interleave {unit} x {n} paired");
                let twice = if p.vectors.is_multiple_of(2) { 1 } else { 2 };
                assert_eq!((paired.vectors, paired.units), (p.vectors * twice, p.units * twice));
            }
        }
        for k in 2..=4 {
            assert!(Pattern::new(Shape::Gather, 3, k).ok, "gather 3 / {k}");
        }
        // Bytes of 5 to 8 streams: one load of each stream a vector, a
        // period of `STREAM_PERIOD` bytes of each.
        for b in 5..=8 {
            let (p, paired) = (Pattern::new(Shape::Interleave, 1, b), Pattern::paired(Shape::Interleave, 1, b));
            assert!(p.ok && paired.ok && paired.vectors.is_multiple_of(2), "interleave 1 x {b}");
            assert_eq!(p.units, STREAM_PERIOD, "interleave 1 x {b}");
            assert!(p.loads[..p.vectors].iter().all(|&l| l == b), "interleave 1 x {b}");
        }
        // Units of 2 and 4 bytes in 5 to 7 streams: as many loads a
        // vector as the streams it takes units of, at most 8 (2-byte
        // units) or 4 (4-byte), a period of `STREAM_PERIOD` bytes of each.
        for (unit, most) in [(2, 8), (4, 4)] {
            for b in 5..=7 {
                let (p, paired) =
                    (Pattern::new(Shape::Interleave, unit, b), Pattern::paired(Shape::Interleave, unit, b));
                assert!(p.ok && paired.ok && paired.vectors.is_multiple_of(2), "interleave {unit} x {b}");
                assert_eq!(p.units * unit, STREAM_PERIOD, "interleave {unit} x {b}");
                assert!(p.loads[..p.vectors].iter().all(|&l| l <= most.min(b)), "interleave {unit} x {b}");
            }
        }
        // Nine loads would be needed.
        assert!(!Pattern::new(Shape::Gather, 6, 8).ok);
        // More rows than an interleave takes.
        assert!(!Pattern::new(Shape::Interleave, 2, 9).ok && !Pattern::new(Shape::Interleave, 1, 9).ok);
    }

    /// Interleaves of 4 to 9 streams of bytes (5 to 8 taken) and of 2- and
    /// 4-byte units (5 to 7 taken, rows of two periods and more), of 0 to
    /// 100 bytes each (around a period, whole periods and pairs of them
    /// and not), the streams apart by more than their bytes, against the
    /// definition, nothing written past the end; every kernel set (only
    /// AVX2 without VBMI takes them), and streamed into whole aligned
    /// vectors.
    #[test]
    fn interleaves_of_5_to_8_streams_of_narrow_units_match_the_definition() {
        for isa in Isa::every_runnable() {
            for unit in [1, 2, 4] {
                for b in 4..=9 {
                    for bytes in [0, 1, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 100] {
                        let n = bytes / unit;
                        let avx2 = cfg!(target_arch = "x86_64") && isa >= Isa::Avx2 && !isa.runs_vbmi();
                        let takes = avx2
                            && match unit {
                                1 => (5..=8).contains(&b) && n >= 16,
                                _ => (5..=7).contains(&b) && n * unit >= 32,
                            };
                        check_interleave(isa, unit, b, n, takes);
                    }
                }
            }
        }
    }

    /// Runs [`interleave`] on `b` streams of `n` units of `unit` bytes,
    /// through the cache and streamed, and checks that it takes them
    /// exactly when `takes`, and what it writes.
    fn check_interleave(isa: Isa, unit: usize, b: usize, n: usize, takes: bool) {
        let what = format!("{b} streams of {n} units of {unit} bytes, {isa:?}");
        let (row, pitch) = (n * unit, n * unit + 5);
        let src: Vec<u8> = (0..b * pitch).map(|i| (i * 13 + i / 251 + 1) as u8).collect();
        let mut dst = vec![0xAAu8; b * row + 32];
        // SAFETY: `b` streams of `n` units; `b * n` destination units.
        let done = unsafe { interleave(isa, b, n, src.as_ptr(), pitch as isize, dst.as_mut_ptr(), unit, false) };
        assert_eq!(done, takes, "{what}");
        assert_eq!(interleaves_streams(isa, unit, b, n), takes, "{what}");
        let mut want = vec![0xAAu8; b * row + 32];
        for x in 0..if done { n } else { 0 } {
            for y in 0..b {
                let (to, from) = ((x * b + y) * unit, y * pitch + x * unit);
                want[to..to + unit].copy_from_slice(&src[from..from + unit]);
            }
        }
        assert!(dst == want, "{what}");
        let mut out = vec![0u128; (b * row).div_ceil(16) + 1];
        // SAFETY: as above, into a buffer of `b * n` units and more.
        let streamed =
            unsafe { interleave(isa, b, n, src.as_ptr(), pitch as isize, out.as_mut_ptr().cast(), unit, true) };
        assert_eq!(streamed, done && (b * row).is_multiple_of(16), "{what}, streamed");
        if streamed {
            // SAFETY: the buffer's first `b * n` units, written.
            let out = unsafe { std::slice::from_raw_parts(out.as_ptr().cast::<u8>(), b * row) };
            assert_eq!(out, &want[..b * row], "{what}, streamed");
        }
    }

    /// Gathers of 2 to 4 and interleaves of 2 to 4 rows, of 0 to 100
    /// units (periods whole and not, shorter than a period), with the
    /// source exactly the units' span, cached and (interleaves) streamed,
    /// against the definition, and nothing written past the end.
    #[test]
    fn gathers_and_interleaves_match_the_definition() {
        let isa = Isa::detect();
        if isa < Isa::Avx2 {
            return;
        }
        for unit in [3usize, 6, 12] {
            for k in 2..=4usize {
                for n in [0usize, 1, 5, 15, 16, 17, 31, 32, 33, 50, 100] {
                    // Gather: the source is exactly the units' span.
                    let len = if n == 0 { 0 } else { (n - 1) * k * unit + unit };
                    let src: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
                    let mut dst = vec![0xAAu8; n * unit + 8];
                    let ss = (k * unit) as isize;
                    // SAFETY: `n` units of the source, `n * unit` destination bytes.
                    let done = unsafe { gather(isa, n, src.as_ptr(), ss, dst.as_mut_ptr(), unit) };
                    assert_eq!(done, gathers(isa, unit, ss) && n >= Pattern::new(Shape::Gather, unit, k).units);
                    if done {
                        for i in 0..n {
                            assert_eq!(
                                dst[i * unit..][..unit],
                                src[i * k * unit..][..unit],
                                "gather {unit}/{k} n {n} unit {i}"
                            );
                        }
                        assert!(
                            dst[n * unit..].iter().all(|&b| b == 0xAA),
                            "gather {unit}/{k} n {n} wrote past the end"
                        );
                    }
                    // Interleave: `k` streams of `n` units, 8 bytes apart.
                    let pitch = n * unit + 8;
                    let src: Vec<u8> = (0..k * pitch).map(|i| (i * 13 + 1) as u8).collect();
                    let mut dst = vec![0xAAu8; k * n * unit + 8];
                    // SAFETY: `k` streams of `n` units; `k * n * unit` destination bytes.
                    let done =
                        unsafe { interleave(isa, k, n, src.as_ptr(), pitch as isize, dst.as_mut_ptr(), unit, false) };
                    assert_eq!(done, n >= Pattern::new(Shape::Interleave, unit, k).units);
                    if done {
                        for x in 0..n {
                            for y in 0..k {
                                assert_eq!(
                                    dst[(x * k + y) * unit..][..unit],
                                    src[y * pitch + x * unit..][..unit],
                                    "interleave {unit} x {k} n {n} unit {x} of {y}"
                                );
                            }
                        }
                        assert!(dst[k * n * unit..].iter().all(|&b| b == 0xAA));
                    }
                    // Streamed: only into whole aligned vectors.
                    let mut aligned = vec![0u128; (k * n * unit).div_ceil(16)];
                    let out = aligned.as_mut_ptr().cast::<u8>();
                    // SAFETY: as above; the buffer holds `k * n * unit` bytes.
                    let streamed = unsafe { interleave(isa, k, n, src.as_ptr(), pitch as isize, out, unit, true) };
                    assert_eq!(
                        streamed,
                        done && (k * n * unit).is_multiple_of(16),
                        "interleave {unit} x {k} n {n} streamed"
                    );
                    if streamed {
                        // SAFETY: the buffer's `k * n * unit` bytes, written.
                        let out = unsafe { std::slice::from_raw_parts(out, k * n * unit) };
                        assert_eq!(out, &dst[..k * n * unit], "interleave {unit} x {k} n {n} streamed");
                    }
                }
            }
        }
    }
}
