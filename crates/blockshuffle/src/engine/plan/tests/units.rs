//! Long units that no other streaming path takes stream one at a time
//! (`rules::streams_units`).

use super::super::compile::{CopyPlan, Direction};
use super::super::rules::streams_units;
use super::compile_c;
use crate::engine::geometry::{o, Geometry, SpaceAxis};

/// A numpy transpose `1,0,2` of `[a, b, c]` `elem`-byte elements: `c`
/// keeps its place, so a unit is a row of it.
fn swap_outer(a: usize, b: usize, c: usize, elem: usize, streaming: bool) -> CopyPlan {
    let op = "t";
    let space = [a, b, c].map(|n| SpaceAxis::plain(n as u64));
    let g = Geometry::new(op, &space, &[&[o(1)], &[o(0)], &[o(2)]]).unwrap();
    compile_c(&g, Direction::Forward, elem, &[a, b, c], &[b, a, c], streaming)
}

/// HPTT's T05 in uint8 (64 destination streams, more than the line
/// writers hold): units of whole 16-byte vectors from 4 KiB stream, in
/// the source's order, as does any of them not streaming. Shorter ones,
/// from 512 bytes, which the source's order writes each apart, and ones
/// that are not whole vectors, which would go through the cache so, read
/// apart instead (`rules::reads_units_apart`): through the line writers,
/// the other loop the sweep, the destination in order. (A unit of 496
/// bytes makes no such plan: its runs of 128 units are gathered rows,
/// which stream.)
#[test]
fn long_units_of_whole_vectors_stream_one_at_a_time() {
    assert!(!streams_units(496) && streams_units(512) && !streams_units(520));
    for (unit, streams) in [(512, false), (520, false), (528, false), (1000, false), (4096, true), (17152, true)] {
        let p = swap_outer(384, 64, unit, 1, true);
        assert_eq!(p.unit, unit);
        assert!(!p.tile && !p.gathered, "{unit}");
        let loops: Vec<_> = p.loops.iter().map(|l| (l.count, l.ss, l.ds)).collect();
        let u = unit as isize;
        if streams {
            assert!(p.nt && !p.lines, "{unit} {p:?}");
            assert_eq!(loops, vec![(384, 64 * u, u), (64, u, 384 * u)], "{unit}");
        } else {
            assert!(p.nt && p.lines, "{unit} {p:?}");
            assert_eq!(loops, vec![(64, u, 384 * u), (384, 64 * u, u)], "{unit}");
        }
        assert!(!swap_outer(384, 64, unit, 1, false).nt, "{unit}");
    }
    // The same bytes as eight-byte elements; 20 streams (the integration
    // test's shape).
    assert!(swap_outer(384, 64, 64, 8, true).nt);
    let p = swap_outer(24, 20, 4096, 1, true);
    assert!(p.nt && !p.lines && !p.gathered);
}
