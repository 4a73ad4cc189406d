//! The command line as clap builds it from the catalogue: help, exit
//! statuses, suggestions, repeated flags, global `--threads`, `--`,
//! completions, the man page, `info` and `shape --input` (bench's `--filter`
//! is in cli.rs, beside bench's other tests).

use std::path::Path;
use std::process::{Command, Output, Stdio};

use blockshuffle::catalog::CATALOG;
use blockshuffle::npy;
use common::{npy_file, write_input};

mod common;

fn run_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_blockshuffle"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run blockshuffle")
}

fn run(args: &[&str]) -> Output {
    run_in(Path::new("."), args)
}

/// (status, stdout, stderr)
fn result(o: &Output) -> (Option<i32>, String, String) {
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// A usage error as clap reports it: status 2, nothing on stdout, stderr
/// starting with `first` and ending with the pointer to `--help`.
fn assert_usage_error(o: &Output, first: &str) {
    let (code, out, err) = result(o);
    assert_eq!((code, out.as_str()), (Some(2), ""), "{err}");
    assert!(err.starts_with(first), "{err}");
    assert!(err.ends_with("\n\nFor more information, try '--help'.\n"), "{err}");
}

#[test]
fn a_framework_s_help_lists_its_operators() {
    for (fw, long) in [("tf", "TensorFlow"), ("ov", "OpenVINO"), ("openvino", "OpenVINO"), ("torch", "PyTorch")] {
        let (code, out, err) = result(&run(&[fw, "--help"]));
        assert_eq!((code, err.as_str()), (Some(0), ""), "{fw}");
        let catalogue = if fw == "openvino" { "ov" } else { fw };
        assert!(out.starts_with(&format!("The {long} operators\n\nUsage: blockshuffle {catalogue} ")), "{out}");
        let listed: Vec<&str> = out
            .lines()
            .skip_while(|l| *l != "Commands:")
            .skip(1)
            .take_while(|l| !l.is_empty())
            // A command's line, not its wrapped description's.
            .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        let mut want: Vec<&str> = CATALOG.iter().filter(|e| e.framework == catalogue).map(|e| e.op).collect();
        want.push("help");
        assert_eq!(listed, want, "{fw}");
    }
    // Without an operator: the same help, as a usage error.
    let (code, out, err) = result(&run(&["tf"]));
    assert_eq!((code, out.as_str()), (Some(2), ""));
    assert!(err.contains("space-to-batch-nd") && err.contains("depth-to-space"), "{err}");
}

#[test]
fn an_operator_s_help_gives_each_flag_with_its_default_and_values() {
    let (code, out, _) = result(&run(&["tf", "space-to-depth", "--help"]));
    assert_eq!(code, Some(0));
    // Help is wrapped to the terminal's width: compared with spaces for line breaks.
    let out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(out.starts_with("SpaceToDepth: move block x block spatial blocks into the channels"), "{out}");
    assert!(out.contains("Usage: blockshuffle tf space-to-depth [OPTIONS] --block-size <B> <INPUT.npy> <OUTPUT.npy>"));
    assert!(out.contains("--block-size <B> The block's side --threads <N>"), "{out}");
    assert!(
        out.contains(
            "--data-format <FORMAT> The input's layout (NCHW_VECT_C: int8 x 4 in a last dim of 4) \
             [default: NHWC] [possible values: NHWC, NCHW, NCHW_VECT_C] -h, --help"
        ),
        "{out}"
    );
    assert!(
        out.ends_with("Example: blockshuffle tf space-to-depth --block-size 2 --data-format NHWC in.npy out.npy"),
        "{out}"
    );
    // The root's help documents the exit statuses.
    let (_, out, _) = result(&run(&["--help"]));
    let out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(out.contains("Exit status: 0 success; 2 usage error (an unknown command,"), "{out}");
    assert_eq!(
        result(&run(&["--version"])),
        (Some(0), format!("blockshuffle {}\n", env!("CARGO_PKG_VERSION")), String::new())
    );
}

#[test]
fn misspelt_flags_and_operators_get_suggestions() {
    let o = run(&["torch", "pixel-shuffle", "--upscale-factr", "2", "x.npy", "y.npy"]);
    assert_usage_error(
        &o,
        "error: unexpected argument '--upscale-factr' found\n\n  tip: a similar argument exists: '--upscale-factor'\n",
    );
    let o = run(&["torch", "pixel-shufle", "--upscale-factor", "2", "x.npy", "y.npy"]);
    assert_usage_error(&o, "error: unrecognized subcommand 'pixel-shufle'\n\n  tip: some similar subcommands exist: 'pixel-unshuffle', 'pixel-shuffle'\n");
    let o = run(&["onnx", "depth-to-space", "--blocksize", "2", "--mode", "CDR", "x.npy", "y.npy"]);
    assert_usage_error(&o, "error: invalid value 'CDR' for '--mode <MODE>'\n  [possible values: DCR, CRD]\n");
    let o = run(&["tensorflow"]);
    assert_usage_error(&o, "error: unrecognized subcommand 'tensorflow'\n");
}

/// Every flag of every operator, `--threads` and `--input-shape`: given
/// twice, the same usage error.
#[test]
fn a_repeated_flag_is_rejected_the_same_way_for_every_flag() {
    for e in CATALOG {
        for f in e.flags {
            let value = f.values.first().copied().unwrap_or("2");
            let flag = format!("--{}", f.name);
            let o = run(&[e.framework, e.op, &flag, value, &flag, value, "x.npy", "y.npy"]);
            assert_usage_error(
                &o,
                &format!("error: the argument '{flag} <{}>' cannot be used multiple times\n", f.value),
            );
        }
    }
    let o =
        run(&["--threads", "1", "torch", "pixel-shuffle", "--upscale-factor", "2", "x.npy", "y.npy", "--threads", "2"]);
    assert_usage_error(&o, "error: the argument '--threads <N>' cannot be used multiple times\n");
    let o = run(&["shape", "numpy", "transpose", "--input-shape", "2", "--input-shape", "3"]);
    assert_usage_error(&o, "error: the argument '--input-shape <D0,D1,..>' cannot be used multiple times\n");
}

#[test]
fn threads_go_anywhere_and_files_may_follow_a_double_dash() {
    let tmp = tempfile::tempdir().unwrap();
    write_input(tmp.path(), "-x.npy", "|u1", vec![1, 4, 1, 2], (0..8).collect());
    let op = ["torch", "pixel-shuffle", "--upscale-factor", "2"];
    let runs: [Vec<&str>; 4] = [
        [&["--threads", "1"][..], &op, &["--", "-x.npy", "a.npy"]].concat(),
        [&op[..2], &["--threads", "2"], &op[2..], &["--", "-x.npy", "b.npy"]].concat(),
        [&op[..], &["--", "-x.npy", "c.npy"]].concat(),
        [&op[..], &["--threads", "3", "--", "-x.npy", "d.npy"]].concat(),
    ];
    for args in &runs {
        assert_eq!(result(&run_in(tmp.path(), args)), (Some(0), String::new(), String::new()), "{args:?}");
    }
    for name in ["a.npy", "b.npy", "c.npy", "d.npy"] {
        let y = npy::read(&tmp.path().join(name)).unwrap();
        assert_eq!((y.shape(), y.data()), (&[1, 1, 2, 4][..], &[0, 2, 1, 3, 4, 6, 5, 7][..]), "{name}");
    }
    // Without `--` a file name beginning with `-` is an unknown flag.
    let o = run_in(tmp.path(), &[&op[..], &["-x.npy", "e.npy"]].concat());
    assert_usage_error(&o, "error: unexpected argument '-x' found\n");
    // `-` is a file argument, not a flag (there is no such file here: a failed run, not a usage error).
    let (code, out, err) = result(&run_in(tmp.path(), &[&op[..], &["-", "f.npy"]].concat()));
    assert_eq!((code, out.as_str()), (Some(1), ""), "{err}");
    assert!(err.starts_with("error: ") && err.lines().count() == 1, "{err}");
}

#[test]
fn completions_for_each_shell_name_the_subcommands() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let (code, out, err) = result(&run(&["completions", shell]));
        assert_eq!((code, err.as_str()), (Some(0), ""), "{shell}");
        for word in ["space-to-batch-nd", "pixel-shuffle", "completions", "data-format", "NCHW_VECT_C", "threads"] {
            assert!(out.contains(word), "{shell}: {word}");
        }
    }
    let o = run(&["completions", "tcsh"]);
    assert_usage_error(&o, "error: invalid value 'tcsh' for '<SHELL>'\n");
}

#[test]
fn the_man_page_is_roff_from_the_same_definition() {
    let (code, out, err) = result(&run(&["man"]));
    assert_eq!((code, err.as_str()), (Some(0), ""));
    assert!(out.contains(".TH blockshuffle 1"), "{out}");
    assert!(out.contains(".SH NAME\nblockshuffle \\- TensorFlow, OpenVINO, ONNX and PyTorch"), "{out}");
    for word in [".SH SUBCOMMANDS", "blockshuffle\\-tf(1)", "blockshuffle\\-completions(1)", "Exit status: 0 success"] {
        assert!(out.contains(word), "{word}");
    }
}

#[test]
fn info_prints_shape_dtype_order_and_size() {
    let tmp = tempfile::tempdir().unwrap();
    let c = write_input(tmp.path(), "c.npy", "<f4", vec![2, 3, 4], vec![0; 96]);
    let (code, out, err) = result(&run(&["info", c.to_str().unwrap()]));
    assert_eq!((code, err.as_str()), (Some(0), ""));
    assert_eq!(out, "shape: [2, 3, 4]\ndtype: <f4\norder: C\nsize:  24 elements of 4 bytes, 96 bytes of data\n");
    // Fortran order, written by hand as numpy writes it.
    let file = npy_file("{'descr': '|u1', 'fortran_order': True, 'shape': (3, 5), }", &[0; 15]);
    let f = tmp.path().join("f.npy");
    std::fs::write(&f, &file).unwrap();
    let (code, out, _) = result(&run(&["info", f.to_str().unwrap()]));
    assert_eq!(code, Some(0));
    assert_eq!(out, "shape: [3, 5]\ndtype: |u1\norder: Fortran\nsize:  15 elements of 1 byte, 15 bytes of data\n");
    // A file whose data is short: the header's check, a failed run.
    std::fs::write(&f, &file[..file.len() - 1]).unwrap();
    let (code, out, err) = result(&run(&["info", f.to_str().unwrap()]));
    assert_eq!((code, out.as_str()), (Some(1), ""));
    assert!(err.starts_with("error: ") && err.contains("header needs 15 data bytes"), "{err}");
    assert_usage_error(&run(&["info"]), "error: the following required arguments were not provided:\n  <FILE.npy>\n");
}

#[test]
fn shape_takes_a_file_s_shape() {
    let tmp = tempfile::tempdir().unwrap();
    let x = write_input(tmp.path(), "x.npy", "<i2", vec![1, 18, 7, 9], vec![0; 18 * 7 * 9 * 2]);
    let x = x.to_str().unwrap();
    let op = ["shape", "torch", "pixel-shuffle", "--upscale-factor", "3"];
    assert_eq!(result(&run(&[&op[..], &["--input", x]].concat())), (Some(0), "1,2,21,27\n".into(), String::new()));
    assert_eq!(
        result(&run(&[&op[..], &["--input-shape", "1,18,7,9"]].concat())),
        (Some(0), "1,2,21,27\n".into(), String::new())
    );
    let o = run(&[&op[..], &["--input", x, "--input-shape", "1,18,7,9"]].concat());
    assert_usage_error(&o, "error: the argument '--input <FILE.npy>' cannot be used with '--input-shape <D0,D1,..>'\n");
    let o = run(&op);
    assert_usage_error(
        &o,
        "error: the following required arguments were not provided:\n  <--input-shape <D0,D1,..>|--input <FILE.npy>>\n",
    );
    assert_eq!(
        result(&run(&[&op[..], &["--input-shape", "1,x"]].concat())),
        (Some(2), String::new(), "error: --input-shape entry \"x\" is not a dimension (a whole number)\n".into())
    );
}
