//! `blockshuffle demo`: the specification's worked examples, run through the
//! library and printed with their inputs, parameters and outputs.

use blockshuffle::catalog::OpSpec;
use blockshuffle::{Operator, Result};

/// One worked example: an operator on `0..n` or given values.
struct Example {
    title: &'static str,
    framework: &'static str,
    op: &'static str,
    args: &'static [&'static str],
    shape: &'static [usize],
    values: Option<&'static [i32]>,
    /// Print the full tensors (small examples) or only shapes and a few values.
    show: bool,
}

const EXAMPLES: &[Example] = &[
    Example {
        title: "TensorFlow SpaceToBatch, example (1): each position of a 2x2 block becomes a batch entry",
        framework: "tf",
        op: "space-to-batch",
        args: &["--block-size", "2", "--paddings", "0,0,0,0"],
        shape: &[1, 2, 2, 1],
        values: Some(&[1, 2, 3, 4]),
        show: true,
    },
    Example {
        title: "TensorFlow SpaceToBatch, example (2): the depth is carried along",
        framework: "tf",
        op: "space-to-batch",
        args: &["--block-size", "2", "--paddings", "0,0,0,0"],
        shape: &[1, 2, 2, 3],
        values: Some(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]),
        show: true,
    },
    Example {
        title: "TensorFlow SpaceToBatch, example (3): a 4x4 image into four 2x2 images",
        framework: "tf",
        op: "space-to-batch",
        args: &["--block-size", "2", "--paddings", "0,0,0,0"],
        shape: &[1, 4, 4, 1],
        values: Some(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]),
        show: true,
    },
    Example {
        title: "TensorFlow SpaceToBatch, example (4): batch index = block position, then original batch",
        framework: "tf",
        op: "space-to-batch",
        args: &["--block-size", "2", "--paddings", "0,0,0,0"],
        shape: &[2, 2, 4, 1],
        values: Some(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]),
        show: true,
    },
    Example {
        title: "TensorFlow SpaceToBatchND with zero padding: [1, 3, 3, 1], block 2x2, paddings [[1, 0], [1, 0]]",
        framework: "tf",
        op: "space-to-batch-nd",
        args: &["--block-shape", "2,2", "--paddings", "1,0,1,0"],
        shape: &[1, 3, 3, 1],
        values: Some(&[1, 2, 3, 4, 5, 6, 7, 8, 9]),
        show: true,
    },
    Example {
        title: "TensorFlow SpaceToDepth (NHWC): the 2x2 block offsets become the high part of the channel",
        framework: "tf",
        op: "space-to-depth",
        args: &["--block-size", "2"],
        shape: &[1, 4, 4, 1],
        values: Some(&[1, 2, 5, 6, 3, 4, 7, 8, 9, 10, 13, 14, 11, 12, 15, 16]),
        show: true,
    },
    Example {
        title: "TensorFlow SpaceToDepth (NHWC) with depth 3",
        framework: "tf",
        op: "space-to-depth",
        args: &["--block-size", "2"],
        shape: &[1, 2, 2, 3],
        values: Some(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]),
        show: true,
    },
    Example {
        title: "OpenVINO SpaceToBatch-2, the specification's 5-D example (input 0, 1, 2, ...)",
        framework: "ov",
        op: "space-to-batch",
        args: &["--block-shape", "1,2,4,3,1", "--pads-begin", "0,0,1,0,0", "--pads-end", "0,0,1,0,0"],
        shape: &[2, 6, 10, 3, 3],
        values: None,
        show: false,
    },
    Example {
        title: "OpenVINO BatchToSpace-2, the specification's 2-D example (input 0, 1, 2, ...)",
        framework: "ov",
        op: "batch-to-space",
        args: &["--block-shape", "1,5", "--crops-begin", "0,2", "--crops-end", "0,0"],
        shape: &[10, 2],
        values: None,
        show: true,
    },
    Example {
        title: "OpenVINO BatchToSpace-2, the specification's 5-D example (input 0, 1, 2, ...)",
        framework: "ov",
        op: "batch-to-space",
        args: &["--block-shape", "1,2,4,3,1", "--crops-begin", "0,0,1,0,0", "--crops-end", "0,0,1,0,0"],
        shape: &[48, 3, 3, 1, 3],
        values: None,
        show: false,
    },
    Example {
        title: "ONNX DepthToSpace, mode DCR (blocks first)",
        framework: "onnx",
        op: "depth-to-space",
        args: &["--blocksize", "2", "--mode", "DCR"],
        shape: &[1, 8, 2, 3],
        values: None,
        show: true,
    },
    Example {
        title: "ONNX DepthToSpace, mode CRD (depth first) = PyTorch pixel_shuffle",
        framework: "onnx",
        op: "depth-to-space",
        args: &["--blocksize", "2", "--mode", "CRD"],
        shape: &[1, 8, 2, 3],
        values: None,
        show: true,
    },
    Example {
        title: "PyTorch pixel_unshuffle: [1, 4, 4] into [4, 2, 2]",
        framework: "torch",
        op: "pixel-unshuffle",
        args: &["--downscale-factor", "2"],
        shape: &[1, 4, 4],
        values: None,
        show: true,
    },
];

/// Formats a tensor as nested lists, numpy style.
pub fn format_tensor(values: &[i32], shape: &[usize]) -> String {
    fn rec(out: &mut String, values: &[i32], shape: &[usize], indent: usize) {
        match shape {
            [] => out.push_str(&values[0].to_string()),
            [_] => {
                out.push('[');
                let items: Vec<String> = values.iter().map(|v| v.to_string()).collect();
                out.push_str(&items.join(", "));
                out.push(']');
            }
            [n, rest @ ..] => {
                let step: usize = rest.iter().product();
                out.push('[');
                for i in 0..*n {
                    if i > 0 {
                        out.push_str(",\n");
                        out.push_str(&" ".repeat(indent + 1));
                    }
                    rec(out, &values[i * step..(i + 1) * step], rest, indent + 1);
                }
                out.push(']');
            }
        }
    }
    let mut out = String::new();
    rec(&mut out, values, shape, 0);
    out
}

fn indent(text: &str, by: &str) -> String {
    text.lines().map(|l| format!("{by}{l}")).collect::<Vec<_>>().join("\n")
}

/// Runs and prints every example.
pub fn run() -> Result<()> {
    for (i, ex) in EXAMPLES.iter().enumerate() {
        let spec = OpSpec::parse(ex.framework, ex.op, ex.args)?;
        let n: usize = ex.shape.iter().product();
        let x: Vec<i32> = match ex.values {
            Some(v) => v.to_vec(),
            None => (0..n as i32).collect(),
        };
        let (y, out_shape) = spec.apply(&x, ex.shape)?;
        outln!("{}. {}", i + 1, ex.title);
        outln!("   blockshuffle {} {} {}", ex.framework, ex.op, ex.args.join(" "));
        outln!("   input  shape {:?}", ex.shape);
        if ex.show {
            outln!("{}", indent(&format_tensor(&x, ex.shape), "     "));
        }
        outln!("   output shape {:?}", out_shape.as_slice());
        if ex.show {
            outln!("{}", indent(&format_tensor(&y, &out_shape), "     "));
        } else {
            let first: Vec<String> = y.iter().take(12).map(|v| v.to_string()).collect();
            outln!("     first values: {} ...", first.join(", "));
        }
        outln!();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_nested_lists() {
        assert_eq!(format_tensor(&[1, 2, 3, 4], &[2, 2]), "[[1, 2],\n [3, 4]]");
        assert_eq!(format_tensor(&[7], &[]), "7");
    }
}
