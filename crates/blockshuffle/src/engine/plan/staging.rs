//! How a streaming deinterleaving tile is staged ([`TileStage`]): a chunk
//! of rows at a time through a stage, each destination stream's run then
//! streamed out through a slot of its own; and the row level it is staged
//! at ([`row_level`]), which the carried kernels' rule asks too. How a
//! plan through the cache over a destination past the caches is staged
//! ([`DestinationStage`]): a chunk of whole destination blocks at a time,
//! then streamed out as one run.
//!
//! Layer: plan; imports kernels (the loop nest's data, the stages' and
//! the slots' sizes); never exec or [`compile`](super::compile).

use arrayvec::ArrayVec;

use super::order::free;
use crate::engine::kernels::bytes::DESTINATION_STAGE_BYTES;
use crate::engine::kernels::lines::SLOTS;
use crate::engine::kernels::nest::{Loop, MAX_LOOPS};
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

/// How a plan that stores through the cache, over a destination past the
/// caches, is staged: each position of its first `prefix` loops writes one
/// *block* of `block` contiguous destination bytes, and the positions go
/// in the destination's order, block after block; the executor runs
/// `chunk` positions at a time (at most [`DESTINATION_STAGE_BYTES`]) into
/// a stage that stays in the cache, by the plan's own kernels, and then
/// streams the stage out to the destination as one run. The destination
/// is then written once, in whole lines, instead of each of its lines
/// read into the cache before the kernels' stores.
///
/// Measured on an AMD EPYC (Zen 1, AVX2, 512 KiB of L2; ratio to memcpy,
/// one thread, each workload's best of 3 alternated runs) on the broad
/// workloads of 16 MiB and more it reaches: seed 26, 20 of 211 (tiles
/// through the cache of units without a streaming kernel, mostly
/// channels-first depth-to-space, pixel shuffles and einops interleaves,
/// and NHWC grids of rows), 0.85 of the time (the 191 others 1.00;
/// OpenVINO depth-to-space of 3-byte units by 5, 2.8 -> 1.5x memcpy;
/// ONNX depth-to-space of 32-byte units by 8, 1.49 -> 1.01); held out,
/// seeds 801 and 802, 47, 0.91, 6 of them slower by more than 5% (NHWC
/// space-to-depth of 13-byte units by 13, 1.09 -> 1.28; pixel shuffle of
/// 3-byte units by 9, 2.35 -> 2.72). On two threads, the 67: 0.86.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DestinationStage {
    /// Loops outside the blocks (at least one, and at least the two
    /// innermost loops inside them).
    pub prefix: usize,
    /// Destination bytes of a block.
    pub block: usize,
    /// Blocks staged at a time.
    pub chunk: usize,
}

impl DestinationStage {
    /// The blocks of `loops` (the positions of the prefix loops).
    pub(crate) fn blocks(&self, loops: &[Loop]) -> usize {
        loops[..self.prefix].iter().map(|l| l.count).product()
    }
}

/// The [`DestinationStage`] of a plan through the cache with `loops` of
/// `unit`-byte units, if it has one: the fewest outer loops whose every
/// position writes one dense block of destination bytes of at most
/// [`DESTINATION_STAGE_BYTES`], the loops inside them (at least two: a
/// kernel's loops stay whole) covering the block's bytes each once (as
/// a row-major layout's strides do), and the outer loops in the destination's
/// order (each one's stride its inner one's times that one's count), so
/// that position `p` writes bytes `[p * block, (p + 1) * block)` from the
/// plan's destination base. Every position of the block must be written:
/// a plan with a window either fills its padding (`fill`) or has none.
pub(crate) fn destination_stage(loops: &[Loop], unit: usize, fill: bool) -> Option<DestinationStage> {
    if !fill && !loops.iter().all(free) {
        return None;
    }
    let n = loops.len();
    for prefix in 1..=n.saturating_sub(2) {
        let block = loops[prefix - 1].ds;
        let ordered =
            (1..prefix).all(|j| loops[j].ds.checked_mul(loops[j].count as isize).is_some_and(|d| d == loops[j - 1].ds));
        if block <= 0 || !ordered {
            return None;
        }
        if dense(&loops[prefix..], unit) == Some(block as usize) && block as usize <= DESTINATION_STAGE_BYTES {
            let block = block as usize;
            return Some(DestinationStage { prefix, block, chunk: DESTINATION_STAGE_BYTES / block });
        }
    }
    None
}

/// The bytes that `loops` of `unit`-byte units cover exactly, each once,
/// if they do: taken by increasing destination stride, each loop's stride
/// is the bytes the ones before it cover (the first's, the unit), as a
/// row-major layout's are; `None` otherwise (gaps or overlaps, whatever
/// the total).
fn dense(loops: &[Loop], unit: usize) -> Option<usize> {
    let mut steps: ArrayVec<(isize, usize), MAX_LOOPS> = loops.iter().map(|l| (l.ds, l.count)).collect();
    steps.sort_unstable();
    steps
        .iter()
        .filter(|&&(_, count)| count > 1)
        .try_fold(unit, |covered, &(ds, count)| (ds == covered as isize).then(|| covered.checked_mul(count)).flatten())
}
