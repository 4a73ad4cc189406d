//! Windowed tiles of interleaved rows cropped at their ends, through the
//! cache: short rows are built in a stage (`rules::stages_cropped_rows`).

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
