//! Tiles that interleave and deinterleave streams, against each unit's
//! offsets (`tile_oracle`): the zips of units without a vector kernel,
//! and the stream counts and units on both sides of the byte permutes'
//! bounds.

use super::*;

/// Interleaving tiles of units without a vector kernel: `ny` streams of
/// `nx` units, each stream contiguous, zipped into a contiguous
/// destination, with both buffers exactly their size: stream counts the
/// zip counts at compile time (2 to 4; 5 to 8 of units up to 8 bytes) and
/// others.
#[test]
fn interleaving_tiles_of_other_units_zip_their_streams() {
    for unit in [3, 5, 6, 7, 8, 9, 10, 12, 20, 24, 32, 36, 48, 63, 64] {
        for ny in [2, 3, 4, 5, 6, 7, 8, 9] {
            for nx in [1, 2, 7, 20] {
                let ssy = (nx * unit) as isize;
                let src: Vec<u8> = (0..nx * ny * unit).map(|i| (i * 13 + 5) as u8).collect();
                let mut expected = vec![0u8; src.len()];
                for x in 0..nx {
                    for y in 0..ny {
                        let (s, d) = (y * nx * unit + x * unit, (x * ny + y) * unit);
                        expected[d..d + unit].copy_from_slice(&src[s..s + unit]);
                    }
                }
                let mut dst = vec![0u8; src.len()];
                let (dsx, mode) = ((ny * unit) as isize, Mode { nt: false, isa: Isa::Portable, fetch: false });
                // SAFETY: the tile's units are inside both buffers.
                unsafe {
                    let mut w = Writers::new();
                    copy_tile(Rows::ONE, nx, ny, src.as_ptr(), ssy, dst.as_mut_ptr(), dsx, unit, mode, &mut w);
                    w.finish();
                }
                assert_eq!(dst, expected, "unit {unit}, {nx} x {ny}");
            }
        }
    }
}

/// Interleaving tiles of each of `units`, `ny` streams of `nx` units for
/// each of `streams` and `lens`: once and repeated (with gaps, or each
/// repetition continuing the destination run), every kernel set, through
/// the cache and, with `streamed`, streamed too, against each unit's
/// offsets, the bytes between runs left as they were.
fn check_interleaves(units: impl IntoIterator<Item = usize>, streams: &[usize], lens: &[usize], streamed: bool) {
    for unit in units {
        for &ny in streams {
            for &nx in lens {
                for (count, continued) in [(1, false), (3, false), (3, true)] {
                    let (ssy, dsx, run) = ((nx * unit + 5) as isize, (ny * unit) as isize, nx * ny * unit);
                    let ds = if continued { run } else { run + 7 };
                    let rows = Rows { count, ss: ny as isize * ssy + 3, ds: ds as isize };
                    let what = format!("unit {unit}, {nx} x {ny} x {count}, continued {continued}");
                    check_repeated_tile(rows, nx, ny, ssy, dsx, unit, 9, 0x3C, streamed, &what);
                }
            }
        }
    }
}

/// Interleaves of 3- to 8-byte units in 5 to 17 streams, which the byte
/// permutes take (loading each stream's slot of a step plain, or masked in
/// rows shorter than a slot; units of 5 to 8 bytes in at most 16 streams)
/// and `tile`'s wide moves otherwise, or without VBMI: streams on both
/// sides of a vector and of a slot, stream counts on both sides of a
/// slot's width (8 streams of 16-byte slots, 9 of 8-byte ones, 17 of
/// 4-byte ones), through the cache.
#[test]
fn interleaves_of_3_to_8_byte_units_on_both_sides_of_the_permutes_slots() {
    check_interleaves(3..=8, &[5, 8, 9, 10, 11, 16, 17], &[1, 2, 3, 5, 6, 16, 17, 21, 22, 40, 97], false);
}

/// Interleaves of 9- to 16-byte units in 4 to 17 streams, which the byte
/// permutes take one a slot of 16 bytes in 5 to 16 streams (plain in up to
/// 8, masked in rows of one unit; wide in 9 to 16, rows of 16 bytes or
/// more) and `tile`'s moves otherwise, or without VBMI: stream counts on
/// both sides of each bound, rows of one unit to many steps.
#[test]
fn interleaves_of_9_to_16_byte_units_on_both_sides_of_the_permutes_slots() {
    check_interleaves(9..=16, &[4, 5, 8, 9, 16, 17], &[1, 2, 3, 5, 16, 17, 40], false);
}

/// Deinterleaves of 5- and 6-byte units into 2 to 13 streams, which the
/// byte permutes take where a step holds two units of each stream (at
/// most 12 streams of 5 bytes, 10 of 6), and `tile`'s moves otherwise, or
/// without VBMI: stream counts on both sides of that bound, runs of a part
/// of a step to many steps, repeated with gaps or continuing each
/// stream's run, through the cache and streamed, against each unit's
/// offsets and with the bytes between units left alone.
#[test]
fn deinterleaves_of_5_and_6_byte_units_on_both_sides_of_two_units_a_step() {
    for unit in [5, 6] {
        for nx in [2, 3, 7, 10, 11, 12, 13] {
            for ny in [1, 2, 3, 6, 11, 13, 40] {
                for (count, continued) in [(1, false), (3, false), (3, true)] {
                    let (ssy, run) = ((nx * unit) as isize, ny * unit);
                    let (dsx, ds) = if continued {
                        ((count * run + 8) as isize, run)
                    } else {
                        ((run + 8) as isize, nx * (run + 8) + 3)
                    };
                    let rows = Rows { count, ss: ny as isize * ssy + 5, ds: ds as isize };
                    let what = format!("unit {unit}, {nx} x {ny} x {count}, continued {continued}");
                    check_repeated_tile(rows, nx, ny, ssy, dsx, unit, 9, 0x3C, true, &what);
                }
            }
        }
    }
}

/// Interleaves of 5 to 7 streams of 2- and 4-byte units, which the byte
/// shuffles take in rows of two periods and more (32 bytes) without VBMI:
/// rows on both sides of that length (7, 8, 15, 16, 17 units) and longer,
/// through the cache and streamed.
#[test]
fn interleaves_of_5_to_7_streams_of_2_and_4_byte_units() {
    check_interleaves([2, 4], &[5, 6, 7], &[1, 7, 8, 15, 16, 17, 33], true);
}

/// Interleaves of 15 to 32 streams of units of 1 to 4 bytes, which the
/// byte permutes take ahead of the transpose's squares (through the
/// cache; streamed, the squares or the stage): stream counts on both
/// sides of a square's side and of the permutes' slots (16 streams of 8
/// bytes, 17 of 4), streams shorter than a slot and longer than a square.
#[test]
fn interleaves_of_15_to_32_streams() {
    check_interleaves(1..=4, &[15, 16, 17, 31, 32], &[1, 2, 5, 16, 19, 40], true);
}

/// Streamed grids fetch their source streams ahead where the streams
/// start less than 64 KiB apart (either direction), where there are more
/// than 4 of them, or 4 of units of a line or more; not 2 or 3 far apart,
/// nor 4 of units under a line.
#[test]
fn streamed_grids_fetch_near_streams_and_more_than_four() {
    for (n0, ss0, unit, fetches) in [
        (2, (64 << 10) - 16, 16, true),
        (3, -(7 << 10), 96, true),
        (2, 64 << 10, 256, false),
        (3, 5 << 20, 496, false),
        (2, -(5 << 20), 96, false),
        (4, 8 << 20, 64, true),
        (4, -(8 << 20), 96, true),
        (4, 8 << 20, 48, false),
        (4, 64 << 10, 32, false),
        (5, 8 << 20, 16, true),
        (16, -(8 << 20), 496, true),
    ] {
        assert_eq!(fetches_streams(n0, ss0, unit), fetches, "{n0} streams {ss0} apart of {unit} bytes");
    }
}
