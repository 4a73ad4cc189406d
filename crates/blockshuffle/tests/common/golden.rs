//! The golden cases of `tests/data/<set>` (see its README): their list and
//! a run of one through the library. Shared by the conformance tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use blockshuffle::catalog::OpSpec;
use blockshuffle::npy;
use blockshuffle::{Operator, Parallelism};
use serde_json::Value;

/// The folder of golden set `set` (`conformance`, `conformance-general`).
pub fn data_dir(set: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(set)
}

pub struct Case {
    pub id: String,
    pub framework: String,
    pub op: String,
    pub args: Vec<String>,
    pub input: PathBuf,
    pub expect: Option<PathBuf>,
}

/// Every case of golden set `set`.
pub fn cases(set: &str) -> Vec<Case> {
    let dir = data_dir(set);
    let text = std::fs::read_to_string(dir.join("cases.jsonl")).expect("cases.jsonl");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let v: Value = serde_json::from_str(line).expect("a JSON case");
            let s = |k: &str| v[k].as_str().unwrap_or_else(|| panic!("{k} in {line}")).to_string();
            Case {
                id: s("id"),
                framework: s("framework"),
                op: s("op"),
                args: v["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string()).collect(),
                input: dir.join(s("input")),
                expect: v["expect"].as_str().map(|e| dir.join(e)),
            }
        })
        .collect()
}

/// Runs a case through the library; returns the output array or the error text.
pub fn run(case: &Case, parallelism: Parallelism) -> Result<npy::NpyArray, String> {
    let spec = OpSpec::parse(&case.framework, &case.op, &case.args).map_err(|e| e.to_string())?;
    let x = npy::read(&case.input).map_err(|e| e.to_string())?;
    let plan = spec.plan(x.shape()).map_err(|e| e.to_string())?.with_parallelism(parallelism);
    let y = plan.run_bytes(x.data(), x.elem_size()).map_err(|e| e.to_string())?;
    npy::NpyArray::from_parts(x.descr_dtype().clone(), plan.output_shape().to_vec(), y).map_err(|e| e.to_string())
}

/// Runs every case and compares: an expected output bit for bit (dtype,
/// shape and bytes), an expected rejection rejected. `exception` may judge
/// an output case itself (`Some(passes)`: see the general set's 0-d
/// cases); returns the failures and how many cases it judged.
pub fn failures(
    cases: &[Case],
    parallelism: Parallelism,
    exception: impl Fn(&Case, &npy::NpyArray, &npy::NpyArray) -> Option<bool>,
) -> (Vec<String>, usize) {
    let (mut failures, mut judged) = (Vec::new(), 0);
    for case in cases {
        match (&case.expect, run(case, parallelism)) {
            (Some(expect), Ok(y)) => {
                let want = npy::read(expect).unwrap();
                if let Some(passes) = exception(case, &y, &want) {
                    judged += 1;
                    if !passes {
                        failures.push(format!(
                            "{}: output differs from its exception's rule (shape {:?})",
                            case.id,
                            y.shape()
                        ));
                    }
                } else if y.descr() != want.descr() || y.shape() != want.shape() || y.data() != want.data() {
                    failures.push(format!("{}: output differs (shape {:?} vs {:?})", case.id, y.shape(), want.shape()));
                }
            }
            (Some(_), Err(e)) => failures.push(format!("{}: rejected but expected an output: {e}", case.id)),
            (None, Ok(y)) => {
                failures.push(format!("{}: accepted (shape {:?}) but the framework rejects it", case.id, y.shape()))
            }
            (None, Err(_)) => {}
        }
    }
    (failures, judged)
}
