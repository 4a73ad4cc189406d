//! A padded tile's block ([`padded_block`]), and where other padded tiles
//! are staged whole ([`stages_padded_tiles_whole`]).

use super::super::compile::*;
use super::super::padded::*;
use super::{c_strides, compile_c, l};
use crate::engine::arch::Isa;
use crate::engine::geometry::{k, o, Geometry, SpaceAxis};
use crate::engine::kernels::nest::{Loop, Window};

/// A padded tile of `nx` streams of `ny` units of `unit` bytes (its
/// positions running on, `y`'s window on `x`), under `outer` loops of
/// `(count, window's outer loop)`, each continuing the destination rows
/// of those inside it (`ds` their bytes) unless `apart`.
fn padded_tile(outer: &[(usize, Option<u8>)], nx: usize, ny: usize, unit: usize, apart: bool) -> Vec<Loop> {
    let u = unit as isize;
    let (mut loops, mut covers) = (Vec::new(), ny as isize * u);
    for &(count, on) in outer.iter().rev() {
        let window = on.map(|o| Window { outer: Some(o), oc: 1, ic: 1, lo: 1, hi: count as i64 - 1 });
        loops.push(Loop { window, ..l(count, 100_000 * count as isize, covers) });
        covers *= count as isize;
    }
    loops.reverse();
    if apart {
        loops[0].ds += u;
    }
    let n = loops.len() as u8;
    let window = Some(Window { outer: Some(n), oc: 1, ic: nx as i64, lo: 3, hi: (nx * ny) as i64 - 2 });
    loops.push(Loop { is_outer: true, ..l(nx, u, 1 << 30) });
    loops.push(Loop { window, ..l(ny, nx as isize * u, u) });
    loops
}

#[test]
fn a_padded_tiles_block_is_the_loops_that_continue_its_rows_within_the_stage() {
    // Tiles of 12 x 5 bytes (60) under 8 x 10 x 10 x 10 rows, the inner two
    // loops with a window each on one of the outer two: the block is the
    // inner two (100 rows), whose windows depend on loops outside it.
    let on = |a, b| [(8, None), (10, None), (10, Some(a)), (10, Some(b))];
    assert_eq!(padded_block(&padded_tile(&on(0, 1), 12, 5, 1, false), 1), Some(2));
    let loops = padded_tile(&[(2, None), (3, Some(0)), (4, Some(0))], 12, 5, 1, false);
    assert_eq!(padded_block(&loops, 1), Some(1));
    // A window on the loop next to the tile that depends on the loop
    // outside it: that loop alone, no block.
    let loops = padded_tile(&[(2, None), (3, Some(0)), (4, Some(1))], 12, 5, 1, false);
    assert_eq!(padded_block(&loops, 1), None);
    // Rows of 1 KiB (8 x 16 units of 8 bytes), the stage's 8 KiB: two
    // indices of the block's first loop a call up to 4 rows an index; from
    // 5, one, no more rows a call than the rows' loop alone.
    for (rows, first) in [(3, Some(1)), (4, Some(1)), (5, None)] {
        let loops = padded_tile(&[(4, None), (3, None), (rows, Some(0))], 8, 16, 8, false);
        assert_eq!(padded_block(&loops, 8), first, "{rows} rows");
    }
    // Three loops, one index of the first a call: 2 x 4 rows, twice the
    // rows' loop's; 2 x 5 too many for the stage, and 5 alone too few.
    for (rows, first) in [(4, Some(1)), (5, None)] {
        let loops = padded_tile(&[(4, None), (3, None), (2, None), (rows, Some(0))], 8, 16, 8, false);
        assert_eq!(padded_block(&loops, 8), first, "2 x {rows} rows");
    }
    // The loop next to the tile alone is no block (its repetitions are the
    // tile's); nor are loops apart in the destination.
    assert_eq!(padded_block(&padded_tile(&[(10, Some(0))], 12, 5, 1, false), 1), None);
    assert_eq!(padded_block(&padded_tile(&[(3, None), (4, None)], 12, 5, 1, true), 1), None);
    assert_eq!(padded_block(&padded_tile(&[(3, None), (4, None)], 12, 5, 1, false), 1), Some(0));
    // A tile whose positions do not run on (`ic` not its streams), or
    // without a window, has no padded block.
    let mut loops = padded_tile(&on(0, 1), 12, 5, 1, false);
    loops[5].window.as_mut().unwrap().ic = 11;
    assert_eq!(padded_block(&loops, 1), None);
    loops[5].window = None;
    assert_eq!(padded_block(&loops, 1), None);
}

/// OpenVINO's space-to-batch of 6-byte units by 1 x 2 x 15 x 3 of `[2,
/// 13, 43, 10]` padded on the last three axes (a broad workload, 0.09
/// MiB), through the cache or streamed.
fn ov_space_to_batch_of_6_byte_units(streaming: bool) -> CopyPlan {
    let op = "t";
    let space = [
        SpaceAxis::plain(2),
        SpaceAxis::new(op, 13, 0, 1, 2).unwrap(),
        SpaceAxis::new(op, 43, 1, 1, 15).unwrap(),
        SpaceAxis::new(op, 10, 0, 2, 3).unwrap(),
    ];
    let g = Geometry::new(op, &space, &[&[k(1), k(2), k(3), o(0)], &[o(1)], &[o(2)], &[o(3)]]).unwrap();
    compile_c(&g, Direction::Forward, 6, &[2, 13, 43, 10], &[180, 7, 3, 4], streaming)
}

#[test]
fn a_padded_tile_whose_loops_make_a_block_is_a_tile_through_the_cache() {
    // 3 streams of 4 units a row, the rows of the batch (2) and both padded
    // axes (7 x 3) continuing them: a block of 42 rows of 72 bytes, where
    // as rows it went 4 units at a time.
    let p = ov_space_to_batch_of_6_byte_units(false);
    let n = p.loops.len();
    assert!(p.tile && !p.nt);
    assert_eq!(p.padded_block, Some(n - 5));
    let block: Vec<_> = p.loops[n - 5..].iter().map(|l| (l.count, l.ds)).collect();
    assert_eq!(block, vec![(2, 504), (7, 72), (3, 24), (3, 1008), (4, 6)]);
    // Streamed, no block: rows, as before.
    let p = ov_space_to_batch_of_6_byte_units(true);
    assert!(!p.tile && p.padded_block.is_none());
}

/// A padded tile the stage holds is staged whole where the output and its
/// source fit the second-level cache, in parts past it.
#[test]
fn padded_tiles_are_staged_whole_within_the_second_level_cache() {
    const MIB: usize = 1 << 20;
    assert!(staged_whole_within(0, MIB));
    assert!(staged_whole_within(MIB / 2, MIB));
    assert!(!staged_whole_within(MIB / 2 + 1, MIB));
    assert!(staged_whole_within(MIB, 2 * MIB));
    assert!(!staged_whole_within(MIB + 1, 2 * MIB));
    assert!(!staged_whole_within(usize::MAX, usize::MAX));
}

/// TF's space-to-batch by 7 x 8 of 3-byte units padded by one on W, of
/// `[batch, h, 207]`, with AVX512-VBMI: a padded tile of 8 streams of 26
/// units (for the byte permutes), no block.
fn tf_space_to_batch_padded_on_w(batch: usize, h: usize) -> CopyPlan {
    let op = "t";
    let space = [
        SpaceAxis::plain(batch as u64),
        SpaceAxis::new(op, h as u64, 0, 0, 7).unwrap(),
        SpaceAxis::new(op, 207, 0, 1, 8).unwrap(),
    ];
    let g = Geometry::new(op, &space, &[&[k(1), k(2), o(0)], &[o(1)], &[o(2)]]).unwrap();
    let (ss, bs) = (c_strides(&[batch, h, 207], 3), c_strides(&[56 * batch, h / 7, 26], 3));
    CopyPlan::compile(&g, Direction::Forward, 3, &Layouts { space: &ss, block: &bs }, false, Isa::Avx512Vbmi)
}

#[test]
fn padded_tiles_past_the_second_level_cache_are_not_staged_whole() {
    // The integration test's 3.3 MiB output (`tests/padding.rs`), 8.5 KiB,
    // and 133 MiB (compiled only): the plan's choice is the rule's, staged
    // whole for the smallest on any CPU, not for the largest.
    for (batch, h, whole) in [(4, 1400, None), (1, 14, Some(true)), (16, 14_000, Some(false))] {
        let p = tf_space_to_batch_padded_on_w(batch, h);
        let n = p.loops.len();
        assert!(p.tile && p.fill && p.padded_block.is_none(), "{batch} x {h}");
        assert_eq!((p.loops[n - 2].count, p.loops[n - 1].count, p.unit), (8, 26, 3));
        assert_eq!(p.dst_bytes, 56 * batch * (h / 7) * 26 * 3);
        assert_eq!(p.padded_whole, stages_padded_tiles_whole(p.dst_bytes), "{batch} x {h}");
        if let Some(whole) = whole {
            assert_eq!(p.padded_whole, whole, "{batch} x {h}");
        }
    }
}
