//! Streaming rows: which rows stream one unit at a time
//! ([`streams_rows`]) and gathered rows joined through the line writers
//! ([`gather_lines`]).
//!
//! Layer: kernels; imports [`copy`](super::copy), [`lines`](super::lines)
//! and arch.

use super::copy::{stream_vectors, sweep, through_stage};
use super::lines::Writers;
use crate::engine::arch::mem::{prefetch, LINE};
use crate::engine::arch::Isa;

/// Units of rows that continue one another stream one by one
/// ([`streams_rows`]) up to this size (bytes). Longer units keep their
/// plans (the line writers): measured with the limit lifted, their plans
/// left the line writers for the cache and slowed down (float64 NHWC
/// batch-to-space 2x2 of 64 channels 0.82-0.93 -> 1.34-1.37x memcpy),
/// while units of 256 and 384 bytes streamed faster than through the
/// writers (uint8 space-to-depth by 2 of 128 channels 1.21-1.30 ->
/// 0.67-0.79, float32 batch-to-space 4x4 of 64 channels 0.97-1.00 ->
/// 0.48-0.52, float16 space-to-depth by 3 of 64 channels 0.79-0.87 ->
/// 0.58-0.63).
pub(crate) const MAX_STREAMED_UNIT: usize = 512;

/// Units of rows that continue one another stream one by one
/// ([`streams_rows`]) from this size (bytes), one 16-byte vector: measured
/// (ratio to memcpy, 2 runs in separate processes, through the cache or a
/// tile -> so) on NHWC batch-to-space of 16-byte units (16 uint8, 8
/// float16 or 4 float32 channels) by 3 and 4, 0.67-0.83 -> 0.68-0.75, and
/// cropped by 1, whose windowed tiles stored through the cache,
/// 1.13-1.18 -> 0.61-0.74. Rows of two such units (by 2) stream only
/// cropped (see `plan::rules::MIN_STREAMED_ROW`).
pub(crate) const MIN_STREAMED_UNIT: usize = 16;

/// Most units in a row of [`streams_rows`]: each of a row's unit positions
/// is a source stream, which the hardware prefetchers follow up to
/// [`UNFETCHED_STREAMS`], and [`fetches_streams`] fetches past that.
///
/// Was 4, the most the prefetchers follow alone: rows of 5 to 16 units went
/// to a tile (staged and streamed out, or stored through the cache), 1.3 to
/// 3.6x memcpy. Streamed, their streams fetched ahead, measured on an AMD
/// EPYC (Zen 5), one thread, 4 alternated runs, paired per-round ratios:
/// the 60 such plans of broad seeds 26 and 801-803 (NCHW depth-to-space,
/// pixel shuffles and batch-to-space of 16- to 448-byte units by 5 to 16),
/// 0.54 of the time, 57 faster by 5% or more, none slower, 2.12 -> 1.13x
/// memcpy (those of 16 MiB and more 2.14 -> 1.06x); streamed without the
/// fetch, 1.00. Held out, the 97 of seeds 804-810: 0.56 of the time, 1.95
/// -> 1.10x memcpy, 91 faster, one slower (TF batch-to-space by 7 of
/// 32-byte units, 17 MiB, 0.95 -> 1.07x). Two threads, the 60 (2 rounds):
/// 0.72 of the time, 1.64 -> 1.15x, 9 slower, 5 of them by 17-47%, all
/// outputs of 9 to 15 MiB.
pub(crate) const MAX_STREAMED_STREAMS: usize = 16;

/// The most source streams of a streamed grid the hardware prefetchers
/// keep up with alone, where each row reads less than a line of each
/// ([`fetches_streams`]).
const UNFETCHED_STREAMS: usize = 4;

/// Whether a grid streams its units straight from the source, one unit at
/// a time ([`Grid::stream_rows`](super::grid::Grid::stream_rows)): units
/// of whole 16-byte vectors
/// ([`MIN_STREAMED_UNIT`] to [`MAX_STREAMED_UNIT`] bytes), rows of up to
/// [`MAX_STREAMED_STREAMS`] units contiguous in the destination that
/// continue one another (one run), each row one unit on in the source
/// from the last (so that each unit position of a row reads a sequential
/// stream: the block rows of an NHWC space-to-depth, the batches of a
/// batch-to-space).
///
/// Measured in one process alternating the two, ratio to memcpy:
/// - through the cache -> so: uint8 NHWC space-to-depth by 2 of 32
///   channels (64-byte units, rows of 128 bytes) 1.06-1.08 -> 0.84-0.90;
///   batch-to-space 3x3 of 64 uint8 channels 1.04-1.31 -> 0.67-1.10 (4
///   runs, 3 of them 0.67-0.72), 2x2 of 96 1.11-1.13 -> 0.69-0.70, 2x2 of
///   16 float32 channels 0.96 -> 0.67-0.75;
/// - gathered row by row (`copy::stream_gather`, whose sweep fetches the
///   source ahead) -> so, 3 runs: rows of 256 bytes, space-to-depth by 2
///   of 32 float16 channels 0.80-0.86 -> 0.74-0.79, batch-to-space 2x2 of
///   32 float32 channels 0.86-0.88 -> 0.72-0.73; rows of 384, batch-to-space
///   3x3 of 64 float16 channels 0.69-0.76 -> 0.57-0.65; rows of 512,
///   space-to-depth by 4 of 16 float16 channels 0.72-0.80 -> 0.62-0.72,
///   batch-to-space 4x4 of 64 float16 channels 0.72-0.82 -> 0.48-0.56;
///   rows of 576, space-to-depth by 3 of 64 uint8 channels 0.68-0.76 ->
///   0.60-0.67. (An earlier single run had the rows of 512 and 576 bytes
///   slower, 0.59-0.60 -> 0.69-0.70.)
#[inline(always)]
pub(crate) fn streams_rows(unit: usize, n0: usize, ds0: isize, ss1: isize, ds1: isize) -> bool {
    (MIN_STREAMED_UNIT..MAX_STREAMED_UNIT).contains(&unit)
        && unit.is_multiple_of(16)
        && n0 <= MAX_STREAMED_STREAMS
        && ds0 == unit as isize
        && ss1 == unit as isize
        && ds1 == (n0 * unit) as isize
}

/// Whether a streamed grid
/// ([`Grid::stream_rows`](super::grid::Grid::stream_rows),
/// [`whole_rows`](super::copy::whole_rows)) of `n0` units of `unit` bytes
/// a row, its unit positions `ss0` apart in the source, fetches each of
/// its source streams [`STREAM_AHEAD`](super::copy::STREAM_AHEAD) bytes
/// ahead: where the streams start less than [`SHORT_STREAM`] apart (the
/// image rows of one block of an NHWC space-to-depth: short streams, one
/// row each, which the hardware prefetchers pick up anew each block), or
/// where there are more than [`UNFETCHED_STREAMS`] of them, or that many
/// of units of a line or more (the batches of a batch-to-space by 4 x 4),
/// more than the prefetchers keep up with beside the destination's (for
/// more than 4, see [`MAX_STREAMED_STREAMS`]).
///
/// Measured on an AMD EPYC (Zen 5), one thread, alternated runs, paired
/// per-round ratios, time fetched over not, on the 74 streamed grids of
/// broad seeds 26 and 801-810 (each run its own figures unfetched):
/// - fetching always (4 rounds): 0.96-0.98 of the time, the plans over
///   1.10x memcpy 9 -> 2; 1 KiB ahead 1.058 (seeds 26 and 801-805), 2 KiB
///   0.984, 4 KiB 0.981. The streams less than 64 KiB apart gained most
///   (0.66-0.95), those 73-82 KiB apart 0.90-1.06; so did 4 streams far
///   apart of 64 bytes or more (0.86); the other streams far apart (2 or
///   3, or of units under a line), already faster than memcpy
///   (0.7-0.98x), lost 1-4%;
/// - this rule (4 rounds): 0.977 of the time, the plans over 1.10x memcpy
///   14 -> 4 (the slowest 1.38 -> 1.24); the 19 of streams less than 64
///   KiB apart 0.89 (0.70-1.04), 12 faster by 5% or more, none slower
///   (NHWC space-to-depth by 2 of one 32-byte channel, 61 MiB: 1.36 ->
///   0.95x memcpy);
/// - the 7 of 4 streams far apart of a line or more and 10 variants of the
///   public W4 (float32 batch-to-space by 4 x 4, 256-byte units; other
///   widths, channels and crops), 6 rounds: 0.96 of the time, those over
///   1.10x memcpy 7 -> 2 (W4 1.12 -> 0.98).
pub(super) fn fetches_streams(n0: usize, ss0: isize, unit: usize) -> bool {
    ss0.unsigned_abs() < SHORT_STREAM || n0 > UNFETCHED_STREAMS || (n0 == UNFETCHED_STREAMS && unit >= LINE)
}

/// The source streams of a streamed grid that start less than this many
/// bytes apart are fetched ahead ([`fetches_streams`]).
const SHORT_STREAM: usize = 64 << 10;

/// Gathers `n` units into the contiguous destination row at `dst` with
/// streaming stores: the row's whole lines straight from the source, and
/// the parts of lines at its ends through the writers `w`, which join them
/// with the rows that share those lines (before and after it in the
/// destination, whenever they come), so that every line is stored whole.
/// The source ahead is fetched ([`sweep`]), however near the row's units
/// (see `copy::stream_gather`'s measurements).
///
/// A row stored straight to its ends leaves a line half-written at each
/// end whenever it does not start and end on line boundaries (a `Vec`'s
/// data is 16 bytes past one): measured, OpenVINO's 5-D space-to-batch of
/// uint8 (256-byte rows, 12 destination streams) ran at 2.1x memcpy so.
///
/// Units of whole 16-byte vectors at a 16-byte-aligned destination go
/// straight from the source, the parts of lines at the row's ends too
/// ([`Writers::push_pieces`]: measured, the 5-D space-to-batch of 128-byte
/// units, W11, 6 runs alternating, median 0.838 -> 0.773x memcpy, and 3
/// more, 1.14 -> 0.86, where they were gathered into a staging buffer
/// and pushed from it); others are gathered into a staging buffer and
/// pushed to the writers from it. Kept out of line: its stack buffer must
/// not weigh on the frames of the hot kernels.
///
/// # Safety
/// As [`copy_run`](super::copy::copy_run) with `ds == unit`, and as
/// [`Writers::push`] for the row; `isa` one this CPU runs.
#[inline(never)]
pub(crate) unsafe fn gather_lines(
    w: &mut Writers,
    n: usize,
    src: *const u8,
    ss: isize,
    dst: *mut u8,
    unit: usize,
    isa: Isa,
) {
    let len = n * unit;
    // Where the source is fetched ahead: row bytes `at..at + bytes` at
    // `ahead + at`.
    let ahead = sweep(src, n.saturating_mul(ss.unsigned_abs()), len);
    // The row's whole lines: destination bytes `[a, b)`.
    let a = (dst as usize).wrapping_neg() % LINE;
    let b = if a < len { a + (len - a) / LINE * LINE } else { a };
    #[cfg(target_arch = "x86_64")]
    if (dst as usize | unit).is_multiple_of(16) && a < b {
        // SAFETY: every byte in `[0, len)` of the row is pushed or stored
        // once, in the destination's order; each store is 16 bytes of one
        // unit, at a 16-byte-aligned destination (`dst`, `unit` and `a` are
        // multiples of 16); `[a, b)` is whole lines that no other run
        // writes, so the stream that reached `a` goes on past them.
        unsafe {
            let fetch = |at: usize, bytes: usize| prefetch(ahead.wrapping_add(at), bytes);
            // Piece `j` of the row's bytes from `from` on (within a unit).
            let pieces = |from: usize| {
                move |j: usize| {
                    let at = from + 16 * j;
                    src.wrapping_offset((at / unit) as isize * ss).wrapping_add(at % unit)
                }
            };
            fetch(0, a);
            w.push_pieces(dst, a, pieces(0));
            // The lines: the rest of the unit that `a` falls in, whole
            // units, and the first part of the unit that `b` falls in.
            let (i, k) = (a / unit, a % unit);
            let mut s = src.wrapping_offset(i as isize * ss);
            let mut at = a;
            if k != 0 {
                let part = (unit - k).min(b - at);
                stream_vectors(s.add(k), dst.add(at), part);
                at += part;
                s = s.wrapping_offset(ss);
            }
            while at + unit <= b {
                fetch(at, unit);
                stream_vectors(s, dst.add(at), unit);
                at += unit;
                s = s.wrapping_offset(ss);
            }
            if at < b {
                stream_vectors(s, dst.add(at), b - at);
            }
            w.skip(dst.add(a), b - a);
            fetch(b, len - b);
            w.push_pieces(dst.add(b), len - b, pieces(b));
        }
        return;
    }
    let _ = b;
    prefetch(ahead, len);
    // SAFETY: each chunk's bytes are those of units `i..` of the row, pushed
    // in its order.
    unsafe { through_stage(n, src, ss, unit, isa, |part, i, len| w.push(part, dst.add(i * unit), len)) };
}
