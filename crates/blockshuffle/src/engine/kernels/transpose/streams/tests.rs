//! The stream squares' tests: each way, every unit, stream count and
//! row length around the squares' sides against a unit-by-unit oracle,
//! per ISA, and the rules of what they take.

use super::*;

/// How [`check`]'s and [`check_interleave`]'s rows lie: apart on both
/// sides, each continuing the last on both, or only on the streams' side
/// (each stream's units where the last row's left off, the groups' rows
/// apart: [`joins`], [`joins_streams`]).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Runs {
    Apart,
    Continued,
    Joined,
}

/// Runs the kernel on `count` rows of `n` groups, laid out as `runs`
/// says, the source exactly its rows' bytes, and compares the whole
/// destination, a vector past its end too, with the oracle's.
fn check(b: usize, unit: usize, n: usize, count: usize, runs: Runs, isa: Isa) {
    let (group, stream) = (b * unit, n * unit);
    let (ss, ds, streams) = match runs {
        Runs::Continued => (n * group, stream, count * stream + 5),
        Runs::Apart => (n * group + 7, b * (stream + 3) + 5, stream + 3),
        Runs::Joined => (n * group + 7, stream, count * stream + 5),
    };
    let rows = Rows { count, ss: ss as isize, ds: ds as isize };
    let src_len = (count - 1) * ss + n * group;
    let dst_len = (count - 1) * ds + (b - 1) * streams + stream;
    let src: Vec<u8> = (0..src_len).map(|i| (i * 7 + i / 251) as u8).collect();
    let mut got = vec![0xA5u8; dst_len + 16];
    let ran = takes_deinterleave(rows, n, b, unit, isa);
    if ran {
        // SAFETY: the rows lie inside the buffers (as built); it takes them.
        unsafe { deinterleave(rows, n, b, unit, src.as_ptr(), got.as_mut_ptr(), streams as isize, isa) };
    }
    let joined = runs == Runs::Joined && joins_streams(rows, n, unit, rows.ds);
    let groups = if runs == Runs::Continued && count > 1 || joined { count * n } else { n };
    let what = format!("{b} streams of {n} {unit}-byte units, {count} rows {runs:?}, {isa:?}");
    assert_eq!(ran, takes(groups, b, unit, squares_isa(unit, isa)), "{what}");
    let mut want = vec![0xA5u8; dst_len + 16];
    for r in 0..if ran { count } else { 0 } {
        for x in 0..n {
            for j in 0..b {
                let (a, o) = (r * ss + (x * b + j) * unit, r * ds + j * streams + x * unit);
                want[o..o + unit].copy_from_slice(&src[a..a + unit]);
            }
        }
    }
    assert!(got == want, "{what}");
}

/// [`check`] for [`interleave`]: `count` rows of `b` streams of `n`
/// units, laid out as `runs` says, the source exactly its rows' bytes.
fn check_interleave(b: usize, unit: usize, n: usize, count: usize, runs: Runs, isa: Isa) {
    let (group, stream) = (b * unit, n * unit);
    let (ss, streams, ds) = match runs {
        Runs::Continued => (stream, count * stream + 5, n * group),
        Runs::Apart => (b * (stream + 3) + 5, stream + 3, n * group + 7),
        Runs::Joined => (stream, count * stream + 5, n * group + 7),
    };
    let rows = Rows { count, ss: ss as isize, ds: ds as isize };
    let src_len = (count - 1) * ss + (b - 1) * streams + stream;
    let dst_len = (count - 1) * ds + n * group;
    let src: Vec<u8> = (0..src_len).map(|i| (i * 7 + i / 251) as u8).collect();
    let mut got = vec![0xA5u8; dst_len + 32];
    let ran = takes_interleave_rows(rows, n, b, unit, isa);
    if ran {
        // SAFETY: the rows lie inside the buffers (as built); it takes them.
        unsafe { interleave(rows, n, b, unit, src.as_ptr(), streams as isize, got.as_mut_ptr(), isa) };
    }
    let joined = runs == Runs::Joined && joins_streams(rows, n, unit, rows.ss);
    let units = if runs == Runs::Continued && count > 1 || joined { count * n } else { n };
    let what = format!("{b} streams of {n} {unit}-byte units, {count} rows {runs:?}, {isa:?}");
    assert_eq!(ran, takes_interleave(units, b, unit, isa), "{what}");
    let mut want = vec![0xA5u8; dst_len + 32];
    for r in 0..if ran { count } else { 0 } {
        for x in 0..n {
            for j in 0..b {
                let (a, o) = (r * ss + j * streams + x * unit, r * ds + (x * b + j) * unit);
                want[o..o + unit].copy_from_slice(&src[a..a + unit]);
            }
        }
    }
    assert!(got == want, "{what}");
}

#[test]
fn every_stream_count_and_length_interleaves_as_the_oracle() {
    for isa in Isa::every_runnable() {
        for unit in 1..=8 {
            for b in 1..=MAX_STREAMS + 1 {
                // Around a square's side and half of it, the fewest
                // bytes taken (`min_interleaved_bytes`: 16 with AVX2, 32
                // without), and runs whose last square overlaps the one
                // before by 1 to 15 bytes, or by less than half a
                // square (`covering`: the last half alone, from 1 unit
                // past a whole square to half a side, then whole again).
                for n in
                    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17, 31, 32, 33, 47, 48, 49, 50, 63, 64, 65]
                {
                    for runs in [Runs::Apart, Runs::Continued, Runs::Joined] {
                        check_interleave(b, unit, n, 3, runs, isa);
                    }
                }
            }
        }
    }
}

#[test]
fn every_stream_count_and_length_matches_the_oracle() {
    for isa in Isa::every_runnable() {
        for unit in 1..=8 {
            for b in 1..=MAX_STREAMS + 1 {
                // Around a square's side, and the run's end, where the
                // last squares read exactly their units: a square or two
                // past the whole ones (`whole_squares`), the last
                // overlapping the one before by 1 to 15 groups, or the
                // last half of a square alone (`covering`: 1 unit past a
                // whole square to half a side, then whole again).
                for n in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17, 31, 33, 47, 48, 49, 50, 63, 64, 65]
                {
                    for runs in [Runs::Apart, Runs::Continued, Runs::Joined] {
                        check(b, unit, n, 3, runs, isa);
                    }
                }
            }
        }
    }
}

/// Rows of bytes that continue the destination's streams but lie apart in
/// the source ([`joins`]: fewer groups than a square's side), in squares
/// across the rows: 1 to 6 rows (a square from one row, two and three,
/// and its last partial), every group count taken and stream count.
#[test]
fn rows_that_continue_only_the_destination_deinterleave_as_the_oracle() {
    for isa in Isa::every_runnable() {
        for b in 1..=MAX_STREAMS + 1 {
            for n in MIN_GROUPS..SIDE + 2 {
                assert_eq!(joins(Rows { count: 2, ss: (n * b + 1) as isize, ds: n as isize }, n, b), n < SIDE);
                for count in 1..=6 {
                    check(b, 1, n, count, Runs::Joined, isa);
                }
            }
        }
    }
}

/// Rows of 2- to 8-byte units shorter than a square's side whose streams
/// continue the last row's ([`joins_streams`]), both ways, in squares
/// across the rows: 1 to 6 rows (a square from one row, two and more, the
/// last overlapping the one before), every row length up to a square's
/// side and one more, stream counts around the squares' and the most.
#[test]
fn rows_shorter_than_a_square_that_continue_the_streams_go_across_them_as_the_oracle() {
    for (unit, side) in [(2, 16), (3, 8), (4, 8), (6, 4), (8, 4)] {
        for n in 1..=side + 1 {
            let step = (n * unit) as isize;
            let rows = Rows { count: 2, ss: step + 7, ds: step + 9 };
            assert_eq!(joins_streams(rows, n, unit, step), n < side, "{n} {unit}-byte units");
            assert!(
                !joins_streams(Rows { count: 1, ..rows }, n, unit, step) && !joins_streams(rows, n, unit, step + 1)
            );
        }
    }
    assert!(!joins_streams(Rows { count: 2, ss: 3, ds: 3 }, 3, 1, 3), "bytes have `joins`");
    for isa in Isa::every_runnable() {
        for (unit, side) in [(2, 16), (3, 8), (4, 8), (6, 4), (8, 4)] {
            for b in [3, 4, 5, 7, 8, 9, 14, 16, 17, MAX_STREAMS] {
                for n in 1..=side + 1 {
                    for count in 1..=6 {
                        check(b, unit, n, count, Runs::Joined, isa);
                        check_interleave(b, unit, n, count, Runs::Joined, isa);
                    }
                }
            }
        }
    }
}

/// [`block`] of `nx x ny` units of `unit` bytes, the source's rows
/// and the destination's apart by more than they span (`gap` bytes
/// more), the source exactly its rows' bytes, against each unit's
/// offsets: the whole destination, a vector past its end too, and
/// nothing written unless [`takes_block`] takes the block.
fn check_block(nx: usize, ny: usize, unit: usize, gap: usize, isa: Isa) {
    let (ssy, dsx) = (nx * unit + gap, ny * unit + gap);
    let src: Vec<u8> = (0..(ny - 1) * ssy + nx * unit).map(|i| (i * 7 + i / 251 + 1) as u8).collect();
    let dst_len = (nx - 1) * dsx + ny * unit;
    let mut got = vec![0xA5u8; dst_len + 32];
    // SAFETY: the block lies inside both buffers (as built).
    let ran = unsafe { block(nx, ny, unit, src.as_ptr(), ssy as isize, got.as_mut_ptr(), dsx as isize, isa) };
    assert_eq!(ran, takes_block(nx, ny, unit, isa), "{nx} x {ny} of {unit}-byte units, {isa:?}");
    let mut want = vec![0xA5u8; dst_len + 32];
    for x in 0..if ran { nx } else { 0 } {
        for y in 0..ny {
            let (a, o) = (y * ssy + x * unit, x * dsx + y * unit);
            want[o..o + unit].copy_from_slice(&src[a..a + unit]);
        }
    }
    assert!(got == want, "{nx} x {ny} of {unit}-byte units, gap {gap}, {isa:?}");
}

#[test]
fn blocks_of_every_unit_match_the_oracle() {
    for isa in Isa::every_runnable() {
        for unit in 1..=8 {
            // Around a square's side (8, or 4 of 8-byte units) and its
            // half past a whole square (`covering`), and a block's (64).
            for nx in [1, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17, 63, 64] {
                for ny in [1, 3, 4, 5, 6, 7, 8, 9, 12, 13, 24, 64] {
                    for gap in [0, 5] {
                        check_block(nx, ny, unit, gap, isa);
                    }
                }
            }
        }
    }
}

#[test]
fn takes_blocks_of_3_4_and_8_byte_units_with_avx2_from_a_square_each_way() {
    let x86 = cfg!(target_arch = "x86_64");
    for (unit, side) in [(3, 8), (4, 8), (8, 4)] {
        assert_eq!(takes_block(side, side, unit, Isa::Avx2) && takes_block(64, 9, unit, Isa::Avx2), x86);
        assert!(!takes_block(side - 1, side, unit, Isa::Avx2) && !takes_block(side, side - 1, unit, Isa::Avx2));
        assert!(!takes_block(64, 64, unit, Isa::Sse2) && !takes_block(64, 64, unit, Isa::Portable));
    }
    for other in [1, 2, 6, 12] {
        assert!(!takes_block(64, 64, other, Isa::Avx2), "{other}");
    }
}

/// Where AVX-512's masks run, blocks of 8-byte units alone, from a square
/// each way (the tiles the choice sends there through the cache:
/// `blocks_through_cache`); where they do not, as with AVX2.
#[test]
fn takes_blocks_of_8_byte_units_where_masks_run() {
    let x86 = cfg!(target_arch = "x86_64");
    for isa in [Isa::Avx512, Isa::Avx512Vbmi] {
        let masked = super::super::masks(isa);
        assert_eq!(takes_block(4, 4, 8, isa) && takes_block(64, 9, 8, isa), x86, "{isa:?}");
        assert!(!takes_block(3, 4, 8, isa) && !takes_block(4, 3, 8, isa), "{isa:?}");
        assert_eq!(blocks_through_cache(8, isa), masked, "{isa:?}");
        for other in [1, 2, 3, 4, 6, 12] {
            assert!(!blocks_through_cache(other, isa), "{other}, {isa:?}");
            let plain = x86 && !masked && matches!(other, 3 | 4);
            assert_eq!(takes_block(64, 64, other, isa), plain, "{other}, {isa:?}");
        }
    }
    assert!(!blocks_through_cache(8, Isa::Avx2) && !blocks_through_cache(8, Isa::Sse2));
}

#[test]
fn takes_five_to_32_streams_of_bytes_without_masks_in_rows_of_half_a_square() {
    assert!(!takes(100, 8, 1, Isa::Portable));
    assert!(!takes(100, 4, 1, Isa::Sse2) && !takes(100, 33, 1, Isa::Sse2) && !takes(100, 8, 4, Isa::Sse2));
    assert!(!takes(7, 8, 1, Isa::Sse2) && !takes(100, 8, 2, Isa::Sse2));
    if cfg!(target_arch = "x86_64") {
        assert!(takes(8, 5, 1, Isa::Sse2) && takes(100, 32, 1, Isa::Sse2) && takes(8, 16, 1, Isa::Avx2));
    }
}

#[test]
fn takes_wider_units_with_avx2_where_every_square_is_whole() {
    let x86 = cfg!(target_arch = "x86_64");
    // (way, unit, fewest units of a stream, fewest streams): a
    // square's sides, 5 streams, 8 interleaved.
    type Takes = fn(usize, usize, usize, Isa) -> bool;
    let ways: [(Takes, _, _, _); 9] = [
        (takes, 2, 16, 8),
        (takes, 3, 8, 8),
        (takes, 4, 8, 8),
        (takes, 6, 4, 5),
        (takes, 8, 4, 5),
        (takes_interleave, 2, 16, 8),
        (takes_interleave, 3, 8, 8),
        (takes_interleave, 4, 8, 8),
        (takes_interleave, 8, 4, 8),
    ];
    for (takes, unit, n, b) in ways {
        assert_eq!(takes(n, b, unit, Isa::Avx2) && takes(100, 32, unit, Isa::Avx2), x86, "{unit}");
        assert!(!takes(n - 1, b, unit, Isa::Avx2) && !takes(n, b - 1, unit, Isa::Avx2), "{unit}");
        assert!(!takes(100, 33, unit, Isa::Avx2) && !takes(100, 16, unit, Isa::Sse2), "{unit}");
        for other in [5, 7, 12, 16] {
            assert!(!takes(100, 8, other, Isa::Avx2), "{other}");
        }
    }
    assert!(!takes_interleave(100, 8, 6, Isa::Avx2));
}

#[test]
fn interleaves_9_to_32_streams_of_bytes_without_masks_from_32_bytes_with_avx2_16() {
    let x86 = cfg!(target_arch = "x86_64");
    for (isa, n) in [(Isa::Sse2, 32), (Isa::Avx2, 16)] {
        assert_eq!(takes_interleave(n, 9, 1, isa) && takes_interleave(n, 32, 1, isa), x86, "{isa:?}");
        assert!(!takes_interleave(n - 1, 9, 1, isa) && !takes_interleave(n, 8, 1, isa), "{isa:?}");
        assert!(!takes_interleave(n, 33, 1, isa), "{isa:?}");
    }
    assert!(!takes_interleave(100, 8, 1, Isa::Portable));
}
