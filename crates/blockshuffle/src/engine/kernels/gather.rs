//! Small destination blocks gathered by byte permutes (AVX512-VBMI, or
//! AVX2's byte shuffles): a block of up to 256 destination bytes whose
//! source bytes lie in a few contiguous rows, such as einops' `b (h p1)
//! (w p2) c -> b h w (c p2 p1)` with small `p1`, `p2` and `c`, a
//! three-way transpose of each `p1 x p2 x c` block.
//!
//! Built once by the planner ([`Gather::new`]): the block's source bytes
//! as maximal contiguous rows, placed in the lanes of up to four
//! registers (each row whole in one where that takes fewer loads:
//! [`place_rows`]), and the permutes' indices that put each destination
//! byte in place. A block is then a masked load per row and register it
//! lies in, and for each 64 destination bytes one two-register permute
//! (`vpermt2b`), or two and a blend from four registers, and one store,
//! whatever the loops inside it.
//!
//! Where the next blocks' rows continue a block's (depth-to-space of
//! short spatial rows: a row's next spatial row follows it in the
//! source), 2 to 4 blocks go at once ([`Gather::repeated`]): their rows
//! loaded once, as longer rows, each block's parts permuted and stored at
//! its own place.
//!
//! Without VBMI, AVX2 gathers blocks of a whole number of 16 bytes
//! ([`Gather::runs_on`]): the rows cut into pieces of at most 16 bytes,
//! each loaded exactly into both lanes of a register, and each 32
//! destination bytes the OR of a byte shuffle (`vpshufb`) of every piece
//! they take bytes from, at most [`MAX_SHUFFLES`] a block, their tables
//! built with the gather.
//!
//! What it buys is measured at the planner's rule that makes blocks of
//! the innermost loops (`plan::gathers::gather_block`).
//!
//! Layer: kernels; imports [`nest`](super::nest) and arch.

use arrayvec::ArrayVec;

use super::nest::Rows;
use crate::engine::arch::mem::lanes;
use crate::engine::arch::Isa;

/// The most destination bytes of a block: four registers (and the most
/// source bytes: four registers' lanes).
pub(crate) const MAX_BLOCK: usize = 256;

/// The most masked loads of a block: a row's part in one register each.
/// (Measured, ratio to memcpy, alternated runs: the 17 broad workloads,
/// seeds 26, 801 and 802, whose blocks take 17 to 32 loads, 4.9 -> 5.2
/// gathered; PyTorch pixel unshuffle of float32 by 8, 28 loads, 0.9 ->
/// 1.8.)
const MAX_LOADS: usize = 16;

/// The fewest destination bytes of a block the planner gathers: a
/// block's fixed cost (a permute, a store, a masked load per row) is
/// paid per block, however few its bytes.
pub(crate) const MIN_BLOCK: usize = 16;

/// The most pieces (16 bytes of a row at most each) of a block AVX2
/// gathers: their lane numbers, `piece * 16 + lane`, fit in a byte.
const MAX_PIECES: usize = 16;

/// The most byte shuffles (one of a piece into 32 destination bytes) of a
/// block AVX2 gathers.
const MAX_SHUFFLES: usize = 32;

/// A piece of a source row for AVX2's shuffles: `n` bytes (1 to 16) from
/// `at` (bytes from the block's source position), byte `b` in lane `b`,
/// loaded exactly by [`load_part`](crate::engine::arch::vector::load_part).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Piece {
    at: isize,
    n: u8,
}

/// A row's part in one register: the lanes `mask` of register `reg` hold
/// the source bytes from `at` (bytes from the block's source position)
/// plus the lane, so the load of lane `t` reads byte `at + t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Load {
    reg: u8,
    at: isize,
    mask: u64,
}

/// A permute's 64 destination bytes (or fewer, at a block's end): `n`
/// bytes from `at` (bytes from the first block's destination position).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Part {
    at: isize,
    n: u8,
}

/// How a block of `len` destination bytes is gathered, or `copies` such
/// blocks at once whose source rows continue one another's (see
/// [`Gather::repeated`]): plain data, built once by the planner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Gather {
    len: usize,
    /// Blocks gathered at once.
    copies: usize,
    /// The loads, by register.
    loads: ArrayVec<Load, MAX_LOADS>,
    /// Registers the loads fill (1 to 4), and the end of each one's loads.
    regs: usize,
    ends: [u8; MAX_BLOCK / 64],
    /// The permutes' destinations: each copy's parts, copy by copy. A
    /// table, read as each part is stored: two loads more a part, which
    /// the broad workloads' single blocks measured 1.5 to 4% slower than
    /// parts computed for one block alone; but computed from the copies'
    /// stride, the copies gained half as much, and a branch to the
    /// computed parts for single blocks made both slower (single blocks
    /// 18%).
    parts: ArrayVec<Part, { MAX_BLOCK / 64 }>,
    /// Destination byte `t` of part `q` is lane `idx[q * 64 + t]` of the
    /// registers side by side (register `idx[..] / 64`).
    idx: [u8; MAX_BLOCK],
    /// AVX2's form ([`Avx2`]), where AVX2 gathers the block (see
    /// [`Gather::runs_on`]).
    avx2: Option<Avx2>,
}

/// How AVX2 gathers a block: its rows in pieces, and for each 32
/// destination bytes (a part) the byte shuffles of the pieces they take
/// bytes from: shuffle `j` puts piece `piece[j]`'s lanes `table[j]` in
/// place (a set top bit: none), for `j` in `ends[p - 1]..ends[p]` of part
/// `p`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Avx2 {
    pieces: ArrayVec<Piece, MAX_PIECES>,
    piece: ArrayVec<u8, MAX_SHUFFLES>,
    table: ArrayVec<[u8; 32], MAX_SHUFFLES>,
    ends: [u8; MAX_BLOCK / 32],
}

impl Gather {
    /// The gather of blocks whose destination byte `t` comes from source
    /// byte `from[t]` (bytes from the block's source position), or `None`
    /// unless there are 2 to [`MAX_BLOCK`] bytes in rows that, packed side
    /// by side, take at most [`MAX_LOADS`] loads (placed, they may take
    /// fewer: [`place_rows`]). Its loads read exactly the bytes `from`
    /// names.
    pub(crate) fn new(from: &[isize]) -> Option<Gather> {
        Gather::repeated(from, 1, 0, 0)
    }

    /// The gather of `copies` blocks at once, copy `j` of each the block of
    /// [`Gather::new`] (of `from`) moved `j * ss` source and `j * ds`
    /// destination bytes on: their source rows loaded once for all the copies
    /// where they continue one another (such as a block's rows and the next
    /// block's, `ss` bytes on, in the rows of a depth-to-space whose spatial
    /// rows are short). `None` unless a block is 2 to [`MAX_BLOCK`] bytes,
    /// the copies' bytes at most [`MAX_BLOCK`] in at most four permutes (of
    /// 64 destination bytes each, a block's own), their rows taking at most
    /// [`MAX_LOADS`] loads packed side by side ([`place_rows`]). Its loads
    /// read exactly the bytes the copies' `from` name. AVX2's shuffles gather
    /// one copy only ([`Gather::runs_on`]).
    pub(crate) fn repeated(from: &[isize], copies: usize, ss: isize, ds: isize) -> Option<Gather> {
        let len = from.len();
        let per_copy = len.div_ceil(64);
        if !(2..=MAX_BLOCK).contains(&len) || copies == 0 || copies.checked_mul(per_copy)? > MAX_BLOCK / 64 {
            return None;
        }
        // The copies' source bytes, copy by copy.
        let mut all: ArrayVec<isize, MAX_BLOCK> = ArrayVec::new();
        for j in 0..copies as isize {
            for &f in from {
                all.try_push(f.checked_add(j.checked_mul(ss)?)?).ok()?;
            }
        }
        let mut sorted = all.clone();
        sorted.sort_unstable();
        // Rows: maximal runs of consecutive source bytes (a byte named
        // twice, by a broadcast, is loaded once), in source order.
        let mut runs: ArrayVec<(isize, isize), MAX_BLOCK> = ArrayVec::new();
        let mut i = 0;
        while i < sorted.len() {
            let start = sorted[i];
            let mut end = start + 1;
            while i < sorted.len() && sorted[i] <= end {
                end = end.max(sorted[i] + 1);
                i += 1;
            }
            runs.push((start, end));
        }
        // Each row's first lane ([`place_rows`]), and a load for each
        // register its lanes reach, by register.
        let lanes_at = place_rows(&runs)?;
        let mut loads: ArrayVec<Load, MAX_LOADS> = ArrayVec::new();
        for (&(start, end), &at) in runs.iter().zip(&lanes_at) {
            let row = at..at + (end - start) as usize;
            for reg in reached(at, row.len()) {
                let base = reg * 64;
                let (from, to) = (row.start.max(base) - base, row.end.min(base + 64) - base);
                let at = start - (row.start as isize - base as isize);
                loads.try_push(Load { reg: reg as u8, at, mask: lanes(from, to) }).ok()?;
            }
        }
        loads.sort_by_key(|l| l.reg);
        // Each row's source start and first lane, in source order.
        let starts: ArrayVec<(isize, usize), MAX_BLOCK> = runs.iter().map(|r| r.0).zip(lanes_at).collect();
        let regs = loads.last().map_or(1, |l| l.reg as usize + 1);
        let mut ends = [0u8; MAX_BLOCK / 64];
        for (r, end) in ends.iter_mut().enumerate() {
            *end = loads.iter().filter(|l| l.reg as usize <= r).count() as u8;
        }
        // Copy `j`'s part `p` is permute `j * per_copy + p`.
        let mut idx = [0u8; MAX_BLOCK];
        let mut parts: ArrayVec<Part, { MAX_BLOCK / 64 }> = ArrayVec::new();
        for j in 0..copies {
            for p in 0..per_copy {
                let n = (len - p * 64).min(64);
                let q = parts.len();
                parts.push(Part { at: (j as isize).checked_mul(ds)?.checked_add(p as isize * 64)?, n: n as u8 });
                for t in 0..n {
                    let s = all[j * len + p * 64 + t];
                    // The row holding byte `s`: the last starting at or before it.
                    let &(start, at) =
                        starts.iter().rev().find(|(start, _)| *start <= s).expect("every byte is in a row");
                    idx[q * 64 + t] = (at + (s - start) as usize) as u8;
                }
            }
        }
        let avx2 = if copies == 1 { Avx2::new(&runs, from) } else { None };
        Some(Gather { len, copies, loads, regs, ends, parts, idx, avx2 })
    }

    /// Whether [`run`] gathers these blocks on `isa` by its vector
    /// kernels: every block with VBMI; with AVX2, those of a whole number
    /// of 16 bytes whose rows make at most [`MAX_PIECES`] pieces, taken by
    /// at most [`MAX_SHUFFLES`] shuffles.
    pub(crate) fn runs_on(&self, isa: Isa) -> bool {
        isa >= Isa::Avx512Vbmi || isa >= Isa::Avx2 && self.avx2.is_some()
    }

    /// Destination bytes of a block.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Blocks gathered at once (see [`Gather::repeated`]).
    pub(crate) fn copies(&self) -> usize {
        self.copies
    }

    /// Source rows' loads of a block (a row's part in each register).
    pub(crate) fn loads(&self) -> usize {
        self.loads.len()
    }
}

/// The first lane of each of `runs` (source rows `start..end`, in
/// source order) in the registers a gather loads (a load for each
/// register a row's lanes reach), `None` past their [`MAX_BLOCK`] lanes
/// or, packed side by side, [`MAX_LOADS`] loads. Where it takes fewer
/// loads, no row of at most 64 bytes straddles two registers: each goes
/// in the first register with room for it whole, the longest first, and
/// a longer row from a register's start; otherwise the rows are packed
/// side by side in source order. A row that straddles takes a load more,
/// and a block's time is mostly its loads: OpenVINO depth-to-space by 6
/// of 3-D blocks of 6-byte units, 6 rows of 24 bytes, 8 loads packed, 6
/// placed, 0.86 of the time. Measured on the 391 gathered workloads of
/// broad seeds 26 and 801 to 810 (one thread, 6 alternated runs, the
/// operator's time after over before): 0.95 (the 134 of seeds 26 and 801
/// to 803, 0.946; the 257 of seeds 804 to 810, 0.957), 160 faster by
/// more than 5%; of the 21 slower by more than 5% in that run, rerun 10
/// times, 2 (1.06, and OpenVINO batch-to-space of float32 cropped on W,
/// 5 MiB, whose 4 rows of 36 bytes take 4 loads where they took 6, 1.17).
///
/// The limit stays that of the rows packed, where it was measured: the
/// 6 blocks of broad seeds 26 and 801 to 803 that placed rows would have
/// brought under it (16 rows of 10 to 15 bytes, interleaved by the tile
/// kernels otherwise) took 1.24 to 1.86 times as long gathered.
fn place_rows(runs: &[(isize, isize)]) -> Option<ArrayVec<usize, MAX_BLOCK>> {
    let len = |k: usize| (runs[k].1 - runs[k].0) as usize;
    let loads = |at: &[usize]| -> usize { at.iter().enumerate().map(|(k, &a)| reached(a, len(k)).len()).sum() };
    let mut packed: ArrayVec<usize, MAX_BLOCK> = ArrayVec::new();
    let mut lane = 0usize;
    for k in 0..runs.len() {
        packed.push(lane);
        lane = lane.checked_add(len(k))?;
    }
    // The rows hold at most `MAX_BLOCK` bytes (`repeated` takes no more):
    // the first check states the bound rather than meets it.
    if lane > MAX_BLOCK || loads(&packed) > MAX_LOADS {
        return None;
    }
    // Placed whole: the longest first; `fill[r]`, register `r`'s lanes
    // taken from its start.
    let mut order: ArrayVec<usize, MAX_BLOCK> = (0..runs.len()).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(len(k)));
    let mut fill = [0usize; MAX_BLOCK / 64];
    let mut placed = packed.clone();
    for &k in &order {
        let n = len(k);
        let r = if n <= 64 {
            (0..fill.len()).find(|&r| fill[r] + n <= 64)
        } else {
            let regs = n.div_ceil(64);
            (0..=fill.len().saturating_sub(regs)).find(|&r| fill[r..r + regs].iter().all(|&f| f == 0))
        };
        let Some(r) = r else { return Some(packed) };
        let at = r * 64 + fill[r];
        placed[k] = at;
        for (q, f) in fill.iter_mut().enumerate().take((at + n).div_ceil(64)).skip(r) {
            *f = (at + n).min((q + 1) * 64) - q * 64;
        }
    }
    Some(if loads(&placed) < loads(&packed) { placed } else { packed })
}

/// The registers that a row of `n` bytes from lane `at` reaches: a load
/// for each.
fn reached(at: usize, n: usize) -> std::ops::Range<usize> {
    at / 64..(at + n).div_ceil(64)
}

/// Whether the planner may gather blocks of `len` destination bytes on
/// `isa`: at least [`MIN_BLOCK`] bytes, with AVX512-VBMI, or with AVX2 a
/// whole number of 16 bytes (the portable [`run`] is the kernel's
/// reference, for other ISAs' tests). Asked before a block's [`Gather`]
/// is built, which then says whether it runs on `isa` ([`Gather::runs_on`]);
/// what it buys is measured at the planner's rule (`gather_block`).
pub(crate) fn takes(len: usize, isa: Isa) -> bool {
    len >= MIN_BLOCK && (isa >= Isa::Avx512Vbmi || isa >= Isa::Avx2 && len.is_multiple_of(16))
}

impl Avx2 {
    /// AVX2's form of the gather whose destination byte `t` comes from
    /// source byte `from[t]`, the source bytes in `runs` (maximal,
    /// `start..end`): `None` unless `from` is a whole number of 16 bytes,
    /// its rows make at most [`MAX_PIECES`] pieces (16 bytes each, the last
    /// ending where its row does; a row shorter than 16 bytes one piece)
    /// and its parts take at most [`MAX_SHUFFLES`] shuffles in all.
    fn new(runs: &[(isize, isize)], from: &[isize]) -> Option<Avx2> {
        if !from.len().is_multiple_of(16) {
            return None;
        }
        let mut pieces: ArrayVec<Piece, MAX_PIECES> = ArrayVec::new();
        for &(start, end) in runs {
            let mut at = start;
            while at < end {
                let piece = Piece { at: at.min(end - 16).max(start), n: (end - start).min(16) as u8 };
                pieces.try_push(piece).ok()?;
                at += 16;
            }
        }
        let mut g = Avx2 { pieces, piece: ArrayVec::new(), table: ArrayVec::new(), ends: [0; MAX_BLOCK / 32] };
        for (p, part) in from.chunks(32).enumerate() {
            // A shuffle for each piece this part takes bytes from, in the
            // order of the part's bytes.
            let first = g.piece.len();
            for (t, &s) in part.iter().enumerate() {
                let (k, c) = g.pieces.iter().enumerate().find(|(_, c)| (c.at..c.at + c.n as isize).contains(&s))?;
                let lane = (s - c.at) as u8;
                let j = match g.piece[first..].iter().position(|&q| q as usize == k) {
                    Some(j) => first + j,
                    None => {
                        g.piece.try_push(k as u8).ok()?;
                        g.table.push([0x80; 32]);
                        g.piece.len() - 1
                    }
                };
                g.table[j][t] = lane;
            }
            g.ends[p] = g.piece.len() as u8;
        }
        Some(g)
    }
}

/// Gathers `outer.count * rows.count` repetitions of `g`'s blocks (its
/// [`copies`](Gather::copies) at once): repetition `(o, r)` from the
/// source at `src + o * outer.ss + r * rows.ss` (its bytes at the offsets
/// `g` was built from) to the destination at `dst + o * outer.ds + r *
/// rows.ds` (each copy's `g.len()` bytes at its own offset from there),
/// with the byte permutes when the CPU and `isa` run them, one byte at a
/// time otherwise. `nt`: blocks of whole lines at line-aligned
/// destinations bypass the cache.
///
/// Two loops of blocks rather than one: a call's setup (the permutes'
/// indices into registers) is paid once for both, where the inner loop
/// is short (4 to 16 blocks in most plans). Measured on the 102 broad
/// workloads of seeds 26, 801 and 802 whose blocks are gathered (one
/// thread, 8 alternated runs, each workload's best, ratio to memcpy),
/// against a call per inner loop: geomean 2.63 -> 2.40; under 1 MiB (77)
/// 3.18 -> 2.85.
///
/// # Safety
/// Every source byte of every block readable, every destination byte
/// writable, without overlap.
pub(crate) unsafe fn run(g: &Gather, outer: Rows, rows: Rows, src: *const u8, dst: *mut u8, nt: bool, isa: Isa) {
    #[cfg(target_arch = "x86_64")]
    if isa.runs_vbmi() {
        // SAFETY: forwarded; `runs_vbmi` checked the CPU's features.
        return unsafe { x86::run(g, outer, rows, src, dst, nt) };
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(a) = g.avx2.as_ref().filter(|_| isa >= Isa::Avx2 && is_x86_feature_detected!("avx2")) {
        // SAFETY: forwarded; the CPU has AVX2 (checked).
        return unsafe { x86::run_avx2(g, a, outer, rows, src, dst, nt) };
    }
    let _ = (nt, isa);
    each_block(outer, rows, src, dst, |s, d| {
        let mut v = [0u8; MAX_BLOCK];
        for l in &g.loads {
            for (t, lane) in v[l.reg as usize * 64..][..64].iter_mut().enumerate() {
                if l.mask >> t & 1 == 1 {
                    // SAFETY: the lanes of a load's mask are its row's source bytes (caller).
                    *lane = unsafe { *s.wrapping_offset(l.at + t as isize) };
                }
            }
        }
        for (q, part) in g.parts.iter().enumerate() {
            for t in 0..part.n as usize {
                // SAFETY: a copy's destination bytes (caller).
                unsafe { *d.wrapping_offset(part.at).add(t) = v[g.idx[q * 64 + t] as usize] };
            }
        }
    });
}

/// Calls `f` with the source and destination of block `(o, r)` of
/// [`run`], for every `o` of `outer` and `r` of `rows`: a loop of rows
/// alone where `outer` is one repetition, as in the executor's calls
/// from its loop of units (plans that stream, or whose loops carry a
/// window): an outer loop of one there measured 2 to 9% slower on the
/// small blocks of windowed plans.
#[inline(always)]
fn each_block(outer: Rows, rows: Rows, src: *const u8, dst: *mut u8, mut f: impl FnMut(*const u8, *mut u8)) {
    if outer.count == 1 {
        for r in 0..rows.count {
            let (s, d) = rows.at(r, src, dst);
            f(s, d);
        }
        return;
    }
    for o in 0..outer.count {
        let (src, dst) = outer.at(o, src, dst);
        for r in 0..rows.count {
            let (s, d) = rows.at(r, src, dst);
            f(s, d);
        }
    }
}

/// Whether every block [`run`] gathers is whole destination lines at a
/// line's start, so that its stores may bypass the cache.
fn streams_lines(g: &Gather, outer: Rows, rows: Rows, dst: *mut u8) -> bool {
    g.parts.iter().all(|p| p.n == 64 && p.at % 64 == 0)
        && rows.ds % 64 == 0
        && outer.ds % 64 == 0
        && (dst as usize).is_multiple_of(64)
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{each_block, lanes, streams_lines, Avx2, Gather, Rows, MAX_BLOCK, MAX_PIECES};
    use crate::engine::arch::mem::{prefetch, FETCH_AHEAD};
    use crate::engine::arch::vector::{high_lanes, load_part, permute_four};

    /// [`super::run`] by byte permutes.
    ///
    /// # Safety
    /// As [`super::run`]; the CPU has AVX-512F, BW and VBMI.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    pub(super) unsafe fn run(g: &Gather, outer: Rows, rows: Rows, src: *const u8, dst: *mut u8, nt: bool) {
        // SAFETY: forwarded, with the registers the loads fill.
        unsafe {
            match g.regs {
                1 => blocks::<1>(g, outer, rows, src, dst, nt),
                2 => blocks::<2>(g, outer, rows, src, dst, nt),
                3 => blocks::<3>(g, outer, rows, src, dst, nt),
                _ => blocks::<4>(g, outer, rows, src, dst, nt),
            }
        }
    }

    /// [`run`] of a gather whose loads fill `REGS` registers (so that
    /// they stay in registers, and a gather of one or two takes one
    /// permute per 64 destination bytes).
    ///
    /// # Safety
    /// As [`run`]; `g`'s loads fill at most `REGS` registers.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    unsafe fn blocks<const REGS: usize>(g: &Gather, outer: Rows, rows: Rows, src: *const u8, dst: *mut u8, nt: bool) {
        let stream = nt && streams_lines(g, outer, rows, dst);
        // SAFETY: each load reads only its mask's lanes, the copies' source
        // bytes; the stores write each copy's `len` destination bytes (its
        // parts: caller), streamed only in whole aligned lines (checked
        // above).
        unsafe {
            let mut idx = [_mm512_setzero_si512(); MAX_BLOCK / 64];
            // Lanes of the high pair (registers 2 and 3) in each part.
            let mut high = [0u64; MAX_BLOCK / 64];
            for q in 0..g.parts.len() {
                idx[q] = _mm512_loadu_si512(g.idx[q * 64..].as_ptr().cast());
                high[q] = high_lanes(idx[q]);
            }
            each_block(outer, rows, src, dst, |s, d| {
                // In streamed plans (`nt`: their tensors past the caches),
                // each load's source `FETCH_AHEAD` on (the loads are
                // masked: see there). Measured against no
                // fetch, one thread, 4 alternated runs, the operator's time
                // after over before, on the 8 broad workloads of seeds 26
                // and 801 to 810 whose streamed plans gather: 0.70, 7
                // faster by more than 5% (PyTorch pixel unshuffle of
                // complex128 by 14, 41 MiB, 0.54), one slower (an einops
                // rearrange of 146 MiB, 1.07). The loads of the block a
                // repetition of `outer` on measured 0.87 there (4 slower,
                // up to 1.51), and through the cache, where a gather's
                // time is its loads, 1.09 of the time (98 workloads of
                // seeds 26, 801 and 802).
                if nt {
                    for l in &g.loads {
                        prefetch(s.wrapping_offset(l.at).wrapping_add(FETCH_AHEAD), 1);
                    }
                }
                // Zero-masked loads ORed together: independent of one
                // another (merged into one register, each load waited for
                // the last, and a block of 5 rows took twice as long).
                let mut v = [_mm512_setzero_si512(); 4];
                for (reg, v) in v.iter_mut().enumerate().take(REGS) {
                    let from = if reg == 0 { 0 } else { g.ends[reg - 1] as usize };
                    for l in &g.loads[from..g.ends[reg] as usize] {
                        *v = _mm512_or_si512(*v, _mm512_maskz_loadu_epi8(l.mask, s.wrapping_offset(l.at).cast()));
                    }
                }
                for (q, part) in g.parts.iter().enumerate() {
                    let out = match REGS {
                        1 => _mm512_permutexvar_epi8(idx[q], v[0]),
                        2 => _mm512_permutex2var_epi8(v[0], idx[q], v[1]),
                        _ => permute_four(&v, idx[q], high[q]),
                    };
                    let to = d.wrapping_offset(part.at);
                    if stream {
                        _mm512_stream_si512(to.cast(), out);
                    } else {
                        _mm512_mask_storeu_epi8(to.cast(), lanes(0, part.n as usize), out);
                    }
                }
            });
        }
    }

    /// [`super::run`] by AVX2's byte shuffles (`a`, `g`'s AVX2 form):
    /// each block's pieces loaded exactly into both lanes of a register,
    /// and each 32 destination bytes the OR of a shuffle of every piece
    /// they take bytes from, by the tables built with the gather.
    ///
    /// # Safety
    /// As [`super::run`]; `a` is `g`'s AVX2 form; the CPU has AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn run_avx2(
        g: &Gather,
        a: &Avx2,
        outer: Rows,
        rows: Rows,
        src: *const u8,
        dst: *mut u8,
        nt: bool,
    ) {
        // 32-byte destination parts (the last 16 bytes where `len` is an
        // odd number of 16).
        let parts = g.len.div_ceil(32);
        let stream = nt && streams_lines(g, outer, rows, dst);
        // SAFETY: each piece's load reads its `n` bytes, source bytes of
        // the block; the stores write the block's `len` destination bytes
        // (a whole number of 16, or `a` would not be: `Avx2::new`),
        // streamed only in whole aligned lines (checked above) (caller).
        unsafe {
            let mut v = [_mm256_setzero_si256(); MAX_PIECES];
            // `#[inline(always)]`: left to the compiler, the closure was
            // compiled out of line, a call a block. (An always-inlined
            // closure does not take this function's target features: its
            // intrinsics are inlined once it is, into `each_block`, itself
            // always inlined here; `.ci/inlined` checks that they are.)
            each_block(
                outer,
                rows,
                src,
                dst,
                #[inline(always)]
                |s, d| {
                    for (v, c) in v.iter_mut().zip(&a.pieces) {
                        *v = _mm256_broadcastsi128_si256(load_part(s.wrapping_offset(c.at), c.n as usize));
                    }
                    let mut j = 0;
                    for (p, &end) in a.ends.iter().enumerate().take(parts) {
                        let mut out = _mm256_setzero_si256();
                        while j < end as usize {
                            let table = _mm256_loadu_si256(a.table[j].as_ptr().cast());
                            out = _mm256_or_si256(out, _mm256_shuffle_epi8(v[a.piece[j] as usize], table));
                            j += 1;
                        }
                        let to = d.wrapping_add(p * 32);
                        if p * 32 + 32 > g.len {
                            _mm_storeu_si128(to.cast(), _mm256_castsi256_si128(out));
                        } else if stream {
                            _mm256_stream_si256(to.cast(), out);
                        } else {
                            _mm256_storeu_si256(to.cast(), out);
                        }
                    }
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gathers 3 x 5 blocks of `from` (the 5 `ss` and `ds` bytes apart,
    /// each 5 further apart, `gap` bytes past the last's destinations, in
    /// buffers with margins) with `isa` and compares the whole destination
    /// with the oracle's: every block's bytes, no other byte.
    fn check(from: &[isize], ss: isize, ds: isize, gap: usize, nt: bool, isa: Isa) {
        check_copies(from, (1, 0), ss, ds, gap, nt, isa);
    }

    /// [`check`] of `copies.0` copies of each block at once, `copies.1`
    /// source bytes apart, their destinations past the 5 blocks' (at line
    /// starts).
    fn check_copies(from: &[isize], copies: (usize, isize), ss: isize, ds: isize, gap: usize, nt: bool, isa: Isa) {
        let (m, css) = copies;
        let cds = (ds as usize * 5).next_multiple_of(64) as isize;
        let g = Gather::repeated(from, m, css, cds).expect("a gather");
        let lo = *from.iter().min().unwrap();
        let hi = *from.iter().max().unwrap();
        let rows = Rows { count: 5, ss, ds };
        // The outer loop: sources past the rows' and copies' (and 5 bytes
        // more), and destinations `gap` bytes past a line start past
        // theirs (with a gap of 64, at line starts, for the streamed
        // stores).
        let span = hi - lo + 1 + ss.abs() * 4 + css.abs() * (m as isize - 1);
        let outer = Rows { count: 3, ss: span + 5, ds: (m * cds as usize + gap) as isize };
        // The source: every block's bytes, from `base` bytes in.
        let src_len = (span + 2 * outer.ss) as usize + 128;
        let src: Vec<u8> = (0..src_len).map(|i| (i * 7 + i / 251) as u8).collect();
        let dst_len = 3 * outer.ds as usize;
        // 64-byte aligned destinations, for the streamed stores.
        let mut buf = vec![0xA5u8; dst_len + 64];
        let shift = buf.as_ptr().align_offset(64);
        let back = |step: isize, n: usize| if step < 0 { step.abs() * (n as isize - 1) } else { 0 };
        let base = -lo + back(ss, 5) + back(css, m);
        let mut want = vec![0xA5u8; dst_len];
        for o in 0..outer.count as isize {
            for r in 0..rows.count as isize {
                for j in 0..m as isize {
                    for (t, &f) in from.iter().enumerate() {
                        let s = src[(base + o * outer.ss + r * ss + j * css + f) as usize];
                        want[(o * outer.ds + r * ds + j * cds) as usize + t] = s;
                    }
                }
            }
        }
        // SAFETY: every block's bytes lie inside the buffers (as built).
        unsafe {
            run(&g, outer, rows, src.as_ptr().wrapping_offset(base), buf.as_mut_ptr().add(shift), nt, isa);
        }
        let what = format!("{from:?} copies {copies:?} ss {ss} ds {ds} gap {gap} nt {nt} {isa:?}");
        assert!(buf[shift..shift + dst_len] == want[..], "{what}");
    }

    /// A `p1 x p2 x c` block read `c`-fastest from `p1` rows `row` bytes
    /// apart, written `p1`-fastest (einops `(h p1) (w p2) c -> (c p2 p1)`).
    fn transpose3(p1: usize, p2: usize, c: usize, row: isize) -> Vec<isize> {
        let mut from = Vec::new();
        for ci in 0..c {
            for q in 0..p2 {
                for p in 0..p1 {
                    from.push(p as isize * row + (q * c + ci) as isize);
                }
            }
        }
        from
    }

    #[test]
    fn gathers_like_the_oracle_on_every_isa() {
        let cases: Vec<(Vec<isize>, isize, isize)> = vec![
            (transpose3(2, 8, 4, 1000), 32, 64),
            (transpose3(2, 8, 4, -1000), 32, 64),
            (transpose3(3, 13, 1, 500), 13, 39),
            (transpose3(4, 15, 1, 300), -15, 60),
            (transpose3(16, 1, 4, 77), 4, 64),
            (vec![5, 5, 6, 6, 0, 1], 7, 6),
            (vec![0, 100], 1, 2),
            ((0..64).rev().collect(), 64, 64),
            // Two registers: 3 rows of 30 bytes, two in the first (packed,
            // the third would straddle both).
            (transpose3(3, 10, 3, 200), 30, 90),
            // Three: 8 rows of 21 bytes; four: 4 rows of 64, 5 of 50
            // (packed, three straddling two registers each).
            (transpose3(8, 7, 3, 99), 21, 168),
            (transpose3(4, 16, 4, 300), 64, 256),
            (transpose3(4, 16, 4, -300), 64, 256),
            (transpose3(5, 25, 2, 777), 50, 250),
            ((0..256).rev().collect(), 256, 256),
            // AVX2's pieces: rows of 12 bytes (two 8-byte moves), of 24
            // and 40 (the last piece overlapping the one before), of 1
            // to 24 bytes, each reversed.
            (transpose3(4, 12, 1, 99), 12, 48),
            (transpose3(2, 12, 2, 500), 24, 48),
            (transpose3(2, 20, 2, -300), 40, 80),
            (rows_reversed(&[1, 2, 3, 5, 7, 9, 11, 12, 14]), 3, 64),
            (rows_reversed(&[4, 8, 6, 10, 13, 15, 16, 24]), -7, 96),
            // Rows placed whole, the longest first (see `place_rows`): 4
            // rows of 20 to 40 bytes in two registers; a row of 100 bytes
            // from a register's start, rows of 30 after it.
            (rows_reversed(&[30, 40, 20, 30]), 7, 120),
            ((0..30).chain(200..300).chain(400..430).collect(), 11, 160),
        ];
        let avx2 = Isa::detect().min(Isa::Avx2);
        for isa in [Isa::Portable, Isa::baseline(), avx2, Isa::detect()] {
            for (from, ss, ds) in &cases {
                for (nt, gap) in [(false, 64), (true, 64), (true, 72)] {
                    check(from, *ss, *ds, gap, nt, isa);
                }
            }
        }
    }

    /// Rows of `lens` bytes, 50 bytes apart, each read backwards, one after
    /// another.
    fn rows_reversed(lens: &[isize]) -> Vec<isize> {
        lens.iter().enumerate().flat_map(|(k, &n)| (0..n).rev().map(move |b| k as isize * 50 + b)).collect()
    }

    #[test]
    fn avx2_gathers_blocks_of_whole_16_bytes_in_pieces_of_their_rows() {
        let g = Gather::new(&transpose3(2, 20, 2, 300)).unwrap();
        let pieces = [(0, 16), (16, 16), (24, 16), (300, 16), (316, 16), (324, 16)];
        let a = g.avx2.as_ref().expect("AVX2's form");
        assert_eq!(a.pieces.iter().map(|c| (c.at, c.n)).collect::<Vec<_>>(), pieces);
        // A shuffle for each piece a part (32 destination bytes) takes
        // bytes from, in the order of its bytes: part 0 takes each row's
        // even bytes 0 to 30 (pieces 0, 3, 1, 4), part 1 its even bytes
        // 32 to 38 (2, 5) and odd bytes 1 to 23 (0, 3, 1, 4), part 2 its
        // odd bytes 25 to 39 (1, 4, 2, 5).
        let (parts, ends) = ([0, 3, 1, 4, 2, 5, 0, 3, 1, 4, 1, 4, 2, 5], [4, 10, 14]);
        assert_eq!((&a.piece[..], &a.ends[..3]), (&parts[..], &ends[..]));
        let g = Gather::new(&rows_reversed(&[1, 2, 3, 5, 7, 9, 11, 12, 14])).unwrap();
        assert!(g.runs_on(Isa::Avx2) && g.runs_on(Isa::Avx512) && !g.runs_on(Isa::Sse2));
        // Not a whole number of 16 bytes; 18 pieces (6 rows of 40
        // bytes); 12 pieces each in all 3 parts (36 shuffles): gathered
        // with VBMI only.
        for from in [transpose3(4, 15, 1, 300), rows_reversed(&[40; 6]), transpose3(12, 1, 8, 77)] {
            let g = Gather::new(&from).unwrap();
            assert!(!g.runs_on(Isa::Avx2) && g.runs_on(Isa::Avx512Vbmi), "{from:?}");
        }
        assert!(Gather::new(&transpose3(16, 1, 4, 77)).unwrap().runs_on(Isa::Avx2));
    }

    #[test]
    fn rows_are_the_maximal_runs_of_source_bytes_a_load_per_register() {
        let g = Gather::new(&transpose3(2, 8, 4, 1000)).unwrap();
        assert_eq!((g.len(), g.loads()), (64, 2));
        assert_eq!(g.loads[1], Load { reg: 0, at: 1000 - 32, mask: lanes(32, 64) });
        assert_eq!(Gather::new(&[3, 9, 4]).unwrap().loads(), 2);
        assert_eq!(Gather::new(&[0, 0]).unwrap().loads(), 1);
        // Rows of 50 bytes at lanes 0, 50, 100, 150, 200 (five do not fit
        // four registers whole): the second reaches registers 0 and 1, the
        // third 1 and 2, the fourth 2 and 3.
        let g = Gather::new(&transpose3(5, 25, 2, 777)).unwrap();
        assert_eq!(g.loads(), 8);
        assert_eq!(g.loads[1], Load { reg: 0, at: 777 - 50, mask: lanes(50, 64) });
        assert_eq!(g.loads[2], Load { reg: 1, at: 777 + 14, mask: lanes(0, 36) });
    }

    #[test]
    fn rows_go_whole_in_a_register_where_that_takes_fewer_loads() {
        // 6 rows of 24 bytes (OpenVINO depth-to-space by 6 of 6-byte
        // units), 576 bytes apart: packed, rows 2 and 5 straddle (8 loads);
        // placed, two a register (6).
        let from = rows_transposed(6, 24, 576);
        let g = Gather::new(&from).unwrap();
        assert_eq!((g.loads(), g.regs), (6, 3));
        let at = |r: isize, lane: usize| Load {
            reg: (lane / 64) as u8,
            at: r * 576 - (lane % 64) as isize,
            mask: lanes(lane % 64, lane % 64 + 24),
        };
        let want = [at(0, 0), at(1, 24), at(2, 64), at(3, 88), at(4, 128), at(5, 152)];
        assert_eq!(&g.loads[..], &want[..]);
        assert_eq!(&g.ends[..3], &[2, 4, 6]);
        // The longest first, each in the first register with room: rows
        // of 30, 40, 20 and 30 bytes go 40 + 20 and 30 + 30 (4 loads,
        // where packed the second straddles: 5).
        let g = Gather::new(&rows_reversed(&[30, 40, 20, 30])).unwrap();
        let placed: Vec<(u8, isize)> =
            g.loads.iter().map(|l| (l.reg, l.at + l.mask.trailing_zeros() as isize)).collect();
        assert_eq!(placed, [(0, 50), (0, 100), (1, 0), (1, 150)]);
        // A row of 100 bytes from a register's start (2 loads, where
        // packed after a row of 30 it reaches 3 registers), then rows of
        // 30 bytes where there is room for them whole.
        let from: Vec<isize> = (0..30).chain(200..300).chain(400..430).collect();
        let g = Gather::new(&from).unwrap();
        let placed: Vec<(u8, isize, u32)> =
            g.loads.iter().map(|l| (l.reg, l.at + l.mask.trailing_zeros() as isize, l.mask.count_ones())).collect();
        assert_eq!(placed, [(0, 200, 64), (1, 264, 36), (2, 0, 30), (2, 400, 30)]);
        // Packed where placing them takes as many loads: rows of 20 and 40
        // bytes side by side in register 0 (placed, the 40 first).
        let g = Gather::new(&rows_reversed(&[20, 40])).unwrap();
        let want = [Load { reg: 0, at: 0, mask: lanes(0, 20) }, Load { reg: 0, at: 30, mask: lanes(20, 60) }];
        assert_eq!(&g.loads[..], &want[..]);
    }

    /// `rows` source rows of `n` bytes, `apart` bytes apart, written
    /// transposed (a byte of each row in turn), as a depth-to-space of
    /// short spatial rows gathers them.
    fn rows_transposed(rows: usize, n: usize, apart: isize) -> Vec<isize> {
        (0..n).flat_map(|b| (0..rows).map(move |r| r as isize * apart + b as isize)).collect()
    }

    #[test]
    fn copies_whose_rows_continue_share_their_loads() {
        // 16 rows of 8 bytes (a 128-byte block), twice: rows of 16 bytes,
        // the 16 loads of one block; not continuing, 32 (more than a
        // gather has).
        let from = rows_transposed(16, 8, 512);
        assert_eq!(Gather::new(&from).map(|g| g.loads()), Some(16));
        assert_eq!(Gather::repeated(&from, 2, 8, 4096).map(|g| (g.loads(), g.copies())), Some((16, 2)));
        assert_eq!(Gather::repeated(&from, 2, 100, 4096), None);
        // At most four permutes: 3 copies of 100 bytes take 6.
        let from = rows_transposed(4, 25, 300);
        assert!(Gather::repeated(&from, 2, 25, 640).is_some());
        assert_eq!(Gather::repeated(&from, 3, 25, 640), None);
        assert_eq!(Gather::repeated(&from, 0, 25, 640), None);
        // AVX2's shuffles gather one copy only.
        let from = rows_transposed(2, 16, 300);
        assert!(Gather::repeated(&from, 1, 16, 64).unwrap().runs_on(Isa::Avx2));
        assert!(!Gather::repeated(&from, 2, 16, 64).unwrap().runs_on(Isa::Avx2));
    }

    #[test]
    fn gathers_copies_like_the_oracle_on_every_isa() {
        // (block, (copies, their source step), rows' source and destination steps)
        type Case = (Vec<isize>, (usize, isize), isize, isize);
        let cases: Vec<Case> = vec![
            // Continued rows: 16 of 8 bytes twice, 6 of 2 bytes four times
            // (a 12-byte block, its copies in one register), 4 of 25
            // bytes twice (two parts each, the second of 36 bytes), 3 of
            // 20 three times, backwards.
            (rows_transposed(16, 8, 512), (2, 8), 128, 128),
            (rows_transposed(6, 2, 40), (4, 2), 12, 12),
            (rows_transposed(4, 25, 300), (2, 25), 100, 100),
            (rows_transposed(3, 20, -200), (3, -20), 60, 64),
            // Whole lines (streamed when `nt`), and copies whose rows do
            // not continue.
            (rows_transposed(8, 8, 100), (2, 8), 64, 64),
            (rows_transposed(4, 8, 100), (3, 1000), 32, 40),
        ];
        let avx2 = Isa::detect().min(Isa::Avx2);
        for isa in [Isa::Portable, Isa::baseline(), avx2, Isa::detect()] {
            for (from, copies, ss, ds) in &cases {
                for (nt, gap) in [(false, 64), (true, 64), (true, 72)] {
                    check_copies(from, *copies, *ss, *ds, gap, nt, isa);
                }
            }
        }
    }

    #[test]
    fn declines_blocks_it_does_not_take() {
        assert_eq!(Gather::new(&[0]), None);
        assert_eq!(Gather::new(&(0..257).collect::<Vec<_>>()), None);
        assert!(Gather::new(&(0..256).collect::<Vec<_>>()).is_some());
        // 17 rows of one byte each; 16 rows of 15 bytes, packed 19 loads
        // (the 3 that straddle a register's end taking two each), though
        // placed 4 a register whole they would take 16 (see
        // `place_rows`); 16 rows of 16 take one each.
        assert_eq!(Gather::new(&(0..17).map(|i| i * 2).collect::<Vec<_>>()), None);
        assert!(Gather::new(&(0..16).map(|i| i * 2).collect::<Vec<_>>()).is_some());
        assert_eq!(Gather::new(&transpose3(16, 15, 1, 77)), None);
        assert_eq!(Gather::new(&transpose3(16, 16, 1, 77)).map(|g| g.loads()), Some(16));
        // 13 rows of 15 bytes: packed 16 loads, placed 13.
        assert_eq!(Gather::new(&transpose3(13, 15, 1, 77)).map(|g| g.loads()), Some(13));
    }
}
