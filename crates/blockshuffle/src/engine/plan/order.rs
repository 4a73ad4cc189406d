//! The loop orders: which loops of a plan run inside which (for the line
//! writers, for reading the source in order, for a tile's repetitions),
//! and the moves and permutations that put them there, keeping every
//! window on its loops.
//!
//! Layer: plan; imports kernels (the loop nest's data) only; never exec,
//! [`compile`](super::compile) or [`rules`](super::rules).

use arrayvec::ArrayVec;

use crate::engine::kernels::lines::WRITERS;
use crate::engine::kernels::nest::{Loop, Window, MAX_LOOPS};

/// Most destination streams (a line writer each) that [`stream_order`]
/// has advance together.
const MAX_WRITE_STREAMS: usize = WRITERS;

/// Orders the loops for the line writers.
///
/// One loop is the *sweep*: the one whose steps are shortest on both sides.
/// Inside it run the loops that must (a shorter step on either side), and
/// no more: each destination stream, a position of the loops inside the
/// sweep (up to those that interleave inside its destination step), then
/// advances through the sweep as one contiguous stretch, written in whole
/// lines, while the sweep reads a few source streams. Outside it the loops
/// go in the source's order, except that loops which would keep more
/// streams open than there are writers are moved outermost.
///
/// Where the loop of shortest steps would make too many streams and
/// `any_sweep` (units that go better read apart than any other way: see
/// `rules::reads_units_apart`), the next that makes few enough takes its
/// place: the destination then goes in order, each unit read apart.
///
/// More loops inside the sweep (in order of source step, up to 16 source
/// and 16 destination streams, for units from 256 bytes or sweeps of 4 KiB)
/// measured faster on earlier machines (256-byte units 1.0-1.2x memcpy
/// with 16 streams, 1.3-1.5x with 2 to 4) and slower on a Zen 4 (ratio to
/// memcpy, in one binary alternating, best of each: W1 0.77 -> 0.61, W3
/// 0.81 -> 0.66, W6 0.75 -> 0.61 over 5 runs, W11 0.92 -> 0.93; 72 unseen
/// NHWC workloads of 256- to 2048-byte units, 2 runs, geomean 0.82 ->
/// 0.66, above 1.10 16 -> 0).
///
/// Returns false, leaving the loops in their order, if the loops inside
/// every sweep it may take make more destination streams than there are
/// writers.
pub(super) fn stream_order(loops: &mut ArrayVec<Loop, MAX_LOOPS>, any_sweep: bool) -> bool {
    let n = loops.len();
    if n == 0 {
        return true;
    }
    let (ss, ds) = (|l: &Loop| l.ss.unsigned_abs(), |l: &Loop| l.ds.unsigned_abs());
    // The sweeps by their longer step, shortest first (the inner first of
    // equals: the sort is stable).
    let mut sweeps: ArrayVec<usize, MAX_LOOPS> = (0..n).rev().collect();
    sweeps.sort_by_key(|&j| ss(&loops[j]).max(ds(&loops[j])));
    let tried = if any_sweep { n } else { 1 };
    let Some((r, (inner, w))) = sweeps[..tried].iter().find_map(|&r| inside_sweep(loops, r).map(|inside| (r, inside)))
    else {
        return false;
    };
    let rd = ds(&loops[r]);
    let mut order: ArrayVec<usize, MAX_LOOPS> = (0..n).filter(|&j| j != r && !inner[j]).collect();
    order.sort_by_key(|&j| std::cmp::Reverse(ss(&loops[j])));
    // The outer loops that continue every stream (each steps by the
    // stretch the loops inside it cover): another loop inside one of these
    // keeps its streams open while it runs, multiplying them. Such loops
    // move outermost, outer ones first, until the open streams fit the writers.
    let mut chain = [false; MAX_LOOPS];
    let mut stretch = rd.saturating_mul(loops[r].count);
    while let Some(&j) = order.iter().find(|&&j| !chain[j] && ds(&loops[j]) == stretch) {
        chain[j] = true;
        stretch = stretch.saturating_mul(loops[j].count);
    }
    let mut moved = 0;
    while open_streams(&order, &chain, w, loops) > WRITERS {
        let Some(k) = (moved..order.len()).find(|&k| !chain[order[k]]) else { break };
        let j = order.remove(k);
        order.insert(moved, j);
        moved += 1;
    }
    order.push(r);
    let at = order.len();
    order.extend((0..n).filter(|&j| inner[j]));
    // Streams first, the loops interleaving inside a stream's step last.
    order[at..].sort_by_key(|&j| std::cmp::Reverse(ds(&loops[j])));
    permute(loops, &order);
    true
}

/// The loops that must run inside sweep `r` (a shorter step on either
/// side) and the destination streams they make (each loop's count,
/// unless it interleaves inside the sweep's destination step), or `None`
/// if those are more than [`MAX_WRITE_STREAMS`].
fn inside_sweep(loops: &[Loop], r: usize) -> Option<([bool; MAX_LOOPS], usize)> {
    let (ss, ds) = (|l: &Loop| l.ss.unsigned_abs(), |l: &Loop| l.ds.unsigned_abs());
    let (rs, rd) = (ss(&loops[r]), ds(&loops[r]));
    let writes = |l: &Loop| if ds(l) > rd { l.count } else { 1 };
    let mut inner = [false; MAX_LOOPS];
    let mut w = 1usize;
    for (j, l) in loops.iter().enumerate() {
        if j != r && (ss(l) < rs || ds(l) < rd) {
            inner[j] = true;
            w = w.saturating_mul(writes(l));
        }
    }
    (w <= MAX_WRITE_STREAMS).then_some((inner, w))
}

/// Destination streams open at once when the loops outside the sweep run
/// in `order` (outer first), `inner` streams inside the sweep: those inside
/// the sweep, times every non-chain loop inside a chain loop.
fn open_streams(order: &[usize], chain: &[bool; MAX_LOOPS], inner: usize, loops: &[Loop]) -> usize {
    let (mut open, mut pending) = (inner, 1usize);
    for &j in order.iter().rev() {
        if chain[j] {
            open = open.saturating_mul(pending);
            pending = 1;
        } else {
            pending = pending.saturating_mul(loops[j].count);
        }
    }
    open
}

/// Splits loop `j` (without a window, and not the outer loop of one) into
/// an outer loop of `count / f` steps of `f` and an inner loop of `f`,
/// right after it. `f` divides the count, and the nest has room for a loop.
fn split_loop(loops: &mut ArrayVec<Loop, MAX_LOOPS>, j: usize, f: usize) {
    let l = loops[j];
    debug_assert!(free(&l) && l.count.is_multiple_of(f));
    loops[j] = Loop { count: l.count / f, ss: l.ss * f as isize, ds: l.ds * f as isize, ..l };
    loops.insert(j + 1, Loop { count: f, ..l });
    for m in loops.iter_mut() {
        if let Some(o) = m.window.as_mut().and_then(|w| w.outer.as_mut()) {
            if *o as usize > j {
                *o += 1;
            }
        }
    }
}

/// Whether the innermost contiguous run of the destination reaches
/// [`MIN_DST_RUN`] and gathers runs of the source (one of its loops up to
/// that length steps one unit in the source): then writing it in order reads a few
/// source streams in order too, which the line writers would only slow
/// (measured, NHWC batch-to-space of 128-byte units: 1.9x memcpy through
/// the writers, 1.0x so; space-to-batch, whose runs read the source every
/// other unit, the other way round). Units from `rules::MANY_STREAMS_UNIT` on
/// stay with the writers where `writers::takes_lines` takes them (NHWC
/// space-to-depth of 256-byte units gathers two source rows: 0.9-1.0x
/// through them, 1.2-1.3x so).
pub(super) fn gathers_source_runs(loops: &[Loop], unit: usize) -> bool {
    let mut run = unit;
    let mut gathers = false;
    for l in loops.iter().rev() {
        if l.ds != run as isize || run >= MIN_DST_RUN {
            break;
        }
        gathers |= l.ss == unit as isize;
        run = run.saturating_mul(l.count);
    }
    gathers && run >= MIN_DST_RUN
}

/// Smallest unit (bytes) for which streaming plans walk the source in order.
pub(super) const MIN_SOURCE_ORDER_UNIT: usize = 64;

/// Bytes of contiguous destination kept innermost by [`source_order_outside_run`].
pub(super) const MIN_DST_RUN: usize = 4 << 10;

/// Shortest destination run that [`source_order_outside_run`] keeps
/// innermost when the run reads one compact source block: one spread
/// over at most [`COMPACT_SPAN`] times its bytes.
const MIN_COMPACT_RUN: usize = 512;

/// See [`MIN_COMPACT_RUN`].
const COMPACT_SPAN: usize = 4;

/// The most destination streams that a compact run shorter than
/// [`LONE_RUN`] leaves open when [`source_order_outside_run`] stops at it
/// (see [`continued_streams`]); with more, the run grows on. Each stream
/// is a place of its own, written a run at a time: past a few hundred,
/// each run lands where no recent one did, its page far from the last.
/// Measured on an Intel Xeon (AVX-512, one thread, 6 alternated runs,
/// each workload's minimum): runs of 512 to 1,400 bytes in 308 to 7,200
/// streams 0.50, 0.77 and 0.91 of the time grown (HPTT's float64 `[96,
/// 75, 96, 80]` by axes `2, 1, 0, 3`, 640-byte runs in 7,200 streams,
/// 2.9 -> 1.45x memcpy; TF batch-to-space of 512-byte runs in 1,292
/// streams, 1.40 -> 1.07x); in 17 to 66 streams, 0.95 to 1.02 (5
/// workloads; the line writers' 16 would take them).
const MAX_SCATTERED_STREAMS: usize = 256;

/// The shortest compact run that [`source_order_outside_run`] stops at
/// however many destination streams it leaves open: half a page, whose
/// bytes pay for landing apart from the last run. Measured as
/// [`MAX_SCATTERED_STREAMS`]: runs of 2 to 3 KiB are no faster grown
/// (HPTT's float64 `[384, 384, 368]` by axes `1, 0, 2`, 2,944-byte runs
/// in 384 streams, 1.33 -> 1.40x memcpy; a TF space-to-batch of
/// 3,240-byte runs in 20 streams 1.10 -> 1.22x).
const LONE_RUN: usize = 2 << 10;

/// Longest run [`source_order_outside_run`] keeps whole (a longer one is
/// split: the source block it reads stays in the cache).
const MAX_DST_RUN: usize = 64 << 10;

/// Whether [`source_order_outside_run`] would write each unit apart: no
/// loop continues a unit in the destination after it (the run stops at
/// the unit, or none continues it), where the run does not grow past the
/// unit as it does among more than [`MAX_SCATTERED_STREAMS`] streams.
pub(super) fn writes_units_apart(loops: &ArrayVec<Loop, MAX_LOOPS>, unit: usize) -> bool {
    let mut ordered = loops.clone();
    source_order_outside_run(&mut ordered, unit);
    ordered.last().is_none_or(|l| l.ds != unit as isize)
}

/// Orders the loops outside the innermost contiguous destination run of at
/// least [`MIN_DST_RUN`] bytes by decreasing source stride.
///
/// A run that would be much longer (past [`MAX_DST_RUN`]) is cut: its
/// outermost loop is split in two, and the outer part is ordered with the
/// others. Then a block of the source is read once for all the runs that
/// take from it, while it is in the cache (a 1-D space-to-batch by 4 read its
/// whole source four times, a quarter each time, at 3x memcpy).
pub(super) fn source_order_outside_run(loops: &mut ArrayVec<Loop, MAX_LOOPS>, unit: usize) {
    let mut run = unit;
    // The source bytes the run's units lie in.
    let mut span = unit;
    let mut k = loops.len();
    while k > 0 && run < MIN_DST_RUN && loops[k - 1].ds == run as isize {
        if run >= MIN_COMPACT_RUN
            && span <= COMPACT_SPAN * run
            && (run >= LONE_RUN || continued_streams(&loops[..k], run) <= MAX_SCATTERED_STREAMS)
        {
            // A run that reads one compact source block stops there: the
            // loops outside, in the source's order, then read the source
            // rows whole, rather than each run reading slices of rows
            // far apart (the 5-D space-to-batch in float16, W11's shape,
            // 1.6-1.75 -> 1.3x memcpy). Its destination runs, shorter
            // than `MIN_DST_RUN`, are then written a few streams at a
            // time, each continued run after run by a loop outside
            // (W11's 12), or are long enough by themselves (`LONE_RUN`);
            // with hundreds of streams, every run would land apart from
            // the last (see `MAX_SCATTERED_STREAMS`), and it grows on.
            break;
        }
        let l = loops[k - 1];
        span = span.saturating_add((l.count - 1).saturating_mul(l.ss.unsigned_abs()));
        let whole = run.saturating_mul(l.count);
        if whole > MAX_DST_RUN && free(&l) && loops.len() < MAX_LOOPS {
            if let Some(f) = run_factor(l.count, run) {
                // Loop k-1 becomes the outer part; the inner part, `f` of its
                // iterations, joins the run.
                split_loop(loops, k - 1, f);
                break;
            }
        }
        run = whole;
        k -= 1;
    }
    source_order_outside(loops, k);
}

/// The destination streams that the loops `outside` a destination run of
/// `run` bytes keep open in the source's order (as [`source_order_outside`]
/// puts them): each position of the loops inside the innermost loop that
/// continues the run (steps the destination by `run`) is a stream, written
/// run after run; `usize::MAX` if no loop continues it, when every run
/// lands apart from the last.
///
/// [`source_order_outside_run`] stops a compact run shorter than
/// [`LONE_RUN`] only where these are at most [`MAX_SCATTERED_STREAMS`].
fn continued_streams(outside: &[Loop], run: usize) -> usize {
    let mut order: ArrayVec<Loop, MAX_LOOPS> = outside.iter().copied().collect();
    order.sort_by_key(source_order);
    match order.iter().rposition(|l| l.ds == run as isize) {
        Some(p) => order[p + 1..].iter().fold(1usize, |n, l| n.saturating_mul(l.count)),
        None => usize::MAX,
    }
}

/// The largest divisor `f` of `count` that makes a run of `run * f` bytes
/// between [`MIN_DST_RUN`] and [`MAX_DST_RUN`].
fn run_factor(count: usize, run: usize) -> Option<usize> {
    let most = (MAX_DST_RUN / run).min(count);
    (2..=most).rev().take_while(|&f| run * f >= MIN_DST_RUN).find(|&f| count.is_multiple_of(f))
}

/// Moves loop `from` inward to position `to` (`from <= to`), past loops
/// none of whose windows it carries: every window keeps its loops, only
/// the indices of the loops it passes shift (one step out) and its own
/// (to `to`). Cheaper than [`permute`], which rebuilds every loop.
pub(super) fn move_inward(loops: &mut ArrayVec<Loop, MAX_LOOPS>, from: usize, to: usize) {
    let moved = loops.remove(from);
    loops.insert(to, moved);
    for l in loops.iter_mut() {
        if let Some(o) = l.window.as_mut().and_then(|w| w.outer.as_mut()) {
            let at = *o as usize;
            if at == from {
                *o = to as u8;
            } else if (from + 1..=to).contains(&at) {
                *o -= 1;
            }
        }
    }
}

/// Orders loops `..k` by decreasing source stride (a stable sort: ties keep
/// the destination's order).
pub(super) fn source_order_outside(loops: &mut ArrayVec<Loop, MAX_LOOPS>, k: usize) {
    let mut order: ArrayVec<usize, MAX_LOOPS> = (0..loops.len()).collect();
    order[..k].sort_by_key(|&i| source_order(&loops[i]));
    permute(loops, &order);
}

/// The key that puts loops in the source's order, outer first: decreasing
/// source stride (a stable sort keeps ties in their order).
fn source_order(l: &Loop) -> std::cmp::Reverse<usize> {
    std::cmp::Reverse(l.ss.unsigned_abs())
}

/// Puts loop `order[j]` at position `j`, re-anchoring each window on
/// whichever of its two loops is now inner.
fn permute(loops: &mut ArrayVec<Loop, MAX_LOOPS>, order: &[usize]) {
    let n = loops.len();
    let mut pos = [0usize; MAX_LOOPS];
    for (new, &old) in order.iter().enumerate() {
        pos[old] = new;
    }
    let mut out: ArrayVec<Loop, MAX_LOOPS> =
        order.iter().map(|&i| Loop { window: None, is_outer: false, ..loops[i] }).collect();
    for (old, l) in loops.iter().enumerate() {
        let Some(w) = l.window else { continue };
        match w.outer {
            None => out[pos[old]].window = Some(w),
            Some(o) => {
                let (inner, outer) = (pos[old], pos[o as usize]);
                if outer < inner {
                    out[inner].window = Some(Window { outer: Some(outer as u8), ..w });
                } else {
                    // p = oc * i_outer + ic * i_inner, with the roles swapped.
                    out[outer].window = Some(Window { outer: Some(inner as u8), oc: w.ic, ic: w.oc, ..w });
                }
            }
        }
    }
    for j in 0..n {
        if let Some(Window { outer: Some(o), .. }) = out[j].window {
            out[o as usize].is_outer = true;
        }
    }
    *loops = out;
}

/// A loop with no window and not the outer loop of one: a plain
/// repetition, which may merge, split, move or be run whole by a kernel.
pub(super) fn free(l: &Loop) -> bool {
    l.window.is_none() && !l.is_outer
}

/// The window of a dropped inner loop (index always 0), moved onto its outer
/// loop: `p = oc * i_outer` alone. The outer loop of a window belongs to the
/// same space axis and carries no window of its own.
pub(super) fn self_window(moved: Window) -> Window {
    Window { outer: None, oc: 0, ic: moved.oc, lo: moved.lo, hi: moved.hi }
}
