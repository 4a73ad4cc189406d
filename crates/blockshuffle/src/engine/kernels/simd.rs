//! Vector kernels for the short runs the compiler does not vectorise well:
//! interleaving and deinterleaving 2 or 4 streams of 1-, 2-, 4-, 8- and
//! 16-byte units (uint8 images, float16 and float32 pixel shuffles, NCHW
//! space-to-depth, complex128), and 3 streams with AVX2 (byte shuffles
//! within lanes: `Vector::split3`, `Vector::zip3`; AVX-512 plans use
//! AVX2's).
//!
//! One body per direction, generic over the vector ([`Vector`]): SSE2
//! (16 bytes, the x86_64 baseline), AVX2 (32 bytes) and AVX-512 (64 bytes,
//! with AVX-512BW). The wider ones are chosen once, when a plan is compiled,
//! by runtime feature detection ([`Isa::detect`]); every one can be forced
//! (`Kernels`), so tests run them all on one machine. Other targets use the
//! portable kernels.
//!
//! The wide vectors work in 16-byte lanes: each step does the SSE2 operation
//! in every lane, then one cross-lane permutation puts the 8-byte halves
//! back in order.
//!
//! Each entry point handles the whole-vector body of its `n` units per
//! stream, for each of its rows (a loop around the tile, see `Rows`), and
//! returns how many units per stream it did; the caller finishes the tails
//! with the portable kernel.
//!
//! With AVX512-VBMI (byte permutes across whole registers), two more
//! kernels run whole streaming tiles whose destination streams continue
//! from one row to the next, 2 to 4 streams (three by permutes):
//! [`deinterleave_carried`] and [`interleave_carried`] carry each stream's
//! unfinished line in a register (units of other sizes, 2 to 4 streams of
//! them, gathered by byte permutes from tables: [`AnyUnits`]), so that
//! every line leaves with one
//! aligned 64-byte streaming store whatever the lengths of the rows. Below
//! VBMI, [`deinterleave_carried`] *joins* the line that a stream's row
//! shares with the next from the sources of the two rows instead
//! (`joined_body`), with any vector.

//!
//! This file holds the interleaving and deinterleaving bodies and their
//! entry points, and the dispatch macros the carried kernels
//! ([`carried`](super::carried), [`interleave_carried`](super::interleave_carried))
//! share; [`Vector`] is in [`arch::vector`](crate::engine::arch::vector).
//!
//! Layer: kernels; imports [`lines`](super::lines), [`nest`](super::nest) and arch.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;
#[cfg(target_arch = "x86_64")]
use std::mem::MaybeUninit;

use super::lines::Writers;
use super::nest::Rows;
#[cfg(target_arch = "x86_64")]
use crate::engine::arch::mem::{prefetch, PREFETCH_AHEAD};
#[cfg(target_arch = "x86_64")]
use crate::engine::arch::vector::Vector;
use crate::engine::arch::Isa;

/// `dst[x * B + j] = stream_j[x]` for the whole vectors of `n` units of `S`
/// bytes, stream `j` at `src + j * ss`, for each of `rows`. Returns the units
/// done per stream.
///
/// # Safety
/// As the portable `interleave` for each of `rows`, and the CPU runs `V`'s
/// instructions.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn interleave_body<V: Vector, const S: usize, const B: usize>(
    rows: Rows,
    n: usize,
    src: *const u8,
    ss: isize,
    dst: *mut u8,
) -> usize {
    let per = V::BYTES / S;
    if n < per {
        return 0;
    }
    let body = n / per * per;
    for r in 0..rows.count {
        let (src, dst) = rows.at(r, src, dst);
        // SAFETY: forwarded, for row `r`; a partial last vector is done as
        // the whole vector that ends the row (`per <= n` units), storing
        // again the same values over the units before it.
        unsafe {
            interleave_row::<V, S, B, false>(body, src, ss, dst);
            if body < n {
                let at = n - per;
                interleave_row::<V, S, B, false>(per, src.add(at * S), ss, dst.add(at * B * S));
            }
        }
    }
    n
}

/// [`interleave_body`] with streaming stores, if it can do every unit with
/// them: each row's `n` units per stream a whole number of vectors, and
/// each row's destination 16-byte aligned. Returns whether it did (if not,
/// it did nothing).
///
/// A streamed interleaving writes one destination run from start to end,
/// so every line is filled by consecutive stores, aligned or not. (A tail
/// left to ordinary stores would share lines with streaming ones, which is
/// slow, hence all or nothing.)
///
/// # Safety
/// As [`interleave_body`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn interleave_streamed_body<V: Vector, const S: usize, const B: usize>(
    rows: Rows,
    n: usize,
    src: *const u8,
    ss: isize,
    dst: *mut u8,
) -> bool {
    let per = V::BYTES / S;
    let aligned = (dst as usize).is_multiple_of(16) && (rows.count == 1 || rows.ds.unsigned_abs().is_multiple_of(16));
    if !n.is_multiple_of(per) || !aligned {
        return false;
    }
    for r in 0..rows.count {
        let (src, dst) = rows.at(r, src, dst);
        // SAFETY: forwarded, for row `r`; its destination is 16-byte aligned
        // and each store is a whole vector from its start.
        unsafe { interleave_row::<V, S, B, true>(n, src, ss, dst) };
    }
    true
}

/// One row of [`interleave_body`]: `body` units per stream, a whole number of vectors.
///
/// # Safety
/// As [`interleave_body`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn interleave_row<V: Vector, const S: usize, const B: usize, const NT: bool>(
    body: usize,
    src: *const u8,
    ss: isize,
    dst: *mut u8,
) {
    let per = V::BYTES / S;
    let s = |j: isize, x: usize| src.wrapping_offset(j * ss).wrapping_add(x * S);
    // SAFETY: every load reads one vector (`per` units) of one stream below
    // `body <= n`; every store writes one vector inside `dst[..n * B * S]`
    // (streaming: at a multiple of `V::BYTES` from `dst`, 16-byte aligned).
    unsafe {
        let store = |p: *mut u8, v: V| if NT { V::stream(p, v) } else { V::store(p, v) };
        let mut x = 0;
        while x < body {
            let d = dst.add(x * B * S);
            if NT && (x * S).is_multiple_of(64) {
                for j in 0..B as isize {
                    prefetch(s(j, x).wrapping_add(PREFETCH_AHEAD), 64);
                }
            }
            let out = interleave_step::<V, S, B>(std::array::from_fn(|j| V::load(s(j as isize, x))));
            for (k, v) in out.into_iter().enumerate() {
                store(d.add(k * V::BYTES), v);
            }
            x += per;
        }
    }
}

/// The `B` destination vectors, in order, of one vector of each of the `B`
/// streams `v` (`B` 2 or 4, or 3 where `V` zips three).
///
/// # Safety
/// The CPU runs `V`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn interleave_step<V: Vector, const S: usize, const B: usize>(v: [V; B]) -> [V; B] {
    // SAFETY: register operations of `V`'s instruction set (the caller's).
    unsafe {
        if B == 2 {
            let (lo, hi) = V::zip::<S>(v[0], v[1]);
            std::array::from_fn(|k| if k == 0 { lo } else { hi })
        } else if B == 3 {
            let o = V::zip3::<S>([v[0], v[1], v[2]]);
            std::array::from_fn(|k| o[k])
        } else {
            let (ac_lo, ac_hi) = V::zip::<S>(v[0], v[2]);
            let (bd_lo, bd_hi) = V::zip::<S>(v[1], v[3]);
            let (o0, o1) = V::zip::<S>(ac_lo, bd_lo);
            let (o2, o3) = V::zip::<S>(ac_hi, bd_hi);
            let o = [o0, o1, o2, o3];
            std::array::from_fn(|k| o[k])
        }
    }
}

/// `stream_j[y] = src[y * B + j]` for the whole vectors of `n` units of `S`
/// bytes per stream, stream `j` at `dst + j * ds`, for each of `rows`.
/// Returns the units done per stream.
///
/// # Safety
/// As the portable `deinterleave` for each of `rows`, and the CPU runs `V`'s
/// instructions.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn deinterleave_body<V: Vector, const S: usize, const B: usize>(
    rows: Rows,
    n: usize,
    src: *const u8,
    dst: *mut u8,
    ds: isize,
) -> usize {
    let per = V::BYTES / S;
    if n < per {
        return 0;
    }
    let body = n / per * per;
    for r in 0..rows.count {
        let (src, dst) = rows.at(r, src, dst);
        // SAFETY: forwarded, for row `r`; a partial last vector is done as
        // the whole vector that ends the row (`per <= n` units), storing
        // again the same values over the units before it.
        unsafe {
            deinterleave_row::<V, S, B>(body, src, dst, ds);
            if body < n {
                let at = n - per;
                deinterleave_row::<V, S, B>(per, src.add(at * B * S), dst.add(at * S), ds);
            }
        }
    }
    n
}

/// One row of [`deinterleave_body`]: `body` units per stream, a whole number of vectors.
///
/// # Safety
/// As [`deinterleave_body`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn deinterleave_row<V: Vector, const S: usize, const B: usize>(
    body: usize,
    src: *const u8,
    dst: *mut u8,
    ds: isize,
) {
    let per = V::BYTES / S;
    let d = |j: usize, y: usize| dst.wrapping_offset(j as isize * ds).wrapping_add(y * S);
    // SAFETY: loads read vectors of `src[..body * B * S]`; stores write one
    // vector (`per` units) of one stream below `body <= n`.
    unsafe {
        let mut y = 0;
        while y < body {
            let v = deinterleave_step::<V, S, B>(src.add(y * B * S));
            for (j, v) in v.into_iter().enumerate() {
                V::store(d(j, y), v);
            }
            y += per;
        }
    }
}

/// One vector of each of the `B` streams, from the `B` vectors at `sp`.
///
/// # Safety
/// `B * V::BYTES` bytes readable at `sp`; `B` is 2 or 4 (3 where `V` splits three); the CPU runs `V`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn deinterleave_step<V: Vector, const S: usize, const B: usize>(sp: *const u8) -> [V; B] {
    // SAFETY: forwarded (a run that does not continue elsewhere).
    unsafe { deinterleave_step_joined::<V, S, B>(sp, sp, usize::MAX) }
}

/// [`deinterleave_step`] from a source run that continues elsewhere: its
/// bytes before `cut` are at `lo`, the rest at `hi` (byte `o >= cut` at
/// `hi + (o - cut)`).
///
/// # Safety
/// The `B * V::BYTES` bytes of the run readable; `cut` a multiple of
/// `V::BYTES` (no vector reads across it); `B` is 2 to 4; the CPU runs `V`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn deinterleave_step_joined<V: Vector, const S: usize, const B: usize>(
    lo: *const u8,
    hi: *const u8,
    cut: usize,
) -> [V; B] {
    // SAFETY: each load reads `V::BYTES` bytes of the run, on one side of `cut`.
    unsafe {
        let mut v = [MaybeUninit::<V>::uninit(); 4];
        for (k, v) in v.iter_mut().enumerate().take(B) {
            let o = k * V::BYTES;
            v.write(V::load(if o < cut { lo.add(o) } else { hi.add(o - cut) }));
        }
        if B == 3 {
            let all = V::split3::<S>([v[0].assume_init(), v[1].assume_init(), v[2].assume_init()]);
            return std::array::from_fn(|j| all[j]);
        }
        if B == 2 {
            let (e, o) = V::split::<S>(v[0].assume_init(), v[1].assume_init());
            return std::array::from_fn(|j| if j == 0 { e } else { o });
        }
        let all = V::split4::<S>([v[0].assume_init(), v[1].assume_init(), v[2].assume_init(), v[3].assume_init()]);
        std::array::from_fn(|j| all[j])
    }
}

/// [`deinterleave_body`] with streaming stores of whole cache lines, if it
/// can do every row so: the `B` destination streams an equal distance from
/// a line boundary (`ds` a multiple of 64), units aligned in every row.
/// Each stream's units up to its first line boundary, and after its last,
/// go through the line writers `w` (which complete the line a row shares
/// with the stream's previous or next row, so that no line mixes ordinary
/// and streaming stores: measured, ordinary stores for those lines alone
/// made float32 NCHW space-to-depth 1.7x memcpy, against 1.2x); in between,
/// each step writes one whole line of every stream. Returns whether it did
/// (if not, it did nothing).
///
/// # Safety
/// As [`deinterleave_body`]; `w` holds only runs of this run's destination.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn deinterleave_streamed_body<V: Vector, const S: usize, const B: usize>(
    rows: Rows,
    n: usize,
    src: *const u8,
    dst: *mut u8,
    ds: isize,
    w: &mut Writers,
) -> bool {
    let lines_apart = ds.unsigned_abs().is_multiple_of(64);
    let units_aligned = (dst as usize).is_multiple_of(S) && rows.ds.unsigned_abs().is_multiple_of(S);
    let per_line = 64 / S;
    if !lines_apart || !units_aligned || n < per_line {
        return false;
    }
    let d = |dst: *mut u8, j: usize, y: usize| dst.wrapping_offset(j as isize * ds).wrapping_add(y * S);
    for r in 0..rows.count {
        let (src, dst) = rows.at(r, src, dst);
        // SAFETY: the head `[0, h)`, the lines `[h, done)` and the tail
        // `[done, n)` partition each stream's `n` units; every streaming
        // store is a 16-byte lane of a line that lies inside the stream's
        // units (64-byte aligned: `h` brings stream 0, and so every stream,
        // to a boundary); loads stay inside `src[..n * B * S]` (the head's
        // and the tail's lines are the first and the last `per_line <= n`
        // units); the writers get the heads and tails, and are told of the
        // lines between.
        unsafe {
            let h = (((64 - dst as usize % 64) % 64) / S).min(n);
            let lines = (n - h) / per_line;
            let done = h + lines * per_line;
            if h > 0 {
                let part = line_parts::<V, S, B>(src);
                for (j, p) in part.iter().enumerate() {
                    w.push(p.as_ptr().cast(), d(dst, j, 0), h * S);
                }
            }
            for l in 0..lines {
                let y = h + l * per_line;
                prefetch(src.wrapping_add(y * B * S + PREFETCH_AHEAD), 64 * B);
                let line = line_registers::<V, S, B>(src.add(y * B * S));
                for (j, l) in line.iter().enumerate() {
                    put_line::<V, true>(l, d(dst, j, y));
                }
            }
            if lines > 0 {
                for j in 0..B {
                    w.skip(d(dst, j, h), lines * 64);
                }
            }
            let t = n - done;
            if t > 0 {
                let part = line_parts::<V, S, B>(src.add((n - per_line) * B * S));
                for (j, p) in part.iter().enumerate() {
                    w.push(p.as_ptr().cast::<u8>().add((per_line - t) * S), d(dst, j, done), t * S);
                }
            }
        }
    }
    true
}

/// One line (64 bytes) of each of the `B` streams, from the `64 * B` source
/// bytes at `sp`, in registers (a line of several streams stored a vector
/// at a time in turn measured 1.7x memcpy, against 1.35x stored whole).
/// Entry `[j][k / V::BYTES]` holds bytes `k..k + V::BYTES` of stream `j`'s
/// line; the entries from `64 / V::BYTES` on are not set.
///
/// # Safety
/// `64 * B` bytes readable at `sp`; the CPU runs `V`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn line_registers<V: Vector, const S: usize, const B: usize>(
    sp: *const u8,
) -> [[MaybeUninit<V>; 4]; B] {
    // SAFETY: forwarded (a run that does not continue elsewhere).
    unsafe { line_registers_joined::<V, S, B>(sp, sp, usize::MAX) }
}

/// [`line_registers`] from a source run that continues elsewhere (see
/// [`deinterleave_step_joined`]).
///
/// # Safety
/// The `64 * B` bytes of the run readable; `cut` a multiple of
/// `V::BYTES`; the CPU runs `V`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn line_registers_joined<V: Vector, const S: usize, const B: usize>(
    lo: *const u8,
    hi: *const u8,
    cut: usize,
) -> [[MaybeUninit<V>; 4]; B] {
    let mut line = [[MaybeUninit::<V>::uninit(); 4]; B];
    let mut k = 0;
    while k < 64 {
        // SAFETY: the step reads `B * V::BYTES` bytes at `k * B < 64 * B`,
        // from `lo` below `cut` and from `hi` past it.
        let v = unsafe {
            let o = k * B;
            if o < cut {
                deinterleave_step_joined::<V, S, B>(lo.add(o), hi, cut - o)
            } else {
                deinterleave_step::<V, S, B>(hi.add(o - cut))
            }
        };
        for (l, v) in line.iter_mut().zip(v) {
            l[k / V::BYTES].write(v);
        }
        k += V::BYTES;
    }
    line
}

/// [`line_registers`], stored to a buffer per stream.
///
/// # Safety
/// As [`line_registers`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn line_parts<V: Vector, const S: usize, const B: usize>(
    sp: *const u8,
) -> [[MaybeUninit<u8>; 64]; B] {
    let mut part = [[MaybeUninit::<u8>::uninit(); 64]; B];
    // SAFETY: forwarded; each store writes `V::BYTES` bytes at `k < 64` of
    // a 64-byte part; the registers up to `64 / V::BYTES` are set.
    unsafe {
        let line = line_registers::<V, S, B>(sp);
        for (p, l) in part.iter_mut().zip(&line) {
            put_line::<V, false>(l, p.as_mut_ptr().cast());
        }
    }
    part
}

/// Stores one line held in registers (its first `64 / V::BYTES` vectors,
/// as [`line_registers`] gives them) to `at`: with one aligned streaming
/// store a vector when `NT` (`at` 64-byte aligned), ordinary ones if not.
///
/// # Safety
/// 64 writable bytes at `at` (aligned when `NT`); those vectors set; the
/// CPU runs `V`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn put_line<V: Vector, const NT: bool>(line: &[MaybeUninit<V>; 4], at: *mut u8) {
    let mut k = 0;
    while k < 64 {
        // SAFETY: vector `k / V::BYTES` of the line, to bytes `k..k + V::BYTES` of the 64.
        unsafe {
            let v = line[k / V::BYTES].assume_init();
            if NT {
                V::stream_aligned(at.add(k), v);
            } else {
                V::store(at.add(k), v);
            }
        }
        k += V::BYTES;
    }
}

/// Monomorphises a carried kernel (AVX512-VBMI) for each unit size and
/// stream count it has; `false` for the others.
#[cfg(target_arch = "x86_64")]
macro_rules! dispatch_carried {
    ($kernel:ident, $size:expr, $b:expr, ($($arg:expr),*)) => {
        match ($size, $b) {
            (1, 2) => $kernel::<1, 2>($($arg),*),
            (1, 3) => $kernel::<1, 3>($($arg),*),
            (1, 4) => $kernel::<1, 4>($($arg),*),
            (2, 2) => $kernel::<2, 2>($($arg),*),
            (2, 3) => $kernel::<2, 3>($($arg),*),
            (2, 4) => $kernel::<2, 4>($($arg),*),
            (4, 2) => $kernel::<4, 2>($($arg),*),
            (4, 3) => $kernel::<4, 3>($($arg),*),
            (4, 4) => $kernel::<4, 4>($($arg),*),
            (8, 2) => $kernel::<8, 2>($($arg),*),
            (8, 3) => $kernel::<8, 3>($($arg),*),
            (8, 4) => $kernel::<8, 4>($($arg),*),
            _ => return false,
        }
    };
}

/// Monomorphises a kernel of whole groups ([`carried_groups`],
/// [`interleaved_groups`]) for each stream count `b` and vectors a step
/// (the `b * step` bytes' vectors), the usual steps of three-channel pixels
/// and their blocks (48, 60 and 63 bytes) known at compile time (others
/// at run time: 0); `false` for the others.
#[cfg(target_arch = "x86_64")]
macro_rules! dispatch_groups {
    ($kernel:ident, $b:expr, $step:expr, ($($arg:expr),*)) => {
        match ($b, ($b * $step).div_ceil(64), $step) {
            (2, 2, 60) => $kernel::<2, 2, 60>($($arg),*),
            (2, 2, _) => $kernel::<2, 2, 0>($($arg),*),
            (3, 2, _) => $kernel::<3, 2, 0>($($arg),*),
            (3, 3, 63) => $kernel::<3, 3, 63>($($arg),*),
            (3, 3, 60) => $kernel::<3, 3, 60>($($arg),*),
            (3, 3, _) => $kernel::<3, 3, 0>($($arg),*),
            (4, 2, _) => $kernel::<4, 2, 0>($($arg),*),
            (4, 3, 48) => $kernel::<4, 3, 48>($($arg),*),
            (4, 3, _) => $kernel::<4, 3, 0>($($arg),*),
            (4, 4, _) => $kernel::<4, 4, 0>($($arg),*),
            _ => return false,
        }
    };
}

/// Monomorphises a kernel for each unit size and stream count it has.
#[cfg(target_arch = "x86_64")]
macro_rules! dispatch {
    ($kernel:ident, $V:ty, $size:expr, $b:expr, ($($arg:expr),*), $none:expr) => {
        match ($size, $b) {
            (1, 2) => $kernel::<$V, 1, 2>($($arg),*),
            (1, 4) => $kernel::<$V, 1, 4>($($arg),*),
            (2, 2) => $kernel::<$V, 2, 2>($($arg),*),
            (2, 4) => $kernel::<$V, 2, 4>($($arg),*),
            (4, 2) => $kernel::<$V, 4, 2>($($arg),*),
            (4, 4) => $kernel::<$V, 4, 4>($($arg),*),
            (8, 2) => $kernel::<$V, 8, 2>($($arg),*),
            (8, 4) => $kernel::<$V, 8, 4>($($arg),*),
            (16, 2) => $kernel::<$V, 16, 2>($($arg),*),
            (16, 4) => $kernel::<$V, 16, 4>($($arg),*),
            _ => $none,
        }
    };
}

/// [`dispatch!`] for three streams (AVX2: `__m256i`'s byte shuffles split
/// and zip them).
#[cfg(target_arch = "x86_64")]
macro_rules! dispatch3 {
    ($kernel:ident, $V:ty, $size:expr, ($($arg:expr),*), $none:expr) => {
        match $size {
            1 => $kernel::<$V, 1, 3>($($arg),*),
            2 => $kernel::<$V, 2, 3>($($arg),*),
            4 => $kernel::<$V, 4, 3>($($arg),*),
            8 => $kernel::<$V, 8, 3>($($arg),*),
            16 => $kernel::<$V, 16, 3>($($arg),*),
            _ => $none,
        }
    };
}

/// Defines `$name(isa, size, b, args...)`: the kernel `$body` compiled for
/// each instruction set (SSE2, AVX2, AVX-512) and for each unit size and
/// stream count (`dispatch!`), run for `isa`; without vector kernels (the
/// portable `isa`, or another target) it returns `$none`.
macro_rules! entry_point {
    ($(#[$doc:meta])* $name:ident => $body:ident($($arg:ident: $ty:ty),*) -> $ret:ty, none: $none:expr) => {
        $(#[$doc])*
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn $name(isa: Isa, size: usize, b: usize, $($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                // Unoptimised, every kernel of an instruction set inlined
                // into its dispatch made one frame of up to 2 MiB (the
                // padded joined kernel's: a thread's whole stack), so
                // there each unit size and stream count runs in a function
                // of its own (`sse2_kernel`, `avx2_kernel`,
                // `avx512_kernel`); optimised, the kernels are inlined as
                // they are written, into a dispatch whose frame is small.
                #[cfg(debug_assertions)]
                #[allow(clippy::too_many_arguments)]
                unsafe fn sse2_kernel<V: Vector, const S: usize, const B: usize>($($arg: $ty),*) -> $ret {
                    // SAFETY: forwarded.
                    unsafe { $body::<V, S, B>($($arg),*) }
                }
                #[cfg(debug_assertions)]
                #[allow(clippy::too_many_arguments)]
                #[target_feature(enable = "avx2")]
                unsafe fn avx2_kernel<V: Vector, const S: usize, const B: usize>($($arg: $ty),*) -> $ret {
                    // SAFETY: forwarded.
                    unsafe { $body::<V, S, B>($($arg),*) }
                }
                #[cfg(debug_assertions)]
                #[allow(clippy::too_many_arguments)]
                #[target_feature(enable = "avx512f,avx512bw")]
                unsafe fn avx512_kernel<V: Vector, const S: usize, const B: usize>($($arg: $ty),*) -> $ret {
                    // SAFETY: forwarded.
                    unsafe { $body::<V, S, B>($($arg),*) }
                }
                #[cfg(not(debug_assertions))]
                use $body as sse2_kernel;
                #[cfg(not(debug_assertions))]
                use $body as avx2_kernel;
                #[cfg(not(debug_assertions))]
                use $body as avx512_kernel;
                unsafe fn sse2(size: usize, b: usize, $($arg: $ty),*) -> $ret {
                    // SAFETY: SSE2 is the x86_64 baseline; the rest is forwarded.
                    unsafe { dispatch!(sse2_kernel, __m128i, size, b, ($($arg),*), $none) }
                }
                #[target_feature(enable = "avx2")]
                unsafe fn avx2(size: usize, b: usize, $($arg: $ty),*) -> $ret {
                    // SAFETY: the caller detected AVX2; the rest is forwarded.
                    unsafe {
                        if b == 3 {
                            return dispatch3!(avx2_kernel, __m256i, size, ($($arg),*), $none);
                        }
                        dispatch!(avx2_kernel, __m256i, size, b, ($($arg),*), $none)
                    }
                }
                #[target_feature(enable = "avx512f,avx512bw")]
                unsafe fn avx512(size: usize, b: usize, $($arg: $ty),*) -> $ret {
                    // SAFETY: the caller detected AVX-512F/BW; the rest is forwarded.
                    unsafe { dispatch!(avx512_kernel, __m512i, size, b, ($($arg),*), $none) }
                }
                // SAFETY: forwarded; the instruction set was detected.
                unsafe {
                    match isa {
                        Isa::Portable => $none,
                        Isa::Sse2 => sse2(size, b, $($arg),*),
                        Isa::Avx2 => avx2(size, b, $($arg),*),
                        // Three streams with AVX2's (AVX-512 has no byte
                        // shuffle across lanes without VBMI).
                        Isa::Avx512 | Isa::Avx512Vbmi if b == 3 => avx2(size, b, $($arg),*),
                        Isa::Avx512 | Isa::Avx512Vbmi => avx512(size, b, $($arg),*),
                    }
                }
            }
            #[cfg(not(target_arch = "x86_64"))]
            {
                let _ = (isa, size, b, $($arg),*);
                $none
            }
        }
    };
}
pub(super) use {dispatch, dispatch3, dispatch_carried, dispatch_groups, entry_point};

entry_point! {
    /// `dst[x * b + j] = stream_j[x]`, streams at `src + j * ss`; units of
    /// `size` bytes; for each of `rows`. Does the whole-vector body of every
    /// row; returns the units done per stream.
    ///
    /// # Safety
    /// As the portable `interleave` for each of `rows`: `n` units readable per
    /// stream, `n * b` writable at `dst`, no overlap; `isa` is one this CPU runs
    /// (from [`Isa::detect`] or below it).
    interleave => interleave_body(rows: Rows, n: usize, src: *const u8, ss: isize, dst: *mut u8) -> usize, none: 0
}

entry_point! {
    /// [`interleave`] with streaming stores for every unit of every row, if
    /// the vector kernel of `isa` can do them all (see `interleave_streamed_body`);
    /// returns whether it did (if not, nothing is written).
    ///
    /// # Safety
    /// As [`interleave`].
    interleave_streamed => interleave_streamed_body(
        rows: Rows, n: usize, src: *const u8, ss: isize, dst: *mut u8
    ) -> bool, none: false
}

entry_point! {
    /// `stream_j[y] = src[y * b + j]`, streams at `dst + j * ds`; units of
    /// `size` bytes; for each of `rows`. Does the whole-vector body of every
    /// row; returns the units done per stream.
    ///
    /// # Safety
    /// As the portable `deinterleave` for each of `rows`: `n * b` units readable
    /// at `src`, `n` writable per stream, no overlap; `isa` is one this CPU runs.
    deinterleave => deinterleave_body(rows: Rows, n: usize, src: *const u8, dst: *mut u8, ds: isize) -> usize, none: 0
}

entry_point! {
    /// [`deinterleave`] with streaming stores of whole lines, if the vector
    /// kernel of `isa` can do every row so (see `deinterleave_streamed_body`),
    /// the parts of lines through the line writers `w`; returns whether it did
    /// (if not, nothing is written).
    ///
    /// # Safety
    /// As [`deinterleave`]; `w` holds only runs of this run's destination.
    deinterleave_streamed => deinterleave_streamed_body(
        rows: Rows, n: usize, src: *const u8, dst: *mut u8, ds: isize, w: &mut Writers
    ) -> bool, none: false
}
