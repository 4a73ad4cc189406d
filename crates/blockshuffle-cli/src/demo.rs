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
    /// The same rearrangement as the example before it, written otherwise:
    /// the outputs must be equal (and the demo says so).
    same_as_previous: bool,
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
        same_as_previous: false,
    },
    Example {
        title: "TensorFlow SpaceToBatch, example (2): the depth is carried along",
        framework: "tf",
        op: "space-to-batch",
        args: &["--block-size", "2", "--paddings", "0,0,0,0"],
        shape: &[1, 2, 2, 3],
        values: Some(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]),
        show: true,
        same_as_previous: false,
    },
    Example {
        title: "TensorFlow SpaceToBatch, example (3): a 4x4 image into four 2x2 images",
        framework: "tf",
        op: "space-to-batch",
        args: &["--block-size", "2", "--paddings", "0,0,0,0"],
        shape: &[1, 4, 4, 1],
        values: Some(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]),
        show: true,
        same_as_previous: false,
    },
    Example {
        title: "TensorFlow SpaceToBatch, example (4): batch index = block position, then original batch",
        framework: "tf",
        op: "space-to-batch",
        args: &["--block-size", "2", "--paddings", "0,0,0,0"],
        shape: &[2, 2, 4, 1],
        values: Some(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]),
        show: true,
        same_as_previous: false,
    },
    Example {
        title: "TensorFlow SpaceToBatchND with zero padding: [1, 3, 3, 1], block 2x2, paddings [[1, 0], [1, 0]]",
        framework: "tf",
        op: "space-to-batch-nd",
        args: &["--block-shape", "2,2", "--paddings", "1,0,1,0"],
        shape: &[1, 3, 3, 1],
        values: Some(&[1, 2, 3, 4, 5, 6, 7, 8, 9]),
        show: true,
        same_as_previous: false,
    },
    Example {
        title: "TensorFlow SpaceToDepth (NHWC): the 2x2 block offsets become the high part of the channel",
        framework: "tf",
        op: "space-to-depth",
        args: &["--block-size", "2"],
        shape: &[1, 4, 4, 1],
        values: Some(&[1, 2, 5, 6, 3, 4, 7, 8, 9, 10, 13, 14, 11, 12, 15, 16]),
        show: true,
        same_as_previous: false,
    },
    Example {
        title: "TensorFlow SpaceToDepth (NHWC) with depth 3",
        framework: "tf",
        op: "space-to-depth",
        args: &["--block-size", "2"],
        shape: &[1, 2, 2, 3],
        values: Some(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]),
        show: true,
        same_as_previous: false,
    },
    Example {
        title: "OpenVINO SpaceToBatch-2, the specification's 5-D example (input 0, 1, 2, ...)",
        framework: "ov",
        op: "space-to-batch",
        args: &["--block-shape", "1,2,4,3,1", "--pads-begin", "0,0,1,0,0", "--pads-end", "0,0,1,0,0"],
        shape: &[2, 6, 10, 3, 3],
        values: None,
        show: false,
        same_as_previous: false,
    },
    Example {
        title: "OpenVINO BatchToSpace-2, the specification's 2-D example (input 0, 1, 2, ...)",
        framework: "ov",
        op: "batch-to-space",
        args: &["--block-shape", "1,5", "--crops-begin", "0,2", "--crops-end", "0,0"],
        shape: &[10, 2],
        values: None,
        show: true,
        same_as_previous: false,
    },
    Example {
        title: "OpenVINO BatchToSpace-2, the specification's 5-D example (input 0, 1, 2, ...)",
        framework: "ov",
        op: "batch-to-space",
        args: &["--block-shape", "1,2,4,3,1", "--crops-begin", "0,0,1,0,0", "--crops-end", "0,0,1,0,0"],
        shape: &[48, 3, 3, 1, 3],
        values: None,
        show: false,
        same_as_previous: false,
    },
    Example {
        title: "ONNX DepthToSpace, mode DCR (blocks first)",
        framework: "onnx",
        op: "depth-to-space",
        args: &["--blocksize", "2", "--mode", "DCR"],
        shape: &[1, 8, 2, 3],
        values: None,
        show: true,
        same_as_previous: false,
    },
    Example {
        title: "ONNX DepthToSpace, mode CRD (depth first) = PyTorch pixel_shuffle",
        framework: "onnx",
        op: "depth-to-space",
        args: &["--blocksize", "2", "--mode", "CRD"],
        shape: &[1, 8, 2, 3],
        values: None,
        show: true,
        same_as_previous: false,
    },
    Example {
        title: "PyTorch pixel_unshuffle: [1, 4, 4] into [4, 2, 2]",
        framework: "torch",
        op: "pixel-unshuffle",
        args: &["--downscale-factor", "2"],
        shape: &[1, 4, 4],
        values: None,
        show: true,
        same_as_previous: false,
    },
    Example {
        title: "PyTorch pixel_shuffle by 2: [8, 2, 3] into [2, 4, 6]",
        framework: "torch",
        op: "pixel-shuffle",
        args: &["--upscale-factor", "2"],
        shape: &[8, 2, 3],
        values: None,
        show: true,
        same_as_previous: false,
    },
    Example {
        title: "einops rearrange: pixel_shuffle as a pattern (the same plan, the same loop nest)",
        framework: "einops",
        op: "rearrange",
        args: &["--pattern", "... (c r1 r2) h w -> ... c (h r1) (w r2)", "--sizes", "r1=2,r2=2"],
        shape: &[8, 2, 3],
        values: None,
        show: false,
        same_as_previous: true,
    },
    Example {
        title: "numpy transpose: NHWC to NCHW",
        framework: "numpy",
        op: "transpose",
        args: &["--axes", "0,3,1,2"],
        shape: &[1, 2, 2, 3],
        values: None,
        show: true,
        same_as_previous: false,
    },
    Example {
        title: "einops rearrange: the same transpose as a pattern",
        framework: "einops",
        op: "rearrange",
        args: &["--pattern", "b h w c -> b c h w"],
        shape: &[1, 2, 2, 3],
        values: None,
        show: false,
        same_as_previous: true,
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

/// An argument as a shell would need it (quoted when it has spaces).
fn quoted(arg: &str) -> String {
    if arg.contains(' ') {
        format!("'{arg}'")
    } else {
        arg.to_string()
    }
}

/// Runs and prints every example.
pub fn run() -> Result<()> {
    let mut previous: Option<Vec<i32>> = None;
    for (i, ex) in EXAMPLES.iter().enumerate() {
        let spec = OpSpec::parse(ex.framework, ex.op, ex.args)?;
        let n: usize = ex.shape.iter().product();
        let x: Vec<i32> = match ex.values {
            Some(v) => v.to_vec(),
            None => (0..n as i32).collect(),
        };
        let (y, out_shape) = spec.apply(&x, ex.shape)?;
        outln!("{}. {}", i + 1, ex.title);
        let args: Vec<String> = ex.args.iter().map(|a| quoted(a)).collect();
        outln!("   blockshuffle {} {} {}", ex.framework, ex.op, args.join(" "));
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
        if ex.same_as_previous {
            let same = previous.as_ref() == Some(&y);
            outln!("   the same output as example {}: {}", i, if same { "yes" } else { "NO" });
        }
        previous = Some(y);
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
