//! The executor's windowed tiles: a transposing tile whose inner loop has
//! a window on the outer one's index (padding or crops at the ends of the
//! blocked axis), and the stage that pads a tile's source where its
//! positions run on: a tile, its padded columns alone, or a block of its
//! repetitions at a time.
//!
//! Layer: exec; imports kernels and plan, as the executor.

use arrayvec::ArrayVec;

use super::Exec;
use crate::engine::kernels::bytes::{copy_staged, Stage, STAGE};
use crate::engine::kernels::copy::odometer;
use crate::engine::kernels::cropped::cropped_rows;
use crate::engine::kernels::interleave_carried::{interleave_carried, Interleaved};
use crate::engine::kernels::lines::Writers;
use crate::engine::kernels::nest::{Loop, Rows, Window, MAX_LOOPS};
use crate::engine::kernels::tile::copy_tile;
use crate::engine::plan::padded::padded_block;
use crate::engine::plan::rules::crops_interleaved_rows;

impl Exec<'_> {
    /// The transposing tile of loops `x` (contiguous in the source) and
    /// `y` (contiguous in the destination), for each of `rows`, where `y`
    /// has the window `win` on `x`'s index (or a constant one): the units
    /// of `x`'s index `i` valid for `y`'s indices `win.range(i, ny)` alone.
    /// The tile kernel runs over the indices valid for all of the tile's
    /// rows, whichever covers more: the `x` indices whose every `y` is valid
    /// (interleaving: a crop at the ends of the rows), or the `y` indices
    /// valid for every `x` (deinterleaving: each block position padded at
    /// one end). The units outside it go one by one, padding filled. A
    /// padded tile whose source positions run on goes whole through
    /// [`padded_source_tile`](Self::padded_source_tile) instead, and
    /// interleaved rows cropped at their ends through `cropped_rows`:
    /// streamed, or short ones through the cache (the plan's
    /// `staged_crops`).
    ///
    /// # Safety
    /// As `level`, for a tile plan whose inner loop has a window.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn windowed_tile(
        &self,
        rows: Rows,
        x: &Loop,
        y: &Loop,
        win: Window,
        src: *const u8,
        dst: *mut u8,
        w: &mut Writers,
    ) {
        let p = self.plan;
        // The kernels below take a row's kept positions `q = x * ny + y`
        // as the window's range at outer index 0: only so for the tile of
        // interleaved rows cropped at their ends that the plan's
        // `crops_carried` and `crops_row_ends` take (`cropped_row`). A
        // real check, once a call: any other tile goes unit by unit below.
        if self.nt && !p.padded && crops_interleaved_rows(&p.loops, p.unit) {
            // A streaming windowed tile that is not padded crops the ends
            // of interleaved rows (the plan's `crops_carried` or
            // `crops_row_ends`): a row's position `q` is the window's
            // inner index at outer index 0.
            let (a, b) = win.range(0, x.count * y.count);
            let keep = (a * p.unit, b * p.unit);
            // One row follows nothing: its stride is the kept bytes, as the
            // plan's `crops_carried` takes it for a tile without a row loop.
            let inner = if rows.count <= 1 { Rows { ds: (keep.1 - keep.0) as isize, ..rows } } else { rows };
            let c = Interleaved { outer: Rows::ONE, inner, ss: y.ss, keep };
            // SAFETY: the kept bytes of the rows are their valid positions,
            // from `dst + keep.0` on (the window's shape, `crops_interleaved_rows`,
            // checked above); the kernel checks the rest.
            if unsafe { interleave_carried(p.isa, p.unit, y.count, c, x.count, src, dst.wrapping_add(keep.0), w) } {
                return;
            }
            // SAFETY: as above; `cropped_rows` checks the tile's shape
            // again, and fits its stage to the rows.
            return unsafe { cropped_rows(rows, x, y, win, src, dst, p.unit, p.isa, true, w) };
        }
        if p.staged_crops && crops_interleaved_rows(&p.loops, p.unit) {
            // Short interleaved rows cropped at their ends, through the
            // cache (`stages_cropped_rows`): built in a stage, their kept
            // bytes copied on.
            // SAFETY: the plan stages only tiles it crops and does not
            // fill (step 9 of `CopyPlan::canonicalise`), so every source
            // unit of a row exists; the window's shape checked above (as
            // for the streamed tile) makes its kept positions valid ones;
            // `cropped_rows` checks the tile's shape.
            return unsafe { cropped_rows(rows, x, y, win, src, dst, p.unit, p.isa, false, w) };
        }
        let (nx, ny, unit) = (x.count, y.count, p.unit);
        // A padded tile whose source positions run on (space-to-batch of an
        // innermost axis): staged, whole or in parts, its padding filled in
        // the stage.
        let runs_on = win.outer.is_some() && win.oc == 1 && win.ic == nx as i64 && y.ss == (nx * unit) as isize;
        // SAFETY: forwarded; `runs_on` is the shape `padded_source_tile` takes.
        if p.fill && runs_on && unsafe { self.padded_source_tile(rows, nx, ny, win, src, dst, x.ds, w) } {
            return;
        }
        let range = |i: usize| win.range(if win.outer.is_some() { i } else { 0 }, ny);
        // The window is linear in both indices, so each end of the ranges
        // moves one way with `x`: the `x` indices whose every `y` is valid
        // are an interval, found from its ends inward (the partial ones are
        // a block's worth at most), and the `y` indices valid for every `x`
        // are those valid for the first and the last.
        let full = |i: usize| range(i) == (0, ny);
        let x0 = (0..nx).find(|&i| full(i)).unwrap_or(nx);
        let x1 = if x0 == nx { nx } else { (x0..nx).rev().find(|&i| full(i)).map_or(nx, |i| i + 1) };
        let whole = (x0, x1);
        let ((a0, b0), (a1, b1)) = (range(0), range(nx - 1));
        let common = (a0.max(a1), b0.min(b1));
        let span = |r: (usize, usize)| r.1.saturating_sub(r.0);
        let (tx, ty) = if span(whole) * ny >= nx * span(common) { (whole, (0, ny)) } else { ((0, nx), common) };
        let tiled = span(tx) > 0 && span(ty) > 0;
        let u = unit as isize;
        // SAFETY: the tile's units are valid positions (each in its `x`'s
        // range); the rest is copied within each `x`'s range and filled
        // (forward: padding positions of the destination) outside it.
        unsafe {
            if tiled {
                let (src, dst) = (
                    src.wrapping_offset(tx.0 as isize * u + ty.0 as isize * y.ss),
                    dst.wrapping_offset(tx.0 as isize * x.ds + ty.0 as isize * u),
                );
                copy_tile(rows, span(tx), span(ty), src, y.ss, dst, x.ds, unit, self.mode(), w);
            }
            // The `x` indices with units outside the tile.
            let edges = if tiled && ty == (0, ny) { (0..tx.0).chain(tx.1..nx) } else { (0..nx).chain(nx..nx) };
            for r in 0..rows.count {
                let (src, dst) = rows.at(r, src, dst);
                for i in edges.clone() {
                    let (a, b) = range(i);
                    let (src, dst) = (src.wrapping_offset(i as isize * u), dst.wrapping_offset(i as isize * x.ds));
                    let inside = tiled && (tx.0..tx.1).contains(&i);
                    let rest = if inside { [(0, ty.0), (ty.1, ny)] } else { [(0, ny), (ny, ny)] };
                    for (ya, yb) in rest {
                        let (ca, cb) = (ya.max(a), yb.min(b));
                        if ca < cb {
                            let at = ca as isize;
                            self.units(
                                w,
                                cb - ca,
                                src.wrapping_offset(at * y.ss),
                                y.ss,
                                dst.wrapping_offset(at * u),
                                u,
                            );
                        }
                        if p.fill {
                            for (fa, fb) in [(ya, yb.min(a)), (ya.max(b), yb)] {
                                if fa < fb {
                                    self.fill_bytes(w, dst.wrapping_offset(fa as isize * u), (fb - fa) * unit);
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// The padded tile whose source positions run on: unit `(x, y)` at
    /// `src + q * unit` for its position `q = x + nx * y`, which the window
    /// keeps for `lo <= q < hi` (`oc == 1`, `ic == nx`: space-to-batch of a
    /// padded axis that is innermost in the source, each block offset `x`
    /// a stream). The tile is built from a stage that holds its positions
    /// in order, the valid ones copied in one run and the padding filled,
    /// and then runs whole: no unit goes alone. A tile of at most the
    /// short-run kernels' [`STAGE`] (8 KiB, in L1 with the tile it feeds)
    /// in tensors that fit the second-level cache (the plan's
    /// `padded_whole`: `plan::padded::stages_padded_tiles_whole`) is
    /// staged whole, as many repetitions at a time as the stage holds; a
    /// longer one, or one past that cache, runs its columns valid for
    /// every `x` straight from the source and stages the rest. `false`,
    /// having done nothing, if one column (`nx` units) outgrows the stage.
    ///
    /// Every padded windowed tile of the broad benchmark has this shape
    /// (the 80 of 1,920 workloads, seeds 26, 801 and 802). Measured
    /// against their edge units one by one, 3 runs alternating, ratio to
    /// memcpy: the 22 of seed 26 6.76 -> 4.28 (OpenVINO space-to-batch of
    /// uint8 by 8x10x12, 0.5 MiB, 55.8 -> 14.3; two slower, at most 2.66
    /// -> 2.96), the 58 of seeds 801 and 802 4.32 -> 3.18. On that earlier
    /// build, staging small tiles whole measured better over those tiles
    /// (4.60 against 4.72 with their middle straight and only their ends
    /// staged), longer ones worse. Measured again by size (at
    /// `stages_padded_tiles_whole`), whole staging paid only where the
    /// tensors fit the second-level cache.
    ///
    /// # Safety
    /// As `windowed_tile`, with `win.outer` the index of `x`, `win.oc ==
    /// 1`, `win.ic == nx` and a source step of `nx` units along `y`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn padded_source_tile(
        &self,
        rows: Rows,
        nx: usize,
        ny: usize,
        win: Window,
        src: *const u8,
        dst: *mut u8,
        dsx: isize,
        w: &mut Writers,
    ) -> bool {
        let unit = self.plan.unit;
        let col = nx * unit;
        if col == 0 || col > STAGE {
            return false;
        }
        // The positions `[lo, hi)` of `[0, nx * ny)` the window keeps: with
        // `oc == 1` and `ic == nx`, position `q` is unit `(q % nx, q / nx)`,
        // whose source is `src + q * unit` (the caller's shape).
        let n = (nx * ny) as i64;
        let (lo, hi) = (win.lo.clamp(0, n) as usize, win.hi.clamp(0, n) as usize);
        let hi = hi.max(lo);
        let (mode, ssy) = (self.mode(), col as isize);
        let mut stage = Stage::new();
        // Stages positions `[a, b)` of each of `k` repetitions from `src`,
        // `b - a` positions apart in the stage; the stage's padding is
        // filled only when `fill` (it stays from the last chunk otherwise).
        let stage_ptr = stage.ptr();
        let put = |k: usize, a: usize, b: usize, src: *const u8, fill: bool| {
            let (ka, kb) = (lo.clamp(a, b), hi.clamp(a, b));
            let len = (b - a) * unit;
            for r in 0..k {
                // SAFETY: `k * len <= STAGE` (the callers); positions
                // `[ka, kb)` are kept, so valid source units at `src + q *
                // unit` of repetition `r` (`rows.at`); a chunk with none
                // reads nothing (its `ka` may be no source position).
                unsafe {
                    let d = stage_ptr.add(r * len);
                    if fill {
                        self.fill.fill(d, (ka - a) * unit, false);
                        self.fill.fill(d.add((kb - a) * unit), (b - kb) * unit, false);
                    }
                    if kb > ka {
                        let s = rows.at(r, src, dst).0;
                        // `s` is position 0, which may be padding: its kept
                        // position `ka` is in the source.
                        let from = s.wrapping_add(ka * unit);
                        std::ptr::copy_nonoverlapping(from, d.add((ka - a) * unit), (kb - ka) * unit);
                    }
                }
            }
        };
        // SAFETY: every tile below reads the stage's `k` repetitions of
        // whole columns (each staged above) or source columns whose every
        // position is kept, and writes the caller's destination units of
        // those columns (`rows.at`, `dsx`, `y * unit`).
        unsafe {
            let tile = col * ny;
            let (c0, c1) = (win.range(0, ny).0, win.range(nx - 1, ny).1);
            // A tile the stage holds is staged whole where the tensors fit
            // the second-level cache (the plan's `padded_whole`), a longer
            // one, or one past that cache, in parts.
            let whole = tile <= STAGE && self.plan.padded_whole;
            let mut edges = [(0, ny), (ny, ny)];
            if !whole && c0 < c1 {
                let (s, d) = (src.wrapping_add(c0 * col), dst.wrapping_add(c0 * unit));
                copy_tile(rows, nx, c1 - c0, s, ssy, d, dsx, unit, mode, w);
                edges = [(0, c0), (c1, ny)];
            }
            for (ya, yb) in edges {
                let mut y0 = ya;
                while y0 < yb {
                    let c = (yb - y0).min(STAGE / col);
                    let (y1, bytes) = (y0 + c, c * col);
                    let most = STAGE / bytes;
                    let mut r0 = 0;
                    while r0 < rows.count {
                        let k = most.min(rows.count - r0);
                        let (s, d) = rows.at(r0, src, dst);
                        put(k, y0 * nx, y1 * nx, s, r0 == 0);
                        let staged = Rows { count: k, ss: bytes as isize, ds: rows.ds };
                        copy_tile(staged, nx, c, stage_ptr, ssy, d.wrapping_add(y0 * unit), dsx, unit, mode, w);
                        r0 += k;
                    }
                    y0 = y1;
                }
            }
        }
        true
    }

    /// Runs indices `[s, e)` of loop `j`, the first of the plan's padded
    /// block (`CopyPlan::padded_block`), and the loops inside it: the
    /// padded source rows of as many of those indices as the stage holds,
    /// each row the tile's `nx * ny` positions in order (the window's kept
    /// ones copied in one run, the rest filled; a row outside the windows
    /// of the loops between all filled), then the tile's kernel over the
    /// stage, its rows repeated `ny` units apart in the destination (which
    /// those loops continue). `idx` holds the indices of the loops outside
    /// `j`, which the windows inside the block depend on.
    ///
    /// # Safety
    /// As `indices`, for a plan with a padded block at loop `j`; `[s, e)`
    /// the indices of loop `j` its window keeps.
    //
    // Out of line: its stage (8 KiB) and loop lists would otherwise sit in
    // the frame of `Exec::indices`, which recurses through `Exec::level`
    // once a loop of the plan: 14 KiB a level rather than under 1 KiB
    // (x86_64 release build). OpenVINO space-to-batch of a rank-21 tensor
    // padded on 20 axes then overflowed a thread stack of 256 KiB (a C or
    // C++ host's threads take the C library's default, 128 KiB with
    // musl). `.ci/frames` checks the recursion's frames.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn padded_block(
        &self,
        j: usize,
        (s, e): (usize, usize),
        so: isize,
        dof: isize,
        idx: &[usize; MAX_LOOPS],
        w: &mut Writers,
    ) {
        let p = self.plan;
        let (n, unit) = (p.loops.len(), p.unit);
        // A real check, once a call, of what the stage and the tile take on
        // trust below: the tile's positions run on (each kept one a source
        // unit), the loops from `j` continue its destination rows, within
        // the stage, their windows on loops outside them (`idx`).
        assert_eq!(padded_block(&p.loops, unit), Some(j), "not a padded block from loop {j}");
        let (x, y) = (&p.loops[n - 2], &p.loops[n - 1]);
        let win = y.window.expect("a padded block's tile has a window");
        let (nx, ny) = (x.count, y.count);
        let (col, row) = (nx * unit, ny * unit);
        let tile = col * ny;
        // The block's kept rows as a loop nest over the source and the
        // stage: loop j (a chunk's indices, counted below), then each loop
        // between it and the tile cut to the range its window keeps (the
        // window's outer loop is outside the block: a fixed index), a row
        // `tile` bytes of the stage, in the destination's order.
        let inner = &p.loops[j + 1..n - 2];
        let mut rows_of: ArrayVec<Loop, MAX_LOOPS> = ArrayVec::new();
        let (mut src0, mut stage0, mut step) = (0isize, 0isize, tile as isize);
        let mut none_kept = false;
        for l in inner.iter().rev() {
            let (a, b) = l.window.map_or((0, l.count), |w| w.range(w.outer.map_or(0, |o| idx[o as usize]), l.count));
            none_kept |= a >= b;
            src0 = src0.wrapping_add((a as isize).wrapping_mul(l.ss));
            stage0 += a as isize * step;
            rows_of.push(Loop { count: b.saturating_sub(a), ss: l.ss, ds: step, window: None, is_outer: false });
            step *= l.count as isize;
        }
        let l = &p.loops[j];
        rows_of.push(Loop { count: 0, ss: l.ss, ds: step, window: None, is_outer: false });
        rows_of.reverse();
        let n_pos = (nx * ny) as i64;
        let (lo, hi) = (win.lo.clamp(0, n_pos) as usize, win.hi.clamp(0, n_pos) as usize);
        if hi <= lo || none_kept {
            // All padding: the block's destination filled, nothing staged.
            // SAFETY: the destination of loop j's indices `[s, e)`.
            return unsafe { self.fill_range(j, dof, s, e, w) };
        }
        // Within the stage (checked above): an index of loop j is `per` rows.
        let per = step as usize / tile;
        let chunk = STAGE / (per * tile);
        let mut stage = Stage::new();
        let stage_ptr = stage.ptr();
        let mode = self.mode();
        // The padding filled once: every chunk keeps the same rows' same
        // positions (the windows inside the block depend on loops outside
        // it), and overwrites only those.
        // SAFETY: `chunk * per * tile <= STAGE` bytes of the stage.
        unsafe { self.fill.fill(stage_ptr, chunk.min(e - s) * per * tile, false) };
        let mut i0 = s;
        while i0 < e {
            let i1 = e.min(i0 + chunk);
            let rows = (i1 - i0) * per;
            // SAFETY: `rows * tile <= STAGE` (`chunk`), filled above; each kept row's
            // positions `[lo, hi)` are source units (its loops' indices
            // inside their windows, the tile's window keeping them), read
            // from its position 0 (which may be padding) on; the tile then
            // reads the stage's rows and writes the destination units of
            // the block's indices `[i0, i1)`, which continue one another
            // `row` bytes apart (the plan's rule).
            unsafe {
                rows_of[0].count = i1 - i0;
                let (src, len) =
                    (so.wrapping_add((i0 as isize).wrapping_mul(l.ss)).wrapping_add(src0), (hi - lo) * unit);
                odometer(&rows_of, src, stage0, |row_src, row_stage| {
                    let from = self.buf.src.wrapping_offset(row_src).wrapping_add(lo * unit);
                    copy_staged(from, stage_ptr.offset(row_stage).add(lo * unit), len);
                });
                let dst = self.buf.dst.wrapping_offset(dof.wrapping_add((i0 as isize).wrapping_mul(l.ds)));
                let staged = Rows { count: rows, ss: tile as isize, ds: row as isize };
                copy_tile(staged, nx, ny, stage_ptr, col as isize, dst, x.ds, unit, mode, w);
            }
            i0 = i1;
        }
    }
}
