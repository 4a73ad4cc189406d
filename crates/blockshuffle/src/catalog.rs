//! The operator catalogue: every operator by its command-line name, with its
//! flags, parsed into an owned [`OpSpec`] that is itself an [`Operator`].
//!
//! ```
//! use blockshuffle::catalog::OpSpec;
//! use blockshuffle::Operator;
//!
//! let args = ["--block-shape", "2,2", "--paddings", "0,0,0,0"];
//! let spec = OpSpec::parse("tf", "space-to-batch-nd", &args)?;
//! assert_eq!(spec.output_shape(&[1, 4, 4, 1])?.as_slice(), &[4, 2, 2, 1]);
//! # Ok::<(), blockshuffle::Error>(())
//! ```

use crate::{einops, numpy, onnx, openvino, tf, torch, Error, Operator, Plan, Result};

/// One catalogue entry: how the command line names an operator and its flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// `tf`, `ov`, `onnx`, `torch`, `numpy` or `einops`.
    pub framework: &'static str,
    /// The operator's command-line name.
    pub op: &'static str,
    /// `"framework op"`, as errors and [`Operator::name`] give it.
    pub name: &'static str,
    /// The framework's own name for it.
    pub framework_name: &'static str,
    /// Its flags, in the order the synopsis gives them.
    pub flags: &'static [Flag],
    /// One line on what it does.
    pub summary: &'static str,
    /// A runnable example command line (flags only).
    pub example: &'static str,
}

/// One flag of an operator: `--name value`.
///
/// ```
/// let e = blockshuffle::catalog::entry("tf", "space-to-depth").unwrap();
/// let format = e.flag("data-format").unwrap();
/// assert_eq!((format.required, format.default), (false, Some("NHWC")));
/// assert_eq!(format.values, ["NHWC", "NCHW", "NCHW_VECT_C"]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flag {
    /// Its name without the dashes (`block-shape`).
    pub name: &'static str,
    /// What its value looks like (`B1,..,BM`).
    pub value: &'static str,
    /// One line on what it means.
    pub help: &'static str,
    /// Whether the operator needs it: it has no default and no meaning when absent.
    pub required: bool,
    /// The value the operator takes when it is absent.
    pub default: Option<&'static str>,
    /// The words it accepts, for a flag that takes one of a few (empty: any value of its form).
    pub values: &'static [&'static str],
}

impl Flag {
    /// A required flag.
    const fn required(name: &'static str, value: &'static str, help: &'static str) -> Flag {
        Flag { name, value, help, required: true, default: None, values: &[] }
    }

    /// An optional flag without a default.
    const fn optional(name: &'static str, value: &'static str, help: &'static str) -> Flag {
        Flag { name, value, help, required: false, default: None, values: &[] }
    }

    /// A flag taking one of `values`; `default` when absent, required without one.
    const fn choice(
        name: &'static str,
        value: &'static str,
        help: &'static str,
        values: &'static [&'static str],
        default: Option<&'static str>,
    ) -> Flag {
        Flag { name, value, help, required: default.is_none(), default, values }
    }
}

impl Entry {
    /// The flag of this name (without the dashes), if the operator has it.
    ///
    /// ```
    /// let e = blockshuffle::catalog::entry("torch", "pixel-shuffle").unwrap();
    /// assert_eq!(e.flag("upscale-factor").map(|f| (f.value, f.required)), Some(("R", true)));
    /// assert!(e.flag("block-size").is_none());
    /// ```
    pub fn flag(&self, name: &str) -> Option<&'static Flag> {
        self.flags.iter().find(|f| f.name == name)
    }

    /// The flags as a synopsis: `--block-size B [--data-format NHWC|NCHW|NCHW_VECT_C]`.
    ///
    /// ```
    /// let e = blockshuffle::catalog::entry("onnx", "depth-to-space").unwrap();
    /// assert_eq!(e.synopsis(), "--blocksize B [--mode DCR|CRD]");
    /// ```
    pub fn synopsis(&self) -> String {
        let words: Vec<String> = self
            .flags
            .iter()
            .map(|f| {
                let value = if f.values.is_empty() { f.value.to_string() } else { f.values.join("|") };
                if f.required {
                    format!("--{} {value}", f.name)
                } else {
                    format!("[--{} {value}]", f.name)
                }
            })
            .collect();
        words.join(" ")
    }
}

const BLOCK_SIZE: Flag = Flag::required("block-size", "B", "The block's side");
const TF_FORMAT: Flag = Flag::choice(
    "data-format",
    "FORMAT",
    "The input's layout (NCHW_VECT_C: int8 x 4 in a last dim of 4)",
    &["NHWC", "NCHW", "NCHW_VECT_C"],
    Some("NHWC"),
);
const OV_MODE: Flag = Flag::choice(
    "mode",
    "MODE",
    "With blocks_first the block offsets are the channel's high part, with depth_first its low part",
    &["blocks_first", "depth_first"],
    None,
);
const OV_BLOCK_SHAPE: Flag = Flag::required("block-shape", "B0,..,BN-1", "The block of every dim, the batch's 1");
const BLOCKSIZE: Flag = Flag::required("blocksize", "B", "The block's side");

/// Every operator, in the order `blockshuffle list` prints them.
pub const CATALOG: &[Entry] = &[
    Entry {
        framework: "tf",
        op: "space-to-batch-nd",
        name: "tf space-to-batch-nd",
        framework_name: "SpaceToBatchND",
        flags: &[
            Flag::required("block-shape", "B1,..,BM", "The block of each spatial dim 1..M"),
            Flag::required("paddings", "p1s,p1e,..,pMs,pMe", "Zero padding (start,end) of each spatial dim, flattened"),
        ],
        summary: "pad spatial dims 1..M and move blocks into the batch; dims after them are carried along",
        example: "--block-shape 2,2 --paddings 0,0,0,0",
    },
    Entry {
        framework: "tf",
        op: "batch-to-space-nd",
        name: "tf batch-to-space-nd",
        framework_name: "BatchToSpaceND",
        flags: &[
            Flag::required("block-shape", "B1,..,BM", "The block of each spatial dim 1..M"),
            Flag::required("crops", "c1s,c1e,..,cMs,cMe", "Crop (start,end) of each spatial dim, flattened"),
        ],
        summary: "move batch blocks back into spatial dims 1..M, then crop",
        example: "--block-shape 2,2 --crops 0,0,0,0",
    },
    Entry {
        framework: "tf",
        op: "space-to-batch",
        name: "tf space-to-batch",
        framework_name: "SpaceToBatch (v1)",
        flags: &[
            BLOCK_SIZE,
            Flag::required("paddings", "top,bottom,left,right", "Zero padding of the height and the width"),
        ],
        summary: "4-D NHWC space-to-batch with a square block",
        example: "--block-size 2 --paddings 0,0,0,0",
    },
    Entry {
        framework: "tf",
        op: "batch-to-space",
        name: "tf batch-to-space",
        framework_name: "BatchToSpace (v1)",
        flags: &[BLOCK_SIZE, Flag::required("crops", "top,bottom,left,right", "Crop of the height and the width")],
        summary: "4-D NHWC batch-to-space with a square block",
        example: "--block-size 2 --crops 0,0,0,0",
    },
    Entry {
        framework: "tf",
        op: "space-to-depth",
        name: "tf space-to-depth",
        framework_name: "SpaceToDepth",
        flags: &[BLOCK_SIZE, TF_FORMAT],
        summary: "move block x block spatial blocks into the channels (blocks first); B >= 2",
        example: "--block-size 2 --data-format NHWC",
    },
    Entry {
        framework: "tf",
        op: "depth-to-space",
        name: "tf depth-to-space",
        framework_name: "DepthToSpace",
        flags: &[BLOCK_SIZE, TF_FORMAT],
        summary: "inverse of space-to-depth; B >= 2",
        example: "--block-size 2",
    },
    Entry {
        framework: "ov",
        op: "space-to-batch",
        name: "ov space-to-batch",
        framework_name: "SpaceToBatch-2",
        flags: &[
            OV_BLOCK_SHAPE,
            Flag::required("pads-begin", "..", "Zero padding at the start of every dim"),
            Flag::required("pads-end", "..", "Zero padding at the end of every dim"),
        ],
        summary: "pad and block every non-batch dim into the batch (B0 = 1, batch pads 0)",
        example: "--block-shape 1,2,2 --pads-begin 0,0,0 --pads-end 0,0,0",
    },
    Entry {
        framework: "ov",
        op: "batch-to-space",
        name: "ov batch-to-space",
        framework_name: "BatchToSpace-2",
        flags: &[
            OV_BLOCK_SHAPE,
            Flag::required("crops-begin", "..", "Crop at the start of every dim"),
            Flag::required("crops-end", "..", "Crop at the end of every dim"),
        ],
        summary: "inverse of space-to-batch, cropping every non-batch dim",
        example: "--block-shape 1,2,2 --crops-begin 0,0,0 --crops-end 0,0,0",
    },
    Entry {
        framework: "ov",
        op: "space-to-depth",
        name: "ov space-to-depth",
        framework_name: "SpaceToDepth-1",
        flags: &[BLOCK_SIZE, OV_MODE],
        summary: "[N, C, D1..DK] to [N, C*B^K, D1/B..DK/B]",
        example: "--block-size 2 --mode blocks_first",
    },
    Entry {
        framework: "ov",
        op: "depth-to-space",
        name: "ov depth-to-space",
        framework_name: "DepthToSpace-1",
        flags: &[BLOCK_SIZE, OV_MODE],
        summary: "[N, C, D1..DK] to [N, C/B^K, D1*B..DK*B]",
        example: "--block-size 2 --mode depth_first",
    },
    Entry {
        framework: "onnx",
        op: "space-to-depth",
        name: "onnx space-to-depth",
        framework_name: "SpaceToDepth-13",
        flags: &[BLOCKSIZE],
        summary: "[N, C, H, W] to [N, C*B*B, H/B, W/B] (DCR order)",
        example: "--blocksize 2",
    },
    Entry {
        framework: "onnx",
        op: "depth-to-space",
        name: "onnx depth-to-space",
        framework_name: "DepthToSpace-13",
        flags: &[
            BLOCKSIZE,
            Flag::choice(
                "mode",
                "MODE",
                "DCR: depth-column-row (blocks first), CRD: column-row-depth",
                &["DCR", "CRD"],
                Some("DCR"),
            ),
        ],
        summary: "[N, C, H, W] to [N, C/(B*B), H*B, W*B]; mode DCR (default) or CRD",
        example: "--blocksize 2 --mode CRD",
    },
    Entry {
        framework: "torch",
        op: "pixel-shuffle",
        name: "torch pixel-shuffle",
        framework_name: "pixel_shuffle",
        flags: &[Flag::required("upscale-factor", "R", "The factor that multiplies the height and the width")],
        summary: "[*, C*R*R, H, W] to [*, C, H*R, W*R] (CRD order)",
        example: "--upscale-factor 2",
    },
    Entry {
        framework: "torch",
        op: "pixel-unshuffle",
        name: "torch pixel-unshuffle",
        framework_name: "pixel_unshuffle",
        flags: &[Flag::required("downscale-factor", "R", "The factor that divides the height and the width")],
        summary: "[*, C, H, W] to [*, C*R*R, H/R, W/R]",
        example: "--downscale-factor 2",
    },
    Entry {
        framework: "numpy",
        op: "transpose",
        name: "numpy transpose",
        framework_name: "np.transpose",
        flags: &[Flag::optional(
            "axes",
            "A0,A1,..",
            "Output axis i is input axis A_i (negative from the end); absent: the axes reversed",
        )],
        summary: "permute the axes: output axis i is input axis A_i (negative from the end); no --axes reverses them",
        example: "--axes 0,2,1",
    },
    Entry {
        framework: "einops",
        op: "rearrange",
        name: "einops rearrange",
        framework_name: "einops.rearrange",
        flags: &[
            Flag::required("pattern", "PATTERN", "The einops pattern, one argument ('b (h p) w -> b h (w p)')"),
            Flag::optional("sizes", "NAME=V,..", "The lengths of axes the pattern cannot infer"),
        ],
        summary: "split axes into named ones, permute, merge, as the pattern says (einops 0.8)",
        example: "--pattern 'b (h p1) (w p2) c -> b h w (p1 p2 c)' --sizes p1=2,p2=2",
    },
];

/// Looks up a catalogue entry.
pub fn entry(framework: &str, op: &str) -> Option<&'static Entry> {
    CATALOG.iter().find(|e| e.framework == framework && e.op == op)
}

/// Any operator of the catalogue with owned parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum OpSpec {
    TfSpaceToBatchNd { block_shape: Vec<i64>, paddings: Vec<[i64; 2]> },
    TfBatchToSpaceNd { block_shape: Vec<i64>, crops: Vec<[i64; 2]> },
    TfSpaceToBatch(tf::SpaceToBatch),
    TfBatchToSpace(tf::BatchToSpace),
    TfSpaceToDepth(tf::SpaceToDepth),
    TfDepthToSpace(tf::DepthToSpace),
    OvSpaceToBatch { block_shape: Vec<i64>, pads_begin: Vec<i64>, pads_end: Vec<i64> },
    OvBatchToSpace { block_shape: Vec<i64>, crops_begin: Vec<i64>, crops_end: Vec<i64> },
    OvSpaceToDepth(openvino::SpaceToDepth),
    OvDepthToSpace(openvino::DepthToSpace),
    OnnxSpaceToDepth(onnx::SpaceToDepth),
    OnnxDepthToSpace(onnx::DepthToSpace),
    TorchPixelShuffle(torch::PixelShuffle),
    TorchPixelUnshuffle(torch::PixelUnshuffle),
    NumpyTranspose(numpy::Transpose),
    EinopsRearrange(einops::Rearrange),
}

/// Flags given on a command line: `--name value` or `--name=value`.
struct Flags<'a> {
    entry: &'static Entry,
    op: &'static str,
    given: Vec<(&'static str, &'a str)>,
}

impl<'a> Flags<'a> {
    fn parse<S: AsRef<str>>(entry: &'static Entry, args: &'a [S]) -> Result<Self> {
        let op = entry.name;
        let mut given: Vec<(&str, &str)> = Vec::new();
        let mut it = args.iter().map(|s| s.as_ref());
        while let Some(arg) = it.next() {
            let Some(body) = arg.strip_prefix("--") else {
                return Err(flag_error(op, arg, "is not a flag (flags are --name value)"));
            };
            let (name, value) = match body.split_once('=') {
                Some((n, v)) => (n, v),
                None => (body, it.next().ok_or_else(|| flag_error(op, arg, "needs a value"))?),
            };
            let Some(canonical) = entry.flag(name).map(|f| f.name) else {
                return Err(Error::Flag {
                    op,
                    flag: format!("--{name}"),
                    problem: format!("is not a flag of this operator (it takes {})", known_list(entry.flags)),
                });
            };
            if given.iter().any(|(n, _)| *n == canonical) {
                return Err(flag_error(op, arg, "is given twice"));
            }
            given.push((canonical, value));
        }
        Ok(Flags { entry, op, given })
    }

    fn get(&self, name: &str) -> Option<&'a str> {
        self.given.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }

    fn required(&self, name: &'static str) -> Result<&'a str> {
        self.get(name).ok_or_else(|| flag_error(self.op, &format!("--{name}"), "is required"))
    }

    fn int(&self, name: &'static str) -> Result<i64> {
        let v = self.required(name)?;
        parse_int(self.op, name, v)
    }

    fn list(&self, name: &'static str) -> Result<Vec<i64>> {
        let v = self.required(name)?;
        if v.is_empty() {
            return Ok(Vec::new());
        }
        v.split(',').map(|item| parse_int(self.op, name, item)).collect()
    }

    fn pairs(&self, name: &'static str) -> Result<Vec<[i64; 2]>> {
        let flat = self.list(name)?;
        if flat.len() % 2 != 0 {
            return Err(flag_error(
                self.op,
                &format!("--{name}"),
                &format!("has {} values; it needs start,end pairs (an even count)", flat.len()),
            ));
        }
        Ok(flat.chunks(2).map(|c| [c[0], c[1]]).collect())
    }

    fn four(&self, name: &'static str) -> Result<[[i64; 2]; 2]> {
        let flat = self.list(name)?;
        if flat.len() != 4 {
            return Err(flag_error(
                self.op,
                &format!("--{name}"),
                &format!("has {} values but needs 4 (top,bottom,left,right)", flat.len()),
            ));
        }
        Ok([[flat[0], flat[1]], [flat[2], flat[3]]])
    }

    /// `NAME=V,NAME=V,...` (absent or empty: none).
    fn sizes(&self, name: &'static str) -> Result<Vec<(&'a str, usize)>> {
        let Some(v) = self.get(name).filter(|v| !v.is_empty()) else { return Ok(Vec::new()) };
        v.split(',')
            .map(|item| {
                let bad = |problem: String| flag_error(self.op, &format!("--{name}"), &problem);
                let (n, d) = item.split_once('=').ok_or_else(|| bad(format!("entry {item:?} is not NAME=LENGTH")))?;
                let d = d.trim();
                let length = d.parse::<usize>().map_err(|_| {
                    bad(format!("length {d:?} of {n:?} is not a whole number (a length >= 0 that fits in memory)"))
                })?;
                Ok((n.trim(), length))
            })
            .collect()
    }

    /// A word-valued flag, or its catalogue default when absent.
    fn parsed<T: std::str::FromStr<Err = Error>>(&self, name: &'static str) -> Result<T> {
        let default = self.entry.flag(name).and_then(|f| f.default);
        let Some(v) = self.get(name).or(default) else {
            return Err(flag_error(self.op, &format!("--{name}"), "is required"));
        };
        v.parse().map_err(|e| match e {
            Error::UnknownValue { param, value, allowed, .. } => {
                Error::UnknownValue { op: self.op, param, value, allowed }
            }
            other => other,
        })
    }
}

fn known_list(known: &[Flag]) -> String {
    known.iter().map(|k| format!("--{}", k.name)).collect::<Vec<_>>().join(", ")
}

fn flag_error(op: &'static str, flag: &str, problem: &str) -> Error {
    Error::Flag { op, flag: flag.to_string(), problem: problem.to_string() }
}

fn parse_int(op: &'static str, name: &'static str, v: &str) -> Result<i64> {
    v.trim().parse::<i64>().map_err(|_| Error::Flag {
        op,
        flag: format!("--{name}"),
        problem: format!("value {v:?} is not an integer in the 64-bit range"),
    })
}

impl OpSpec {
    /// Parses an operator from its command-line framework, name and flags.
    ///
    /// ```
    /// use blockshuffle::catalog::OpSpec;
    /// let spec = OpSpec::parse("onnx", "depth-to-space", &["--blocksize", "2"])?;
    /// assert_eq!(spec, OpSpec::OnnxDepthToSpace(blockshuffle::onnx::DepthToSpace::dcr(2)));
    /// assert!(OpSpec::parse("onnx", "depth-to-space", &["--blocksize", "x"]).is_err());
    /// # Ok::<(), blockshuffle::Error>(())
    /// ```
    pub fn parse<S: AsRef<str>>(framework: &str, op: &str, args: &[S]) -> Result<Self> {
        let Some(e) = entry(framework, op) else {
            return Err(Error::UnknownOperator { framework: framework.to_string(), op: op.to_string() });
        };
        let f = Flags::parse(e, args)?;
        Ok(match (framework, op) {
            ("tf", "space-to-batch-nd") => {
                OpSpec::TfSpaceToBatchNd { block_shape: f.list("block-shape")?, paddings: f.pairs("paddings")? }
            }
            ("tf", "batch-to-space-nd") => {
                OpSpec::TfBatchToSpaceNd { block_shape: f.list("block-shape")?, crops: f.pairs("crops")? }
            }
            ("tf", "space-to-batch") => {
                OpSpec::TfSpaceToBatch(tf::SpaceToBatch::new(f.int("block-size")?, f.four("paddings")?))
            }
            ("tf", "batch-to-space") => {
                OpSpec::TfBatchToSpace(tf::BatchToSpace::new(f.int("block-size")?, f.four("crops")?))
            }
            ("tf", "space-to-depth") => {
                OpSpec::TfSpaceToDepth(tf::SpaceToDepth::new(f.int("block-size")?, f.parsed("data-format")?))
            }
            ("tf", "depth-to-space") => {
                OpSpec::TfDepthToSpace(tf::DepthToSpace::new(f.int("block-size")?, f.parsed("data-format")?))
            }
            ("ov", "space-to-batch") => OpSpec::OvSpaceToBatch {
                block_shape: f.list("block-shape")?,
                pads_begin: f.list("pads-begin")?,
                pads_end: f.list("pads-end")?,
            },
            ("ov", "batch-to-space") => OpSpec::OvBatchToSpace {
                block_shape: f.list("block-shape")?,
                crops_begin: f.list("crops-begin")?,
                crops_end: f.list("crops-end")?,
            },
            ("ov", "space-to-depth") => {
                OpSpec::OvSpaceToDepth(openvino::SpaceToDepth::new(f.int("block-size")?, f.parsed("mode")?))
            }
            ("ov", "depth-to-space") => {
                OpSpec::OvDepthToSpace(openvino::DepthToSpace::new(f.int("block-size")?, f.parsed("mode")?))
            }
            ("onnx", "space-to-depth") => OpSpec::OnnxSpaceToDepth(onnx::SpaceToDepth::new(f.int("blocksize")?)),
            ("onnx", "depth-to-space") => {
                OpSpec::OnnxDepthToSpace(onnx::DepthToSpace::new(f.int("blocksize")?, f.parsed("mode")?))
            }
            ("torch", "pixel-shuffle") => OpSpec::TorchPixelShuffle(torch::PixelShuffle::new(f.int("upscale-factor")?)),
            ("torch", "pixel-unshuffle") => {
                OpSpec::TorchPixelUnshuffle(torch::PixelUnshuffle::new(f.int("downscale-factor")?))
            }
            ("numpy", "transpose") => OpSpec::NumpyTranspose(match f.get("axes") {
                Some(_) => numpy::Transpose::new(&f.list("axes")?),
                None => numpy::Transpose::reversed(),
            }),
            ("einops", "rearrange") => {
                OpSpec::EinopsRearrange(einops::Rearrange::new(f.required("pattern")?, &f.sizes("sizes")?)?)
            }
            _ => unreachable!("every catalogue entry is parsed above"),
        })
    }

    fn with<R>(&self, f: impl FnOnce(&dyn Operator) -> R) -> R {
        match self {
            OpSpec::TfSpaceToBatchNd { block_shape, paddings } => f(&tf::SpaceToBatchNd::new(block_shape, paddings)),
            OpSpec::TfBatchToSpaceNd { block_shape, crops } => f(&tf::BatchToSpaceNd::new(block_shape, crops)),
            OpSpec::TfSpaceToBatch(o) => f(o),
            OpSpec::TfBatchToSpace(o) => f(o),
            OpSpec::TfSpaceToDepth(o) => f(o),
            OpSpec::TfDepthToSpace(o) => f(o),
            OpSpec::OvSpaceToBatch { block_shape, pads_begin, pads_end } => {
                f(&openvino::SpaceToBatch::new(block_shape, pads_begin, pads_end))
            }
            OpSpec::OvBatchToSpace { block_shape, crops_begin, crops_end } => {
                f(&openvino::BatchToSpace::new(block_shape, crops_begin, crops_end))
            }
            OpSpec::OvSpaceToDepth(o) => f(o),
            OpSpec::OvDepthToSpace(o) => f(o),
            OpSpec::OnnxSpaceToDepth(o) => f(o),
            OpSpec::OnnxDepthToSpace(o) => f(o),
            OpSpec::TorchPixelShuffle(o) => f(o),
            OpSpec::TorchPixelUnshuffle(o) => f(o),
            OpSpec::NumpyTranspose(o) => f(o),
            OpSpec::EinopsRearrange(o) => f(o),
        }
    }
}

impl Operator for OpSpec {
    fn name(&self) -> &'static str {
        self.with(|o| o.name())
    }

    fn plan(&self, input_shape: &[usize]) -> Result<Plan> {
        self.with(|o| o.plan(input_shape))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An example's words, a quoted one ('b h -> h b') as one.
    pub(crate) fn split_example(example: &str) -> Vec<String> {
        let mut words = Vec::new();
        for (i, part) in example.split('\'').enumerate() {
            if i % 2 == 1 {
                words.push(part.to_string());
            } else {
                words.extend(part.split_whitespace().map(str::to_string));
            }
        }
        words
    }

    #[test]
    fn every_entry_parses_its_example_and_names_itself() {
        for e in CATALOG {
            let args = split_example(e.example);
            let spec = OpSpec::parse(e.framework, e.op, &args).unwrap();
            assert_eq!(spec.name(), format!("{} {}", e.framework, e.op));
            assert_eq!(e.name, spec.name());
        }
    }

    /// The example's words without `--name` and its value.
    fn without(words: &[String], name: &str) -> Vec<String> {
        let flag = format!("--{name}");
        let mut kept = Vec::new();
        let mut it = words.iter();
        while let Some(w) = it.next() {
            if *w == flag {
                it.next();
            } else {
                kept.push(w.clone());
            }
        }
        kept
    }

    /// Each flag's `required`, `default` and `values` say what parsing does.
    #[test]
    fn the_flags_describe_the_parser() {
        for e in CATALOG {
            let example = split_example(e.example);
            for f in e.flags {
                let rest = without(&example, f.name);
                let absent = OpSpec::parse(e.framework, e.op, &rest);
                if f.required {
                    assert_eq!(absent.unwrap_err().to_string(), format!("{}: --{} is required", e.name, f.name));
                } else if let Some(d) = f.default {
                    let given = [rest.clone(), vec![format!("--{}", f.name), d.to_string()]].concat();
                    assert_eq!(OpSpec::parse(e.framework, e.op, &given).unwrap(), absent.unwrap(), "{}", e.name);
                } else {
                    // Absent, it is no flag error (einops may still need the sizes for its pattern).
                    assert!(!matches!(absent, Err(Error::Flag { .. })), "{} --{}: {absent:?}", e.name, f.name);
                }
                for v in f.values {
                    let given = [rest.clone(), vec![format!("--{}", f.name), v.to_string()]].concat();
                    assert!(OpSpec::parse(e.framework, e.op, &given).is_ok(), "{} --{} {v}", e.name, f.name);
                }
                assert_eq!(f.required, f.default.is_none() && !["axes", "sizes"].contains(&f.name), "{}", f.name);
            }
        }
        let synopses: Vec<String> = CATALOG.iter().map(Entry::synopsis).collect();
        assert_eq!(synopses[0], "--block-shape B1,..,BM --paddings p1s,p1e,..,pMs,pMe");
        assert_eq!(synopses[4], "--block-size B [--data-format NHWC|NCHW|NCHW_VECT_C]");
        assert_eq!(synopses[8], "--block-size B --mode blocks_first|depth_first");
        assert_eq!(synopses[14], "[--axes A0,A1,..]");
        assert_eq!(synopses[15], "--pattern PATTERN [--sizes NAME=V,..]");
    }

    #[test]
    fn flag_errors_name_the_flag() {
        let err = OpSpec::parse("tf", "space-to-batch-nd", &["--block-shape", "2"]).unwrap_err();
        assert_eq!(err.to_string(), "tf space-to-batch-nd: --paddings is required");
        let err = OpSpec::parse("tf", "space-to-batch-nd", &["--block-shape", "2", "--paddings", "1"]).unwrap_err();
        assert!(err.to_string().contains("--paddings has 1 values"), "{err}");
        let err = OpSpec::parse("torch", "pixel-shuffle", &["--upscale-factor", "99999999999999999999"]).unwrap_err();
        assert!(err.to_string().contains("not an integer"), "{err}");
        let err = OpSpec::parse("torch", "pixel-shuffle", &["--block-size", "2"]).unwrap_err();
        assert!(err.to_string().contains("--block-size is not a flag of this operator"), "{err}");
        let err = OpSpec::parse("ov", "space-to-depth", &["--block-size", "2", "--mode", "rows"]).unwrap_err();
        assert_eq!(
            err,
            Error::UnknownValue {
                op: "ov space-to-depth",
                param: "mode",
                value: "rows".into(),
                allowed: "blocks_first, depth_first"
            }
        );
        assert!(matches!(OpSpec::parse("mx", "pixel-shuffle", &[] as &[&str]), Err(Error::UnknownOperator { .. })));
    }

    #[test]
    fn negative_values_are_values() {
        let spec = OpSpec::parse("tf", "space-to-batch-nd", &["--block-shape", "2", "--paddings", "-1,0"]).unwrap();
        assert_eq!(spec, OpSpec::TfSpaceToBatchNd { block_shape: vec![2], paddings: vec![[-1, 0]] });
        let spec = OpSpec::parse("torch", "pixel-shuffle", &["--upscale-factor=-2"]).unwrap();
        assert_eq!(spec, OpSpec::TorchPixelShuffle(torch::PixelShuffle::new(-2)));
    }
}
