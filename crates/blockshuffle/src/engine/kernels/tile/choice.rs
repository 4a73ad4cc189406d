//! The kernel a transposing tile runs by ([`TileChoice`]), chosen from its
//! shape alone ([`TileShape`]): once by the plan for the tile that each
//! index of the loops outside it runs (`CopyPlan::tile_choice`), which the
//! executor takes where its tile has that very shape; otherwise by the
//! tile itself ([`copy_tile`](super::copy_tile)).
//!
//! Small tiles paid for the choice on every call: OpenVINO batch-to-space
//! of 3-byte units by 16 x 2 x 3 with crops (63-byte tiles, 0.9 MiB)
//! spent about 370 of the 839 instructions of a call choosing. Chosen
//! once, on the 26 broad workloads (seed 26) whose tiles with their
//! repetitions are under 512 bytes, the instructions of a run (callgrind)
//! went to 0.84 of what they were (OpenVINO depth-to-space of float32 by
//! 4, 0.25 MiB: 0.54; none more, but by 0.04%), and the time to 0.92 (one
//! thread, 5 alternated runs of 15 repetitions, each workload's best).
//!
//! Layer: kernels; a part of [`tile`](super), whose kernels it runs.

use super::{
    joined_deinterleave, joined_tile, joins, joins_deinterleave, own_interleave, own_tile, simd_streams, staged_tile,
    stages, Writers,
};
use crate::engine::arch::cache::first_level_holds;
use crate::engine::arch::Isa;
use crate::engine::kernels::copy::Mode;
use crate::engine::kernels::nest::{Loop, Rows};
use crate::engine::kernels::permute::{self, Way};
use crate::engine::kernels::transpose::{self, streams, Matrix, Rows2};

/// Everything a tile's choice of kernel reads: `rows.count` repetitions
/// (see [`Rows`]) of an `nx x ny` tile of `unit`-byte units, the source
/// contiguous along x (rows `ssy` bytes apart), the destination along y
/// (rows `dsx` bytes apart), moved as `m` says: unit `(x, y)` of
/// repetition `r` from `src + r*rows.ss + x*unit + y*ssy` to `dst +
/// r*rows.ds + x*dsx + y*unit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TileShape {
    pub rows: Rows,
    pub nx: usize,
    pub ny: usize,
    pub ssy: isize,
    pub dsx: isize,
    pub unit: usize,
    pub m: Mode,
}

impl TileShape {
    /// The tile of loops `x` (contiguous in the source: its count and
    /// destination stride) and `y` (contiguous in the destination: its
    /// count and source stride), repeated along `rows`: the one shape the
    /// plan chooses for and the executor asks for (a choice is taken only
    /// where the two are equal).
    pub(crate) fn of_loops(rows: Rows, x: &Loop, y: &Loop, unit: usize, m: Mode) -> TileShape {
        TileShape { rows, nx: x.count, ny: y.count, ssy: y.ss, dsx: x.ds, unit, m }
    }
}

/// The kernels a tile goes by, the first that takes it in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kernel {
    /// The byte permutes (`permute::run`), interleaving or deinterleaving.
    Permute(Way),
    /// The transpose's squares (`transpose::transpose`), all the
    /// repetitions one matrix where they continue the tile's rows or its
    /// columns.
    Transpose,
    /// The transpose's full-line squares (`transpose::in_full_lines`), its
    /// repetitions taken as [`Kernel::Transpose`] takes them: 16-byte
    /// units whose rows crowd the first-level cache (`crowded_wide`),
    /// which the transpose's own rule leaves to the tile's kernels.
    Squares,
    /// A streamed interleave built in the stage (`staged_tile`).
    Staged,
    /// Repetitions that continue short deinterleaving rows, joined in the
    /// stage (`joined_deinterleave`).
    JoinedDeinterleave,
    /// The register transposes' deinterleave (`streams::deinterleave`);
    /// where AVX-512's masks run, of bytes, 2- and 4-byte units, chosen
    /// ahead of the transpose's squares and the byte permutes
    /// (`streams::leads_deinterleave`).
    Deinterleave,
    /// The register transposes' interleave (`streams::interleave`).
    Interleave,
    /// Repetitions that continue short interleaving rows, joined in the
    /// stage (`joined_tile`).
    Joined,
    /// The tile's own kernels (`tile`, `tile_rows`), which choose on.
    Own,
}

/// A tile's shape and the kernel chosen for it: made only by
/// [`TileChoice::of`], so that the kernel it runs always takes its shape
/// (the permutes and the register transposes need the CPU features their
/// rules check).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TileChoice {
    shape: TileShape,
    kernel: Kernel,
}

impl TileChoice {
    /// The kernel for `shape`.
    pub(crate) fn of(shape: TileShape) -> TileChoice {
        TileChoice { shape, kernel: kernel(&shape) }
    }

    /// The shape it was chosen for.
    pub(crate) fn shape(&self) -> &TileShape {
        &self.shape
    }

    /// Whether it goes by the stage (`staged_tile`): a streamed interleave
    /// that no kernel streams itself.
    pub(crate) fn staged(&self) -> bool {
        self.kernel == Kernel::Staged
    }

    /// Whether it goes by the tile's own kernels (`tile`, `tile_rows`): no
    /// kernel for its shape took it.
    pub(crate) fn own(&self) -> bool {
        self.kernel == Kernel::Own
    }

    /// Whether it goes by the byte permutes (`permute`).
    pub(crate) fn permutes(&self) -> bool {
        matches!(self.kernel, Kernel::Permute(_))
    }

    /// Whether it goes by the transpose's squares (`transpose::transpose`).
    pub(crate) fn transposes(&self) -> bool {
        self.kernel == Kernel::Transpose
    }

    /// Whether it goes by the register transposes' deinterleave
    /// (`streams::deinterleave`).
    pub(crate) fn deinterleaves(&self) -> bool {
        self.kernel == Kernel::Deinterleave
    }

    /// Copies the tile (all its repetitions) from `src` to `dst` by the
    /// chosen kernel.
    ///
    /// # Safety
    /// Every source unit of the shape (see [`TileShape`]) readable from
    /// `src` and every destination unit writable from `dst`, without
    /// overlap; `m.isa` one this CPU runs; `w` holds only runs of this
    /// run's destination.
    #[inline]
    pub(crate) unsafe fn run(&self, src: *const u8, dst: *mut u8, w: &mut Writers) {
        let TileShape { rows, nx, ny, ssy, dsx, unit, m } = self.shape;
        // SAFETY: forwarded; each kernel addresses exactly the tiles' units,
        // and takes this shape (`kernel`, for this shape: `of`).
        unsafe {
            match self.kernel {
                Kernel::Permute(Way::Interleave) => {
                    permute::run(Way::Interleave, rows, nx, ny, unit, src, dst, ssy);
                }
                Kernel::Permute(Way::Deinterleave) => {
                    permute::run(Way::Deinterleave, rows, ny, nx, unit, src, dst, dsx);
                }
                Kernel::Transpose => matrices(&self.shape, src, dst, transpose::transpose),
                Kernel::Squares => matrices(&self.shape, src, dst, transpose::in_full_lines),
                Kernel::Staged => {
                    // A column within the stage (`stages`): it does not
                    // decline.
                    staged_tile(rows, nx, ny, src, ssy, dst, unit, m, w);
                }
                Kernel::Deinterleave => streams::deinterleave(rows, ny, nx, unit, src, dst, dsx, m.isa),
                Kernel::Interleave => streams::interleave(rows, nx, ny, unit, src, ssy, dst, m.isa),
                Kernel::Joined => joined_tile(rows, nx, ny, src, ssy, dst, dsx, unit, m, w),
                Kernel::JoinedDeinterleave => {
                    joined_deinterleave(rows, nx, ny, src, ssy, dst, dsx, unit, m, w);
                }
                Kernel::Own => own_tile(rows, nx, ny, src, ssy, dst, dsx, unit, m, w),
            }
        }
    }
}

/// Moves the tile (all its repetitions) by `transpose` (the transpose's
/// choice of kernel, or its full-line squares): one matrix of all their
/// rows or columns where the repetitions continue them ([`continues`]),
/// else a matrix each.
///
/// # Safety
/// As [`TileChoice::run`]; `transpose` is the transpose's (`transpose` or
/// `in_full_lines`), which address exactly the matrix's units.
#[inline(always)]
unsafe fn matrices(s: &TileShape, src: *const u8, dst: *mut u8, transpose: unsafe fn(Matrix, Isa, bool, bool)) {
    let TileShape { rows, nx, ny, ssy, dsx, unit, m } = *s;
    let (continues_rows, continues_cols) = continues(s);
    let (from, to) = (Rows2::strided(ny, ssy), Rows2::strided(nx, dsx));
    let tile = Matrix { rows: ny, cols: nx, unit, src, from, dst, to };
    // SAFETY: forwarded; the matrices address the tile's units, the
    // repetitions' where they continue its rows or columns (`continues`).
    unsafe {
        if continues_rows {
            let from = Rows2 { outer: rows.ss, ..from };
            return transpose(Matrix { rows: rows.count * ny, from, ..tile }, m.isa, m.nt, m.fetch);
        }
        if continues_cols {
            let to = Rows2 { outer: rows.ds, ..to };
            return transpose(Matrix { cols: rows.count * nx, to, ..tile }, m.isa, m.nt, m.fetch);
        }
        for r in 0..rows.count {
            let (src, dst) = rows.at(r, src, dst);
            transpose(Matrix { src, dst, ..tile }, m.isa, m.nt, m.fetch);
        }
    }
}

/// Whether the repetitions continue the tile's destination rows (each
/// repetition's `ny` units where the last's ended), or else its source
/// rows: then they make one matrix of all their rows (columns), `count *
/// ny` (`count * nx`) units of the tensor, no overflow.
fn continues(s: &TileShape) -> (bool, bool) {
    let (u, ny, nx) = (s.unit as isize, s.ny as isize, s.nx as isize);
    let rows = s.rows.count > 1 && s.rows.ds == ny * u;
    (rows, !rows && s.rows.count > 1 && s.rows.ss == nx * u)
}

/// The first kernel that takes `s`, in [`Kernel`]'s order.
fn kernel(s: &TileShape) -> Kernel {
    let TileShape { rows, nx, ny, ssy, dsx, unit, m } = *s;
    let u = unit as isize;
    // Repetitions that continue the destination rows (or the source
    // rows) make one matrix of all their rows (columns). The transpose
    // is chosen for that matrix (NCHW space-to-depth of bytes by 12:
    // 15-unit rows continued 29 times, a matrix of 435 rows). Measured
    // on the 11 of the broad benchmark's 640 workloads that this
    // changes, 3 runs alternating, ratio to memcpy: geomean 6.7 -> 3.2,
    // every one faster or the same (TF NCHW space-to-depth of uint8 by
    // 12 and 14: 25 -> 5.8 and 37 -> 8.9; float16 by 16: 10.4 -> 3.2);
    // on the 18 of 1,280 drawn from two other seeds (801, 802), 13.0 ->
    // 5.5, none slower. Packed units too, since their partial squares
    // take short sides (`takes_squares`): the 12 broad workloads of
    // seeds 26, 801 and 802 this then changes (6- and 12-byte units, a
    // side of 3 to 7 units continued into 12 to 1,024), 5 alternated
    // runs, 2.79 -> 2.05 (TF NCHW space-to-depth of 12-byte units by 15,
    // 5.3 MiB, 4.4 -> 1.7), one slower (1.06).
    let (my, mx) = match continues(s) {
        (true, _) => (rows.count * ny, nx),
        (_, true) => (ny, rows.count * nx),
        _ => (ny, nx),
    };
    // Through the cache, 8-byte units where AVX-512's masks run go in the
    // tile's own square blocks, not the transpose's squares
    // (`streams::blocks_through_cache`), unless the tile's rows crowd the
    // first-level cache (`crowded`).
    let blocks = !m.nt && streams::blocks_through_cache(unit, m.isa) && !crowded(s, my * mx);
    // Shorter sides of float64 (with VBMI, of packed 6- and 12-byte
    // units) in full-line squares, where the tile's destination rows are
    // not runs of its rows (see `takes_squares`).
    let squares = || dsx != ny as isize * u && transpose::takes_squares(my, mx, unit, m.isa, dsx, m.nt);
    let transposes = || !blocks && (squares() || transpose::takes(my, mx, unit, m.isa, dsx, m.nt));
    // Interleaves go by the byte permutes rather than the transpose's
    // squares: the broad workloads whose tiles interleave 5 to 32
    // streams of units of up to 4 bytes (seeds 26, 801 and 802: 51,
    // 51 and 58 of them), 3 alternated runs, time after over before
    // 0.94, 0.94 and 0.99 (ONNX CRD depth-to-space of float16 by 16,
    // 3.3 MiB, 7.0 -> 2.2x memcpy; a numpy transpose of 32 streams of
    // float16, 7 MiB, 4.7 -> 5.5), where their streams' lines spread
    // over the first-level cache's sets (`spread`) or the transpose does
    // not take the tile. So do deinterleaves of bytes in
    // fewer streams than a square's side, rather than the masked
    // squares: the 13 broad workloads (seed 26) that this changes, 5
    // alternated runs, geomean 4.67 -> 3.77x memcpy (pixel unshuffle
    // of uint8 by 9, 127 MiB: 4.5 -> 2.3); float16 there measured no
    // faster (3.63 -> 3.75) and bytes in 16 streams slower (2.56 ->
    // 2.77).
    let deinterleaves = if unit == 1 { transpose::MIN_SIDE - 1 } else { 0 };
    if let Some(way) = permutes(s, permute::MAX_STREAMS, deinterleaves, transposes) {
        return Kernel::Permute(way);
    }
    // Where AVX-512's masks run, deinterleaves of bytes, 2- and 4-byte
    // units go in AVX2's stream squares ahead of the masked squares and
    // the byte permutes (see `streams::leads_deinterleave`).
    let (interleave, deinterleave) = (dsx == ny as isize * u, ssy == nx as isize * u);
    if deinterleave
        && streams::leads_deinterleave(unit, m.isa)
        && streams::takes_deinterleave(rows, ny, nx, unit, m.isa)
    {
        return Kernel::Deinterleave;
    }
    if transposes() {
        return Kernel::Transpose;
    }
    if crowded_wide(s, my, mx) {
        return Kernel::Squares;
    }
    // Streamed interleaves that no kernel streams itself (more than 4
    // streams, or units without a vector kernel): staged.
    if m.nt && interleave && !own_interleave(m.isa, ny, unit) && stages(ny, unit) {
        return Kernel::Staged;
    }
    // Deinterleaves into rows under a vector, continued to a line:
    // joined in the stage.
    if deinterleave && !m.nt && joins_deinterleave(rows, nx, ny, unit) {
        return Kernel::JoinedDeinterleave;
    }
    // Deinterleaves that no kernel of their own takes, by byte
    // permutes (interleaves went there above), or without them by the
    // register transposes, as are interleaves of 2-, 3-, 4- and 8-byte
    // units.
    if let Some(way) = permutes(s, 0, permute::MAX_STREAMS, || false) {
        return Kernel::Permute(way);
    }
    if deinterleave && streams::takes_deinterleave(rows, ny, nx, unit, m.isa) {
        return Kernel::Deinterleave;
    }
    if interleave && streams::takes_interleave_rows(rows, nx, ny, unit, m.isa) {
        return Kernel::Interleave;
    }
    if interleave && !m.nt && joins(rows, nx, ny, unit, m.isa) {
        return Kernel::Joined;
    }
    Kernel::Own
}

/// The shortest side of a tile that [`crowded`] (and, for 16-byte units,
/// [`crowded_wide`]) sends to the squares: the
/// tile's own kernels (or, where its source rows are whole, the register
/// transposes' deinterleave) copy a tile with a shorter side a whole row
/// of its long side at a time, each row's lines written or read whole,
/// wherever the rows fall in the cache (OpenVINO and TF space-to-batch of
/// 8-byte units by 16, 16 destination rows 32 KiB and more apart,
/// measured 1.14 to 1.25 the time in the squares).
const CROWDED_SIDE: usize = 2 * transpose::MIN_SIDE;

/// Whether a tile of `unit`-byte units that would go in the tile's own
/// kernels through the cache (8-byte units: see
/// `streams::blocks_through_cache`) goes in the transpose's full-line
/// squares instead, because the rows of one of the own kernels' square
/// blocks on either side (up to [`block_side`](super::block_side), 64)
/// crowd into too few sets of the first-level cache to hold a line of
/// each ([`first_level_holds`]): with 64 sets of 8 ways, rows a power of
/// two of lines apart, from 1 KiB on a side of 64 units or more, from 2
/// KiB on a side of 32, such as 2-D transposes of float64 whose sides are
/// powers of two, both 64 or more and one 128 or more, or 32 and 256 or
/// more. The blocks, the zip of source streams and the walk of units then
/// fetch each line again and again; a square reads and writes 8 rows of
/// 64 bytes at once. Both sides [`CROWDED_SIDE`] or more (a side of 32
/// with whole source rows, which went in the register transposes'
/// deinterleave, goes in the squares too), and the matrix the squares
/// take, `units` of them (the repetitions that continue the tile's rows
/// or columns with it: `kernel`'s `my x mx`), under
/// [`super::TALL_TILE_BYTES`] (from there the blocks measured faster:
/// below).
///
/// Measured on an AMD EPYC (Zen 4, L1d 32 KiB of 64 sets of 8 ways), one
/// thread, 4 alternated runs, ratio to memcpy: numpy transposes of float64
/// with power-of-two sides from 32 KiB to 8 MiB (57 of 2 dims, 30 of 3),
/// the 44 whose tiles this takes, geomean 5.08 -> 2.78 (128 x 256: 12.1 ->
/// 2.1; 64 x 512: 15.2 -> 2.3; 256 x 256: 3.5 -> 2.2), 41 faster by more
/// than 5%, 2 slower so (64 KiB, 2.8 -> 3.2: 256 x 32, a deinterleave into
/// 32 streams before; 512 x 32 to 2,048 x 32, 0.73 to 0.77 the time); the
/// other 43, 1.01. Those of 8 MiB measured 1.40 -> 1.56 in the squares:
/// the bound keeps them in the blocks. Of the broad workloads, seeds 26
/// and 801 to 806 (4,480), it takes one, OpenVINO batch-to-space of
/// float64 by 16 x 8 x 6 (0.2 MiB, 3.8 -> 3.0); of those drawn with
/// powers of two (`tools/broad_workloads.py --powers-of-two`, seeds 26 to
/// 28, 1,920), 4 numpy transposes (256 x 256 3.1 -> 2.4, 32 x 32 x 128
/// reversed 5.1 -> 3.1, two within 3%).
fn crowded(s: &TileShape, units: usize) -> bool {
    let TileShape { nx, ny, ssy, dsx, unit, .. } = *s;
    let b = super::block_side(unit);
    squares_bounds(s, units) && !(first_level_holds(0, ssy, ny.min(b)) && first_level_holds(0, dsx, nx.min(b)))
}

/// The bounds [`crowded`] and [`crowded_wide`] send a tile to the squares
/// within: both sides [`CROWDED_SIDE`] or more, and the matrix the
/// squares take, `units` of them, under [`super::TALL_TILE_BYTES`].
fn squares_bounds(s: &TileShape, units: usize) -> bool {
    s.nx >= CROWDED_SIDE && s.ny >= CROWDED_SIDE && units.saturating_mul(s.unit) < super::TALL_TILE_BYTES
}

/// Whether a tile of 16-byte units through the cache goes in the
/// transpose's full-line squares (`transpose::in_full_lines`, 4 x 4
/// units) rather than the tile's own kernels (the transpose's rule leaves
/// 16-byte units to them through the cache: `transpose::takes`), because
/// the source rows those kernels read across crowd into too few sets of
/// the first-level cache to hold a line of each ([`first_level_holds`]):
/// all `ny` of them, where they zip or walk units; a block's side of them
/// ([`block_side`](super::block_side): 32), in a tile they block
/// (`super::blocked`), whose columns go into a run of each destination
/// row. Where those lines crowd, every unit misses. The squares read a
/// line of four source rows at a time and write a line of each of a
/// strip's destination rows, a strip narrowed where those would crowd
/// (`transpose`'s `held_strip`). Within [`squares_bounds`], the matrix
/// being the tile with the repetitions that continue it (`my x mx`), as
/// in [`crowded`].
///
/// Measured on an AMD EPYC (Zen 5, L1d 48 KiB of 64 sets of 12 ways), one
/// thread, 6 alternated runs, ratio to memcpy, against the stop before
/// (which had neither this nor the narrowed strips): 90 numpy transposes
/// of complex128 with power-of-two sides from 32 KiB to 8 MiB (2 and 3
/// dims, random permutations), the 39 whose tiles this takes, geomean
/// 4.70 -> 2.24 (128 x 128: 19.5 -> 2.0; 256 x 32: 11.0 -> 3.2; 64 x 256:
/// 6.5 -> 1.8), 33 faster by more than 5%, 4 slower so (tiles whose
/// source rows are 2 KiB apart, 256 x 128 to 2,048 x 128, 1.07 to 1.18
/// the time); the other 51, 1.00. Declining where the squares' destination
/// rows crowd too (before their strips were narrowed, they lost there:
/// 256 x 256, 3.3 -> 8.8) kept 21 of them, and lost 256 x 32 to 2,048 x
/// 32 (9 to 11x). Counting a blocked tile's destination rows too took 512
/// x 64 and 2,048 x 64 (1.5 -> 2.1x); counting an unblocked tile's
/// destination rows too took ONNX space-to-depth of complex128 by 15 (225
/// destination rows 512 bytes apart, a held-out broad workload of seed
/// 806), 1.4 -> 2.6x, where the own kernels' walk suffers little.
/// Counting source rows alone measured the same on the 90 (1.00). The
/// squares lose on tiles whose rows do not crowd (60 x 60 to 136 x 136,
/// 1.16 to 1.32 the time). Of
/// the broad workloads, seeds 26, 801 and 806 (1,920), it takes none; of
/// those drawn with powers of two (seeds 26 to 28, 1,920), 3 numpy
/// transposes.
fn crowded_wide(s: &TileShape, my: usize, mx: usize) -> bool {
    let TileShape { nx, ny, ssy, dsx, unit, m, .. } = *s;
    if unit != 16 || m.nt || !squares_bounds(s, my.saturating_mul(mx)) {
        return false;
    }
    // The source rows a block copies a column of (into a run of each
    // destination row), or all of them.
    let rows = if super::blocked(nx, ny, unit, ssy, dsx) { ny.min(super::block_side(unit)) } else { ny };
    !first_level_holds(0, ssy, rows) && transpose::full_line_squares(my, mx, unit, m.isa)
}

/// Which way the byte permutes (`permute`) take the tile, if they do: an
/// interleave of at most `interleaves` streams or a deinterleave of at
/// most `deinterleaves`, that no kernel of their own takes, not streamed;
/// an interleave only where its streams' lines [`spread`] over the
/// first-level cache's sets or the transpose does not take the tile
/// (`transposes`).
fn permutes(s: &TileShape, interleaves: usize, deinterleaves: usize, transposes: impl Fn() -> bool) -> Option<Way> {
    let TileShape { nx, ny, ssy, dsx, unit, m, .. } = *s;
    let u = unit as isize;
    if m.nt {
        return None;
    }
    if dsx == ny as isize * u
        && ny <= interleaves
        && !own_interleave(m.isa, ny, unit)
        && permute::takes(Way::Interleave, ny, unit, nx, m.isa)
        && (spread(ny, ssy) || !declines(unit) || !transposes())
    {
        return Some(Way::Interleave);
    }
    let deinterleaves = ssy == nx as isize * u
        && nx <= deinterleaves
        && !simd_streams(nx, unit)
        && permute::takes(Way::Deinterleave, nx, unit, ny, m.isa);
    deinterleaves.then_some(Way::Deinterleave)
}

/// Whether the byte permutes' interleave of `streams` source rows `ssy`
/// bytes apart keeps their lines in the first-level cache: whether it can
/// hold the lines of half of them (`arch::cache::first_level_holds`, of
/// rows from a line boundary). A step reads a few bytes of every stream
/// (4 of each of 32), so each stream's line is read again by the next
/// steps; where the streams' lines crowd into a few sets (planes a
/// multiple of 4 KiB apart: NCHW images of 64 x 64 and more by powers of
/// two), every read misses. Then, for units of 1, 2 and 4 bytes
/// ([`declines`]) where the transpose takes the tile (`permutes` asks),
/// it goes there: in full-line squares with AVX-512 for 4-byte units
/// (`transpose::takes`) and 2-byte units in 32 streams (`transpose`'s
/// `squares_for_crowded_rows`), in the blocked transpose otherwise. (The
/// permutes never stream: streamed, such a tile goes as before, and the
/// plan no longer keeps it through the cache for them, see
/// `plan::streamed::interleave_through_cache`.) So the permutes keep up
/// to twice the first level's ways of crowded streams: 16 with 8 ways,
/// 24 with 12.
///
/// Measured on an AMD EPYC (Zen 4), one thread, einops `b c h w -> b h w
/// c` of 1 MiB, planes of 64 x 64 to 128 x 128 units, 4 alternated runs,
/// time after over before: 32 channels (one set holds 8 of their 32
/// lines), uint8 0.43 to 0.44, float16 0.19 to 0.29 (17.5 -> 3.3x
/// memcpy), float32 0.19 to 0.34; 18 to 31 channels, uint8 0.49 to 1.05
/// (19 and 20: 0.93 to 1.05), float16 0.38 to 0.77, float32 0.17 to 0.44;
/// outputs of 16 MiB, 20 to 32 channels, 0.42 to 0.90 but uint8 in 20,
/// 1.19. 16 channels, whose 16 lines the permutes kept (in one set, as
/// many as the 8 ways hold twice: the squares measured 1.15 to 1.81 the
/// time), stay with them, as do 17.
fn spread(streams: usize, ssy: isize) -> bool {
    first_level_holds(0, ssy, streams / 2)
}

/// Whether the permutes decline crowded interleaves (not [`spread`]) of
/// `unit`-byte units where the transpose takes them: the units measured,
/// 1, 2 and 4 bytes (packed 3-byte units would go in their own full-line
/// squares, unmeasured so).
fn declines(unit: usize) -> bool {
    matches!(unit, 1 | 2 | 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2-D transposes of 16-byte units (`nx x ny`, each side's rows
    /// `pad` bytes past their units) whose own kernels' rows crowd the
    /// first level go in the full-line squares where AVX-512's masks run,
    /// through the cache (`crowded_wide`).
    #[test]
    fn sixteen_byte_transposes_whose_rows_crowd_go_in_the_squares() {
        if Isa::detect() < Isa::Avx512 || !first_level_as_measured() {
            return;
        }
        let transpose = |nx: usize, ny: usize, pad: usize, nt: bool, isa: Isa| {
            let (ssy, dsx) = ((nx * 16 + pad) as isize, (ny * 16 + pad) as isize);
            kernel(&TileShape { rows: Rows::ONE, nx, ny, ssy, dsx, unit: 16, m: Mode { nt, isa, fetch: false } })
        };
        let cached = |nx: usize, ny: usize, pad: usize| transpose(nx, ny, pad, false, Isa::Avx512);
        // Walked or zipped (under 512 KiB): 64 rows 1 KiB apart, 128 rows
        // 512 bytes or 1 KiB apart, 32 rows 4 KiB apart, 256 rows 512
        // bytes apart; blocked: 32 rows of a block 8 KiB or 4 KiB apart.
        assert_eq!(cached(64, 64, 0), Kernel::Squares);
        assert_eq!(cached(64, 128, 0), Kernel::Squares);
        assert_eq!(cached(32, 128, 0), Kernel::Squares);
        assert_eq!(cached(256, 32, 0), Kernel::Squares);
        assert_eq!(cached(32, 256, 0), Kernel::Squares);
        assert_eq!(cached(512, 64, 0), Kernel::Squares);
        assert_eq!(cached(256, 256, 0), Kernel::Squares);
        // Source rows that a first level of 8 or 12 ways holds: 64 rows
        // 512 bytes apart, 32 rows 3,600 bytes apart (their destination
        // rows, 225 of them 512 bytes apart, do not count: ONNX
        // space-to-depth of complex128 by 15); rows a line past a power
        // of two; a blocked tile whose blocks' source rows are 1 KiB apart
        // (its destination rows, 8 KiB apart, each take a run of a block).
        assert_eq!(cached(32, 64, 0), Kernel::Own);
        assert_eq!(cached(225, 32, 0), Kernel::Own);
        assert_eq!(cached(64, 64, 64), Kernel::Own);
        assert_eq!(cached(64, 512, 0), Kernel::Own);
        // A side under 32; a matrix of 8 MiB and more.
        assert_eq!(cached(16, 256, 0), Kernel::Own);
        assert_eq!(cached(1024, 512, 0), Kernel::Own);
        // Without AVX-512's squares, and streamed (the transpose's own
        // rule: the squares stream 16-byte units).
        assert_eq!(transpose(64, 64, 0, false, Isa::Avx2), Kernel::Own);
        assert_eq!(transpose(64, 64, 0, true, Isa::Avx512), Kernel::Transpose);
    }

    /// Whether the first level has ways of 4 KiB and 8 to 15 of them
    /// (every x86_64 core of the last decade: 8 or 12), as the tests of
    /// crowded rows assume.
    fn first_level_as_measured() -> bool {
        let l1 = crate::engine::arch::cache::first_level();
        l1.line * l1.sets == 4096 && (8..16).contains(&l1.ways)
    }

    /// The kernel an NCHW space-to-depth tile of `unit`-byte units gets:
    /// `b` streams (a source row of `b * ny` units, each destination row
    /// `ny` units), repeated `count` times, each repetition continuing the
    /// destination rows (16 bytes apart beyond those), through the cache,
    /// with VBMI's kernels.
    fn space_to_depth(unit: usize, b: usize, ny: usize, count: usize) -> Kernel {
        let u = unit as isize;
        let rows = Rows { count, ss: b as isize * ny as isize * u, ds: ny as isize * u };
        let dsx = (count * ny * unit + 16) as isize;
        kernel(&TileShape {
            rows,
            nx: b,
            ny,
            ssy: b as isize * u,
            dsx,
            unit,
            m: Mode { nt: false, isa: Isa::Avx512Vbmi, fetch: false },
        })
    }

    /// The kernel of an interleaving tile of `nx x ny` units of `unit`
    /// bytes, repeated `count` times along its source rows (a row of the
    /// image a repetition: pixel shuffle), through the cache on `isa`.
    fn continued_interleave(unit: usize, nx: usize, ny: usize, count: usize, isa: Isa) -> Kernel {
        let u = unit as isize;
        let rows = Rows { count, ss: nx as isize * u, ds: (nx * ny * unit + 24) as isize };
        let m = Mode { nt: false, isa, fetch: false };
        kernel(&TileShape { rows, nx, ny, ssy: (count * nx * unit + 5) as isize, dsx: ny as isize * u, unit, m })
    }

    /// The kernel of an NCHW-to-NHWC tile through the cache with VBMI:
    /// `c` planes of `plane` units of `unit` bytes, `pad` bytes between
    /// them (its source rows), interleaved into pixels.
    fn to_pixels(unit: usize, c: usize, plane: usize, pad: usize) -> Kernel {
        let rows = Rows { count: 1, ss: 0, ds: 0 };
        let (ssy, dsx) = ((plane * unit + pad) as isize, (c * unit) as isize);
        kernel(&TileShape {
            rows,
            nx: plane,
            ny: c,
            ssy,
            dsx,
            unit,
            m: Mode { nt: false, isa: Isa::Avx512Vbmi, fetch: false },
        })
    }

    /// The byte permutes interleave streams whose lines the first-level
    /// cache holds, half of them at least (`spread`): 32 planes 8 or 16 KiB
    /// apart crowd into one set and go in the transpose; 32 planes a line
    /// past those, 31 bytes past, 16 planes in one set (its 8 or 12 ways
    /// hold half), planes too short for the transpose and 3-byte units
    /// stay with the permutes.
    #[test]
    fn interleaves_of_streams_crowding_the_first_level_go_in_the_transposes_squares() {
        if !Isa::detect().runs_vbmi() {
            return;
        }
        let permutes = Kernel::Permute(Way::Interleave);
        if !first_level_as_measured() {
            return;
        }
        assert!(!spread(32, 4096) && !spread(40, -8192) && spread(16, 4096) && spread(32, 4160));
        assert!(spread(0, 0) && spread(1, 4096));
        for unit in [1, 2, 4] {
            let plane = 8192 / unit;
            assert_eq!(to_pixels(unit, 32, plane, 0), Kernel::Transpose, "{unit}");
            assert_eq!(to_pixels(unit, 32, 2 * plane, 0), Kernel::Transpose, "{unit}");
            assert_eq!(to_pixels(unit, 32, plane, 64), permutes, "{unit}");
            assert_eq!(to_pixels(unit, 32, plane, 31), permutes, "{unit}");
            assert_eq!(to_pixels(unit, 16, plane, 0), permutes, "{unit}");
            assert_eq!(to_pixels(unit, 20, plane + 16 / unit, 0), permutes, "{unit}");
        }
        // Crowded, but too short a side for the transpose (planes of 7
        // units, 8 KiB apart), or of 3-byte units (which the permutes
        // keep: `declines`): the permutes still.
        for unit in [1, 2, 3, 4] {
            assert_eq!(to_pixels(unit, 32, 7, 8192 - 7 * unit), permutes, "{unit}");
        }
        assert_eq!(to_pixels(3, 32, 8192, 8192), permutes);
    }

    /// Without VBMI's permutes (which take interleaves of any row first),
    /// repetitions that continue interleaving rows too short for the
    /// vector interleaves, and that joined are not, go joined: on either
    /// side of each kernel's shortest row (16 bytes of 2 to 4 streams of
    /// whole-number units; `shuffle`'s period, 16 units of bytes in 7
    /// streams and of 3-byte units in 3; two periods, 8 units, of 4-byte
    /// units in 5 streams), and not once.
    #[test]
    fn continued_short_interleaves_go_joined() {
        let isa = Isa::Avx2;
        if Isa::detect() < isa {
            return;
        }
        for (unit, ny, short) in [(1, 4, 15), (4, 3, 3), (1, 7, 15), (3, 3, 15), (4, 5, 7)] {
            assert_eq!(continued_interleave(unit, short, ny, 9, isa), Kernel::Joined, "{unit} {ny} {short}");
            assert_ne!(continued_interleave(unit, short + 1, ny, 9, isa), Kernel::Joined, "{unit} {ny} {short}");
            assert_ne!(continued_interleave(unit, short, ny, 1, isa), Kernel::Joined, "once");
        }
        // Joined, too short still: 2 repetitions of 3 units of 3 bytes (6
        // units of the 16); 6 repetitions, 18.
        assert_ne!(continued_interleave(3, 3, 3, 2, isa), Kernel::Joined);
        assert_eq!(continued_interleave(3, 3, 3, 6, isa), Kernel::Joined);
        // Portable: no vector interleave, joined or not.
        assert_ne!(continued_interleave(1, 7, 4, 9, Isa::Portable), Kernel::Joined);
    }

    /// The kernel of a deinterleaving tile of `nx x ny` units of `unit`
    /// bytes, repeated `count` times along its destination rows (an NCHW
    /// space-to-depth's image row a repetition), through the cache with
    /// AVX2's kernels.
    fn continued_deinterleave(unit: usize, nx: usize, ny: usize, count: usize) -> Kernel {
        let u = unit as isize;
        let rows = Rows { count, ss: (nx * ny * unit + 40) as isize, ds: ny as isize * u };
        let m = Mode { nt: false, isa: Isa::Avx2, fetch: false };
        kernel(&TileShape { rows, nx, ny, ssy: nx as isize * u, dsx: (count * ny * unit + 5) as isize, unit, m })
    }

    /// Deinterleaves of bytes and 3-byte units into rows shorter than a
    /// vector, repeated along them to a line, go joined; rows of a vector,
    /// other units, joined rows under a line and repetitions of more than
    /// half the stage do not.
    #[test]
    fn continued_short_deinterleaves_go_joined() {
        if Isa::detect() < Isa::Avx2 {
            return;
        }
        let joined = |unit, nx, ny, count| continued_deinterleave(unit, nx, ny, count) == Kernel::JoinedDeinterleave;
        assert!(joined(1, 12, 15, 232));
        assert!(joined(1, 14, 8, 8));
        assert!(joined(3, 6, 5, 56));
        assert!(!joined(1, 12, 16, 232));
        assert!(!joined(3, 6, 6, 56));
        assert!(!joined(2, 12, 7, 232));
        assert!(!joined(4, 8, 2, 64));
        assert!(!joined(1, 14, 8, 7));
        assert!(!joined(1, 14, 8, 1));
        assert!(!joined(1, 300, 14, 9));
    }

    /// Where AVX-512's masks run, deinterleaves of 2- and 4-byte units,
    /// and of bytes in more streams than the byte permutes take, go in
    /// AVX2's stream squares ahead of the transpose's masked squares and
    /// the byte permutes (`streams::leads_deinterleave`); bytes in fewer
    /// streams, and 3- and 6-byte units, do not.
    #[test]
    fn deinterleaves_of_2_and_4_byte_units_lead_with_the_stream_squares_where_masks_run() {
        if !Isa::detect().runs_vbmi() {
            return;
        }
        assert_eq!(space_to_depth(2, 13, 16, 10), Kernel::Deinterleave);
        assert_eq!(space_to_depth(2, 8, 30, 10), Kernel::Deinterleave);
        assert_eq!(space_to_depth(4, 12, 9, 10), Kernel::Deinterleave);
        assert_eq!(space_to_depth(4, 15, 14, 1), Kernel::Deinterleave);
        assert_eq!(space_to_depth(1, 16, 16, 10), Kernel::Deinterleave);
        assert_eq!(space_to_depth(1, 12, 16, 10), Kernel::Permute(Way::Deinterleave));
        assert_ne!(space_to_depth(3, 15, 8, 10), Kernel::Deinterleave);
        assert_ne!(space_to_depth(6, 11, 8, 10), Kernel::Deinterleave);
    }

    /// Where AVX-512's masks run, a transpose's tile of 8-byte units
    /// through the cache goes by the tile's own kernels (their square
    /// blocks: `streams::blocks_through_cache`), streamed by the
    /// transpose's squares; 4-byte units by the squares both ways.
    #[test]
    fn float64_transposes_through_the_cache_go_in_the_tiles_own_blocks_where_masks_run() {
        if !Isa::detect().runs_vbmi() {
            return;
        }
        let transpose = |unit: usize, nt: bool| {
            let (nx, ny) = (266, 318);
            let (ssy, dsx) = ((nx * unit) as isize, (ny * unit) as isize);
            kernel(&TileShape {
                rows: Rows::ONE,
                nx,
                ny,
                ssy,
                dsx,
                unit,
                m: Mode { nt, isa: Isa::Avx512Vbmi, fetch: false },
            })
        };
        assert_eq!(transpose(8, false), Kernel::Own);
        assert_eq!(transpose(8, true), Kernel::Transpose);
        assert_eq!(transpose(4, false), Kernel::Transpose);
        assert_eq!(transpose(4, true), Kernel::Transpose);
    }

    /// Where AVX-512's masks run, a float64 transpose through the cache
    /// whose rows crowd the first-level cache (sides powers of two, rows
    /// 256 bytes to 8 KiB apart) goes in the transpose's squares, where
    /// both its sides are 32 or more and it is under 8 MiB, with the
    /// repetitions that continue its rows (`crowded`); its
    /// neighbours with a side of 31, with rows a line past those, or of
    /// 8 MiB go as before: the register transposes' deinterleave of whole
    /// source rows, or the tile's own kernels.
    #[test]
    fn float64_transposes_whose_rows_crowd_go_in_the_squares() {
        if !Isa::detect().runs_vbmi() {
            return;
        }
        if !first_level_as_measured() {
            return;
        }
        let transpose = |nx: usize, ny: usize, pad: usize| {
            let (ssy, dsx) = ((nx * 8 + pad) as isize, (ny * 8 + pad) as isize);
            let m = Mode { nt: false, isa: Isa::Avx512Vbmi, fetch: false };
            kernel(&TileShape { rows: Rows::ONE, nx, ny, ssy, dsx, unit: 8, m })
        };
        assert_eq!(transpose(128, 128, 0), Kernel::Transpose);
        assert_eq!(transpose(256, 128, 0), Kernel::Transpose);
        assert_eq!(transpose(32, 256, 0), Kernel::Transpose);
        // A side of 31: whole source rows of 31 units, deinterleaved.
        assert_eq!(transpose(31, 256, 0), Kernel::Deinterleave);
        assert_eq!(transpose(256, 31, 0), Kernel::Own);
        assert_eq!(transpose(128, 128, 64), Kernel::Own);
        assert_eq!(transpose(1024, 1024, 0), Kernel::Own);
        assert_eq!(transpose(1024, 1023, 0), Kernel::Transpose);
        // Repetitions: the bound is on the matrix the squares take, which
        // those that continue the tile's rows join (128 KiB tiles, 64 of
        // them 8 MiB), not those apart.
        let repeated = |count: usize, continued: bool| {
            // Continued: destination rows of `count * 128` units. Apart:
            // 64 bytes between one repetition's part of a row and the
            // next's, the rows 1 MiB apart.
            let (ds, dsx) = if continued { (1024, count as isize * 1024) } else { (1024 + 64, 1 << 20) };
            let rows = Rows { count, ss: 128 * 1024 + 64, ds };
            let m = Mode { nt: false, isa: Isa::Avx512Vbmi, fetch: false };
            kernel(&TileShape { rows, nx: 128, ny: 128, ssy: 1024, dsx, unit: 8, m })
        };
        assert_eq!(repeated(63, true), Kernel::Transpose);
        assert_eq!(repeated(64, true), Kernel::Own);
        assert_eq!(repeated(64, false), Kernel::Transpose);
    }

    /// With VBMI, deinterleaves of packed 6- and 12-byte units go in the
    /// transpose's squares where the repetitions continue a short side to
    /// 8 units or more (`takes_squares`, for the matrix of them all), and
    /// 5- and 6-byte units not in squares by the byte permutes where a
    /// step holds two units of each stream; otherwise the tile's own.
    #[test]
    fn packed_deinterleaves_take_the_squares_or_the_permutes() {
        if !Isa::detect().runs_vbmi() {
            return;
        }
        // 15 streams of 3-unit rows: continued 8 times, a 24 x 15 matrix.
        assert_eq!(space_to_depth(6, 15, 3, 8), Kernel::Transpose);
        assert_eq!(space_to_depth(12, 15, 3, 8), Kernel::Transpose);
        // Once, 3 rows: too short a side for the squares; 15 streams of
        // 6 bytes are too many for the permutes (one unit of each a step).
        assert_eq!(space_to_depth(6, 15, 3, 1), Kernel::Own);
        assert_eq!(space_to_depth(12, 15, 3, 1), Kernel::Own);
        // 6 streams (too few for the squares): the permutes, for 5- and
        // 6-byte units alone, not 8 (float64's own kernels).
        assert_eq!(space_to_depth(6, 6, 5, 8), Kernel::Permute(Way::Deinterleave));
        assert_eq!(space_to_depth(5, 6, 5, 8), Kernel::Permute(Way::Deinterleave));
        // 11 streams of 5 rows, once: too many for the permutes' two units
        // of 6 bytes a step, too short a side for the squares.
        assert_eq!(space_to_depth(6, 11, 5, 1), Kernel::Own);
        assert_ne!(space_to_depth(8, 6, 5, 8), Kernel::Permute(Way::Deinterleave));
    }
}
