//! The permutes' x86 kernels (AVX512-VBMI): [`interleave`], in plain and
//! wide steps, and [`deinterleave`], a permute a stream or grouped into
//! lanes. What they do is told in [`super`]'s docs.
//!
//! Layer: kernels; a part of [`permute`](super).

use std::arch::x86_64::*;

use arrayvec::ArrayVec;

use super::{
    deinterleaves, interleave_units, interleaves_wider, loads_plain, loads_wide, plain_indices, slot, wide_indices,
    wide_slot, Rows, INDICES, MAX_INTERLEAVE_UNIT, MAX_STREAMS, STEP, WIDE_STEP,
};
use crate::engine::arch::mem::{lanes, prefetch, FETCH_AHEAD};
use crate::engine::arch::vector::{high_lanes, permute_four};

/// A masked load of a step: the lanes `mask` of one register (`mask[0]`
/// in a whole step, `mask[1]` in the last, if it is not) from the bytes
/// at `at` from the step's start in stream 0 (its stream's bytes in
/// those lanes).
#[derive(Clone, Copy)]
struct Load {
    at: isize,
    mask: [u64; 2],
}

/// [`super::run`]'s interleave, with the checks done: `2 <= b <= MAX_STREAMS`,
/// and `unit <= MAX_INTERLEAVE_UNIT` with a [`slot`] of at least a unit,
/// or [`interleaves_wider`] (units up to `MAX_SLOT_UNIT` one a slot; in 9
/// to 16 streams only rows of a wide slot, every step wide).
///
/// # Safety
/// As [`super::run`]; the CPU has AVX-512F, BW and VBMI.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn interleave(rows: Rows, n: usize, b: usize, unit: usize, src: *const u8, ss: isize, dst: *mut u8) {
    // A real check: the tables below hold MAX_STREAMS streams and the
    // units the permutes take (a step then holds at least one group:
    // a slot holds a unit, or a wide slot does and every step is wide).
    assert!(
        (2..=MAX_STREAMS).contains(&b)
            && ((1..=MAX_INTERLEAVE_UNIT).contains(&unit) && slot(b, unit) >= unit || interleaves_wider(b, unit, n)),
        "{b} streams of {n} {unit}-byte units"
    );
    let (k, slot) = (interleave_units(b, unit), slot(b, unit));
    let (len, out) = (k * unit, b * k * unit);
    if loads_wide(b, unit) && n.saturating_mul(unit) >= wide_slot(b) {
        // SAFETY: forwarded; the wide slot is 8 or 16 bytes
        // (`wide_slot`, 9 to 32 streams), at least a unit (`loads_wide`),
        // and a stream's row at least one.
        unsafe {
            match wide_slot(b) {
                16 => wide::<16>(rows, n, b, unit, src, ss, dst),
                _ => wide::<8>(rows, n, b, unit, src, ss, dst),
            }
        }
        return;
    }
    if loads_plain(b) && n * unit >= slot {
        // SAFETY: forwarded; the slot is 4, 8 or 16 bytes (`slot`), at
        // least a unit (the check above: a unit a slot does not hold went
        // wide), and a stream's row at least a slot.
        unsafe {
            match slot {
                16 => plain::<16>(rows, n, b, unit, src, ss, dst),
                8 => plain::<8>(rows, n, b, unit, src, ss, dst),
                _ => plain::<4>(rows, n, b, unit, src, ss, dst),
            }
        }
        return;
    }
    // The last step's units, if a whole step does not end the row: its
    // loads masked to them (lane `t` of a load is its stream's byte `t
    // + at`), its stores to their groups.
    let (steps, last) = (n / k, n % k);
    // The loads of each register: stream `j`'s bytes are bytes
    // `j * slot..j * slot + len` of the two registers; at most one
    // stream straddles them, so each has at most `b` loads and both
    // together at most `b + 1`.
    let mut loads: [ArrayVec<Load, MAX_STREAMS>; 2] = [ArrayVec::new(), ArrayVec::new()];
    for j in 0..b {
        let (lo, hi) = (j * slot, j * slot + len);
        for (loads, base) in loads.iter_mut().zip([0, 64]) {
            let (from, to) = (lo.max(base), hi.min(base + 64));
            if from < to {
                // Lane `t` of the register is the stream's byte `at + t`.
                let at = base as isize - lo as isize;
                let (whole, upto) = (lanes(from - base, to - base), ((last * unit) as isize - at).clamp(0, 64));
                let mask = [whole, whole & lanes(0, upto as usize)];
                loads.push(Load { at: (j as isize).wrapping_mul(ss).wrapping_add(at), mask });
            }
        }
    }
    let idx = plain_indices(b, unit);
    // The store masks of a whole step and of the last.
    let stores = [first_bytes::<2>(out), first_bytes::<2>(last * b * unit)];
    // SAFETY: the loads touch only the lanes of their masks: the bytes
    // of a stream's `k` units from the step's start (inside the row:
    // `steps * k <= n`), or in the last step of its `last` units; the
    // stores only the step's `out` bytes of the destination, or the
    // last step's `last` groups (caller).
    unsafe {
        let idx = [_mm512_loadu_si512(idx.as_ptr().cast()), _mm512_loadu_si512(idx[64..].as_ptr().cast())];
        // The whole steps, then the last one masked (no closure, whose
        // intrinsics the compiler may leave as calls: `.ci/inlined`).
        for r in 0..rows.count {
            let (s, d) = rows.at(r, src, dst);
            for i in 0..steps + usize::from(last > 0) {
                let which = usize::from(i >= steps);
                let (from, to) = (s.wrapping_add(i * len), d.wrapping_add(i * out));
                // Zero-masked loads ORed together (their lanes are
                // disjoint): independent of one another. Merged into
                // the register, each load waited for the last, a chain
                // of `b` loads a step. Measured on the broad workloads
                // whose tiles these interleaves take (seeds 26, 801
                // and 802: 25, 28 and 31 of them), one thread, 3
                // alternated runs, time after over before: 0.917,
                // 0.893 and 0.924, none slower by 10%; TF NCHW
                // depth-to-space of uint8 by 6, 0.095 -> 0.081 ms.
                let mut v = [_mm512_setzero_si512(); 2];
                for (v, loads) in v.iter_mut().zip(&loads) {
                    for l in loads {
                        let part = _mm512_maskz_loadu_epi8(l.mask[which], from.wrapping_offset(l.at).cast());
                        *v = _mm512_or_si512(*v, part);
                    }
                }
                let store = stores[which];
                let first = _mm512_permutex2var_epi8(v[0], idx[0], v[1]);
                _mm512_mask_storeu_epi8(to.cast(), store[0], first);
                if store[1] != 0 {
                    let second = _mm512_permutex2var_epi8(v[0], idx[1], v[1]);
                    _mm512_mask_storeu_epi8(to.wrapping_add(64).cast(), store[1], second);
                }
            }
        }
    }
}

/// [`interleave`] of rows whose streams hold at least a slot (`n *
/// unit >= S`), every step's slot of each stream by one plain load of
/// `S` bytes: the steps whose loads end inside the row, then, if units
/// are left, one step of the last `k` units, whose loads end at the
/// row's end (the slot's units then `S - k * unit` bytes in, where its
/// indices look), over units the last one moved (the same bytes again).
///
/// # Safety
/// As [`super::run`]; `S` is [`slot`]`(b, unit)`, 4, 8 or 16, at least
/// `unit`, and `n * unit >= S`; the CPU has AVX-512F, BW and VBMI.
#[inline(always)]
unsafe fn plain<const S: usize>(rows: Rows, n: usize, b: usize, unit: usize, src: *const u8, ss: isize, dst: *mut u8) {
    let k = S / unit;
    // SAFETY: a step's loads read `S` bytes of each of the `b` streams
    // from `from`, inside the row; its stores write the `out` bytes of
    // its `k` groups from `to`, inside the row's (`row_steps`, with `n
    // * unit >= S`: caller).
    unsafe {
        let (idx, last, store) = step_indices::<2>(plain_indices(b, unit), S - k * unit, b * k * unit);
        row_steps(
            rows,
            (n, b, unit, S),
            src,
            dst,
            #[inline(always)]
            |from, to, at_end| step::<S>(from, ss, b, to, if at_end { last } else { idx }, store),
        );
    }
}

/// The masks of the first `n` bytes of `P` registers side by side.
#[inline(always)]
fn first_bytes<const P: usize>(n: usize) -> [u64; P] {
    std::array::from_fn(|q| lanes(0, n.saturating_sub(q * 64)))
}

/// An interleave step's permute indices in `P` registers (the first `P *
/// 64` bytes of `table`), the last step's (each `shift` bytes on, where
/// its units lie in their slots: [`row_steps`]), and the store masks of
/// its `out` destination bytes ([`first_bytes`]): what [`plain`] (two
/// registers) and [`wide`] (four) take out of their loops.
///
/// # Safety
/// The CPU has AVX-512F and BW.
#[inline(always)]
unsafe fn step_indices<const P: usize>(
    table: &[u8],
    shift: usize,
    out: usize,
) -> ([__m512i; P], [__m512i; P], [u64; P]) {
    let table = &table[..P * 64];
    // SAFETY: loads of `table`'s bytes (its `P * 64`, checked above) and
    // register operations (AVX-512F and BW, the caller's).
    unsafe {
        let mut idx = [_mm512_setzero_si512(); P];
        let mut last = [_mm512_setzero_si512(); P];
        let shift = _mm512_set1_epi8(shift as i8);
        for q in 0..P {
            idx[q] = _mm512_loadu_si512(table[q * 64..].as_ptr().cast());
            last[q] = _mm512_add_epi8(idx[q], shift);
        }
        (idx, last, first_bytes::<P>(out))
    }
}

/// Calls `step(from, to, at_end)` for each step of `S` bytes of each
/// stream of each of `rows` (`(n, b, unit, S)`: `b` streams of `n`
/// units of `unit` bytes, `n * unit >= S`): the steps of `S / unit`
/// units from the row's start whose bytes end inside it, then, if
/// units are left, the step whose bytes end at the row's end
/// (`at_end`), over units the last one moved. `from` is stream 0's
/// first byte of the step, `to` its first group's destination: the `S`
/// bytes from `from` end inside each stream's row, and the step's `S /
/// unit` groups from `to` lie inside the row's `n`.
#[inline(always)]
fn row_steps(
    rows: Rows,
    (n, b, unit, slot): (usize, usize, usize, usize),
    src: *const u8,
    dst: *mut u8,
    mut step: impl FnMut(*const u8, *mut u8, bool),
) {
    let (k, end) = (slot / unit, n * unit - slot);
    for r in 0..rows.count {
        let (s, d) = rows.at(r, src, dst);
        let mut x = 0;
        while x * unit <= end {
            step(s.wrapping_add(x * unit), d.wrapping_add(x * b * unit), false);
            x += k;
        }
        if x < n {
            step(s.wrapping_add(end), d.wrapping_add((n - k) * b * unit), true);
        }
    }
}

/// [`interleave`] in wide steps ([`loads_wide`](super::loads_wide)):
/// as [`plain`], each step's slots of `S` bytes in four registers, and
/// each 64 destination bytes permuted from both pairs.
///
/// # Safety
/// As [`super::run`]; `S` is [`wide_slot`](super::wide_slot)`(b)`, 8
/// or 16, at least `unit`, and `n * unit >= S`; the CPU has AVX-512F,
/// BW and VBMI.
#[inline(always)]
unsafe fn wide<const S: usize>(rows: Rows, n: usize, b: usize, unit: usize, src: *const u8, ss: isize, dst: *mut u8) {
    let k = S / unit;
    // SAFETY: as `plain`'s: a step's loads read `S` bytes of each of
    // the `b` streams from `from`, inside the row; its stores write the
    // `out` bytes of its `k` groups from `to`, inside the row's
    // (`row_steps`, with `n * unit >= S`: caller).
    unsafe {
        // Each 64 destination bytes of a step: their indices (the last
        // step's `S - k * unit` bytes into their slots, within them: the
        // high pair's lanes stay its own), their stores' masks, and the
        // lanes they take from the high pair.
        let (idx, last, store) = step_indices::<4>(wide_indices(b, unit), S - k * unit, b * k * unit);
        let mut high = [0u64; WIDE_STEP / 64];
        for q in 0..WIDE_STEP / 64 {
            high[q] = high_lanes(idx[q]);
        }
        row_steps(
            rows,
            (n, b, unit, S),
            src,
            dst,
            #[inline(always)]
            |from, to, at_end| wide_step::<S>(from, ss, b, to, if at_end { &last } else { &idx }, &high, &store),
        );
    }
}

/// One step of [`wide`]: the slots of `b` streams at `from` in four
/// registers, each 64 destination bytes at `to` the permutes of both
/// pairs by `idx`, blended where `high` says, stored under `store`'s
/// masks (none past the last).
///
/// # Safety
/// As [`half`]; the masked bytes at `to` writable; the CPU has
/// AVX-512F, BW and VBMI.
#[inline(always)]
unsafe fn wide_step<const S: usize>(
    from: *const u8,
    ss: isize,
    b: usize,
    to: *mut u8,
    idx: &[__m512i; WIDE_STEP / 64],
    high: &[u64; WIDE_STEP / 64],
    store: &[u64; WIDE_STEP / 64],
) {
    let per = 64 / S;
    // SAFETY: forwarded (registers of streams at or past `b` are zero,
    // not loaded).
    unsafe {
        let v = [
            half::<S>(from, ss, b, 0),
            half::<S>(from, ss, b, per),
            if b > 2 * per { half::<S>(from, ss, b, 2 * per) } else { _mm512_setzero_si512() },
            if b > 3 * per { half::<S>(from, ss, b, 3 * per) } else { _mm512_setzero_si512() },
        ];
        for q in 0..WIDE_STEP / 64 {
            if store[q] == 0 {
                break;
            }
            let part = permute_four(&v, idx[q], high[q]);
            _mm512_mask_storeu_epi8(to.wrapping_add(q * 64).cast(), store[q], part);
        }
    }
}

/// One step of [`plain`]: the slots of `b` streams at `from`, permuted
/// by `idx`, stored to `to` under the masks of its first and second 64
/// bytes.
///
/// # Safety
/// As [`half`]; the masked bytes at `to` writable; the CPU has
/// AVX-512F, BW and VBMI.
#[inline(always)]
unsafe fn step<const S: usize>(from: *const u8, ss: isize, b: usize, to: *mut u8, idx: [__m512i; 2], store: [u64; 2]) {
    // SAFETY: forwarded.
    unsafe {
        let lo = half::<S>(from, ss, b, 0);
        let hi = if b * S > 64 { half::<S>(from, ss, b, 64 / S) } else { _mm512_setzero_si512() };
        _mm512_mask_storeu_epi8(to.cast(), store[0], _mm512_permutex2var_epi8(lo, idx[0], hi));
        if store[1] != 0 {
            let second = _mm512_permutex2var_epi8(lo, idx[1], hi);
            _mm512_mask_storeu_epi8(to.wrapping_add(64).cast(), store[1], second);
        }
    }
}

/// 64 bytes of a step: the `S`-byte slots of streams `first..first +
/// 64 / S` at `from` (stream `j` at `j * ss`), those at or past `b`
/// zero (not loaded).
///
/// # Safety
/// Those streams' `S` bytes at `from` are readable; the CPU has
/// AVX-512F.
#[inline(always)]
unsafe fn half<const S: usize>(from: *const u8, ss: isize, b: usize, first: usize) -> __m512i {
    let per = 16 / S;
    // SAFETY: forwarded.
    unsafe {
        let lo = _mm256_castsi128_si256(quarter::<S>(from, ss, b, first));
        let lo = _mm256_inserti128_si256::<1>(lo, quarter::<S>(from, ss, b, first + per));
        let hi = _mm256_castsi128_si256(quarter::<S>(from, ss, b, first + 2 * per));
        let hi = _mm256_inserti128_si256::<1>(hi, quarter::<S>(from, ss, b, first + 3 * per));
        _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi)
    }
}

/// 16 bytes of a step: the slots of streams `first..first + 16 / S`,
/// those at or past `b` zero.
///
/// # Safety
/// As [`half`].
#[inline(always)]
unsafe fn quarter<const S: usize>(from: *const u8, ss: isize, b: usize, first: usize) -> __m128i {
    // SAFETY: forwarded.
    unsafe {
        match S {
            16 => load_slot::<S>(from, ss, b, first),
            8 => _mm_unpacklo_epi64(load_slot::<S>(from, ss, b, first), load_slot::<S>(from, ss, b, first + 1)),
            _ => _mm_unpacklo_epi64(
                _mm_unpacklo_epi32(load_slot::<S>(from, ss, b, first), load_slot::<S>(from, ss, b, first + 1)),
                _mm_unpacklo_epi32(load_slot::<S>(from, ss, b, first + 2), load_slot::<S>(from, ss, b, first + 3)),
            ),
        }
    }
}

/// Stream `j`'s slot of `S` bytes at `from`, in the low bytes, or zero
/// (nothing loaded) if `j >= b`.
///
/// # Safety
/// As [`half`].
#[inline(always)]
unsafe fn load_slot<const S: usize>(from: *const u8, ss: isize, b: usize, j: usize) -> __m128i {
    let at = from.wrapping_offset((j as isize).wrapping_mul(ss));
    // SAFETY: forwarded; only streams below `b` are read.
    unsafe {
        match () {
            _ if j >= b => _mm_setzero_si128(),
            _ if S == 16 => _mm_loadu_si128(at.cast()),
            _ if S == 8 => _mm_loadl_epi64(at.cast()),
            _ => _mm_cvtsi32_si128(at.cast::<i32>().read_unaligned()),
        }
    }
}

/// [`super::run`]'s deinterleave, with the checks done: `2 <= b <= MAX_STREAMS`,
/// `deinterleaves(b, unit)`.
///
/// # Safety
/// As [`super::run`]; the CPU has AVX-512F, BW and VBMI.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn deinterleave(
    rows: Rows,
    n: usize,
    b: usize,
    unit: usize,
    src: *const u8,
    dst: *mut u8,
    ds: isize,
) {
    // A real check: the tables below hold MAX_STREAMS streams and the
    // units the permutes take (a step then holds at least one group,
    // and its indices address the two registers' 128 bytes).
    assert!((2..=MAX_STREAMS).contains(&b) && deinterleaves(b, unit), "{b} streams of {unit}-byte units");
    let k = STEP / (b * unit);
    // A step's bytes of each stream, and of the source.
    let (per_stream, per_step) = (k * unit, b * k * unit);
    // Stream `j`'s indices: stream 0's plus `j * unit`.
    let first = &INDICES.deinterleave[b][unit - 1];
    let (steps, last) = (n / k, n % k);
    let row = n * b * unit;
    // Each stream's bytes this call writes, from its first row's start:
    // one run of all its rows where they continue one another, else
    // each row's own. A step's store of a stream is a plain one of
    // `wide` bytes (the next power of two from 8) wherever it ends
    // inside that run, running on into bytes a later step writes, and
    // a masked one only near the run's end. Measured against masked
    // stores throughout (one thread, 3 alternated runs, time after over
    // before) on the broad workloads whose tiles deinterleave 5 to 32
    // streams (seeds 26, 801, 802: 85, 98 and 94 of them): 0.86, 0.86
    // and 0.82, 3, 3 and 1 slower by more than 5% (the slowest TF
    // NCHW_VECT_C space-to-depth by 8, 2.4 ms, 1.11); TF NCHW
    // space-to-depth of uint8 by 12, 15-byte streams continued 29
    // times, 0.161 -> 0.097 ms. (Plain 16-byte stores of 8-byte steps,
    // float16 by 14 to 16, measured up to 1.18: hence 8-byte ones.)
    let stream = n * unit;
    let run = if rows.count > 1 && rows.ds == stream as isize { rows.count * stream } else { stream };
    let wide = per_stream.next_power_of_two().max(8);
    // A stream's bytes of a step in a lane of its own, 16 or 32 bytes
    // (see `grouped`), where they fit one; 0: one permute a stream.
    let lane = match per_stream {
        0..=16 => 16,
        17..=32 => 32,
        _ => 0,
    };
    // SAFETY: the loads touch only the step's `bytes` source bytes (a
    // whole number of groups inside the row: `steps * k <= n`), or in
    // the last step its `last` groups; the stores only each stream's
    // `len` bytes of the step, or its `last` units (caller), or, plain,
    // `wide` (grouped: `lane`) bytes from there that end inside the
    // stream's `run` bytes from its first row's start, all of which
    // this call writes (the caller's rows: `run` is their streams'
    // bytes, continued), in order: any byte past `len` is written
    // again by a later step.
    unsafe {
        let (first, next) = (_mm512_loadu_si512(first.as_ptr().cast()), _mm512_set1_epi8(unit as i8));
        let lanes_idx = lane_indices(first, lane, unit);
        // The load masks of a whole step (its `per_step` bytes) and of
        // the last (its `last` groups), taken out of the loops.
        let part = last * b * unit;
        let masks = [first_bytes::<2>(per_step), first_bytes::<2>(part)];
        // The whole steps, then the last one masked (no closure: see
        // `interleave`).
        for r in 0..rows.count {
            let (s, d) = rows.at(r, src, dst);
            // The offset of this row's streams in their runs.
            let at = if run == stream { 0 } else { r * stream };
            rows.fetch_ahead(r, src, row);
            // The steps whose every stream's lane ends inside its run
            // go grouped: step `i` where `at + i * per_stream + lane <=
            // run` (the last one too, its lanes past its units written
            // again by the next row's steps).
            let all = steps + usize::from(last > 0);
            let grouped_steps = match lane {
                0 => 0,
                _ if at + lane > run => 0,
                _ => ((run - at - lane) / per_stream + 1).min(all),
            };
            for i in 0..all {
                let (mask, len) = if i < steps { (masks[0], per_stream) } else { (masks[1], last * unit) };
                let (from, to) = (s.wrapping_add(i * per_step), d.wrapping_add(i * per_stream));
                // The source `FETCH_AHEAD` on (the loads are masked: see
                // there). Measured against no fetch, one thread, 3
                // alternated runs, the operator's time after over before,
                // on the broad workloads whose tiles this deinterleaves:
                // seeds 26 and 801, 85 of them, 0.84 (16 MiB and more, 40:
                // 0.78; 1 to 16 MiB, 22: 0.79; under 1 MiB 1.01), 15
                // slower by more than 5% (the most an einops
                // space-to-depth of 58 MiB, 1.42, whose block rows read
                // the source in passes); held out, seeds 804 to 806, 119,
                // 0.79, 81 faster, 14 slower. 4 KiB ahead: 0.82 and 0.88
                // (29 slower held out).
                prefetch(from.wrapping_add(FETCH_AHEAD), STEP);
                let lo = _mm512_maskz_loadu_epi8(mask[0], from.cast());
                let hi = _mm512_maskz_loadu_epi8(mask[1], from.wrapping_add(64).cast());
                if i < grouped_steps {
                    grouped(lo, hi, lanes_idx, lane, b, unit, to, ds);
                    continue;
                }
                let plain = at + i * per_stream + wide <= run;
                let mut idx = first;
                for j in 0..b {
                    let v = _mm512_permutex2var_epi8(lo, idx, hi);
                    let to = to.wrapping_offset(j as isize * ds);
                    match (plain, wide) {
                        (true, 8) => _mm_storel_epi64(to.cast(), _mm512_castsi512_si128(v)),
                        (true, 16) => _mm_storeu_si128(to.cast(), _mm512_castsi512_si128(v)),
                        (true, 32) => _mm256_storeu_si256(to.cast(), _mm512_castsi512_si256(v)),
                        (true, _) => _mm512_storeu_si512(to.cast(), v),
                        (false, _) => _mm512_mask_storeu_epi8(to.cast(), lanes(0, len), v),
                    }
                    idx = _mm512_add_epi8(idx, next);
                }
            }
        }
    }
}

/// The permute indices of [`grouped`]'s first register: stream `l`'s
/// step bytes (stream 0's indices `first` plus `l * unit`) in lane `l`
/// of `lane` bytes (16: streams 0 to 3; 32: streams 0 and 1). Any
/// other `lane`: `first`, unused.
///
/// # Safety
/// The CPU has AVX-512F.
#[inline(always)]
unsafe fn lane_indices(first: __m512i, lane: usize, unit: usize) -> __m512i {
    // `unit` in every byte of a quadword (units of at most 6 bytes, so
    // `3 * unit` fits a byte).
    let w = (unit as u64 * 0x0101_0101_0101_0101) as i64;
    // SAFETY: register operations only; the CPU has AVX-512F (caller).
    unsafe {
        match lane {
            16 => _mm512_add_epi8(
                _mm512_broadcast_i32x4(_mm512_castsi512_si128(first)),
                _mm512_set_epi64(3 * w, 3 * w, 2 * w, 2 * w, w, w, 0, 0),
            ),
            32 => _mm512_add_epi8(
                _mm512_broadcast_i64x4(_mm512_castsi512_si256(first)),
                _mm512_set_epi64(w, w, w, w, 0, 0, 0, 0),
            ),
            _ => first,
        }
    }
}

/// One step of [`deinterleave`] with `64 / lane` streams to a permute:
/// stream `j`'s bytes of the step (from `lo` and `hi`) put in a lane of
/// their own (`lane` 16 or 32 bytes; `idx` the first register's
/// indices, [`lane_indices`]), each lane stored whole by a plain store
/// to `to + j * ds`: a permute a stream moved its `k * unit` bytes (8
/// to 32) alone, and the permutes and their index adds were most of a
/// step's instructions.
///
/// Measured against a permute a stream (one thread, ratio to memcpy,
/// alternated runs, each workload's best, Intel Xeon with VBMI) on the
/// broad workloads whose deinterleaves this reaches: seed 26's 69, 4
/// runs, 2.05 -> 1.83 (median of runs 0.86 the time; ONNX
/// space-to-depth of 3-byte units by 8, 0.2 MiB, 5.0 -> 3.2; those of
/// 16 MiB and more 1.47 -> 1.26); seeds 801 and 802's 166, 6 runs,
/// 1.95 -> 1.78, 10 slower by 8% or more (at most 1.21, a pixel
/// unshuffle of 2.9 MiB). The 640 of seed 26: 0.988.
///
/// A step of 8 bytes a stream goes in 16-byte lanes, stored whole,
/// although plain 16-byte stores of such steps measured slower where a
/// permute made each (the note at `deinterleave`'s `wide`): here they
/// come with a quarter of the permutes. Of the workloads above, the 14
/// of float16: 0.94 the time (best of runs), the slowest 1.11.
///
/// # Safety
/// `lane` bytes writable at each of the `b` streams' `to + j * ds`; the
/// CPU has AVX-512F, BW and VBMI.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn grouped(lo: __m512i, hi: __m512i, idx: __m512i, lane: usize, b: usize, unit: usize, to: *mut u8, ds: isize) {
    let per = 64 / lane;
    let each = ds.wrapping_mul(per as isize);
    let (mut idx, mut to) = (idx, to);
    // SAFETY: each store writes `lane` bytes at a stream `j < b`'s
    // `to + j * ds` (caller): `to` is stream `j`'s in the loops, and
    // the last register stores only its streams below `b`.
    unsafe {
        let next = _mm512_set1_epi8((per * unit) as i8);
        for _ in 0..b / per {
            store_lanes(_mm512_permutex2var_epi8(lo, idx, hi), lane, to, ds, per);
            idx = _mm512_add_epi8(idx, next);
            to = to.wrapping_offset(each);
        }
        if !b.is_multiple_of(per) {
            store_lanes(_mm512_permutex2var_epi8(lo, idx, hi), lane, to, ds, b % per);
        }
    }
}

/// The first `n` lanes of `v` (`lane` 16 or 32 bytes, no more lanes
/// than `v` holds), lane `l` to `to + l * ds`.
///
/// # Safety
/// `lane` bytes writable at each of those; the CPU has AVX-512F.
#[inline(always)]
unsafe fn store_lanes(v: __m512i, lane: usize, to: *mut u8, ds: isize, n: usize) {
    let at = |l: isize| to.wrapping_offset(l.wrapping_mul(ds));
    // SAFETY: forwarded.
    unsafe {
        if lane == 16 {
            _mm_storeu_si128(to.cast(), _mm512_castsi512_si128(v));
            if n > 1 {
                _mm_storeu_si128(at(1).cast(), _mm512_extracti32x4_epi32::<1>(v));
            }
            if n > 2 {
                _mm_storeu_si128(at(2).cast(), _mm512_extracti32x4_epi32::<2>(v));
            }
            if n > 3 {
                _mm_storeu_si128(at(3).cast(), _mm512_extracti32x4_epi32::<3>(v));
            }
        } else {
            _mm256_storeu_si256(to.cast(), _mm512_castsi512_si256(v));
            if n > 1 {
                _mm256_storeu_si256(at(1).cast(), _mm512_extracti64x4_epi64::<1>(v));
            }
        }
    }
}
