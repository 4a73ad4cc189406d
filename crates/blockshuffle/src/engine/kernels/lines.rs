//! Line writers: streaming stores of whole cache lines for a few destination
//! streams at once, wherever the runs that fill them begin.
//!
//! A streaming (non-temporal) store is fast when it fills a whole 64-byte
//! line at once; a line left half-written while other streams are written
//! (a run that ends 16 bytes into a line, say) costs a partial write to
//! memory, and ordinary and streaming stores mixed on one line are slower
//! still. Runs of an operator's output start wherever the tensor's layout
//! puts them (a `Vec` is 16 bytes off a line), so a writer carries the bytes
//! of an unfinished line until the run that finishes it arrives, and stores
//! every line whole. Only the first and last partial lines of a contiguous
//! stretch are written with ordinary stores (and those lines never see a
//! streaming store).
//!
//! [`Writers`] holds up to [`WRITERS`] streams and recognises them by
//! address: a run that continues a stream's last one goes on with it; any
//! other run starts a stream (finishing the least recently started). Any
//! order of runs is therefore correct; orders that keep a few streams going
//! (the plan's job) are fast.
//!
//! Layer: kernels; imports [`nest`](super::nest) and arch.

use std::mem::MaybeUninit;
use std::ptr;

use super::nest::Rows;
use crate::engine::arch::mem::{copy_short, prefetch, prefetch_l2, store_line, LINE, PREFETCH_AHEAD};
use crate::engine::arch::Isa;

/// Destination streams a [`Writers`] keeps open at once.
pub(crate) const WRITERS: usize = 16;

#[repr(C, align(64))]
struct LineBuf([MaybeUninit<u8>; LINE]);

impl LineBuf {
    /// A line not yet written.
    const UNSET: LineBuf = LineBuf([MaybeUninit::uninit(); LINE]);
}

/// A line of zeros, the source of zero runs' partial lines.
static ZEROS: LineBuf = LineBuf([MaybeUninit::new(0); LINE]);

/// One destination stream; its unfinished line is held beside it (in
/// `Writers::lines`: bytes `[0, next % 64)` of the line that holds `next`,
/// those at or after `start`).
struct Writer {
    /// The next destination byte of the stream (null: no stream).
    next: *mut u8,
    /// Where the stream began: bytes before it are not the stream's.
    start: *mut u8,
}

/// Up to [`WRITERS`] destination streams, written with whole-line streaming
/// stores. [`Writers::finish`] must be called before the destination is read
/// (it writes the unfinished lines); the executor's store fence follows.
pub(crate) struct Writers {
    w: [Writer; WRITERS],
    /// The streams' unfinished lines (uninitialised until written: making
    /// a `Writers` costs no more than its pointers, which tiny runs that
    /// never use it also pay).
    lines: [LineBuf; WRITERS],
    /// The stream a new one replaces next (round robin).
    victim: usize,
    /// The stream written last: runs mostly continue it or the next one.
    last: usize,
    /// Slots at and past this one have never held a stream (new streams
    /// take the slots in order): [`Writers::finish`] stops here, so that
    /// runs that never stream (most plans, and every tiny one) do not
    /// visit all [`WRITERS`].
    used: usize,
}

/// Where a run's bytes come from: a source buffer ([`Bytes`]) or nowhere
/// ([`Zeros`]). A trait rather than an enum so that each writer loop is
/// compiled for one kind.
trait Source: Copy {
    /// Copies `len < 64` bytes of the source to `dst` (a part of a line).
    ///
    /// # Safety
    /// `len` bytes readable at the source (if any), writable at `dst`, and `len < 64`.
    unsafe fn copy_to(self, dst: *mut u8, len: usize);
    /// Stores the source's next 64 bytes to the line at `dst`, streaming.
    ///
    /// # Safety
    /// 64 bytes readable at the source (if any), writable at `dst`, which is 64-byte aligned.
    unsafe fn store_line(self, dst: *mut u8);
    /// The source `n` bytes on.
    fn advance(self, n: usize) -> Self;
}

#[derive(Clone, Copy)]
struct Bytes(*const u8);

#[derive(Clone, Copy)]
struct Zeros;

impl Writers {
    #[inline(always)]
    pub(crate) fn new() -> Self {
        Writers { w: [Writer::NONE; WRITERS], lines: [LineBuf::UNSET; WRITERS], victim: 0, last: 0, used: 0 }
    }

    /// Writes `len` bytes from `src` to `dst`.
    ///
    /// # Safety
    /// `len` bytes readable at `src` and writable at `dst`, not overlapping;
    /// the destination bytes of every run pushed since the last
    /// [`Writers::finish`] stay writable until that call, and no two runs
    /// write the same byte.
    #[inline]
    pub(crate) unsafe fn push(&mut self, src: *const u8, dst: *mut u8, len: usize) {
        // SAFETY: forwarded.
        unsafe { self.write(Bytes(src), dst, len) }
    }

    /// Writes `runs.count` runs of `len` bytes: run `i` from `src + i *
    /// runs.ss` to `dst + i * runs.ds`, with the source fetched ahead
    /// ([`Ahead`]). With AVX-512 (`isa`), the parts of lines are merged in
    /// registers by masked loads, instead of copied through the line
    /// buffers piece by piece (measured, alternating in one session: the
    /// 5-D space-to-batch of 128-byte units 1.18-1.59x memcpy ->
    /// 1.14-1.24x, batch-to-space 4x4 with crops 1.07-1.36x ->
    /// 1.03-1.13x).
    ///
    /// # Safety
    /// As [`Writers::push`] for each run; `isa` is one this CPU runs.
    #[inline]
    pub(crate) unsafe fn push_runs(&mut self, isa: Isa, runs: Rows, src: *const u8, dst: *mut u8, len: usize) {
        #[cfg(target_arch = "x86_64")]
        if isa >= Isa::Avx512 {
            // SAFETY: forwarded; the CPU runs AVX-512F/BW (`isa`).
            return unsafe { self.push_runs_avx512(runs, src, dst, len) };
        }
        let _ = isa;
        let ahead = Ahead::of(&runs, len);
        for i in 0..runs.count {
            let (s, d) = runs.at(i, src, dst);
            ahead.fetch(&runs, i, s, len);
            // SAFETY: forwarded.
            unsafe { self.push(s, d, len) };
        }
    }

    /// [`Writers::push_runs`] with AVX-512F/BW.
    ///
    /// # Safety
    /// As [`Writers::push_runs`]; the CPU runs AVX-512F and AVX-512BW.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn push_runs_avx512(&mut self, runs: Rows, src: *const u8, dst: *mut u8, len: usize) {
        let ahead = Ahead::of(&runs, len);
        for i in 0..runs.count {
            let (s, d) = runs.at(i, src, dst);
            ahead.fetch(&runs, i, s, len);
            // SAFETY: forwarded; the stream continues at `d`.
            unsafe {
                let k = self.stream_at(d);
                self.w[k].write_avx512(&mut self.lines[k], s, len);
            }
        }
    }

    /// Writes `len < 64` bytes to `dst` in 16-byte pieces, piece `j` read
    /// at `piece(j)`, without copying them anywhere first: a line they
    /// finish is stored straight from the held bytes and the pieces (16-byte
    /// streaming stores), and a line they leave unfinished holds them. For
    /// rows gathered a unit at a time, whose partial lines staged and then
    /// pushed cost two copies, read back at once (store forwarding), on
    /// every row.
    ///
    /// # Safety
    /// As [`Writers::push`] for the pieces' bytes; `dst` and `len` are
    /// multiples of 16.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub(crate) unsafe fn push_pieces(&mut self, dst: *mut u8, len: usize, piece: impl Fn(usize) -> *const u8) {
        use std::arch::x86_64::{__m128i, _mm_load_si128, _mm_loadu_si128, _mm_store_si128, _mm_stream_si128};
        // A real check, once a call (its caller, `gather_lines`, makes both
        // multiples of 16 by construction): the pieces go to the line
        // buffer at `f + 16 * j` and out with aligned 16-byte stores.
        assert!(len < LINE && (dst as usize | len).is_multiple_of(16), "pieces off 16-byte alignment");
        if len == 0 {
            return;
        }
        // SAFETY: forwarded; the stream continues at `dst`.
        let i = unsafe { self.stream_at(dst) };
        let buf = self.lines[i].0.as_mut_ptr().cast::<u8>();
        let w = &mut self.w[i];
        let f = dst as usize % LINE;
        let line = dst.wrapping_sub(f);
        // SAFETY: the buffer is 64-byte aligned and `f + len <= 64` where
        // it is written; its bytes `[0, f)` were held by the stream's last
        // run (whose line starts at or after `start`); the pieces are the
        // caller's 16 bytes each, at 16-byte-aligned destinations of the
        // stream's bytes (`dst`, `f` and `len` multiples of 16, checked
        // above).
        unsafe {
            if f + len == LINE && line >= w.start {
                for k in (0..f).step_by(16) {
                    _mm_stream_si128(line.add(k).cast(), _mm_load_si128(buf.add(k).cast::<__m128i>()));
                }
                for j in 0..len / 16 {
                    _mm_stream_si128(dst.add(16 * j).cast(), _mm_loadu_si128(piece(j).cast::<__m128i>()));
                }
            } else if f + len < LINE {
                for j in 0..len / 16 {
                    _mm_store_si128(buf.add(f + 16 * j).cast(), _mm_loadu_si128(piece(j).cast::<__m128i>()));
                }
            } else {
                // The stream's first line, or one the pieces pass: staged.
                let mut part = [MaybeUninit::<u8>::uninit(); LINE];
                for j in 0..len / 16 {
                    ptr::copy_nonoverlapping(piece(j), part.as_mut_ptr().add(16 * j).cast::<u8>(), 16);
                }
                return w.write(&mut self.lines[i], Bytes(part.as_ptr().cast()), len);
            }
        }
        w.next = dst.wrapping_add(len);
    }

    /// Writes `len` zero bytes to `dst`.
    ///
    /// # Safety
    /// As [`Writers::push`], without a source.
    #[inline]
    pub(crate) unsafe fn zero(&mut self, dst: *mut u8, len: usize) {
        // SAFETY: forwarded.
        unsafe { self.write(Zeros, dst, len) }
    }

    /// Records that the caller wrote `len` bytes at `dst`, whole lines with
    /// streaming stores, continuing the stream that reached `dst` (a line
    /// boundary) or starting one there.
    ///
    /// # Safety
    /// `dst` and `len` are multiples of 64, and no run pushed since the
    /// last [`Writers::finish`] has an unfinished line there.
    #[inline]
    pub(crate) unsafe fn skip(&mut self, dst: *mut u8, len: usize) {
        debug_assert!((dst as usize).is_multiple_of(LINE) && len.is_multiple_of(LINE));
        // SAFETY: forwarded.
        let i = unsafe { self.stream_at(dst) };
        let w = &mut self.w[i];
        w.next = w.next.wrapping_add(len);
    }

    /// Takes over the stream that continues at `dst`, if one does, for a
    /// kernel that carries a line in a register (`interleave_carried::interleave_carried`):
    /// closes it without writing its unfinished line, whose bytes `[0, dst %
    /// 64)` are copied to `line` (those before the returned start are not
    /// the stream's), and returns where the stream began. If none
    /// continues at `dst`, returns `dst` and leaves `line` alone.
    #[inline]
    pub(crate) fn take(&mut self, dst: *mut u8, line: &mut [MaybeUninit<u8>; LINE]) -> *mut u8 {
        let Some(i) = self.w.iter().position(|w| w.next == dst) else { return dst };
        let w = &mut self.w[i];
        line.copy_from_slice(&self.lines[i].0);
        w.next = ptr::null_mut();
        w.start
    }

    /// Opens a stream that continues at `next`, begun at `start` (at or
    /// before `next`), whose unfinished line holds the bytes `[0, next %
    /// 64)` of `line` (those from `start` on): what [`Writers::take`]
    /// gave, carried on by its kernel.
    ///
    /// # Safety
    /// As [`Writers::push`]: the stream's bytes `[start, next)` are
    /// writable, and no other stream holds any of them.
    #[inline]
    pub(crate) unsafe fn hold(&mut self, next: *mut u8, start: *mut u8, line: &[MaybeUninit<u8>; LINE]) {
        // SAFETY: forwarded (no stream continues at `next`: it would hold
        // bytes of this one, so this opens one there).
        let i = unsafe { self.find(next) };
        self.w[i].start = start;
        self.lines[i].0 = *line;
    }

    /// Writes every stream's unfinished line and closes all streams.
    ///
    /// # Safety
    /// As [`Writers::push`]: the pushed runs' destinations are writable.
    #[inline]
    pub(crate) unsafe fn finish(&mut self) {
        // SAFETY: forwarded.
        unsafe { finish_all(&mut self.w[..self.used], &self.lines) }
    }

    #[inline(always)]
    unsafe fn write(&mut self, src: impl Source, dst: *mut u8, len: usize) {
        // SAFETY: forwarded; the stream continues at `dst`.
        unsafe {
            let i = self.stream_at(dst);
            self.w[i].write(&mut self.lines[i], src, len)
        }
    }

    /// The index of the stream that continues at `dst` (started there if
    /// none does), which becomes the stream written last.
    ///
    /// # Safety
    /// As [`Writers::push`].
    #[inline(always)]
    unsafe fn stream_at(&mut self, dst: *mut u8) -> usize {
        // The stream written last, or the one after it: the common cases
        // (one stream continued, or streams taken in turn).
        let last = self.last % WRITERS;
        let after = (last + 1) % WRITERS;
        let i = if self.w[last].next == dst {
            last
        } else if self.w[after].next == dst {
            after
        } else {
            // SAFETY: forwarded.
            unsafe { self.find(dst) }
        };
        self.last = i;
        i % WRITERS
    }

    /// The stream that continues at `dst`, or a new one there (finishing
    /// the stream it replaces).
    ///
    /// # Safety
    /// As [`Writers::push`].
    #[inline(never)]
    unsafe fn find(&mut self, dst: *mut u8) -> usize {
        if let Some(i) = self.w.iter().position(|w| w.next == dst) {
            return i;
        }
        let i = self.victim % WRITERS;
        self.victim = (i + 1) % WRITERS;
        self.used = self.used.max(i + 1);
        // SAFETY: forwarded (the stream's runs were pushed under it).
        unsafe { self.w[i].begin(&self.lines[i], dst) };
        i
    }
}

/// What [`Writers::push_runs`] fetches ahead of each run: the source bytes
/// read [`PREFETCH_AHEAD`] bytes later.
/// - Runs that continue one another in the source, or longer ones: the
///   bytes that far past the run's start ([`prefetch`]).
/// - Shorter runs, more than one, that begin apart (a transpose's rows of
///   a few lines, each far from the last, where no hardware prefetcher
///   follows): the run `step` on, whole, into the second-level cache
///   ([`prefetch_l2`]: the first level's few fill buffers are the
///   streaming stores' too).
///   The bytes past a run's start would be read only when the loop around
///   comes back to that row, `count` runs later, and the rows' first
///   loads would wait. The last `step` runs, whose `step`-th successor is
///   the next call's, fetch as continued runs do.
///
/// Measured (one thread, each workload's minimum time over 3 to 4
/// alternated runs; Intel Xeon with AVX-512): the 5 of HPTT's 57
/// transposes this reaches 0.87 of the time (rows of 640 bytes, 582 of
/// them apart: 1.54x memcpy -> 1.12x), the 13 of 1,920 broad
/// workloads 0.93-0.99 per seed (numpy's of 773-byte rows, 139 MiB, 1.47x
/// -> 1.02x); with AVX2's writer, 0.88 and 0.95. Fetching both the later
/// run and the run's own bytes ahead measured slower than either.
///
/// The permutes' and register transposes' rows apart fetch the same way
/// with their own step ([`Rows::fetch_ahead`]: two rows on, into the
/// first level), measured on their own workloads; the two were not tried
/// against each other's kernels.
#[derive(Clone, Copy)]
struct Ahead {
    /// Fetch run `i + step`, not the bytes past run `i`'s start.
    apart: bool,
    step: usize,
}

impl Ahead {
    #[inline(always)]
    fn of(runs: &Rows, len: usize) -> Ahead {
        let apart = runs.apart(len) && len <= PREFETCH_AHEAD;
        // (The division only where it is used: `of` is on every call's path.)
        Ahead { apart, step: if apart { PREFETCH_AHEAD.div_ceil(len.max(1)) } else { 0 } }
    }

    /// Fetches ahead of run `i` of `runs`, whose source is at `s`.
    #[inline(always)]
    fn fetch(self, runs: &Rows, i: usize, s: *const u8, len: usize) {
        if self.apart && i + self.step < runs.count {
            prefetch_l2(s.wrapping_offset((self.step as isize).wrapping_mul(runs.ss)), len);
        } else {
            prefetch(s.wrapping_add(PREFETCH_AHEAD), len);
        }
    }
}

/// Finishes streams `w`, each with its unfinished line in `lines`.
///
/// # Safety
/// As [`Writers::finish`].
unsafe fn finish_all(w: &mut [Writer], lines: &[LineBuf]) {
    for (w, line) in w.iter_mut().zip(lines) {
        // SAFETY: forwarded.
        unsafe { w.finish(line) };
    }
}

impl Writer {
    /// No stream.
    const NONE: Writer = Writer { next: ptr::null_mut(), start: ptr::null_mut() };

    /// Finishes the stream (its unfinished line `held`) and begins another
    /// at `dst`.
    ///
    /// # Safety
    /// As [`Writer::finish`].
    #[inline(always)]
    unsafe fn begin(&mut self, held: &LineBuf, dst: *mut u8) {
        // SAFETY: forwarded.
        unsafe { self.finish(held) };
        (self.start, self.next) = (dst, dst);
    }

    /// Appends `len` bytes from `src` to the stream, whose unfinished line is `line`.
    ///
    /// # Safety
    /// As [`Writers::push`], at `self.next`.
    #[inline(always)]
    unsafe fn write<S: Source>(&mut self, line: &mut LineBuf, mut src: S, mut len: usize) {
        let buf = line.0.as_mut_ptr().cast::<u8>();
        // SAFETY: every store is inside `[start, next + len)`, the stream's
        // bytes (earlier runs' and this one's); `buf` offsets stay below 64.
        unsafe {
            let f = self.next as usize % LINE;
            if f != 0 {
                // Complete the unfinished line in the buffer.
                let k = (LINE - f).min(len);
                src.copy_to(buf.add(f), k);
                self.next = self.next.add(k);
                src = src.advance(k);
                len -= k;
                if !(self.next as usize).is_multiple_of(LINE) {
                    return;
                }
                let line = self.next.sub(LINE);
                if line >= self.start {
                    store_line(buf, line);
                } else {
                    // The stream's first line: only its own part, ordinary stores.
                    let skip = self.start.offset_from(line) as usize;
                    copy_short(buf.add(skip), self.start, LINE - skip);
                }
            }
            // Whole lines straight from the source.
            while len >= LINE {
                src.store_line(self.next);
                self.next = self.next.add(LINE);
                src = src.advance(LINE);
                len -= LINE;
            }
            if len > 0 {
                src.copy_to(buf, len);
                self.next = self.next.add(len);
            }
        }
    }

    /// [`Writer::write`] of bytes from `src`, with AVX-512F/BW: the line
    /// buffer's bytes and the run's first part meet in a register (a masked
    /// load over the held bytes), whole lines go from one load to one
    /// streaming store, and the last part is held with one store.
    ///
    /// # Safety
    /// As [`Writer::write`]; the CPU runs AVX-512F and AVX-512BW.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn write_avx512(&mut self, line: &mut LineBuf, mut src: *const u8, mut len: usize) {
        use std::arch::x86_64::*;
        // Lanes `[a, b)`, `0 <= a < b <= 64`.
        let lanes = |a: usize, b: usize| (u64::MAX >> (LINE - (b - a))) << a;
        let buf = line.0.as_mut_ptr().cast::<u8>();
        // SAFETY: as in `write`: stores stay inside `[start, next + len)`
        // (the first line is stored masked to its lanes from `start`);
        // masked loads and stores touch only their lanes: the held bytes
        // `buf[..f]` (initialised by the run that left them), the run's
        // bytes `src[..len]` (lane `f + t` of the load at `src - f` is
        // `src[t]`). The buffer is 64-byte aligned.
        unsafe {
            let f = self.next as usize % LINE;
            if f != 0 && len > 0 {
                let k = (LINE - f).min(len);
                let held = _mm512_maskz_loadu_epi8(lanes(0, f), buf.cast());
                let merged = _mm512_mask_loadu_epi8(held, lanes(f, f + k), src.wrapping_sub(f).cast());
                self.next = self.next.add(k);
                src = src.add(k);
                len -= k;
                if f + k < LINE {
                    _mm512_store_si512(buf.cast(), merged);
                    return;
                }
                let line = self.next.sub(LINE);
                if line >= self.start {
                    _mm512_stream_si512(line.cast(), merged);
                } else {
                    // The stream's first line: only its own part, ordinary stores.
                    let skip = self.start.offset_from(line) as usize;
                    _mm512_mask_storeu_epi8(line.cast(), lanes(skip, LINE), merged);
                }
            }
            while len >= LINE {
                _mm512_stream_si512(self.next.cast(), _mm512_loadu_si512(src.cast()));
                self.next = self.next.add(LINE);
                src = src.add(LINE);
                len -= LINE;
            }
            if len > 0 {
                _mm512_store_si512(buf.cast(), _mm512_maskz_loadu_epi8(lanes(0, len), src.cast()));
                self.next = self.next.add(len);
            }
        }
    }

    /// Writes the unfinished line's bytes (`held`) with ordinary stores and
    /// closes the stream.
    ///
    /// # Safety
    /// The stream's bytes are writable.
    #[inline]
    unsafe fn finish(&mut self, held: &LineBuf) {
        let f = self.next as usize % LINE;
        if f != 0 {
            // SAFETY: the bytes `[max(line, start), next)` are the stream's,
            // held at the same offsets in the buffer.
            unsafe {
                let line = self.next.sub(f);
                let from = if line >= self.start { line } else { self.start };
                let skip = from.offset_from(line) as usize;
                copy_short(held.0.as_ptr().cast::<u8>().add(skip), from, f - skip);
            }
        }
        self.next = ptr::null_mut();
    }
}

impl Source for Bytes {
    #[inline(always)]
    unsafe fn copy_to(self, dst: *mut u8, len: usize) {
        // SAFETY: forwarded.
        unsafe { copy_short(self.0, dst, len) }
    }

    #[inline(always)]
    unsafe fn store_line(self, dst: *mut u8) {
        // SAFETY: forwarded.
        unsafe { store_line(self.0, dst) }
    }

    #[inline(always)]
    fn advance(self, n: usize) -> Self {
        Bytes(self.0.wrapping_add(n))
    }
}

impl Source for Zeros {
    #[inline(always)]
    unsafe fn copy_to(self, dst: *mut u8, len: usize) {
        // SAFETY: forwarded; the line of zeros holds 64 bytes.
        unsafe { copy_short(ZEROS.0.as_ptr().cast(), dst, len) }
    }

    #[inline(always)]
    unsafe fn store_line(self, dst: *mut u8) {
        // SAFETY: forwarded.
        unsafe { zero_line(dst) }
    }

    #[inline(always)]
    fn advance(self, _: usize) -> Self {
        Zeros
    }
}

/// Stores 64 zero bytes to the line at `dst` with streaming stores.
///
/// # Safety
/// 64 bytes writable at `dst`, which is 64-byte aligned.
#[inline(always)]
unsafe fn zero_line(dst: *mut u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is baseline on x86_64; aligned streaming stores inside the line.
    unsafe {
        use std::arch::x86_64::{__m128i, _mm_setzero_si128, _mm_stream_si128};
        let z = _mm_setzero_si128();
        for k in 0..4 {
            _mm_stream_si128(dst.add(16 * k).cast::<__m128i>(), z);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: forwarded.
    unsafe {
        ptr::write_bytes(dst, 0, LINE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pushes `runs` (source offset, destination offset, length) into a
    /// buffer at `base` bytes past a line, and checks every byte; with the
    /// baseline writer and with the widest this CPU runs (AVX-512's).
    fn check(base: usize, len: usize, runs: &[(usize, usize, usize)], zeros: &[(usize, usize)]) {
        for isa in [Isa::baseline(), Isa::detect()] {
            check_with(isa, base, len, runs, zeros);
        }
    }

    fn check_with(isa: Isa, base: usize, len: usize, runs: &[(usize, usize, usize)], zeros: &[(usize, usize)]) {
        let src: Vec<u8> = (0..len).map(|i| (i * 7 + 1) as u8).collect();
        let mut dst = vec![0xAAu8; len + 128];
        let at = dst.as_ptr().align_offset(64) + base;
        let mut want = dst.clone();
        for &(s, d, n) in runs {
            want[at + d..at + d + n].copy_from_slice(&src[s..s + n]);
        }
        for &(d, n) in zeros {
            want[at + d..at + d + n].fill(0);
        }
        let mut w = Writers::new();
        let p = dst.as_mut_ptr();
        // SAFETY: every run is inside both buffers; runs do not overlap.
        unsafe {
            for &(s, d, n) in runs {
                w.push_runs(isa, Rows::ONE, src.as_ptr().add(s), p.add(at + d), n);
            }
            for &(d, n) in zeros {
                w.zero(p.add(at + d), n);
            }
            w.finish();
        }
        assert_eq!(dst, want, "{isa:?}: base {base}, runs {runs:?}, zeros {zeros:?}");
    }

    #[test]
    fn contiguous_runs_at_every_offset() {
        for base in [0, 1, 16, 48, 63] {
            for run in [1, 3, 16, 63, 64, 65, 200, 256] {
                let runs: Vec<_> = (0..9).map(|i| (i * run * 2, i * run, run)).collect();
                check(base, 20 * run, &runs, &[]);
            }
        }
    }

    #[test]
    fn interleaved_streams_and_more_streams_than_writers() {
        // Streams `s` of 100-byte runs, round robin: 3 fit, 11 evict each other.
        for streams in [3, WRITERS, 11] {
            let stride = 1000;
            let runs: Vec<_> = (0..8)
                .flat_map(|i| (0..streams).map(move |s| (s * stride + i * 100, s * stride + i * 100 + 5, 100)))
                .collect();
            check(16, streams * stride + 100, &runs, &[]);
        }
    }

    /// Which bytes [`Writers::push_runs`] fetches ahead: a later run's for
    /// short runs apart in the source, the run's own further bytes for runs
    /// that continue one another or are long.
    #[test]
    fn runs_apart_fetch_the_run_read_a_prefetch_later() {
        for len in [64, 256, 1000, PREFETCH_AHEAD] {
            let a = Ahead::of(&Rows { count: 64, ss: 2 << 20, ds: len as isize }, len);
            assert!(a.apart, "{len}");
            assert!(a.step * len >= PREFETCH_AHEAD && (a.step - 1) * len < PREFETCH_AHEAD, "{len}: step {}", a.step);
        }
        assert!(!Ahead::of(&Rows { count: 2, ss: 256, ds: 1 << 25 }, 256).apart);
        let long = PREFETCH_AHEAD + 64;
        assert!(!Ahead::of(&Rows { count: 8, ss: 1 << 20, ds: long as isize }, long).apart);
        // One run: nothing later to fetch.
        assert!(!Ahead::of(&Rows { count: 1, ss: 0, ds: 0 }, 256).apart);
    }

    /// Rows apart in the source (a transpose's) pushed as one call's runs,
    /// fewer and more of them than a fetch's step: every byte where it
    /// belongs, with each writer.
    #[test]
    fn rows_apart_are_pushed_whole() {
        for (len, gap, count) in [(64, 100, 3), (64, 100, 90), (200, 1000, 40), (PREFETCH_AHEAD, 5000, 6)] {
            let ss = len + gap;
            let src: Vec<u8> = (0..ss * count).map(|i| (i * 7 + 1) as u8).collect();
            for isa in [Isa::baseline(), Isa::detect()] {
                let mut dst = vec![0xAAu8; len * count + 128];
                let at = dst.as_ptr().align_offset(64) + 16;
                let mut want = dst.clone();
                for r in 0..count {
                    want[at + r * len..at + (r + 1) * len].copy_from_slice(&src[r * ss..r * ss + len]);
                }
                let mut w = Writers::new();
                let runs = Rows { count, ss: ss as isize, ds: len as isize };
                // SAFETY: row `r` is `src[r * ss..][..len]`, inside the
                // source, and `dst[at + r * len..][..len]`, inside the
                // destination; rows do not overlap.
                unsafe {
                    w.push_runs(isa, runs, src.as_ptr(), dst.as_mut_ptr().add(at), len);
                    w.finish();
                }
                assert_eq!(dst, want, "{isa:?}: rows of {len} bytes, {gap} apart, {count} of them");
            }
        }
    }

    #[test]
    fn zeros_continue_a_stream_and_gaps_restart_it() {
        let runs = [(0, 0, 80), (200, 150, 90), (400, 300, 70)];
        let zeros = [(80, 70), (240, 60)];
        check(16, 600, &runs, &zeros);
    }

    /// Pieces of 16 bytes pushed one to three at a time, between longer
    /// runs, from every 16-byte offset of a line: each line the pieces
    /// finish (from the held bytes and the pieces), leave held, or begin
    /// (the stream's first) comes out whole, the bytes around the stream
    /// untouched.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn pieces_finish_hold_and_begin_lines() {
        let parts = [16, 32, 48, 16, 16, 16, 160, 48, 32, 16, 208, 32, 16];
        let len: usize = parts.iter().sum();
        let src: Vec<u8> = (0..len).map(|i| (i * 7 + 1) as u8).collect();
        for base in [0, 16, 32, 48] {
            let mut dst = vec![0xAAu8; len + 192];
            let at = dst.as_ptr().align_offset(64) + base;
            let mut want = dst.clone();
            want[at..at + len].copy_from_slice(&src);
            let mut w = Writers::new();
            let p = dst.as_mut_ptr();
            // SAFETY: every part is inside both buffers, in the stream's
            // order; the destination's parts are 16-byte aligned.
            unsafe {
                let mut d = 0;
                for &n in &parts {
                    let from = src.as_ptr().add(d);
                    if n < LINE {
                        w.push_pieces(p.add(at + d), n, |j| from.add(16 * j));
                    } else {
                        w.push(from, p.add(at + d), n);
                    }
                    d += n;
                }
                w.finish();
            }
            assert_eq!(dst, want, "base {base}");
        }
    }
}
