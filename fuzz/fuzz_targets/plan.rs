//! Plan construction and shape inference from arbitrary parameters and
//! shapes, for every operator (numpy transpose's axes, einops rearrange's
//! patterns and sizes among them): never a panic. Small accepted plans also run,
//! and their inverse must reproduce the output.

#![no_main]

use blockshuffle::{einops, numpy, onnx, openvino, tf, torch, DataFormat, Operator};
use libfuzzer_sys::fuzz_target;

/// Reads fuzz bytes as parameters, biased towards interesting values.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        let (&b, rest) = self.0.split_first().unwrap_or((&0, &[]));
        self.0 = rest;
        b
    }

    fn int(&mut self) -> i64 {
        match self.byte() % 8 {
            0 => i64::MAX,
            1 => i64::MIN,
            2 => -(self.byte() as i64),
            3 => 1 << (self.byte() % 63),
            4 => u32::MAX as i64 + self.byte() as i64,
            _ => (self.byte() % 6) as i64,
        }
    }

    fn dim(&mut self) -> usize {
        match self.byte() % 8 {
            0 => usize::MAX >> (self.byte() % 64),
            1 => 1 << (self.byte() % 40),
            _ => (self.byte() % 7) as usize,
        }
    }

    fn list(&mut self) -> Vec<i64> {
        let n = (self.byte() % 10) as usize;
        (0..n).map(|_| self.int()).collect()
    }

    /// An einops pattern: pieces of the pattern language and stray
    /// characters, or the rest of the bytes as text.
    fn pattern(&mut self) -> String {
        const PIECES: [&str; 16] = ["a", "b", "c", "(", ")", " ", "...", "1", "()", "->", "_x", "é", ".", "0", "…", "\t"];
        if self.byte() % 4 == 0 {
            let text = String::from_utf8_lossy(self.0).into_owned();
            self.0 = &[];
            return text;
        }
        let n = self.byte() % 24;
        (0..n).map(|_| PIECES[(self.byte() % 16) as usize]).collect()
    }
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let which = b.byte() % 16;
    let rank = (b.byte() % 9) as usize;
    let shape: Vec<usize> = (0..rank).map(|_| b.dim()).collect();
    let l1 = b.list();
    let l2 = b.list();
    let l3 = b.list();
    let pairs: Vec<[i64; 2]> = l2.chunks(2).map(|c| [c[0], *c.get(1).unwrap_or(&0)]).collect();
    let scalar = b.int();
    let formats = [DataFormat::Nhwc, DataFormat::Nchw, DataFormat::NchwVectC];
    let df = formats[(b.byte() % 3) as usize];
    let mode = if b.byte() % 2 == 0 { openvino::Mode::BlocksFirst } else { openvino::Mode::DepthFirst };
    let four = [[scalar.wrapping_sub(1), 0], [0, b.int()]];
    let sizes = [("a", b.dim()), ("b", b.dim()), ("c", b.dim()), ("_x", 2)];
    let given = &sizes[..(b.byte() % 5) as usize];
    let op: Box<dyn Operator> = match which {
        0 => Box::new(tf::SpaceToBatchNd::new(&l1, &pairs)),
        1 => Box::new(tf::BatchToSpaceNd::new(&l1, &pairs)),
        2 => Box::new(tf::SpaceToBatch::new(scalar, four)),
        3 => Box::new(tf::BatchToSpace::new(scalar, four)),
        4 => Box::new(tf::SpaceToDepth::new(scalar, df)),
        5 => Box::new(tf::DepthToSpace::new(scalar, df)),
        6 => Box::new(openvino::SpaceToBatch::new(&l1, &l2, &l3)),
        7 => Box::new(openvino::BatchToSpace::new(&l1, &l2, &l3)),
        8 => Box::new(openvino::SpaceToDepth::new(scalar, mode)),
        9 => Box::new(openvino::DepthToSpace::new(scalar, mode)),
        10 => Box::new(onnx::SpaceToDepth::new(scalar)),
        11 => Box::new(onnx::DepthToSpace::new(scalar, onnx::DepthToSpaceMode::Crd)),
        12 => Box::new(torch::PixelShuffle::new(scalar)),
        13 => Box::new(torch::PixelUnshuffle::new(scalar)),
        14 => Box::new(numpy::Transpose::new(&l1)),
        _ => match einops::Rearrange::new(&b.pattern(), given) {
            Ok(op) => Box::new(op),
            Err(e) => return assert!(e.to_string().starts_with("einops rearrange: ")),
        },
    };
    let Ok(plan) = op.plan(&shape) else { return };
    let out_len = plan.output_len();
    let in_len = plan.input_len();
    assert_eq!(op.output_shape(&shape).unwrap().as_slice(), plan.output_shape());
    if in_len > 1 << 12 || out_len > 1 << 12 {
        return;
    }
    let x: Vec<u16> = (0..in_len as u16).collect();
    let y = plan.run(&x).expect("a planned run succeeds");
    assert_eq!(y.len(), out_len);
    let back = plan.inverse().run(&y).expect("the inverse runs");
    assert_eq!(plan.run(&back).unwrap(), y);
});
