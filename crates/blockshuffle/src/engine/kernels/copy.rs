//! The copy kernels: small functions that move bytes between offsets the
//! plan has proven valid. Each documents what its caller guarantees.
//!
//! This file holds runs of units ([`copy_run`], with its [`Mode`]), the
//! loop-nest walk ([`odometer`], [`units`]), listed units ([`listed`]) and
//! the streaming gather of a run's units (`stream_gather`, which fetches
//! the source ahead by `sweep`, or along the row: `fetches_along`).
//!
//! Layer: kernels; imports [`nest`](super::nest), [`bytes`](super::bytes),
//! [`shuffle`](super::shuffle) and arch.

use std::mem::MaybeUninit;
use std::ptr;

use arrayvec::ArrayVec;

use super::bytes::{copy_bytes, STREAM_MIN};
use super::bytes::{stream_copy, Stage, STAGE};
use super::nest::{Loop, Rows, MAX_LOOPS};
use super::shuffle;
use crate::engine::arch::mem::{pair, prefetch, LINE, PAGE};
use crate::engine::arch::Isa;

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
        by_run_unit!(unit, ss, ds, copy, last => strided(n, src, ss, dst, ds, copy, last))
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
pub(super) fn wide_move(unit: usize) -> Option<usize> {
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
pub(super) use by_wide_unit;

/// Evaluates `$body` with `$copy` and `$last` bound to the copies of a
/// run's units of `$unit` bytes, `$ss` and `$ds` apart, chosen once: where
/// [`widens`] allows, each unit but the last in one move of the power of
/// two above it and the last exactly ([`by_wide_unit`]); otherwise both
/// the unit's own copy ([`by_unit`]). The caller vouches for the units its
/// loop gives them, as for those macros.
macro_rules! by_run_unit {
    ($unit:expr, $ss:expr, $ds:expr, $copy:ident, $last:ident => $body:expr) => {{
        let unit: usize = $unit;
        if widens(unit, $ss, $ds) {
            by_wide_unit!(unit, $copy, $last => $body)
        } else {
            by_unit!(unit, $copy => {
                let $last = $copy;
                $body
            })
        }
    }};
}
pub(super) use by_run_unit;

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
pub(super) use by_unit;

/// Calls `f(source offset, destination offset)` for every position of
/// `loops` (none: once, at the bases), the last loop fastest.
#[inline(always)]
pub(crate) fn odometer(loops: &[Loop], src_base: isize, dst_base: isize, mut f: impl FnMut(isize, isize)) {
    // Only as many counters as loops (a whole `[0; MAX_LOOPS]` is a memset
    // that tiny runs would mostly spend their time in).
    // (Pushed: a collected `ArrayVec` is built apart and copied whole.)
    let mut idx: ArrayVec<usize, MAX_LOOPS> = ArrayVec::new();
    for _ in loops {
        idx.push(0);
    }
    let (mut so, mut dof) = (src_base, dst_base);
    loop {
        f(so, dof);
        // The next position: the last loop that has one left steps, the
        // loops after it wrap (zipped, so that no index is checked).
        let mut stepped = false;
        for (l, i) in loops.iter().zip(idx.iter_mut()).rev() {
            *i += 1;
            so = so.wrapping_add(l.ss);
            dof = dof.wrapping_add(l.ds);
            if *i < l.count {
                stepped = true;
                break;
            }
            *i = 0;
            so = so.wrapping_sub(l.ss.wrapping_mul(l.count as isize));
            dof = dof.wrapping_sub(l.ds.wrapping_mul(l.count as isize));
        }
        if !stepped {
            return;
        }
    }
}

/// Copies every unit of a loop nest one at a time, the last loop fastest:
/// unit `(i_0, .., i_k)` from `src + Σ i_j·ss_j` to `dst + Σ i_j·ds_j`. The
/// kernel of the tiles that no other kernel takes (`tile::unit_tiles`); the
/// unit's copy is chosen once, and where the last loop's destination is
/// contiguous, units of 3, 5-7, 9-15, ... bytes but the last of each run
/// go in one move of the power of two above them ([`widens`], as
/// [`copy_run`]'s). (Tiny plans, whose units are too few to pay for
/// choosing any other kernel, list their units instead: [`listed`].)
///
/// `Grid::units` walks the same nest but steps each row's window bounds
/// and multiplies out each row's offsets: run through it, the prepared
/// S1 and S3 workloads took 45-51 and 96-98 ns against 32-34 and 64-67
/// here (alternated, best of 9 processes each), when this was the tiny
/// plans' kernel.
///
/// # Safety
/// Every unit so addressed readable at the source and writable at the
/// destination, without overlap.
#[inline(never)]
pub(crate) unsafe fn units(loops: &[Loop], src: *const u8, dst: *mut u8, unit: usize) {
    // SAFETY: forwarded (one unit).
    let Some(last) = loops.last() else { return unsafe { copy_bytes(src, dst, unit, false) } };
    // SAFETY: forwarded, unit by unit; widened, every unit but the last of
    // each run of the last loop, as `widens` allows: that loop's
    // destination is contiguous (a move's excess lands on the next unit's
    // place, written next) and its next source unit at least a move on
    // (the excess read lies between two of the source's units).
    unsafe { by_run_unit!(unit, last.ss, last.ds, copy, last_copy => nest(loops, src, dst, copy, last_copy)) }
}

/// [`units`]' walk: the last four loops nested plainly (those missing
/// once each), the odometer outside them; `copy` moves each unit of the
/// last loop's runs but the last, which `last_copy` moves.
///
/// # Safety
/// As [`units`], and the units the two copies are given as they require;
/// `loops` not empty.
#[inline(always)]
unsafe fn nest(
    loops: &[Loop],
    src: *const u8,
    dst: *mut u8,
    copy: impl Fn(*const u8, *mut u8),
    last_copy: impl Fn(*const u8, *mut u8),
) {
    let n = loops.len();
    let last = &loops[n - 1];
    let level = |k: usize| if n > k { Rows::of(&loops[n - 1 - k]) } else { Rows::ONE };
    let (rows, planes, cubes) = (level(1), level(2), level(3));
    let outer = &loops[..n.saturating_sub(4)];
    odometer(outer, 0, 0, |so, dof| {
        let (src, dst) = (src.wrapping_offset(so), dst.wrapping_offset(dof));
        for c in 0..cubes.count {
            let (src, dst) = cubes.at(c, src, dst);
            for p in 0..planes.count {
                let (src, dst) = planes.at(p, src, dst);
                for r in 0..rows.count {
                    let (s, d) = rows.at(r, src, dst);
                    // SAFETY: forwarded.
                    unsafe { strided(last.count, s, last.ss, d, last.ds, &copy, &last_copy) }
                }
            }
        }
    })
}

/// Copies units listed by their offsets: unit `i` from `src + offsets[i][0]`
/// to `dst + offsets[i][1]`, in the list's order. The kernel of tiny plans
/// (`CopyPlan::units`), whose offsets the plan lists once, when it is
/// compiled: a run then costs a load and a store a unit, where walking
/// the loop nest ([`units`]) cost about 27 instructions a unit of the
/// 64-byte S1 workload (16 units in loops of 2).
///
/// # Safety
/// Every unit so addressed readable at the source and writable at the
/// destination, without overlap.
#[inline(never)]
pub(crate) unsafe fn listed(offsets: &[[isize; 2]], src: *const u8, dst: *mut u8, unit: usize) {
    // SAFETY: forwarded, unit by unit.
    unsafe {
        by_unit!(unit, copy => {
            for &[s, d] in offsets {
                copy(src.wrapping_offset(s), dst.wrapping_offset(d));
            }
        })
    }
}

/// Copies one unit of `N` bytes as one (unaligned) value.
///
/// # Safety
/// `N` bytes readable at `src` and writable at `dst`, not overlapping.
#[inline(always)]
pub(super) unsafe fn unit_copy<const N: usize>(src: *const u8, dst: *mut u8) {
    // SAFETY: forwarded; `MaybeUninit` makes copying padding bytes of a
    // caller's type sound.
    unsafe {
        let v = ptr::read_unaligned(src.cast::<MaybeUninit<[u8; N]>>());
        ptr::write_unaligned(dst.cast::<MaybeUninit<[u8; N]>>(), v);
    }
}

/// Calls `copy` for each of the `n` units of a [`copy_run`] but the last,
/// and `last` for the last: unit `i` from `src + i*ss` to `dst + i*ds`.
///
/// # Safety
/// `copy` and `last` must be sound for the units they are given (as
/// [`copy_run`]'s caller guarantees, and [`widens`] for a wide `copy`).
#[inline(always)]
pub(super) unsafe fn strided(
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

/// How the kernels store and which instructions they may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mode {
    /// Non-temporal stores.
    pub nt: bool,
    /// The vector kernels for short runs.
    pub isa: Isa,
    /// The tensors are past the caches (the plan streams: its output is
    /// past the stream threshold), whether or not these stores stream: a
    /// kernel that reads more source streams than the prefetchers follow
    /// fetches them ahead (the full-line transposes' blocks).
    pub fetch: bool,
}

/// Gathers `n` units into a contiguous destination with streaming stores,
/// while the source ahead is fetched: along the row where the units are a
/// page or more apart ([`fetches_along`]), else by one sweep through the
/// source ([`sweep`]).
///
/// Every gathered row fetches, however near its units (so do
/// [`gather_lines`](super::stream::gather_lines)' rows). Rows of units at
/// most 3 apart, and `gather_lines`' rows of at most 2 KiB, had been left
/// to the hardware prefetchers, as measured on a machine with AVX-512
/// (alternated runs, median per workload, ratio to memcpy): NHWC
/// space-to-batch and depth-to-space by 2 and 3 of 16- to 128-byte units,
/// 32 workloads, 0.888 -> 0.826 unfetched; OpenVINO's 5-D space-to-batch
/// (W11: 1 KiB rows of 128-byte units 3 apart), 1.01 -> 0.95 and 1.03 ->
/// 0.91. Two AMD EPYCs measured the other way: a Zen 1, W11 1.92 ->
/// 1.52 fetched (the 43 other streaming plans of units of 32 bytes and
/// more in broad seed 26, 0.996 of the time); a Zen 5 (one thread, 4
/// alternated runs, paired per-round ratios, time fetched over
/// unfetched), W11 2.2 -> 0.9x memcpy (0.41 of the time), 7 more of
/// OpenVINO's 5-D space-to-batch with two blocked axes of 64- to 128-byte
/// units (79 to 101 MiB), 1.7-2.2 -> 0.9-1.0x (0.41-0.54), and the 37
/// streamed gathers of such rows in broad seeds 26 and 801-810 and the
/// power-of-two seeds 26 and 27, 0.985 of the time, 7 faster by 5% or
/// more (TF space-to-batch-nd of 96-byte units by 2, 57 MiB, 1.06 ->
/// 0.85x), 4 slower by 5-14% in that run and by at most 1% in a second
/// (6 runs). Where the hardware prefetchers alone do better, the fetch
/// costs a few per cent; where they fall behind, it halves the time.
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
        let along = fetches_along(n, ss, unit);
        let ahead = (!along).then(sweep_row);
        let next = (UNITS_AHEAD as isize).wrapping_mul(ss);
        let (mut s, mut d) = (src, dst);
        for i in 0..n {
            if let Some(a) = ahead {
                prefetch(a.wrapping_add(i * unit), unit);
            }
            if along && i + UNITS_AHEAD < n {
                prefetch(s.wrapping_offset(next), unit);
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

/// Copies `len` bytes (a multiple of 16) from `src` to the 16-byte-aligned
/// `dst` with streaming stores.
///
/// # Safety
/// `len` bytes readable at `src` and writable at `dst`, which is 16-byte
/// aligned.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn stream_vectors(src: *const u8, dst: *mut u8, len: usize) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
    for k in (0..len).step_by(16) {
        // SAFETY: 16 of the caller's bytes on both sides, at a
        // 16-byte-aligned destination; SSE2 is baseline on x86_64.
        unsafe { _mm_stream_si128(dst.add(k).cast::<__m128i>(), _mm_loadu_si128(src.add(k).cast::<__m128i>())) };
    }
}

/// Streams `rows` whole rows of a grid of
/// [`streams_rows`](super::stream::streams_rows) of `N` units of `U` bytes:
/// row `i`'s unit `k` from `src + i * U + k * ss0` to `dst + (i * N + k) *
/// U`. For short units, whose rows cost more in bookkeeping than in stores
/// when taken one bound at a time. Where `fetch` (see
/// [`fetches_streams`](super::stream::fetches_streams)), each of the `N`
/// source streams is fetched [`STREAM_AHEAD`] bytes ahead, every line of it:
/// once a line where `U` divides a line, else every row (5 NHWC
/// space-to-depths of 48-byte units near enough to fetch, on an AMD EPYC
/// (Zen 5), one thread, 6 alternated runs: 0.78 of the time unfetched,
/// against 0.82 fetching one row in four, which left a line in three
/// unfetched).
///
/// # Safety
/// Every unit readable at its source and writable at its destination;
/// `dst` 16-byte aligned.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn whole_rows<const U: usize, const N: usize>(
    rows: usize,
    src: *const u8,
    ss0: isize,
    dst: *mut u8,
    fetch: bool,
) {
    let (mut s, mut d) = (src, dst);
    for i in 0..rows {
        // The rows whose unit ends on or past a line boundary counted from
        // the first row: for units that divide a line (16, 32, 64 bytes),
        // one row a line, whose fetches, each a line on from the last,
        // take every line of the stream once, whatever its alignment.
        // Units that do not (48 bytes) fetch every row: fetches at most a
        // unit apart take every line, some twice.
        if fetch && ((i * U) % LINE + U >= LINE || !LINE.is_multiple_of(U)) {
            for k in 0..N {
                // The last byte of the unit `STREAM_AHEAD` bytes on along
                // stream `k`.
                prefetch(s.wrapping_offset(k as isize * ss0).wrapping_add(STREAM_AHEAD + U - 1), 1);
            }
        }
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
pub(super) unsafe fn through_stage(
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
            copy_run(m, from, ss, stage.ptr(), unit as isize, unit, Mode { nt: false, isa, fetch: false });
        }
        out(stage.ptr(), done, m * unit);
        done += m;
    }
}

/// Whether a streaming gather of `n` units of `unit` bytes, `ss` apart in
/// the source, fetches each unit [`UNITS_AHEAD`] units ahead along the
/// row, in place of [`sweep`]: units a page or more apart, each on pages
/// of its own (no hardware prefetcher crosses a page), at least a line
/// long, in rows of more than twice that distance. These are transposes'
/// rows: each takes one unit from each of many source rows, and the next
/// row the unit beside it. The sweep reads the source in its own order,
/// a row's bytes a row: it fetches lines that such rows reach only after
/// many more rows, which the caches have let go where the rows span
/// megabytes, while the lines the rows read next go unfetched.
///
/// Measured on an AMD EPYC (Zen 3, AVX2), one thread, 3 alternated runs,
/// each workload's best, ratio to memcpy swept -> fetched along the row:
/// the 21 streamed gathers of such rows among HPTT's 57 transposes
/// (`shared/bench/transpose.json`: 4), 512 numpy and einops workloads of
/// broad seeds 803-810 (2), 60 numpy transposes of 32- to 1,792-byte units
/// drawn at random (14) and a numpy `1, 0, 2` of 224-byte units: 2.38 ->
/// 1.65x memcpy, 0.69 of the time, none slower by more than 5% (HPTT's
/// `[48, 28, 28, 48, 32]` by `1, 3, 2, 0, 4`, 256-byte units from 48
/// rows, 2.57 -> 1.62x; a numpy `1, 0, 2` of 96-byte units from 513 rows,
/// 2.00 -> 1.04x; the least, HPTT's T45, 128-byte units from 103 rows,
/// 3.50 -> 3.45x). The loop is sensitive to where its code lands: probe
/// builds of the same loop measured T45 at 2.0-2.7x and T43 at 1.4x
/// (2.0x here), and lost on others. In one of them, 4 units ahead took
/// 0.81 of the time swept, 8 0.77, 16 0.81 (rows of 32 units fetched only
/// in their second half). Held out, the 22 of 70 more drawn at random (64-
/// to 1,024-byte units): 1.88 -> 1.30x memcpy, 0.69 of the time (400 MiB of
/// 144-byte units from 211 rows, 3.71 -> 1.52x), one slower (256-byte
/// units from 19 rows, 24 MiB, 0.78 -> 0.89x). Units under a line went no
/// faster (5 more such rows, of 32 and 48 bytes, in that probe build: 0.97
/// to 1.46 the time). All 26 (the 21 and those 5) stored through the cache
/// instead, unfetched, took 0.93 of the time swept, 7 slower by more than
/// 5%. No
/// broad workload of seeds 26, 801 and 802, nor any of the public
/// benchmark's, has such rows.
pub(super) fn fetches_along(n: usize, ss: isize, unit: usize) -> bool {
    ss.unsigned_abs() >= PAGE && unit >= LINE && n > 2 * UNITS_AHEAD
}

/// How many units ahead along the row [`fetches_along`] fetches (4 and 16
/// measured slower: see there).
pub(super) const UNITS_AHEAD: usize = 8;

/// How far ahead along each of its source streams a streamed grid that
/// [`fetches_streams`](super::stream::fetches_streams) fetches: 32 lines.
pub(super) const STREAM_AHEAD: usize = 2 << 10;

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
pub(super) fn sweep(src: *const u8, span: usize, bytes: usize) -> *const u8 {
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
