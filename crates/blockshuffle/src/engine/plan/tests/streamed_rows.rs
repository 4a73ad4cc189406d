//! Streaming plans whose destination rows gather whole-vector units from
//! up to `kernels::stream::MAX_STREAMED_STREAMS` source streams: streamed
//! unit by unit (`streams_continued_rows`), not tiled.

use super::super::compile::*;
use super::super::rules::streams_continued_rows;
use super::{c_strides, nchw_depth_to_space};
use crate::engine::arch::Isa;

/// Streaming NCHW depth-to-space of complex128 (16-byte units) by 5, 6 and
/// 16: each output row takes one unit from each of 5 (6, 16) source planes
/// in turn, rows that continue one another, so it streams unit by unit, a
/// grid of the block's units innermost (runs of 52 such rows, 4 KiB and
/// more). By 17, more streams than a streamed grid takes: a tile, through
/// the cache.
#[test]
fn interleaves_of_up_to_16_streams_of_whole_vectors_stream_their_rows() {
    for (b, streamed) in [(5, true), (6, true), (16, true), (17, false)] {
        let (g, space, block) = nchw_depth_to_space(3, 8, 52, b);
        let (ss, bs) = (c_strides(&space, 16), c_strides(&block, 16));
        for isa in [Isa::Avx2, Isa::Avx512] {
            let p = CopyPlan::compile(&g, Direction::Backward, 16, &Layouts { space: &ss, block: &bs }, true, isa);
            let what = format!("by {b}, {isa:?}: {p:?}");
            assert_eq!(streams_continued_rows(&p.loops, p.unit, p.fill), streamed, "{what}");
            assert_eq!((p.nt, p.tile), (streamed, !streamed), "{what}");
            if streamed {
                let [.., x, y] = p.loops[..] else { panic!("{what}") };
                assert_eq!((x.ss, x.ds, y.count, y.ds), (16, 16 * b as isize, b, 16), "{what}");
            }
        }
    }
}
