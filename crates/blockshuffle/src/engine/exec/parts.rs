//! The executor's division of work: a range split among threads
//! ([`split`]) and a tile's rows as a kernel's grid ([`grid`]).
//!
//! Layer: exec; imports kernels only.

use crate::engine::kernels::grid::Grid;
use crate::engine::kernels::nest::{Bounds, Loop};

/// Runs `work` over `[a, b)`: split into `threads` ranges (multiples of
/// `align` from `a`) on the rayon pool, or at once on this thread.
pub(super) fn split(a: usize, b: usize, threads: usize, align: usize, work: impl Fn(usize, usize) + Sync) {
    #[cfg(feature = "rayon")]
    if threads > 1 {
        use rayon::prelude::*;
        // No more parts than there are aligned pieces to hand out.
        let threads = threads.min((b - a).div_ceil(align.max(1))).max(1);
        let step = (b - a).div_ceil(threads).div_ceil(align) * align;
        (0..threads).into_par_iter().for_each(|t| {
            let (x, y) = ((a + t * step).min(b), (a + (t + 1) * step).min(b));
            if x < y {
                work(x, y);
            }
        });
        return;
    }
    let _ = (threads, align);
    if a < b {
        work(a, b);
    }
}

/// The grid of indices `[s, e)` of loop `l` over the last loop `y` (see
/// `Exec::grid_rows`), from the position of index `s`.
pub(super) fn grid(l: &Loop, y: &Loop, s: usize, e: usize) -> Grid {
    Grid {
        n1: e - s,
        ss1: l.ss,
        ds1: l.ds,
        n0: y.count,
        ss0: y.ss,
        ds0: y.ds,
        bounds: y.window.map_or(Bounds::ALL, |win| win.bounds(s)),
        oc: y.window.map_or(0, |win| win.oc),
    }
}
