//! Streams by the register transposes, without masks (SSE2 and AVX2),
//! for the shapes no kernel of their own takes on those machines (5
//! streams and more: NCHW space-to-depth and depth-to-space, pixel
//! shuffles, space-to-batch of blocks of 5 and more): deinterleaves of
//! bytes, one contiguous run of groups of `b` bytes into `b` streams,
//! and interleaves of 9 streams of bytes and more, and with AVX2, both
//! ways for 2-, 3-, 4- and 8-byte units, and deinterleaves of 6-byte
//! units.
//!
//! The run goes in squares of 16 groups: each group read as one vector
//! from its start (its bytes, and the next groups' where the run goes on),
//! transposed, and each stream's 16 bytes of them written as one vector; a
//! group of more than 16 bytes goes in columns of 16. At the run's end,
//! the reads and writes are exactly the bytes' (two overlapping plain
//! moves each: `arch::vector::load_part`, `x86::store_part`); with AVX2, a run of
//! 16 groups or more ends in a square or two of 16 whole groups, the last
//! overlapping the one before, whose vectors past the run are read
//! exactly. Rows of fewer groups than a square that continue the
//! destination's streams go as one run of squares across the rows
//! ([`joins`]).
//!
//! The other way, interleaving, a square's rows are 16 bytes of each
//! stream (one vector where the square is whole) and its columns the
//! groups, each written exactly, or with AVX2 as one vector, the next
//! column writing again the bytes it wrote past its group (exactly where
//! a square's last column would end past the run): 9 to 32 streams in
//! rows of 32 bytes a stream and more, with AVX2 16
//! ([`takes_interleave`]). Measured against the tile's own kernels, which
//! zip the streams a byte at a time (one thread, 3
//! alternated runs, each workload's minimum), on the broad workloads
//! whose tiles interleave 5 to 32 streams of bytes (seeds 26, 801 and
//! 802: 45): the 14 it takes, time after over before 0.67 (OpenVINO
//! batch-to-space of uint8 by 15, 2.1 MiB, 6.5 -> 2.6x memcpy; ONNX CRD
//! depth-to-space of uint8 by 13, 111 MiB, 8.4 -> 4.5); the 31 it
//! leaves, 0.96 (the noise). 5 to 8 streams in squares measured slower (TF
//! batch-to-space of uint8 by 5, 15 MiB, 2.1-2.6 -> 2.9-5.2x memcpy, 2
//! alternated pairs), as did rows of 16 groups of 5 bytes (up to 3.4
//! times the time, an earlier measurement).
//!
//! Units of 2, 4 and 8 bytes go in squares of one 32-byte vector a row
//! (or two rows of 16 bytes, one a lane), transposed by unpacks inside
//! the lanes: 16 units of a stream by 8 streams of 2-byte units (two 8 x
//! 8 squares, one a lane), 8 by 8 of 4-byte units (each row's halves,
//! rows `i` and `i + 4` in the lanes), 4 by 4 of 8-byte units. Only
//! where every square is whole: the squares start every side, and the
//! last ends at the run's end (`overlapping`), writing again some units
//! the one before wrote; where the run leaves at most half a side past
//! the last whole square, only that square's last half, rows or columns
//! (`covering`: 4- and 8-byte units both ways, 3- and 6-byte units their
//! columns): of 9 streams of 4-byte units, 12 units of each group moved
//! rather than 16; of 6 streams of 8-byte units, 6 rather than 8. Measured
//! against whole squares (one thread, 4 alternated runs, each workload's
//! minimum, time after over before), the broad workloads it reaches:
//! seed 26, 68, 0.96 (TF NCHW_VECT_C space-to-depth of 4-byte units by
//! 11, 3.5 -> 2.4x memcpy; pixel unshuffle of float32 by 15, 3.9 -> 3.3),
//! against 0.99 for the 70 whose squares are all whole; seeds 801 and
//! 802, 163, 0.94 against 1.01 for 60 others. (A whole square's halves
//! stay constants: run as a loop from a part's first half, the 70 took
//! 1.02-1.04.) Measured against the tile's own kernels, which
//! moved these a unit at a time (one thread, time after over before,
//! minimum of 4 alternated processes), on the broad workloads (seeds 26,
//! 801 and 802) whose tiles interleave or deinterleave 5 to 32 streams:
//! of 4-byte units (77, 79 and 90 of them) 0.78, 0.78 and 0.70, those it
//! takes 0.60 deinterleaved (84), 0.73 interleaved (83); of 2- and 8-byte
//! units (65, 67 and 71) 0.85, 0.73 and 0.75, those it takes: 2-byte
//! units 0.53 deinterleaved (21), 0.64 interleaved (37); 8-byte units
//! 0.72 (42) and 0.85 (40, from 8 streams). Rows shorter than a square's
//! side whose streams continue the last row's go as one run of squares
//! across the rows ([`joins_streams`]), each square's groups at their own
//! rows' offsets.
//!
//! Packed units of 3 and 6 bytes go in the squares of 4- and 8-byte
//! units, each row widened to slots of 4 or 8 bytes as it is read and
//! each column narrowed back as it is written (`x86::Slots`). The blocks
//! of a transpose's tile of 3-, 4- and 8-byte units go in the same squares
//! ([`block`]), a square's rows the source's and its columns the
//! destination's.
//!
//! Where AVX-512's masks run, the deinterleave runs in AVX2's squares too,
//! for bytes, 2-, 4- and 8-byte units, ahead of the masked squares and
//! the byte permutes for the first three ([`leads_deinterleave`]): on an
//! Intel Xeon it measured faster than both.
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

/// The most streams [`deinterleave`] and [`interleave`] take: two byte
/// squares a group.
const MAX_STREAMS: usize = 32;

/// The fewest groups a row (or rows that continue one another)
/// [`deinterleave`] takes: half a square. A square costs the same for
/// fewer, and the tile's own kernels measured faster on rows of 2 to 7
/// groups (pixel unshuffle of uint8 by 2 x 5, 2 groups of 10: 9 times the
/// time; ONNX space-to-depth of uint8 by 7, 7 groups: 1.2).
const MIN_GROUPS: usize = SIDE / 2;

/// The sides of a square of `unit`-byte units, one 32-byte vector a
/// row or a 16-byte lane, with AVX2: (units of a stream, streams), or
/// `None` for units it has no square for. 2-byte units go 16 by 8, two
/// 8 x 8 squares in the lanes of one transpose; 3- and 6-byte units as
/// 4- and 8-byte ones, in slots of that many bytes.
const fn sides(unit: usize) -> Option<(usize, usize)> {
    match unit {
        2 => Some((16, 8)),
        3 | 4 => Some((8, 8)),
        6 | 8 => Some((4, 4)),
        _ => None,
    }
}

/// Whether [`deinterleave`] moves rows of `n` groups of `b` units of
/// `unit` bytes on `isa`: x86_64 from SSE2 on without AVX-512's masks
/// (which have the masked squares and the byte permutes), at most
/// [`MAX_STREAMS`] streams and at least [`MIN_STREAMS`]; bytes in rows of
/// [`MIN_GROUPS`] groups or more; with AVX2, 2-, 3-, 4-, 6- and 8-byte
/// units where every square is whole, its [`sides`] both ways. (Squares of
/// 4-byte units with fewer streams or units than their side, rows or
/// columns of them zero or not written, measured slower than the tile's
/// own kernels: 1.06 to 1.41 times their time, geomeans of 32 to 44
/// broad workloads of seeds 26, 801 and 802 by way and side; as did
/// 2-byte units in SSE2's squares of 8: 5 to 8 streams 1.14, 9 to 16
/// 1.02, seed 26.)
pub(crate) fn takes(n: usize, b: usize, unit: usize, isa: Isa) -> bool {
    super::plain_edges(isa)
        && (MIN_STREAMS..=MAX_STREAMS).contains(&b)
        && match (unit, sides(unit)) {
            (1, _) => n >= MIN_GROUPS,
            (_, Some((units, streams))) => isa >= Isa::Avx2 && n >= units && b >= streams,
            _ => false,
        }
}

/// The fewest streams [`interleave`] takes: 8-byte units from 5 to 7
/// streams measured slower in squares of 4 than by the tile's own
/// kernels (1.10 times their time, 10 broad workloads of seeds 26, 801
/// and 802; from 8 streams and more, 0.85, 40), deinterleaved 0.89 (13).
const MIN_INTERLEAVED: usize = 8;

/// Whether [`interleave`] moves rows of `b` streams of `n` units of `unit`
/// bytes on `isa`: as [`takes`], from [`MIN_INTERLEAVED`] streams; bytes
/// from [`MIN_INTERLEAVED_BYTE_STREAMS`] streams of
/// [`min_interleaved_bytes`] (fewer measured slower: see the module's
/// doc); not 6-byte units (a square of 4 x 4 costs as many instructions
/// as moving its 16 units one by one: 1.27 times their time on 6 broad
/// workloads of seed 26, batch-to-space and depth-to-space of TF,
/// OpenVINO and ONNX by blocks of 8 to 14).
pub(crate) fn takes_interleave(n: usize, b: usize, unit: usize, isa: Isa) -> bool {
    match unit {
        1 => b >= MIN_INTERLEAVED_BYTE_STREAMS && n >= min_interleaved_bytes(isa) && takes(n, b, unit, isa),
        6 => false,
        _ => b >= MIN_INTERLEAVED && takes(n, b, unit, isa),
    }
}

/// The fewest streams of bytes [`interleave`] takes.
const MIN_INTERLEAVED_BYTE_STREAMS: usize = 9;

/// The fewest bytes of a stream [`interleave`] takes on `isa`: with AVX2,
/// a square's side, in its runs of squares (`x86::interleave_squares`);
/// without, 32, square by square. Measured against the tile's own
/// kernels (one thread, 5 alternated runs, each workload's minimum, time
/// after over before) on the broad workloads of 9 streams and more of 16
/// to 31 bytes (seeds 26, 801 and 802: 4): with AVX2 0.49 to 0.77 (TF
/// batch-to-space of uint8 by 15, 0.1 MiB, 12.4 -> 6.2x memcpy; pixel
/// shuffle of uint8 by 11, 1.5 MiB, 8.0 -> 3.9); SSE2's squares one by
/// one, 0.83 to 1.40 (3 runs).
fn min_interleaved_bytes(isa: Isa) -> usize {
    if isa >= Isa::Avx2 {
        SIDE
    } else {
        2 * SIDE
    }
}

/// Whether [`deinterleave`] moves `rows` of one contiguous run of `n`
/// groups of `b` units of `unit` bytes on `isa` ([`takes`] on the kernel
/// set of [`squares_isa`], counting the groups of rows it joins as one
/// run).
pub(crate) fn takes_deinterleave(rows: Rows, n: usize, b: usize, unit: usize, isa: Isa) -> bool {
    let (rows, n) = continued(rows, n, n * b * unit, n * unit);
    let joined = joins_streams(rows, n, unit, rows.ds);
    takes(if joined { rows.count * n } else { n }, b, unit, squares_isa(unit, isa))
}

/// Whether [`deinterleave`] goes ahead of the masked squares and the byte
/// permutes where AVX-512's masks run (the tile's choice asks first):
/// bytes, 2- and 4-byte units, in AVX2's squares ([`squares_isa`]).
///
/// Measured on an Intel Xeon (Emerald Rapids, AVX-512 with VBMI; one
/// thread, 5 alternated runs, each workload's best of 5 repetitions, time
/// after over before) on the broad workloads whose tiles it takes, seed 26
/// and held out (seeds 801 to 804): 2-byte units that went in the masked
/// squares, 12 and 39, 0.66 and 0.57, every one faster (ONNX
/// space-to-depth of float16 by 13, 1.7 MiB, 2.45 -> 1.27x memcpy; pixel
/// unshuffle of float16 by 14, 100 MiB, 3.6 -> 2.2); 4-byte units that
/// went by the byte permutes, 23 and 110, 0.80 and 0.83, 1 and 9 slower
/// by more than 5% (TF NCHW_VECT_C space-to-depth by 14, 3.9 -> 2.3), and
/// in the squares, 1 and 11, 1.02 and 0.88, 2 slower (a streamed OpenVINO
/// space-to-depth of float32, 56 MiB, 1.23); bytes in 16 streams and more
/// that went in the blocked transpose, or streamed (which the byte
/// permutes leave), 3 and 6, 0.63 and 0.65. Not 3- and 6-byte units (byte
/// permutes and packed full-line squares: 6 and 8 workloads of seed 26,
/// 1.03 and 1.13 the time), nor bytes in fewer than 16 streams through
/// the cache, which the byte permutes take first (15 workloads, 1.16).
pub(crate) fn leads_deinterleave(unit: usize, isa: Isa) -> bool {
    super::masks(isa) && matches!(unit, 1 | 2 | 4)
}

/// The kernel set whose squares [`deinterleave`] runs in for `unit`-byte
/// units on `isa`: AVX2's where AVX-512's masks run too, for bytes and 2-,
/// 4- and 8-byte units (those it [`leads_deinterleave`] for, and 8-byte
/// units that no other kernel takes there, which the tile's own kernels
/// moved a unit at a time: 7 broad workloads of seed 26 and 23 held out,
/// 0.90 and 0.85 of the time, OpenVINO space-to-depth of float64 by 6,
/// 140 MiB, 2.6 -> 1.9x memcpy); else `isa` itself.
fn squares_isa(unit: usize, isa: Isa) -> Isa {
    if super::masks(isa) && matches!(unit, 1 | 2 | 4 | 8) {
        Isa::Avx2
    } else {
        isa
    }
}

/// Moves, for each of `rows`, one contiguous run of `n` groups of `b`
/// units of `unit` bytes at `src` into `b` streams of `n` units (stream
/// `j` at `j * ds` bytes from the row's destination): unit `x * b + j` to
/// unit `x` of stream `j`. Rows whose runs and streams both continue the
/// last's go as one run (whose groups [`takes`] counts), as do rows
/// shorter than a square that continue only the streams ([`joins_streams`]);
/// others each fetch a later row's source ahead (`Rows::fetch_ahead`).
///
/// # Safety
/// Every source unit of every row readable, every destination unit
/// writable, without overlap; `isa` one this CPU runs, and
/// [`takes_deinterleave`] of `rows`, `n`, `b`, `unit` and `isa` (its
/// kernels need AVX2 for units wider than a byte).
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
) {
    let (rows, n) = continued(rows, n, n * b * unit, n * unit);
    let joined = joins_streams(rows, n, unit, rows.ds);
    #[cfg(target_arch = "x86_64")]
    // SAFETY: forwarded; AVX2 where `isa` has it (one this CPU runs), as
    // it does for units wider than a byte (`takes_deinterleave`: caller).
    unsafe {
        match unit {
            _ if sides(unit).is_some() => x86::wide_avx2::<false>(joined, rows, n, b, unit, src, dst, ds),
            _ if isa >= Isa::Avx2 => x86::deinterleave_avx2(rows, n, b, src, dst, ds),
            _ => byte_squares::<false, false>(rows, n, b, src, dst, ds),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (joined, src, dst, ds, isa);
        unreachable!("takes is false off x86_64")
    }
}

/// Whether [`interleave`] moves `rows` of `b` streams of `n` units of
/// `unit` bytes on `isa` ([`takes_interleave`], counting the units of
/// rows it joins as one run).
pub(crate) fn takes_interleave_rows(rows: Rows, n: usize, b: usize, unit: usize, isa: Isa) -> bool {
    let (rows, n) = continued(rows, n, n * unit, n * b * unit);
    let joined = joins_streams(rows, n, unit, rows.ss);
    takes_interleave(if joined { rows.count * n } else { n }, b, unit, isa)
}

/// Moves, for each of `rows`, `b` streams of `n` units of `unit` bytes
/// (stream `j` at `j * ss` bytes from the row's source) into one
/// contiguous run of `n` groups of `b` units: unit `x` of stream `j` to
/// unit `x * b + j`. Rows whose streams and runs both continue the last's
/// go as one, as do rows shorter than a square that continue only the
/// streams ([`joins_streams`]).
///
/// # Safety
/// Every source unit of every row readable, every destination unit
/// writable, without overlap; `isa` one this CPU runs, and
/// [`takes_interleave_rows`] of `rows`, `n`, `b`, `unit` and `isa` (its
/// kernels need AVX2).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn interleave(
    rows: Rows,
    n: usize,
    b: usize,
    unit: usize,
    src: *const u8,
    ss: isize,
    dst: *mut u8,
    isa: Isa,
) {
    let (rows, n) = continued(rows, n, n * unit, n * b * unit);
    let joined = joins_streams(rows, n, unit, rows.ss);
    #[cfg(target_arch = "x86_64")]
    // SAFETY: forwarded; AVX2 (`takes_interleave_rows`: caller), which
    // `isa`, one this CPU runs, has.
    unsafe {
        match unit {
            1 if isa >= Isa::Avx2 => x86::interleave_avx2(rows, n, b, src, ss, dst),
            1 => byte_squares::<false, true>(rows, n, b, src, dst, ss),
            _ => x86::wide_avx2::<true>(joined, rows, n, b, unit, src, dst, ss),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (joined, src, ss, dst, isa);
        unreachable!("takes_interleave is false off x86_64")
    }
}

/// Whether [`block`] moves an `nx x ny` block of `unit`-byte units on
/// `isa`: x86_64 with AVX2, without AVX-512's masks (which have the
/// full-line squares), units of 3, 4 and 8 bytes (which no other register
/// transpose there takes), both sides at least a square's side. Measured
/// (one thread, minimum of 3 or 4 alternated processes, time after over
/// before) on every broad workload (seeds 26, 801 and 802) and HPTT
/// benchmark permutation (`transpose.json`) whose tiles go in blocks
/// through the cache, against blocks of units one at a time: numpy
/// transposes of 3-byte units (40, 225 and 6 MiB) 0.79, 0.94 and 0.86; of
/// 4-byte units (2.2 MiB) 0.39; of float64 (0.6 and 2.3 MiB) 0.58 and
/// 0.82, HPTT's T10 to T12 (400 MiB) 0.86, 0.79 and 0.77. Not 6-byte
/// units: in squares of 4 x 4, the one such workload (2.8 MiB) measured
/// 0.99.
pub(crate) fn takes_block(nx: usize, ny: usize, unit: usize, isa: Isa) -> bool {
    (super::plain_edges(isa) || blocks_through_cache(unit, isa))
        && isa >= Isa::Avx2
        && matches!(unit, 3 | 4 | 8)
        && sides(unit).is_some_and(|(units, streams)| nx >= units && ny >= streams)
}

/// Whether, where AVX-512's masks run, a tile of `unit`-byte units
/// through the cache goes in [`block`]'s square blocks (in the tile's own
/// kernels, `tile::tile_block`: 64 x 64 units, 512-byte rows on both
/// sides, the next block's source rows fetched while one is moved) rather
/// than the full-line squares, whose strips go down a chunk's rows (up to
/// 1,024), a line of 16 to 64 destination rows a step, with nothing
/// fetched ahead: 8-byte units.
///
/// Measured on an AMD EPYC (Zen 4, AVX-512 with VBMI), one thread, 5
/// alternated runs, time after over before, on the broad workloads whose
/// tiles of 8-byte units went in the squares through the cache: seed 26, 7
/// tiles, 0.74, 6 faster by more than 5%, none slower (ONNX space-to-depth
/// of float64 by 13, 7.4 MiB, 3.4 -> 1.9x memcpy; a numpy transpose of
/// float64, 318 x 266, 1.9 -> 1.4x); held out, seeds 801 to 806, 22 tiles,
/// 0.67 to 0.82 a seed, every one faster by more than 5%; two threads
/// (seeds 26 and 801), 0.83 and 0.88. Matrices whose rows are a multiple
/// of 40 lines apart lose (a float64 transpose of 320 x 256, 1.9 -> 2.5x):
/// a block's rows fall in a few of the L1 cache's sets. Tiles whose rows
/// crowd more, into too few sets to hold a line of each of a block's
/// rows, go in the squares after all (`tile::choice`'s `crowded`: 320 x
/// 256 and 256 x 320, whose rows on one side are 2 KiB apart, measured
/// 2.9 -> 2.4x and 3.3 -> 2.3x against these blocks in a later build;
/// 320 x 320 stays here). Not measured on an
/// Intel Xeon, where the squares through the cache were measured against
/// the blocked transpose's 16-byte squares only (see `takes::cached`).
/// Not 3- and 4-byte units, which measured mixed (seed 26: 3-byte 0.93 on
/// 6 tiles, 4-byte 1.17 on one).
pub(crate) fn blocks_through_cache(unit: usize, isa: Isa) -> bool {
    super::masks(isa) && unit == 8
}

/// Moves an `nx x ny` block of a transpose's tile, unit `(x, y)` from `src
/// + x * unit + y * ssy` to `dst + x * dsx + y * unit`, in whole squares
/// of its [`sides`] at [`overlapping`] starts: a square's rows are `src`'s
/// (stride `ssy`), its columns `dst`'s (stride `dsx`). `false`, having
/// done nothing, unless it takes the block ([`takes_block`]).
///
/// # Safety
/// Every unit of the block readable at the source and writable at the
/// destination, without overlap; `isa` one this CPU runs.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn block(
    nx: usize,
    ny: usize,
    unit: usize,
    src: *const u8,
    ssy: isize,
    dst: *mut u8,
    dsx: isize,
    isa: Isa,
) -> bool {
    if !takes_block(nx, ny, unit, isa) {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: forwarded; AVX2 (`takes_block`), which `isa`, one this CPU
    // runs, has.
    unsafe {
        x86::block_avx2(nx, ny, unit, src, ssy, dst, dsx);
    }
    true
}

/// [`block`] of `U`-byte units.
///
/// # Safety
/// As [`block`], with both sides at least the [`sides`] of `U`; the CPU
/// has AVX2 (and the caller is compiled for it).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn block_squares<const U: usize>(nx: usize, ny: usize, src: *const u8, ssy: isize, dst: *mut u8, dsx: isize) {
    let Some((units, streams)) = sides(U) else { return };
    // A real check: a square past the block would move units outside it
    // (`takes_block` declines such blocks).
    assert!(nx >= units && ny >= streams, "a block of {nx} x {ny}: squares of {units} x {streams}");
    let (rows, cols) = x86::halves(U);
    for (y, half_y) in covering(ny, streams, rows) {
        for (x, half_x) in covering(nx, units, cols) {
            let (from, to) = ((x * U) as isize + y as isize * ssy, x as isize * dsx + (y * U) as isize);
            let part = x86::Part { rows: half_y, cols: half_x };
            // SAFETY: units `x..x + units` of rows `y..y + streams` (or
            // the part of them), and those rows' places in destination
            // rows `x..x + units` (`covering`; caller); AVX2 (caller).
            unsafe { x86::wide_square::<U, false>(src.wrapping_offset(from), ssy, dst.wrapping_offset(to), dsx, part) }
        }
    }
}

/// Whether [`joined`] moves `rows` of `n` units of each stream (of
/// `unit`-byte units, which [`sides`] names): rows shorter than a
/// square's side, whose streams continue the last row's (`streams_step`,
/// the rows' step on the streams' side, is `n * unit`) and whose groups do
/// not (those [`continued`] joins). Each row alone would be too short for
/// a square, and the tile's own kernels would move its units one at a
/// time.
///
/// Measured (one thread, each workload's minimum of 4 alternated runs,
/// ratio to memcpy) on the broad workloads it takes, interleaves and
/// deinterleaves of 2- to 8-byte units: seed 26, 18 of them, geomean
/// 2.80 -> 1.67 (TF NCHW space-to-depth of 6-byte units by 14, 0.1 MiB,
/// 3.9 -> 2.0; ONNX space-to-depth of float64 by 15, 1.8 MiB, 6.4 ->
/// 2.5); held out, seeds 801 and 802, 24, 3.52 -> 1.92, none slower
/// (pixel unshuffle of float16 by 9, 0.3 MiB, 9.1 -> 2.9).
/// Rows of a square's side and more, in squares across the rows rather
/// than each in its own, measured slower: the 55 more workloads of seed 26
/// that takes, 1.17 times the time.
fn joins_streams(rows: Rows, n: usize, unit: usize, streams_step: isize) -> bool {
    sides(unit).is_some_and(|(units, _)| continue_streams(rows, n, unit, streams_step, units))
}

/// Whether `rows` of `n` units of `unit` bytes a stream, shorter than a
/// square's `side`, each continue the last row's streams (`streams_step`,
/// the rows' step on the streams' side, is `n * unit`): the rows that
/// [`joins`] and [`joins_streams`] take as one run of squares.
fn continue_streams(rows: Rows, n: usize, unit: usize, streams_step: isize, side: usize) -> bool {
    rows.count > 1 && n < side && streams_step == (n * unit) as isize
}

/// [`wide`] of rows that [`joins_streams`] takes: each stream one run of
/// `rows.count * n` units, in whole squares across the rows at
/// [`overlapping`] starts; group `g` of the run is group `g % n` of row
/// `g / n`, whose address each square works out for its own groups.
///
/// # Safety
/// As [`wide`] (`stride`: the streams'), with `rows.count * n` and `b` at
/// least the [`sides`] of `U`; the CPU has AVX2 (and the caller is
/// compiled for it).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn joined<const U: usize, const INTERLEAVE: bool>(
    rows: Rows,
    n: usize,
    b: usize,
    src: *const u8,
    dst: *mut u8,
    stride: isize,
) {
    let Some((units, streams)) = sides(U) else { return };
    let (streams_step, groups_step) = if INTERLEAVE { (rows.ss, rows.ds) } else { (rows.ds, rows.ss) };
    // Units of the tensor: no overflow.
    let total = rows.count * n;
    // A real check: a square past the run or the streams, or rows whose
    // streams do not continue one another, would move bytes outside them
    // (`joins_streams` and `takes` decline such rows).
    assert!(
        total >= units && b >= streams && streams_step == (n * U) as isize,
        "{} rows of {n} units of {b} streams, {streams_step} bytes apart: squares of {units} x {streams}",
        rows.count
    );
    let group = (b * U) as isize;
    let (x_half, c_half) = run_halves::<INTERLEAVE>(U);
    for (x, half_x) in covering(total, units, x_half) {
        // The square's groups (offsets on their side), the same for every
        // square of streams.
        let mut at = [0isize; SIDE];
        for (a, (offset, _)) in at[..units].iter_mut().zip(joined_groups(x, n, groups_step, group)) {
            *a = offset;
        }
        for (c, half_c) in covering(b, streams, c_half) {
            // Units `x..` of streams `c..`: the streams continue across
            // the rows (checked above).
            let in_streams = c as isize * stride + (x * U) as isize;
            let in_group = (c * U) as isize;
            let part = part::<INTERLEAVE>(half_x, half_c);
            // SAFETY: groups `x..x + units` (`x + units <= total`:
            // `covering`), each at its row's offset, their units `c..c +
            // streams` (`c + streams <= b`), and those streams' units `x..x
            // + units`, which the rows continue (checked above): the rows'
            // own units (caller), or the part of them; AVX2 (caller).
            unsafe {
                if INTERLEAVE {
                    x86::wide_square_at::<U, true>(
                        |i| src.wrapping_offset(in_streams + i * stride),
                        |k| dst.wrapping_offset(at[k as usize] + in_group),
                        part,
                    )
                } else {
                    x86::wide_square_at::<U, false>(
                        |i| src.wrapping_offset(at[i as usize] + in_group),
                        |k| dst.wrapping_offset(in_streams + k * stride),
                        part,
                    )
                }
            }
        }
    }
}

/// The offset and place in its row of each group from `x` on of rows of
/// `n` groups taken as one run, the rows `row` bytes apart and the groups
/// `group`: group `g` is group `g % n` of row `g / n`, at `(g / n) * row +
/// (g % n) * group`. One division for the first; each next one step on,
/// or at a row's end to the next row's first group, without a branch
/// (each had a branch, and its address a multiplication). With the byte
/// squares' groups read whole where they end by their own row's run
/// ([`joined_squares`]), measured (one thread, 3 alternated runs, each
/// workload's minimum, time after over before) on the broad workloads
/// whose rows go joined (seeds 26, 801 and 802: 48): 0.84 (pixel
/// unshuffle of float16 by 9, 0.26 MiB, 3.7 -> 2.0x memcpy; OpenVINO
/// space-to-depth of uint8 by 14, 0.2 MiB, 7.1 -> 4.4), none slower
/// outside the noise (the four slowest again, 5 runs: 0.75 to 1.32, in
/// 0.91 to 0.97 of the executor's instructions); 30 others, 1.02.
fn joined_groups(x: usize, n: usize, row: isize, group: isize) -> impl Iterator<Item = (isize, usize)> {
    let (r, mut k) = (x / n, x % n);
    let mut offset = (r as isize).wrapping_mul(row).wrapping_add(k as isize * group);
    // From the last group of a row to the next row's first.
    let wrap = row.wrapping_sub((n as isize - 1) * group);
    std::iter::from_fn(move || {
        let at = (offset, k);
        k += 1;
        let next_row = k == n;
        k = if next_row { 0 } else { k };
        offset = offset.wrapping_add(if next_row { wrap } else { group });
        Some(at)
    })
}

/// `rows` of `n` groups (or units) as one row of `rows.count * n` where
/// each row continues the last on both sides (its source `src_run` bytes
/// on, its destination `dst_run`), else as they are.
fn continued(rows: Rows, n: usize, src_run: usize, dst_run: usize) -> (Rows, usize) {
    if rows.count > 1 && rows.ss == src_run as isize && rows.ds == dst_run as isize {
        (Rows::ONE, rows.count * n)
    } else {
        (rows, n)
    }
}

/// The starts of the squares of side `side` (at most `len`) that cover
/// `len` units: every `side` units, the last square ending at `len`
/// (overlapping the one before it, whose units it writes again, the
/// same), so that every square is whole.
fn overlapping(len: usize, side: usize) -> impl Iterator<Item = usize> {
    let last = len.saturating_sub(side);
    steps(0, last, side).chain((len > 0).then_some(last))
}

/// The squares of side `side` that cover `len` units (at least `side`),
/// as [`overlapping`] starts each with whether only its last half is
/// moved: where the units past the last whole square are at most half a
/// side and `halves` (the kernel has that half), the last square's last
/// half alone, which ends at `len` (overlapping the one before it by
/// less than half a side), else the whole square.
#[cfg(target_arch = "x86_64")]
fn covering(len: usize, side: usize, halves: bool) -> impl Iterator<Item = (usize, bool)> {
    let rest = len % side;
    let half = halves && rest > 0 && rest <= side / 2;
    overlapping(len, side).map(move |x| (x, half && x + side == len))
}

/// Which halves of a square of `unit`-byte units (`x86::halves`) a run
/// ends in, on its groups' side and its streams' (`x`, `c`): a square's
/// rows are groups deinterleaving, streams interleaving.
#[cfg(target_arch = "x86_64")]
const fn run_halves<const INTERLEAVE: bool>(unit: usize) -> (bool, bool) {
    let (rows, cols) = x86::halves(unit);
    if INTERLEAVE {
        (cols, rows)
    } else {
        (rows, cols)
    }
}

/// The part of a square that moves only the last half of its groups
/// (`half_x`) or of its streams (`half_c`), as [`run_halves`] sides them.
#[cfg(target_arch = "x86_64")]
const fn part<const INTERLEAVE: bool>(half_x: bool, half_c: bool) -> x86::Part {
    if INTERLEAVE {
        x86::Part { rows: half_c, cols: half_x }
    } else {
        x86::Part { rows: half_x, cols: half_c }
    }
}

/// [`deinterleave`]'s rows of `U`-byte units (`INTERLEAVE`:
/// [`interleave`]'s), in whole squares of [`sides`] (`x86::wide_square`)
/// at [`overlapping`] starts (`joined`: across the rows, by [`joined`]).
/// Unit `c` of group `x` lies `(x * b + c) * U` bytes into a row's run,
/// and unit `x` of stream `c` at `c * stride + x * U` from its streams:
/// the source's or the destination's, by way.
///
/// # Safety
/// As [`deinterleave`] or [`interleave`], with `n` and `b` at least the
/// [`sides`] of `U` (`joined`: as [`joined`]); the CPU has AVX2 (and the
/// caller is compiled for it).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn wide<const U: usize, const INTERLEAVE: bool>(
    joined: bool,
    rows: Rows,
    n: usize,
    b: usize,
    src: *const u8,
    dst: *mut u8,
    stride: isize,
) {
    if joined {
        // SAFETY: forwarded.
        return unsafe { self::joined::<U, INTERLEAVE>(rows, n, b, src, dst, stride) };
    }
    let Some((units, streams)) = sides(U) else { return };
    // A real check: a square past the run or the streams would move bytes
    // outside them (`takes` declines such rows).
    assert!(n >= units && b >= streams, "{n} units of {b} streams: squares of {units} x {streams}");
    let group = (b * U) as isize;
    // Rows of the squares and columns: groups of the run and streams,
    // deinterleaving; streams and groups, interleaving.
    let (ss, ds) = if INTERLEAVE { (stride, group) } else { (group, stride) };
    let (x_half, c_half) = run_halves::<INTERLEAVE>(U);
    for r in 0..rows.count {
        let (s, d) = rows.at(r, src, dst);
        if !INTERLEAVE {
            rows.fetch_ahead(r, src, n * b * U);
        }
        for (x, half_x) in covering(n, units, x_half) {
            for (c, half_c) in covering(b, streams, c_half) {
                let in_run = ((x * b + c) * U) as isize;
                let in_streams = c as isize * stride + (x * U) as isize;
                let (from, to) = if INTERLEAVE { (in_streams, in_run) } else { (in_run, in_streams) };
                let part = part::<INTERLEAVE>(half_x, half_c);
                // SAFETY: groups `x..x + units`' units `c..c + streams`,
                // and those streams' units `x..x + units` (`x + units <=
                // n`, `c + streams <= b`: `covering`; caller), or the part
                // of them; AVX2 (caller).
                unsafe {
                    x86::wide_square::<U, INTERLEAVE>(s.wrapping_offset(from), ss, d.wrapping_offset(to), ds, part)
                }
            }
        }
    }
}

/// [`deinterleave`]'s rows of bytes (`INTERLEAVE`: [`interleave`]'s), in
/// squares of 16 groups: deinterleaving, byte `j` (from `at`) of each of
/// the `from.len()` groups at `from` to byte `i` of stream `j` of the
/// `to.len()` at `to`, reading a group's whole vector where it ends by
/// the run's end; interleaving, the `to.len()` bytes from `x` of each of
/// the `from.len()` streams to the groups at `to`, reading a stream's
/// whole vector where the square is whole. By AVX2's squares
/// (`x86::square`) or SSE2's (`x86::square_edge`), one by one
/// ([`byte_square`], each working out its rows' and columns' addresses).
///
/// With AVX2, a row of 16 groups or more goes in runs of squares whose
/// rows' addresses are offsets worked out once a row
/// ([`deinterleave_row`], `x86::interleave_squares`):
/// deinterleaving, the squares whose groups all read whole
/// ([`whole_squares`]) without the edges' checks, then a square or two of
/// 16 groups at the run's end; interleaving, squares of 16 groups at
/// [`overlapping`] starts, each group written as one vector. Measured
/// against squares one by one (one thread, 3 alternated runs, each
/// workload's minimum, time after over before) on the broad workloads it
/// takes: seed 26, 17 of them, 0.66 (OpenVINO 1-D space-to-depth of uint8
/// by 14, 4.8 MiB, 2.44 -> 1.17x memcpy; TF batch-to-space of uint8 by 9
/// x 10 with crops, 1.1 MiB, 8.9 -> 5.3), the 623 it leaves 1.00; held
/// out, seeds 801 and 802, 38 of them, 0.62, none slower by more than the
/// noise (OpenVINO 1-D depth-to-space of uint8 by 10, 2.7 MiB, 5.5 ->
/// 1.7), 40 it leaves 1.01. The executor's instructions (callgrind): TF
/// NCHW space-to-depth of uint8 by 10 (91 MiB) 0.50, OpenVINO
/// space-to-depth of uint8 by 5 (30 MiB) 0.32.
///
/// # Safety
/// As [`deinterleave`] (`INTERLEAVE`: [`interleave`], `stride` the
/// source's streams'); with `AVX2`, the CPU has AVX2 (and the caller is
/// compiled for it).
#[inline(always)]
unsafe fn byte_squares<const AVX2: bool, const INTERLEAVE: bool>(
    rows: Rows,
    n: usize,
    b: usize,
    src: *const u8,
    dst: *mut u8,
    stride: isize,
) {
    if !INTERLEAVE && joins(rows, n, b) {
        // SAFETY: forwarded; the rows continue the destination's streams
        // and lie apart in the source (`joins`).
        return unsafe { joined_squares::<AVX2>(rows, n, b, src, dst, stride) };
    }
    for r in 0..rows.count {
        let (s, d) = rows.at(r, src, dst);
        if !INTERLEAVE {
            rows.fetch_ahead(r, src, n * b);
        }
        // With AVX2, a run of 16 groups or more in runs of squares; a
        // shorter run, and all without AVX2, square by square.
        #[cfg(target_arch = "x86_64")]
        if AVX2 && n >= SIDE {
            // SAFETY: the row's groups and streams (caller); `n >= 16`: for
            // the interleave, every start at most `n - 16`, one after
            // another, the last at `n - 16` (`overlapping`); AVX2 (caller).
            unsafe {
                if INTERLEAVE {
                    x86::interleave_squares(s, stride, b, n, overlapping(n, SIDE), d)
                } else {
                    deinterleave_row(s, d, n, b, stride)
                }
            }
            continue;
        }
        for x in steps(0, n, SIDE) {
            for c in steps(0, b, SIDE) {
                // SAFETY: forwarded.
                unsafe { byte_square::<AVX2, INTERLEAVE>(s, d, n, b, x, c, stride) }
            }
        }
    }
}

/// Deinterleaves one row of `n` groups (at least 16) of `b` bytes at `s`
/// into `b` streams `stride` bytes apart from `d`, 16 streams at a time:
/// the whole squares ([`whole_squares`]) without the edges' checks, then a
/// square or two of 16 groups at the run's end, the last overlapping the
/// one before, each reading whole only the vectors that end by the run.
///
/// # Safety
/// As [`deinterleave`], for that row, with `n >= 16`; the CPU has AVX2
/// (and the caller is compiled for it).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn deinterleave_row(s: *const u8, d: *mut u8, n: usize, b: usize, stride: isize) {
    let reads = (s as usize).wrapping_add(n * b);
    for c in steps(0, b, SIDE) {
        let streams = SIDE.min(b - c);
        let whole = whole_squares(n, b, c);
        let mut cols = [std::ptr::null_mut::<u8>(); SIDE];
        for (j, p) in cols[..streams].iter_mut().enumerate() {
            *p = d.wrapping_offset((c + j) as isize * stride);
        }
        let (from, cols) = (s.wrapping_add(c), &cols[..streams]);
        let rest = (whole * SIDE).min(n - SIDE);
        // SAFETY: groups `0..16 * whole`, each read whole from byte `c`,
        // end by the run's end (`whole_squares`); the rest, from `n - 16 >=
        // 0` on, read whole only where they end by it, `reads`; the
        // streams' bytes `0..n` (caller); AVX2 (caller).
        unsafe {
            x86::deinterleave_squares::<true>(from, b, (0..whole).map(|q| q * SIDE), cols, reads);
            if whole * SIDE < n {
                let starts = overlapping(n - rest, SIDE).map(|x| rest + x);
                x86::deinterleave_squares::<false>(from, b, starts, cols, reads);
            }
        }
    }
}

/// How many squares of 16 groups of `b` bytes from the start of a run of
/// `n` groups read each group's 16 bytes from byte `c` inside the run:
/// square `q`'s last group, `16 * q + 15`, reads to `(16 * q + 15) * b +
/// c + 16 <= n * b`.
#[cfg(target_arch = "x86_64")]
fn whole_squares(n: usize, b: usize, c: usize) -> usize {
    // Bytes of the tensor: no overflow.
    match (n * b).checked_sub(15 * b + c + SIDE) {
        Some(room) => (n / SIDE).min(room / (SIDE * b) + 1),
        None => 0,
    }
}

/// One square of [`byte_squares`]: groups `x..` and streams `c..` of the
/// row at `s` (source) and `d` (destination).
///
/// # Safety
/// As [`byte_squares`], for that row.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn byte_square<const AVX2: bool, const INTERLEAVE: bool>(
    s: *const u8,
    d: *mut u8,
    n: usize,
    b: usize,
    x: usize,
    c: usize,
    stride: isize,
) {
    let groups = SIDE.min(n - x);
    let streams = SIDE.min(b - c);
    // A square's rows (read) and columns (written): groups and
    // streams deinterleaving, streams and groups interleaving.
    let (mut from, mut to) = ([std::ptr::null::<u8>(); SIDE], [std::ptr::null_mut::<u8>(); SIDE]);
    let (nr, nc) = if INTERLEAVE { (streams, groups) } else { (groups, streams) };
    let group = |i: usize| (x + i) * b;
    let stream = |j: usize| (c + j) as isize * stride + x as isize;
    for (i, p) in from[..nr].iter_mut().enumerate() {
        *p = if INTERLEAVE { s.wrapping_offset(stream(i)) } else { s.wrapping_add(group(i)) };
    }
    for (j, p) in to[..nc].iter_mut().enumerate() {
        *p = if INTERLEAVE { d.wrapping_add(group(j) + c) } else { d.wrapping_offset(stream(j)) };
    }
    // Whole vectors read only where they end by the run's end
    // (deinterleaving: the groups' bytes from `c` on), or
    // inside the streams' rows (interleaving: a whole square).
    let (at, reads) = match (INTERLEAVE, x + SIDE <= n) {
        (false, _) => (c as isize, (s as usize).wrapping_add(n * b)),
        (true, whole) => (0, if whole { usize::MAX } else { 0 }),
    };
    let (from, to) = (&from[..nr], &to[..nc]);
    // SAFETY: the square's `nr` rows' bytes (`nc` of each from
    // `at`) and its `nc` columns' (`nr` of each) (caller);
    // whole vectors read only inside the rows (`reads`).
    #[cfg(target_arch = "x86_64")]
    unsafe {
        if AVX2 {
            x86::square(from, at, to, reads)
        } else {
            super::x86::square_edge(1, from, at, to, 0, reads)
        }
    }
}

/// Whether [`byte_squares`] deinterleaves `rows` of `n` groups of `b`
/// bytes as one run of squares ([`joined_squares`]): rows of fewer groups
/// than a square's side, each continuing the destination's streams where
/// the last left them (`rows.ds == n`) but apart in the source, past the
/// last row's run (`rows.ss > n * b`; rows that continue it too went as
/// one run already). Row by row, each row's square is a partial one.
/// Measured (one thread, minimum of 8 alternated runs, ratio to memcpy)
/// on TF NCHW space-to-depth of uint8: by 14, rows of 8 groups (0.26, 8.4
/// and 67 MiB) 5.4 -> 2.1, 5.1 -> 3.4 and 6.2 -> 3.9; by 9, rows of 12
/// (8.1 and 65 MiB) 4.8 -> 4.0 and 5.3 -> 4.8; rows of 13 and 15 groups
/// (by 14 and 12, 8 MiB) unchanged, 2.9 and 2.6. The 6 broad workloads
/// it takes (seeds 26, 801 and 802, 0.1 to 1 MiB) moved within their
/// noise.
fn joins(rows: Rows, n: usize, b: usize) -> bool {
    continue_streams(rows, n, 1, rows.ds, SIDE) && rows.ss > (n * b) as isize
}

/// [`byte_squares`]' deinterleave of `rows` that [`joins`] takes, in
/// squares of 16 groups taken in turn across the rows (group `g` is group
/// `g % n` of row `g / n`, whose bytes go to byte `g` of each stream): a
/// square's rows come from two rows or more. With AVX2, a square reads a
/// group's whole vector where it ends by its own row's run; without, only
/// where it ends by the run of the row of its first group (its groups in
/// later rows start past that run, `rows.ss > n * b`); the others exactly.
///
/// # Safety
/// As [`deinterleave`], with [`joins`]; with `AVX2`, the CPU has AVX2 (and
/// the caller is compiled for it).
#[inline(always)]
unsafe fn joined_squares<const AVX2: bool>(rows: Rows, n: usize, b: usize, src: *const u8, dst: *mut u8, ds: isize) {
    // Groups of the tensor: no overflow.
    let total = rows.count * n;
    for x in steps(0, total, SIDE) {
        let groups = SIDE.min(total - x);
        let first = x / n;
        rows.fetch_ahead(first, src, n * b);
        let reads = (src.wrapping_offset(first as isize * rows.ss) as usize).wrapping_add(n * b);
        // The square's groups, the same for every 16 streams.
        let (mut from, mut place) = ([std::ptr::null::<u8>(); SIDE], [0; SIDE]);
        for ((p, k), (offset, at)) in
            from[..groups].iter_mut().zip(&mut place).zip(joined_groups(x, n, rows.ss, b as isize))
        {
            (*p, *k) = (src.wrapping_offset(offset), at);
        }
        let from = &from[..groups];
        for c in steps(0, b, SIDE) {
            let streams = SIDE.min(b - c);
            let mut to = [std::ptr::null_mut::<u8>(); SIDE];
            for (j, p) in to[..streams].iter_mut().enumerate() {
                *p = dst.wrapping_offset((c + j) as isize * ds + x as isize);
            }
            let to = &to[..streams];
            // SAFETY: each group's `streams` bytes from `c` (`c + streams
            // <= b`), and each stream's `groups` bytes from `x` (caller);
            // whole vectors only where they end by their group's row's end
            // (AVX2: group `k` of a row, `k * b + c + 16 <= n * b`), or by
            // `reads`, the end of the first group's row, which later rows'
            // groups start past.
            #[cfg(target_arch = "x86_64")]
            unsafe {
                if AVX2 {
                    let row = |i: usize| from[i].wrapping_add(c);
                    let whole = |i: usize| place[i] * b + c + SIDE <= n * b;
                    x86::square_at::<false, false>(groups, row, streams, |j| to[j], whole)
                } else {
                    super::x86::square_edge(1, from, c as isize, to, 0, reads)
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(test)]
mod tests;
