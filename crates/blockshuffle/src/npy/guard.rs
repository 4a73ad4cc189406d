//! A `SIGBUS` guard for memory maps of files (Linux).
//!
//! A file that another process truncates while it is mapped makes every
//! access to its pages past the new end raise `SIGBUS`, which kills the
//! process. While a map is guarded, a handler puts a page of zeros in place
//! of the page that faulted and records the fault; the access then goes on,
//! and the run ends with [`Guard::faulted`] telling the caller that what it
//! read is not the file (the caller reports an error and writes nothing).
//! There is no jump out of the handler (no `sigsetjmp`): the faulting
//! instruction simply finds memory there when it runs again.
//!
//! The handler is installed once, the first time a map is guarded. A
//! `SIGBUS` at any other address goes to the handler that was there before
//! (Rust's own, which reports a stack overflow or else ends the process with
//! the signal's default action): the handler puts it back and lets the
//! fault happen again. A `SIGBUS` sent by `kill` gets the default action
//! (the process ends, with a core dump where those are enabled).

use std::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

/// Maps that can be guarded at once; a map beyond these is not mapped but
/// read (the caller's choice).
const SLOTS: usize = 32;

struct Slot {
    start: AtomicUsize,
    /// 0 for a free slot.
    len: AtomicUsize,
    faulted: AtomicBool,
}

static TABLE: [Slot; SLOTS] =
    [const { Slot { start: AtomicUsize::new(0), len: AtomicUsize::new(0), faulted: AtomicBool::new(false) } }; SLOTS];

/// A sequence lock over [`TABLE`]'s ranges: odd while a writer changes
/// them, so that the handler (which cannot take a lock) reads a consistent
/// table. Writers take [`WRITERS`].
static SEQUENCE: AtomicUsize = AtomicUsize::new(0);
static WRITERS: Mutex<()> = Mutex::new(());

/// The page size, and the `SIGBUS` action from before ours (set once, before
/// the handler is installed, and only read after).
struct Installed {
    page: usize,
    previous: libc::sigaction,
}

static INSTALLED: OnceLock<Option<Installed>> = OnceLock::new();

/// A guarded range of memory (a map); unguarded when dropped, which must
/// happen before the map is unmapped.
pub(super) struct Guard {
    slot: usize,
}

impl Guard {
    /// Guards the `len` bytes at `start`; `None` if the handler cannot be
    /// installed or every slot is taken.
    pub(super) fn new(start: *const u8, len: usize) -> Option<Guard> {
        if !ready() || len == 0 {
            return None;
        }
        let _writer = WRITERS.lock().unwrap_or_else(PoisonError::into_inner);
        let slot = TABLE.iter().position(|s| s.len.load(Ordering::Relaxed) == 0)?;
        write_slot(slot, start as usize, len);
        Some(Guard { slot })
    }

    /// Whether an access to the range faulted (its file shrank under it).
    pub(super) fn faulted(&self) -> bool {
        TABLE[self.slot].faulted.load(Ordering::Acquire)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let _writer = WRITERS.lock().unwrap_or_else(PoisonError::into_inner);
        write_slot(self.slot, 0, 0);
    }
}

/// Sets a slot's range (a writer of the sequence lock; [`WRITERS`] held).
fn write_slot(slot: usize, start: usize, len: usize) {
    let s = SEQUENCE.load(Ordering::Relaxed);
    SEQUENCE.store(s.wrapping_add(1), Ordering::Relaxed);
    fence(Ordering::Release);
    TABLE[slot].start.store(start, Ordering::Relaxed);
    TABLE[slot].len.store(len, Ordering::Relaxed);
    TABLE[slot].faulted.store(false, Ordering::Relaxed);
    SEQUENCE.store(s.wrapping_add(2), Ordering::Release);
}

/// The slot whose range holds `addr` (a reader of the sequence lock; no
/// lock, no allocation: safe in a signal handler).
fn find(addr: usize) -> Option<usize> {
    loop {
        let before = SEQUENCE.load(Ordering::Acquire);
        if before % 2 == 1 {
            std::hint::spin_loop();
            continue;
        }
        let hit = TABLE.iter().position(|s| {
            let (start, len) = (s.start.load(Ordering::Relaxed), s.len.load(Ordering::Relaxed));
            len > 0 && addr >= start && addr - start < len
        });
        fence(Ordering::Acquire);
        if SEQUENCE.load(Ordering::Relaxed) == before {
            return hit;
        }
    }
}

/// Installs the handler, keeping the action it replaces.
fn install() -> Option<Installed> {
    // SAFETY: sysconf has no preconditions.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok().filter(|p| p.is_power_of_two())?;
    // SAFETY: an all-zero `sigaction` is a valid value of the plain C struct.
    let mut previous: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: reads the current action into `previous`, which we own.
    if unsafe { libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous) } != 0 {
        return None;
    }
    // The handler reads INSTALLED: [`activate`] installs it once this is stored.
    Some(Installed { page, previous })
}

/// Puts the handler in place; called once [`INSTALLED`] holds the previous action.
fn activate() -> bool {
    // SAFETY: an all-zero `sigaction` is a valid value of the plain C struct.
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = on_sigbus as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) as usize;
    action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
    // SAFETY: `action.sa_mask` is ours; sigemptyset initialises it.
    unsafe { libc::sigemptyset(&mut action.sa_mask) };
    // SAFETY: `action` is a fully initialised action whose handler only
    // does async-signal-safe work (atomics, mmap, sigaction, raise).
    unsafe { libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut()) == 0 }
}

extern "C" fn on_sigbus(signal: libc::c_int, info: *mut libc::siginfo_t, _context: *mut libc::c_void) {
    let Some(Some(installed)) = INSTALLED.get() else { return };
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let (code, addr) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    // A fault (not a `kill`) in a guarded map: zeros in place of the page.
    if code > 0 {
        if let Some(slot) = find(addr) {
            let page = addr & !(installed.page - 1);
            // SAFETY: the page lies in a map this module guards, which stays
            // mapped while guarded (a `Guard` is dropped before its map);
            // MAP_FIXED replaces just that page of it with anonymous memory,
            // unmapped with the rest of the map later. mmap is a plain
            // system call, safe in a signal handler.
            let p = unsafe {
                libc::mmap(
                    page as *mut libc::c_void,
                    installed.page,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                TABLE[slot].faulted.store(true, Ordering::Release);
                return;
            }
        }
    }
    // A fault not ours: the previous action (Rust's, which tells a stack
    // overflow), met when the instruction runs again and faults again.
    // A sent signal (`kill`): the default action, raised anew and delivered
    // when this handler returns (Rust's handler would take it for a fault
    // and let the process go on).
    // SAFETY: `previous` is the action read by sigaction and `default` an
    // all-zero action with SIG_DFL (0) as handler, both valid values;
    // sigaction and raise are async-signal-safe.
    unsafe {
        if code > 0 {
            libc::sigaction(signal, &installed.previous, std::ptr::null_mut());
        } else {
            let mut default: libc::sigaction = std::mem::zeroed();
            default.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(signal, &default, std::ptr::null_mut());
            libc::raise(signal);
        }
    }
}

/// Installs the handler the first time; whether it is in place.
pub(super) fn ready() -> bool {
    static ACTIVE: OnceLock<bool> = OnceLock::new();
    *ACTIVE.get_or_init(|| INSTALLED.get_or_init(install).is_some() && activate())
}
