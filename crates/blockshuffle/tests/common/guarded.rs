//! Buffers that end (or begin) exactly at an inaccessible page, so that a
//! kernel reading one byte past the data faults instead of reading garbage
//! (memchr's practice); on non-unix targets, a plain vector.

#![allow(dead_code)]

/// Which end of the data touches the guard page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    /// The byte after the data is unmapped.
    End,
    /// The byte before the data is unmapped.
    Start,
}

/// `len` bytes between two `PROT_NONE` pages, one of them adjacent.
pub struct Guarded {
    #[cfg(unix)]
    map: *mut libc::c_void,
    #[cfg(unix)]
    map_len: usize,
    data: *mut u8,
    len: usize,
    #[cfg(not(unix))]
    vec: Vec<u8>,
}

// SAFETY: the mapping is owned by the value alone.
unsafe impl Send for Guarded {}

#[cfg(unix)]
fn page() -> usize {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
}

impl Guarded {
    /// A copy of `bytes` against a guard page at `edge`.
    #[cfg(unix)]
    pub fn new(bytes: &[u8], edge: Edge) -> Guarded {
        let page = page();
        let len = bytes.len();
        let body = len.div_ceil(page).max(1) * page;
        let map_len = body + 2 * page;
        // SAFETY: an anonymous private mapping, checked below.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert!(map != libc::MAP_FAILED, "mmap failed");
        let base = map.cast::<u8>();
        // SAFETY: both guard pages lie inside the mapping.
        unsafe {
            assert_eq!(libc::mprotect(base.cast(), page, libc::PROT_NONE), 0);
            assert_eq!(libc::mprotect(base.add(page + body).cast(), page, libc::PROT_NONE), 0);
        }
        let start = match edge {
            Edge::End => page + body - len,
            Edge::Start => page,
        };
        // SAFETY: `[start, start + len)` is inside the writable body.
        let data = unsafe { base.add(start) };
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), data, len) };
        Guarded { map, map_len, data, len }
    }

    #[cfg(not(unix))]
    pub fn new(bytes: &[u8], _edge: Edge) -> Guarded {
        let mut vec = bytes.to_vec();
        Guarded { data: vec.as_mut_ptr(), len: vec.len(), vec }
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `len` initialised bytes owned by `self`.
        unsafe { std::slice::from_raw_parts(self.data, self.len) }
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.data, self.len) }
    }
}

#[cfg(unix)]
impl Drop for Guarded {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.map, self.map_len) };
    }
}
