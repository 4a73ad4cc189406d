//! Streaming plans whose tiles store through the cache after all: which
//! keep the streaming plan's loops, and which take the plan through the
//! cache's.

use super::super::compile::*;
use super::super::rules::{interleaved_rows, open_interleaved_rows, streams_shuffled_rows};
use super::{c_strides, compile_c, counts_and_strides, l, nchw_blocked, nchw_blocked_streaming, nchw_depth_to_space};
use crate::engine::arch::Isa;
use crate::engine::kernels::copy::Mode;

/// A streaming plan whose tile stores through the cache still tells the
/// tile's kernel that its tensors are past the caches (`Mode::fetch`: the
/// full-line transposes then fetch their source ahead, in blocks), in the
/// kernel it chose once (`CopyPlan::tile_choice`, which the executor
/// takes only for the same shape and mode); the same plan not streaming
/// does not.
#[test]
fn streaming_plans_through_the_cache_fetch_their_source() {
    let (g, space, block) = nchw_depth_to_space(2, 160, 93, 6);
    for streaming in [true, false] {
        let p = compile_c(&g, Direction::Forward, 1, &space, &block, streaming);
        assert!(p.tile && !p.nt && p.streaming == streaming, "{p:?}");
        let choice = p.tile_choice.expect("a plain tile's kernel, chosen once");
        assert_eq!(choice.shape().m, Mode { nt: false, isa: p.isa, fetch: streaming }, "{p:?}");
    }
}

/// Streaming NCHW space-to-depth of uint8 by 14 (`[1, 3, 4830, 2044]`,
/// 28 MiB) and by 6 (`[1, 2, 960, 558]`): deinterleaves of 14 and 6
/// streams of bytes that no kernel streams, so they store through the
/// cache, in the very loops of the same plans not streaming (their passes
/// over the source, a block row each, whole: step 4''' of
/// `CopyPlan::build`). The interleave of complex128 by 17 (`[1, 867, 16,
/// 22]`: more streams than a streamed grid takes), which stores through
/// the cache too, keeps the streaming plan's loops: the source's order
/// outside the tile (which the plan through the cache takes too past the
/// second-level cache: `past_second_level`).
#[test]
fn streamed_deinterleaves_through_the_cache_take_the_plan_through_the_cache() {
    let (g, space6, block6) = nchw_depth_to_space(2, 160, 93, 6);
    let streamed = compile_c(&g, Direction::Forward, 1, &space6, &block6, true);
    assert!(streamed.tile && !streamed.nt, "{streamed:?}");
    let cached = compile_c(&g, Direction::Forward, 1, &space6, &block6, false);
    assert_eq!(counts_and_strides(&streamed.loops), counts_and_strides(&cached.loops));
    let space = [1, 3, 4830, 2044];
    for isa in [Isa::Avx2, Isa::Avx512] {
        let p = nchw_blocked(space, 14, 1, Direction::Forward, isa);
        let n = p.loops.len();
        let what = format!("{isa:?}: {p:?}");
        assert!(p.tile && !p.nt && p.loops[n - 2].ds != p.loops[n - 1].count as isize, "{what}");
        let cached = nchw_blocked_streaming(space, 14, 1, Direction::Forward, isa, false);
        assert_eq!(counts_and_strides(&p.loops), counts_and_strides(&cached.loops), "{what}");
        assert_eq!((p.unit, p.tile), (cached.unit, cached.tile), "{what}");
    }
    let (g, space, block) = nchw_depth_to_space(3, 16, 22, 17);
    for isa in [Isa::Avx2, Isa::Avx512] {
        let ss = c_strides(&space, 16);
        let bs = c_strides(&block, 16);
        let compile = |streaming| {
            CopyPlan::compile(&g, Direction::Backward, 16, &Layouts { space: &ss, block: &bs }, streaming, isa)
        };
        let (p, cached) = (compile(true), compile(false));
        let n = p.loops.len();
        let what = format!("{isa:?}: {p:?}");
        assert!(p.tile && !p.nt && p.loops[n - 2].ds == (p.loops[n - 1].count * 16) as isize, "{what}");
        // The plan through the cache reads the source in that order too
        // where its output (4.6 MiB) is past the second-level cache.
        let same = counts_and_strides(&p.loops) == counts_and_strides(&cached.loops);
        assert_eq!(same, super::super::repetitions::past_second_level(false, cached.dst_bytes), "{what}");
        assert!(p.loops[..n - 2].windows(2).all(|l| l[0].ss.abs() >= l[1].ss.abs()), "{what}");
    }
}

/// Streaming TF batch-to-space by 4 of 12-byte units (`[64, 219, 164, 1]`):
/// the byte shuffles interleave the 4 block columns' rows, and each run of
/// the destination (the 4 block rows of an output row) reads a part of 16
/// source rows that the loop outside it continues: more open than
/// `MAX_STREAMED_INTERLEAVE_ROWS`, so it stores through the cache. By 3 (9
/// rows open), it stores through the cache too; by 2 (4 rows open), it
/// streams; so does NHWC space-to-depth by 2 of three uint8 channels, which
/// reads its source rows whole, one output row after another
/// (`interleaved_three_channel_rows_of_whole_vectors_stream`).
#[test]
fn streamed_byte_shuffles_keeping_many_source_rows_open_store_through_the_cache() {
    for isa in [Isa::Avx2, Isa::Avx512] {
        for (block, streams) in [(4, false), (3, false), (2, true)] {
            let space = [4, 219 * block, 164 * block, 1];
            let g = super::nhwc(space, block, true);
            let (ss, bs) = (c_strides(&space, 12), c_strides(&[4 * block * block, 219, 164, 1], 12));
            let p = CopyPlan::compile(&g, Direction::Backward, 12, &Layouts { space: &ss, block: &bs }, true, isa);
            let n = p.loops.len();
            let what = format!("by {block}, {isa:?}: {p:?}");
            assert!(p.tile && p.carry_level.is_none() && p.unit == 12, "{what}");
            assert_eq!((p.loops[n - 1].count, p.loops[n - 2].ds), (block, (block * 12) as isize), "{what}");
            assert_eq!(p.nt, streams, "{what}");
            // The byte shuffles' rows, whose open rows decide.
            assert!(streams_shuffled_rows(&p.loops, 12, isa), "{what}");
        }
    }
}

/// The source rows an interleaving tile's destination runs keep open:
/// TF batch-to-space by 4 of 12-byte units as the plan streams it, the 4
/// block rows around the tile continuing its destination rows and the
/// image rows outside them its source rows (4 x 4 = 16 open); without a
/// loop continuing the source rows, each run reads its 4 rows whole, one
/// after another (4 open).
#[test]
fn open_interleaved_rows_are_the_rows_a_loop_further_out_reads_on() {
    let reads_on =
        [l(4, 428_364, 6_814_704), l(219, 1956, 31_296), l(4, 6_853_824, 7824), l(163, 12, 48), l(4, 1_713_456, 12)];
    assert_eq!(interleaved_rows(&reads_on, 12), 16);
    assert_eq!(open_interleaved_rows(&reads_on, 12), 16);
    let mut whole = reads_on;
    whole[1].ss = 1968;
    assert_eq!(interleaved_rows(&whole, 12), 16);
    assert_eq!(open_interleaved_rows(&whole, 12), 4);
}
