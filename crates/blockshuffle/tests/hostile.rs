//! The input classes behind the peers' crashes, against every operator:
//! block sizes 0, negative, 1 where forbidden and huge (up to i64::MAX);
//! paddings and crops that overflow when added or multiplied; dims whose
//! products pass u64 or isize; zero-size dims in every position; ranks 0 to
//! 8; empty and mismatched parameter lists. Each must give a clean error or,
//! where the framework accepts it, an output that runs (never a panic, an
//! abort or an out-of-bounds access).

use blockshuffle::catalog::{OpSpec, CATALOG};
use blockshuffle::{onnx, openvino, tf, torch, DataFormat, Error, Operator};

const HOSTILE: [i64; 12] = [0, -1, -2, 1, 2, 3, i64::MAX, i64::MIN, 1 << 32, (1 << 31) - 1, 1 << 62, -(1 << 62)];

/// Shapes of ranks 0 to 8 with zero dims in every position and huge dims.
fn shapes() -> Vec<Vec<usize>> {
    let mut out = vec![vec![]];
    for rank in 1..=8usize {
        out.push(vec![2; rank]);
        out.push(vec![4; rank]);
        for zero_at in 0..rank {
            let mut s = vec![4; rank];
            s[zero_at] = 0;
            out.push(s);
        }
        let mut huge = vec![4; rank];
        huge[rank - 1] = usize::MAX / 3;
        out.push(huge);
        let mut beyond_isize = vec![2; rank];
        beyond_isize[0] = 1 << 62;
        out.push(beyond_isize);
    }
    out.push(vec![1, 1 << 31, 1 << 31, 1 << 31]);
    out
}

/// Plans `op` for every shape; runs what is small enough; checks the run
/// and its inverse agree.
fn exercise(op: &dyn Operator) -> (usize, usize) {
    let (mut ok, mut rejected) = (0, 0);
    for shape in shapes() {
        match op.plan(&shape) {
            Err(e) => {
                // Every error renders, naming the operator.
                assert!(e.to_string().starts_with(op.name()), "{e}");
                rejected += 1;
            }
            Ok(plan) => {
                ok += 1;
                assert_eq!(plan.input_shape(), &shape[..]);
                if plan.input_len() <= 1 << 14 && plan.output_len() <= 1 << 14 {
                    let x: Vec<u32> = (0..plan.input_len() as u32).collect();
                    let y = plan.run(&x).unwrap();
                    assert_eq!(plan.run(&plan.inverse().run(&y).unwrap()).unwrap(), y, "{} {shape:?}", op.name());
                } else {
                    // Too large to hold: the run refuses the buffer cleanly.
                    assert!(matches!(plan.run::<u8>(&[]), Err(Error::BufferLength { .. })) || plan.input_len() == 0);
                }
            }
        }
    }
    (ok, rejected)
}

#[test]
fn scalar_parameters_from_zero_to_i64_max() {
    let mut accepted = 0;
    for v in HOSTILE {
        let ops: Vec<Box<dyn Operator>> = vec![
            Box::new(tf::SpaceToBatch::new(v, [[0, 0], [0, 0]])),
            Box::new(tf::BatchToSpace::new(v, [[0, 0], [0, 0]])),
            Box::new(tf::SpaceToBatch::new(2, [[v, 0], [0, v]])),
            Box::new(tf::BatchToSpace::new(2, [[0, v], [v, 0]])),
            Box::new(tf::SpaceToDepth::new(v, DataFormat::Nhwc)),
            Box::new(tf::DepthToSpace::new(v, DataFormat::Nchw)),
            Box::new(tf::DepthToSpace::new(v, DataFormat::NchwVectC)),
            Box::new(openvino::SpaceToDepth::blocks_first(v)),
            Box::new(openvino::DepthToSpace::depth_first(v)),
            Box::new(onnx::SpaceToDepth::new(v)),
            Box::new(onnx::DepthToSpace::crd(v)),
            Box::new(torch::PixelShuffle::new(v)),
            Box::new(torch::PixelUnshuffle::new(v)),
        ];
        for op in &ops {
            accepted += exercise(op.as_ref()).0;
        }
    }
    assert!(accepted > 100, "the sweep also covers accepted cases ({accepted})");
}

#[test]
fn list_parameters_overflowing_and_mismatched() {
    for a in HOSTILE {
        for b in [0, 1, 2, i64::MAX, -1] {
            let blocks = [[a, 2], [2, a], [a, a], [1, b]];
            for block in &blocks {
                for pads in [[[0, 0], [0, 0]], [[a, b], [b, a]], [[i64::MAX, i64::MAX], [0, 0]]] {
                    exercise(&tf::SpaceToBatchNd::new(block, &pads));
                    exercise(&tf::BatchToSpaceNd::new(block, &pads));
                }
            }
            // Empty and mismatched lists.
            exercise(&tf::SpaceToBatchNd::new(&[], &[]));
            exercise(&tf::SpaceToBatchNd::new(&[a], &[]));
            exercise(&tf::BatchToSpaceNd::new(&[], &[[a, b]]));
            let ov = [1, a, b];
            for (begin, end) in [([0, 0, 0], [0, 0, 0]), ([0, a, b], [0, b, a]), ([0, i64::MAX, 0], [0, i64::MAX, 0])] {
                exercise(&openvino::SpaceToBatch::new(&ov, &begin, &end));
                exercise(&openvino::BatchToSpace::new(&ov, &begin, &end));
                exercise(&openvino::SpaceToBatch::new(&ov[..2], &begin, &end));
                exercise(&openvino::BatchToSpace::new(&[], &[], &[]));
            }
        }
    }
}

#[test]
fn every_catalogue_operator_with_hostile_flags() {
    for e in CATALOG {
        for v in HOSTILE {
            let v = v.to_string();
            let args: Vec<String> = e
                .example
                .split_whitespace()
                .map(|a| {
                    if a.starts_with("--") || a.chars().any(|c| c.is_alphabetic()) {
                        a.to_string()
                    } else {
                        v.clone()
                    }
                })
                .collect();
            match OpSpec::parse(e.framework, e.op, &args) {
                Ok(spec) => {
                    exercise(&spec);
                }
                Err(err) => assert!(matches!(err, Error::Flag { .. }), "{err}"),
            }
        }
    }
}

/// The specific peer failures, each with the error it must give here.
#[test]
fn the_peers_crashes() {
    // TensorFlow CVE-2022-29203: SpaceToBatchND block product overflow.
    let e = tf::SpaceToBatchNd::new(&[i64::MAX, 2], &[[0, 0], [0, 0]]).plan(&[1, 0, 2]).unwrap_err();
    assert!(matches!(e, Error::NotDivisible { .. } | Error::Overflow { .. }), "{e}");
    let e = tf::SpaceToBatchNd::new(&[1 << 32, 1 << 32], &[[0, 0], [0, 0]]).plan(&[4, 1 << 32, 1 << 32]).unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }), "{e}");
    // TFLite division by zero: zero blocks.
    assert!(matches!(
        tf::BatchToSpaceNd::new(&[0], &[[0, 0]]).plan(&[4, 1]),
        Err(Error::BlockTooSmall { value: 0, .. })
    ));
    assert!(matches!(onnx::DepthToSpace::dcr(0).plan(&[1, 4, 1, 1]), Err(Error::BlockTooSmall { value: 0, .. })));
    // PyTorch pixel_shuffle: negative factors and squared-factor overflow.
    assert!(matches!(torch::PixelShuffle::new(-3).plan(&[1, 9, 1, 1]), Err(Error::BlockTooSmall { value: -3, .. })));
    assert!(matches!(
        torch::PixelShuffle::new(1 << 32).plan(&[1, 9, 1, 1]),
        Err(Error::Overflow { what: "upscale_factor^2", .. })
    ));
    assert!(matches!(torch::PixelUnshuffle::new(1 << 40).plan(&[1, 1 << 40, 1 << 40]), Err(Error::Overflow { .. })));
    // XNNPACK: block size squared overflow in depth-to-space.
    assert!(matches!(
        tf::DepthToSpace::new(1 << 32, DataFormat::Nhwc).plan(&[1, 1, 1, 4]),
        Err(Error::Overflow { what: "block_size^2", .. })
    ));
    // TensorFlow's depth-to-space NCHW_VECT_C abort: a bad vector dim is an error.
    assert!(matches!(
        tf::DepthToSpace::new(2, DataFormat::NchwVectC).plan(&[1, 4, 1, 1, 3]),
        Err(Error::VectSize { size: 3, .. })
    ));
    // The transpose-crate advisory: buffers that do not match the shape.
    let plan = onnx::SpaceToDepth::new(2).plan(&[1, 1, 2, 2]).unwrap();
    assert!(matches!(plan.run(&[0u8; 3]), Err(Error::BufferLength { .. })));
    assert!(matches!(plan.run_into(&[0u8; 4], &mut [0u8; 8]), Err(Error::BufferLength { .. })));
}

/// An output too large for memory is an error, not an allocation abort.
#[test]
fn huge_outputs_are_errors_not_aborts() {
    // A zero-size input padded to an output of 2^61 elements.
    let plan = tf::SpaceToBatchNd::new(&[1], &[[1 << 61, 0]]).plan(&[1, 0]).unwrap();
    assert_eq!(plan.output_shape(), &[1, 1 << 61]);
    assert!(matches!(plan.run::<u8>(&[]), Err(Error::Allocation { .. })));
    assert!(matches!(plan.run_bytes(&[], 4), Err(Error::Allocation { .. }) | Err(Error::Overflow { .. })));
}

/// numpy transpose with hostile axes, and einops rearrange with hostile
/// patterns and sizes: empty and malformed patterns, unicode, huge
/// lengths, more axes than the engine has: clean errors or runs.
#[test]
fn general_front_ends_with_hostile_inputs() {
    use blockshuffle::{einops, numpy};
    for a in HOSTILE {
        for b in [0, 1, -1, 2, i64::MAX, i64::MIN] {
            exercise(&numpy::Transpose::new(&[a]));
            exercise(&numpy::Transpose::new(&[a, b]));
            exercise(&numpy::Transpose::new(&[b, a, 0]));
            exercise(&numpy::Transpose::new(&[1, 0, b, a]));
        }
    }
    exercise(&numpy::Transpose::reversed());
    let long: String = (0..40).map(|i| format!(" n{i}")).collect();
    let patterns = [
        "",
        "->",
        " -> ",
        "-> ->",
        "a->a",
        "a - > a",
        "a -> a",
        "a b -> b a",
        "(a b) -> a b",
        "a (b c) -> (c a) b",
        "... -> ...",
        "... a -> a ...",
        "a ... -> (... a)",
        "() 1 -> 1 ()",
        "(1) (1 1) -> ",
        "((a)) -> a",
        "(a -> a",
        "a) -> a",
        "... ... -> ...",
        ". -> .",
        "…  -> …",
        "a … -> … a",
        "ä ö -> ö ä",
        "日本 語 -> 語 日本",
        "a\u{0} -> a",
        "a\t -> a",
        "🦀 -> 🦀",
        "a١ -> a١",
        "١ a -> a",
        "0 -> ",
        "00000000000000000000001 a -> a",
        "99999999999999999999999 -> ",
        "a_ -> a_",
        "__ -> __",
        "a -> a a",
        "a a -> a",
        &long,
    ];
    let sizes: [&[(&str, usize)]; 5] =
        [&[], &[("a", 0)], &[("a", usize::MAX)], &[("b", usize::MAX), ("c", usize::MAX)], &[("c", 1 << 40), ("b", 3)]];
    let mut accepted = 0;
    for p in patterns {
        for &s in &sizes {
            match einops::Rearrange::new(p, s) {
                Ok(op) => {
                    accepted += 1;
                    exercise(&op);
                }
                Err(e) => {
                    let text = e.to_string();
                    assert!(text.starts_with("einops rearrange: "), "{text}");
                    assert!(matches!(e, Error::Pattern { .. } | Error::AxisSize { .. }), "{p:?}: {e:?}");
                }
            }
        }
    }
    assert!(accepted > 20, "{accepted}");
    // More output axes, and elementary axes, than the engine has.
    let op = einops::Rearrange::new(&format!("{long} -> {long}"), &[]).unwrap();
    assert!(matches!(op.plan(&[1; 40]), Err(Error::RankTooLarge { .. })));
}
