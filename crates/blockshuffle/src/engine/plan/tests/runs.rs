//! Where the destination runs of long units stop growing
//! ([`source_order_outside_run`]): at a page, or short of it where a run
//! reads one compact source block and the loops outside continue it in a
//! few hundred streams at most.

use arrayvec::ArrayVec;

use super::super::compile::Direction;
use super::super::order::source_order_outside_run;
use super::{compile_c, counts_and_strides, k, l, o, Factor, Geometry, SpaceAxis};
use crate::engine::kernels::nest::{Loop, MAX_LOOPS};

/// [`source_order_outside_run`] of `loops` with `unit`-byte units: the
/// loops after.
fn ordered(loops: &[Loop], unit: usize) -> Vec<(usize, isize, isize)> {
    let mut loops: ArrayVec<Loop, MAX_LOOPS> = loops.iter().copied().collect();
    source_order_outside_run(&mut loops, unit);
    counts_and_strides(&loops)
}

/// The transpose `2, 1, 0` of `[8, b, c]` units of `u` bytes, in the
/// destination's order: each unit is a run of its own (one compact source
/// block), which the loop over the first axis continues, in `b * c`
/// streams (the positions of the loops inside it in the source's order).
/// Stopped there, the loops go in the source's order; grown, the run is
/// the 8 units of the first axis (4 KiB from 512-byte units on), the
/// other two outside it in the source's order.
#[test]
fn compact_runs_stop_short_in_a_few_hundred_streams_or_from_half_a_page() {
    let case = |b: usize, c: usize, u: usize| {
        let (bu, cu, uu) = (b as isize, c as isize, u as isize);
        let loops = [l(c, uu, bu * 8 * uu), l(b, cu * uu, 8 * uu), l(8, bu * cu * uu, uu)];
        let stopped = vec![(8, bu * cu * uu, uu), (b, cu * uu, 8 * uu), (c, uu, bu * 8 * uu)];
        let grown = vec![(b, cu * uu, 8 * uu), (c, uu, bu * 8 * uu), (8, bu * cu * uu, uu)];
        (ordered(&loops, u), stopped, grown)
    };
    // 256 streams stop it; 272 do not, below half a page.
    for u in [512, 1024, 2047] {
        let (after, stopped, _) = case(16, 16, u);
        assert_eq!(after, stopped, "{u}");
        let (after, _, grown) = case(16, 17, u);
        assert_eq!(after, grown, "{u}");
    }
    // From half a page, however many streams.
    for (b, c) in [(16, 17), (75, 96)] {
        let (after, stopped, _) = case(b, c, 2048);
        assert_eq!(after, stopped, "{b} {c}");
    }
    // Below 512 bytes no run is compact, in 256 streams too: it grows,
    // through the loop over the second axis as well (to 64 KiB less 128
    // bytes), which reads 8 units far apart: the destination's order.
    let (after, _, _) = case(16, 16, 511);
    let (c, u) = (16 * 511, 511);
    assert_eq!(after, vec![(16, u, 16 * 8 * u), (16, c, 8 * u), (8, 16 * c, u)]);
}

/// HPTT's float64 `[96, 75, 96, 80]` by axes `2, 1, 0, 3` (T13), streamed:
/// 640-byte units, each a compact run, continued by the loop over the first
/// axis in 7,200 streams. The run grows to the first axis's 96 units (60
/// KiB), read 4.6 MB apart; the other two loops go outside it in the
/// source's order.
#[test]
fn short_runs_in_thousands_of_streams_grow() {
    let op = "t";
    let shape = [96, 75, 96, 80];
    let space = shape.map(|n| SpaceAxis::plain(n as u64));
    let groups: [&[Factor]; 4] = [&[o(2)], &[o(1)], &[o(0)], &[o(3)]];
    let g = Geometry::new(op, &space, &groups).unwrap();
    let p = compile_c(&g, Direction::Forward, 8, &shape, &[96, 75, 96, 80], true);
    assert!(p.nt && !p.lines && !p.tile && !p.gathered);
    assert_eq!(p.unit, 640);
    let (unit, row) = (640, 96 * 640);
    let axis = 75 * row;
    assert_eq!(counts_and_strides(&p.loops), vec![(75, row, row), (96, unit, axis), (96, axis, unit)]);
}

/// Streaming 5-D space-to-batch of float16 by (2, 4, 3) over 32
/// channels, padded on the middle axis (W11's shape): each 512-byte
/// destination run gathers 8 units of one compact source block (every
/// third 64-byte unit of 1.5 KiB), so it stays the innermost run, and the
/// loops outside it walk the source rows in order: the padded axis's
/// outer loop (its rows 6 KiB apart) before the block positions inside a
/// row. Without the stop, runs of 20 rows (10 KiB) read slices of rows
/// 6 KiB apart.
#[test]
fn compact_source_blocks_keep_short_runs_innermost() {
    let op = "t";
    let space = [
        SpaceAxis::plain(2),
        SpaceAxis::new(op, 4, 0, 0, 2).unwrap(),
        SpaceAxis::new(op, 78, 1, 1, 4).unwrap(),
        SpaceAxis::new(op, 24, 0, 0, 3).unwrap(),
        SpaceAxis::plain(32),
    ];
    let groups: [&[Factor]; 5] = [&[k(1), k(2), k(3), o(0)], &[o(1)], &[o(2)], &[o(3)], &[o(4)]];
    let g = Geometry::new(op, &space, &groups).unwrap();
    let p = compile_c(&g, Direction::Forward, 2, &[2, 4, 78, 24, 32], &[48, 2, 20, 8, 32], true);
    assert!(!p.tile && !p.lines);
    assert_eq!(p.unit, 64);
    let inner: Vec<_> = p.loops[p.loops.len() - 4..].iter().map(|l| (l.count, l.ss, l.ds)).collect();
    let (row, batch) = (24 * 64, 2 * 20 * 8 * 64);
    // Batch `((b1 * 4 + b2) * 3 + b3) * 2 + n`.
    assert_eq!(inner, vec![(20, 4 * row, 512), (4, row, 3 * 2 * batch), (3, 64, 2 * batch), (8, 192, 64)]);
}
