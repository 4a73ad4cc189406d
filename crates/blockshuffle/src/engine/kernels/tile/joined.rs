//! Tiles whose repetitions continue short rows, joined in the stage: an
//! interleave's repetitions that continue its source rows
//! ([`joined_tile`]), and a deinterleave's that continue its destination
//! rows ([`joined_deinterleave`]), move as one tile of their joined rows,
//! whose vector kernels the rows alone are too short for. Each costs a
//! copy of the tile through the stage (in L1), which pays only where the
//! rows alone go a unit at a time or in partial vectors: the rules
//! ([`joins`], [`joins_deinterleave`]) say where, measured.
//!
//! Layer: kernels; a part of [`tile`](super), whose kernels it runs.

use super::{copy_tile, own_tile, simd_streams, Writers};
use crate::engine::arch::mem::LINE;
use crate::engine::arch::Isa;
use crate::engine::kernels::bytes::{copy_staged, Stage, STAGE};
use crate::engine::kernels::copy::Mode;
use crate::engine::kernels::nest::Rows;
use crate::engine::kernels::shuffle;

/// An interleaving tile (`dsx == ny * unit`: each column one contiguous
/// destination run of `run = ny * nx * unit` bytes a repetition) whose
/// repetitions continue its source rows (`rows.ss == nx * unit`), with
/// rows too short for the vector interleaves and repetitions that, joined,
/// are not ([`joins`]): as many repetitions at a time as the stage holds
/// are interleaved into it as one tile of their joined rows, by whichever
/// kernel takes that, and each repetition's run then copied out to its own
/// destination (pushed through the line writers when streamed). PyTorch
/// pixel shuffle and NCHW depth-to-space of blocks wider than the image's
/// rows: each row of the image a repetition, a few bytes of each stream.
///
/// What it buys is measured in [`joins`].
///
/// # Safety
/// As [`copy_tile`](super::copy_tile); `w` holds only runs of this run's destination.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(in crate::engine::kernels) unsafe fn joined_tile(
    rows: Rows,
    nx: usize,
    ny: usize,
    src: *const u8,
    ssy: isize,
    dst: *mut u8,
    dsx: isize,
    unit: usize,
    m: Mode,
    w: &mut Writers,
) {
    let col = ny * unit;
    let run = nx * col;
    // A real check, once a call: joined, the repetitions' units are those
    // of one tile only where they continue its source rows; and a run of
    // the stage is a repetition's whole destination only where the columns
    // are contiguous there.
    assert!(
        rows.ss == (nx * unit) as isize && dsx == col as isize && run != 0 && run <= STAGE,
        "joined repetitions continue the source rows, their columns contiguous, and fit the stage: \
         {rows:?}, {nx} x {ny} units of {unit} bytes, columns {dsx} apart"
    );
    let per = STAGE / run;
    let cached = Mode { nt: false, ..m };
    let mut stage = Stage::new();
    // SAFETY: `k` repetitions from `r0` are the tile of `k * nx` units a
    // row at the first one's source (unit `x` of repetition `r` is unit
    // `r * nx + x` of the joined rows: `rows.ss == nx * unit`, checked
    // above), built in the stage's first `k * run <= STAGE` bytes with
    // ordinary stores (unit `X` of row `y` at `(X * ny + y) * unit`), where
    // repetition `r`'s units are the `run` bytes from `r * run`, in its
    // destination's order (`dsx == ny * unit`, checked above).
    unsafe {
        let mut r0 = 0;
        while r0 < rows.count {
            let k = per.min(rows.count - r0);
            let s = rows.at(r0, src, dst).0;
            // The tile's own kernels straight, which `joins` asked: a
            // chunk is a few hundred bytes at times, and choosing costs.
            own_tile(Rows::ONE, k * nx, ny, s, ssy, stage.ptr(), col as isize, unit, cached, w);
            for r in 0..k {
                let (from, to) = (stage.ptr().add(r * run), rows.at(r0 + r, src, dst).1);
                if m.nt {
                    w.push(from, to, run);
                } else {
                    copy_staged(from, to, run);
                }
            }
            r0 += k;
        }
    }
}

/// Whether an interleaving tile of `nx x ny` units of `unit` bytes goes by
/// [`joined_tile`]: its `rows` continue its source rows, two of them fit
/// the stage, and its rows are too short for the vector interleaves while
/// the repetitions the stage holds, joined, are not ([`vector_interleave`]).
///
/// Measured against the tile's own kernels a repetition at a time (one
/// thread, 5 alternated runs, each workload's best, ratio to memcpy, on an
/// AMD EPYC, Zen 3, AVX2): the 8 broad workloads it takes (seed 26) 5.28
/// -> 3.39 (0.64 of the time; PyTorch pixel shuffle of uint8 by 7, 13-byte
/// rows, 8.2 -> 3.6), one slower by more than 5% (OpenVINO depth-to-space
/// of 3-byte units, 1.07; 0.56 to 0.91 in earlier runs); held out, the 10
/// of seeds 801 to 804, 5.63 -> 3.37 (0.60), none slower. Rows the
/// vector interleaves take already measured slower joined (38 workloads,
/// 18 slower by more than 5%: 2 to 4 streams of 4- and 16-byte units up to
/// 2.6 times the time, 7 streams of 260-byte rows 1.2): the stage's copy
/// costs more than their calls. The joined tile runs the own kernels
/// straight: through `copy_tile`, choosing again for each chunk, OpenVINO
/// depth-to-space of float16 (4 repetitions of 7 units in 4 streams, 224
/// bytes a chunk) took 1.5 times as long as unjoined.
pub(super) fn joins(rows: Rows, nx: usize, ny: usize, unit: usize, isa: Isa) -> bool {
    let run = nx.saturating_mul(ny).saturating_mul(unit);
    if rows.count < 2 || rows.ss != (nx * unit) as isize || run == 0 || run > STAGE / 2 {
        return false;
    }
    let joined = rows.count.min(STAGE / run) * nx;
    !vector_interleave(isa, ny, unit, nx) && vector_interleave(isa, ny, unit, joined)
}

/// Whether `b` streams of `n` units of `unit` bytes interleave by a vector
/// kernel of the tile's own on `isa`: [`simd_streams`]' of at least 16 bytes a
/// stream, or `shuffle`'s of at least a period.
fn vector_interleave(isa: Isa, b: usize, unit: usize, n: usize) -> bool {
    (simd_streams(b, unit) && isa.fitting(n * unit) > Isa::Portable)
        || (shuffle::interleaves(isa, unit, b) && n >= shuffle::interleave_period(unit, b))
        || shuffle::interleaves_streams(isa, unit, b, n)
}

/// A deinterleaving tile (`ssy == nx * unit`: each repetition's source one
/// contiguous run of `run = nx * ny * unit` bytes) whose repetitions
/// continue its destination rows (`rows.ds == ny * unit`), with rows too
/// short for the deinterleaves ([`joins_deinterleave`]): as many
/// repetitions at a time as the stage holds are copied into it, one after
/// another, and deinterleaved from it as one tile of their joined rows.
///
/// # Safety
/// As [`copy_tile`](super::copy_tile); `w` holds only runs of this run's destination.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(in crate::engine::kernels) unsafe fn joined_deinterleave(
    rows: Rows,
    nx: usize,
    ny: usize,
    src: *const u8,
    ssy: isize,
    dst: *mut u8,
    dsx: isize,
    unit: usize,
    m: Mode,
    w: &mut Writers,
) {
    let run = nx * ny * unit;
    // A real check, once a call: joined, the repetitions' units are those
    // of one tile only where they continue its destination rows; and a
    // repetition's source is one run only where its rows continue one
    // another.
    assert!(
        rows.ds == (ny * unit) as isize && ssy == (nx * unit) as isize && run != 0 && run <= STAGE,
        "joined repetitions continue the destination rows, their source one run, and fit the stage: \
         {rows:?}, {nx} x {ny} units of {unit} bytes, rows {ssy} apart"
    );
    let per = STAGE / run;
    let mut stage = Stage::new();
    // SAFETY: repetition `r`'s source is `run` contiguous bytes at
    // `rows.at(r)` (`ssy == nx * unit`, checked above), copied to the stage
    // from `(r - r0) * run`; there, unit `(x, y)` of repetition `r` is unit
    // `(x, (r - r0) * ny + y)` of the joined tile (rows `nx * unit` apart),
    // whose destination `dst_r0 + x * dsx + ((r - r0) * ny + y) * unit` is
    // the repetition's (`rows.ds == ny * unit`, checked above).
    unsafe {
        let mut r0 = 0;
        while r0 < rows.count {
            let k = per.min(rows.count - r0);
            for r in 0..k {
                copy_staged(rows.at(r0 + r, src, dst).0, stage.ptr().add(r * run), run);
            }
            let d = rows.at(r0, src, dst).1;
            copy_tile(Rows::ONE, nx, k * ny, stage.ptr(), (nx * unit) as isize, d, dsx, unit, m, w);
            r0 += k;
        }
    }
}

/// Whether a deinterleaving tile of `nx x ny` units of `unit` bytes goes
/// by [`joined_deinterleave`]: units of 1 or 3 bytes, its `rows` continue
/// its destination rows, two of them fit the stage, and each of its `nx`
/// destination rows is shorter than a 16-byte vector, while the
/// repetitions the stage holds, joined, make rows of a line or more.
///
/// Measured against the tile's kernels a repetition at a time (one
/// thread, 5 alternated runs, each workload's best, ratio to memcpy, on an
/// AMD EPYC, Zen 3, AVX2), with rows under a vector of any unit and joined
/// rows of any length: the 4 broad workloads of seed 26 0.53 of the time
/// (TF NCHW space-to-depth of uint8 by 12, 15-byte rows, 4.8 -> 2.3; ONNX
/// space-to-depth of 3-byte units by 6, 11.3 -> 6.7); held out, the 11 of
/// seeds 801 and 802, 0.80: bytes 0.35 to 0.86 but for one (4 repetitions
/// of 2 x 4 bytes, 32 bytes a call, 1.12), 2-byte units 0.94, 1.09 and 1.50
/// (5 repetitions of 6-byte rows), 4-byte units in 8 streams of 2 (8-byte
/// rows, which their kernel stores whole) 1.43 and 1.60. Hence bytes and
/// 3-byte units, joined rows of a line. Rows of up to 63 bytes (43
/// workloads, 3 runs) measured 1.08 of the time joined, 28 slower by more
/// than 5%: the stage's copy costs more than their calls. The rule as
/// kept: the 4 of seed 26 5.81 -> 2.86x memcpy (0.49 of the time), none
/// slower; held out, the 6 of seeds 801 to 804, 11.1 -> 4.8 (0.43), none
/// slower.
pub(super) fn joins_deinterleave(rows: Rows, nx: usize, ny: usize, unit: usize) -> bool {
    let (row, run) = (ny.saturating_mul(unit), nx.saturating_mul(ny).saturating_mul(unit));
    if !matches!(unit, 1 | 3) || rows.count < 2 || rows.ds != row as isize || run == 0 || run > STAGE / 2 {
        return false;
    }
    row < VECTOR && rows.count.min(STAGE / run) * row >= LINE
}

/// The bytes of the vector a deinterleave stores a stream's units by.
const VECTOR: usize = 16;
