use std::arch::x86_64::*;

use super::any_units::*;
use super::carried::*;
use super::interleave_carried::*;
use super::lines::*;
use super::nest::*;
use crate::engine::arch::vector::*;
use crate::engine::arch::Isa;

/// Three vectors of distinct bytes, and them as one array.
fn three<V: Vector>() -> ([V; 3], Vec<u8>) {
    let bytes: Vec<u8> = (0..3 * V::BYTES).map(|i| (i * 7 + 3) as u8).collect();
    // SAFETY: `3 * V::BYTES` bytes readable; the CPU runs `V` (checked by the caller).
    let v = unsafe { std::array::from_fn(|k| V::load(bytes.as_ptr().add(k * V::BYTES))) };
    (v, bytes)
}

fn bytes_of<V: Vector>(v: [V; 3]) -> Vec<u8> {
    let mut out = vec![0u8; 3 * V::BYTES];
    for (k, v) in v.into_iter().enumerate() {
        // SAFETY: inside `out`; the CPU runs `V` (checked by the caller).
        unsafe { V::store(out.as_mut_ptr().add(k * V::BYTES), v) };
    }
    out
}

/// Three streams split and zipped, by `V`'s way, against the definition:
/// unit `u` of stream `j` is unit `3u + j` of the interleaving.
fn split3_and_zip3_follow_the_definition<V: Vector, const S: usize>() {
    let (v, bytes) = three::<V>();
    let n = V::BYTES;
    // SAFETY: register operations of `V` (the caller checked the CPU).
    let (split, zipped) = unsafe { (bytes_of(V::split3::<S>(v)), bytes_of(V::zip3::<S>(v))) };
    for j in 0..3 {
        for t in 0..n {
            let unit = t / S;
            assert_eq!(split[j * n + t], bytes[(3 * unit + j) * S + t % S], "split S {S} stream {j} byte {t}");
        }
    }
    for q in 0..3 * n {
        let (j, unit) = (q / S % 3, q / (3 * S));
        assert_eq!(zipped[q], bytes[j * n + unit * S + q % S], "zip S {S} byte {q}");
    }
}

/// Padded source rows are deinterleaved in place by every vector
/// instruction set this CPU runs, AVX512-VBMI too (whose own kernel
/// reads whole rows: the joined one runs them): `deinterleave_carried`
/// does the work, the bytes outside each row's data read as zeros
/// (they hold 0xee here), and nothing outside the streams is written.
#[test]
fn padded_rows_deinterleave_in_place_with_every_vector_isa() {
    const S: usize = 4;
    const B: usize = 2;
    // Per stream, rows of 20 units (80 bytes: a line and a part), 3 rows.
    let (n, rows) = (20usize, 3usize);
    let src_row = n * B * S;
    // Data bytes of each source row: past its first unit, short of its last two.
    let (lo, hi) = (S, src_row - 2 * S);
    let src: Vec<u8> = (0..rows * src_row)
        .map(|i| if (lo..hi).contains(&(i % src_row)) { (i * 7 % 251) as u8 + 1 } else { 0xee })
        .collect();
    // The streams 4 lines apart (each is 240 bytes), starting 16 bytes
    // into a line, 64 guard bytes either side.
    let stream_ds = 256usize;
    let len = 64 + 16 + stream_ds + rows * n * S + 64;
    for isa in Isa::every_runnable().filter(|&isa| isa > Isa::Portable) {
        let mut out = vec![0u128; len.div_ceil(16) + 4];
        // SAFETY: a `u128` buffer is 16-byte aligned; `len` bytes in it.
        let buf = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), len) };
        let at = (64 - buf.as_ptr() as usize % 64) % 64 + 16;
        buf.fill(0x55);
        let pad = Padding { lo, hi, groups: None };
        let c = Carried {
            rows: Rows { count: rows, ss: src_row as isize, ds: (n * S) as isize },
            streams: Rows::ONE,
            ds: stream_ds as isize,
            ahead: Ahead::Source,
            pad: Some(pad),
        };
        // SAFETY: the source rows and the streams' bytes from `at` lie
        // inside their buffers; `isa` is one this CPU runs.
        let done = unsafe { deinterleave_carried(isa, S, B, c, n, src.as_ptr(), buf.as_mut_ptr().add(at)) };
        assert!(done, "{isa:?}: declined");
        let mut want = vec![0x55u8; len];
        for r in 0..rows {
            for x in 0..n {
                for j in 0..B {
                    for k in 0..S {
                        let q = (x * B + j) * S + k;
                        let v = if (lo..hi).contains(&q) { src[r * src_row + q] } else { 0 };
                        want[at + j * stream_ds + (r * n + x) * S + k] = v;
                    }
                }
            }
        }
        assert!(buf == &want[..], "{isa:?}");
    }
}

/// `interleave_carried` of rows cropped at their ends, in two calls
/// that continue one destination run, after a run pushed to the
/// writers that ends where the first call begins: the writers' line
/// is taken over and the last one handed back, every row's kept bytes
/// land in order, and nothing outside the runs is written. With
/// AVX512-VBMI only (below it, the kernel declines).
#[test]
fn cropped_rows_interleave_carried_through_the_writers() {
    let isa = Isa::detect();
    // 2-byte units (the kernel's own) and units of other sizes
    // (gathered), 2 to 4 streams: steps of whole vectors (units that
    // divide 48 bytes, by 4) or not, of 2 or 3 vectors (30 bytes by 4
    // and 40 by 3 make 2).
    let shapes = [2usize, 3, 6, 9, 12, 24, 30, 36, 40, 48, 60].into_iter().flat_map(|u| [(u, 2usize), (u, 3), (u, 4)]);
    // 40 units a stream, or about the fewest the kernels take (a
    // vector of each stream; at least 9, for the crop below).
    let shapes = shapes.flat_map(|(size, b)| [40, 64usize.div_ceil(size).max(9)].map(|n| (size, b, n)));
    for (size, b, n) in shapes {
        // Rows of `n * size * b` bytes, kept from unit 3 to 5 units
        // short of the end.
        let rows = 5usize;
        let row = n * size * b;
        let keep = (3 * size, row - 5 * size);
        let kept = keep.1 - keep.0;
        // Stream `j` of row `r` at `r * b * n * size + j * n * size`.
        let src: Vec<u8> = (0..rows * row).map(|i| (i * 13 % 251) as u8).collect();
        let (pre, at) = (21usize, 64 + 37);
        let len = at + rows * kept + 64;
        let mut out = vec![0u128; len.div_ceil(16)];
        // SAFETY: `len` bytes inside the `u128` buffer.
        let buf = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), len) };
        buf.fill(0x55);
        let prefix: Vec<u8> = (0..pre).map(|i| 200 + i as u8).collect();
        let mut w = Writers::new();
        let d = buf.as_mut_ptr();
        let call = |w: &mut Writers, r0: usize, count: usize| {
            let inner = Rows { count, ss: row as isize, ds: kept as isize };
            let c = Interleaved { outer: Rows::ONE, inner, ss: (n * size) as isize, keep };
            let (from, to) = (src[r0 * row..].as_ptr(), d.wrapping_add(at + r0 * kept));
            // SAFETY: `count` rows of the source from `from`; their kept
            // bytes inside `buf` from `to`; `isa` detected.
            unsafe { interleave_carried(isa, size, b, c, n, from, to, w) }
        };
        // SAFETY: the prefix ends at `at`, inside `buf`.
        unsafe { w.push(prefix.as_ptr(), d.wrapping_add(at - pre), pre) };
        let done = call(&mut w, 0, 3) && call(&mut w, 3, 2);
        // SAFETY: the runs' bytes are `buf`'s.
        unsafe {
            w.finish();
            crate::engine::arch::mem::fence();
        }
        if isa < Isa::Avx512Vbmi {
            assert!(!done, "size {size} b {b}: {isa:?} has no carried interleave");
            continue;
        }
        assert!(done, "size {size} b {b}");
        let mut want = vec![0x55u8; len];
        want[at - pre..at].copy_from_slice(&prefix);
        for r in 0..rows {
            for q in keep.0..keep.1 {
                let (x, j, k) = (q / size / b, q / size % b, q % size);
                want[at + r * kept + q - keep.0] = src[r * row + j * n * size + x * size + k];
            }
        }
        assert!(buf == &want[..], "size {size} b {b} n {n}");
    }
}

/// The step of [`AnyUnits`]: the most whole units that fit a vector of
/// each stream and three vectors for all the streams, or one unit
/// (four vectors), and its tables' windows: those of three vectors or
/// fewer draw on 0 and 1, and 1 and 2, those of four on 0 and 1, and 2
/// and 3.
#[test]
fn any_units_steps_follow_their_sizes() {
    for size in 3..64 {
        for b in 2..=4 {
            let u = AnyUnits { size, b };
            let most = (1..=64).filter(|t| t % size == 0 && b * t <= 192).max().unwrap_or(size);
            let step = u.groups_step();
            assert_eq!(step, u.fit().then_some(most), "{size} x {b}");
            let Some(step) = step else { continue };
            assert!(b * step > 64 && b * step <= 256, "{size} x {b}");
            // Every stream byte's source byte lies in the windows.
            Gathers::with(u, Gather::DeinterleaveGroups, |g| {
                let vectors = (b * step).div_ceil(64);
                let windows = if vectors == 4 { [0, 2] } else { [0, vectors.saturating_sub(2)] };
                for j in 0..b {
                    for t in 0..step {
                        let q = t / size * b * size + j * size + t % size;
                        let w = usize::from(g.take[j] >> t & 1 == 1);
                        assert_eq!(windows[w] * 64 + g.idx[j][w][t] as usize, q, "{size} x {b}, {j}, {t}");
                    }
                }
            });
        }
    }
}

/// `deinterleave_carried` of units without a kernel of their own (3 to
/// 63 bytes, not powers of two), with AVX512-VBMI: 2 groups of 2 to 4
/// streams, each stream starting at its own offset in a line, rows
/// ending at a line or anywhere in one; every stream's bytes land in
/// order and nothing outside the streams is written; padded rows read
/// in place, their padding as zeros (63-byte units by 4: four source
/// vectors a step). Below VBMI the kernel declines (their vectors do
/// not hold whole units).
#[test]
fn units_of_any_size_deinterleave_carried() {
    let isa = Isa::detect();
    for size in [3usize, 5, 6, 7, 9, 12, 18, 24, 36, 48, 60, 63] {
        for (b, padded) in [2usize, 3, 4].into_iter().flat_map(|b| [(b, false), (b, true)]) {
            for n in [64usize.div_ceil(size), 256 / size, 200usize.div_ceil(size)] {
                let (rows, groups) = (3usize, 2usize);
                let src_row = n * b * size;
                // Padded: each row's data past its first unit, short of
                // its last two; the rest holds 0xee and reads as zeros.
                let data = if padded { (size, src_row - 2 * size) } else { (0, src_row) };
                let is_data = |q: usize| (data.0..data.1).contains(&(q % src_row));
                // Rows of both groups, one after another, then the next row.
                let src: Vec<u8> =
                    (0..rows * groups * src_row).map(|i| if is_data(i) { (i * 7 % 251) as u8 } else { 0xee }).collect();
                // Stream `s` at `64 + s * ds`: 5 bytes further into a line
                // than the one before; 64 guard bytes after the last.
                let ds = (rows * n * size).next_multiple_of(64) + 64 + 5;
                let len = 64 + groups * b * ds + 64;
                let mut out = vec![0u128; len.div_ceil(16) + 4];
                // SAFETY: a `u128` buffer is 16-byte aligned; `len` bytes in it.
                let buf = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), len) };
                buf.fill(0x55);
                let c = Carried {
                    rows: Rows { count: rows, ss: (groups * src_row) as isize, ds: (n * size) as isize },
                    streams: Rows { count: groups, ss: src_row as isize, ds: (b * ds) as isize },
                    ds: ds as isize,
                    ahead: Ahead::Source,
                    pad: padded.then_some(Padding { lo: data.0, hi: data.1, groups: None }),
                };
                // SAFETY: the source rows and the streams' bytes lie
                // inside their buffers; `isa` detected.
                let done = unsafe { deinterleave_carried(isa, size, b, c, n, src.as_ptr(), buf.as_mut_ptr().add(64)) };
                if isa < Isa::Avx512Vbmi {
                    assert!(!done, "{size} x {b}: {isa:?} has no carried deinterleave of them");
                    return;
                }
                assert!(done, "{size} x {b}, n {n}, padded {padded}");
                let mut want = vec![0x55u8; len];
                for g in 0..groups {
                    for j in 0..b {
                        for r in 0..rows {
                            for x in 0..n {
                                for k in 0..size {
                                    let q = (r * groups + g) * src_row + (x * b + j) * size + k;
                                    let v = if is_data(q) { src[q] } else { 0 };
                                    want[64 + (g * b + j) * ds + (r * n + x) * size + k] = v;
                                }
                            }
                        }
                    }
                }
                assert!(buf == &want[..], "{size} x {b}, n {n}, padded {padded}");
            }
        }
    }
}

#[test]
fn three_streams_split_and_zip() {
    split3_and_zip3_follow_the_definition::<__m128i, 1>();
    split3_and_zip3_follow_the_definition::<__m128i, 2>();
    split3_and_zip3_follow_the_definition::<__m128i, 4>();
    split3_and_zip3_follow_the_definition::<__m128i, 8>();
    split3_and_zip3_follow_the_definition::<__m128i, 16>();
    if is_x86_feature_detected!("avx2") {
        split3_and_zip3_follow_the_definition::<__m256i, 16>();
        split3_and_zip3_follow_the_definition::<__m256i, 1>();
        split3_and_zip3_follow_the_definition::<__m256i, 2>();
        split3_and_zip3_follow_the_definition::<__m256i, 4>();
        split3_and_zip3_follow_the_definition::<__m256i, 8>();
    }
}
