//! The `blockshuffle` command, end to end: every conformance case through the
//! built binary, and what a user meets when something is wrong.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use blockshuffle::npy;
use common::{bin, bin_after, listing, npy_file, stderr, write_input};
use serde_json::Value;

fn conformance_dir() -> PathBuf {
    data_dir("conformance")
}

fn data_dir(set: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../blockshuffle/tests/data").join(set)
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run blockshuffle")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn every_conformance_case_through_the_cli() {
    assert_eq!(conformance_through_the_cli(&conformance_dir()), (293, 0));
}

/// The general set (numpy transpose, einops rearrange). Its 21 cases of a
/// 0-d input expect shape `[1]`, which `np.transpose` never gives (it
/// keeps the rank; the oracle's harness made them 1-d): they must give
/// the file's element as a 0-d array.
#[test]
fn every_general_conformance_case_through_the_cli() {
    assert_eq!(conformance_through_the_cli(&data_dir("conformance-general")), (300, 21));
}

/// Runs every case of `dir` through the binary; returns the number of
/// cases and of 0-d transposes checked as such.
fn conformance_through_the_cli(dir: &Path) -> (usize, usize) {
    let mut zero_d = 0;
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(dir.join("cases.jsonl")).unwrap();
    let mut failures = Vec::new();
    let mut count = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        count += 1;
        let case: Value = serde_json::from_str(line).unwrap();
        let id = case["id"].as_str().unwrap();
        let out = tmp.path().join(format!("{id}.out.npy"));
        let mut cmd = bin();
        cmd.arg(case["framework"].as_str().unwrap()).arg(case["op"].as_str().unwrap());
        for a in case["args"].as_array().unwrap() {
            cmd.arg(a.as_str().unwrap());
        }
        cmd.arg(dir.join(case["input"].as_str().unwrap())).arg(&out);
        let o = cmd.output().unwrap();
        match case["expect"].as_str() {
            Some(expect) => {
                if !o.status.success() {
                    failures.push(format!("{id}: exit {:?}: {}", o.status.code(), stderr(&o)));
                    continue;
                }
                // Nothing on stderr: no progress bar when it is not a terminal.
                if !o.stderr.is_empty() {
                    failures.push(format!("{id}: wrote to stderr: {:?}", stderr(&o)));
                }
                let got = npy::read(&out).unwrap();
                let want = npy::read(&dir.join(expect)).unwrap();
                let input = npy::read(&dir.join(case["input"].as_str().unwrap())).unwrap();
                let want_shape = if case["framework"] == "numpy" && input.shape().is_empty() && want.shape() == [1] {
                    zero_d += 1;
                    &[][..]
                } else {
                    want.shape()
                };
                if got.descr() != want.descr() || got.shape() != want_shape || got.data() != want.data() {
                    failures.push(format!("{id}: output differs"));
                }
            }
            None => {
                let err = stderr(&o);
                if o.status.success() || !err.starts_with("error: ") || err.lines().count() != 1 {
                    failures.push(format!("{id}: expected a one-line error, got exit {:?} {err:?}", o.status.code()));
                }
                if out.exists() {
                    failures.push(format!("{id}: rejected but wrote {}", out.display()));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    // Nothing but the expected outputs is left in the directory.
    assert!(listing(tmp.path()).iter().all(|f| f.ends_with(".out.npy")), "{:?}", listing(tmp.path()));
    (count, zero_d)
}

#[test]
fn a_failed_run_keeps_an_existing_output_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let input = write_input(tmp.path(), "x.npy", "<i4", vec![1, 2, 3, 1], vec![0; 24]);
    let output = tmp.path().join("y.npy");
    std::fs::write(&output, b"precious").unwrap();
    let o = run(&[
        "tf",
        "space-to-batch-nd",
        "--block-shape",
        "2,2",
        "--paddings",
        "0,0,0,0",
        input.to_str().unwrap(),
        output.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "error: tf space-to-batch-nd: padded spatial dim 1 (input 3 + paddings 0 + 0 = 3) is not divisible by block_shape[1] = 2\n"
    );
    assert_eq!(std::fs::read(&output).unwrap(), b"precious");
    assert_eq!(listing(tmp.path()), ["x.npy", "y.npy"]);
}

#[test]
fn output_may_be_the_input() {
    let tmp = tempfile::tempdir().unwrap();
    let input = write_input(tmp.path(), "x.npy", "|u1", vec![1, 4, 1, 1], vec![1, 2, 3, 4]);
    let p = input.to_str().unwrap();
    let o = run(&["torch", "pixel-shuffle", "--upscale-factor", "2", p, p]);
    assert!(o.status.success(), "{}", stderr(&o));
    let y = npy::read(&input).unwrap();
    assert_eq!((y.shape(), y.data()), (&[1, 1, 2, 2][..], &[1, 2, 3, 4][..]));
    assert_eq!(listing(tmp.path()), ["x.npy"]);
}

#[test]
fn a_missing_output_directory_is_a_clean_error() {
    let tmp = tempfile::tempdir().unwrap();
    let input = write_input(tmp.path(), "x.npy", "|u1", vec![1, 4, 1, 1], vec![1, 2, 3, 4]);
    let out = tmp.path().join("no/such/dir/y.npy");
    let o = run(&["torch", "pixel-shuffle", "--upscale-factor", "2", input.to_str().unwrap(), out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with("error: ") && stderr(&o).contains("no/such/dir/y.npy"), "{}", stderr(&o));
}

#[test]
fn bad_files_are_clean_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("y.npy");
    let mut long_header = b"\x93NUMPY\x01\x00\xff\xff{'descr'".to_vec();
    long_header.extend_from_slice(&[b' '; 100]);
    let deep = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {}1{}, }}", "(".repeat(20), ")".repeat(20));
    let wide = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': '{}'}}", "y".repeat(12_000));
    let cases: [(&str, Vec<u8>, &str); 9] = [
        ("empty.npy", b"".to_vec(), "not a .npy file"),
        ("text.npy", b"hello world, not numpy".to_vec(), "no \\x93NUMPY magic"),
        (
            "huge.npy",
            npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000, 1000), }", &[0; 8]),
            "but the file holds 8",
        ),
        (
            "overflow.npy",
            npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551615, 3), }", b""),
            "more than 2^64 elements",
        ),
        (
            "short.npy",
            npy_file("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }", &[0; 31]),
            "needs 32 data bytes",
        ),
        (
            "pickle.npy",
            npy_file("{'descr': '|O', 'fortran_order': False, 'shape': (1, 1, 1), }", &[0; 8]),
            "object arrays",
        ),
        ("longheader.npy", long_header, "header claims 65535 bytes"),
        ("deep.npy", npy_file(&deep, &[0; 4]), "nests brackets 21 deep"),
        ("wide.npy", npy_file(&wide, &[0; 4]), "exceeds numpy's limit of 10000"),
    ];
    for (name, bytes, words) in cases {
        let path = tmp.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let o =
            run(&["torch", "pixel-shuffle", "--upscale-factor", "1", path.to_str().unwrap(), out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{name}");
        assert!(stderr(&o).contains(words), "{name}: {}", stderr(&o));
        assert!(!out.exists());
    }
}

#[test]
fn odd_dtypes_move_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("y.npy");
    // Big-endian int32, 3-byte strings, and a structured dtype written by hand.
    for (descr, size) in [(">i4", 4usize), ("|S3", 3), ("<U2", 8), ("<c16", 16), ("|V5", 5)] {
        let data: Vec<u8> = (0..4 * size).map(|i| i as u8).collect();
        let input = write_input(tmp.path(), "x.npy", descr, vec![1, 1, 2, 2], data.clone());
        let o = run(&["onnx", "space-to-depth", "--blocksize", "2", input.to_str().unwrap(), out.to_str().unwrap()]);
        assert!(o.status.success(), "{descr}: {}", stderr(&o));
        let y = npy::read(&out).unwrap();
        assert_eq!(y.shape(), &[1, 4, 1, 1]);
        assert_eq!(y.data(), &data[..], "{descr}");
        assert_eq!(y.descr(), npy::read(&input).unwrap().descr());
    }
    let data: Vec<u8> = (0..12).collect();
    let file =
        npy_file("{'descr': [('a', '<i2'), ('b', '|u1')], 'fortran_order': False, 'shape': (1, 1, 2, 2), }", &data);
    let input = tmp.path().join("s.npy");
    std::fs::write(&input, &file).unwrap();
    let o =
        run(&["torch", "pixel-unshuffle", "--downscale-factor", "2", input.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let y = npy::read(&out).unwrap();
    assert_eq!((y.shape(), y.elem_size()), (&[1, 4, 1, 1][..], 3));
    assert_eq!(y.data(), &(0..12).collect::<Vec<u8>>()[..]);
}

#[test]
fn fortran_order_input_is_read_by_index() {
    let tmp = tempfile::tempdir().unwrap();
    // [1, 1, 2, 2] in Fortran order: logical [[1, 2], [3, 4]] stored as 1 3 2 4.
    let file = npy_file("{'descr': '|u1', 'fortran_order': True, 'shape': (1, 1, 2, 2), }", &[1, 3, 2, 4]);
    let input = tmp.path().join("f.npy");
    std::fs::write(&input, &file).unwrap();
    let out = tmp.path().join("y.npy");
    let o = run(&["onnx", "space-to-depth", "--blocksize", "2", input.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let y = npy::read(&out).unwrap();
    assert!(!y.fortran_order());
    assert_eq!(y.data(), &[1, 2, 3, 4]);
}

/// Issue 25's reproductions through the command: a Fortran-order input
/// whose output streams (16 MiB and more) came out wrong, and a cropped
/// batch-to-space of rows longer than the crop stage crashed.
#[test]
fn large_fortran_and_cropped_inputs_match_the_library() {
    use blockshuffle::{openvino, tf, Kernels, Operator, Streaming};
    let tmp = tempfile::tempdir().unwrap();
    let exact = |p: blockshuffle::Plan| p.with_kernels(Kernels::Portable).with_streaming(Streaming::Never);
    // [4, 64, 65600] uint8 in Fortran order: element (i, j, k) at i + 4 j + 256 k.
    let (a, b, c) = (4usize, 64usize, 65600usize);
    let logical: Vec<u8> = (0..a * b * c).map(|f| (f * 7 + f / 4099) as u8).collect();
    let mut stored = vec![0u8; logical.len()];
    for (f, &v) in logical.iter().enumerate() {
        let (i, j, k) = (f / (b * c), f / c % b, f % c);
        stored[i + a * j + a * b * k] = v;
    }
    let dict = format!("{{'descr': '|u1', 'fortran_order': True, 'shape': ({a}, {b}, {c}), }}");
    let input = tmp.path().join("f.npy");
    std::fs::write(&input, npy_file(&dict, &stored)).unwrap();
    let out = tmp.path().join("o.npy");
    let args = ["ov", "space-to-depth", "--block-size", "2", "--mode", "blocks_first"];
    let o = run(&[&args[..], &[input.to_str().unwrap(), out.to_str().unwrap()]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let want = exact(openvino::SpaceToDepth::blocks_first(2).plan(&[a, b, c]).unwrap()).run(&logical).unwrap();
    assert!(npy::read(&out).unwrap().data() == &want[..], "Fortran-order space-to-depth differs");

    // [4, 1980014, 1] float32 by 2, cropped 2 and 2, on one thread.
    let shape = [4usize, 1_980_014, 1];
    let data: Vec<u8> = (0..shape.iter().product::<usize>() * 4).map(|i| (i * 13 + i / 251) as u8).collect();
    let input = tmp.path().join("seg.npy");
    std::fs::write(&input, npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 1980014, 1), }", &data))
        .unwrap();
    let args = ["tf", "batch-to-space-nd", "--block-shape", "2", "--crops", "2,2", "--threads", "1"];
    let o = run(&[&args[..], &[input.to_str().unwrap(), out.to_str().unwrap()]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let plan = exact(tf::BatchToSpaceNd::new(&[2], &[[2, 2]]).plan(&shape).unwrap());
    assert!(
        npy::read(&out).unwrap().data() == &plan.run_bytes(&data, 4).unwrap()[..],
        "cropped batch-to-space differs"
    );
}

/// Whether `err` is a usage error as clap reports it: its first line
/// `error: ...` and its last the pointer to `--help`.
fn is_clap_usage_error(err: &str) -> bool {
    err.starts_with("error: ") && err.ends_with("\n\nFor more information, try '--help'.\n")
}

/// Every usage error exits 2: clap's (unknown operator or flag, missing
/// argument, malformed `--threads`) in clap's format, the catalogue's (a
/// value of the wrong form) in one line.
#[test]
fn usage_errors_name_the_problem() {
    let tmp = tempfile::tempdir().unwrap();
    let input = write_input(tmp.path(), "x.npy", "|u1", vec![1, 4, 1, 1], vec![1, 2, 3, 4]);
    let i = input.to_str().unwrap();
    let clap_cases: [(&[&str], &str); 5] = [
        (&["tf", "pixel-shuffle"], "error: unrecognized subcommand 'pixel-shuffle'\n"),
        (
            &["torch", "pixel-shuffle", "--upscale-factor", "2", i],
            "error: the following required arguments were not provided:\n  <OUTPUT.npy>\n",
        ),
        (
            &["torch", "pixel-shuffle", i, "y.npy"],
            "error: the following required arguments were not provided:\n  --upscale-factor <R>\n",
        ),
        (
            &["torch", "pixel-shuffle", "--upscale-factor", "2", "--mode", "CRD", i, "y.npy"],
            "error: unexpected argument '--mode' found\n",
        ),
        (
            &["torch", "pixel-shuffle", "--upscale-factor", "2", i, "y.npy", "--threads", "x"],
            "error: invalid value 'x' for '--threads <N>': invalid digit found in string\n",
        ),
    ];
    for (args, first) in clap_cases {
        let o = bin().args(args).current_dir(tmp.path()).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.starts_with(first) && is_clap_usage_error(&err), "{args:?}: {err}");
    }
    let o = bin()
        .args(["torch", "pixel-shuffle", "--upscale-factor", "two", i, "y.npy"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: torch pixel-shuffle: --upscale-factor value \"two\" is not an integer in the 64-bit range\n"
    );
    assert_eq!(listing(tmp.path()), ["x.npy"]);
}

#[test]
fn shape_list_demo_and_help() {
    let o = run(&[
        "shape",
        "tf",
        "space-to-depth",
        "--block-size",
        "2",
        "--data-format",
        "NCHW_VECT_C",
        "--input-shape",
        "1,2,4,6,4",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "1,8,2,3,4\n");
    let o = run(&["shape", "torch", "pixel-shuffle", "--upscale-factor", "0", "--input-shape", "1,4,1,1"]);
    assert_eq!(stderr(&o), "error: torch pixel-shuffle: upscale_factor = 0 must be >= 1\n");

    let o = run(&["list"]);
    assert!(o.status.success());
    assert_eq!(stdout(&o).lines().filter(|l| !l.starts_with(' ')).count(), 17); // header + 16 operators
    assert!(stdout(&o).contains("numpy  transpose") && stdout(&o).contains("einops rearrange"), "{}", stdout(&o));

    let o = run(&["demo"]);
    assert!(o.status.success());
    let text = stdout(&o);
    assert!(text.contains("output shape [4, 2, 2, 1]") && text.contains("output shape [48, 3, 3, 1, 3]"), "{text}");
    // Each rearrange beside the operator it equals.
    assert!(text.contains("the same output as example 14: yes"), "{text}");
    assert!(text.contains("the same output as example 16: yes") && !text.contains(": NO"), "{text}");

    for args in [&["--help"][..], &["ov", "depth-to-space", "--help"], &["bench", "--help"]] {
        let o = run(args);
        assert!(o.status.success() && stdout(&o).contains("Usage: blockshuffle "), "{args:?}");
    }
}

#[test]
fn bench_runs_a_small_workload_file_and_writes_json() {
    let tmp = tempfile::tempdir().unwrap();
    let workloads = tmp.path().join("w.json");
    std::fs::write(
        &workloads,
        r#"{"large": [{"id": "T1", "framework": "torch", "op": "pixel-shuffle", "args": ["--upscale-factor", "2"], "dtype": "uint8", "shape": [2, 8, 16, 16]}],
            "small": [{"id": "T2", "framework": "onnx", "op": "depth-to-space", "args": ["--blocksize", "2"], "dtype": "float32", "shape": [1, 8, 2, 3]}]}"#,
    )
    .unwrap();
    let json = tmp.path().join("r.json");
    let o = run(&[
        "bench",
        "--workloads",
        workloads.to_str().unwrap(),
        "--threads",
        "1",
        "--reps",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["threads"], 1);
    let results = r["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["id"], "T1");
    assert_eq!(results[0]["bytes_out"], 2 * 8 * 16 * 16);
    assert_eq!(results[1]["bytes_out"], 48 * 4);
    for r in results {
        for k in ["op_s", "memcpy_s", "ratio", "alloc_s"] {
            assert!(r[k].as_f64().unwrap() > 0.0, "{k}");
        }
    }

    // --filter: only the ids named; an id no workload has is a usage error.
    let w = workloads.to_str().unwrap();
    let o = run(&["bench", "--workloads", w, "--filter", "T1", "--reps", "1", "--threads", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("\nT1 ") && !stdout(&o).contains("\nT2 "), "{}", stdout(&o));
    let o = run(&["bench", "--workloads", w, "--filter", "T1,NOSUCH,T3"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o), "error: --filter names no workload: NOSUCH, T3 (the workloads are T1, T2)\n");
    let o = run(&["bench", "--workloads", w, "--reps", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("error: invalid value '0' for '--reps <R>': 0 is not in 1..=4294967295\n")
            && is_clap_usage_error(&stderr(&o)),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bench_takes_every_kernel_setting_and_rejects_others() {
    let tmp = tempfile::tempdir().unwrap();
    let workloads = tmp.path().join("w.json");
    std::fs::write(
        &workloads,
        r#"{"large": [{"id": "K1", "framework": "torch", "op": "pixel-unshuffle", "args": ["--downscale-factor", "2"], "dtype": "float16", "shape": [1, 2, 64, 64]}], "small": []}"#,
    )
    .unwrap();
    for k in ["auto", "avx512", "avx2", "baseline", "portable"] {
        let o = run(&["bench", "--workloads", workloads.to_str().unwrap(), "--reps", "1", "--kernels", k]);
        assert!(o.status.success() && stdout(&o).contains("K1"), "{k}: {}", stderr(&o));
    }
    let o = run(&["bench", "--workloads", workloads.to_str().unwrap(), "--kernels", "avx1024"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with(
            "error: invalid value 'avx1024' for '--kernels <SET>'\n  [possible values: auto, avx512, avx2, baseline, portable]\n"
        ) && is_clap_usage_error(&stderr(&o)),
        "{}",
        stderr(&o)
    );
}

/// A 256 KiB input whose output (the same size) cannot be written whole.
fn big_input(dir: &Path) -> PathBuf {
    write_input(dir, "x.npy", "<f4", vec![1, 4, 128, 128], (0..4 * 128 * 128 * 4).map(|i| i as u8).collect())
}

#[test]
fn a_file_size_limit_fails_cleanly_and_keeps_the_old_output() {
    // `ulimit -f 64` (64 blocks of 512 bytes = 32 KiB) makes the write fail
    // part-way, like a full disk: the old output must survive untouched and
    // no temporary file may remain.
    let tmp = tempfile::tempdir().unwrap();
    let input = big_input(tmp.path());
    let output = tmp.path().join("y.npy");
    std::fs::write(&output, b"old contents").unwrap();
    let o = bin_after("ulimit -f 64")
        .args(["torch", "pixel-shuffle", "--upscale-factor", "2"])
        .arg(&input)
        .arg(&output)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).starts_with("error: ") && stderr(&o).contains("y.npy"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&output).unwrap(), b"old contents");
    assert_eq!(listing(tmp.path()), ["x.npy", "y.npy"]);
}

#[cfg(unix)]
#[test]
fn a_read_only_output_directory_fails_cleanly() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let input = big_input(tmp.path());
    std::fs::set_permissions(&input, std::fs::Permissions::from_mode(0o644)).unwrap();
    let ro = tmp.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::write(ro.join("y.npy"), b"old contents").unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let output = ro.join("y.npy");
    // Root ignores directory permissions: run as `nobody` then (setpriv).
    let root = std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0).unwrap_or(false);
    let mut cmd = if root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]).arg(env!("CARGO_BIN_EXE_blockshuffle"));
        c
    } else {
        bin()
    };
    let o = cmd.args(["torch", "pixel-shuffle", "--upscale-factor", "2"]).arg(&input).arg(&output).output().unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).starts_with("error: ") && stderr(&o).contains("Permission denied"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&output).unwrap(), b"old contents");
    assert_eq!(listing(&ro), ["y.npy"]);
}

#[test]
fn hostile_parameters_through_the_cli() {
    let tmp = tempfile::tempdir().unwrap();
    let input = write_input(tmp.path(), "x.npy", "<i8", vec![2, 4, 4, 4], vec![7; 2 * 4 * 4 * 4 * 8]);
    let out = tmp.path().join("y.npy");
    let max = i64::MAX.to_string();
    let min = i64::MIN.to_string();
    let cases: Vec<Vec<&str>> = vec![
        vec!["tf", "space-to-batch-nd", "--block-shape", &max, "--paddings", "0,0"],
        vec!["tf", "space-to-batch-nd", "--block-shape", "2,2", "--paddings", &max, "--paddings", "0"],
        vec!["tf", "space-to-batch-nd", "--block-shape", "1", "--paddings", "9223372036854775807,9223372036854775807"],
        vec!["tf", "batch-to-space-nd", "--block-shape", "0,2", "--crops", "0,0,0,0"],
        vec!["tf", "batch-to-space", "--block-size", &min, "--crops", "0,0,0,0"],
        vec!["tf", "depth-to-space", "--block-size", "4294967296", "--data-format", "NCHW"],
        vec!["tf", "space-to-depth", "--block-size", "2", "--data-format", "NCHW_VECT_C"],
        vec!["ov", "space-to-batch", "--block-shape", "1,2", "--pads-begin", "0,0", "--pads-end", "0,0"],
        vec!["ov", "batch-to-space", "--block-shape", "", "--crops-begin", "", "--crops-end", ""],
        vec!["ov", "depth-to-space", "--block-size", &max, "--mode", "depth_first"],
        vec!["onnx", "depth-to-space", "--blocksize", "-1"],
        vec!["torch", "pixel-shuffle", "--upscale-factor", "4294967296"],
        vec!["torch", "pixel-unshuffle", "--downscale-factor", "99999999999999999999999"],
    ];
    for args in cases {
        let o = bin().args(&args).arg(&input).arg(&out).output().unwrap();
        let err = stderr(&o);
        assert!(matches!(o.status.code(), Some(1 | 2)), "{args:?}: {:?} {err}", o.status);
        // Clap's usage errors (a repeated flag) in clap's format, the rest in one line.
        let one_line = err.starts_with("error: ") && err.lines().count() == 1;
        assert!(one_line || (o.status.code() == Some(2) && is_clap_usage_error(&err)), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?}");
    }
    assert_eq!(listing(tmp.path()), ["x.npy"]);
}

#[cfg(unix)]
#[test]
fn outputs_get_ordinary_permissions_and_keep_existing_ones() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let input = write_input(tmp.path(), "x.npy", "|u1", vec![1, 4, 1, 1], vec![1, 2, 3, 4]);
    let fresh = tmp.path().join("new.npy");
    let kept = tmp.path().join("kept.npy");
    std::fs::write(&kept, b"old").unwrap();
    std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o600)).unwrap();
    // A new file's mode is 0o666 less the umask: the usual one, whatever the
    // umask of the test's runner (tests/files.rs tries others).
    for out in [&fresh, &kept] {
        let o = bin_after("umask 022")
            .args(["torch", "pixel-shuffle", "--upscale-factor", "2"])
            .arg(&input)
            .arg(out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&fresh), 0o644);
    assert_eq!(mode(&kept), 0o600);
}

#[test]
fn numpy_and_einops_through_the_cli() {
    let shape = |args: &[&str]| {
        let o = run(args);
        (stdout(&o), stderr(&o), o.status.code())
    };
    let ok = |out: &str| (out.to_string(), String::new(), Some(0));
    let fail = |err: &str, code| (String::new(), format!("error: {err}\n"), Some(code));
    assert_eq!(shape(&["shape", "numpy", "transpose", "--input-shape", "2,3,4"]), ok("4,3,2\n"));
    assert_eq!(shape(&["shape", "numpy", "transpose", "--axes", "-1,0,1", "--input-shape", "2,3,4"]), ok("4,2,3\n"));
    assert_eq!(shape(&["shape", "numpy", "transpose", "--axes", "", "--input-shape", ""]), ok("\n"));
    assert_eq!(
        shape(&["shape", "numpy", "transpose", "--axes", "0,0", "--input-shape", "2,3"]),
        fail("numpy transpose: axes[1] = 0 repeats axis 0, already axes[0]", 1)
    );
    let pattern = "b (h p1) (w p2) c -> b h w (p1 p2 c)";
    let s2d =
        ["shape", "einops", "rearrange", "--pattern", pattern, "--sizes", "p1=2,p2=2", "--input-shape", "1,4,6,3"];
    assert_eq!(shape(&s2d), ok("1,2,3,12\n"));
    let inline = format!("--pattern={pattern}");
    assert_eq!(
        shape(&["shape", "einops", "rearrange", &inline, "--sizes=p1=2,p2=2", "--input-shape", "1,4,6,3"]),
        ok("1,2,3,12\n")
    );
    let (out, err, code) = shape(&["shape", "einops", "rearrange", "--sizes", "p1=2", "--input-shape", "1"]);
    assert_eq!((out.as_str(), code), ("", Some(2)));
    assert!(
        err.starts_with("error: the following required arguments were not provided:\n  --pattern <PATTERN>\n")
            && is_clap_usage_error(&err),
        "{err}"
    );
    for (sizes, problem) in [
        ("p1", "--sizes entry \"p1\" is not NAME=LENGTH"),
        ("p1=-2", "--sizes length \"-2\" of \"p1\" is not a whole number (a length >= 0 that fits in memory)"),
        ("p1=x", "--sizes length \"x\" of \"p1\" is not a whole number (a length >= 0 that fits in memory)"),
    ] {
        let args = ["shape", "einops", "rearrange", "--pattern", pattern, "--sizes", sizes, "--input-shape", "1,4,6,3"];
        assert_eq!(shape(&args), fail(&format!("einops rearrange: {problem}"), 2));
    }
    let args = ["shape", "einops", "rearrange", "--pattern", "a b -> b a", "--sizes", "", "--input-shape", "2,3"];
    assert_eq!(shape(&args), ok("3,2\n"));
    let args = ["shape", "einops", "rearrange", "--pattern", "a b -> b a c", "--input-shape", "2,3"];
    assert_eq!(
        shape(&args),
        fail("einops rearrange: pattern \"a b -> b a c\": `c` only on the right side (rearrange needs every axis on both)", 1)
    );
    // A run: the file written, a rejection leaves none.
    let tmp = tempfile::tempdir().unwrap();
    let input = write_input(tmp.path(), "x.npy", "<u2", vec![2, 3], (0u8..12).collect());
    let out = tmp.path().join("y.npy");
    let o = run(&["einops", "rearrange", "--pattern", "a b -> b a", input.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let y = npy::read(&out).unwrap();
    assert_eq!((y.shape(), y.data()), (&[3, 2][..], &[0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11][..]));
    let bad = tmp.path().join("z.npy");
    let o = run(&["numpy", "transpose", "--axes", "0", input.to_str().unwrap(), bad.to_str().unwrap()]);
    assert_eq!(stderr(&o), "error: numpy transpose: axes has 1 values but must have 2 (one per input dim)\n");
    assert!(!bad.exists());
}

/// A workload file in the format of shared/bench/transpose.json (an
/// `about`, workloads with a `what`) runs through numpy transpose and
/// einops rearrange.
#[test]
fn bench_runs_transpose_and_rearrange_workloads() {
    let tmp = tempfile::tempdir().unwrap();
    let workloads = tmp.path().join("t.json");
    std::fs::write(
        &workloads,
        r#"{"about": "HPTT-like", "large": [
            {"id": "T01", "framework": "numpy", "op": "transpose", "args": ["--axes", "1,0"], "dtype": "float64", "shape": [300, 200], "what": "2-D"},
            {"id": "T02", "framework": "numpy", "op": "transpose", "args": [], "dtype": "complex128", "shape": [3, 4, 5], "what": "reversed"},
            {"id": "E01", "framework": "einops", "op": "rearrange", "args": ["--pattern", "b (h p) w -> b h (w p)", "--sizes", "p=2"], "dtype": "float32", "shape": [2, 64, 32], "what": "rearrange"}]}"#,
    )
    .unwrap();
    let o = run(&["bench", "--workloads", workloads.to_str().unwrap(), "--threads", "1", "--reps", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for line in [
        "numpy transpose --axes 1,0",
        "numpy transpose ",
        "einops rearrange --pattern b (h p) w -> b h (w p) --sizes p=2",
    ] {
        assert!(text.contains(line), "{text}");
    }
    // The distribution: over all three, and per size class (all three under 1 MiB).
    assert!(
        text.contains("size       count  geomean     p90     max  >1.10x   >1.5x  alloc gmean alloc max"),
        "{text}"
    );
    let counts: Vec<(&str, &str)> = text
        .lines()
        .skip_while(|l| !l.starts_with("size "))
        .skip(1)
        .map(|l| (l[..10].trim_end(), l[10..16].trim()))
        .collect();
    assert_eq!(counts, [("all", "3"), ("< 1 MiB", "3")], "{text}");
}
