//! The executor's destination stage: a plan through the cache over a
//! destination past the caches runs a chunk of its destination blocks at
//! a time into a buffer that stays in the cache, by its own kernels, and
//! streams each chunk out whole (see [`DestinationStage`]).
//!
//! Layer: exec; imports kernels, plan and arch, as the executor.

use super::{Buffers, Exec};
use crate::engine::arch::mem::fence;
use crate::engine::kernels::bytes::{copy_bytes, Staging, DESTINATION_STAGE_BYTES};
use crate::engine::plan::staging::{destination_stage, DestinationStage};

impl Exec<'_> {
    /// Runs blocks `[a, b)` of the plan's destination stage `s` (flat
    /// positions of its prefix loops), `s.chunk` of them at a time: into
    /// the stage, through the cache, as [`Exec::flat_range`] runs them
    /// into the destination, and then from the stage to their bytes of the
    /// destination by streaming stores, fenced at the end.
    ///
    /// # Safety
    /// As [`Exec::level`], for a plan with this destination stage; `[a, b)`
    /// within its blocks.
    pub(super) unsafe fn staged_range(&self, s: DestinationStage, a: usize, b: usize) {
        let p = self.plan;
        // A real check, once a call, of what the writes into the stage rely
        // on: the plan's stage is the one its loops have (block `i` is the
        // destination bytes `[i * block, (i + 1) * block)` from the base,
        // every one of them written), `chunk` blocks fit the stage, and the
        // blocks are the plan's. Else the kernels would write past the
        // stage.
        let fits = s.chunk.checked_mul(s.block).is_some_and(|n| n > 0 && n <= DESTINATION_STAGE_BYTES);
        assert!(
            !self.nt
                && !p.units
                && !p.all_padding
                && fits
                && destination_stage(&p.loops, p.unit, p.fill) == Some(s)
                && b <= s.blocks(&p.loops),
            "a destination stage that is not the plan's: {s:?} of blocks {a}..{b}"
        );
        let mut stage = Staging::<DESTINATION_STAGE_BYTES>::new();
        let mut i = a;
        while i < b {
            let e = b.min(i + s.chunk);
            // Blocks `[i, e)` are the destination's bytes from `start`
            // (offsets from the destination pointer, as the plan's).
            let start = p.dst_base.wrapping_add((i * s.block) as isize);
            let len = (e - i) * s.block;
            // The plan's offsets of these blocks, from a destination
            // pointer `start` bytes before the stage, land in the stage.
            let dst = stage.ptr().wrapping_offset(start.wrapping_neg());
            let into = Exec { plan: p, buf: Buffers { src: self.buf.src, dst }, fill: self.fill, nt: false };
            // SAFETY: blocks `[i, e)` write only their `len <= chunk *
            // block <= DESTINATION_STAGE_BYTES` bytes from `start` (the
            // stage's shape, checked above), which are the stage's, and
            // every one of them (each block dense, and every position
            // copied or filled): the stage is then those destination bytes,
            // which the caller's destination holds.
            unsafe {
                into.flat_range(s.prefix, i, e);
                copy_bytes(stage.ptr(), self.buf.dst.wrapping_offset(start), len, true);
            }
            i = e;
        }
        fence();
    }
}
