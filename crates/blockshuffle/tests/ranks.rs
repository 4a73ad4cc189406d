//! Plans of every rank around where a plan stops holding its axes inline
//! (8) and up to `MAX_RANK`: through numpy transpose, einops rearrange
//! (whose elementary axes outnumber the input's) and OpenVINO
//! space-to-batch, against the naive references, with their inverses and
//! clones.

use std::mem::MaybeUninit;

use blockshuffle::{einops, numpy, openvino, Operator, Plan, MAX_RANK};

mod common;
use common::bytes;
use common::reference::{ravel, ref_space_to_batch, reference};

/// The ranks on both sides of the inline capacity, and the largest.
const RANKS: [usize; 8] = [1, 7, 8, 9, 10, 16, 31, MAX_RANK];

/// A shape of `rank` dims: 2 on every third axis and 3 on the last (so
/// that axes past the inline ones have extents of their own), 1 elsewhere.
fn shape(rank: usize) -> Vec<usize> {
    (0..rank)
        .map(|i| {
            if i + 1 == rank {
                3
            } else if i % 3 == 0 {
                2
            } else {
                1
            }
        })
        .collect()
}

/// `plan` run, and run again from a clone and through its inverse.
fn check(plan: &Plan, input: &[u8], elem: usize, want: &[u8], want_shape: &[usize]) {
    assert_eq!(plan.output_shape(), want_shape);
    assert_eq!(plan.run_bytes(input, elem).unwrap(), want);
    assert_eq!(plan.clone().run_bytes(input, elem).unwrap(), want);
    assert_eq!(plan.inverse().run_bytes(want, elem).unwrap(), input, "inverse");
}

#[test]
fn transposes_of_every_rank_match_the_reference() {
    for rank in RANKS {
        let shape = shape(rank);
        let n: usize = shape.iter().product();
        for elem in [1, 4, 12] {
            let input = bytes(n * elem, 7);
            // Reversed, and rotated by one.
            for perm in [(0..rank).rev().collect::<Vec<_>>(), (0..rank).map(|i| (i + 1) % rank).collect()] {
                let axes: Vec<i64> = perm.iter().map(|&p| p as i64).collect();
                let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
                let want = reference(&input, &shape, &out_shape, elem, |o| {
                    let mut src = vec![0; rank];
                    for (j, &p) in perm.iter().enumerate() {
                        src[p] = o[j];
                    }
                    Some(src)
                });
                let plan = numpy::Transpose::new(&axes).plan(&shape).unwrap();
                check(&plan, &input, elem, &want, &out_shape);
            }
        }
    }
}

#[test]
fn rearranges_into_more_elementary_axes_than_the_inline_ones_match_the_reference() {
    // One input axis of 2^k values split into k axes of 2, reversed: the
    // bit reversal of the flat index.
    for k in [7, 8, 9, 10] {
        let names: Vec<String> = (0..k).map(|i| format!("a{i}")).collect();
        let pattern = format!("({}) -> {}", names.join(" "), names.iter().rev().cloned().collect::<Vec<_>>().join(" "));
        let sizes: Vec<(&str, usize)> = names.iter().map(|n| (n.as_str(), 2)).collect();
        let n = 1 << k;
        let input = bytes(n * 2, 7);
        let out_shape = vec![2; k];
        let want = reference(&input, &[n], &out_shape, 2, |o| {
            let bits: Vec<usize> = o.iter().rev().copied().collect();
            Some(vec![ravel(&bits, &vec![2; k])])
        });
        let plan = einops::Rearrange::new(&pattern, &sizes).unwrap().plan(&[n]).unwrap();
        assert_eq!(plan.input_shape(), &[n], "{pattern}");
        check(&plan, &input, 2, &want, &out_shape);
        // The input reversed in memory (a stride of -1), which the plan
        // splits across the k axes.
        let reversed: Vec<u8> = input.chunks(2).rev().flatten().copied().collect();
        let mut out = vec![MaybeUninit::<u8>::uninit(); n * 2];
        plan.run_bytes_strided_uninit(&reversed, &[-1], 2, &mut out).unwrap();
        // SAFETY: the successful run initialised every output byte.
        let got: Vec<u8> = out.iter().map(|b| unsafe { b.assume_init() }).collect();
        assert_eq!(got, want, "{pattern}, reversed input");
    }
}

#[test]
fn space_to_batch_of_every_rank_matches_the_reference() {
    for rank in RANKS.into_iter().filter(|&r| r >= 2) {
        let shape = shape(rank);
        let n: usize = shape.iter().product();
        // Blocks of 2 on axis 1 and, when there is one, the last, padded by
        // 1 before and 1 or 2 after (to an even size).
        let (mut blocks, mut begin, mut end) = (vec![1i64; rank], vec![0i64; rank], vec![0i64; rank]);
        for axis in [1, rank - 1] {
            blocks[axis] = 2;
            begin[axis] = 1;
            end[axis] = 1 + shape[axis] as i64 % 2;
        }
        let elem = 4;
        let input = bytes(n * elem, 7);
        let ublocks: Vec<usize> = blocks[1..].iter().map(|&b| b as usize).collect();
        let pads: Vec<[usize; 2]> = begin[1..].iter().zip(&end[1..]).map(|(&b, &e)| [b as usize, e as usize]).collect();
        let (want, out_shape) = ref_space_to_batch(&input, &shape, elem, &ublocks, &pads);
        let plan = openvino::SpaceToBatch::new(&blocks, &begin, &end).plan(&shape).unwrap();
        assert_eq!(plan.output_shape(), out_shape.as_slice());
        assert_eq!(plan.run_bytes(&input, elem).unwrap(), want, "rank {rank}");
        assert_eq!(plan.clone().run_bytes(&input, elem).unwrap(), want, "rank {rank}, clone");
        // Batch-to-space with the same crops takes the padding off again.
        assert_eq!(plan.inverse().run_bytes(&want, elem).unwrap(), input, "rank {rank}, inverse");
    }
}

/// Plans padded on many axes run on a thread with a small stack (musl's
/// default, 128 KiB): the executor goes a level of its recursion a loop,
/// and each level's frame must stay small. In a release build whose
/// recursion kept a kernel's 8 KiB stage in every frame, these overflowed
/// stacks of 128 and 256 KiB; `.ci/frames` runs this test in release. (A
/// debug build's frames are larger whatever is inlined, some 190 KiB
/// here without sanitizers: it runs on 1 MiB.) OpenVINO space-to-batch
/// of a tensor of extent 1 on `padded` axes, each padded by 1 before and
/// split by 2 (so that its elements land in the last batch), and
/// batch-to-space taking the padding off again.
#[test]
fn many_padded_axes_run_on_a_small_stack() {
    std::thread::Builder::new()
        .stack_size(if cfg!(debug_assertions) { 1 << 20 } else { 128 << 10 })
        .spawn(|| {
            for padded in [10, 20] {
                let rank = padded + 2;
                let mut shape = vec![1usize; rank];
                shape[rank - 1] = 3;
                let (mut blocks, mut begin) = (vec![1i64; rank], vec![0i64; rank]);
                for axis in 1..=padded {
                    blocks[axis] = 2;
                    begin[axis] = 1;
                }
                let end = vec![0i64; rank];
                let elem = 2;
                let input = bytes(3 * elem, 5);
                let ublocks: Vec<usize> = blocks[1..].iter().map(|&b| b as usize).collect();
                let pads: Vec<[usize; 2]> = begin[1..].iter().map(|&b| [b as usize, 0]).collect();
                let (want, out_shape) = ref_space_to_batch(&input, &shape, elem, &ublocks, &pads);
                // The input's 3 elements are the last batch's; the rest is padding.
                assert_eq!(out_shape[0], 1 << padded);
                assert_eq!(&want[want.len() - 3 * elem..], input.as_slice());
                assert!(want[..want.len() - 3 * elem].iter().all(|&b| b == 0));
                let plan = openvino::SpaceToBatch::new(&blocks, &begin, &end).plan(&shape).unwrap();
                assert_eq!(plan.output_shape(), out_shape.as_slice());
                assert_eq!(plan.run_bytes(&input, elem).unwrap(), want, "{padded} padded axes");
                assert_eq!(plan.inverse().run_bytes(&want, elem).unwrap(), input, "{padded} padded axes, inverse");
            }
        })
        .unwrap()
        .join()
        .unwrap();
}
