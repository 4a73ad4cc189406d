//! Padded deinterleaving tiles whose rows are carried
//! ([`padded_carry_level`]): the loop order that lets the carried kernels
//! take them.

use super::super::compile::*;
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
/// the source's order, with AVX512-VBMI. Without vectors (`Portable`), no carried kernel:
/// through the cache, as before.
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
