//! Streaming deinterleaves of more streams than the register kernels
//! carry, staged a chunk of rows at a time ([`TileStage`]).

use super::super::compile::*;
use super::super::staging::TileStage;
use super::nchw_blocked;
use crate::engine::arch::Isa;
use crate::engine::kernels::lines::SLOTS;
use crate::engine::kernels::tile::TILE_STAGE_BYTES;

/// NCHW space-to-depth by `b` of a `c x h x w` plane of `elem`-byte
/// units, streamed on AVX2: its plan's tile stage.
fn stage(c: usize, h: usize, w: usize, b: usize, elem: usize) -> (CopyPlan, Option<TileStage>) {
    let p = nchw_blocked([1, c, h, w], b, elem, Direction::Forward, Isa::Avx2);
    let stage = p.tile_stage;
    (p, stage)
}

/// In the source's order, the image rows (the stage level) outside the
/// block rows (the streams loop) and the tile; chunks of as many rows as
/// the stage holds of one block row's `b` streams, each stream's part
/// pushed to a slot of its own: from 25 streams (float32 by 5) to all the
/// slots (by 16: 256), of 4- to 8-byte units, whatever the row's length
/// in lines.
#[test]
fn many_streams_of_wide_units_are_staged_a_chunk_of_rows_at_a_time() {
    for (b, elem, w) in [(5usize, 4usize, 1205usize), (9, 4, 900), (13, 8, 1118), (16, 4, 752), (16, 8, 512)] {
        let (p, stage) = stage(2, 20 * b, w, b, elem);
        let row = w / b * elem;
        let n = p.loops.len();
        let want = TileStage { level: n - 4, chunk: (TILE_STAGE_BYTES / (b * row)).min(20) };
        assert_eq!(stage, Some(want), "by {b} of {elem}-byte units");
        assert!(p.tile && p.nt && p.carry_level.is_none(), "by {b} of {elem}-byte units");
        let [level, streams, x, y] = [n - 4, n - 3, n - 2, n - 1].map(|j| p.loops[j]);
        assert_eq!((level.count, level.ds), (20, row as isize), "by {b} of {elem}-byte units");
        assert_eq!((streams.count, streams.ss), (b, (w * elem) as isize), "by {b} of {elem}-byte units");
        assert_eq!((x.count, x.ss, y.count, y.ds), (b, elem as isize, w / b, elem as isize));
        assert!(streams.count * x.count <= SLOTS);
    }
}

/// Bytes and 2-byte units in more than 8 streams are not staged (their
/// deinterleave is slower than memory): they store through the cache.
/// Nor are units whose `b` streams' rows outgrow the stage (float32 by 9:
/// 9 rows of 3,640 bytes fill it, of 3,644 do not), or more streams than
/// the slots (by 17: 289).
#[test]
fn narrow_units_in_many_streams_and_rows_past_the_stage_are_not_staged() {
    for elem in [1, 2] {
        let (p, none) = stage(2, 180, 900, 9, elem);
        assert!(none.is_none() && p.tile && !p.nt, "{elem}-byte units");
    }
    let (p, fits) = stage(1, 9 * 4, 9 * 910, 9, 4);
    assert_eq!(fits, Some(TileStage { level: p.loops.len() - 4, chunk: 1 }));
    let (_, past) = stage(1, 9 * 4, 9 * 911, 9, 4);
    assert_eq!(past, None);
    let (_, many) = stage(1, 17 * 20, 17 * 60, 17, 4);
    assert_eq!(many, None);
}
