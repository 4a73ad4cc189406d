//! A small cache of large output buffers.
//!
//! A new output of many megabytes costs more to fault in (the kernel zeroes
//! every fresh page) than the operator takes to fill it: numpy's allocator
//! maps and unmaps such arrays afresh each time. Outputs of at least
//! [`MIN_BYTES`] therefore live in buffers that, when their last array goes,
//! come back here (the [`MAX_FREE`] most recently freed, [`DEFAULT_LIMIT`]
//! bytes in all, settable) and serve the next output of about their size,
//! already faulted in: what TensorFlow's and other frameworks' allocators do.

use std::alloc::{alloc, dealloc, Layout};
use std::ptr::NonNull;
use std::sync::{Mutex, MutexGuard};

use pyo3::exceptions::PyMemoryError;
use pyo3::prelude::*;

/// Alignment of the buffers (a cache line; every numpy dtype's alignment divides it).
const ALIGN: usize = 64;
/// Outputs smaller than this come from numpy (its allocator reuses them cheaply).
pub const MIN_BYTES: usize = 4 << 20;
/// Most bytes kept in free buffers, by default.
pub const DEFAULT_LIMIT: usize = 1 << 30;
/// Most free buffers kept.
const MAX_FREE: usize = 4;

struct Free {
    ptr: NonNull<u8>,
    cap: usize,
}

// SAFETY: a free buffer is plain memory that nothing else refers to.
unsafe impl Send for Free {}

struct Pool {
    free: Vec<Free>,
    held: usize,
    limit: usize,
}

static POOL: Mutex<Pool> = Mutex::new(Pool { free: Vec::new(), held: 0, limit: DEFAULT_LIMIT });

fn pool() -> MutexGuard<'static, Pool> {
    // Nothing panics while holding the lock; a poisoned pool is still consistent.
    POOL.lock().unwrap_or_else(|e| e.into_inner())
}

fn layout(cap: usize) -> Option<Layout> {
    Layout::from_size_align(cap, ALIGN).ok()
}

/// The memory of one output array (its numpy `base`): back to the cache
/// when the last array using it goes.
#[pyclass(frozen, module = "blockshuffle._native")]
pub struct OutputBuffer {
    ptr: NonNull<u8>,
    cap: usize,
}

// SAFETY: the buffer is plain memory owned by this object; numpy arrays
// reach it only through their data pointers, under numpy's own rules.
unsafe impl Send for OutputBuffer {}
// SAFETY: as above; the object itself is immutable.
unsafe impl Sync for OutputBuffer {}

impl OutputBuffer {
    /// A buffer of at least `bytes` (> 0) bytes: a cached one of about that
    /// size (at most a quarter more), or new memory.
    pub fn take(bytes: usize) -> PyResult<OutputBuffer> {
        {
            let mut p = pool();
            let fits = |f: &Free| f.cap >= bytes && f.cap - bytes <= bytes / 4;
            if let Some(i) =
                p.free.iter().enumerate().filter(|(_, f)| fits(f)).min_by_key(|(_, f)| f.cap).map(|(i, _)| i)
            {
                let f = p.free.remove(i);
                p.held -= f.cap;
                return Ok(OutputBuffer { ptr: f.ptr, cap: f.cap });
            }
        }
        let oom = || PyMemoryError::new_err(format!("cannot allocate {bytes} bytes for the output"));
        let layout = layout(bytes).filter(|l| l.size() > 0).ok_or_else(oom)?;
        // SAFETY: a layout of non-zero size.
        let ptr = NonNull::new(unsafe { alloc(layout) }).ok_or_else(oom)?;
        advise_huge_pages(ptr.as_ptr(), bytes);
        Ok(OutputBuffer { ptr, cap: bytes })
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for OutputBuffer {
    fn drop(&mut self) {
        let mut evicted = Vec::new();
        {
            let mut p = pool();
            if self.cap <= p.limit {
                // The most recently freed buffers stay: the oldest go first.
                while !p.free.is_empty() && (p.free.len() >= MAX_FREE || p.held + self.cap > p.limit) {
                    let f = p.free.remove(0);
                    p.held -= f.cap;
                    evicted.push(f);
                }
                p.held += self.cap;
                p.free.push(Free { ptr: self.ptr, cap: self.cap });
            } else {
                evicted.push(Free { ptr: self.ptr, cap: self.cap });
            }
        }
        for f in evicted {
            release(f);
        }
    }
}

fn release(f: Free) {
    if let Some(l) = layout(f.cap) {
        // SAFETY: allocated in `take` with this layout, and no longer used:
        // numpy drops an array's base only after the array.
        unsafe { dealloc(f.ptr.as_ptr(), l) };
    }
}

/// Sets the most bytes kept in free buffers (0: none), freeing any beyond it.
pub fn set_limit(limit: usize) {
    let mut evicted = Vec::new();
    {
        let mut p = pool();
        p.limit = limit;
        while p.held > limit && !p.free.is_empty() {
            let f = p.free.remove(0);
            p.held -= f.cap;
            evicted.push(f);
        }
    }
    for f in evicted {
        release(f);
    }
}

/// How many free buffers are kept, and their bytes in all.
pub fn info() -> (usize, usize) {
    let p = pool();
    (p.free.len(), p.held)
}

/// Asks for transparent huge pages, as numpy does for its large arrays:
/// fewer, cheaper faults on first use.
fn advise_huge_pages(ptr: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = (ptr as usize).next_multiple_of(PAGE);
        let end = (ptr as usize + len) & !(PAGE - 1);
        if end > start {
            // SAFETY: a hint on whole pages inside our own allocation.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
}
