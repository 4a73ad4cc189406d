//! Where a `.npy` goes, and how it gets there whole or not at all.
//!
//! - A regular file (new, or replacing one; through a symlink, the link's
//!   target) is written completely before it appears. On Linux the file is
//!   made without a name (`O_TMPFILE` in the destination's directory) and
//!   linked into place when complete, so that a crash, `SIGKILL` or power
//!   loss part-way leaves nothing behind; an existing file is replaced by
//!   linking to a hidden name beside it and renaming that over it. Where the
//!   filesystem (or the platform) has no `O_TMPFILE`, the file is written
//!   under a hidden name `.blockshuffle-PID-XXXXXX.npy.tmp` beside the output
//!   and renamed over it when complete; [`abandon_outputs`] removes such
//!   files (for a signal handler), and a later run removes those of
//!   processes that no longer exist (by the process id in the name: a
//!   process of another pid namespace writing to the same directory could be
//!   taken for dead, and its rename would then fail with an error, not
//!   lose data).
//! - A FIFO, a character device (`/dev/null`, a terminal), a socket, a block
//!   device or standard output is not a file to replace: the bytes are
//!   streamed to it.
//!
//! New files get mode `0o666` less the umask, as numpy's files do; a
//! replaced file keeps its mode.

use std::fs::{File, OpenOptions, Permissions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::io_error;
use crate::Result;

/// Symlinks followed before giving up, as Linux's `ELOOP` limit.
const MAX_LINKS: usize = 40;

/// Where the bytes of an output go.
pub(super) enum Sink {
    /// A regular file, put in place when complete.
    File(Pending),
    /// Standard output, a FIFO or a device: written as it comes.
    Stream(File),
}

impl Sink {
    /// The destination `path` names (`None`: standard output), checked and
    /// opened; `shown` is its name in errors.
    pub(super) fn open(path: Option<&Path>, shown: &Path) -> Result<Sink> {
        let Some(path) = path else {
            return super::duplicate(&io::stdout()).map(Sink::Stream).map_err(|e| io_error(shown, &e));
        };
        let (target, existing) = match std::fs::metadata(path) {
            Ok(meta) if meta.is_file() => {
                (resolve_links(path).map_err(|e| io_error(shown, &e))?, Some(meta.permissions()))
            }
            Ok(meta) if meta.is_dir() => {
                return Err(io_error(shown, &io::Error::new(io::ErrorKind::IsADirectory, "is a directory")))
            }
            // A FIFO, a device or a socket: stream to it.
            Ok(_) => {
                let file = OpenOptions::new().write(true).open(path).map_err(|e| io_error(shown, &e))?;
                return Ok(Sink::Stream(file));
            }
            // Nothing there, or a dangling symlink: create (the link's target).
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                (resolve_links(path).map_err(|e| io_error(shown, &e))?, None)
            }
            Err(e) => return Err(io_error(shown, &e)),
        };
        Pending::create(target, existing, shown).map(Sink::File)
    }
}

/// `path` with the symlinks of its last component followed (the path a
/// symlink's target would be created at, if it does not exist yet).
fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::read_link(&path) {
            Ok(target) => {
                path = match path.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                }
            }
            // Not a symlink (or nothing there): this is the place.
            Err(e) if matches!(e.kind(), io::ErrorKind::InvalidInput | io::ErrorKind::NotFound) => return Ok(path),
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(format!("more than {MAX_LINKS} levels of symbolic links")))
}

/// The directory a file at `path` is created in.
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// A regular file being written, not yet in place.
pub(super) struct Pending {
    file: File,
    /// Where it goes (symlinks followed).
    target: PathBuf,
    /// The output's name in errors.
    shown: PathBuf,
    /// Whether a file was at `target` when this one was begun.
    replaces: bool,
    /// Its temporary name, if it has one (else it has no name yet).
    named: Option<Temp>,
}

impl Pending {
    fn create(target: PathBuf, existing: Option<Permissions>, shown: &Path) -> Result<Pending> {
        let dir = parent_dir(&target);
        let err = |e: io::Error| io_error(shown, &e);
        clean_stale(dir);
        let (file, named) = match unnamed(dir).map_err(err)? {
            Some(file) => (file, None),
            None => {
                let (file, temp) = Temp::create(dir, new_file).map_err(err)?;
                (file, Some(temp))
            }
        };
        let replaces = existing.is_some();
        if let Some(perms) = existing {
            file.set_permissions(perms).map_err(err)?;
        }
        Ok(Pending { file, target, shown: shown.to_path_buf(), replaces, named })
    }

    /// The file, to write to.
    pub(super) fn file(&self) -> &File {
        &self.file
    }

    /// Puts the completely written file in place (synced first). Dropped
    /// instead, it leaves nothing behind.
    pub(super) fn persist(self) -> Result<()> {
        let err = |e: io::Error| io_error(&self.shown, &e);
        self.file.sync_data().map_err(err)?;
        match self.named {
            Some(temp) => temp.rename_to(&self.target).map_err(err),
            None => {
                if !self.replaces {
                    match link(&self.file, &self.target) {
                        Ok(()) => return Ok(()),
                        // Created meanwhile: replace it, as below.
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                        Err(e) => return Err(err(e)),
                    }
                }
                let dir = parent_dir(&self.target);
                let ((), temp) = Temp::create(dir, |path| link(&self.file, path)).map_err(err)?;
                temp.rename_to(&self.target).map_err(err)
            }
        }
    }
}

/// A new file at `path` (none may be there) for reading and writing, with
/// mode `0o666` less the umask.
fn new_file(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o666);
    options.open(path)
}

/// Forces the named temporary file that filesystems without `O_TMPFILE`
/// get, so that tests can exercise that path on any filesystem. Not for
/// users: only the tests set it.
const NAMED_TEMP_FOR_TESTS: &str = "BLOCKSHUFFLE_TEST_NAMED_TEMP";

/// A file without a name in `dir`, with mode `0o666` less the umask (the
/// kernel applies it), if the filesystem makes one; `None` if it cannot
/// (then a named temporary file is used).
#[cfg(target_os = "linux")]
fn unnamed(dir: &Path) -> io::Result<Option<File>> {
    use std::os::unix::fs::OpenOptionsExt;
    if std::env::var_os(NAMED_TEMP_FOR_TESTS).is_some() {
        return Ok(None);
    }
    match OpenOptions::new().read(true).write(true).mode(0o666).custom_flags(libc::O_TMPFILE).open(dir) {
        Ok(file) => Ok(Some(file)),
        // No O_TMPFILE on this filesystem (EOPNOTSUPP), or a kernel that
        // predates it (EISDIR).
        Err(e) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)) => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(not(target_os = "linux"))]
fn unnamed(_dir: &Path) -> io::Result<Option<File>> {
    let _ = NAMED_TEMP_FOR_TESTS;
    Ok(None)
}

/// Gives the unnamed `file` the name `path` (which must not exist).
#[cfg(target_os = "linux")]
fn link(file: &File, path: &Path) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::io::AsRawFd;
    let to = CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)?;
    let fd = file.as_raw_fd();
    let proc_path = CString::new(format!("/proc/self/fd/{fd}")).map_err(io::Error::other)?;
    // SAFETY: both paths are NUL-terminated strings that outlive the call.
    let rc = unsafe {
        libc::linkat(libc::AT_FDCWD, proc_path.as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::AT_SYMLINK_FOLLOW)
    };
    if rc == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() != Some(libc::ENOENT) || std::path::Path::new("/proc/self/fd").exists() {
        return Err(e);
    }
    // No /proc: link the descriptor itself (which some kernels allow only
    // with CAP_DAC_READ_SEARCH; failing that, the run fails with the error,
    // and the unnamed file vanishes with the process).
    // SAFETY: `fd` is open for the duration of the call; the empty path and
    // `to` are NUL-terminated strings that outlive it.
    let rc = unsafe { libc::linkat(fd, c"".as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::AT_EMPTY_PATH) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn link(_file: &File, _path: &Path) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// The temporary files this process has under a name right now.
static TEMPS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn temps() -> MutexGuard<'static, Vec<PathBuf>> {
    // A panic elsewhere while holding it leaves the list itself whole.
    TEMPS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Removes the temporary files of the outputs this process is writing now,
/// and makes every thread that then begins, finishes or abandons an output
/// wait forever: for a handler of `SIGINT` or `SIGTERM` that ends the
/// process next. (An output made without a name, as on most Linux
/// filesystems, needs no removing: the system frees it when the process
/// ends.)
pub fn abandon_outputs() {
    let mut list = temps();
    for path in list.drain(..) {
        let _ = std::fs::remove_file(path);
    }
    // Held until the process ends: nothing may be created or renamed now.
    std::mem::forget(list);
}

/// A file under a temporary name, listed in [`TEMPS`] while it exists;
/// removed when dropped.
struct Temp {
    path: PathBuf,
}

impl Temp {
    /// Makes a file under a new temporary name in `dir` with `make`, listed
    /// before anything else can happen.
    fn create<R>(dir: &Path, make: impl FnMut(&Path) -> io::Result<R>) -> io::Result<(R, Temp)> {
        let mut list = temps();
        let made = tempfile::Builder::new()
            .prefix(&format!(".blockshuffle-{}-", std::process::id()))
            .suffix(".npy.tmp")
            .rand_bytes(6)
            .make_in(dir, make)?;
        let (value, path) = made.into_parts();
        let path = path.keep().map_err(|e| e.error)?;
        list.push(path.clone());
        Ok((value, Temp { path }))
    }

    /// Renames the file to `target`, replacing what is there.
    fn rename_to(self, target: &Path) -> io::Result<()> {
        let mut list = temps();
        let result = std::fs::rename(&self.path, target);
        if result.is_err() {
            let _ = std::fs::remove_file(&self.path);
        }
        list.retain(|p| *p != self.path);
        std::mem::forget(self);
        result
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let mut list = temps();
        let _ = std::fs::remove_file(&self.path);
        list.retain(|p| *p != self.path);
    }
}

/// Removes from `dir` the temporary files of processes that no longer exist
/// (ended by `SIGKILL` or a crash between creating and renaming them).
/// Best effort: a file that cannot be removed stays.
#[cfg(unix)]
fn clean_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(stale_pid) else { continue };
        if pid == std::process::id() {
            continue;
        }
        let Ok(raw) = libc::pid_t::try_from(pid) else { continue };
        // SAFETY: signal 0 sends nothing; it only asks whether `raw` exists.
        let gone = unsafe { libc::kill(raw, 0) } != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(not(unix))]
fn clean_stale(_dir: &Path) {}

/// The process id in a temporary file's name `.blockshuffle-PID-XXXXXX.npy.tmp`.
#[cfg(any(unix, test))]
fn stale_pid(name: &str) -> Option<u32> {
    let middle = name.strip_prefix(".blockshuffle-")?.strip_suffix(".npy.tmp")?;
    let (pid, random) = middle.split_once('-')?;
    if random.len() != 6 || !random.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    pid.parse().ok().filter(|&p| p > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_names_give_their_pid() {
        assert_eq!(stale_pid(".blockshuffle-1234-aZ09xy.npy.tmp"), Some(1234));
        assert_eq!(stale_pid(".blockshuffle-aZ09xy.npy.tmp"), None); // older, without a pid
        assert_eq!(stale_pid(".blockshuffle-0-aZ09xy.npy.tmp"), None);
        assert_eq!(stale_pid(".blockshuffle-12-aZ09x.npy.tmp"), None);
        assert_eq!(stale_pid(".blockshuffle-12-aZ09x!.npy.tmp"), None);
        assert_eq!(stale_pid("blockshuffle-12-aZ09xy.npy.tmp"), None);
        assert_eq!(stale_pid(".blockshuffle-12-aZ09xy.npy"), None);
    }

    #[test]
    fn links_are_followed_to_where_the_target_goes() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(resolve_links(&d.join("plain")).unwrap(), d.join("plain"));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("sub/real", d.join("a")).unwrap();
            std::os::unix::fs::symlink("a", d.join("b")).unwrap();
            assert_eq!(resolve_links(&d.join("b")).unwrap(), d.join("sub/real"));
            std::os::unix::fs::symlink("loop", d.join("loop")).unwrap();
            let e = resolve_links(&d.join("loop")).unwrap_err();
            assert_eq!(e.to_string(), "more than 40 levels of symbolic links");
        }
    }
}
