//! The planner's rules for gathered blocks: which innermost loops make
//! a block that byte permutes gather whole ([`gather_block`]), and the
//! [`Gather`] that moves it.
//!
//! Layer: plan; imports [`order`](super::order) (loop predicates),
//! kernels and arch; never exec or [`compile`](super::compile).

use arrayvec::ArrayVec;

use super::order::free;
use crate::engine::arch::mem::LINE;
use crate::engine::arch::Isa;
use crate::engine::kernels::copy::odometer;
use crate::engine::kernels::gather::{self, Gather, MAX_BLOCK};
use crate::engine::kernels::nest::{Loop, MAX_LOOPS};

/// The innermost loops whose destination is one contiguous block of at
/// most [`MAX_BLOCK`] bytes, at least two of them, none carrying or read
/// by a window, with at least one loop outside them, as a [`Gather`]
/// (when `gather::takes` their length): the [`Block`], the index of the
/// first of them and the gather of a block (or of a few: see below) for
/// a plan that streams (`streaming`) or not, and fills padding (`fills`)
/// or not. The block then is the plan's unit, its
/// bytes moved by byte permutes whatever the loops inside it. A streaming
/// plan's blocks must be whole lines (streamed whole); others keep their
/// path.
///
/// A block of one loop is one unit from each of a few rows: an
/// interleave, which the tile kernels do better from whole rows (measured
/// on the 389 such workloads of seeds 26, 801 and 802, 3 alternated runs,
/// ratio to memcpy: 3.03 -> 4.77 gathered).
///
/// Measured on the 99 workloads of those seeds whose blocks it gathers
/// (one thread, ratio to memcpy, 3 alternated runs): geomean 7.29 ->
/// 4.31, 76 faster, 19 slower (with their outer loops one flat loop,
/// `Exec::flat`, 3.86). Blocks of up to 64 bytes (17) 13.2 ->
/// 7.3, 65 to 128 (34) 7.3 -> 4.9, 129 to 256 (48) 6.0 -> 3.3. einops
/// `b (h p1) (w p2) c -> b h w (c p2 p1)` of uint8 by 2 x 8 (67 MiB) 22.3
/// -> 0.97 (the 64-byte blocks streamed), of float16 by 3 x 5 38.0 ->
/// 2.0; PyTorch pixel unshuffle of float16 by 6 36.8 -> 3.0; the worst,
/// TF space-to-batch of float64 by 13 x 14 x 12 10.4 -> 18.3, ONNX DCR
/// depth-to-space of float32 by 13 7.4 -> 10.4 (both below 1 MiB).
///
/// Of the blocks of the innermost loops (two at least) whose rows take no
/// more loads than a gather has (packed side by side), and of their copies
/// (below), the one whose loads move the most destination bytes each goes
/// (the largest of those alike): a block's time is mostly its loads (see
/// `kernels::gather`). So a block whose rows take too many loads goes as a
/// block of fewer loops: OpenVINO depth-to-space by 4 of 3-D blocks of
/// 3-byte units, whose 240-byte blocks were tiles of 5 x 4 units, in
/// 60-byte blocks of 4 rows, 0.077 -> 0.028 ms; of float16, 0.079 -> 0.039
/// ms; space-to-depth by 5 of 12-byte units, 0.066 -> 0.048 ms (the 3 of
/// 1,920 broad workloads, seeds 26, 801 and 802, whose plans this changes;
/// 3 alternated runs). And a smaller block goes where its copies take fewer
/// loads a byte than the largest, which alone had been weighed: measured on
/// the 10 of the 391 gathered workloads of broad seeds 26 and 801 to 810
/// whose plans this changes (one thread, 10 alternated runs, the operator's
/// time after over before), 0.85, none slower by more than 5% (the 6 of
/// seeds 26 and 801 to 803, 0.82; the 4 of seeds 804 to 810, 0.90);
/// OpenVINO depth-to-space by 4 of 3-D blocks of float32, 256-byte blocks
/// of 16 rows of 16 bytes, as 64-byte blocks 4 at once, 0.64 of the time
/// (4.2 -> 2.7x memcpy). Measured with VBMI only: without it, the largest
/// block goes, as before.
///
/// With VBMI, through the cache, a loop outside the block whose
/// repetitions continue its source rows gives 2 to 4 blocks at once
/// ([`copies`]; where the plan pads, only without windows: `fills`).
/// Measured on the 25 broad workloads of seeds 26, 801 and 802 this
/// reaches (one thread, 10 alternated runs, each workload's best, ratio
/// to memcpy): 2.94 -> 2.12; TF NCHW depth-to-space of float32 by 16 with
/// rows of 2 (0.25 MiB) 6.8 -> 4.0, PyTorch pixel unshuffle of uint8 by
/// 10 with rows of 20, 5.0 -> 2.6; one slower, an einops rearrange of float64
/// whose 64-byte blocks went 4 at once (2 MiB), 1.14 -> 1.49. The other
/// 77 gathered workloads, 1.5 to 4% slower (see `Gather`'s parts).
///
/// Without VBMI, AVX2's byte shuffles gather blocks of bytes only
/// ([`gathers`]). Measured on an AMD Zen 3 (one thread, 4 alternated
/// runs, each workload's best, ratio to memcpy): the one broad workload
/// of 1,920 (seeds 26, 801, 802) this reaches, einops' uint8 above, 16.1
/// -> 1.9 (10.9 -> 2.2 in a second run); 40 more einops rearranges of
/// uint8 blocks drawn beside it (5 patterns, blocks 2 x 2 to 8 x 16, 0.5
/// to 96 MiB), the 8 it reaches 0.36 of the time (32 MiB, 3: 0.17;
/// `(c p2 p1)` by 2 x 16, 12.7 -> 1.9x memcpy), 2 slower (1.2, of 4 and
/// 0.5 MiB), 8 it does not reach 0.93. The 28 broad workloads
/// that AVX2's gathers reached with wider units, which the tile kernels
/// move whole, went 1.1 to 7.5 times slower (geomean 3.1; pixel shuffle
/// of float64 by 4, 1.4 -> 7.6x memcpy).
pub(super) fn gather_block(loops: &[Loop], unit: usize, streaming: bool, fills: bool, isa: Isa) -> Option<Block> {
    // The blocks of loops `k..`, largest last: `(k, len)`.
    let mut blocks: ArrayVec<(usize, usize), MAX_LOOPS> = ArrayVec::new();
    let mut k = loops.len();
    let mut len = unit;
    while k > 1 {
        let l = &loops[k - 1];
        let whole = len.saturating_mul(l.count);
        if !free(l) || l.ds != len as isize || whole > MAX_BLOCK {
            break;
        }
        (len, k) = (whole, k - 1);
        blocks.push((k, len));
    }
    if k + 2 > loops.len() || !gather::takes(len, isa) || (streaming && !len.is_multiple_of(LINE)) {
        return None;
    }
    // Destination byte `t` of a block comes from source byte `from[t]`;
    // the bytes of a block of fewer loops are the first of the largest's.
    let mut from: ArrayVec<isize, MAX_BLOCK> = ArrayVec::new();
    from.extend((0..len).map(|_| 0));
    odometer(&loops[k..], 0, 0, |so, dof| {
        for b in 0..unit {
            from[dof as usize + b] = so + b as isize;
        }
    });
    // Of the blocks whose rows take at most the loads a gather has (of two
    // loops at least), and of their copies, the one whose loads move the
    // most destination bytes each; of those alike, the largest. Without
    // VBMI (AVX2's shuffles, whose cost is not their loads), the largest.
    let copied = !streaming && isa >= Isa::Avx512Vbmi && (!fills || loops.iter().all(free));
    let bytes = |b: &Block| b.gather.len() * b.gather.copies();
    let mut best: Option<Block> = None;
    for &(k, len) in blocks.iter().rev().take_while(|&&(k, len)| k + 2 <= loops.len() && gather::takes(len, isa)) {
        if streaming && !len.is_multiple_of(LINE) {
            continue;
        }
        let Some(gather) = Gather::new(&from[..len]).filter(|g| gathers(g, unit, isa)) else { continue };
        // Copies through the cache with VBMI; where the plan fills
        // padding, only without windows (a fill writes one block where
        // the copies are several).
        let block = match copied.then(|| copies(loops, k, &from[..len], &gather)).flatten() {
            Some((o, copies)) => Block { k, gather: copies, copies_of: Some(o) },
            None => Block { k, gather, copies_of: None },
        };
        if best.as_ref().is_none_or(|b| block.gather.loads() * bytes(b) < b.gather.loads() * bytes(&block)) {
            best = Some(block);
        }
        if isa < Isa::Avx512Vbmi {
            break;
        }
    }
    best
}

/// A block that [`gather_block`] gathers: loops `k..` make it; `gather`
/// gathers it, or `gather.copies()` repetitions of it at once along loop
/// `copies_of` (outside the block), whose count the copies then divide
/// (in its place: the destination's order kept).
#[derive(Debug)]
pub(super) struct Block {
    pub k: usize,
    pub gather: Gather,
    pub copies_of: Option<usize>,
}

/// The loop outside a block (loops `k..`, whose destination byte `t`
/// comes from source byte `from[t]`, gathered by `single`), and the
/// gather of 2 to 4 of its repetitions at once ([`Gather::repeated`])
/// whose rows take the fewest loads a block, where fewer than `single`'s:
/// where a loop's repetitions continue the block's source rows (NCHW
/// depth-to-space with short spatial rows, its rows' next row), their
/// rows are loaded once for all. Only a loop that neither carries nor
/// sets a window (its count is divided by the copies), its repetitions a
/// whole number of copies.
fn copies(loops: &[Loop], k: usize, from: &[isize], single: &Gather) -> Option<(usize, Gather)> {
    let mut best: Option<(usize, Gather)> = None;
    for (o, l) in loops[..k].iter().enumerate().filter(|(_, l)| free(l)) {
        for m in 2..=MAX_BLOCK / 64 {
            if !l.count.is_multiple_of(m) {
                continue;
            }
            let Some(g) = Gather::repeated(from, m, l.ss, l.ds) else { continue };
            // Fewer loads a block than the best so far.
            let now = best.as_ref().map_or(single, |(_, g)| g);
            if g.loads() * now.copies() < now.loads() * m {
                best = Some((o, g));
            }
        }
    }
    best
}

/// Whether [`gather_block`] gathers blocks by `g` on `isa`, of
/// `unit`-byte units: with VBMI, every block; with AVX2 alone, where its
/// shuffles take the block ([`Gather::runs_on`]) and its units are bytes,
/// which no other kernel moves more than one at a time in such blocks.
fn gathers(g: &Gather, unit: usize, isa: Isa) -> bool {
    isa >= Isa::Avx512Vbmi || unit == 1 && g.runs_on(isa)
}
