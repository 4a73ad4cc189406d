//! Canonicalisation's first steps, on raw loop nests.

use super::super::compile::CopyPlan;

/// Every position `(source offset, destination offset)` of a loop nest,
/// the last loop fastest.
fn positions(loops: &[(usize, isize, isize)]) -> Vec<(isize, isize)> {
    let mut out = vec![(0, 0)];
    for &(count, ss, ds) in loops {
        out = out.iter().flat_map(|&(s, d)| (0..count as isize).map(move |i| (s + i * ss, d + i * ds))).collect();
    }
    out
}

/// Canonicalisation's first steps (dropping loops of count 1, merging
/// loops contiguous on both sides) have a path for geometries without
/// windows and one for those with them: on raw nests of every kind
/// (counts of 1, loops that merge on one side, both or neither), both make
/// the same loops, and those walk the raw nest's positions in its order.
#[test]
fn the_windowless_nest_is_the_windowed_one_without_windows() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let mut merged = 0;
    for case in 0..3000 {
        // The element loop, then loops outward: each one contiguous with
        // the one inside it on both sides, on one, or on neither.
        let elem = [1, 2, 4, 3][case % 4];
        let mut raw = vec![(elem, 1isize, 1isize)];
        for _ in 0..next(7) {
            let (count, ss, ds) = raw[0];
            let (cs, cd) = (ss * count as isize, ds * count as isize);
            let (ss, ds) = match next(4) {
                0 => (cs, cd),
                1 => (cs, cd * (1 + next(3) as isize)),
                2 => (cs * 2, cd),
                _ => (1 + next(50) as isize, 1 + next(50) as isize),
            };
            raw.insert(0, (1 + next(3) as usize, ss, ds));
        }
        let plain = CopyPlan::nested(&raw, false);
        assert_eq!(plain, CopyPlan::nested(&raw, true), "{raw:?}");
        let got: Vec<_> = plain.iter().map(|l| (l.count, l.ss, l.ds)).collect();
        assert_eq!(positions(&got), positions(&raw), "{raw:?} -> {got:?}");
        assert!(got[..got.len() - 1].iter().all(|l| l.0 != 1), "{raw:?} -> {got:?}");
        merged += usize::from(got.len() < raw.iter().filter(|l| l.0 != 1).count());
    }
    assert!(merged > 300, "the nests merged loops {merged} times");
}
