//! Contiguous byte moves: copies ([`copy_bytes`], and runs to or from a
//! stage, [`copy_staged`]), streamed copies
//! ([`stream_copy`]) and fills ([`zero_bytes`]), and the stack [`Staging`]
//! buffers kernels stage units in.
//!
//! Layer: kernels; imports arch only.

use std::mem::MaybeUninit;
use std::ptr;

use crate::engine::arch::mem::store_line as line;
use crate::engine::arch::mem::{copy_short, LINE};

/// Streamed copies from this length on read and write in four interleaved
/// quarters ([`stream_region`]).
pub(crate) const REGION_MIN: usize = 16 << 10;

/// Runs shorter than this are copied with ordinary stores even in streaming mode.
pub(super) const STREAM_MIN: usize = 64;

/// Bytes of the staging buffer that short-run kernels gather into before
/// streaming out (small enough to stay in L1).
pub(crate) const STAGE: usize = 8 << 10;

/// A cache-line-aligned, uninitialised staging buffer of `N` bytes on the stack.
#[repr(C, align(64))]
pub(crate) struct Staging<const N: usize>([MaybeUninit<u8>; N]);

impl<const N: usize> Staging<N> {
    #[inline(always)]
    pub(crate) fn new() -> Self {
        Staging([MaybeUninit::uninit(); N])
    }

    #[inline(always)]
    pub(crate) fn ptr(&mut self) -> *mut u8 {
        self.0.as_mut_ptr().cast()
    }
}

/// The short-run kernels' staging buffer.
pub(crate) type Stage = Staging<STAGE>;

/// Copies a run of `len` bytes to or from a stage: runs of up to a line
/// (64 bytes) in two overlapping moves (`copy_short`), not a call into the
/// C library. An einops rearrange of float16 into 12-byte runs joined in
/// the stage (0.46 MiB, held out, seed 803) took 1.7 times as long joined
/// as unjoined with a call a run, 0.86 so.
///
/// # Safety
/// `len` bytes readable at `src` and writable at `dst`, not overlapping.
#[inline(always)]
pub(crate) unsafe fn copy_staged(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: forwarded; `copy_short` takes runs of at most a line.
    unsafe {
        if len <= LINE {
            copy_short(src, dst, len);
        } else {
            ptr::copy_nonoverlapping(src, dst, len);
        }
    }
}

/// Copies `len` bytes, streaming (non-temporal stores) when `nt`.
///
/// # Safety
/// `len` bytes readable at `src` and writable at `dst`, not overlapping.
#[inline(always)]
pub(crate) unsafe fn copy_bytes(src: *const u8, dst: *mut u8, len: usize, nt: bool) {
    // SAFETY: forwarded.
    unsafe {
        if nt && len >= REGION_MIN {
            stream_region(src, dst, len)
        } else if nt && len >= STREAM_MIN {
            stream_copy(src, dst, len)
        } else {
            ptr::copy_nonoverlapping(src, dst, len)
        }
    }
}

/// Copies `len` bytes with non-temporal stores for the 16-byte-aligned body
/// of the destination (ordinary stores for the unaligned head and tail), so
/// a large output does not first read every destination line into the cache.
/// The executor issues the store fence when a run ends ([`fence`]).
///
/// The body is aligned to 16 bytes, not to a cache line: runs written one
/// after another then complete each other's lines with streaming stores.
/// Aligning to 64 with ordinary stores for the partial lines mixes the two
/// kinds of store on one line, which measured 16x slower (256-byte runs).
///
/// # Safety
/// `len` bytes readable at `src` and writable at `dst`, not overlapping.
#[inline]
pub(crate) unsafe fn stream_copy(src: *const u8, dst: *mut u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of the x86_64 baseline. Every load reads 16 bytes
    // inside `src[..len]` (unaligned loads), every store writes 16 aligned
    // bytes inside `dst[..len]`; head and tail are plain copies inside the range.
    unsafe {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        let head = dst.align_offset(16).min(len);
        ptr::copy_nonoverlapping(src, dst, head);
        let mut i = head;
        while i + 64 <= len {
            line(src.add(i), dst.add(i));
            i += 64;
        }
        while i + 16 <= len {
            _mm_stream_si128(dst.add(i).cast::<__m128i>(), _mm_loadu_si128(src.add(i).cast::<__m128i>()));
            i += 16;
        }
        ptr::copy_nonoverlapping(src.add(i), dst.add(i), len - i);
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: forwarded.
    unsafe {
        ptr::copy_nonoverlapping(src, dst, len)
    }
}

/// Streams a whole region out: its 64-byte-aligned body split in four
/// quarters whose lines are copied in turn (line `i` of each quarter, then
/// line `i + 1`, ...), with non-temporal stores. Four concurrent streams far
/// apart keep more of the memory system busy than one: on the development
/// machine this copies 128 MiB faster than the C library's `memcpy`, where a
/// single sequential streaming loop is a third slower.
///
/// # Safety
/// `len` bytes readable at `src` and writable at `dst`, not overlapping.
unsafe fn stream_region(src: *const u8, dst: *mut u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: head and tail are plain copies inside the range; every line
    // copied lies inside the 64-byte-aligned body `[head, head + 4 * q)` or
    // the remainder handled by `stream_copy`, all inside `len`.
    unsafe {
        let head = dst.align_offset(64).min(len);
        ptr::copy_nonoverlapping(src, dst, head);
        let body = (len - head) / 64 * 64;
        let q = body / 4 / 64 * 64;
        let (s, d) = (src.add(head), dst.add(head));
        let mut off = 0;
        while off < q {
            line(s.add(off), d.add(off));
            line(s.add(q + off), d.add(q + off));
            line(s.add(2 * q + off), d.add(2 * q + off));
            line(s.add(3 * q + off), d.add(3 * q + off));
            off += 64;
        }
        let done = head + 4 * q;
        stream_copy(src.add(done), dst.add(done), len - done);
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: forwarded.
    unsafe {
        ptr::copy_nonoverlapping(src, dst, len)
    }
}

/// Fills `len` bytes with zeros, streaming when `nt`.
///
/// # Safety
/// `len` bytes writable at `dst`.
#[inline]
pub(crate) unsafe fn zero_bytes(dst: *mut u8, len: usize, nt: bool) {
    #[cfg(target_arch = "x86_64")]
    if nt && len >= STREAM_MIN {
        // SAFETY: as `stream_copy`, with a zero register as the source.
        unsafe {
            use std::arch::x86_64::{__m128i, _mm_setzero_si128, _mm_stream_si128};
            let head = dst.align_offset(16).min(len);
            ptr::write_bytes(dst, 0, head);
            let mut i = head;
            let z = _mm_setzero_si128();
            while i + 16 <= len {
                _mm_stream_si128(dst.add(i).cast::<__m128i>(), z);
                i += 16;
            }
            ptr::write_bytes(dst.add(i), 0, len - i);
        }
        return;
    }
    // SAFETY: forwarded; `ZEROS` holds 64 readable bytes, apart from any
    // destination.
    unsafe {
        if len <= ZEROS.len() {
            // The padding at a row's ends: no call into the C library.
            return copy_short(ZEROS.as_ptr(), dst, len);
        }
        ptr::write_bytes(dst, 0, len)
    }
}

/// The source of short zero fills.
static ZEROS: [u8; 64] = [0; 64];
