//! Interleaving tiles that only the stage streams, streamed past the
//! caches in the order of a plan through the cache ([`streams_staged`]).

use super::super::compile::*;
use super::super::streamed::{staged_stream_bytes, streams_staged, MIN_STAGED_RUN};
use super::{c_strides, counts_and_strides, l, nchw_depth_to_space};
use crate::engine::arch::cache::{cpu_stream_threshold, stream_threshold};
use crate::engine::arch::Isa;
use crate::engine::geometry::{k, o, Factor, Geometry, SpaceAxis};
use crate::engine::kernels::bytes::STAGE;
use crate::engine::kernels::copy::Mode;
use crate::engine::kernels::nest::{Loop, Window};
use crate::engine::kernels::tile::{TileChoice, TileShape};

/// OpenVINO depth-first depth-to-space by `b` of `[2, c * b, w]`
/// (`elem`-byte elements; `Direction::Forward`: space-to-depth into it):
/// the depth index is `(c, bx)`; compiled streaming or not with `isa`.
fn depth_first_1d(c: usize, w: usize, b: usize, elem: usize, isa: Isa, dir: Direction, streaming: bool) -> CopyPlan {
    let n = 2;
    let op = "t";
    let space = [
        SpaceAxis::plain(n as u64),
        SpaceAxis::plain(c as u64),
        SpaceAxis::new(op, (w * b) as u64, 0, 0, b as u64).unwrap(),
    ];
    let groups: [&[Factor]; 3] = [&[o(0)], &[o(1), k(2)], &[o(2)]];
    let g = Geometry::new(op, &space, &groups).unwrap();
    let (ss, bs) = (c_strides(&[n, c, w * b], elem), c_strides(&[n, c * b, w], elem));
    CopyPlan::compile(&g, dir, elem, &Layouts { space: &ss, block: &bs }, streaming, isa)
}

/// The size bound is twice the size from which outputs stream, on this CPU
/// as on others: 32 MiB for a last-level cache of 64 MiB or more (or none
/// known), 16 MiB for 32 MiB.
#[test]
fn staged_interleaves_stream_from_twice_the_streaming_threshold() {
    assert_eq!(staged_stream_bytes(), 2 * cpu_stream_threshold());
    assert_eq!(2 * stream_threshold(None), 32 << 20);
    assert_eq!(2 * stream_threshold(Some(32 << 20)), 16 << 20);
}

/// The rule's bounds, on the last loops of a plan: an interleave of `ny`
/// streams of 4-byte units, `nx` of each, with the loop `reps` around it.
#[test]
fn staged_interleaves_stream_where_long_runs_read_few_rows_a_push() {
    let big = staged_stream_bytes();
    let tile = |nx: usize, ny: usize| [l(nx, 4, (ny * 4) as isize), l(ny, 1 << 24, 4)];
    // 6 streams of 2,048 units: a 48 KiB run, from twice the size from
    // which outputs stream.
    assert!(streams_staged(&tile(2048, 6), 4, big));
    assert!(!streams_staged(&tile(2048, 6), 4, big - 1));
    // Not an interleave (the columns apart in the destination).
    assert!(!streams_staged(&[l(2048, 4, 1 << 20), l(6, 1 << 24, 4)], 4, big));
    // A run that no repetition continues, from `MIN_STAGED_RUN`: 85 units
    // of 6 streams, 2,040 bytes; 86 fill it. Alone, or with a loop around
    // it that does not continue it (the rows of NCHW depth-to-space,
    // which continue the source's rows).
    const { assert!(85 * 24 < MIN_STAGED_RUN && 86 * 24 >= MIN_STAGED_RUN && MIN_STAGED_RUN < STAGE) };
    assert!(!streams_staged(&tile(85, 6), 4, big));
    assert!(streams_staged(&tile(86, 6), 4, big));
    let [x, y] = tile(86, 6);
    for ds in [2065, 1 << 20] {
        assert!(streams_staged(&[l(8, 344, ds), x, y], 4, big), "{ds}");
    }
    let [x85, y85] = tile(85, 6);
    assert!(!streams_staged(&[l(8, 340, 1 << 20), x85, y85], 4, big));
    // A run that repetitions continue, from a stage, whole: 3 of 2,064
    // bytes that continue the source's rows too (a push reads the tile's
    // 6 rows on) fall short of it, 4 fill it. Where they do not, a push
    // of the 3 the stage holds reads 18 rows, past `MAX_STAGED_ROWS`.
    const { assert!(3 * 2064 < STAGE && 4 * 2064 >= STAGE && STAGE / 2064 == 3) };
    assert!(!streams_staged(&[l(3, 344, 2064), x, y], 4, big));
    assert!(streams_staged(&[l(4, 344, 2064), x, y], 4, big));
    assert!(!streams_staged(&[l(4, 1 << 26, 2064), x, y], 4, big));
    // Repetitions that continue the destination's run make it longer: 8
    // of 7,200 bytes. Where they continue the source's rows too, a push
    // reads the tile's 6 rows on; where not, a push of one repetition (the
    // stage holds one) reads 6 others.
    let [x, y] = tile(300, 6);
    for ss in [1200, 1 << 26] {
        assert!(streams_staged(&[l(8, ss, 7200), x, y], 4, big), "{ss}");
    }
    // Cropped repetitions (a window on them, as batch-to-space's block
    // rows) do not lengthen it, and it is shorter than the stage.
    let cropped = Loop { window: Some(Window { outer: Some(0), oc: 8, ic: 1, lo: 1, hi: 100 }), ..l(8, 1200, 7200) };
    assert!(!streams_staged(&[l(4, 1 << 26, 57600), cropped, x, y], 4, big));
    // A cropped loop that does not continue the run: from `MIN_STAGED_RUN`.
    assert!(streams_staged(&[l(4, 1 << 26, 57600), Loop { ds: 7201, ..cropped }, x, y], 4, big));
    // 12 streams of 1,920-byte runs, 12 repetitions of them in the
    // destination's run: the stage holds 4 a push, 48 rows (past
    // `MAX_STAGED_ROWS`) where they do not continue the source's rows,
    // 12 where they do.
    let [x, y] = tile(40, 12);
    assert!(!streams_staged(&[l(12, 1 << 26, 1920), x, y], 4, big));
    assert!(streams_staged(&[l(12, 160, 1920), x, y], 4, big));
}

/// OpenVINO depth-first depth-to-space by 6 of float32 `[2, 18, w]`: 6
/// streams (no interleave of their own) into each 24-byte group, a tile
/// through the cache in the source's order (the loop of batches and
/// channels outside it), streamed through the stage from
/// `staged_stream_bytes` of output (`144 * w` bytes) on every ISA, and
/// through the cache just under it.
#[test]
fn long_staged_interleaves_stream_past_the_caches() {
    let at = staged_stream_bytes().div_ceil(144);
    for isa in [Isa::Avx512Vbmi, Isa::Avx512, Isa::Avx2, Isa::Portable] {
        for (w, streamed) in [(at, true), (at - 1, false), (at * 2, true)] {
            let p = depth_first_1d(3, w, 6, 4, isa, Direction::Backward, true);
            let plane = (w * 24) as isize;
            assert_eq!(counts_and_strides(&p.loops), vec![(6, plane, plane), (w, 4, 24), (6, plane / 6, 4)]);
            assert_eq!(p.dst_bytes >= staged_stream_bytes(), streamed);
            let staged = p.tile_choice.is_some_and(|c| c.staged());
            assert!(p.tile && p.nt == streamed && staged == streamed, "{isa:?} {w}: {p:?}");
        }
    }
}

/// OpenVINO depth-first space-to-depth by 5 of `[2, 16, 5 * w]` (32 MB
/// of float16; `depth_first_1d` forward): a deinterleave of 5 streams
/// that streamed only the tile's own kernels take (of bytes, the register
/// transposes' deinterleave). Of 1- and 2-byte units, with AVX512-VBMI,
/// whose byte permutes take it through the cache, it stores through the
/// cache, the very plan of a run not streaming; without them, or of
/// 4-byte units (which the permutes take too), it streams.
#[test]
fn streamed_deinterleaves_the_permutes_take_through_the_cache_store_through_it() {
    let w = 100_000;
    let plan = |elem, isa, streaming| depth_first_1d(16, w, 5, elem, isa, Direction::Forward, streaming);
    for (elem, isa, permuted) in [
        (1, Isa::Avx512Vbmi, true),
        (1, Isa::Avx512, false),
        (1, Isa::Avx2, false),
        (2, Isa::Avx512Vbmi, true),
        (2, Isa::Avx512, false),
        (2, Isa::Avx2, false),
        (4, Isa::Avx512Vbmi, false),
    ] {
        let (p, cached) = (plan(elem, isa, true), plan(elem, isa, false));
        let what = format!("{elem} bytes, {isa:?}: {p:?}");
        assert!(p.tile && p.dst_bytes == 16_000_000 * elem, "{what}");
        let n = p.loops.len();
        let (e, row) = (elem as isize, (w * elem) as isize);
        assert_eq!(counts_and_strides(&p.loops[n - 2..]), vec![(5, e, row), (w, 5 * e, e)], "{what}");
        // Streamed: bytes by the deinterleave, wider units by their own.
        let kernel = |c: TileChoice| if elem == 1 { c.deinterleaves() } else { c.own() };
        let streamed_kernel = p.tile_choice.is_some_and(kernel);
        let permutes = p.tile_choice.is_some_and(|c| c.permutes());
        assert_eq!((p.nt, streamed_kernel, permutes), (!permuted, !permuted, permuted), "{what}");
        if permuted {
            // The cached plan's loops and kernel, told that the tensors
            // are past the caches (`Mode::fetch`).
            let past =
                |c: TileChoice| TileChoice::of(TileShape { m: Mode { fetch: true, ..c.shape().m }, ..*c.shape() });
            assert_eq!((p.loops, p.tile_choice), (cached.loops, cached.tile_choice.map(past)), "{isa:?}");
        }
        if elem == 4 {
            assert!(cached.tile_choice.is_some_and(|c| c.permutes()), "{what}");
        }
    }
}

/// TF NCHW depth-to-space by 16 of `[1, 256, 100, 109]` (as the ONNX CRD
/// depth-to-space of float16 that found the rule, 42 MiB of broad seed
/// 26): an interleave of 16 streams of 109-unit rows, that streamed the
/// transpose's squares take, and through the cache, with AVX512-VBMI, the
/// byte permutes. With VBMI, of 1-, 2- and 4-byte units, it stores through
/// the cache, by the tile and the kernel of a run not streaming; without
/// VBMI's permutes it streams, by the squares.
#[test]
fn streamed_interleaves_the_permutes_take_through_the_cache_store_through_it() {
    let (g, space, block) = nchw_depth_to_space(1, 100, 109, 16);
    for (elem, isa, permuted) in [
        (1, Isa::Avx512Vbmi, true),
        (2, Isa::Avx512Vbmi, true),
        (4, Isa::Avx512Vbmi, true),
        (2, Isa::Avx512, false),
        (2, Isa::Avx2, false),
    ] {
        let (ss, bs) = (c_strides(&space, elem), c_strides(&block, elem));
        let layouts = Layouts { space: &ss, block: &bs };
        let plan = |streaming| CopyPlan::compile(&g, Direction::Backward, elem, &layouts, streaming, isa);
        let (p, cached) = (plan(true), plan(false));
        let what = format!("{elem} bytes, {isa:?}: {p:?}");
        let n = p.loops.len();
        let e = elem as isize;
        assert_eq!(counts_and_strides(&p.loops[n - 2..]), vec![(109, e, 16 * e), (16, 10_900 * e, e)], "{what}");
        let transposes = p.tile_choice.is_some_and(|c| c.transposes());
        let permutes = p.tile_choice.is_some_and(|c| c.permutes());
        assert_eq!((p.tile, p.nt, transposes, permutes), (true, !permuted, !permuted, permuted), "{what}");
        if permuted {
            // The tile of a run not streaming, by the same kernel (the
            // loops around it in the order past the caches, see
            // `repeat_continuing`).
            assert_eq!(p.loops[n - 2..], cached.loops[n - 2..], "{what}");
            assert!(cached.tile_choice.is_some_and(|c| c.permutes()), "{what}");
        }
    }
}

/// TF NCHW depth-to-space by 12 of float32 `[1, 144, 2000, 40]` (46 MB):
/// 1,920-byte tiles of 12 streams, whose 12 repetitions (the block rows)
/// continue the destination's run but not the source's rows; a push of
/// the stage would read 48 rows (4 repetitions), past `MAX_STAGED_ROWS`:
/// through the cache.
#[test]
fn staged_interleaves_reading_many_rows_a_push_store_through_the_cache() {
    let (g, space, block) = nchw_depth_to_space(1, 2000, 40, 12);
    let (ss, bs) = (c_strides(&space, 4), c_strides(&block, 4));
    for isa in [Isa::Avx512Vbmi, Isa::Avx2] {
        let p = CopyPlan::compile(&g, Direction::Backward, 4, &Layouts { space: &ss, block: &bs }, true, isa);
        assert_eq!(
            counts_and_strides(&p.loops),
            vec![(2000, 160, 23040), (12, 3_840_000, 1920), (40, 4, 48), (12, 320_000, 4)]
        );
        assert!(p.dst_bytes >= staged_stream_bytes() && p.tile && !p.nt, "{isa:?}: {p:?}");
    }
}

/// TF NCHW depth-to-space by 7 of float64 `[1, 32 * 49, h, w]` (as broad
/// seed 26's of `[2, 1568, 33, 39]`, 30 MiB): tiles of 7 streams of
/// `w`-unit rows, whose repetitions (the channels' rows) continue the
/// source's rows, not the destination's run. From `staged_stream_bytes`
/// of output, rows of 39 units (2,184-byte runs, from `MIN_STAGED_RUN`)
/// stream through the stage, on every ISA; rows of 36 units (2,016
/// bytes) store through the cache, as do both under that size.
#[test]
fn staged_interleaves_of_runs_the_loop_around_does_not_continue_stream_from_2_kib() {
    for (w, long) in [(39, true), (36, false)] {
        let row = w * 7 * 8;
        assert_eq!(row >= MIN_STAGED_RUN, long, "{w}");
        let at = staged_stream_bytes().div_ceil(32 * 7 * row);
        for isa in [Isa::Avx512Vbmi, Isa::Avx512, Isa::Avx2, Isa::Portable] {
            for h in [at - 1, at] {
                let (g, space, block) = nchw_depth_to_space(32, h, w, 7);
                let (ss, bs) = (c_strides(&space, 8), c_strides(&block, 8));
                let p = CopyPlan::compile(&g, Direction::Backward, 8, &Layouts { space: &ss, block: &bs }, true, isa);
                let what = format!("w {w}, h {h}, {isa:?}: {p:?}");
                let plane = (h * w * 8) as isize;
                let n = p.loops.len();
                assert_eq!(counts_and_strides(&p.loops[n - 2..]), vec![(w, 8, 56), (7, 32 * plane, 8)], "{what}");
                let streamed = long && p.dst_bytes >= staged_stream_bytes();
                if streamed {
                    // The channels' rows around the tile, on from its
                    // source rows; the block rows outside them.
                    let rows = (32 * h, (w * 8) as isize, (7 * row) as isize);
                    assert_eq!(
                        counts_and_strides(&p.loops[..n - 2]),
                        vec![(7, 32 * 7 * plane, row as isize), rows],
                        "{what}"
                    );
                }
                assert_eq!(p.dst_bytes >= staged_stream_bytes(), h == at, "{what}");
                let staged = p.tile_choice.is_some_and(|c| c.staged());
                assert!(p.tile && p.nt == streamed && staged == streamed, "{what}");
            }
        }
    }
}
