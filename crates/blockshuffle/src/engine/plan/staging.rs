//! How a streaming deinterleaving tile is staged ([`TileStage`]): a chunk
//! of rows at a time through a stage, each destination stream's run then
//! streamed out through a slot of its own; and the row level it is staged
//! at ([`row_level`]), which the carried kernels' rule asks too.
//!
//! Layer: plan; imports kernels (the loop nest's data, the stage's and
//! the slots' sizes); never exec or [`compile`](super::compile).

use super::order::free;
use crate::engine::kernels::lines::SLOTS;
use crate::engine::kernels::nest::Loop;
use crate::engine::kernels::tile::TILE_STAGE_BYTES;

/// Most destination streams a staged tile of units narrower than
/// [`MIN_MANY_STREAMS_UNIT`] may write.
const MAX_NARROW_TILE_STREAMS: usize = 8;

/// Smallest unit (bytes) of a staged tile of more than
/// [`MAX_NARROW_TILE_STREAMS`] streams. Narrower units' deinterleave into
/// many streams runs slower than memory (uint8 by 10 in the register
/// transposes, float16 by 5 unit by unit: 2.6-2.8x memcpy, the kernel's
/// own time), so the pass from the stage adds to what the reads of
/// destination lines it saves do not: measured on an AMD EPYC (Zen 1,
/// AVX2), 2 to 3 alternated runs, the broad (seeds 26, 801, 802) NCHW
/// space-to-depth and pixel unshuffle tiles of 16 MiB and more staged
/// against through the cache, uint8 by 5 to 16 (10 workloads) 1.07 of the
/// time (TF by 6, 36 streams, 1.67 -> 2.06x memcpy), float16 (11) about
/// 1.08 (OpenVINO by 5, 2.42 -> 3.14x), while wider units gained (see
/// [`TileStage`]). Earlier, with the line writers finding each stream by
/// its address (16 of them), 16 streams measured slower than cached
/// stores, 4 much faster.
const MIN_MANY_STREAMS_UNIT: usize = 4;

/// Shortest run of one destination stream worth staging a tile for.
const MIN_TILE_STREAM_RUN: usize = 1 << 10;

/// How a streaming tile plan is staged: `chunk` iterations of loop `level`
/// at a time, with every loop inside it (at most one more loop, the
/// *streams* loop, then the tile's two) run into a staging buffer where
/// each destination stream (a pair of streams-loop and tile-x indices) is
/// one contiguous run of `chunk` tile rows; each run then leaves with
/// streaming stores as one long write, through a slot of its own that
/// joins it with the stream's next run (`kernels::lines::Slots`), so that
/// every line but a stream's first and last is stored whole, however many
/// streams (up to [`SLOTS`]).
///
/// Measured on an AMD EPYC (Zen 1, AVX2; ratio to memcpy, one thread,
/// each workload's best of alternated runs), against through the cache
/// in the destination's order with the passes blocked (`block_passes`):
/// the broad workloads it stages, NCHW and NCHW_VECT_C space-to-depth and
/// pixel unshuffle of 4- to 16-byte units in 16 to 256 streams: the 14
/// of seed 26 (of 640), 0.915 of the time over 2 runs of the whole set
/// (the other 626: 0.995) and 0.894 over 3 more (TF NCHW space-to-depth
/// of complex128 by 8, 2.15 -> 1.58x memcpy; NCHW_VECT_C by 9, 163 MiB,
/// 2.74 -> 2.10x); held out, the 26 of seed 801 0.880 and the 18 of seed
/// 802 0.867 (3 runs each; 2 of the 44 above 1.05: NCHW_VECT_C by 5 and 6
/// of rows of 1-2 KiB, 1.12 and 1.06).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TileStage {
    pub level: usize,
    pub chunk: usize,
}

/// The [`TileStage`] of a streaming tile plan, if it has one: the staged
/// loop must step every destination stream by exactly one tile row
/// (`ds == ny * unit`), so that `k` of its iterations put `k * ny * unit`
/// contiguous bytes in each stream, and neither it nor the streams loop may
/// carry a window.
pub(crate) fn tile_stage(loops: &[Loop], unit: usize) -> Option<TileStage> {
    let n = loops.len();
    let row = loops[n - 1].count * unit;
    let (level, streams) = row_level(loops, unit)?;
    if streams > if unit < MIN_MANY_STREAMS_UNIT { MAX_NARROW_TILE_STREAMS } else { SLOTS } {
        return None;
    }
    let per_iteration = loops[n - 2].count.checked_mul(row).filter(|&b| b <= TILE_STAGE_BYTES)?;
    let chunk = (TILE_STAGE_BYTES / per_iteration).min(loops[level].count);
    (chunk * row >= MIN_TILE_STREAM_RUN).then_some(TileStage { level, chunk })
}

/// The loop of a tile plan that steps every destination stream by exactly
/// one tile row (`ds == ny * unit`), with at most one loop (the *streams*
/// loop) between it and the tile, neither of them carrying a window, and
/// the number of destination streams inside it; `None` for an
/// interleaving tile (one destination stream, `x.ds == row`).
pub(super) fn row_level(loops: &[Loop], unit: usize) -> Option<(usize, usize)> {
    let n = loops.len();
    let row = loops[n - 1].count * unit;
    if loops[n - 2].ds == row as isize {
        return None;
    }
    let level = (n.saturating_sub(4)..n - 2).rev().find(|&j| loops[j].ds == row as isize)?;
    if !loops[level..n - 2].iter().all(free) {
        return None;
    }
    Some((level, loops[level + 1..n - 1].iter().map(|l| l.count).product()))
}
