//! Deinterleaves whose rows the carried kernels take one block row at a
//! time, the loop of block rows outside the rows (in the source's order it
//! falls between them and the tile, as stream groups: more streams than
//! the kernels take): einops' NCHW space-to-depth of three channels with
//! the channel innermost in the depth, by 10 x 3 and 9 x 3 (30 and 27
//! streams) and by 4 x 3 (12, carried as groups), 1- to 8-byte elements,
//! against the naive reference, with every kernel set, streamed or not,
//! from row-major buffers and from a view whose channels are further
//! apart (which runs through the cache). (The padded ones, TF
//! space-to-batch padded on W: `padding.rs`.)

use blockshuffle::{einops, Operator};

mod common;
use common::reference::reference;
use common::{bytes, check_with_channels_apart};

#[test]
fn rows_of_many_streams_carried_one_block_row_at_a_time_match_the_reference() {
    for p1 in [10, 9, 4] {
        for elem in [1, 2, 4, 8] {
            let (b, c, h, w) = (2, 3, p1 * 6, 3 * 70);
            let shape = [b, c, h, w];
            let op = einops::Rearrange::new("b c (h p1) (w p2) -> b (p1 p2 c) h w", &[("p1", p1), ("p2", 3)]).unwrap();
            let plan = op.plan(&shape).unwrap();
            let out = [b, p1 * 3 * c, 6, 70];
            assert_eq!(plan.output_shape(), out.as_slice());
            let x = bytes(shape.iter().product::<usize>() * elem, 7);
            let want = reference(&x, &shape, &out, elem, |o| {
                let (d, i, j) = (o[1], o[2], o[3]);
                let (k1, k2, ch) = (d / (3 * c), d / c % 3, d % c);
                Some(vec![o[0], ch, i * p1 + k1, j * 3 + k2])
            });
            check_with_channels_apart(&plan, &x, &shape, elem, 1, &want);
        }
    }
}
