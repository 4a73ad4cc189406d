//! Plans through the cache over destinations past the caches, staged a
//! chunk of whole destination blocks at a time ([`DestinationStage`]).

use super::super::compile::*;
use super::super::staging::{destination_stage, DestinationStage};
use super::{compile_c, counts_and_strides, l, nchw_depth_to_space};
use crate::engine::kernels::bytes::DESTINATION_STAGE_BYTES;
use crate::engine::kernels::nest::{Loop, Window};

/// TF NCHW depth-to-space by 2 of 3-byte units, `[1, 64, 1218, 436]` (a
/// broad workload, 97 MiB): a tile through the cache (no vector kernel
/// streams 3-byte units on AVX2), each output row pair one position of
/// the outer loop, 2 x 872 units; the stage takes as many of those
/// 5,232-byte blocks as it holds. Not staged where the plan does not
/// stream (a destination in the caches), nor where it streams itself.
#[test]
fn a_tile_through_the_cache_is_staged_a_chunk_of_destination_rows_at_a_time() {
    let (g, space, block) = nchw_depth_to_space(16, 1218, 436, 2);
    let p = compile_c(&g, Direction::Backward, 3, &space, &block, true);
    assert!(p.tile && !p.nt);
    let rows = 872 * 3;
    assert_eq!(
        counts_and_strides(&p.loops),
        [
            (16 * 1218, 436 * 3, 2 * rows as isize),
            (2, 16 * 1218 * 436 * 3 * 2, rows as isize),
            (436, 3, 6),
            (2, 16 * 1218 * 436 * 3, 3)
        ]
    );
    let want = DestinationStage { prefix: 1, block: 2 * rows, chunk: DESTINATION_STAGE_BYTES / (2 * rows) };
    assert_eq!(p.dst_stage, Some(want));
    assert_eq!(want.chunk, 25);
    assert_eq!(want.blocks(&p.loops), 16 * 1218);
    let cached = compile_c(&g, Direction::Backward, 3, &space, &block, false);
    assert_eq!(cached.dst_stage, None);
    // Float32 has a vector tile kernel, but its interleave streams only
    // where a carried kernel takes it: through the cache, staged too.
    let cached4 = compile_c(&g, Direction::Backward, 4, &space, &block, true);
    assert!(!cached4.nt);
    assert_eq!(cached4.dst_stage.map(|s| s.block), Some(2 * 872 * 4));
}

/// The rule on loop nests: the fewest outer loops whose positions are
/// dense blocks of at most the stage, in the destination's order, with
/// at least two loops inside them.
#[test]
fn the_blocks_are_the_fewest_outer_loops_of_dense_destination_blocks() {
    // Rows of 1,000 units of 4 bytes, two rows a block.
    let nest = [l(50, 16_000, 8_000), l(2, 8_000, 4_000), l(1_000, 4, 4)];
    // Too few loops inside any prefix but the first: two at least.
    assert_eq!(destination_stage(&nest[1..], 4, false), None);
    let (block, chunk) = (8_000, DESTINATION_STAGE_BYTES / 8_000);
    let outer = [l(7, 400_000, 400_000), nest[0], nest[1], nest[2]];
    // Prefix 1 is a block of 400,000 bytes, past the stage: prefix 2.
    assert_eq!(destination_stage(&outer, 4, false), Some(DestinationStage { prefix: 2, block, chunk }));
    assert_eq!(DestinationStage { prefix: 2, block, chunk }.blocks(&outer), 350);
    // The outer loops out of the destination's order: none.
    let swapped = [nest[0], l(7, 400_000, 400_000), nest[1], nest[2]];
    assert_eq!(destination_stage(&swapped, 4, false), None);
    // Inner loops that leave gaps (rows 4,004 bytes apart) or overlap: none.
    let gaps = [l(7, 1, 8_008), l(2, 8_000, 4_004), l(1_000, 4, 4)];
    assert_eq!(destination_stage(&gaps, 4, false), None);
    let tile_streams = [l(7, 1, 8_000), l(1_000, 4, 8), l(2, 4_000, 4)];
    assert_eq!(destination_stage(&tile_streams, 4, false), Some(DestinationStage { prefix: 1, block, chunk }));
    let overlapping = [l(7, 1, 8_000), l(1_000, 4, 8), l(2, 4_000, 2)];
    assert_eq!(destination_stage(&overlapping, 4, false), None);
    // Overlaps and gaps whose total is the block (bytes 0, 2, 4 twice,
    // 6 and 8 of 9; 1, 3, 5 and 7 never): none.
    let both = [l(5, 1, 9), l(3, 7, 2), l(3, 11, 2)];
    assert_eq!(destination_stage(&both, 1, false), None);
    let row_major = [l(5, 1, 9), l(3, 7, 3), l(3, 11, 1)];
    assert_eq!(
        destination_stage(&row_major, 1, false),
        Some(DestinationStage { prefix: 1, block: 9, chunk: DESTINATION_STAGE_BYTES / 9 })
    );
    let far_streams = [l(7, 1, 4_000), l(1_000, 4, 8), l(2, 4_000, 28_000)];
    assert_eq!(destination_stage(&far_streams, 4, false), None);
    // A block of exactly the stage: one at a time.
    let whole = [l(3, 1, 1 << 17), l(1 << 12, 4, 32), l(8, 4 << 12, 4)];
    assert_eq!(destination_stage(&whole, 4, false), Some(DestinationStage { prefix: 1, block: 1 << 17, chunk: 1 }));
    let over = [l(3, 1, (1 << 17) + 32), l((1 << 12) + 1, 4, 32), l(8, 4 << 12, 4)];
    assert_eq!(destination_stage(&over, 4, false), None);
}

/// A window leaves positions unwritten unless the plan fills them: a
/// backward plan's crop has no stage, a forward plan's padding does.
#[test]
fn windows_are_staged_only_where_the_padding_is_filled() {
    let win = Window { outer: Some(0), oc: 1, ic: 2, lo: 1, hi: 13 };
    let nest = [l(50, 16_000, 8_000), l(2, 8_000, 4_000), Loop { window: Some(win), ..l(1_000, 4, 4) }];
    let outer = [l(7, 400_000, 400_000), nest[0], nest[1], nest[2]];
    assert_eq!(destination_stage(&outer, 4, false), None);
    let chunk = DESTINATION_STAGE_BYTES / 8_000;
    assert_eq!(destination_stage(&outer, 4, true), Some(DestinationStage { prefix: 2, block: 8_000, chunk }));
}
