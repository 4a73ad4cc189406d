//! A padded tile's block: the loops around a space-to-batch tile that pads
//! its source rows and whose repetitions continue its destination rows,
//! staged a block at a time ([`padded_block`]); the tile's choice
//! (`rules::choose_tile`) asks it too. And where a padded tile outside
//! such a block is staged whole ([`stages_padded_tiles_whole`]).
//!
//! Layer: plan; imports kernels (the loop nest's data, the stage's size)
//! and arch (the second-level cache's size); never exec or
//! [`compile`](super::compile).

use crate::engine::arch::cache::second_level;
use crate::engine::kernels::bytes::STAGE;
use crate::engine::kernels::nest::Loop;

/// Whether a padded tile whose source positions run on, and which the
/// stage holds (exec's `padded_source_tile`: a space-to-batch tile padding
/// a source axis innermost in the source, outside a [`padded_block`]), is
/// staged whole, as many repetitions at a time as the stage holds, in an
/// output of `dst_bytes`: where the output and its source (about as many
/// bytes) fit the second-level cache
/// ([`second_level`](crate::engine::arch::cache::second_level), as CPUID
/// tells it or assumed),
/// so that copying them into the stage costs little. Past it, the tile's
/// columns valid for every block offset go straight from the source, its
/// loads overlapping the kernel's work (fetched ahead where the kernel
/// does: `Rows::fetch_ahead`), and only the columns with padding are
/// staged, as for a tile the stage does not hold. The whole output's
/// bytes decide, however many threads share it; the figures below are of
/// one thread.
///
/// Measured on an AMD EPYC (Zen 4, L2 1 MiB: staged whole up to 512 KiB),
/// one thread, time with the middle straight over time staged whole, each
/// plan's median: the 67 such plans of broad seeds 26 and 801-804
/// (OpenVINO and TF space-to-batch padded on W; 2 alternated runs of 5
/// repetitions), outputs under 512 KiB (26) 1.06, 15 slower by more than
/// 5% (TF of 3-byte units by 15 of 0.08 MiB, 6.6 -> 9.5x memcpy); past 512
/// KiB (41), which the rule takes, 0.80, 35 faster by more than 5%
/// (OpenVINO of 3-byte units by 7 x 7 x 8 padded by one on W, 76 MiB, 3.2
/// -> 1.7x), 5 slower (the worst, TF of 16-byte units by 15 x 4 with 2 of
/// 4 columns padded, 2.5 MiB, 1.32 the time). Held out, on the rule's
/// build, the 35 plans past 512 KiB of seeds 805-808 (4 alternated runs,
/// 2 each way): 0.82, 28 faster by more than 5%, 5 slower, the worst two
/// tiles of a few hundred bytes (OpenVINO of uint8 by 1 x 15 x 3 x 5,
/// 110-byte tiles, 4.6 MiB, 4.1 -> 6.2x, and of float64 by 1 x 3 x 16 x
/// 9, 504-byte tiles, 5.8 MiB, 2.6 -> 3.4x, each in 3 more runs), whose
/// repetitions the whole stage makes contiguous; others that small were
/// faster (0.73 to 0.90: 282- to 432-byte tiles).
pub(crate) fn stages_padded_tiles_whole(dst_bytes: usize) -> bool {
    staged_whole_within(dst_bytes, second_level())
}

/// [`stages_padded_tiles_whole`] for a second-level cache of `l2` bytes.
pub(super) fn staged_whole_within(dst_bytes: usize, l2: usize) -> bool {
    dst_bytes.checked_mul(2).is_some_and(|both| both <= l2)
}

/// The outermost loop of a padded tile's block, if it has one of two
/// loops or more: the tile (loops `x` and `y`, the last two) pads a source
/// axis whose positions run on (`y`'s window on `x`'s index, `oc == 1`,
/// `ic == nx`, a source step of `nx` units along `y`: space-to-batch of a
/// padded axis innermost in the source, each block offset `x` a stream),
/// and the loops from the block's first to the tile each continue the
/// destination rows of the loops inside them (`ds` the bytes those
/// cover, the tile's `ny` units for the loop next to it), their windows
/// depending on loops outside the block alone. An index of the block's
/// first loop is then one run of the destination's streams, and the
/// padded source rows of as many of its indices as the stage holds
/// (`kernels::bytes::STAGE`, the padding filled there, rows outside the
/// windows all padding) go through the tile's kernel in one call, as one
/// tile repeated (`exec`'s `padded_block`), rather than a call for each
/// index of the loop next to the tile. Each index's rows must fit the
/// stage, and a call take at least twice the rows of the loop next to
/// the tile (which alone is the tile's repetitions, staged as they are);
/// `None` where no such block is.
///
/// Measured on an AMD EPYC (Zen 4; one thread, 5 alternated runs of 10
/// repetitions, time after over before) on the broad workloads it takes,
/// all OpenVINO and TF space-to-batch with padding: seeds 26 and 802 (5
/// each, from which the rule was drawn) 0.62 and 0.71; held out, seeds
/// 801 and 803 to 806 (32), 0.47 to 0.79 a seed; 41 of the 42 faster
/// (OpenVINO's of float16 by 13 x 14 x 15, 0.08 MiB, 52 -> 23x memcpy;
/// of uint8 by 11 x 7 x 10, 1 MiB, 31 -> 10). Slower, by 8%, 3-byte
/// units by 4 x 14 x 6 (8 MiB, rows of 396 bytes, 20 a call against 10).
/// Before the two conditions from seed 802: a block all padding in the
/// stage through the tile's kernel (OpenVINO's of 12-byte units by 7 x 3
/// x 7, 6 of its 7 blocks all padding, 1.8 times the time; now filled
/// whole, 0.42), and a call of no more rows than before (8- and 16-byte units,
/// 1.06 to 1.14). Filling only the rows' padding, rather than the stage
/// once, measured 1.13 the time. On the final build (with the executor's
/// check of this rule, its rows walked by `copy::odometer`), every broad
/// workload it takes in seeds 26 and 801-810 (69, 8 of them tiles for it:
/// `rules::choose_tile`), 0.53 of the time, none slower by more than 5%;
/// the 24 of seeds 807-810, held out, 0.51 to 0.67 a seed.
pub(crate) fn padded_block(loops: &[Loop], unit: usize) -> Option<usize> {
    let n = loops.len();
    let [.., x, y] = loops else { return None };
    let win = y.window?;
    let (nx, ny) = (x.count, y.count);
    let col = nx.checked_mul(unit)?;
    let tile = col.checked_mul(ny)?;
    let runs_on = x.window.is_none()
        && win.outer == Some((n - 2) as u8)
        && win.oc == 1
        && win.ic == nx as i64
        && y.ss == col as isize;
    if !runs_on || tile == 0 || tile > STAGE {
        return None;
    }
    // From the loop next to the tile outward: the rows inside loop `k`
    // (each a tile) and the destination bytes they cover.
    let (mut first, mut rows, mut covers) = (None, 1usize, (ny * unit) as isize);
    for k in (0..n - 2).rev() {
        let l = &loops[k];
        let outside = |m: &Loop| m.window.is_none_or(|w| w.outer.is_none_or(|o| (o as usize) < k));
        let fits = rows.checked_mul(tile).is_some_and(|b| b <= STAGE);
        if l.ds != covers || !fits || !loops[k..n - 2].iter().all(outside) {
            break;
        }
        first = Some((k, rows));
        let (Some(r), Some(c)) = (rows.checked_mul(l.count), covers.checked_mul(l.count as isize)) else { break };
        (rows, covers) = (r, c);
    }
    // At least twice the rows a call of the loop next to the tile alone.
    let (k, per) = first.filter(|&(k, _)| k + 4 <= n)?;
    let call = (STAGE / (per * tile)).min(loops[k].count) * per;
    (call >= loops[n - 3].count.saturating_mul(2)).then_some(k)
}
