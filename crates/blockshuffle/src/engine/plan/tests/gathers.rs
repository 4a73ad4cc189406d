//! Small destination blocks gathered by byte permutes ([`gather_block`]).

use super::super::gathers::gather_block;
use super::l;
use crate::engine::arch::Isa;
use crate::engine::kernels::nest::{Loop, Window};

/// The loops of OpenVINO depth-to-space blocks first by 4 of 3-byte units
/// `[2, 192, 11, 4, 5]`.
fn ov_depth_to_space_by_4() -> [Loop; 7] {
    [l(2, 126720, 126720), l(33, 60, 3840), l(4, 31680, 960), l(4, 15, 240), l(4, 7920, 60), l(5, 3, 12), l(4, 1980, 3)]
}

#[test]
fn a_block_whose_rows_take_too_many_loads_gathers_a_smaller_one() {
    // The innermost three loops make a 240-byte destination block from 16
    // source rows of 15 bytes, which take more loads than a gather has
    // (packed, 3 straddle the registers); the innermost two, a 60-byte
    // block from 4 rows, in one register, which the next 3 continue: 4
    // blocks at once in 4 loads (see below).
    let loops = ov_depth_to_space_by_4();
    let b = gather_block(&loops, 3, false, false, Isa::Avx512Vbmi).expect("a gather");
    assert_eq!((b.k, b.gather.len()), (5, 60));
    // Streamed, blocks must be whole lines; without VBMI, no gather.
    assert!(gather_block(&loops, 3, true, false, Isa::Avx512Vbmi).is_none());
    assert!(gather_block(&loops, 3, false, false, Isa::Avx512).is_none());
}

#[test]
fn avx2_gathers_blocks_of_bytes_only() {
    // einops' `(c p2 p1)` blocks: 64 bytes from 2 rows of 32 bytes; the
    // same of 2-byte units, 128 bytes from 2 rows of 64.
    let bytes = [l(10, 32, 64), l(4, 1, 16), l(8, 4, 2), l(2, 1000, 1)];
    let b = gather_block(&bytes, 1, false, false, Isa::Avx2).expect("a gather");
    assert_eq!((b.k, b.gather.len(), b.copies_of), (1, 64, None));
    let pairs = [l(10, 64, 128), l(4, 2, 32), l(8, 8, 4), l(2, 2000, 2)];
    assert!(gather_block(&pairs, 2, false, false, Isa::Avx2).is_none());
    assert!(gather_block(&pairs, 2, false, false, Isa::Avx512).is_none());
    assert_eq!(gather_block(&pairs, 2, false, false, Isa::Avx512Vbmi).map(|b| (b.k, b.gather.len())), Some((1, 128)));
}

#[test]
fn repetitions_that_continue_a_blocks_rows_are_gathered_a_few_at_once() {
    // The block above (4 rows of 15 bytes, 60 bytes) repeated along the
    // loop of 4 whose source stride (15) continues its rows: four copies
    // at once, in 4 loads (rows of 60 bytes, one a register), where each
    // alone takes 4.
    let loops = ov_depth_to_space_by_4();
    let b = gather_block(&loops, 3, false, false, Isa::Avx512Vbmi).expect("a gather");
    assert_eq!((b.k, b.copies_of, b.gather.copies(), b.gather.loads()), (5, Some(3), 4, 4));
    // Not along a loop that carries a window (the window would count its
    // copies), but along another where a third loop does and the window
    // crops (not where it pads: a padded position's fill is one block's);
    // nor for repetitions that do not continue the rows (a 64-byte block
    // of 2 rows of 32 bytes, repeated 1,000 bytes on).
    let mut windowed = loops;
    windowed[3].window = Some(Window { outer: None, oc: 0, ic: 1, lo: 1, hi: 4 });
    assert_eq!(gather_block(&windowed, 3, false, false, Isa::Avx512Vbmi).map(|b| b.copies_of), Some(None));
    let mut elsewhere = loops;
    elsewhere[2].window = Some(Window { outer: None, oc: 0, ic: 1, lo: 1, hi: 4 });
    assert_eq!(gather_block(&elsewhere, 3, false, false, Isa::Avx512Vbmi).map(|b| b.copies_of), Some(Some(3)));
    assert_eq!(gather_block(&elsewhere, 3, false, true, Isa::Avx512Vbmi).map(|b| b.copies_of), Some(None));
    let apart = [l(10, 1000, 64), l(4, 1, 16), l(8, 4, 2), l(2, 100, 1)];
    assert_eq!(gather_block(&apart, 1, false, false, Isa::Avx512Vbmi).map(|b| (b.k, b.copies_of)), Some((1, None)));
    // Streamed, or without VBMI, one block at a time (einops' 64-byte
    // `(c p2 p1)` blocks from 2 rows of 32 bytes, which the next block's
    // continue: 2 at once, through the cache).
    let lines = [l(10, 32, 64), l(4, 1, 16), l(8, 4, 2), l(2, 1000, 1)];
    let at_once =
        |streaming, isa| gather_block(&lines, 1, streaming, false, isa).map(|b| (b.copies_of, b.gather.copies()));
    assert_eq!(at_once(false, Isa::Avx512Vbmi), Some((Some(0), 2)));
    assert_eq!(at_once(true, Isa::Avx512Vbmi), Some((None, 1)));
    assert_eq!(at_once(false, Isa::Avx2), Some((None, 1)));
    let whole = [l(3, 2, 32), l(8, 40, 2), l(2, 1, 1)];
    assert_eq!(gather_block(&whole, 1, false, false, Isa::Avx512Vbmi).map(|b| b.copies_of), Some(Some(0)));
    assert_eq!(gather_block(&whole, 1, false, false, Isa::Avx2).map(|b| b.copies_of), Some(None));
}

#[test]
fn the_block_whose_loads_move_the_most_bytes_each_is_gathered() {
    // OpenVINO depth-to-space blocks first by 4 of float32 `[2, 1024, 2,
    // 4, 4]`: 256-byte blocks of 16 rows of 16 bytes (16 loads), or
    // 64-byte blocks of 4 rows, which the next 3 continue (along the loop
    // of 4 whose source stride is 16): 4 at once in 4 loads, rows of 64
    // bytes.
    let loops = [
        l(2, 131072, 131072),
        l(32, 64, 4096),
        l(4, 32768, 1024),
        l(4, 16, 256),
        l(4, 8192, 64),
        l(4, 4, 16),
        l(4, 2048, 4),
    ];
    let b = gather_block(&loops, 4, false, false, Isa::Avx512Vbmi).expect("a gather");
    let got = (b.k, b.gather.len(), b.copies_of, b.gather.copies(), b.gather.loads());
    assert_eq!(got, (5, 64, Some(3), 4, 4));
    // Streamed, no copies: the 64-byte blocks' loads move as many bytes
    // each as the 256-byte blocks', and of those alike the largest goes.
    let b = gather_block(&loops, 4, true, false, Isa::Avx512Vbmi).expect("a gather");
    assert_eq!((b.k, b.gather.len(), b.copies_of, b.gather.loads()), (4, 256, None, 16));
}
