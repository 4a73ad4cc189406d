//! The command's files: nothing lost, nothing left behind. Signals sent to a
//! real child process in the middle of a run, symlinks, FIFOs, devices, the
//! umask, an input truncated under a run, and standard input and output.
//! Each in its own temporary directory.

#![cfg(target_os = "linux")]

mod common;

use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use blockshuffle::npy;
use common::{bin, bin_after, listing, stderr};

const OP: [&str; 4] = ["torch", "pixel-shuffle", "--upscale-factor", "2"];

/// A `|u1` input of shape `[1, 4, side, side]`.
fn input(dir: &Path, side: usize) -> PathBuf {
    let path = dir.join("x.npy");
    let data: Vec<u8> = (0..4 * side * side).map(|i| (i % 251) as u8).collect();
    npy::write(&path, &npy::NpyArray::from_bytes("|u1", vec![1, 4, side, side], data).unwrap()).unwrap();
    path
}

/// 64 MiB: four progress chunks of 16 MiB with `--threads 1`, so that the
/// test pause (at the first report) comes with most of the run still to do.
const BIG: usize = 4096;

/// What the operator makes of `input`, by a plain run to a file.
fn expected(input: &Path) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("want.npy");
    let o = bin().args(OP).arg(input).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::read(out).unwrap()
}

/// A run paused by the test knob (`BLOCKSHUFFLE_TEST_PAUSE`) at its first
/// progress report: the input open, the output begun.
struct Paused {
    child: Child,
    control: tempfile::TempDir,
}

fn start_paused(input: &Path, output: &Path, named_temp: bool) -> Paused {
    let control = tempfile::tempdir().unwrap();
    // No core file from a signal that dumps one.
    let mut cmd = bin_after("ulimit -c 0");
    cmd.args(OP).arg(input).arg(output).args(["--threads", "1"]);
    cmd.env("BLOCKSHUFFLE_TEST_PAUSE", control.path()).stdout(Stdio::null()).stderr(Stdio::piped());
    if named_temp {
        cmd.env("BLOCKSHUFFLE_TEST_NAMED_TEMP", "1");
    }
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    while !control.path().join("paused").exists() {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            panic!("the run ended before its pause: {status:?} {err}");
        }
        assert!(start.elapsed() < Duration::from_secs(300), "no pause after 300 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    Paused { child, control }
}

impl Paused {
    fn signal(&self, signal: i32) {
        let pid = libc::pid_t::try_from(self.child.id()).unwrap();
        // SAFETY: sends a signal to our own child, which has not been reaped.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    }

    fn resume(self) -> Output {
        std::fs::write(self.control.path().join("go"), b"").unwrap();
        self.child.wait_with_output().unwrap()
    }

    fn killed(mut self, signal: i32) -> std::process::ExitStatus {
        self.signal(signal);
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if start.elapsed() > Duration::from_secs(60) {
                self.child.kill().unwrap();
                self.child.wait().unwrap();
                panic!("still running 60 s after signal {signal}");
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// The hidden temporary names in `dir`.
fn temporaries(dir: &Path) -> Vec<String> {
    listing(dir).into_iter().filter(|n| n.starts_with(".blockshuffle-")).collect()
}

/// Whether `dir`'s filesystem makes unnamed files (`O_TMPFILE`).
fn o_tmpfile_works(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE)
        .open(dir)
        .map(drop)
        .map_err(|e| e.to_string())
}

#[test]
fn sigint_and_sigterm_mid_run_leave_nothing_and_keep_the_old_output() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let x = input(dir, BIG);
    let y = dir.join("y.npy");
    let unnamed = o_tmpfile_works(dir);
    if let Err(why) = &unnamed {
        println!("O_TMPFILE unsupported here ({why}): the default run takes the named temporary file too");
    }
    for signal in [libc::SIGINT, libc::SIGTERM] {
        for named_temp in [false, true] {
            for old in [None, Some(&b"old contents"[..])] {
                let case = format!("signal {signal}, named temporary {named_temp}, old output {}", old.is_some());
                if let Some(old) = old {
                    std::fs::write(&y, old).unwrap();
                }
                let run = start_paused(&x, &y, named_temp);
                // The output is begun: under a hidden name, or with none.
                let begun = temporaries(dir);
                if named_temp || unnamed.is_err() {
                    assert_eq!(begun.len(), 1, "{case}: {begun:?}");
                    let prefix = format!(".blockshuffle-{}-", run.child.id());
                    assert!(begun[0].starts_with(&prefix) && begun[0].ends_with(".npy.tmp"), "{case}: {begun:?}");
                } else {
                    assert_eq!(begun, Vec::<String>::new(), "{case}");
                }
                let status = run.killed(signal);
                assert_eq!(status.signal(), Some(signal), "{case}: {status:?}");
                match old {
                    Some(old) => {
                        assert_eq!(listing(dir), ["x.npy", "y.npy"], "{case}");
                        assert_eq!(std::fs::read(&y).unwrap(), old, "{case}");
                        std::fs::remove_file(&y).unwrap();
                    }
                    None => assert_eq!(listing(dir), ["x.npy"], "{case}"),
                }
            }
        }
    }
}

#[test]
fn sigkill_or_a_sent_sigbus_mid_run_leaves_nothing_with_an_unnamed_output() {
    // SIGKILL cannot be caught. SIGBUS sent by kill is not a fault in a
    // mapped input, so the input's guard gives it the default action.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let unnamed = o_tmpfile_works(dir);
    let x = input(dir, BIG);
    for signal in [libc::SIGKILL, libc::SIGBUS] {
        let status = start_paused(&x, &dir.join("y.npy"), false).killed(signal);
        assert_eq!(status.signal(), Some(signal));
        match &unnamed {
            Ok(()) => assert_eq!(listing(dir), ["x.npy"], "signal {signal}"),
            Err(why) => {
                println!("not checked: this filesystem has no O_TMPFILE ({why}), so signal {signal} leaves a file")
            }
        }
    }
}

#[test]
fn a_temporary_file_left_by_sigkill_is_removed_by_the_next_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let x = input(dir, BIG);
    let run = start_paused(&x, &dir.join("y.npy"), true);
    let left = format!(".blockshuffle-{}-", run.child.id());
    assert_eq!(run.killed(libc::SIGKILL).signal(), Some(libc::SIGKILL));
    let stale = temporaries(dir);
    assert!(stale.len() == 1 && stale[0].starts_with(&left), "{stale:?}");
    // A file of a process that is still alive (this one) stays.
    let alive = format!(".blockshuffle-{}-abcdef.npy.tmp", std::process::id());
    std::fs::write(dir.join(&alive), b"in use").unwrap();

    let small = tmp.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let s = input(&small, 8);
    let o = bin().args(OP).arg(&s).arg(dir.join("z.npy")).env("BLOCKSHUFFLE_TEST_NAMED_TEMP", "1").output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(listing(dir), [alive.as_str(), "small", "x.npy", "z.npy"]);
}

#[test]
fn a_symlinked_output_writes_its_target_and_stays_a_link() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let x = input(dir, 8);
    let want = expected(&x);
    std::fs::create_dir(dir.join("sub")).unwrap();
    // An existing target, through two links; and a dangling link.
    std::fs::write(dir.join("sub/target.npy"), b"old").unwrap();
    std::os::unix::fs::symlink("sub/target.npy", dir.join("hop.npy")).unwrap();
    std::os::unix::fs::symlink("hop.npy", dir.join("link.npy")).unwrap();
    std::os::unix::fs::symlink("sub/new.npy", dir.join("dangling.npy")).unwrap();
    for link in ["link.npy", "dangling.npy"] {
        let o = bin().args(OP).arg(&x).arg(dir.join(link)).output().unwrap();
        assert!(o.status.success(), "{link}: {}", stderr(&o));
        assert!(std::fs::symlink_metadata(dir.join(link)).unwrap().file_type().is_symlink(), "{link}");
    }
    assert!(std::fs::symlink_metadata(dir.join("hop.npy")).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(dir.join("sub/target.npy")).unwrap(), want);
    assert_eq!(std::fs::read(dir.join("sub/new.npy")).unwrap(), want);
    assert_eq!(listing(dir), ["dangling.npy", "hop.npy", "link.npy", "sub", "x.npy"]);
    assert_eq!(listing(&dir.join("sub")), ["new.npy", "target.npy"]);
}

#[test]
fn a_fifo_output_is_streamed_to_its_reader() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let x = input(dir, 256);
    let want = expected(&x);
    let fifo = dir.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let o = bin().args(OP).arg(&x).arg(&fifo).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(reader.join().unwrap(), want);
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(listing(dir), ["fifo", "x.npy"]);
}

#[test]
fn character_devices_are_written_not_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let x = input(tmp.path(), 8);
    let o = bin().args(OP).arg(&x).arg("/dev/full").output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "error: /dev/full: No space left on device (os error 28)\n");
    let o = bin().args(OP).arg(&x).arg("/dev/null").output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    for dev in ["/dev/full", "/dev/null"] {
        assert!(std::fs::metadata(dev).unwrap().file_type().is_char_device(), "{dev}");
    }
    assert_eq!(listing(tmp.path()), ["x.npy"]);
}

#[test]
fn a_directory_as_output_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let x = input(tmp.path(), 8);
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let o = bin().args(OP).arg(&x).arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), format!("error: {}: is a directory\n", out.display()));
    assert_eq!(listing(&out), Vec::<String>::new());
    assert_eq!(listing(tmp.path()), ["out", "x.npy"]);
}

#[test]
fn new_outputs_follow_the_umask() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let x = input(dir, 8);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    for (umask, named_temp, want) in
        [("077", false, 0o600), ("077", true, 0o600), ("027", false, 0o640), ("002", true, 0o664)]
    {
        let out = dir.join(format!("y-{umask}-{named_temp}.npy"));
        let mut cmd = bin_after(&format!("umask {umask}"));
        cmd.args(OP).arg(&x).arg(&out);
        if named_temp {
            cmd.env("BLOCKSHUFFLE_TEST_NAMED_TEMP", "1");
        }
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(mode(&out), want, "umask {umask}, named temporary {named_temp}");
    }
}

#[test]
fn an_input_truncated_mid_run_is_an_error_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let x = input(dir, BIG);
    let len = std::fs::metadata(&x).unwrap().len();
    for old in [None, Some(&b"old contents"[..])] {
        let y = dir.join("y.npy");
        if let Some(old) = old {
            std::fs::write(&y, old).unwrap();
        }
        let run = start_paused(&x, &y, false);
        std::fs::OpenOptions::new().write(true).open(&x).unwrap().set_len(4096).unwrap();
        let o = run.resume();
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert_eq!(
            stderr(&o),
            format!("error: {}: truncated while being read: expected {len} bytes, got 4096\n", x.display())
        );
        match old {
            Some(old) => assert_eq!(std::fs::read(&y).unwrap(), old),
            None => assert!(!y.exists()),
        }
        assert_eq!(temporaries(dir), Vec::<String>::new());
        // Whole again for the next case.
        input(dir, BIG);
    }
}

/// Runs the operator with `args` as INPUT OUTPUT, `stdin` piped in.
fn piped(args: [&str; 2], stdin: &[u8]) -> Output {
    let mut child =
        bin().args(OP).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&data);
    });
    let o = child.wait_with_output().unwrap();
    writer.join().unwrap();
    o
}

#[test]
fn dash_reads_stdin_and_writes_stdout() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let x = input(dir, 512);
    let want = expected(&x);
    let bytes = std::fs::read(&x).unwrap();
    // A pipe in, a pipe out.
    let o = piped(["-", "-"], &bytes);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout == want, "stdout differs from the file run's output");
    // /dev/stdin and /dev/stdout as paths, on pipes.
    let o = piped(["/dev/stdin", "/dev/stdout"], &bytes);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout == want, "/dev/stdout differs from the file run's output");
    // A pipe in, a file out; a file in (redirected), a pipe out.
    let y = dir.join("y.npy");
    let o = piped(["-", y.to_str().unwrap()], &bytes);
    assert!(o.status.success() && o.stdout.is_empty(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&y).unwrap(), want);
    let o = bin().args(OP).args(["-", "-"]).stdin(std::fs::File::open(&x).unwrap()).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout == want, "stdout from a redirected file differs");
    assert_eq!(listing(dir), ["x.npy", "y.npy"]);
}

#[test]
fn a_short_stdin_is_a_clean_error() {
    let tmp = tempfile::tempdir().unwrap();
    let x = input(tmp.path(), 8);
    let bytes = std::fs::read(&x).unwrap();
    let cases = [
        (&bytes[..0], "error: <stdin>: not a .npy file (shorter than its magic string)\n"),
        (&bytes[..50], "error: <stdin>: ends inside its 118-byte header\n"),
        (&bytes[..200], "error: <stdin>: ended after 72 of the 256 data bytes its header declares\n"),
    ];
    for (input, message) in cases {
        let o = piped(["-", "-"], input);
        assert_eq!((o.status.code(), stderr(&o).as_str(), o.stdout.len()), (Some(1), message, 0));
    }
    // `/dev/stdin` names itself.
    let o = piped(["/dev/stdin", "-"], &bytes[..50]);
    assert_eq!(stderr(&o), "error: /dev/stdin: ends inside its 118-byte header\n");
}
