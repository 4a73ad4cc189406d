//! Tiny plans: at most [`TINY_UNITS`] units, listed when compiled and
//! copied one at a time.

use super::super::rules::*;
use super::*;
use crate::engine::kernels::nest::Loop;

/// Plans of at most [`TINY_UNITS`] units copy them one at a time
/// (`units`), in the destination's order, and nothing else: no tile, no
/// streaming. One unit more, a window (padding), or a streamed
/// destination, and the other rules plan them.
#[test]
fn tiny_plans_copy_unit_by_unit() {
    // NHWC space-to-batch 2x2 of one float32 channel: 4x4 is S1 (16 units),
    // 8x8 has exactly 64 units, 2x34 has 68 and 16x16 256.
    for (h, w, tiny) in [(4, 4, true), (8, 8, true), (2, 34, false), (16, 16, false)] {
        let g = nhwc([1, h, w, 1], 2, true);
        let block = [4, h / 2, w / 2, 1];
        let p = compile_f32(&g, Direction::Forward, &[1, h, w, 1], &block, false);
        assert_eq!(p.unit, 4);
        assert_eq!(p.units, tiny, "{h}x{w}");
        if tiny {
            assert!(!p.tile && !p.nt && !p.lines && !p.gathered && p.carry_level.is_none());
            // The destination's order: its strides fall from loop to loop.
            assert!(p.loops.windows(2).all(|l| l[0].ds > l[1].ds), "{:?}", p.loops);
            let units: usize = p.loops.iter().map(|l| l.count).product();
            assert_eq!(units, h * w);
            assert_eq!(p.offsets.as_slice(), listed_naively(&p.loops, p.src_base, p.dst_base), "{h}x{w}");
        } else {
            assert!(p.offsets.is_empty());
            assert!(p.tile || h != 16, "{h}x{w}");
        }
        // Streamed (as a large destination would be): never tiny.
        let p = compile_f32(&g, Direction::Forward, &[1, h, w, 1], &block, true);
        assert!(!p.units);
    }
    // The smallest padded space-to-batch: its window keeps the other rules.
    let g = nhwc_padded([1, 2, 2, 1], 2, [1, 1], true);
    let p = compile_f32(&g, Direction::Forward, &[1, 2, 2, 1], &[4, 2, 2, 1], false);
    assert!(!p.units && p.loops.iter().any(|l| l.window.is_some()));
    // Units of many bytes count as units: 64 rows of 1 KiB are tiny.
    let g = nhwc([1, 16, 8, 512], 2, false);
    let p = compile_c(&g, Direction::Backward, 1, &[1, 16, 8, 512], &[1, 8, 4, 2048], false);
    assert_eq!((p.unit, p.units), (1024, true));
}

/// Each unit's offsets, from its indices (the last loop fastest).
fn listed_naively(loops: &[Loop], src_base: isize, dst_base: isize) -> Vec<[isize; 2]> {
    let n: usize = loops.iter().map(|l| l.count).product();
    (0..n)
        .map(|flat| {
            let (mut rest, mut at) = (flat, [src_base, dst_base]);
            for l in loops.iter().rev() {
                let i = (rest % l.count) as isize;
                rest /= l.count;
                at = [at[0] + i * l.ss, at[1] + i * l.ds];
            }
            at
        })
        .collect()
}

/// `list_units` lists every unit of up to [`TINY_UNITS`], in the
/// destination's order, against each unit's offsets from its indices:
/// nests of 0 to 5 loops (counts of 1 included, strides negative and
/// zero), exactly 64 units; and lists nothing for 65 units, for counts
/// whose product overflows, and for a count of zero.
#[test]
fn list_units_lists_every_unit_in_order() {
    let mut list = arrayvec::ArrayVec::new();
    let nests: [&[Loop]; 7] = [
        &[],
        &[l(5, 4, 4)],
        &[l(2, 16, 32), l(2, 4, 16), l(2, 32, 8), l(2, 8, 4)],
        &[l(3, -12, 4), l(1, 99, 99), l(4, 3, 12)],
        &[l(2, 0, 24), l(3, 8, 8), l(2, 100, -48)],
        &[l(4, 1, 16), l(4, 16, 1), l(4, 64, 64)],
        &[l(2, 7, 1), l(2, 5, 2), l(2, 3, 4), l(2, 2, 8), l(4, 1, 16)],
    ];
    for (i, loops) in nests.into_iter().enumerate() {
        assert!(list_units(loops, 1000, 7, &mut list), "nest {i}");
        assert_eq!(list.as_slice(), listed_naively(loops, 1000, 7), "nest {i}");
    }
    // (The list holds the last nest's 64 units: a refusal clears it.)
    assert!(!list_units(&[l(5, 1, 13), l(13, 5, 1)], 0, 0, &mut list));
    assert!(list.is_empty());
    assert!(!list_units(&[l(usize::MAX, 1, 1), l(2, 1, 1), l(0, 1, 1)], 0, 0, &mut list));
    assert!(list_units(&[l(3, 1, 1), l(0, 1, 1)], 0, 0, &mut list));
    assert!(list.is_empty());
}
