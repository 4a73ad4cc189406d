//! Every golden case of `tests/data/conformance` (produced by the real
//! frameworks) through the library: expected outputs bit for bit (dtype,
//! shape and bytes), expected rejections rejected.

use blockshuffle::Parallelism;

mod common;
use common::golden::{cases as cases_of, failures, run, Case};

const SET: &str = "conformance";

fn cases() -> Vec<Case> {
    cases_of(SET)
}

fn check_all(parallelism: Parallelism) {
    let cases = cases();
    assert_eq!(cases.len(), 293, "the public conformance set has 293 cases");
    let (failures, _) = failures(&cases, parallelism, |_, _, _| None);
    assert!(failures.is_empty(), "{} of {} cases fail:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

#[test]
fn every_case_passes_sequentially() {
    check_all(Parallelism::Sequential);
}

#[test]
fn every_case_passes_with_threads() {
    check_all(Parallelism::Threads(3));
}

#[test]
fn rejections_name_the_rule() {
    // A sample of rejections and the words the error must contain.
    let expected = [
        (
            "tf-space-to-batch-nd-0020",
            "padded spatial dim 0 (input 4 + paddings 0 + 1 = 5) is not divisible by block_shape[0] = 2",
        ),
        ("tf-space-to-batch-nd-0021", "paddings[0] = -1 must be >= 0"),
        ("tf-space-to-batch-nd-0022", "block_shape[1] = -3 must be >= 1"),
        ("tf-space-to-batch-nd-0023", "input rank is 2 but must be >= 3 (1 + len(block_shape))"),
        ("tf-batch-to-space-nd-0021", "5 block dimensions remain"),
        ("tf-space-to-depth-0018", "block_size = 1 must be >= 2"),
        ("ov-space-to-batch-0020", "pads_begin has 2 values but must have 3"),
        ("onnx-depth-to-space-0019", "input rank is 5 but must be 4"),
        ("torch-pixel-shuffle-0020", "channel dim 6 is not divisible by upscale_factor^2 = 4"),
    ];
    let cases = cases();
    for (id, words) in expected {
        let case = cases.iter().find(|c| c.id == id).unwrap();
        assert!(case.expect.is_none());
        let err = run(case, Parallelism::Sequential).unwrap_err();
        assert!(err.contains(words), "{id}: {err:?} lacks {words:?}");
    }
}
