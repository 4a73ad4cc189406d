//! `blockshuffle`: run any framework's block-rearrangement operator, or
//! numpy's transpose or einops' rearrange, on a `.npy` file, infer shapes,
//! list the operators, show the worked examples, and benchmark against
//! memcpy.

/// `println!` that ends the process quietly when stdout is closed (a pipe
/// into `head`) instead of panicking.
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        if writeln!(std::io::stdout(), $($t)*).is_err() {
            std::process::exit(0);
        }
    }};
}

mod bench;
mod cli;
mod demo;
mod error;
mod files;
mod progress;
mod signals;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use blockshuffle::catalog::{self, OpSpec, CATALOG};
use blockshuffle::{npy, Operator, Parallelism};
use clap::ArgMatches;

use crate::error::CliError;

fn main() -> ExitCode {
    // A file-size limit (ulimit -f) must fail the write with an error we
    // report and clean up after, not kill the process mid-file.
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to "ignore" before any thread
    // starts has no preconditions.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    match run(std::env::args_os().collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Parse(e)) => {
            // Help and the version go to stdout with status 0, errors to
            // stderr with status 2; a closed stdout is not an error here.
            let _ = e.print();
            ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(error::USAGE))
        }
        Err(e) => {
            let message = e.to_string().replace('\n', " ");
            eprintln!("error: {message}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn run(args: Vec<OsString>) -> Result<(), CliError> {
    let m = cli::command().try_get_matches_from(&args)?;
    once_only(&args, "threads")?;
    let Some((name, sub)) = m.subcommand() else { return Ok(()) };
    match name {
        "list" => print_list(),
        "demo" => demo::run()?,
        "bench" => bench::main(sub)?,
        "info" => info(sub.get_one::<PathBuf>("file").map_or(Path::new("-"), PathBuf::as_path))?,
        "completions" => completions(sub)?,
        "man" => man()?,
        "shape" => {
            let (spec, m) = operator(sub)?;
            shape(&spec, m)?;
        }
        _ => {
            let (spec, m) = operator(&m)?;
            let file = |id| m.get_one::<PathBuf>(id).map_or(Path::new("-"), PathBuf::as_path);
            apply(&spec, file("input"), file("output"), parallelism(m))?;
        }
    }
    Ok(())
}

/// A global flag given twice at two levels (`--threads 1 tf ... --threads
/// 2`) reaches the matches once, the last one winning: it is counted on the
/// command line (before any `--`) and rejected as clap rejects any repeated
/// flag.
fn once_only(args: &[OsString], id: &str) -> Result<(), clap::Error> {
    let flag = format!("--{id}");
    let given = args
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy())
        .take_while(|a| a != "--")
        .filter(|a| *a == flag || a.strip_prefix(flag.as_str()).is_some_and(|rest| rest.starts_with('=')))
        .count();
    if given > 1 {
        let message = format!("the argument '{flag} <N>' cannot be used multiple times");
        return Err(cli::command().error(clap::error::ErrorKind::ArgumentConflict, message));
    }
    Ok(())
}

/// The operator a `FRAMEWORK OP ...` subcommand names, parsed from its
/// flags by the catalogue, and the operator's own matches.
fn operator(m: &ArgMatches) -> Result<(OpSpec, &ArgMatches), CliError> {
    let Some((fw, fm)) = m.subcommand() else { return Err(missing("FRAMEWORK")) };
    let Some((op, om)) = fm.subcommand() else { return Err(missing("OP")) };
    let entry = catalog::entry(fw, op).ok_or_else(|| {
        CliError::from(blockshuffle::Error::UnknownOperator { framework: fw.to_string(), op: op.to_string() })
    })?;
    Ok((OpSpec::parse(fw, op, &cli::flag_args(entry, om))?, om))
}

/// A subcommand clap should have required.
fn missing(what: &str) -> CliError {
    CliError::Usage { arg: what.to_string(), problem: "is required".to_string() }
}

/// `--threads` (global): 0 every core, 1 this thread, else that many.
fn parallelism(m: &ArgMatches) -> Parallelism {
    match m.get_one::<usize>("threads").copied().unwrap_or(0) {
        0 => Parallelism::Auto,
        1 => Parallelism::Sequential,
        n => Parallelism::Threads(n),
    }
}

/// Runs `spec` on the files (`-`: stdin or stdout), with a progress bar on
/// a terminal; on SIGINT, SIGTERM or SIGHUP the output's temporary file is
/// removed first (see `signals`).
fn apply(spec: &OpSpec, input: &Path, output: &Path, parallelism: Parallelism) -> Result<(), CliError> {
    signals::install();
    let mut pause = files::TestPause::from_env();
    let mut bar = progress::Bar::new();
    let result = npy::run(spec, files::place(input), files::place(output), parallelism, &mut |d, t| {
        pause.at_progress();
        bar.update(d, t)
    });
    bar.finish();
    result?;
    Ok(())
}

fn print_list() {
    outln!("{:<6} {:<18} {:<20} FLAGS", "FRAME", "OP", "FRAMEWORK NAME");
    for e in CATALOG {
        outln!("{:<6} {:<18} {:<20} {}", e.framework, e.op, e.framework_name, e.synopsis());
        outln!("{:<46} {}", "", e.summary);
    }
}

/// `D0,D1,...` (empty: a 0-d shape).
fn parse_dims(dims: &str) -> Result<Vec<usize>, CliError> {
    if dims.is_empty() {
        return Ok(Vec::new());
    }
    dims.split(',')
        .map(|d| {
            d.trim().parse::<usize>().map_err(|_| CliError::Usage {
                arg: "--input-shape".to_string(),
                problem: format!("entry {d:?} is not a dimension (a whole number)"),
            })
        })
        .collect()
}

fn list(s: &[usize]) -> String {
    s.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(",")
}

/// `shape`: the output shape for `--input-shape` or `--input FILE.npy`'s shape.
fn shape(spec: &OpSpec, m: &ArgMatches) -> Result<(), CliError> {
    let input = match (m.get_one::<String>("input-shape"), m.get_one::<PathBuf>("input")) {
        (Some(dims), _) => parse_dims(dims)?,
        (None, Some(path)) => npy::header(path)?.shape,
        (None, None) => return Err(missing("--input-shape or --input")),
    };
    outln!("{}", list(&spec.output_shape(&input)?));
    Ok(())
}

/// `info`: what a `.npy` file's header says.
fn info(path: &Path) -> Result<(), CliError> {
    let h = npy::header(path)?;
    let elements = h.shape.iter().fold(1u128, |n, &d| n.saturating_mul(d as u128));
    outln!("shape: [{}]", h.shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", "));
    // A plain dtype without the quotes of its Python literal ('<f4').
    let descr = h.descr.strip_prefix('\'').and_then(|d| d.strip_suffix('\'')).unwrap_or(&h.descr);
    outln!("dtype: {descr}");
    outln!("order: {}", if h.fortran_order { "Fortran" } else { "C" });
    let unit = if h.elem_size == 1 { "byte" } else { "bytes" };
    let bytes = elements.saturating_mul(h.elem_size as u128);
    outln!("size:  {elements} elements of {} {unit}, {bytes} bytes of data", h.elem_size);
    Ok(())
}

/// Writes `bytes` to stdout; a closed stdout (a pipe into `head`) ends the
/// process quietly, as `outln!` does.
fn print_bytes(bytes: &[u8]) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    if out.write_all(bytes).and_then(|()| out.flush()).is_err() {
        std::process::exit(0);
    }
}

/// `completions SHELL`: the completion script, from the same definition.
fn completions(m: &ArgMatches) -> Result<(), CliError> {
    let Some(&shell) = m.get_one::<clap_complete::Shell>("shell") else { return Err(missing("SHELL")) };
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cli::command(), "blockshuffle", &mut script);
    print_bytes(&script);
    Ok(())
}

/// `man`: the man page (roff), from the same definition.
fn man() -> Result<(), CliError> {
    let mut page = Vec::new();
    clap_mangen::Man::new(cli::command())
        .render(&mut page)
        .map_err(|source| CliError::Io { path: "<man page>".into(), source })?;
    print_bytes(&page);
    Ok(())
}
