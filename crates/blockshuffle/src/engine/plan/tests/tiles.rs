//! Which loops make a transposing tile (`rules::choose_tile`): deinterleaves
//! and interleaves of units without a vector kernel, where a kernel takes
//! them.

use super::super::compile::*;
use super::{c_strides, nchw_depth_to_space};
use crate::engine::arch::Isa;
use crate::engine::geometry::{o, Geometry, SpaceAxis};
use crate::engine::kernels::transpose::streams;

/// TF NCHW space-to-depth by `b` of `elem`-byte elements `[1, 2, 240,
/// w]`: each source row of `w` units deinterleaves into `b` streams of `w
/// / b`, as many as `b` or more (fewer make a tile anyway). With
/// AVX512-VBMI a tile where a kernel takes it: the byte permutes (3-byte
/// units, rows of 64 bytes or more), the transpose's full-line squares
/// (packed units of 3, 6 and 12 bytes, 16 streams or more, and of 6 and
/// 12 bytes 8 to 15 streams: `transpose::takes_squares`; not 6 bytes in
/// 7, which the permutes deinterleave only in a tile made otherwise);
/// below VBMI, and for shorter rows, fewer streams or 32-byte units, rows
/// that gather every `b`-th unit, as on a CPU without VBMI (whatever the
/// plan's kernel set says, the kernels ask the CPU), but where a CPU without
/// AVX-512's masks has the register squares (see
/// [`packed_units_in_the_register_squares_are_tiles_with_avx2`]).
#[test]
fn deinterleaves_of_packed_units_are_tiles_where_a_kernel_takes_them() {
    let cases = [
        (3, 6, 420, true),
        (3, 6, 36, true),
        (3, 2, 22, true),
        (3, 2, 20, false),
        (6, 16, 320, true),
        (6, 15, 300, true),
        (6, 8, 160, true),
        (6, 7, 140, false),
        (12, 16, 320, true),
        (12, 10, 200, true),
        (12, 6, 120, false),
        (32, 16, 320, false),
    ];
    for (elem, b, w, tiled) in cases {
        let (g, space, block) = nchw_depth_to_space(2, 240 / b, w / b, b);
        let (ss, bs) = (c_strides(&space, elem), c_strides(&block, elem));
        for isa in [Isa::Avx512Vbmi, Isa::Avx512] {
            for streaming in [false, true] {
                let layouts = Layouts { space: &ss, block: &bs };
                let p = CopyPlan::compile(&g, Direction::Forward, elem, &layouts, streaming, isa);
                let what = format!("{elem} bytes by {b}, w {w}, {isa:?} streaming {streaming}: {p:?}");
                let [.., x, y] = p.loops.as_slice() else { panic!("{what}") };
                let shape = (p.unit, x.count, x.ss, y.count, y.ss, y.ds);
                let u = elem as isize;
                assert_eq!(shape, (elem, b, u, w / b, u * b as isize, u), "{what}");
                let squares = streams::takes(w / b, b, elem, isa);
                assert_eq!(p.tile, isa.runs_vbmi() && tiled || squares, "{what}");
                assert!(!p.nt || !p.tile, "{what}");
            }
        }
    }
}

/// TF NCHW depth-to-space by `b` of `elem`-byte elements into `[1, 2, 2 *
/// b, w]`: each destination row of `w` units interleaves `b` streams of
/// `w / b`, no more units than streams (more make a tile anyway). With
/// AVX512-VBMI a tile where the byte permutes take it (units of up to 16
/// bytes, 5 to 32 streams, 16 of units over 4 bytes); below VBMI, and
/// otherwise (and on a CPU without VBMI), rows of the destination.
#[test]
fn interleaves_of_units_without_a_vector_kernel_are_tiles_where_the_permutes_take_them() {
    // Rows of more than 256 bytes: shorter ones are gathered whole
    // (`gather_block`).
    let cases = [
        (6, 7, 49, true),
        (6, 16, 64, true),
        (6, 17, 68, false),
        (3, 16, 96, true),
        (3, 32, 96, true),
        (12, 6, 36, true),
        (12, 16, 64, true),
        (12, 17, 68, false),
        (24, 6, 36, false),
    ];
    for (elem, b, w, tiled) in cases {
        let (g, space, block) = nchw_depth_to_space(2, 2, w / b, b);
        let (ss, bs) = (c_strides(&space, elem), c_strides(&block, elem));
        for isa in [Isa::Avx512Vbmi, Isa::Avx512] {
            let layouts = Layouts { space: &ss, block: &bs };
            let p = CopyPlan::compile(&g, Direction::Backward, elem, &layouts, false, isa);
            let what = format!("{elem} bytes by {b}, w {w}, {isa:?}: {p:?}");
            let [.., x, y] = p.loops.as_slice() else { panic!("{what}") };
            let u = elem as isize;
            assert_eq!((p.unit, y.count, y.ds), (elem, b, u), "{what}");
            if p.tile {
                assert_eq!((x.count, x.ss, x.ds), (w / b, u, u * b as isize), "{what}");
            }
            assert_eq!(p.tile, isa.runs_vbmi() && tiled, "{what}");
        }
    }
}

/// Deinterleaves (TF NCHW space-to-depth, as above) and interleaves (TF
/// NCHW depth-to-space) of packed units in the register transposes'
/// squares without AVX-512 (`transpose::streams`): with AVX2, a tile from
/// a square's side of streams and units (3-byte units 8 by 8, 6-byte
/// units 4 by 4 from 5 streams), but no interleave of 6-byte units; with
/// SSE2, rows.
#[test]
fn packed_units_in_the_register_squares_are_tiles_with_avx2() {
    // (elem, b, w, interleave, tiled with AVX2): rows of more than 256
    // bytes (shorter ones are gathered whole).
    let cases = [
        (3, 8, 96, false, true),
        (3, 7, 98, false, false),
        (6, 5, 50, false, true),
        (6, 4, 48, false, false),
        (12, 8, 64, false, false),
        (3, 12, 96, true, true),
        (3, 16, 112, true, false),
        (6, 12, 48, true, false),
    ];
    for (elem, b, w, interleave, tiled) in cases {
        let (g, space, block) =
            if interleave { nchw_depth_to_space(2, 2, w / b, b) } else { nchw_depth_to_space(2, 240 / b, w / b, b) };
        let (ss, bs) = (c_strides(&space, elem), c_strides(&block, elem));
        let dir = if interleave { Direction::Backward } else { Direction::Forward };
        for isa in [Isa::Avx2, Isa::Sse2] {
            let layouts = Layouts { space: &ss, block: &bs };
            let p = CopyPlan::compile(&g, dir, elem, &layouts, false, isa);
            let what = format!("{elem} bytes by {b}, w {w}, interleave {interleave}, {isa:?}: {p:?}");
            let [.., x, y] = p.loops.as_slice() else { panic!("{what}") };
            let (u, n) = (elem as isize, w / b);
            if interleave {
                assert_eq!((p.unit, y.count, y.ds), (elem, b, u), "{what}");
            } else {
                assert_eq!((p.unit, x.count, x.ss, y.count, y.ss, y.ds), (elem, b, u, n, u * b as isize, u), "{what}");
            }
            let avx2 = cfg!(target_arch = "x86_64") && isa == Isa::Avx2;
            assert_eq!(p.tile, avx2 && tiled, "{what}");
        }
    }
}

/// TF NCHW space-to-depth by `b` of `elem`-byte units without a vector
/// kernel (and no register squares: 12 and 32 bytes), each row of `b * n`
/// units into `b` streams: a tile where a column of it (a unit of each of
/// its `n` source groups) reads more lines than the L1 cache holds
/// (`tile::blocked`, whose blocks keep them); as many lines as the cache
/// holds, groups of a line or less, or whole 16-byte vectors (which the
/// prefetchers follow), rows that gather.
#[test]
fn deinterleaves_whose_columns_spill_from_the_l1_cache_are_tiles() {
    let cases = [(12, 7, 513, true), (12, 7, 512, false), (12, 5, 600, false), (32, 7, 513, false)];
    for (elem, b, n, tiled) in cases {
        let (g, space, block) = nchw_depth_to_space(2, 240 / b, n, b);
        let (ss, bs) = (c_strides(&space, elem), c_strides(&block, elem));
        for isa in [Isa::Avx2, Isa::Avx512, Isa::Sse2] {
            let layouts = Layouts { space: &ss, block: &bs };
            let p = CopyPlan::compile(&g, Direction::Forward, elem, &layouts, false, isa);
            let what = format!("{elem} bytes by {b}, {n} groups, {isa:?}: {p:?}");
            let [.., x, y] = p.loops.as_slice() else { panic!("{what}") };
            let u = elem as isize;
            assert_eq!((p.unit, x.count, x.ss, y.count, y.ss, y.ds), (elem, b, u, n, u * b as isize, u), "{what}");
            assert_eq!(p.tile, tiled, "{what}");
        }
    }
}

/// A numpy transpose `1, 0` of packed units (3, 6 and 12 bytes) streamed:
/// with AVX512-VBMI, where its destination rows are 1 KiB and more, a
/// tile in the transpose's squares that streams (four squares a step,
/// shifted into whole lines by bytes: `streamed::streams_packed_squares`);
/// a byte shorter, and without VBMI, through the cache.
#[test]
fn transposes_of_packed_units_into_rows_of_1_kib_stream_with_vbmi() {
    for elem in [3, 6, 12] {
        let long = 1024usize.div_ceil(elem);
        for rows in [long, long - 1] {
            let cols = 300;
            let space = [SpaceAxis::plain(rows as u64), SpaceAxis::plain(cols as u64)];
            let g = Geometry::new("t", &space, &[&[o(1)], &[o(0)]]).unwrap();
            let (ss, bs) = (c_strides(&[rows, cols], elem), c_strides(&[cols, rows], elem));
            for isa in [Isa::Avx512Vbmi, Isa::Avx512] {
                let layouts = Layouts { space: &ss, block: &bs };
                let p = CopyPlan::compile(&g, Direction::Forward, elem, &layouts, true, isa);
                let what = format!("{elem} bytes, {rows} x {cols}, {isa:?}: {p:?}");
                let squares = isa.runs_vbmi();
                assert_eq!(p.tile_choice.is_some_and(|c| c.transposes()), squares, "{what}");
                assert_eq!(p.nt, squares && rows == long, "{what}");
            }
        }
    }
}
