//! [`Grid::copy`] through the cache over loops around it, and with a
//! window that is the same for every row (`oc == 0`), against every unit
//! copied from its indices: the kernel walks those rows by their strides
//! alone (`Grid::units`), and the rows whose bounds move by computing
//! each row's.

use super::copy::Mode;
use super::grid::Grid;
use super::nest::{Bounds, Loop};
use crate::engine::arch::Isa;

/// The units of `g` at every position of `outer` (offsets from the
/// buffers' starts), copied one by one from their indices.
fn expected(g: &Grid, outer: &[Loop], unit: usize, src: &[u8], len: usize) -> Vec<u8> {
    let mut out = vec![0xA5u8; len];
    let positions: usize = outer.iter().map(|l| l.count).product();
    for p in 0..positions {
        let (mut so, mut dof, mut rest) = (0isize, 0isize, p);
        for l in outer.iter().rev() {
            let i = (rest % l.count) as isize;
            rest /= l.count;
            so += i * l.ss;
            dof += i * l.ds;
        }
        let mut bounds = g.bounds;
        for i in 0..g.n1 {
            let (a, b) = bounds.range(g.n0);
            for k in a..b {
                let s = (so + i as isize * g.ss1 + k as isize * g.ss0) as usize;
                let d = (dof + i as isize * g.ds1 + k as isize * g.ds0) as usize;
                out[d..d + unit].copy_from_slice(&src[s..s + unit]);
            }
            bounds = bounds.step(g.oc);
        }
    }
    out
}

/// `g` copied at every position of both of `outer`, of its last and of
/// none, on every kernel set, against [`expected`] (`src`'s length is
/// the destination's).
fn check(g: &Grid, outer: &[Loop; 2], unit: usize, src: &[u8], what: &str) {
    let len = src.len();
    for loops in [&outer[..], &outer[1..], &[]] {
        let want = expected(g, loops, unit, src, len);
        for isa in [Isa::Portable, Isa::detect()] {
            let mut dst = vec![0xA5u8; len];
            // SAFETY: every unit of the grid at every position of the
            // loops is inside both buffers (`expected` indexes the same
            // ones).
            unsafe { g.copy(loops, src.as_ptr(), dst.as_mut_ptr(), unit, Mode { nt: false, isa, fetch: false }) };
            assert_eq!(dst, want, "{what}, {} loops, {isa:?}", loops.len());
        }
    }
}

/// Grids of `n1 x n0` units gathered `n1` apart from the source, rows
/// contiguous in the destination (the widened moves of packed units) or
/// transposed (each unit its own move), repeated over two outer loops,
/// with no window, a constant one and one that moves with the row,
/// through the cache on every kernel set.
#[test]
fn grids_repeat_over_outer_loops_with_constant_windows() {
    let (n1, n0) = (3usize, 7usize);
    // Every row keeps units 2..6; rows keep 1 + i.. (moving); all.
    let windows = [(Bounds { ic: 1, lo: 2, hi: 6 }, 0), (Bounds { ic: 1, lo: -1, hi: 6 }, -1), (Bounds::ALL, 0)];
    for unit in [1, 2, 3, 4, 6, 8, 12, 16, 24, 30, 48, 65] {
        let plane = n1 * n0 * unit;
        for contiguous in [true, false] {
            let (ds1, ds0) =
                if contiguous { ((n0 * unit) as isize, unit as isize) } else { (unit as isize, (n1 * unit) as isize) };
            let outer = [
                Loop { count: 2, ss: (3 * plane) as isize, ds: plane as isize, window: None, is_outer: false },
                Loop { count: 3, ss: plane as isize, ds: (2 * plane) as isize, window: None, is_outer: false },
            ];
            let len = 6 * plane;
            let src: Vec<u8> = (0..len).map(|i| (i * 7 + i / 253 + 1) as u8).collect();
            for (bounds, oc) in windows {
                let g = Grid { n1, ss1: unit as isize, ds1, n0, ss0: (n1 * unit) as isize, ds0, bounds, oc };
                check(&g, &outer, unit, &src, &format!("unit {unit}, contiguous {contiguous}, {bounds:?} oc {oc}"));
            }
        }
    }
}

/// Grids of 3- and 6-byte units gathered into contiguous rows, around
/// where `Grid::packed` takes them: rows continued by the next (a table
/// of 6-byte units in rows of up to 48 bytes, run four times or more),
/// and rows of 96 bytes or more each by itself, with a window the same
/// for every row; the rows between a unit at a time.
#[test]
fn packed_grids_copy_each_row_or_the_whole_grid() {
    for unit in [3usize, 6] {
        for n0 in [1, 2, 7, 8, 9, 16, 17, 31, 32, 33, 40] {
            let n1 = 5;
            let ss0 = (unit + 2).next_power_of_two() as isize;
            for ss1 in [2, 7, n0 as isize * ss0 + 3] {
                let plane = (n1 as isize * ss1.max(0) + n0 as isize * ss0) as usize + 8;
                let out = n1 * n0 * unit;
                let outer = [
                    Loop { count: 2, ss: (3 * plane) as isize, ds: (3 * out) as isize, window: None, is_outer: false },
                    Loop { count: 3, ss: plane as isize, ds: out as isize, window: None, is_outer: false },
                ];
                let len = 6 * plane.max(out);
                let src: Vec<u8> = (0..len).map(|i| (i * 7 + i / 253 + 1) as u8).collect();
                for bounds in [Bounds::ALL, Bounds { ic: 1, lo: 1, hi: n0 as i64 - 1 }] {
                    let (ds1, ds0) = ((n0 * unit) as isize, unit as isize);
                    let g = Grid { n1, ss1, ds1, n0, ss0, ds0, bounds, oc: 0 };
                    check(&g, &outer, unit, &src, &format!("unit {unit}, {n1}x{n0}, ss1 {ss1}, {bounds:?}"));
                }
            }
        }
    }
}
