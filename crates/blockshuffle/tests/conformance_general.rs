//! Every golden case of `tests/data/conformance-general` (produced by the
//! real numpy `np.transpose` and einops `einops.rearrange`) through the
//! library: expected outputs bit for bit (dtype, shape and bytes), expected
//! rejections rejected; and strided (reversed) inputs through the ndarray
//! path give the same bits.

use blockshuffle::catalog::OpSpec;
use blockshuffle::npy;
use blockshuffle::Parallelism;

mod common;
use common::golden::{cases as cases_of, failures, run, Case};

const SET: &str = "conformance-general";

fn cases() -> Vec<Case> {
    cases_of(SET)
}

/// The 21 cases of a 0-d input: their `.out.npy` holds shape `[1]`, but
/// `np.transpose` of a 0-d array is 0-d (it permutes the axes; numpy
/// documents `transpose(a).shape == a.shape[::-1]`). The oracle's harness
/// evidently passed the result through `np.ascontiguousarray`, which makes
/// every 0-d array 1-d. These cases are checked against numpy's own rule:
/// the file's one element, as a 0-d output.
const ZERO_D_CASES: usize = 21;

/// Whether a case is one of [`ZERO_D_CASES`], and its output follows numpy.
fn zero_d_follows_numpy(case: &Case, got: &npy::NpyArray, want: &npy::NpyArray) -> Option<bool> {
    let input = npy::read(&case.input).unwrap();
    (case.framework == "numpy" && input.shape().is_empty() && want.shape() == [1])
        .then(|| got.shape().is_empty() && got.descr() == want.descr() && got.data() == want.data())
}

fn check_all(parallelism: Parallelism) {
    let cases = cases();
    assert_eq!(cases.len(), 300, "the general conformance set has 300 cases");
    assert_eq!(cases.iter().filter(|c| c.expect.is_none()).count(), 49, "49 of them rejections");
    let (failures, zero_d) = failures(&cases, parallelism, zero_d_follows_numpy);
    assert!(failures.is_empty(), "{} of {} cases fail:\n{}", failures.len(), cases.len(), failures.join("\n"));
    assert_eq!(zero_d, ZERO_D_CASES);
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
    // A sample of rejections, one of each rule, and their exact messages.
    let expected = [
        (
            "einops-rearrange-010005",
            "einops rearrange: pattern \"... (h a g) -> a g ... h\": cannot infer both `h` and `g` of `(h a g)`: \
             give the lengths of all but one of them",
        ),
        (
            "einops-rearrange-010009",
            "einops rearrange: pattern \"... chan -> chan ... z\": `z` only on the right side (rearrange needs every \
             axis on both)",
        ),
        (
            "einops-rearrange-010029",
            "einops rearrange: pattern \"(h g) f (chan i) h_out -> h chan g f (i h_out) ...\": `...` on the right \
             side but not on the left",
        ),
        ("einops-rearrange-010033", "einops rearrange: input rank is 4 but must be 3 (the pattern's left side)"),
        ("einops-rearrange-010061", "einops rearrange: input axis 1 `(p1 e)` of length 10 is not divisible by p1 = 3"),
        ("einops-rearrange-010063", "einops rearrange: pattern \"b -> b b\": right side: axis `b` twice"),
        (
            "einops-rearrange-010191",
            "einops rearrange: input axis 0 `(b d i)` of length 16 is not divisible by b * i = 20",
        ),
        (
            "einops-rearrange-010211",
            "einops rearrange: pattern \"... (h_out p2) (f a) batch (g j) -> (g h_out) () a batch j (f p2)\": \
             `...` only on the left side (rearrange needs every axis on both)",
        ),
        (
            "numpy-transpose-010018",
            "numpy transpose: axes[0] = 9 is out of bounds for an input of rank 6 (axes run from -6 to 5)",
        ),
        ("numpy-transpose-010026", "numpy transpose: axes has 4 values but must have 5 (one per input dim)"),
        ("numpy-transpose-010068", "numpy transpose: axes has 0 values but must have 1 (one per input dim)"),
        ("numpy-transpose-010256", "numpy transpose: axes[1] = -4 repeats axis 1, already axes[0]"),
    ];
    let cases = cases();
    for (id, message) in expected {
        let case = cases.iter().find(|c| c.id == id).unwrap();
        assert!(case.expect.is_none());
        assert_eq!(run(case, Parallelism::Sequential).unwrap_err(), message, "{id}");
    }
}

/// The cases through the ndarray path from reversed (negative-stride)
/// views: the same bits as from the contiguous input.
#[test]
fn strided_views_give_the_same_bits() {
    use blockshuffle::OperatorNdarray;
    use ndarray::{ArrayViewD, Axis, IxDyn};
    for case in cases() {
        if case.expect.is_none() {
            continue;
        }
        let spec = OpSpec::parse(&case.framework, &case.op, &case.args).unwrap();
        let x = npy::read(&case.input).unwrap();
        let want = run(&case, Parallelism::Sequential).unwrap();
        // Elements as fixed-size byte arrays would need one type per size:
        // label each element with its index instead, and move the labels.
        let n = x.shape().iter().product::<usize>();
        let labels: Vec<u32> = (0..n as u32).collect();
        let view = ArrayViewD::from_shape(IxDyn(x.shape()), &labels).unwrap();
        let mut flipped = view.to_owned();
        for ax in 0..flipped.ndim() {
            flipped.invert_axis(Axis(ax));
        }
        // `flipped` is the reversed labels; reversing its view again gives
        // the original order, read through negative strides.
        let mut back = flipped.view();
        for ax in 0..back.ndim() {
            back.invert_axis(Axis(ax));
        }
        let moved = spec.apply_array(back).unwrap();
        let e = x.elem_size();
        let got: Vec<u8> =
            moved.iter().flat_map(|&i| x.data()[i as usize * e..(i as usize + 1) * e].to_vec()).collect();
        assert_eq!(moved.shape(), want.shape(), "{}", case.id);
        assert_eq!(got, want.data(), "{}", case.id);
    }
}
