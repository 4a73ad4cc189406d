//! The executor's division of work among threads: the loops whose
//! positions are split ([`Exec::prefix`]), a range split among threads
//! ([`split`]) and each range run ([`Exec::flat_range`]).
//!
//! Layer: exec; imports kernels and arch, as the executor.

use super::Exec;
use crate::engine::arch::mem::{fence, LINE};
use crate::engine::kernels::bytes::copy_bytes;
use crate::engine::kernels::lines::Writers;
use crate::engine::kernels::nest::MAX_LOOPS;

impl Exec<'_> {
    /// The smallest prefix of the loops whose flattened positions number at
    /// least `want` (or as many as it may take: not past the level of a
    /// carried tile, whose regions must stay whole), and its
    /// number of positions.
    pub(super) fn prefix(&self, want: usize) -> (usize, usize) {
        let p = self.plan;
        let last = p.carry_level.unwrap_or(p.loops.len());
        let mut prefix = 0;
        let mut positions = 1usize;
        while prefix < last && positions < want {
            positions *= p.loops[prefix].count;
            prefix += 1;
        }
        if positions < want && self.splits_carried(last + 1) {
            // Too few positions outside the carry level (a tile carried
            // from the outermost loop ran on one thread): its rows are
            // split too, each range carried on its own (`flat_range`).
            positions *= p.loops[last].count;
            prefix = last + 1;
        }
        (prefix, positions)
    }

    /// Whether a prefix of `prefix` loops ends with the carry level, its
    /// rows split into ranges that the carried kernel runs each on its own
    /// (unpadded plans: a padded one's windows count its rows from the
    /// first).
    fn splits_carried(&self, prefix: usize) -> bool {
        let p = self.plan;
        self.nt && !p.padded && prefix > 0 && p.carry_level == Some(prefix - 1)
    }

    /// Rows of the carry level that a range of positions through it (see
    /// [`Exec::prefix`]) starts at a multiple of, from its start: the
    /// destination then starts on the same byte of a line as the whole
    /// loop's does.
    fn carried_align(&self, prefix: usize) -> usize {
        if !self.splits_carried(prefix) {
            return 1;
        }
        let ds = self.plan.loops[prefix - 1].ds.unsigned_abs();
        LINE >> ds.trailing_zeros().min(LINE.trailing_zeros())
    }

    /// Copies destination bytes `[a, b)` of a plan without loops (one
    /// contiguous copy), split over `threads`.
    pub(super) unsafe fn bytes_on(&self, a: usize, b: usize, threads: usize) {
        split(a, b, threads, self.plan.unit.max(1), |a, b| {
            // SAFETY: `[a, b)` is a sub-range of the destination.
            unsafe { self.span(a, b) };
            if self.nt {
                fence();
            }
        });
    }

    /// Destination bytes `[a, b)` of a plan without loops.
    ///
    /// # Safety
    /// `[a, b)` inside the destination; with no loops the plan is one
    /// contiguous copy of `dst_bytes` from `src_base` to `dst_base`.
    unsafe fn span(&self, a: usize, b: usize) {
        let p = self.plan;
        let dst = self.buf.dst.wrapping_offset(p.dst_base + a as isize);
        let src = self.buf.src.wrapping_offset(p.src_base + a as isize);
        // SAFETY: forwarded.
        unsafe { copy_bytes(src, dst, b - a, self.nt) };
    }

    /// Runs flat positions `[a, b)` of the first `prefix` loops, split over `threads`.
    pub(super) unsafe fn range_on(&self, prefix: usize, a: usize, b: usize, threads: usize) {
        split(a, b, threads, self.carried_align(prefix), |a, b| {
            // SAFETY: each flat position is a disjoint destination block.
            unsafe { self.flat_range(prefix, a, b) }
            if self.nt {
                fence();
            }
        });
    }

    /// Runs flat positions `[a, b)` of the first `prefix` loops, a run of
    /// consecutive indices of the prefix's last loop at a time: the loops
    /// inside it run each run whole, as [`Exec::level`] runs a loop (a tile's
    /// rows as its repetitions, a grid's rows as one grid), not one index
    /// at a time. A prefix through the carry level (see [`Exec::prefix`])
    /// runs each run as one carried call.
    pub(super) unsafe fn flat_range(&self, prefix: usize, a: usize, b: usize) {
        let p = self.plan;
        let mut idx = [0usize; MAX_LOOPS];
        let mut w = Writers::new();
        let Some(last) = prefix.checked_sub(1) else {
            // No loop split: the one position, whole.
            // SAFETY: the plan's base offsets, see `execute`.
            unsafe {
                self.level(0, p.src_base, p.dst_base, &mut idx, &mut w);
                w.finish();
            }
            return;
        };
        let carried = self.splits_carried(prefix);
        let mut flat = a;
        while flat < b {
            let mut rest = flat;
            for j in (0..prefix).rev() {
                idx[j] = rest % p.loops[j].count;
                rest /= p.loops[j].count;
            }
            // The position of the loops outside the last, and its offsets
            // at index 0 of the last.
            let mut so = p.src_base;
            let mut dof = p.dst_base;
            let mut valid = true;
            for j in 0..last {
                let l = &p.loops[j];
                if let Some(w) = l.window {
                    let outer = w.outer.map_or(0, |o| idx[o as usize]);
                    let (s, e) = w.range(outer, l.count);
                    valid &= (s..e).contains(&idx[j]);
                }
                so = so.wrapping_add((idx[j] as isize).wrapping_mul(l.ss));
                dof = dof.wrapping_add((idx[j] as isize).wrapping_mul(l.ds));
            }
            // The indices of the last loop from this one on, within the range.
            let from = idx[last];
            let to = from + (p.loops[last].count - from).min(b - flat);
            // SAFETY: offsets of a valid position of the outer loops and
            // indices `[from, to)` of the last (the carry level has no
            // window; another's `indices` keeps to it), or whole padding
            // blocks of the destination.
            unsafe {
                if !valid {
                    if p.fill {
                        self.fill_range(last, dof, from, to, &mut w);
                    }
                } else if carried {
                    let l = &p.loops[last];
                    let so = so.wrapping_add((from as isize).wrapping_mul(l.ss));
                    let dof = dof.wrapping_add((from as isize).wrapping_mul(l.ds));
                    self.carried(last, to - from, so, dof, &mut w);
                } else if !self.flat(last, from..to, so, dof, &mut w) {
                    self.indices(last, from..to, so, dof, &mut idx, &mut w);
                }
            }
            flat += to - from;
        }
        // SAFETY: the writers hold only runs of this range's positions.
        unsafe { w.finish() };
    }
}

/// Runs `work` over `[a, b)`: split into `threads` ranges (multiples of
/// `align` from `a`) on the rayon pool, or at once on this thread.
fn split(a: usize, b: usize, threads: usize, align: usize, work: impl Fn(usize, usize) + Sync) {
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
