use arrayvec::ArrayVec;

use super::compile::*;
use super::rules::*;
use crate::engine::arch::Isa;
use crate::engine::geometry::{k, o, Factor, Geometry, SpaceAxis};
use crate::engine::kernels::copy::Mode;
use crate::engine::kernels::nest::{Loop, Rows, Window, MAX_LOOPS};
use crate::engine::kernels::tile::{TileChoice, TileShape};

mod carried;
mod cropped;
mod gathered;
mod gathers;
mod nest;
mod padded;
mod repetitions;
mod runs;
mod staged;
mod streamed_rows;
mod through_cache;
mod tiles;
mod tiny;
mod units;
mod writers;

/// A loop of `count` with strides `ss` and `ds`, free.
fn l(count: usize, ss: isize, ds: isize) -> Loop {
    Loop { count, ss, ds, window: None, is_outer: false }
}

/// The loops' counts and strides (`count`, `ss`, `ds`), to compare.
fn counts_and_strides(loops: &[Loop]) -> Vec<(usize, isize, isize)> {
    loops.iter().map(|l| (l.count, l.ss, l.ds)).collect()
}

/// TF NCHW depth-to-space by `b` of `[1, c * b * b, h, w]`: the depth index
/// is `(by, bx, c)`.
fn nchw_depth_to_space(c: usize, h: usize, w: usize, b: usize) -> (Geometry, [usize; 4], [usize; 4]) {
    let op = "t";
    let [cu, hu, wu, bu] = [c, h, w, b].map(|d| d as u64);
    let space = [
        SpaceAxis::plain(1),
        SpaceAxis::plain(cu),
        SpaceAxis::new(op, hu * bu, 0, 0, bu).unwrap(),
        SpaceAxis::new(op, wu * bu, 0, 0, bu).unwrap(),
    ];
    let groups: [&[Factor]; 4] = [&[o(0)], &[k(2), k(3), o(1)], &[o(2)], &[o(3)]];
    (Geometry::new(op, &space, &groups).unwrap(), [1, c, h * b, w * b], [1, c * b * b, h, w])
}

fn c_strides(shape: &[usize], elem: usize) -> Vec<isize> {
    let mut s = vec![0isize; shape.len()];
    let mut acc = elem as isize;
    for i in (0..shape.len()).rev() {
        s[i] = acc;
        acc *= shape[i] as isize;
    }
    s
}

/// An NHWC tensor of `shape` blocked by `block` on H and W: the block
/// positions go to the batch (space-to-batch) or to the channels
/// (depth-to-space's input).
fn nhwc(shape: [usize; 4], block: usize, to_batch: bool) -> Geometry {
    nhwc_padded(shape, block, [0, 0], to_batch)
}

/// [`nhwc`] with H and W padded by `pad[0]` and `pad[1]` at each end
/// (cropped, run backward): `shape` is the tensor's without them.
fn nhwc_padded(shape: [usize; 4], block: usize, pad: [usize; 2], to_batch: bool) -> Geometry {
    let op = "t";
    let [n, h, w, c] = shape.map(|d| d as u64);
    let [ph, pw] = pad.map(|p| p as u64);
    let block = block as u64;
    let space = [
        SpaceAxis::plain(n),
        SpaceAxis::new(op, h, ph, ph, block).unwrap(),
        SpaceAxis::new(op, w, pw, pw, block).unwrap(),
        SpaceAxis::plain(c),
    ];
    let groups: [&[Factor]; 4] = if to_batch {
        [&[k(1), k(2), o(0)], &[o(1)], &[o(2)], &[o(3)]]
    } else {
        [&[o(0)], &[o(1)], &[o(2)], &[k(1), k(2), o(3)]]
    };
    Geometry::new(op, &space, &groups).unwrap()
}

/// Compiles `g` for float32 row-major tensors of the two shapes.
fn compile_f32(g: &Geometry, dir: Direction, space: &[usize], block: &[usize], streaming: bool) -> CopyPlan {
    compile_c(g, dir, 4, space, block, streaming)
}

/// The plan of C-contiguous layouts of `elem`-byte elements.
fn compile_c(g: &Geometry, dir: Direction, elem: usize, space: &[usize], block: &[usize], streaming: bool) -> CopyPlan {
    let (ss, bs) = (c_strides(space, elem), c_strides(block, elem));
    CopyPlan::compile(g, dir, elem, &Layouts { space: &ss, block: &bs }, streaming, Isa::baseline())
}

#[test]
fn nhwc_space_to_depth_backward_coalesces_block_and_channels() {
    let g = nhwc([2, 4, 6, 3], 2, false);
    let p = compile_f32(&g, Direction::Backward, &[2, 4, 6, 3], &[2, 2, 3, 12], false);
    // Depth-to-space writes runs of block * C = 6 elements = 24 bytes.
    assert_eq!(p.unit, 24);
    // Batch and outer height merge (contiguous on both sides); then block row, outer width.
    assert_eq!(p.loops.iter().map(|l| l.count).collect::<Vec<_>>(), vec![4, 2, 3]);
    assert!(!p.fill && !p.empty && !p.all_padding);
}

#[test]
fn identity_geometry_is_one_memcpy() {
    let op = "t";
    let space = [SpaceAxis::plain(5), SpaceAxis::plain(7)];
    let g = Geometry::new(op, &space, &[&[o(0)], &[o(1)]]).unwrap();
    let s = c_strides(&[5, 7], 2);
    for streaming in [false, true] {
        let layouts = Layouts { space: &s, block: &s };
        let p = CopyPlan::compile(&g, Direction::Forward, 2, &layouts, streaming, Isa::baseline());
        assert!(p.loops.is_empty(), "streaming {streaming}");
        assert_eq!(p.unit, 70, "streaming {streaming}");
    }
}

#[test]
fn padding_makes_windows() {
    // space-to-batch of [1, 3] with block 2 and paddings [1, 0] on axis 1.
    let op = "t";
    let space = [SpaceAxis::plain(1), SpaceAxis::new(op, 3, 1, 0, 2).unwrap()];
    let g = Geometry::new(op, &space, &[&[k(1), o(0)], &[o(1)]]).unwrap();
    let ss = c_strides(&[1, 3], 1);
    let bs = c_strides(&[2, 2], 1);
    let p = CopyPlan::compile(&g, Direction::Forward, 1, &Layouts { space: &ss, block: &bs }, false, Isa::baseline());
    assert_eq!(p.loops.len(), 2);
    let w = p.loops[1].window.unwrap();
    assert_eq!((w.outer, w.oc, w.ic, w.lo, w.hi), (Some(0), 1, 2, 1, 4));
    // k = 0: p = 2*o in [1, 4) -> o in [1, 2); k = 1: p = 2*o + 1 -> o in [0, 2).
    assert_eq!(w.range(0, 2), (1, 2));
    assert_eq!(w.range(1, 2), (0, 2));
}

#[test]
fn a_cropped_block_loop_merges_with_the_loop_inside_it() {
    // OpenVINO's 5-D batch-to-space example (the S2 workload): input
    // [48, 3, 3, 1, 3], block [1, 2, 4, 3, 1], crops 1 and 1 on axis 2.
    let op = "t";
    let space = [
        SpaceAxis::plain(2),
        SpaceAxis::new(op, 6, 0, 0, 2).unwrap(),
        SpaceAxis::new(op, 10, 1, 1, 4).unwrap(),
        SpaceAxis::new(op, 3, 0, 0, 3).unwrap(),
        SpaceAxis::plain(3),
    ];
    let g = Geometry::new(op, &space, &[&[k(1), k(2), k(3), o(0)], &[o(1)], &[o(2)], &[o(3)], &[o(4)]]).unwrap();
    let p = compile_f32(&g, Direction::Backward, &[2, 6, 10, 3, 3], &[48, 3, 3, 1, 3], false);
    // The cropped block factor of axis 2 (4) and the block factor of
    // axis 3 (3) are one loop of 12 rows of 3 floats (a tiny plan: the
    // loops around them stay in the destination's order).
    assert_eq!(p.unit, 12);
    assert_eq!(p.loops.iter().map(|l| l.count).collect::<Vec<_>>(), vec![6, 2, 3, 12]);
    let w = p.loops[3].window.unwrap();
    assert_eq!((w.outer, w.oc, w.ic, w.lo, w.hi), (Some(2), 12, 1, 3, 33));
    // Outer index 0 loses its first block row (3 merged rows), 2 its last.
    assert_eq!([w.range(0, 12), w.range(1, 12), w.range(2, 12)], [(3, 12), (0, 12), (0, 9)]);
}

#[test]
fn a_scaled_window_that_overflows_is_not_merged() {
    let w = Window { outer: Some(0), oc: 1 << 40, ic: 1, lo: 0, hi: 1 << 40 };
    assert_eq!(w.scaled(1 << 23), None);
    assert_eq!(w.scaled(2).map(|s| (s.oc, s.lo, s.hi)), Some((1 << 41, 0, 1 << 41)));
}

/// NCHW tensors of `space` blocked by `block` on H and W, the block
/// positions after the channels (pixel_unshuffle's output,
/// pixel_shuffle's input), compiled for streaming `elem`-byte elements
/// with `isa`.
fn nchw_blocked(space: [usize; 4], block: usize, elem: usize, dir: Direction, isa: Isa) -> CopyPlan {
    nchw_blocked_streaming(space, block, elem, dir, isa, true)
}

/// [`nchw_blocked`], streaming or not.
fn nchw_blocked_streaming(
    space: [usize; 4],
    block: usize,
    elem: usize,
    dir: Direction,
    isa: Isa,
    streaming: bool,
) -> CopyPlan {
    let op = "t";
    let b = block as u64;
    let axes = [
        SpaceAxis::plain(space[0] as u64),
        SpaceAxis::plain(space[1] as u64),
        SpaceAxis::new(op, space[2] as u64, 0, 0, b).unwrap(),
        SpaceAxis::new(op, space[3] as u64, 0, 0, b).unwrap(),
    ];
    let g = Geometry::new(op, &axes, &[&[o(0)], &[o(1), k(2), k(3)], &[o(2)], &[o(3)]]).unwrap();
    let blocked = [space[0], space[1] * block * block, space[2] / block, space[3] / block];
    let (ss, bs) = (c_strides(&space, elem), c_strides(&blocked, elem));
    CopyPlan::compile(&g, dir, elem, &Layouts { space: &ss, block: &bs }, streaming, isa)
}

/// Streaming uint8 pixel_unshuffle by 4 (W10 of the benchmarks): the
/// loop over output rows carries the sixteen streams (four block rows of
/// four block columns, each 128-byte row continuing the last), walked in
/// the source's order, with every vector kernel: in registers with
/// AVX512-VBMI, joined in the source below it, where the four streams
/// of a block row are a line multiple apart. Planes that are not (127 x
/// 127 bytes) are carried with VBMI alone; the portable kernels carry
/// nothing. Sixteen streams are too many to stage, so a tile that is not
/// carried stores through the cache.
#[test]
fn streaming_deinterleave_carries_rows() {
    let space = [64, 3, 512, 512];
    for isa in [Isa::Avx512Vbmi, Isa::Avx512, Isa::Avx2, Isa::Sse2] {
        let p = nchw_blocked(space, 4, 1, Direction::Forward, isa);
        assert!(p.tile && p.nt && !p.lines, "{isa:?}");
        assert_eq!(p.carry_level, Some(p.loops.len() - 4), "{isa:?}");
        let inner: Vec<_> = p.loops[p.loops.len() - 4..].iter().map(|l| (l.count, l.ss, l.ds)).collect();
        let plane = 128 * 128;
        assert_eq!(inner, vec![(128, 2048, 128), (4, 512, 4 * plane), (4, 1, plane), (128, 4, 1)], "{isa:?}");
    }
    let p = nchw_blocked(space, 4, 1, Direction::Forward, Isa::Portable);
    assert!(p.tile && !p.nt && p.carry_level.is_none());
    let odd = [64, 3, 508, 508];
    let p = nchw_blocked(odd, 4, 1, Direction::Forward, Isa::Avx512Vbmi);
    assert_eq!(p.carry_level, Some(p.loops.len() - 4));
    for isa in [Isa::Avx512, Isa::Avx2, Isa::Sse2] {
        let p = nchw_blocked(odd, 4, 1, Direction::Forward, isa);
        assert!(p.tile && !p.nt && p.carry_level.is_none(), "{isa:?}");
    }
}

/// OpenVINO's space-to-batch of an NCHW uint8 tensor padded by 2 on H
/// and W, block 4: the block column's loop moves inside the loop over
/// output rows, next to the output columns, whose padding window it is
/// the outer loop of: a windowed tile. Streaming, its rows are carried,
/// their padding made up where it is read (the loop over output rows,
/// the block rows inside it with their window on it); with 15 channels
/// of 127 x 127, whose batches are not a line multiple long, it stores
/// through the cache.
#[test]
fn padded_columns_make_a_windowed_tile() {
    let p = ov_space_to_batch_by_4(16, (508, 2), (508, 2));
    assert!(p.tile && p.nt && p.padded);
    let n = p.loops.len();
    assert_eq!(p.carry_level, Some(n - 4));
    let (x, y) = (p.loops[n - 2], p.loops[n - 1]);
    assert_eq!((x.count, x.ss, x.ds, x.window), (4, 1, 16 * 16 * 128 * 128, None));
    assert_eq!((y.count, y.ss, y.ds), (128, 4, 1));
    let w = y.window.unwrap();
    assert_eq!((w.outer, w.oc, w.ic, w.lo, w.hi), (Some((n - 2) as u8), 1, 4, 2, 510));
    // Block column 0 is padded at the start of a row, 3 at its end.
    assert_eq!((w.range(0, 128), w.range(3, 128)), ((1, 128), (0, 127)));
    // The block rows (4, one source row each) inside the output rows
    // (128, four source rows each), with the window of the padded rows.
    let (rows, groups) = (p.loops[n - 4], p.loops[n - 3]);
    assert_eq!((rows.count, rows.ss, rows.ds, groups.count, groups.ss), (128, 4 * 508, 128, 4, 508));
    assert_eq!(groups.window.map(|w| (w.outer, w.lo, w.hi)), Some((Some((n - 4) as u8), 2, 510)));
    let p = ov_space_to_batch_by_4(15, (504, 2), (504, 2));
    assert!(p.tile && !p.nt && !p.padded && p.carry_level.is_none());
    let n = p.loops.len();
    assert!(p.loops[n - 1].window.is_some_and(|w| w.outer == Some((n - 2) as u8)));
}

/// The same padded on H alone: the tile has no window, the block rows'
/// loop has (rows wholly padding), and the rows are carried as padded
/// rows all the same. Without padding, the ordinary carry level.
#[test]
fn rows_padded_on_h_alone_are_carried() {
    let p = ov_space_to_batch_by_4(16, (504, 2), (508, 0));
    let n = p.loops.len();
    assert!(p.tile && p.nt && p.padded && p.carry_level == Some(n - 4), "{p:?}");
    let (rows, groups, x, y) = (p.loops[n - 4], p.loops[n - 3], p.loops[n - 2], p.loops[n - 1]);
    assert_eq!((x.count, y.count, y.ss, y.window), (4, 127, 4, None));
    assert_eq!((rows.count, rows.ds, groups.count, groups.ss), (127, 127, 4, 508));
    assert_eq!(groups.window.map(|w| (w.outer, w.lo, w.hi)), Some((Some((n - 4) as u8), 2, 506)));
    let p = ov_space_to_batch_by_4(16, (508, 0), (508, 0));
    assert!(p.tile && p.nt && !p.padded && p.carry_level.is_some(), "{p:?}");
}

/// Streaming NHWC space-to-batch 2x2 padded by 1 on H and W: pixels of
/// 16 bytes (16 uint8 channels) and of 8 make a padded deinterleaving
/// tile whose rows are carried, with AVX512-VBMI (the joined kernel of
/// AVX-512 reads them in place, 16-byte units too) as with AVX-512;
/// 16-byte units are not carried unpadded with VBMI (its own kernel
/// takes units of up to 8 bytes).
#[test]
fn padded_rows_of_16_byte_units_are_carried_with_vbmi() {
    for (c, isa) in [(16, Isa::Avx512Vbmi), (16, Isa::Avx512), (8, Isa::Avx512Vbmi)] {
        let shape = [4, 510, 510, c];
        let g = nhwc_padded(shape, 2, [1, 1], true);
        let (ss, bs) = (c_strides(&shape, 1), c_strides(&[16, 256, 256, c], 1));
        let p = CopyPlan::compile(&g, Direction::Forward, 1, &Layouts { space: &ss, block: &bs }, true, isa);
        assert_eq!(p.unit, c, "{c} {isa:?}");
        assert!(p.tile && p.nt && p.padded && p.carry_level.is_some(), "{c} {isa:?}: {p:?}");
    }
    let g = nhwc([4, 512, 512, 16], 2, true);
    let (ss, bs) = (c_strides(&[4, 512, 512, 16], 1), c_strides(&[16, 256, 256, 16], 1));
    let p = CopyPlan::compile(&g, Direction::Forward, 1, &Layouts { space: &ss, block: &bs }, true, Isa::Avx512Vbmi);
    assert!(p.tile && p.carry_level.is_none() && !p.padded, "{p:?}");
}

/// einops' `b (h p1) (w p2) c -> b h w (c p2 p1)` of uint8 by `p1 = 2`,
/// `p2 = 8`, `c = 4` (broad benchmark workload `einops_014`, 19.8x
/// memcpy as tiles of 4 x 2 bytes): with AVX512-VBMI, each 64-byte
/// `(c p2 p1)` block is one unit, gathered from its 2 source rows of 32
/// bytes by a byte permute (with AVX2, 8 byte shuffles of their 4
/// pieces), streamed when the plan streams, or through the cache with
/// VBMI two at once; below AVX2, a tile.
#[test]
fn small_blocks_of_few_rows_are_gathered_by_byte_permutes() {
    let op = "t";
    let (h, w) = (6, 10);
    let space = [
        SpaceAxis::plain(1),
        SpaceAxis::new(op, 2 * h, 0, 0, 2).unwrap(),
        SpaceAxis::new(op, 8 * w, 0, 0, 8).unwrap(),
        SpaceAxis::plain(4),
    ];
    let g = Geometry::new(op, &space, &[&[o(0)], &[o(1)], &[o(2)], &[o(3), k(2), k(1)]]).unwrap();
    let (ss, bs) =
        (c_strides(&[1, 2 * h as usize, 8 * w as usize, 4], 1), c_strides(&[1, h as usize, w as usize, 64], 1));
    for isa in [Isa::Avx512Vbmi, Isa::Avx512, Isa::Avx2, Isa::Sse2] {
        for streaming in [false, true] {
            let p = CopyPlan::compile(&g, Direction::Forward, 1, &Layouts { space: &ss, block: &bs }, streaming, isa);
            let what = format!("{isa:?} streaming {streaming}: {p:?}");
            if isa >= Isa::Avx2 {
                let gather = p.gather.as_ref().expect("a gather");
                assert_eq!((p.unit, gather.len(), gather.loads()), (64, 64, 2), "{what}");
                let rows: Vec<_> = p.loops.iter().map(|l| (l.count, l.ss, l.ds)).collect();
                // Through the cache with VBMI, two blocks at once (their
                // rows continue one another's: 2 rows of 64 bytes).
                if isa == Isa::Avx512Vbmi && !streaming {
                    assert_eq!((gather.copies(), &rows[..]), (2, &[(6, 640, 640), (5, 64, 128)][..]), "{what}");
                } else {
                    assert_eq!((gather.copies(), &rows[..]), (1, &[(6, 640, 640), (10, 32, 64)][..]), "{what}");
                }
                assert!(!p.tile && p.nt == streaming, "{what}");
            } else {
                assert!(p.gather.is_none() && p.tile, "{what}");
            }
        }
    }
}

/// The streaming AVX2 plan of OpenVINO's space-to-batch of a uint8
/// tensor `[16, c, h, w]`, block 4 on H and W, H padded by `ph` at
/// both ends and W by `pw`.
fn ov_space_to_batch_by_4(c: usize, (h, ph): (usize, usize), (w, pw): (usize, usize)) -> CopyPlan {
    let op = "t";
    let space = [
        SpaceAxis::plain(16),
        SpaceAxis::plain(c as u64),
        SpaceAxis::new(op, h as u64, ph as u64, ph as u64, 4).unwrap(),
        SpaceAxis::new(op, w as u64, pw as u64, pw as u64, 4).unwrap(),
    ];
    let g = Geometry::new(op, &space, &[&[k(2), k(3), o(0)], &[o(1)], &[o(2)], &[o(3)]]).unwrap();
    let out = [256, c, (h + 2 * ph) / 4, (w + 2 * pw) / 4];
    let (ss, bs) = (c_strides(&[16, c, h, w], 1), c_strides(&out, 1));
    CopyPlan::compile(&g, Direction::Forward, 1, &Layouts { space: &ss, block: &bs }, true, Isa::Avx2)
}

/// Streaming float32 pixel_shuffle by 2 (W8 of the benchmarks): with
/// AVX512-VBMI, in the destination's order, the output rows (outer row,
/// then block row) one run carried across rows; the tile interleaves
/// the block columns' two planes. Without VBMI, no kernel carries it,
/// and the interleave of two streams streams it.
#[test]
fn streaming_interleave_carries_rows_with_vbmi() {
    let space = [8, 16, 512, 512];
    let p = nchw_blocked(space, 2, 4, Direction::Backward, Isa::Avx512Vbmi);
    assert!(p.tile && p.nt);
    assert_eq!(p.carry_level, Some(p.loops.len() - 4));
    let inner: Vec<_> = p.loops[p.loops.len() - 4..].iter().map(|l| (l.count, l.ss, l.ds)).collect();
    let (row, plane) = (512 * 4, 256 * 256 * 4);
    assert_eq!(inner, vec![(256, 1024, 2 * row), (2, 2 * plane, row), (256, 4, 8), (2, plane, 4)]);
    let p = nchw_blocked(space, 2, 4, Direction::Backward, Isa::Avx512);
    assert!(p.tile && p.nt && p.carry_level.is_none());
}

/// Streaming pixel_shuffle of float32 by 5 (CRD depth-to-space), with
/// AVX2 and with AVX-512 without VBMI: an interleave of 5 streams, which
/// only the stage would stream (`TileChoice::staged`), stores through the
/// cache, in the very loops of the same plan not streaming (an output of
/// 1.9 MB, under `staged_stream_bytes` on every CPU: see `staged.rs`). By
/// 2, the interleave of two streams streams it.
#[test]
fn streamed_interleaves_that_would_be_staged_store_through_the_cache() {
    let space = [2, 3, 280, 280];
    for isa in [Isa::Avx2, Isa::Avx512] {
        let two = nchw_blocked(space, 2, 4, Direction::Backward, isa);
        assert!(two.tile && two.nt && two.carry_level.is_none(), "{isa:?}: {two:?}");
        let five = nchw_blocked(space, 5, 4, Direction::Backward, isa);
        let n = five.loops.len();
        let shape = TileShape::of_loops(
            Rows::ONE,
            &five.loops[n - 2],
            &five.loops[n - 1],
            4,
            Mode { nt: true, isa, fetch: false },
        );
        assert!(TileChoice::of(shape).staged(), "{isa:?}: {five:?}");
        assert!(five.tile && !five.nt && five.carry_level.is_none(), "{isa:?}: {five:?}");
        let cached = nchw_blocked_streaming(space, 5, 4, Direction::Backward, isa, false);
        assert_eq!(five.loops, cached.loops, "{isa:?}");
        assert_eq!((five.unit, five.tile, five.matrix), (cached.unit, cached.tile, cached.matrix), "{isa:?}");
    }
}

/// Streaming pixel_shuffle of float32 by 3 (an interleave of 3 streams,
/// which their own kernel would stream) and uint8 by 4: each destination
/// run reads 9 and 16 source rows (the tile's streams in as many rows of
/// blocks: `interleaved_rows`), more than `MAX_STREAMED_INTERLEAVE_ROWS`,
/// so it stores through the cache, in the very loops of the same plan not
/// streaming. By 2 (4 rows), it streams.
#[test]
fn streamed_interleaves_from_many_source_rows_store_through_the_cache() {
    let space = [2, 3, 288, 288];
    for isa in [Isa::Avx2, Isa::Avx512] {
        for (block, elem) in [(2, 4), (3, 4), (4, 1)] {
            let p = nchw_blocked(space, block, elem, Direction::Backward, isa);
            let n = p.loops.len();
            let what = format!("by {block}, {elem} bytes, {isa:?}: {p:?}");
            assert!(p.tile && p.carry_level.is_none(), "{what}");
            assert_eq!((p.loops[n - 1].count, p.loops[n - 2].ds), (block, (block * elem) as isize), "{what}");
            let shape = TileShape::of_loops(
                Rows::ONE,
                &p.loops[n - 2],
                &p.loops[n - 1],
                elem,
                Mode { nt: true, isa, fetch: false },
            );
            assert!(!TileChoice::of(shape).staged(), "{what}");
            assert_eq!(p.nt, block == 2, "{what}");
            if block > 2 {
                let cached = nchw_blocked_streaming(space, block, elem, Direction::Backward, isa, false);
                assert_eq!(p.loops, cached.loops, "{what}");
            }
        }
    }
}

/// Streaming NHWC batch-to-space 2x2 of 128-byte units (32 float32
/// channels): each output pixel pair gathers one unit from each of its
/// two block columns, 256-byte rows that continue one another, written
/// in order without the line writers: streamed straight from the
/// source, unit by unit (`streams_continued_rows`). So are 256-byte
/// units (W2 of the benchmarks); with 512-byte units the writers run.
#[test]
fn gathered_runs_of_short_units_skip_the_line_writers() {
    for c in [32, 64, 128] {
        let p = compile_f32(
            &nhwc([8, 256, 256, c], 2, true),
            Direction::Backward,
            &[8, 256, 256, c],
            &[32, 128, 128, c],
            true,
        );
        let unit = 4 * c;
        assert_eq!(p.unit, unit);
        assert!(p.nt && !p.tile, "{c} channels");
        assert_eq!(p.lines, unit == 512, "{c} channels");
        if !p.lines {
            let [.., x, y] = p.loops[..] else { panic!("{c} channels: {} loops", p.loops.len()) };
            assert_eq!((x.ss, x.ds, y.count, y.ds), (unit as isize, 2 * unit as isize, 2, unit as isize));
            assert!(streams_continued_rows(&p.loops, p.unit, p.fill), "{c} channels");
        }
    }
}

/// Streaming NHWC space-to-depth of three float32 channels: 24-byte
/// units, with no vector kernel. An output pixel takes one unit from
/// each of two source rows (rows of two units); the tile runs them as
/// two long runs instead, one per source row, through the cache.
#[test]
fn short_units_without_a_vector_kernel_store_through_the_cache() {
    let g = nhwc([1, 12, 512, 3], 2, false);
    let p = compile_f32(&g, Direction::Forward, &[1, 12, 512, 3], &[1, 6, 256, 12], true);
    assert!(!p.nt && p.tile && !p.lines);
    assert_eq!(p.unit, 24);
    let n = p.loops.len();
    let (x, y) = (p.loops[n - 2], p.loops[n - 1]);
    assert_eq!([(x.count, x.ss, x.ds), (y.count, y.ss, y.ds)], [(256, 24, 48), (2, 512 * 12, 24)]);
}

/// Streaming NHWC space-to-depth by 2 of three uint8 channels: 6-byte
/// units (two pixels), a tile interleaving two source rows. With the
/// byte-shuffle kernels (AVX2 plans), rows of whole 16-byte vectors
/// (512 pixels: 3072 bytes) stream; rows of 510 pixels, and baseline
/// plans, store through the cache.
#[test]
fn interleaved_three_channel_rows_of_whole_vectors_stream() {
    for (w, isa, streams) in [(512, Isa::Avx2, true), (510, Isa::Avx2, false), (512, Isa::Sse2, false)] {
        let g = nhwc([1, 12, w, 3], 2, false);
        let (ss, bs) = (c_strides(&[1, 12, w, 3], 1), c_strides(&[1, 6, w / 2, 12], 1));
        let p = CopyPlan::compile(&g, Direction::Forward, 1, &Layouts { space: &ss, block: &bs }, true, isa);
        assert!(p.tile && !p.lines, "{w} {isa:?}");
        assert_eq!((p.unit, p.nt), (6, streams), "{w} {isa:?}");
    }
}

/// Blocks and instruction sets, and whether the carried kernels take
/// units of other sizes (`kernels::any_units::AnyUnits`) with them, deinterleaving
/// and interleaving: 2 to 4 streams, with AVX512-VBMI (interleaving 2
/// only from consecutive source rows or cropped ones, which these are
/// not).
const CARRIED_OTHER_UNITS: [(usize, Isa, [bool; 2]); 4] = [
    (3, Isa::Avx512Vbmi, [true, true]),
    (4, Isa::Avx512Vbmi, [true, true]),
    (2, Isa::Avx512Vbmi, [true, false]),
    (3, Isa::Avx512, [false, false]),
];

/// NHWC space-to-batch and batch-to-space of three uint8 channels
/// (3-byte units, which no tile kernel of their own takes): with
/// AVX512-VBMI, a streaming tile that the carried kernels gather
/// (`kernels::any_units::AnyUnits`), deinterleaving (by 2 to 4) and interleaving (by
/// 3 and 4); otherwise the plan they had, through the cache.
#[test]
fn three_channel_tiles_of_two_to_four_streams_are_carried_with_vbmi() {
    for (b, isa, [deinterleaved, interleaved]) in CARRIED_OTHER_UNITS {
        // Rows of 120 pixels: by 2, 360 bytes, not whole 16-byte
        // vectors (which the byte-shuffle kernel would stream).
        let g = nhwc([1, 12, 120, 3], b, true);
        let (space, batch) = ([1, 12, 120, 3], [b * b, 12 / b, 120 / b, 3]);
        let (ss, bs) = (c_strides(&space, 1), c_strides(&batch, 1));
        for (dir, carried) in [(Direction::Forward, deinterleaved), (Direction::Backward, interleaved)] {
            let p = CopyPlan::compile(&g, dir, 1, &Layouts { space: &ss, block: &bs }, true, isa);
            let what = format!("by {b}, {isa:?}, {dir:?}");
            assert_eq!(p.unit, 3, "{what}");
            assert_eq!(p.carry_level.is_some(), carried, "{what}");
            assert_eq!(p.nt, carried, "{what}");
            if carried {
                assert!(p.tile && !p.padded, "{what}");
            }
        }
    }
}

/// NHWC batch-to-space by 2 of three uint8 channels cropped by 1 at each
/// end of W: with AVX512-VBMI, its two streams (batches far apart)
/// interleaved in registers and the kept bytes streamed
/// ([`crops_carried`]); below VBMI, through the cache. Uncropped, such
/// streams are not carried (see [`CARRIED_OTHER_UNITS`]).
#[test]
fn three_channel_batch_to_space_by_two_cropped_is_carried_with_vbmi() {
    let space = [1, 12, 118, 3];
    let g = nhwc_padded(space, 2, [0, 1], true);
    let (ss, bs) = (c_strides(&space, 1), c_strides(&[4, 6, 60, 3], 1));
    for (isa, carried) in [(Isa::Avx512Vbmi, true), (Isa::Avx512, false)] {
        let p = CopyPlan::compile(&g, Direction::Backward, 1, &Layouts { space: &ss, block: &bs }, true, isa);
        assert_eq!(p.unit, 3, "{isa:?}");
        assert!(p.tile && p.loops[p.loops.len() - 1].window.is_some(), "{isa:?}");
        assert_eq!(p.nt, carried, "{isa:?}");
        assert!(!carried || crops_carried(&p.loops, p.unit, isa), "{isa:?}");
    }
}

/// NHWC space-to-depth by 2 of three channels: two consecutive source
/// rows interleaved, units of 6 bytes (uint8) or 24 (float32). With
/// AVX512-VBMI, a streaming tile whose rows the carried kernels gather
/// (`interleave_units`), the uint8 rows of whole 16-byte vectors
/// too (which the byte-shuffle kernel streams otherwise); below VBMI,
/// not. So is depth-to-space by 2 (two streams deinterleaved).
#[test]
fn three_channel_space_to_depth_by_two_is_carried_with_vbmi() {
    // Rows of 128 pixels: 384 bytes of uint8, whole 16-byte vectors.
    let g = nhwc([1, 12, 128, 3], 2, false);
    let (space, depth) = ([1, 12, 128, 3], [1, 6, 64, 12]);
    for elem in [1, 4] {
        let (ss, ds) = (c_strides(&space, elem), c_strides(&depth, elem));
        for isa in [Isa::Avx512Vbmi, Isa::Avx512, Isa::Avx2] {
            for dir in [Direction::Forward, Direction::Backward] {
                let p = CopyPlan::compile(&g, dir, elem, &Layouts { space: &ss, block: &ds }, true, isa);
                let what = format!("{elem}-byte elements, {isa:?}, {dir:?}");
                let carried = isa == Isa::Avx512Vbmi;
                assert_eq!(p.unit, 6 * elem, "{what}");
                assert_eq!(p.carry_level.is_some(), carried, "{what}");
                if carried && dir == Direction::Forward {
                    let [.., x, y] = &p.loops[..] else { panic!("{what}: no tile") };
                    assert_eq!((x.count, y.count, y.ss), (64, 2, (384 * elem) as isize), "{what}");
                    assert!(p.tile && p.nt && !p.segments, "{what}");
                }
            }
        }
    }
}

/// NHWC depth-to-space of three uint8 channels (units of `3 * b`
/// bytes): with AVX512-VBMI, by 2 to 4, each input row deinterleaved
/// into the output rows it holds, carried row by row (`segments`);
/// below VBMI, not.
#[test]
fn three_channel_depth_to_space_carries_segments_with_vbmi() {
    for (b, isa, [carried, _]) in CARRIED_OTHER_UNITS {
        let g = nhwc([1, 12, 120, 3], b, false);
        let (space, depth) = ([1, 12, 120, 3], [1, 12 / b, 120 / b, 3 * b * b]);
        let (ss, ds) = (c_strides(&space, 1), c_strides(&depth, 1));
        let p = CopyPlan::compile(&g, Direction::Backward, 1, &Layouts { space: &ss, block: &ds }, true, isa);
        let what = format!("by {b}, {isa:?}");
        assert_eq!(p.unit, 3 * b, "{what}");
        assert_eq!((p.segments, p.carry_level.is_some()), (carried, carried), "{what}");
        if carried {
            let [.., x, y] = &p.loops[..] else { panic!("{what}: no tile") };
            assert_eq!((x.count, x.ds, y.ss), (b, 360, (3 * b * b) as isize), "{what}");
        }
    }
}

/// NHWC space-to-batch 2x2 of three float32 channels with one pixel of
/// padding on each side, and its inverse: 12-byte units, which have no
/// vector kernel. Forward, the block column moves next to the output
/// row (each source row is read once) without making a tile: the rows
/// of 128 units run as they are. Backward, the two block columns
/// interleave in each output row; the tile runs them as two long runs.
#[test]
fn windowed_units_without_a_vector_kernel_tile_only_short_rows() {
    let op = "t";
    let space = [
        SpaceAxis::plain(16),
        SpaceAxis::new(op, 254, 1, 1, 2).unwrap(),
        SpaceAxis::new(op, 254, 1, 1, 2).unwrap(),
        SpaceAxis::plain(3),
    ];
    let g = Geometry::new(op, &space, &[&[k(1), k(2), o(0)], &[o(1)], &[o(2)], &[o(3)]]).unwrap();
    let (space, block) = ([16, 254, 254, 3], [64, 128, 128, 3]);
    let p = compile_f32(&g, Direction::Forward, &space, &block, false);
    assert_eq!(p.unit, 12);
    assert!(!p.tile);
    let n = p.loops.len();
    let (x, y) = (p.loops[n - 2], p.loops[n - 1]);
    assert_eq!((x.count, x.ss, y.count, y.ss, y.ds), (2, 12, 128, 24, 12));
    assert_eq!(y.window.map(|w| w.outer), Some(Some(n as u8 - 2)));
    // Outside the rows, the source's order: batch, row, block row.
    let outer: Vec<_> = p.loops[..n - 2].iter().map(|l| (l.count, l.ss)).collect();
    assert_eq!(outer, vec![(16, 254 * 254 * 12), (128, 2 * 254 * 12), (2, 254 * 12)]);
    let p = compile_f32(&g, Direction::Backward, &space, &block, false);
    assert!(p.tile);
    let (x, y) = (p.loops[n - 2], p.loops[n - 1]);
    assert_eq!((x.count, x.ss, x.ds, y.count, y.ds), (128, 12, 24, 2, 12));
}

/// Streaming NHWC space-to-batch 2x2 (W1 of the benchmarks): each source
/// row's 128 units of 256 bytes go every other one to the two block
/// columns' destination rows, in the source's order, each row a run of
/// streaming stores (`writers::scatters_rows`), not through the line
/// writers; the block rows and the output rows outside, in the source's
/// order.
#[test]
fn streaming_long_units_scatter_block_columns() {
    let (space, block) = ([8, 256, 256, 64], [32, 128, 128, 64]);
    let g = nhwc(space, 2, true);
    let p = compile_f32(&g, Direction::Forward, &space, &block, true);
    assert!(!p.lines && p.nt && !p.tile && !p.gathered);
    assert_eq!(p.unit, 256);
    let loops: Vec<_> = p.loops.iter().map(|l| (l.count, l.ss, l.ds)).collect();
    let (row, batch) = (256 * 256, 8 * 128 * 128 * 256);
    assert_eq!(loops, vec![(8 * 128, 2 * row, 128 * 256), (2, row, 2 * batch), (128, 512, 256), (2, 256, batch)]);
    // Not streaming: no writers, the destination's order.
    let p = compile_f32(&g, Direction::Forward, &space, &block, false);
    assert!(!p.lines && !p.nt);
}

/// Streaming NHWC depth-to-space by 2 (W6): each input row's units go
/// every other one to two output rows, in the source's order, each row a
/// run of streaming stores (`writers::scatters_rows`); the loop over rows
/// is not split to run more of them together.
#[test]
fn streaming_long_units_scatter_to_two_output_rows() {
    let (space, block) = ([16, 256, 256, 32], [16, 128, 128, 128]);
    let g = nhwc(space, 2, false);
    let p = compile_f32(&g, Direction::Backward, &space, &block, true);
    assert!(!p.lines && p.nt && !p.tile && !p.gathered);
    let loops: Vec<_> = p.loops.iter().map(|l| (l.count, l.ss, l.ds)).collect();
    assert_eq!(loops, vec![(16 * 128, 2 * 32768, 2 * 32768), (128, 512, 256), (2, 256, 32768)]);
}

/// numpy's transpose `1, 0, 2` of `[a, b, r]` bytes, streamed: rows of
/// `r` bytes, in `a` x `b` loops. The loop of the shorter steps (either,
/// when `a == b`) as the sweep would have the other inside it, 24 or 20
/// destination streams, more than the writers. Rows that read apart take
/// the other loop as the sweep, through the writers (`reads_units_apart`:
/// whole 16-byte vectors of 512 bytes up to 4 KiB that the source's order
/// writes each apart, as it does all of these, other rows from 256
/// bytes): the source's rows outside, read apart inside, the destination
/// in order. Other rows do not go through the writers.
#[test]
fn streaming_rows_that_read_apart_sweep_the_loop_that_fits_the_writers() {
    for (a, b) in [(24usize, 24usize), (40, 20)] {
        for r in [496usize, 512, 640, 2032, 2944, 4080, 4096, 8192, 255, 257, 1002, 2047, 5000] {
            let space = [SpaceAxis::plain(a as u64), SpaceAxis::plain(b as u64), SpaceAxis::plain(r as u64)];
            let g = Geometry::new("t", &space, &[&[o(1)], &[o(0)], &[o(2)]]).unwrap();
            let p = compile_c(&g, Direction::Forward, 1, &[a, b, r], &[b, a, r], true);
            let case = format!("{a} x {b} rows of {r}");
            assert_eq!(p.unit, r, "{case}");
            let (ai, bi, ri) = (a as isize, b as isize, r as isize);
            let (sweep, other) = ((b, ri, ai * ri), (a, bi * ri, ri));
            if [512, 640, 2032, 2944, 4080, 257, 1002, 2047, 5000].contains(&r) {
                assert!(p.lines && p.nt, "{case}");
                assert_eq!(counts_and_strides(&p.loops), vec![sweep, other], "{case}");
            } else {
                assert!(!p.lines, "{case}");
            }
            if [4096, 8192].contains(&r) {
                // Whole vectors: the source's order, each row written apart.
                assert_eq!(counts_and_strides(&p.loops), vec![other, sweep], "{case}");
            }
        }
    }
}

/// The units `reads_units_apart` takes, of the loops of a `1, 0, 2`
/// transpose of `[24, 24, unit]` bytes (whose units the source's order
/// writes each apart), and whole vectors that it leaves out where their
/// runs grow: HPTT's `[96, 75, 96, 80]` of float64 by axes `2, 1, 0, 3`,
/// whose 640-byte units `order::source_order_outside_run` joins into runs
/// of 96 (7,200 streams otherwise).
#[test]
fn units_read_apart_are_vectors_of_512_bytes_to_4_kib_written_apart_or_others_from_256_bytes() {
    let apart = |unit: usize| -> ArrayVec<Loop, MAX_LOOPS> {
        let u = unit as isize;
        [l(24, u, 24 * u), l(24, 24 * u, u)].into_iter().collect()
    };
    for unit in [512, 528, 640, 1008, 1632, 2032, 2048, 2944, 4080, 257, 300, 1002, 2047, 4095, 4097, 17153] {
        assert!(reads_units_apart(&apart(unit), unit), "{unit}");
    }
    for unit in [16, 256, 496, 4096, 5120, 17152, 1, 3, 132, 255] {
        assert!(!reads_units_apart(&apart(unit), unit), "{unit}");
    }
    // Units that no loop continues in the destination (every other
    // place): written apart whatever their size, so the bounds alone.
    let spaced = |unit: usize| -> ArrayVec<Loop, MAX_LOOPS> {
        let u = unit as isize;
        [l(24, u, 48 * u), l(24, 24 * u, 2 * u)].into_iter().collect()
    };
    for (unit, taken) in [(496, false), (512, true), (4080, true), (4096, false), (480, false)] {
        assert_eq!(reads_units_apart(&spaced(unit), unit), taken, "{unit}");
    }
    // HPTT's T13 in the destination's order: the 96 units of 640 bytes of
    // a destination run continue one another (their runs grow).
    let t13: ArrayVec<Loop, MAX_LOOPS> =
        [l(96, 640, 4_608_000), l(75, 61_440, 61_440), l(96, 4_608_000, 640)].into_iter().collect();
    assert!(!reads_units_apart(&t13, 640));
}

/// Streaming NHWC depth-to-space by 2 of 64-byte and 128-byte units
/// (uint8 input of 128 or 256 channels): each output row gathers every
/// other unit of an input row, 8 KiB and 16 KiB rows. They stream
/// straight to the destination, not through the cache nor through the
/// line writers, in the source's order: the two output rows of an input
/// row take its units in turn ([`scatters_gathered_rows`]). Not
/// streaming, through the cache.
#[test]
fn long_gathered_rows_of_vector_units_stream() {
    for (c, unit) in [(128, 64), (256, 128)] {
        let (space, block) = ([16, 256, 256, c / 4], [16, 128, 128, c]);
        let g = nhwc(space, 2, false);
        let p = compile_c(&g, Direction::Backward, 1, &space, &block, true);
        assert!(p.nt && !p.lines && !p.tile && !p.gathered, "unit {unit}");
        assert_eq!(p.unit, unit);
        let [.., x, y] = &p.loops[..] else { panic!("unit {unit}: {:?}", p.loops) };
        assert_eq!((x.count, x.ss, x.ds), (128, 2 * unit as isize, unit as isize));
        assert_eq!((y.count, y.ss, y.ds), (2, unit as isize, 256 * c as isize / 4));
        let p = compile_c(&g, Direction::Backward, 1, &space, &block, false);
        assert!(!p.nt && !p.lines);
    }
    // Rows of 8 units of 64 bytes (512 bytes) stream, and of 4 (256
    // bytes), whose rows continue one another (the two output rows of
    // an input row); of 2 (128 bytes), not.
    for (w, streams) in [(8, true), (4, true), (2, false)] {
        let (space, block) = ([64, 256, 2 * w, 32], [64, 128, w, 128]);
        let g = nhwc(space, 2, false);
        let p = compile_c(&g, Direction::Backward, 1, &space, &block, true);
        assert_eq!(p.nt, streams, "{w} units a row");
    }
}

/// Streaming NHWC space-to-depth by 2 of 32 uint8 channels: each
/// destination row is a 64-byte unit from each of the two source rows
/// of a block row (128 bytes), and a block row's destination rows
/// continue one another. Runs of 4 KiB stream unit by unit; runs of
/// 1 KiB store through the cache.
#[test]
fn short_continued_rows_stream_unit_by_unit() {
    for (w, streams) in [(64, true), (16, false)] {
        let (space, block) = ([2, 64, w, 32], [2, 32, w / 2, 128]);
        let g = nhwc(space, 2, false);
        let p = compile_c(&g, Direction::Forward, 1, &space, &block, true);
        assert!(!p.lines && !p.tile && !p.gathered, "width {w}");
        assert_eq!(p.nt, streams, "width {w}");
        let [.., x, y] = p.loops[..] else { panic!("width {w}: {} loops", p.loops.len()) };
        assert_eq!((p.unit, x.count, x.ss, x.ds, y.count, y.ds), (64, w / 2, 64, 128, 2, 64), "width {w}");
    }
}

/// Streaming TensorFlow batch-to-space 4x4 of 64, 8 or 4 float32
/// channels (256-, 32- or 16-byte units; the W4 workload scaled down),
/// cropped by `c` at each end of H and W: each destination row is one
/// run of units from the four block columns in turn, which the crop
/// only shortens at its ends. Cropped or not, the rows stream unit by
/// unit, the crop a window on the block columns; 32- and 16-byte units
/// too, rather than make a tile.
#[test]
fn cropped_continued_rows_stream_unit_by_unit() {
    for (ch, c) in [(64, 0), (64, 3), (8, 0), (8, 3), (4, 0), (4, 3)] {
        let side = 256 - 2 * c;
        let g = nhwc_padded([2, side, side, ch], 4, [c, c], true);
        let p = compile_f32(&g, Direction::Backward, &[2, side, side, ch], &[32, 64, 64, ch], true);
        let case = format!("{ch} channels, crop {c}");
        assert!(p.nt && !p.lines && !p.tile && !p.gathered, "{case}");
        let [.., x, y] = p.loops[..] else { panic!("{case}: {} loops", p.loops.len()) };
        let u = 4 * ch as isize;
        assert_eq!((p.unit, x.count, x.ss, x.ds, y.count, y.ds), (u as usize, 64, u, 4 * u, 4, u), "{case}");
        let crop = Window { outer: Some((p.loops.len() - 2) as u8), oc: 4, ic: 1, lo: c as i64, hi: 256 - c as i64 };
        assert_eq!(y.window, (c > 0).then_some(crop), "{case}");
    }
}

/// Streaming TensorFlow batch-to-space 2x2 of 4 float32 channels:
/// destination rows of two 16-byte units, shorter than
/// [`MIN_STREAMED_ROW`]. Cropped by 1, they stream unit by unit;
/// uncropped, they make a tile.
#[test]
fn rows_of_two_vectors_stream_only_cropped() {
    for c in [0, 1] {
        let side = 256 - 2 * c;
        let g = nhwc_padded([2, side, side, 4], 2, [c, c], true);
        let p = compile_f32(&g, Direction::Backward, &[2, side, side, 4], &[8, 128, 128, 4], true);
        assert_eq!((p.unit, p.tile), (16, c == 0), "crop {c}");
        if c > 0 {
            assert!(p.nt && !p.lines && !p.gathered, "crop {c}");
            let [.., x, y] = p.loops[..] else { panic!("crop {c}: {} loops", p.loops.len()) };
            assert_eq!((x.count, x.ss, x.ds, y.count, y.ds), (128, 16, 32, 2, 16), "crop {c}");
        }
    }
}

/// The streaming plan, for `isa`, of OpenVINO's batch-to-space 1x1x4x4
/// of a uint8 tensor `[32, 16, 128, w]`, cropped by 2 at each end of H
/// and W.
fn ov_batch_to_space_cropped(w: usize, isa: Isa) -> CopyPlan {
    let op = "t";
    let axis = |d: usize| SpaceAxis::new(op, d as u64 * 4 - 4, 2, 2, 4).unwrap();
    let space = [SpaceAxis::plain(2), SpaceAxis::plain(16), axis(128), axis(w)];
    let g = Geometry::new(op, &space, &[&[k(2), k(3), o(0)], &[o(1)], &[o(2)], &[o(3)]]).unwrap();
    let (sp, bl) = (c_strides(&[2, 16, 508, w * 4 - 4], 1), c_strides(&[32, 16, 128, w], 1));
    CopyPlan::compile(&g, Direction::Backward, 1, &Layouts { space: &sp, block: &bl }, true, isa)
}

/// Streaming OpenVINO batch-to-space 1x1x4x4 of NCHW uint8, cropped by
/// 2 at each end of H and W: each output row interleaves four block
/// columns, 512 bytes before the crop. Rows of whole lines are built
/// in a stage and streamed; a row of 504 bytes is stored through the
/// cache.
#[test]
fn cropped_interleaved_rows_of_whole_lines_stream() {
    for (w, streams) in [(128, true), (126, false)] {
        let p = ov_batch_to_space_cropped(w, Isa::baseline());
        assert!(p.tile && !p.padded, "{w}");
        assert_eq!(p.nt, streams, "{w}");
        assert_eq!(crops_row_ends(&p.loops, 1), streams, "{w}");
        let n = p.loops.len();
        let (x, y) = (p.loops[n - 2], p.loops[n - 1]);
        assert_eq!((x.count, x.ss, x.ds, y.count, y.ds), (w, 1, 4, 4, 1));
    }
}

/// The same batch-to-space with AVX512-VBMI: rows whose streams hold
/// 64 bytes or more are interleaved in registers and their kept bytes
/// carried on from row to row (`crops_carried`), whole lines or not;
/// streams of 15 bytes are not, and neither is any row below VBMI but
/// those of whole lines.
#[test]
fn cropped_interleaved_rows_carry_with_vbmi() {
    for (w, isa, carried, streams) in [
        (128, Isa::Avx512Vbmi, true, true),
        (126, Isa::Avx512Vbmi, true, true),
        (64, Isa::Avx512Vbmi, true, true),
        (15, Isa::Avx512Vbmi, false, false),
        (126, Isa::Avx512, false, false),
        (128, Isa::Avx512, false, true),
    ] {
        let p = ov_batch_to_space_cropped(w, isa);
        assert!(p.tile && !p.padded, "{w} {isa:?}");
        assert_eq!(crops_carried(&p.loops, 1, isa), carried, "{w} {isa:?}");
        assert_eq!(p.nt, streams, "{w} {isa:?}");
        // The rows (block rows of each output row) follow one another.
        let n = p.loops.len();
        assert_eq!(p.loops[n - 3].ds, (w * 4 - 4) as isize, "{w} {isa:?}");
    }
}

/// A 2-D transpose of `elem`-byte units, `rows x cols` in the source:
/// the loops of its plan, streamed or not, and whether they make a tile.
fn transpose_2d(rows: usize, cols: usize, elem: usize, streaming: bool) -> CopyPlan {
    let op = "t";
    let space = [SpaceAxis::plain(rows as u64), SpaceAxis::plain(cols as u64)];
    let g = Geometry::new(op, &space, &[&[o(1)], &[o(0)]]).unwrap();
    compile_c(&g, Direction::Forward, elem, &[rows, cols], &[cols, rows], streaming)
}

#[test]
fn transposes_of_units_without_a_vector_kernel_tile_when_long_on_both_sides_and_large() {
    for elem in [3, 6, 12, 24] {
        // The smallest square tile of 512 KiB, and one just under it.
        let side = ((512usize << 10) / elem).isqrt() + 1;
        for streaming in [false, true] {
            let p = transpose_2d(side, side, elem, streaming);
            assert!(p.tile && !p.nt, "{elem} {side}: {p:?}");
            assert_eq!(p.loops.iter().map(|l| l.count).collect::<Vec<_>>(), vec![side, side], "{elem}");
            // Under 512 KiB (and not shorter in the destination): rows.
            let p = transpose_2d(side - 2, side - 2, elem, streaming);
            assert!(!p.tile, "{elem} {}: {p:?}", side - 2);
        }
        // Shorter destination rows make a tile whatever the size.
        assert!(transpose_2d(20, 100, elem, false).tile, "{elem}");
    }
}

/// A tall tile (a short side of 2 or more, a long one) of units without a
/// vector kernel tiles from 8 MiB (`tile::blocked`), and runs as rows
/// under it (where its columns do not spill from the caches: rows of a
/// line or less, or of 32-byte units); a tall tile of at most 3 rows of
/// 32-byte units stays as rows whatever its size (`scatters_gathered_rows`
/// takes them).
#[test]
fn tall_transposes_of_units_without_a_vector_kernel_tile_from_8_mib() {
    for (elem, short) in [(3usize, 2usize), (6, 10), (12, 5), (32, 15), (32, 4)] {
        let long = (8usize << 20).div_ceil(elem * short);
        for streaming in [false, true] {
            // `short` columns of the source: the tile's `x`.
            let p = transpose_2d(long, short, elem, streaming);
            assert!(p.tile && !p.nt, "{elem} {short} x {long}: {p:?}");
            let p = transpose_2d(long - 1, short, elem, streaming);
            assert!(!p.tile, "{elem} {short} x {}: {p:?}", long - 1);
        }
    }
    for short in [2, 3] {
        let p = transpose_2d((64usize << 20) / (32 * short), short, 32, true);
        assert!(!p.tile, "32-byte units, {short} columns: {p:?}");
    }
}

/// Streaming TF space-to-batch-ND of 192-byte units by 6x13x11, padded on
/// the last two block dims (the broad workload that ran at 10x memcpy):
/// each destination row of 3 units continues the last with padding
/// between them, so the rows go through the line writers
/// ([`joins_padded_runs`]). Run backward (cropped, nothing filled), the
/// plan streams without them.
#[test]
fn padded_continued_rows_join_through_the_line_writers() {
    let op = "t";
    let space = [
        SpaceAxis::plain(1),
        SpaceAxis::new(op, 12, 0, 0, 6).unwrap(),
        SpaceAxis::new(op, 24, 1, 1, 13).unwrap(),
        SpaceAxis::new(op, 25, 6, 2, 11).unwrap(),
        SpaceAxis::plain(48),
    ];
    let groups: [&[Factor]; 5] = [&[k(1), k(2), k(3), o(0)], &[o(1)], &[o(2)], &[o(3)], &[o(4)]];
    let g = Geometry::new(op, &space, &groups).unwrap();
    let (space, block) = ([1, 12, 24, 25, 48], [6 * 13 * 11, 2, 2, 3, 48]);
    let p = compile_f32(&g, Direction::Forward, &space, &block, true);
    assert!(p.nt && !p.lines && !p.tile);
    let last = p.loops[p.loops.len() - 1];
    assert_eq!((p.unit, last.count, last.ds), (192, 3, 192));
    assert!(last.window.is_some() && continues_rows(&p.loops, p.unit));
    assert!(p.gathered);
    let p = compile_f32(&g, Direction::Backward, &space, &block, true);
    assert!(p.nt && !p.lines && !p.gathered);
}
