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

/// `print!` with the same behaviour as `outln!`.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        if write!(std::io::stdout(), $($t)*).is_err() {
            std::process::exit(0);
        }
    }};
}

mod bench;
mod demo;
mod files;
mod progress;
mod signals;

use std::path::Path;
use std::process::ExitCode;

use blockshuffle::catalog::{self, OpSpec, CATALOG};
use blockshuffle::{npy, Operator, Parallelism};

const USAGE: &str = "\
blockshuffle: TensorFlow, OpenVINO, ONNX and PyTorch block-rearrangement operators,
numpy transpose and einops rearrange, on .npy files

USAGE:
    blockshuffle FRAMEWORK OP [FLAGS] INPUT.npy OUTPUT.npy [--threads N]
    blockshuffle shape FRAMEWORK OP [FLAGS] --input-shape D0,D1,...
    blockshuffle list
    blockshuffle demo
    blockshuffle bench [--workloads FILE] [--threads N] [--reps R] [--json FILE] [--filter ID,...]
    blockshuffle FRAMEWORK OP --help

Lists are comma-separated integers without spaces; pairs are flattened row-major
(paddings [[0,1],[2,0]] is 0,1,2,0). Values may be negative (--paddings -1,0).
An einops pattern is one argument (quote it); --sizes gives lengths as NAME=V,NAME=V.
The output keeps the input's dtype (any numpy dtype but object arrays) and is
written atomically: on any error no output file is left behind.

EXAMPLES:
    blockshuffle tf space-to-batch-nd --block-shape 2,2 --paddings 0,0,0,0 x.npy y.npy
    blockshuffle onnx depth-to-space --blocksize 2 --mode CRD x.npy y.npy
    blockshuffle torch pixel-shuffle --upscale-factor 3 x.npy y.npy --threads 1
    blockshuffle numpy transpose --axes 0,3,1,2 x.npy y.npy
    blockshuffle einops rearrange --pattern '... (c r1 r2) h w -> ... c (h r1) (w r2)' --sizes r1=2,r2=2 x.npy y.npy
    blockshuffle shape ov space-to-batch --block-shape 1,2,4,3,1 --pads-begin 0,0,1,0,0 \\
        --pads-end 0,0,1,0,0 --input-shape 2,6,10,3,3
    blockshuffle list
";

const SHAPE_HELP: &str = "\
blockshuffle shape: print an operator's output shape for an input shape, without data.

USAGE:
    blockshuffle shape FRAMEWORK OP [FLAGS] --input-shape D0,D1,...

EXAMPLE:
    blockshuffle shape torch pixel-shuffle --upscale-factor 3 --input-shape 1,18,7,9
    (prints 1,2,21,27)
";

/// A failure: its message and exit code (2 for usage, 1 for everything else).
struct Failure {
    message: String,
    code: u8,
}

impl From<blockshuffle::Error> for Failure {
    fn from(e: blockshuffle::Error) -> Self {
        Failure { message: e.to_string(), code: 1 }
    }
}

fn usage(message: impl Into<String>) -> Failure {
    Failure { message: format!("{} (see `blockshuffle --help`)", message.into()), code: 2 }
}

fn main() -> ExitCode {
    // A file-size limit (ulimit -f) must fail the write with an error we
    // report and clean up after, not kill the process mid-file.
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to "ignore" before any thread
    // starts has no preconditions.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            let message = f.message.replace('\n', " ");
            eprintln!("error: {message}");
            ExitCode::from(f.code)
        }
    }
}

fn run(args: &[String]) -> Result<(), Failure> {
    let Some(first) = args.first() else {
        out!("{USAGE}");
        return Ok(());
    };
    match first.as_str() {
        "-h" | "--help" | "help" => {
            out!("{USAGE}");
            Ok(())
        }
        "-V" | "--version" => {
            outln!("blockshuffle {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        "list" => {
            if args[1..].iter().any(|a| a == "--help" || a == "-h") {
                outln!("blockshuffle list: print every operator with its flags.");
                return Ok(());
            }
            no_more(&args[1..], "list")?;
            print_list();
            Ok(())
        }
        "demo" => {
            if args[1..].iter().any(|a| a == "--help" || a == "-h") {
                outln!("blockshuffle demo: run the specification's worked examples and print inputs, parameters and outputs.");
                return Ok(());
            }
            no_more(&args[1..], "demo")?;
            demo::run().map_err(Failure::from)
        }
        "bench" => bench::main(&args[1..]),
        "shape" if matches!(args.get(1).map(String::as_str), None | Some("--help" | "-h")) => {
            out!("{SHAPE_HELP}");
            Ok(())
        }
        "shape" => shape(&args[1..]),
        _ => apply(args),
    }
}

fn no_more(rest: &[String], cmd: &str) -> Result<(), Failure> {
    match rest.first() {
        Some(extra) => Err(usage(format!("`{cmd}` takes no arguments, got {extra:?}"))),
        None => Ok(()),
    }
}

fn print_list() {
    outln!("{:<6} {:<18} {:<20} FLAGS", "FRAME", "OP", "FRAMEWORK NAME");
    for e in CATALOG {
        outln!("{:<6} {:<18} {:<20} {}", e.framework, e.op, e.framework_name, e.flags);
        outln!("{:<46} {}", "", e.summary);
    }
}

fn op_help(e: &catalog::Entry) -> String {
    format!(
        "blockshuffle {fw} {op}: {name}\n    {summary}\n\nUSAGE:\n    blockshuffle {fw} {op} {flags} INPUT.npy OUTPUT.npy [--threads N]\n    blockshuffle shape {fw} {op} {flags} --input-shape D0,D1,...\n\nEXAMPLE:\n    blockshuffle {fw} {op} {example} in.npy out.npy\n",
        fw = e.framework,
        op = e.op,
        name = e.framework_name,
        summary = e.summary,
        flags = e.flags,
        example = e.example,
    )
}

/// Splits `FRAMEWORK OP rest...` into the catalogue entry, the operator's
/// flags, the positional arguments and the flags this command handles itself
/// (`own`, each taking a value).
struct Parsed<'a> {
    entry: &'static catalog::Entry,
    op_flags: Vec<&'a str>,
    positional: Vec<&'a str>,
    own: Vec<(&'static str, &'a str)>,
    help: bool,
}

fn parse<'a>(args: &'a [String], own_names: &[&'static str]) -> Result<Parsed<'a>, Failure> {
    let (Some(fw), Some(op)) = (args.first(), args.get(1)) else {
        return Err(usage("expected FRAMEWORK OP (`blockshuffle list` shows them)"));
    };
    let entry = catalog::entry(fw, op)
        .ok_or_else(|| Failure::from(blockshuffle::Error::UnknownOperator { framework: fw.clone(), op: op.clone() }))?;
    let mut parsed = Parsed { entry, op_flags: Vec::new(), positional: Vec::new(), own: Vec::new(), help: false };
    let mut it = args[2..].iter();
    while let Some(arg) = it.next() {
        if arg == "--help" || arg == "-h" {
            parsed.help = true;
        } else if let Some(body) = arg.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (body, None),
            };
            let value = match inline {
                Some(v) => v,
                None => it.next().map(String::as_str).ok_or_else(|| usage(format!("{arg} needs a value")))?,
            };
            if let Some(&own) = own_names.iter().find(|n| **n == name) {
                parsed.own.push((own, value));
            } else {
                parsed.op_flags.push(arg.split_once('=').map_or(arg.as_str(), |(f, _)| f));
                parsed.op_flags.push(value);
            }
        } else {
            parsed.positional.push(arg);
        }
    }
    Ok(parsed)
}

fn parse_threads(value: &str) -> Result<Parallelism, Failure> {
    let n: usize = value.parse().map_err(|_| usage(format!("--threads {value:?} is not a whole number")))?;
    Ok(match n {
        0 => Parallelism::Auto,
        1 => Parallelism::Sequential,
        n => Parallelism::Threads(n),
    })
}

fn apply(args: &[String]) -> Result<(), Failure> {
    let p = parse(args, &["threads"])?;
    if p.help {
        out!("{}", op_help(p.entry));
        return Ok(());
    }
    let spec = OpSpec::parse(p.entry.framework, p.entry.op, &p.op_flags)?;
    let [input, output] = p.positional[..] else {
        return Err(usage(format!(
            "{} {} needs INPUT.npy and OUTPUT.npy, got {} file argument(s)",
            p.entry.framework,
            p.entry.op,
            p.positional.len()
        )));
    };
    let mut parallelism = Parallelism::Auto;
    for (_, v) in &p.own {
        parallelism = parse_threads(v)?;
    }
    signals::install();
    let mut pause = files::TestPause::from_env();
    let mut bar = progress::Bar::new();
    let result =
        npy::run(&spec, files::place(Path::new(input)), files::place(Path::new(output)), parallelism, &mut |d, t| {
            pause.at_progress();
            bar.update(d, t)
        });
    bar.finish();
    result?;
    Ok(())
}

fn shape(args: &[String]) -> Result<(), Failure> {
    let p = parse(args, &["input-shape"])?;
    if p.help {
        out!("{}", op_help(p.entry));
        return Ok(());
    }
    let spec = OpSpec::parse(p.entry.framework, p.entry.op, &p.op_flags)?;
    if let Some(extra) = p.positional.first() {
        return Err(usage(format!("`shape` takes no file arguments, got {extra:?}")));
    }
    let [(_, dims)] = p.own[..] else {
        return Err(usage("`shape` needs exactly one --input-shape D0,D1,..."));
    };
    let input: Vec<usize> = if dims.is_empty() {
        Vec::new()
    } else {
        dims.split(',')
            .map(|d| {
                d.trim().parse::<usize>().map_err(|_| usage(format!("--input-shape entry {d:?} is not a dimension")))
            })
            .collect::<Result<_, _>>()?
    };
    let out = spec.output_shape(&input)?;
    let list = |s: &[usize]| s.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(",");
    outln!("{}", list(&out));
    Ok(())
}
