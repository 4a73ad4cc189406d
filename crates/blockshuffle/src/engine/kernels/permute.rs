//! Interleaves and deinterleaves by byte permutes (AVX512-VBMI): `b`
//! source streams of units of up to 4 bytes (8 in at most 16 streams, 16
//! one a slot in 5 to 16: [`MAX_SLOT_UNIT`]) into
//! one contiguous destination run, and such a run of units of up to 4
//! bytes (6 in at most 10 streams) back into streams, for the shapes no
//! kernel of their own takes: 5 to 32 streams (NCHW depth-to-space and
//! space-to-depth, pixel shuffle and unshuffle by blocks of 5 to 16 and
//! more).
//!
//! An interleaving step reads `k` units of every stream into two
//! registers side by side (128 bytes: stream `j`'s in its slot, from byte
//! `j * slot`; see [`slot`]), each stream's by one plain load of its slot,
//! or in a row shorter than a slot by masked loads that touch only its
//! bytes, and writes the `k` groups of `b` units they make with one or two
//! two-register byte permutes (`vpermt2b`), whose indices depend only on
//! `b` and the unit and are built at compile time. In 9 streams or more,
//! rows of at least twice a slot take wide steps: four registers, each
//! stream's twice the bytes, each 64 destination bytes permuted from both
//! pairs and blended (see [`loads_wide`]).
//!
//! A deinterleaving step reads 128 bytes of whole groups and writes each
//! stream's `k` units with one store: a plain one of 8, 16, 32 or 64 bytes
//! where it ends inside the bytes the call writes of that stream (the
//! bytes past the step's are written again by the next), a masked one
//! otherwise. Where a stream's units of a step fit 16 or 32 bytes, one
//! permute puts 4 or 2 streams' side by side, each in a lane of its own
//! that is stored whole; otherwise each stream takes a permute (stream
//! 0's indices plus `j * unit`).
//!
//! What they buy is measured in [`takes`].
//!
//! Layer: kernels; imports [`nest`](super::nest) and arch.

use super::nest::Rows;
use crate::engine::arch::Isa;

/// The most streams [`run`] takes: a step then moves at least 4 bytes of
/// each stream, a load (interleave) or store (deinterleave) of each.
pub(crate) const MAX_STREAMS: usize = 32;

/// The bytes of a step: two 64-byte registers.
const STEP: usize = 128;

/// The widest unit the permutes take, both ways (interleaves in slots of 8
/// and 16 bytes: [`MAX_INTERLEAVE_UNIT`], and one a slot of 16 bytes:
/// [`MAX_SLOT_UNIT`]; deinterleaves two a step: [`MAX_DEINTERLEAVE_UNIT`]):
/// otherwise wider units moved one at a time as fast (each a single move),
/// a step then moving too few bytes of each stream.
///
/// - Interleaves: units of 3 and 4 bytes in 5 streams or more, loaded
///   plain ([`loads_plain`]). (With masked loads, before the indices were
///   built at compile time, 6-, 8-, 12-, 16- and 32-byte units measured
///   slower than `tile`'s wide moves, up to 3.5x the time; loaded plain,
///   units of 5 to 8 bytes are faster: [`MAX_INTERLEAVE_UNIT`].)
/// - Deinterleaves: the 36 broad workloads (seed 26) of 3- and 4-byte
///   units they reach, 5 alternated runs, 4.65 -> 3.82x memcpy (ONNX
///   space-to-depth of 3-byte units by 6, 19 -> 4.5; NCHW_VECT_C
///   space-to-depth of uint8 by 8, 8.1 -> 3.5); the worst, float32 pixel
///   unshuffle by 8 of 0.4 MiB, 3.4 -> 4.0.
pub(crate) const MAX_UNIT: usize = 4;

/// The widest unit the interleaves take in slots of their own size (the
/// tables [`Indices::interleave`] and [`Indices::wide`]), in 5 to 16
/// streams: a slot (see [`slot`]) of 8 or 16 bytes then holds a unit or
/// two of each stream. (Wider ones go one a slot: [`MAX_SLOT_UNIT`].)
/// Measured against `tile`'s moves of a unit at a time (one thread, 3
/// alternated runs, time after over before) on the broad workloads whose
/// tiles interleave 5 to 16 streams of 5- to 8-byte units (seeds 26, 801
/// and 802: 28, 24 and 18 of them): 0.81, 0.89 and 0.84; two units a slot
/// (5 to 8 streams) 0.68 for 6-byte units, 0.74 for 8; one (9 to 16) 0.89
/// and 0.91, 4 of the 53 slower by 14% or more (an einops rearrange of 16
/// streams of float64, 8 units long, 1.2 MiB: 2.4 -> 3.6x memcpy).
const MAX_INTERLEAVE_UNIT: usize = 8;

/// The widest unit the interleaves take one a slot: units of 9 to 16
/// bytes in 5 to 16 streams, whose slots of 16 bytes (plain in 5 to 8
/// streams, wide in 9 to 16: [`slot`], [`wide_slot`]) hold one unit each.
/// A step then loads a unit of each stream, one plain load, as the
/// tile's moves of a unit at a time do, but stores whole vectors of the
/// interleaved units, where those stored each unit alone.
///
/// Measured against the plans before (of the 221, 172 the tile's own
/// kernels, 42 rows of units moved one at a time, 4 gathered blocks and 3
/// the transpose's squares), one thread, 4 alternated runs, the geomean of
/// the operator's time after over before (and of the ratio to memcpy),
/// on the broad workloads whose plans it changes: seeds 26 and 801 to 803,
/// 82 of them, 0.79 (2.31 -> 1.91x memcpy), 66 faster by more than 5%, 4
/// slower; held out, seeds 804 to
/// 810, 139, 0.80 (2.16 -> 1.76x), 107 faster, 9 slower. By kind (both
/// sets): 9- to 15-byte units in plain steps 0.69 and 0.72, in wide ones
/// 0.82 and 0.78; 16-byte units 0.69 and 0.68, and 0.86 and 0.94. PyTorch
/// pixel shuffle of 12-byte units by 16 (12.8 MiB), 5.1 -> 1.7x memcpy;
/// ONNX depth-to-space of complex128 by 13, 3.1 -> 1.35x. The 13 slower
/// rerun 8 times: 4 still slower by more than 5%, the most 1.13 (PyTorch
/// pixel shuffle of complex128 by 12, rows of 4 units, 0.84 MiB).
const MAX_SLOT_UNIT: usize = 16;

/// The slot of a unit over [`MAX_INTERLEAVE_UNIT`] bytes, plain or wide:
/// one unit of it.
const UNIT_SLOT: usize = 16;

// The one table of such units serves both: plain slots of 5 to 8 streams
// and wide ones of 9 to 16 are all `UNIT_SLOT` bytes, and hold a unit.
const _: () = assert!(
    slot(5, MAX_SLOT_UNIT) == UNIT_SLOT
        && slot(8, MAX_SLOT_UNIT) == UNIT_SLOT
        && wide_slot(9) == UNIT_SLOT
        && wide_slot(16) == UNIT_SLOT
        && MAX_SLOT_UNIT <= UNIT_SLOT
        && WIDE_STEP / UNIT_SLOT == 16
);

/// The widest unit the deinterleaves take: over [`MAX_UNIT`] bytes, where
/// a step holds two units of each stream (at most 10 streams of 6 bytes),
/// in a tile made for another reason (the planner makes no tile of them
/// for the permutes alone: see `plan::rules::choose_tile`).
///
/// Measured on the 5 broad workloads (seeds 26, 801 and 802) whose tiles
/// of 6-byte units this takes from the tile's own kernels (a unit at a
/// time), on an Intel Xeon, 5 alternated runs, ratio to memcpy: 3.92 ->
/// 2.54, none slower (ONNX space-to-depth of 6-byte units by 5, 0.19 MiB,
/// 8.2 -> 3.6; OpenVINO's by 6, 0.26 MiB, 7.5 -> 4.0). Not wider: 8-byte
/// units (5 to 14 streams of float64, 16 workloads) 1.29 -> 1.59; nor
/// 6-byte units in 11 streams or more, one unit of each a step (8
/// workloads, those over 1 MiB 1.12 times the time).
const MAX_DEINTERLEAVE_UNIT: usize = 6;

/// Whether the deinterleaves take `b` streams of `unit`-byte units: units
/// of at most [`MAX_UNIT`] bytes, or of at most [`MAX_DEINTERLEAVE_UNIT`]
/// where a step holds two units of each stream.
const fn deinterleaves(b: usize, unit: usize) -> bool {
    unit >= 1 && (unit <= MAX_UNIT || unit <= MAX_DEINTERLEAVE_UNIT && 2 * b * unit <= STEP)
}

/// A step's permute indices for every stream count and unit the permutes
/// take, built at compile time: built on each call, they were most of the
/// time of calls of a few short rows (PyTorch pixel shuffle of uint8 by 7,
/// 13-byte streams, 1.2 MiB, 86% of its time in the interleave, most of
/// that building its indices). Measured with the loads' masks built
/// without zeroing tables, on the 75 broad workloads (seed 26) that the
/// permutes run, 4 alternated runs, ratio to memcpy: below 1 MiB (26)
/// 6.98 -> 5.65, 1 to 16 MiB (24) 3.69 -> 3.26, 16 MiB and more (25) 1.96
/// -> 1.98; that pixel shuffle 20.1 -> 8.9, TF NCHW depth-to-space of
/// uint8 by 5 (0.6 MiB) 13.8 -> 4.6.
struct Indices {
    /// `interleave[b][unit - 1]`: destination byte `(x * b + j) * unit + t`
    /// of a step (byte `t` of unit `x` of stream `j`) comes from byte
    /// `j * slot(b, unit) + x * unit + t` of the two registers, for the
    /// `interleave_units(b, unit)` units of each stream in a step.
    interleave: [[[u8; STEP]; MAX_INTERLEAVE_UNIT]; MAX_STREAMS + 1],
    /// `deinterleave[b][unit - 1]`: byte `t` of stream 0's part of a step
    /// (byte `t % unit` of its unit `t / unit`) comes from byte
    /// `(t / unit) * b * unit + t % unit` of the two registers; stream
    /// `j`'s are these plus `j * unit`.
    deinterleave: [[[u8; 64]; MAX_DEINTERLEAVE_UNIT]; MAX_STREAMS + 1],
    /// `wide[b - 9][unit - 1]`: as `interleave` for a wide step (see
    /// [`loads_wide`]), stream `j`'s units from byte `j * wide_slot(b)` of
    /// the four registers.
    wide: [[[u8; WIDE_STEP]; MAX_INTERLEAVE_UNIT]; MAX_STREAMS - 8],
    /// `single[unit - 9]`: as `interleave` and `wide` for units over
    /// [`MAX_INTERLEAVE_UNIT`] bytes, one a [`UNIT_SLOT`] of each stream
    /// (plain and wide steps alike: stream `j`'s unit from byte `j *
    /// UNIT_SLOT`), for up to 16 streams (those of fewer, its first bytes).
    single: [[u8; WIDE_STEP]; MAX_SLOT_UNIT - MAX_INTERLEAVE_UNIT],
}

static INDICES: Indices = Indices::build();

impl Indices {
    const fn build() -> Indices {
        let mut t = Indices {
            interleave: [[[0; STEP]; MAX_INTERLEAVE_UNIT]; MAX_STREAMS + 1],
            deinterleave: [[[0; 64]; MAX_DEINTERLEAVE_UNIT]; MAX_STREAMS + 1],
            wide: [[[0; WIDE_STEP]; MAX_INTERLEAVE_UNIT]; MAX_STREAMS - 8],
            single: [[0; WIDE_STEP]; MAX_SLOT_UNIT - MAX_INTERLEAVE_UNIT],
        };
        let mut unit = MAX_INTERLEAVE_UNIT + 1;
        while unit <= MAX_SLOT_UNIT {
            interleave_indices(&mut t.single[unit - MAX_INTERLEAVE_UNIT - 1], WIDE_STEP / UNIT_SLOT, unit, UNIT_SLOT);
            unit += 1;
        }
        let mut b = 2;
        while b <= MAX_STREAMS {
            let mut unit = 1;
            while unit <= MAX_INTERLEAVE_UNIT {
                interleave_indices(&mut t.interleave[b][unit - 1], b, unit, slot(b, unit));
                unit += 1;
            }
            let mut unit = 1;
            // Only the units `interleave` takes (`slot(b, unit) >= unit`).
            while unit <= MAX_INTERLEAVE_UNIT && loads_wide(b, unit) && slot(b, unit) >= unit {
                interleave_indices(&mut t.wide[b - 9][unit - 1], b, unit, wide_slot(b));
                unit += 1;
            }
            let mut unit = 1;
            while deinterleaves(b, unit) {
                let k = STEP / (b * unit);
                let mut q = 0;
                while q < k * unit {
                    t.deinterleave[b][unit - 1][q] = (q / unit * b * unit + q % unit) as u8;
                    q += 1;
                }
                unit += 1;
            }
            b += 1;
        }
        t
    }
}

/// Fills `idx` with an interleave step's indices, `b` streams of
/// `unit`-byte units in slots of `slot` bytes: destination byte `(x * b +
/// j) * unit + t` of the step (byte `t` of unit `x` of stream `j`) comes
/// from byte `j * slot + x * unit + t` of the registers side by side, for
/// the `slot / unit` units of each stream in a step.
const fn interleave_indices(idx: &mut [u8], b: usize, unit: usize, slot: usize) {
    let mut q = 0;
    while q < slot / unit * b * unit {
        let (x, j, byte) = (q / (b * unit), q % (b * unit) / unit, q % unit);
        idx[q] = (j * slot + x * unit + byte) as u8;
        q += 1;
    }
}

/// The indices of a plain step (`x86::plain`, or masked) of `b` streams of
/// `unit`-byte units that the interleaves take: [`Indices::interleave`]'s,
/// or over [`MAX_INTERLEAVE_UNIT`] bytes the first of [`Indices::single`]'s.
fn plain_indices(b: usize, unit: usize) -> &'static [u8; STEP] {
    match unit.checked_sub(MAX_INTERLEAVE_UNIT + 1) {
        None => &INDICES.interleave[b][unit - 1],
        Some(i) => INDICES.single[i].first_chunk().expect("a wide step holds a plain one"),
    }
}

/// The indices of a wide step (`x86::wide`) of `b` streams (9 to 32) of
/// `unit`-byte units that the interleaves take: [`Indices::wide`]'s, or
/// over [`MAX_INTERLEAVE_UNIT`] bytes [`Indices::single`]'s.
fn wide_indices(b: usize, unit: usize) -> &'static [u8; WIDE_STEP] {
    match unit.checked_sub(MAX_INTERLEAVE_UNIT + 1) {
        None => &INDICES.wide[b - 9][unit - 1],
        Some(i) => &INDICES.single[i],
    }
}

/// The bytes of an interleave's step that hold each stream's units (its
/// slot: stream `j`'s from byte `j * slot` of the two registers). In 5
/// streams or more ([`loads_plain`]), a power of two, `STEP / b` rounded
/// down to one: 16 bytes of each of 5 to 8 streams, 8 of 9 to 16, 4 of 17
/// to 32, of which the units of a step fill all but less than a unit.
/// Otherwise the units that fill the step.
const fn slot(b: usize, unit: usize) -> usize {
    if loads_plain(b) {
        STEP / b.next_power_of_two()
    } else {
        STEP / (b * unit) * unit
    }
}

/// The units of each stream in an interleave's step: as many as its
/// [`slot`] holds.
const fn interleave_units(b: usize, unit: usize) -> usize {
    slot(b, unit) / unit
}

/// The bytes of a wide step: four 64-byte registers.
const WIDE_STEP: usize = 256;

/// The slot of each stream in a wide step ([`loads_wide`]): `WIDE_STEP /
/// b` rounded down to a power of two, 16 bytes of each of 9 to 16
/// streams, 8 of 17 to 32, twice [`slot`].
const fn wide_slot(b: usize) -> usize {
    WIDE_STEP / b.next_power_of_two()
}

/// Whether an interleave of `b` streams of `unit`-byte units whose rows
/// hold a [`wide_slot`] of each stream takes wide steps (`x86::wide`):
/// each stream's slot by one plain load, as [`loads_plain`]'s, into four
/// registers rather than two, and each 64 destination bytes permuted
/// from both pairs (two permutes and a blend). In 9 streams or more,
/// where two registers hold 8 bytes of each stream or 4, a step was
/// mostly its loads and their inserts, one of each stream for every 8 or
/// 4 bytes (TF NCHW depth-to-space of float16 by 14, loading half the
/// streams: 0.66 of the time); wide, one for every 16 or 8.
///
/// Measured against plain steps (one thread, 4 alternated runs, the
/// operator's time after over before) on the broad workloads whose
/// interleaves take wide steps: the 311 of seeds 26 and 801 to 803,
/// 0.88 (below 16 MiB 0.84, from 16 MiB 0.94), 205 faster by more than
/// 5%; held out, the 523 of seeds 804 to 810, 0.84 (0.80 and 0.91), 410
/// faster, 17 slower (the most, TF NCHW depth-to-space of uint8 by 15,
/// rows of 31 bytes, 1.28). Rerun 8 times, 6 of the design seeds' stayed
/// slower by more than 5%: a numpy transpose of 10 streams of 3-byte
/// units, 8 units a row, in 2 wide steps where it took 4 plain (10.6
/// MiB), 1.25; OpenVINO batch-to-space of 15 streams of float16 cropped
/// on W (24.6 MiB), 1.40; 16 streams of float64 rows of 5 units, 1.08 to
/// 1.10.
const fn loads_wide(b: usize, unit: usize) -> bool {
    b > 8 && b <= MAX_STREAMS && wide_slot(b) >= unit
}

/// Whether an interleave of `b` streams loads each stream's [`slot`] of a
/// step by one plain load of its width, the slots put together into the
/// two registers by unpacks and inserts (`x86::plain`): 5 streams and
/// more (fewer have kernels of their own, `tile`'s and `shuffle`'s).
///
/// The other way to put a stream's bytes at any byte of a register, a
/// masked load of the register's width, spans two lines, and a step has
/// `b` or `b + 1` of them: in a loop of such loads alone, 13 streams of 8
/// bytes, 7.8 ns a step masked, 2.1 ns plain (AMD Zen 4). Measured (one
/// thread, 3 alternated runs, time after over before) on the broad
/// workloads whose tiles interleave 5 to 32 streams of units of up to 4
/// bytes (seeds 26, 801 and 802: 51, 51 and 58 of them; before, masked
/// loads, and 3- and 4-byte units in long streams with few units a step
/// by `tile`'s wide moves): 0.61, 0.62 and 0.59. Seed 26's, ratio to
/// memcpy by unit: 1 byte 3.04 -> 1.85, 2 bytes 3.62 -> 2.13, 3 bytes 3.33
/// -> 2.24, 4 bytes 2.82 -> 1.69; TF NCHW depth-to-space of float16 by 13
/// (0.13 MiB) 6.0 -> 1.7, TF batch-to-space of 3-byte units by 11 (1.1
/// MiB) 5.9 -> 3.2. 7 of the 160 slower by 12% or more, 6 of them with
/// streams spread over 0.4 to 7 MiB, 4 of those in 9 to 12 streams,
/// whose slots of 8 bytes fill 72 to 96 bytes of a step (TF
/// batch-to-space-ND of 3-byte units by 8 x 14 x 9, 9 streams, 54 MiB:
/// 3.0 -> 5.1, steps of 2 units where the masked loads took 4). A
/// prefetch of each stream's next lines took that kind back (TF NCHW
/// depth-to-space of uint8 by 12, 9.3 MiB: 3.3 -> 1.9) but cost the class
/// 4 to 12% (3 runs), or 5 to 13% where only rows whose source continues
/// the last's fetched.
const fn loads_plain(b: usize) -> bool {
    b >= 5
}

/// The shortest row (bytes) the permutes take: one vector; below it a
/// step's fixed cost (a masked load or store per stream) is more than
/// moving the units.
const MIN_ROW: usize = 64;

/// Whether [`run`] moves `b` streams of `n` units of `unit` bytes `way`
/// on `isa`: AVX512-VBMI, 2 to [`MAX_STREAMS`] streams of units of at most
/// [`MAX_UNIT`] bytes (interleaves: up to [`MAX_SLOT_UNIT`] in 5 streams
/// or more, see [`interleaves_wider`]; deinterleaves:
/// [`MAX_DEINTERLEAVE_UNIT`], two of each stream a step), rows of at least
/// [`MIN_ROW`] bytes.
///
/// Measured (one thread, ratio to memcpy, alternated runs): the 7 broad
/// workloads (seed 26) whose deinterleaves it takes from the tile's own
/// rows, 5 runs, 5.42 -> 2.66 (OpenVINO space-to-depth of uint8 by 5, 24
/// MiB, 4.7 -> 1.7); for interleaves, against the tile's own rows
/// (`zip_streams`), 3 runs, on the 100 workloads of the broad benchmark
/// that any interleave of units of any size reached:
/// - 1- and 2-byte units: uint8 NCHW depth-to-space by 5 to 7, 22-26x ->
///   9-12x; pixel shuffle by 7 of uint8, 15.5 MiB, 10.6 -> 3.3x; OpenVINO
///   batch-to-space of uint8 by 8, 22 MiB, 6.4 -> 1.3x; depth-to-space of
///   float16 by 7, 28.6 -> 5.0x;
/// - wider units: see [`MAX_UNIT`]; rows of 2 units (a quarter vector)
///   slower.
pub(crate) fn takes(way: Way, b: usize, unit: usize, n: usize, isa: Isa) -> bool {
    let unit_ok = match way {
        Way::Deinterleave => deinterleaves(b, unit),
        Way::Interleave => (1..=MAX_UNIT).contains(&unit) || interleaves_wider(b, unit, n),
    };
    isa.runs_vbmi()
        && (2..=MAX_STREAMS).contains(&b)
        && unit_ok
        && n.saturating_mul(b * unit) >= MIN_ROW
        && (way == Way::Deinterleave || unit <= 2 || loads_plain(b))
}

/// Whether the interleaves take `b` streams of `n` units of `unit` bytes
/// in 5 streams or more (fewer take units of at most [`MAX_UNIT`] bytes,
/// `takes` says which): units whose slots hold one (plain or, 9 streams
/// and more, wide); or units over [`MAX_INTERLEAVE_UNIT`] bytes in 9 to 16
/// streams, whose wide slots alone do, in rows of a wide slot or more
/// (every step wide).
const fn interleaves_wider(b: usize, unit: usize, n: usize) -> bool {
    let wider = unit > MAX_INTERLEAVE_UNIT && unit <= MAX_SLOT_UNIT;
    loads_plain(b)
        && (unit >= 1 && unit <= MAX_SLOT_UNIT && slot(b, unit) >= unit
            || wider && loads_wide(b, unit) && n.saturating_mul(unit) >= wide_slot(b))
}

/// Which way the permutes move units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Way {
    /// `b` source streams into one contiguous destination run: unit `x` of
    /// stream `j` to unit `x * b + j`.
    Interleave,
    /// One contiguous source run into `b` destination streams: unit `x * b
    /// + j` to unit `x` of stream `j`.
    Deinterleave,
}

/// Moves, for each of `rows`, `b` streams of `n` units of `unit` bytes
/// (stream `j` at `j * streams` bytes from the row's start on its side)
/// to or from one contiguous run on the other side, as `way` says, the
/// last step of each row masked to its units.
///
/// # Safety
/// Every source unit of every row readable, every destination unit
/// writable, without overlap; [`takes`] of `way`, `b`, `unit`, `n` and an
/// `isa` this CPU runs (the CPU's features, and a step that holds a
/// group).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn run(
    way: Way,
    rows: Rows,
    n: usize,
    b: usize,
    unit: usize,
    src: *const u8,
    dst: *mut u8,
    streams: isize,
) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: forwarded; `takes` (the caller) checked the CPU's features
    // and that a step holds a group.
    unsafe {
        match way {
            Way::Interleave => x86::interleave(rows, n, b, unit, src, streams, dst),
            Way::Deinterleave => x86::deinterleave(rows, n, b, unit, src, dst, streams),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (way, rows, n, b, unit, src, dst, streams);
        unreachable!("takes is false off x86_64")
    }
}

#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(test)]
mod tests;
