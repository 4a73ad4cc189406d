//! Why these operators exist: a dilated (atrous) convolution computed as
//! space-to-batch, an ordinary convolution, and batch-to-space, checked equal
//! to the direct dilated convolution.
//!
//! With dilation `r`, the taps of a dilated kernel only ever meet input
//! positions that agree modulo `r`. Space-to-batch with block `r x r` gathers
//! each such residue class into its own batch entry, where the dilated kernel
//! becomes an ordinary dense one; batch-to-space puts the results back.
//!
//! Run with `cargo run --example atrous`.

use blockshuffle::{tf, Operator};

/// NHWC tensor of f64.
struct Tensor {
    data: Vec<f64>,
    shape: [usize; 4],
}

impl Tensor {
    fn at(&self, n: usize, y: usize, x: usize, c: usize) -> f64 {
        let [_, h, w, ch] = self.shape;
        self.data[((n * h + y) * w + x) * ch + c]
    }
}

/// VALID convolution with dilation `rate`: kernel `[k, k, c_in, c_out]`.
fn conv2d(input: &Tensor, kernel: &[f64], k: usize, c_out: usize, rate: usize) -> Tensor {
    let [n, h, w, c_in] = input.shape;
    let span = (k - 1) * rate;
    let (oh, ow) = (h - span, w - span);
    let mut data = Vec::with_capacity(n * oh * ow * c_out);
    for b in 0..n {
        for y in 0..oh {
            for x in 0..ow {
                for co in 0..c_out {
                    let mut acc = 0.0;
                    for i in 0..k {
                        for j in 0..k {
                            for ci in 0..c_in {
                                acc += input.at(b, y + i * rate, x + j * rate, ci)
                                    * kernel[((i * k + j) * c_in + ci) * c_out + co];
                            }
                        }
                    }
                    data.push(acc);
                }
            }
        }
    }
    Tensor { data, shape: [n, oh, ow, c_out] }
}

pub fn main() -> Result<(), blockshuffle::Error> {
    let (n, h, w, c_in, c_out, k, rate) = (2, 23, 18, 3, 4, 3, 2);
    // Deterministic pseudo-random input and kernel.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % 2001) as f64 / 1000.0 - 1.0
    };
    let input = Tensor { data: (0..n * h * w * c_in).map(|_| next()).collect(), shape: [n, h, w, c_in] };
    let kernel: Vec<f64> = (0..k * k * c_in * c_out).map(|_| next()).collect();

    // 1. Direct dilated convolution.
    let direct = conv2d(&input, &kernel, k, c_out, rate);

    // 2. Space-to-batch: pad H and W at the end up to multiples of the rate.
    let (pad_h, pad_w) = ((rate - h % rate) % rate, (rate - w % rate) % rate);
    let block = [rate as i64, rate as i64];
    let pads = [[0, pad_h as i64], [0, pad_w as i64]];
    let (batched, shape) = tf::SpaceToBatchNd::new(&block, &pads).apply(&input.data, &input.shape)?;
    let batched = Tensor { data: batched, shape: [shape[0], shape[1], shape[2], shape[3]] };

    // 3. An ordinary (rate 1) convolution on every residue class at once.
    let conv = conv2d(&batched, &kernel, k, c_out, 1);

    // 4. Batch-to-space, cropping what the padding added.
    let (output, out_shape) = tf::BatchToSpaceNd::new(&block, &pads).apply(&conv.data, &conv.shape)?;

    println!("input {:?}, kernel {k}x{k}x{c_in}x{c_out}, dilation {rate}", input.shape);
    println!(
        "space-to-batch -> {:?}, conv -> {:?}, batch-to-space -> {:?}",
        batched.shape,
        conv.shape,
        out_shape.as_slice()
    );
    assert_eq!(out_shape.as_slice(), &direct.shape);
    // The same products summed in the same order: bit-identical.
    assert!(output.iter().zip(&direct.data).all(|(a, b)| a.to_bits() == b.to_bits()));
    println!("equal to the direct dilated convolution, bit for bit ({} values)", output.len());
    Ok(())
}
