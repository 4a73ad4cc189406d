//! Deinterleaving tiles whose rows are carried ([`carry_level`],
//! [`padded_carry_level`]): the loop order that lets the carried kernels
//! take them.

use super::super::compile::*;
use super::super::rules::{carry_level, padded_carry_level};
use super::{c_strides, counts_and_strides};
use crate::engine::arch::Isa;
use crate::engine::geometry::{k, o, Geometry, SpaceAxis};
use crate::engine::kernels::carried::PADDED_ROWS_BYTES;

/// TF space-to-batch of one float32 channel, `[1, h, w, 1]` by 4 with
/// `pad` columns before each row (none after): the plan compiled
/// streaming with `isa`.
fn one_channel_padded_on_w(h: usize, w: usize, pad: usize, isa: Isa) -> CopyPlan {
    let op = "t";
    let space = [
        SpaceAxis::plain(1),
        SpaceAxis::new(op, h as u64, 0, 0, 4).unwrap(),
        SpaceAxis::new(op, w as u64, pad as u64, 0, 4).unwrap(),
        SpaceAxis::plain(1),
    ];
    let g = Geometry::new(op, &space, &[&[k(1), k(2), o(0)], &[o(1)], &[o(2)], &[o(3)]]).unwrap();
    let out = [16, h / 4, (w + pad) / 4, 1];
    let (ss, bs) = (c_strides(&[1, h, w, 1], 4), c_strides(&out, 4));
    CopyPlan::compile(&g, Direction::Forward, 4, &Layouts { space: &ss, block: &bs }, true, isa)
}

/// In the source's order, the loop of block rows sits between the output
/// rows and the tile as the stream groups, whose rows together must fit
/// the carried kernels' stage ([`PADDED_ROWS_BYTES`], 64 KiB): rows of
/// 4,608 bytes in 4 streams and 4 groups do not. In the destination's
/// order, the block rows go outside the output rows, which are next to
/// the tile: one group, 18 KiB, carried (TF space-to-batch of
/// `[1, 7624, 8660, 1]` float32 by 4 padded by 4 on W, 252 MiB: 2.7 ->
/// 1.6x memcpy on the Intel Xeon). Rows of 504 bytes fit as groups, in
/// the source's order, with AVX512-VBMI. Without vectors (`Portable`), no
/// carried kernel: through the cache, as before.
#[test]
fn padded_rows_too_long_for_groups_are_carried_in_the_destination_order() {
    let (h, pad) = (16, 4);
    let w = 4608 - pad;
    for isa in [Isa::Avx512Vbmi, Isa::Avx512, Isa::Avx2] {
        let p = one_channel_padded_on_w(h, w, pad, isa);
        let n = p.loops.len();
        assert!(p.tile && p.nt && p.padded && p.carry_level == Some(n - 3), "{isa:?}: {p:?}");
        let (row, plane) = (4608, (h / 4 * 4608) as isize);
        // The block rows, the output rows (an image row of 4-byte units
        // each), the tile (block columns by output columns).
        assert_eq!(
            counts_and_strides(&p.loops),
            vec![(4, (w * 4) as isize, 4 * plane), (h / 4, (16 * w) as isize, row), (4, 4, plane), (1152, 16, 4)]
        );
        let win = p.loops[n - 1].window.unwrap();
        assert_eq!((win.outer, win.lo, win.hi), (Some((n - 2) as u8), 4, 4608));
        assert!(p.loops[..n - 1].iter().all(|l| l.window.is_none()));
        assert!(row as usize * 16 > PADDED_ROWS_BYTES && row as usize * 4 <= PADDED_ROWS_BYTES);
    }
    // Shorter rows: carried as groups, in the source's order (with VBMI,
    // whose kernels take streams that are not line-aligned).
    let p = one_channel_padded_on_w(h, 500, pad, Isa::Avx512Vbmi);
    let n = p.loops.len();
    assert!(p.tile && p.nt && p.padded && p.carry_level == Some(n - 4), "{p:?}");
    assert_eq!((p.loops[n - 4].count, p.loops[n - 3].count, p.loops[n - 3].ss), (h / 4, 4, 2000));
    let p = one_channel_padded_on_w(h, w, pad, Isa::Portable);
    assert!(p.tile && !p.padded && p.carry_level.is_none(), "{p:?}");
}

/// einops' `b c (h p1) (w p2) -> b (p1 p2 c) h w` of three float32
/// channels by `p1` x 3 (an NCHW space-to-depth whose depth puts the
/// channel innermost): streamed, the tile deinterleaves 3 streams (`p2`)
/// of each channel's rows. In the source's order the loop of block rows
/// (`p1`) sits between the rows and the tile as stream groups: 30
/// streams by 10, more than the carried kernels take (`CARRIED_STREAMS`,
/// 16); in the destination's order, one group of 3, carried (150 MiB of
/// the broad benchmark: 1.74 -> 1.25x memcpy on the Intel Xeon). By 4,
/// 12 streams as groups: carried in the source's order.
#[test]
fn rows_of_more_streams_than_the_kernels_take_are_carried_one_block_row_at_a_time() {
    let plan = |p1: usize| {
        let op = "t";
        let (c, h, w) = (3, p1 * 8, 3 * 160);
        let axes = [
            SpaceAxis::plain(2),
            SpaceAxis::plain(c as u64),
            SpaceAxis::new(op, h as u64, 0, 0, p1 as u64).unwrap(),
            SpaceAxis::new(op, w as u64, 0, 0, 3).unwrap(),
        ];
        let g = Geometry::new(op, &axes, &[&[o(0)], &[k(2), k(3), o(1)], &[o(2)], &[o(3)]]).unwrap();
        let (ss, bs) = (c_strides(&[2, c, h, w], 4), c_strides(&[2, p1 * 3 * c, 8, 160], 4));
        CopyPlan::compile(&g, Direction::Forward, 4, &Layouts { space: &ss, block: &bs }, true, Isa::Avx512Vbmi)
    };
    let p = plan(10);
    let n = p.loops.len();
    assert!(p.tile && p.nt && !p.padded && p.carry_level == Some(n - 3), "{p:?}");
    let depth = 3 * 8 * 160 * 4;
    // The block rows, the output rows of every channel (one loop: a
    // channel's rows continue the last's on both sides), the tile (block
    // columns by output columns): one group of 3 streams.
    assert_eq!(
        counts_and_strides(&p.loops[n - 4..]),
        vec![(10, 480 * 4, 3 * depth), (24, 10 * 480 * 4, 160 * 4), (3, 4, depth), (160, 12, 4)]
    );
    assert!(carry_level(&p.loops, 4, Isa::Avx512Vbmi).is_some());
    let p = plan(4);
    let n = p.loops.len();
    assert!(p.tile && p.nt && p.carry_level == Some(n - 4), "{p:?}");
    assert_eq!((p.loops[n - 3].count, p.loops[n - 2].count), (4, 3));
    assert!(padded_carry_level(&p.loops, 4, Isa::Avx512Vbmi).is_none());
}
