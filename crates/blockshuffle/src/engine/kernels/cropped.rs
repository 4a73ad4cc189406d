//! Cropped interleaved rows: the windowed tile of rows interleaved from a
//! few streams and cropped at their ends (batch-to-space cropped on its
//! innermost blocked axis), built in a stage whole rows at a time, each
//! row's kept bytes then stored through the line writers (streaming) or
//! the cache.
//!
//! Layer: kernels; imports [`tile`](super::tile), [`copy`](super::copy),
//! [`bytes`](super::bytes), [`lines`](super::lines), [`nest`](super::nest)
//! and arch.

use super::bytes::{copy_staged, Staging};
use super::copy::Mode;
use super::lines::Writers;
use super::nest::{Loop, Rows, Window};
use super::tile::copy_tile;
use crate::engine::arch::Isa;

/// The windowed tile of interleaved rows cropped at their ends: rows are
/// interleaved into a stage, as many whole rows at a time as it holds (or
/// a row in pieces of whole columns, where one row is longer than the
/// stage), and each row's kept bytes (the window's positions `[lo, hi)`)
/// go out through the line writers when `nt`, which store whole lines
/// whatever the rows' lengths (one row continues the last in the
/// destination; see `plan::rules::crops_row_ends`), or through the cache
/// (short rows, whose edges would otherwise go unit by unit; see
/// `plan::rules::stages_cropped_rows`).
///
/// # Safety
/// As [`copy_tile`] for the tile of `x` and `y` at each of `rows`: every
/// source unit of the tile exists, each destination position `q` in `[lo,
/// hi)` of a row is valid; `isa` one this CPU runs; when `nt`, the writers
/// finished before the destination is read. The tile's shape (each
/// row one contiguous run of `x.count * y.count` units, the window's `q`
/// its row position) is checked here.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn cropped_rows(
    rows: Rows,
    x: &Loop,
    y: &Loop,
    win: Window,
    src: *const u8,
    dst: *mut u8,
    unit: usize,
    isa: Isa,
    nt: bool,
    w: &mut Writers,
) {
    // The stage holds whole columns of `y.count` units: a row (the `x`
    // columns) interleaves contiguously only where `x.ds` is one column.
    // A real check, once a call: each row's units are contiguous along
    // `x` in the source and along `y` in the destination, and the window
    // keeps the row positions `q = x * ny + y` (`oc == ny`, `ic == 1`).
    let shape = x.ss == unit as isize && y.ds == unit as isize && win.ic == 1 && win.oc == y.count as i64;
    let column = y.count.checked_mul(unit).filter(|&c| c > 0 && x.ds == c as isize && shape);
    let (Some(column), Some(units)) = (column, x.count.checked_mul(y.count)) else {
        panic!("cropped_rows: a tile whose rows are not contiguous ({x:?}, {y:?}, {win:?}, unit {unit})");
    };
    let row = units * unit;
    // A row's position `q` is the window's inner index at outer index 0.
    let (a, b) = win.range(0, units);
    let (lo, hi) = (a * unit, b * unit);
    if lo >= hi {
        return;
    }
    if column > CROPPED_ROWS_BYTES {
        // Not one column fits the stage: each kept unit is stored straight
        // from the source.
        for r in 0..rows.count {
            let (src, dst) = rows.at(r, src, dst);
            for q in a..b {
                let (i, j) = (q / y.count, q % y.count);
                // SAFETY: unit `(i, j)` of the tile exists in the source;
                // its position `q` is kept, valid in the destination.
                unsafe {
                    let from = src.wrapping_add(i * unit).wrapping_offset(j as isize * y.ss);
                    put(w, nt, from, dst.wrapping_add(q * unit), unit);
                }
            }
        }
        return;
    }
    // Whole rows a chunk, or (rows longer than the stage) columns a piece.
    let (per_chunk, per_piece) =
        if row <= CROPPED_ROWS_BYTES { (CROPPED_ROWS_BYTES / row, x.count) } else { (1, CROPPED_ROWS_BYTES / column) };
    let mut stage = Staging::<CROPPED_ROWS_BYTES>::new();
    // Each chunk's tile goes into the stage, at most 16 KiB of it: a
    // block or two of the transposes' squares, whose fetch ahead was
    // measured on larger matrices only.
    let mode = Mode { nt: false, isa, fetch: false };
    let mut r0 = 0;
    while r0 < rows.count {
        let k = per_chunk.min(rows.count - r0);
        let (src, dst) = rows.at(r0, src, dst);
        let mut c0 = 0;
        while c0 < x.count {
            let cols = per_piece.min(x.count - c0);
            // The piece's bytes of each row, and what of them is kept.
            let (p0, p1) = (c0 * column, (c0 + cols) * column);
            let (k0, k1) = (lo.max(p0), hi.min(p1));
            if k0 < k1 {
                // SAFETY: the stage holds `k` pieces of `p1 - p0 <=
                // CROPPED_ROWS_BYTES` bytes (`per_chunk`, `per_piece`);
                // the tile reads the source units of columns `c0..c0 +
                // cols` of `k` rows (all exist) and writes the stage's;
                // each row's positions `[k0, k1)` are stored, inside `[lo,
                // hi)`, valid in the destination.
                unsafe {
                    let piece = (p1 - p0) as isize;
                    let staged = Rows { count: k, ss: rows.ss, ds: piece };
                    let from = src.wrapping_add(c0 * unit);
                    copy_tile(staged, cols, y.count, from, y.ss, stage.ptr(), x.ds, unit, mode, w);
                    for r in 0..k {
                        let staged_row = stage.ptr().add(r * (p1 - p0));
                        let to = dst.wrapping_offset(r as isize * rows.ds).wrapping_add(k0);
                        put(w, nt, staged_row.add(k0 - p0), to, k1 - k0);
                    }
                }
            }
            c0 += cols;
        }
        r0 += k;
    }
}

/// Stores a run of a row's kept bytes: through the line writers when
/// `nt`, through the cache otherwise.
///
/// # Safety
/// `len` bytes readable at `from` and writable at `to`, not overlapping;
/// when `nt`, as [`Writers::push`]: no byte of the destination written
/// twice, and all of them writable until the writers finish.
#[inline(always)]
unsafe fn put(w: &mut Writers, nt: bool, from: *const u8, to: *mut u8, len: usize) {
    // SAFETY: forwarded.
    unsafe {
        if nt {
            w.push(from, to, len);
        } else {
            copy_staged(from, to, len);
        }
    }
}

/// Bytes of the stage cropped interleaved rows are built in (see
/// `plan::rules::crops_row_ends`).
pub(crate) const CROPPED_ROWS_BYTES: usize = 16 << 10;
