//! The command line's definition, built from the library's catalogue: one
//! subcommand per framework and under it one per operator, each with its
//! catalogue flags. Parsing, `--help`, the completions and the man page all
//! come from [`command`].

use std::path::PathBuf;

use blockshuffle::catalog::{Entry, Flag, CATALOG};
use clap::builder::PossibleValuesParser;
use clap::{value_parser, Arg, ArgAction, ArgGroup, Command};

/// The frameworks, in catalogue order, with their long names.
pub(crate) const FRAMEWORKS: &[(&str, &str)] = &[
    ("tf", "TensorFlow"),
    ("ov", "OpenVINO"),
    ("onnx", "ONNX"),
    ("torch", "PyTorch"),
    ("numpy", "numpy"),
    ("einops", "einops"),
];

/// What an operator's subcommand is for: running it on files, or printing
/// its output shape.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Use {
    Run,
    Shape,
}

const ABOUT: &str = "TensorFlow, OpenVINO, ONNX and PyTorch block-rearrangement operators, \
numpy transpose and einops rearrange, on .npy files";

const AFTER_HELP: &str = "\
Run an operator: blockshuffle FRAMEWORK OP [FLAGS] INPUT.npy OUTPUT.npy
(`blockshuffle FRAMEWORK --help` lists a framework's operators, `blockshuffle FRAMEWORK OP --help`
an operator's flags; `--` ends the flags, before file names that begin with `-`).

Lists are comma-separated integers without spaces; pairs are flattened row-major
(paddings [[0,1],[2,0]] is 0,1,2,0). Values may be negative (--paddings -1,0).
An einops pattern is one argument (quote it); --sizes gives lengths as NAME=V,NAME=V.
The output keeps the input's dtype (any numpy dtype but object arrays) and is
written atomically: on any error no output file is left behind.

Exit status: 0 success; 2 usage error (an unknown command, operator or flag, a missing,
repeated or malformed argument; nothing is run); 1 failure (the operator's rules reject
the parameters or the input, or a file cannot be read or written).

Examples:
  blockshuffle tf space-to-batch-nd --block-shape 2,2 --paddings 0,0,0,0 x.npy y.npy
  blockshuffle onnx depth-to-space --blocksize 2 --mode CRD x.npy y.npy
  blockshuffle torch pixel-shuffle --upscale-factor 3 x.npy y.npy --threads 1
  blockshuffle numpy transpose --axes 0,3,1,2 x.npy y.npy
  blockshuffle einops rearrange --pattern '... (c r1 r2) h w -> ... c (h r1) (w r2)' --sizes r1=2,r2=2 x.npy y.npy
  blockshuffle shape ov space-to-batch --block-shape 1,2,4,3,1 --pads-begin 0,0,1,0,0 --pads-end 0,0,1,0,0 --input-shape 2,6,10,3,3
  blockshuffle info x.npy
  blockshuffle completions bash > /etc/bash_completion.d/blockshuffle";

/// The whole command line.
pub(crate) fn command() -> Command {
    Command::new("blockshuffle")
        .version(env!("CARGO_PKG_VERSION"))
        .about(ABOUT)
        .after_help(AFTER_HELP)
        .subcommand_required(true)
        .arg_required_else_help(true)
        .arg(
            Arg::new("threads")
                .long("threads")
                .value_name("N")
                .global(true)
                .value_parser(value_parser!(usize))
                .default_value("0")
                .help("Threads for an operator's run and for bench; 0: every core (other commands ignore it)"),
        )
        .subcommands(frameworks(Use::Run))
        .subcommand(
            Command::new("shape")
                .about("Print an operator's output shape for an input shape (or a .npy file's), without data")
                .after_help(
                    "Example:\n  blockshuffle shape torch pixel-shuffle --upscale-factor 3 --input-shape 1,18,7,9\n  \
                     (prints 1,2,21,27)",
                )
                .subcommand_required(true)
                .arg_required_else_help(true)
                .subcommands(frameworks(Use::Shape)),
        )
        .subcommand(
            Command::new("info")
                .about("Print a .npy file's shape, dtype, order (C or Fortran) and size, from its header")
                .arg(Arg::new("file").value_name("FILE.npy").required(true).value_parser(value_parser!(PathBuf))),
        )
        .subcommand(Command::new("list").about("Print every operator with its flags"))
        .subcommand(
            Command::new("demo")
                .about("Run the specification's worked examples and print inputs, parameters and outputs"),
        )
        .subcommand(crate::bench::command())
        .subcommand(
            Command::new("completions")
                .about("Print a shell completion script (bash, zsh, fish, elvish, powershell)")
                .after_help(
                    "Examples:\n  blockshuffle completions bash > ~/.local/share/bash-completion/completions/blockshuffle\n  \
                     blockshuffle completions zsh > ~/.zfunc/_blockshuffle\n  \
                     blockshuffle completions fish > ~/.config/fish/completions/blockshuffle.fish",
                )
                .arg(
                    Arg::new("shell")
                        .value_name("SHELL")
                        .required(true)
                        .value_parser(value_parser!(clap_complete::Shell)),
                ),
        )
        .subcommand(
            Command::new("man")
                .about("Print the man page (roff): blockshuffle man > blockshuffle.1; man ./blockshuffle.1"),
        )
}

/// One subcommand per framework, each with its operators.
fn frameworks(usage: Use) -> Vec<Command> {
    FRAMEWORKS
        .iter()
        .map(|&(fw, long)| {
            let mut cmd = Command::new(fw)
                .about(format!("The {long} operators"))
                .subcommand_required(true)
                .arg_required_else_help(true)
                .subcommands(CATALOG.iter().filter(|e| e.framework == fw).map(|e| operator(e, usage)));
            if fw == "ov" {
                cmd = cmd.alias("openvino");
            }
            cmd
        })
        .collect()
}

/// An operator's subcommand: its catalogue flags, then the files (or, for
/// `shape`, the input shape or file).
fn operator(e: &'static Entry, usage: Use) -> Command {
    let example = match usage {
        Use::Run => format!("blockshuffle {} {} {} in.npy out.npy", e.framework, e.op, e.example),
        Use::Shape => format!("blockshuffle shape {} {} {} --input in.npy", e.framework, e.op, e.example),
    };
    let cmd = Command::new(e.op)
        .about(format!("{}: {}", e.framework_name, e.summary))
        .after_help(format!("Example:\n  {example}"))
        .args(e.flags.iter().map(flag));
    match usage {
        Use::Run => cmd
            .arg(
                Arg::new("input")
                    .value_name("INPUT.npy")
                    .required(true)
                    .value_parser(value_parser!(PathBuf))
                    .help("The input file; - reads standard input"),
            )
            .arg(Arg::new("output").value_name("OUTPUT.npy").required(true).value_parser(value_parser!(PathBuf)).help(
                "The output file (it may be the input; a symlink is written through, a FIFO or \
                         device streamed to); - writes standard output",
            )),
        Use::Shape => cmd
            .arg(
                Arg::new("input-shape")
                    .long("input-shape")
                    .value_name("D0,D1,..")
                    .allow_hyphen_values(true)
                    .help("The input's shape (empty: a 0-d input)"),
            )
            .arg(
                Arg::new("input")
                    .long("input")
                    .value_name("FILE.npy")
                    .value_parser(value_parser!(PathBuf))
                    .help("Take the input's shape from this file's header"),
            )
            .group(ArgGroup::new("source").args(["input-shape", "input"]).required(true)),
    }
}

/// A catalogue flag as a clap argument. Values are taken as given (lists
/// may start with `-`) and parsed by the catalogue, except that a flag with
/// a few accepted words is checked here, with suggestions.
fn flag(f: &'static Flag) -> Arg {
    let mut arg = Arg::new(f.name)
        .long(f.name)
        .value_name(f.value)
        .help(f.help)
        .required(f.required)
        .action(ArgAction::Set)
        .allow_hyphen_values(true);
    if let Some(d) = f.default {
        arg = arg.default_value(d);
    }
    if !f.values.is_empty() {
        arg = arg.value_parser(PossibleValuesParser::new(f.values.iter().copied()));
    }
    arg
}

/// The operator's flags as the catalogue parses them (`--name value`, the
/// defaults included), from a subcommand's matches.
pub(crate) fn flag_args(e: &Entry, m: &clap::ArgMatches) -> Vec<String> {
    let mut args = Vec::new();
    for f in e.flags {
        if let Some(v) = m.get_one::<String>(f.name) {
            args.push(format!("--{}", f.name));
            args.push(v.clone());
        }
    }
    args
}
