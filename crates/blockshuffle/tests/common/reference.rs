//! Naive references for the operators, written straight from the framework
//! documents with plain index arithmetic (independent of the engine). Shared
//! by the property tests and the fuzz targets.

#![allow(dead_code)]

/// Row-major multi-index of flat index `f` in `shape`.
pub fn unravel(mut f: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        idx[d] = f % shape[d];
        f /= shape[d];
    }
    idx
}

pub fn ravel(idx: &[usize], shape: &[usize]) -> usize {
    idx.iter().zip(shape).fold(0, |acc, (&i, &d)| acc * d + i)
}

/// Builds the reference output: `source(out_index)` names the input index
/// (or `None` for a zero-padded position).
pub fn reference(
    input: &[u8],
    in_shape: &[usize],
    out_shape: &[usize],
    elem: usize,
    source: impl Fn(&[usize]) -> Option<Vec<usize>>,
) -> Vec<u8> {
    let n: usize = out_shape.iter().product();
    let mut out = vec![0u8; n * elem];
    for f in 0..n {
        if let Some(src) = source(&unravel(f, out_shape)) {
            let s = ravel(&src, in_shape) * elem;
            out[f * elem..(f + 1) * elem].copy_from_slice(&input[s..s + elem]);
        }
    }
    out
}

// TensorFlow SpaceToBatchND, straight from its definition.
pub fn ref_space_to_batch(
    input: &[u8],
    shape: &[usize],
    elem: usize,
    block: &[usize],
    pads: &[[usize; 2]],
) -> (Vec<u8>, Vec<usize>) {
    let m = block.len();
    let batch = shape[0];
    let mut out_shape = vec![batch * block.iter().product::<usize>()];
    for i in 0..m {
        out_shape.push((shape[i + 1] + pads[i][0] + pads[i][1]) / block[i]);
    }
    out_shape.extend_from_slice(&shape[m + 1..]);
    let out = reference(input, shape, &out_shape, elem, |o| {
        let k = unravel(o[0] / batch, block);
        let mut src = vec![o[0] % batch];
        for i in 0..m {
            let p = o[i + 1] * block[i] + k[i];
            if p < pads[i][0] || p >= pads[i][0] + shape[i + 1] {
                return None;
            }
            src.push(p - pads[i][0]);
        }
        src.extend_from_slice(&o[m + 1..]);
        Some(src)
    });
    (out, out_shape)
}

/// [`ref_space_to_batch`] of typed elements, padded with `T::default()`
/// (the typed API's padding): the byte reference moves each element's
/// label (its index + 1; padding reads 0).
pub fn ref_space_to_batch_typed<T: Copy + Default>(
    input: &[T],
    shape: &[usize],
    block: &[usize],
    pads: &[[usize; 2]],
) -> Vec<T> {
    let labels: Vec<u8> = (1..=input.len() as u32).flat_map(|i| i.to_le_bytes()).collect();
    let (moved, _) = ref_space_to_batch(&labels, shape, 4, block, pads);
    moved
        .chunks(4)
        .map(|c| match u32::from_le_bytes(c.try_into().unwrap()) {
            0 => T::default(),
            i => input[i as usize - 1],
        })
        .collect()
}

// TensorFlow BatchToSpaceND.
pub fn ref_batch_to_space(
    input: &[u8],
    shape: &[usize],
    elem: usize,
    block: &[usize],
    crops: &[[usize; 2]],
) -> (Vec<u8>, Vec<usize>) {
    let m = block.len();
    let prod: usize = block.iter().product();
    let batch = shape[0] / prod;
    let mut out_shape = vec![batch];
    for i in 0..m {
        out_shape.push(shape[i + 1] * block[i] - crops[i][0] - crops[i][1]);
    }
    out_shape.extend_from_slice(&shape[m + 1..]);
    let out = reference(input, shape, &out_shape, elem, |o| {
        let mut k = Vec::new();
        let mut src = vec![0];
        for i in 0..m {
            let p = o[i + 1] + crops[i][0];
            k.push(p % block[i]);
            src.push(p / block[i]);
        }
        src[0] = ravel(&k, block) * batch + o[0];
        src.extend_from_slice(&o[m + 1..]);
        Some(src)
    });
    (out, out_shape)
}

/// Channels-first depth-to-space over `[lead.., C, S_1..S_K]`, with the depth
/// index `(b.., c)` (blocks first) or `(c, b..)` (depth first).
pub fn ref_depth_to_space_cf(
    input: &[u8],
    shape: &[usize],
    elem: usize,
    lead: usize,
    b: usize,
    blocks_first: bool,
) -> (Vec<u8>, Vec<usize>) {
    let k = shape.len() - lead - 1;
    let bk = b.pow(k as u32);
    let c_out = shape[lead] / bk;
    let mut out_shape = shape[..lead].to_vec();
    out_shape.push(c_out);
    out_shape.extend(shape[lead + 1..].iter().map(|d| d * b));
    let out = reference(input, shape, &out_shape, elem, |o| {
        let c = o[lead];
        let offs: Vec<usize> = (0..k).map(|i| o[lead + 1 + i] % b).collect();
        let boff = ravel(&offs, &vec![b; k]);
        let depth = if blocks_first { boff * c_out + c } else { c * bk + boff };
        let mut src = o[..lead].to_vec();
        src.push(depth);
        src.extend((0..k).map(|i| o[lead + 1 + i] / b));
        Some(src)
    });
    (out, out_shape)
}

/// TensorFlow NHWC depth-to-space: depth `(by * b + bx) * C' + c`.
pub fn ref_depth_to_space_nhwc(input: &[u8], shape: &[usize], elem: usize, b: usize) -> (Vec<u8>, Vec<usize>) {
    let c_out = shape[3] / (b * b);
    let out_shape = vec![shape[0], shape[1] * b, shape[2] * b, c_out];
    let out = reference(input, shape, &out_shape, elem, |o| {
        let depth = ((o[1] % b) * b + o[2] % b) * c_out + o[3];
        Some(vec![o[0], o[1] / b, o[2] / b, depth])
    });
    (out, out_shape)
}

/// Byte offset of element 0 of a strided view whose buffer begins at the
/// view's lowest-addressed element (strides in elements, any sign).
pub fn strided_base(shape: &[usize], strides: &[isize], elem: usize) -> usize {
    if shape.contains(&0) {
        return 0;
    }
    shape.iter().zip(strides).map(|(&d, &s)| if s < 0 { (d - 1) * s.unsigned_abs() } else { 0 }).sum::<usize>() * elem
}

/// The row-major copy of a strided view (see [`strided_base`]).
pub fn gather_strided(buf: &[u8], shape: &[usize], strides: &[isize], elem: usize) -> Vec<u8> {
    let n: usize = shape.iter().product();
    let base = strided_base(shape, strides, elem) as isize;
    let mut out = Vec::with_capacity(n * elem);
    for f in 0..n {
        let idx = unravel(f, shape);
        let off = base + idx.iter().zip(strides).map(|(&i, &s)| i as isize * s).sum::<isize>() * elem as isize;
        out.extend_from_slice(&buf[off as usize..off as usize + elem]);
    }
    out
}

/// Bytes a strided view spans (see [`strided_base`]).
pub fn strided_span(shape: &[usize], strides: &[isize], elem: usize) -> usize {
    if shape.contains(&0) {
        return 0;
    }
    (shape.iter().zip(strides).map(|(&d, &s)| (d - 1) * s.unsigned_abs()).sum::<usize>() + 1) * elem
}

/// Space-to-depth is the inverse permutation: the reference inverts the
/// depth-to-space reference by scattering.
pub fn invert(d2s_out: &[u8], d2s_in_len: usize, elem: usize, d2s: impl Fn(&[u8]) -> Vec<u8>) -> Vec<u8> {
    // Label every element with its own index, run the reference, read off where each went.
    let n = d2s_in_len;
    let labels: Vec<u8> = (0..n).flat_map(|i| (i as u64).to_le_bytes()).collect();
    let moved = d2s(&labels);
    let mut out = vec![0u8; n * elem];
    for (pos, chunk) in moved.chunks(8).enumerate() {
        let from = u64::from_le_bytes(chunk.try_into().unwrap()) as usize;
        // d2s moved input element `from` to output position `pos`; space-to-depth moves it back.
        out[from * elem..(from + 1) * elem].copy_from_slice(&d2s_out[pos * elem..(pos + 1) * elem]);
    }
    out
}
