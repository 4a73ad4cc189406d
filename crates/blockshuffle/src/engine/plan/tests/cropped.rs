//! Windowed tiles of interleaved rows cropped at their ends, through the
//! cache: short rows are built in a stage (`rules::stages_cropped_rows`),
//! and an interleave the byte permutes take makes such a tile where it
//! has a kilobyte of rows a call (`rules::choose_tile`).

use super::super::compile::*;
use super::super::rules::{crops_interleaved_rows, stages_cropped_rows};
use super::c_strides;
use crate::engine::arch::Isa;
use crate::engine::geometry::{k, o, Geometry, SpaceAxis};

/// OpenVINO's batch-to-space 1x1x4x4 of a uint8 tensor `[32, 16, 128,
/// w]` cropped by 2 at each end of H and W (`Forward`: its inverse,
/// space-to-batch padded so), streaming or not: each output row
/// interleaves four block columns, `4 * w` bytes before the crop.
fn cropped(w: usize, dir: Direction, streaming: bool, isa: Isa) -> CopyPlan {
    let op = "t";
    let axis = |d: usize| SpaceAxis::new(op, d as u64 * 4 - 4, 2, 2, 4).unwrap();
    let space = [SpaceAxis::plain(2), SpaceAxis::plain(16), axis(128), axis(w)];
    let g = Geometry::new(op, &space, &[&[k(2), k(3), o(0)], &[o(1)], &[o(2)], &[o(3)]]).unwrap();
    let (sp, bl) = (c_strides(&[2, 16, 508, w * 4 - 4], 1), c_strides(&[32, 16, 128, w], 1));
    CopyPlan::compile(&g, dir, 1, &Layouts { space: &sp, block: &bl }, streaming, isa)
}

/// Through the cache, rows of up to 1 KiB (`w` up to 256) are staged,
/// whatever the kernel set; longer rows are not, nor the same rows in
/// a streaming plan (streamed, carried or their edges unit by unit), nor
/// the padded tile of the inverse, whose source has no units where the
/// window does not keep them.
#[test]
fn short_cropped_rows_through_the_cache_are_staged() {
    for isa in [Isa::Portable, Isa::baseline(), Isa::Avx512Vbmi] {
        for (w, staged) in [(4, true), (15, true), (126, true), (256, true), (257, false), (600, false)] {
            let p = cropped(w, Direction::Backward, false, isa);
            assert!(p.tile && !p.fill && !p.nt && crops_interleaved_rows(&p.loops, 1), "{w} {isa:?}");
            assert_eq!(stages_cropped_rows(&p.loops, 1), staged, "{w} {isa:?}");
            assert_eq!(p.staged_crops, staged, "{w} {isa:?}");
            let streamed = cropped(w, Direction::Backward, true, isa);
            assert!(streamed.tile && !streamed.staged_crops, "{w} {isa:?}");
            let padded = cropped(w, Direction::Forward, false, isa);
            assert!(padded.fill && !padded.staged_crops, "{w} {isa:?}");
        }
    }
}

/// Batch-to-space by `b` of a 2-D tensor of `elem`-byte units `[b * h,
/// w]` into `[h, w * b - 3]`, W cropped by 1 and 2 (H in the batch,
/// unblocked), streaming or not: each output row interleaves `b` streams
/// of `w` units, `w * b * elem` bytes before the crop, `h` rows a call of
/// the tile.
fn cropped_interleave(h: usize, w: usize, b: usize, elem: usize, streaming: bool, isa: Isa) -> CopyPlan {
    let op = "t";
    let space = [SpaceAxis::plain(h as u64), SpaceAxis::new(op, (w * b - 3) as u64, 1, 2, b as u64).unwrap()];
    let g = Geometry::new(op, &space, &[&[k(1), o(0)], &[o(1)]]).unwrap();
    let (sp, bl) = (c_strides(&[h, w * b - 3], elem), c_strides(&[b * h, w], elem));
    CopyPlan::compile(&g, Direction::Backward, elem, &Layouts { space: &sp, block: &bl }, streaming, isa)
}

/// With AVX512-VBMI, whose byte permutes interleave 8, 11 and 16 streams
/// of 6-byte units, the cropped rows (more streams than units a stream,
/// which alone would make a tile) make a tile staged whole where a call
/// has a kilobyte of them: 8 rows of 396 bytes (3,168), 11 of 96 (1,056,
/// the least over a kilobyte that whole rows of 6-byte units make), 8 of
/// 960, not 2 of 396 (792) or 10 of 96 (960), nor rows over the stage's
/// kilobyte (8 of 1,056 bytes), which stay rows of `y`; nor any plan
/// without the permutes (on a CPU without VBMI, none), or streaming.
#[test]
fn cropped_interleaves_make_a_staged_tile_with_a_kilobyte_of_rows() {
    let vbmi = Isa::Avx512Vbmi;
    for (h, w, b, elem, isa, streaming, tile) in [
        (8, 6, 11, 6, vbmi, false, true),
        (2, 6, 11, 6, vbmi, false, false),
        (11, 2, 8, 6, vbmi, false, true),
        (10, 2, 8, 6, vbmi, false, false),
        (8, 10, 16, 6, vbmi, false, true),
        (8, 11, 16, 6, vbmi, false, false),
        (8, 6, 11, 6, Isa::baseline(), false, false),
        (8, 6, 11, 6, vbmi, true, false),
    ] {
        let what = format!("{h} x {w} x {b} of {elem} bytes, {isa:?}, streaming {streaming}");
        let p = cropped_interleave(h, w, b, elem, streaming, isa);
        let tile = tile && isa.runs_vbmi();
        let n = p.loops.len();
        let (x, y) = (p.loops[n - 2], p.loops[n - 1]);
        assert!(y.window.is_some() && !p.fill, "{what}");
        assert_eq!(p.tile, tile, "{what}");
        assert_eq!(p.staged_crops, tile, "{what}");
        if tile {
            let (wi, bi, ei) = (w as isize, b as isize, elem as isize);
            assert_eq!((x.count, x.ss, x.ds, y.count, y.ds), (w, ei, bi * ei, b, ei), "{what}");
            assert_eq!((p.loops[n - 3].count, y.ss), (h, h as isize * wi * ei), "{what}");
        }
    }
}
