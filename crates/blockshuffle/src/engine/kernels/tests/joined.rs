//! Interleaving tiles whose repetitions continue their short source rows,
//! joined in the stage (`joined_tile`), against each unit's offsets
//! (`tile_oracle`).

use super::*;
use crate::engine::kernels::bytes::STAGE;
use crate::engine::kernels::tile::joined_deinterleave;

/// `count` repetitions of an `nx x ny` interleaving tile whose repetitions
/// continue its source rows (`rows.ss == nx * unit`), each repetition's
/// destination run `gap` bytes after the last's, `pad` bytes of `0xA5`
/// around it all.
fn joined_case(unit: usize, nx: usize, ny: usize, count: usize, gap: usize) -> (Rows, isize, isize) {
    let ssy = (count * nx * unit + 5) as isize;
    let dsx = (ny * unit) as isize;
    let rows = Rows { count, ss: (nx * unit) as isize, ds: (nx * ny * unit + gap) as isize };
    (rows, ssy, dsx)
}

/// Runs `call` into a destination of `expected`'s length, `0xA5` but for
/// the tile from byte 16 on (the pointer it is given), with line writers of
/// its own, finished and fenced, for every kernel set, through the cache
/// and streamed; checks it against `expected`. `call` must write only the
/// destination units `expected` holds, from the pointer it is given (16
/// bytes into a buffer of `expected`'s length), and read only its source.
fn each_mode(expected: &[u8], what: &str, call: impl Fn(*mut u8, Mode, &mut Writers)) {
    for isa in Isa::every_runnable() {
        for nt in [false, true] {
            let mut dst = vec![0xA5u8; expected.len()];
            let mut w = Writers::new();
            // SAFETY: `expected` holds 16 bytes of padding at each end.
            call(unsafe { dst.as_mut_ptr().add(16) }, Mode { nt, isa, fetch: false }, &mut w);
            // SAFETY: the writers hold only runs of `dst`, still alive.
            unsafe { w.finish() };
            fence();
            assert_eq!(dst, expected, "{what}, {isa:?}, nt {nt}");
        }
    }
}

/// `joined_tile` itself, through the cache and streamed through the line
/// writers: units with and without vector kernels, 2 to 8 streams, rows of
/// 1 unit to about a period of `shuffle`'s kernels, repetitions that fill
/// the stage's chunks exactly, leave a shorter last one, or take a single
/// chunk, their destination runs apart or continuing one another; the
/// bytes between runs left alone; every kernel set.
#[test]
fn joined_repetitions_copy_every_unit() {
    for unit in [1, 2, 3, 4, 6, 8, 12, 16] {
        for ny in 2..=8 {
            for nx in [1, 3, 7, 13, 17] {
                let run = nx * ny * unit;
                if 2 * run > STAGE {
                    continue;
                }
                let per = STAGE / run;
                for count in [2, per, per + 1] {
                    for gap in [0, 24] {
                        let (rows, ssy, dsx) = joined_case(unit, nx, ny, count, gap);
                        let (src, expected) = tile_oracle(rows, nx, ny, ssy, dsx, unit, 16, 0xA5);
                        let what = format!("unit {unit}, {nx} x {ny} x {count}, gap {gap}");
                        // SAFETY: every unit of every repetition is inside
                        // both buffers (`tile_oracle`'s sizes).
                        each_mode(&expected, &what, |d, m, w| unsafe {
                            joined_tile(rows, nx, ny, src.as_ptr(), ssy, d, dsx, unit, m, w)
                        });
                    }
                }
            }
        }
    }
}

/// Tiles the choice sends to `joined_tile` (`joins`), through
/// `copy_tile`: the rows on both sides of each kernel's shortest (16 bytes
/// of 2 to 4 streams of whole-number units, `shuffle`'s period for 3-, 6-
/// and 12-byte units and for bytes in 5 to 8 streams, two of 2- and 4-byte
/// units in 5 to 7), against each unit's offsets, every kernel set.
#[test]
fn tiles_of_short_rows_continued_copy_every_unit() {
    for (unit, ny, nx) in [(1, 4, 15), (1, 4, 16), (4, 5, 7), (4, 5, 8), (3, 3, 15), (3, 3, 16), (1, 7, 13), (6, 3, 7)]
    {
        for count in [2, 9, 700] {
            let (rows, ssy, dsx) = joined_case(unit, nx, ny, count, 24);
            let (src, expected) = tile_oracle(rows, nx, ny, ssy, dsx, unit, 16, 0xA5);
            for isa in Isa::every_runnable() {
                let mut dst = vec![0xA5u8; expected.len()];
                run_tile(rows, nx, ny, &src, ssy, &mut dst, 16, dsx, unit, Mode { nt: false, isa, fetch: false });
                assert_eq!(dst, expected, "unit {unit}, {nx} x {ny} x {count}, {isa:?}");
            }
        }
    }
}

/// A call whose repetitions do not continue the source rows is refused
/// before it touches either buffer: joined, they would be another tile's
/// units.
#[test]
#[should_panic(expected = "joined repetitions continue the source rows")]
fn joined_repetitions_that_do_not_continue_the_rows_are_refused() {
    let (rows, ssy, _) = joined_case(1, 7, 4, 3, 0);
    let rows = Rows { ss: rows.ss + 1, ..rows };
    let (src, expected) = tile_oracle(rows, 7, 4, ssy, 4, 1, 0, 0);
    let mut dst = vec![0u8; expected.len()];
    let mut w = Writers::new();
    let m = Mode { nt: false, isa: Isa::Portable, fetch: false };
    // SAFETY: refused (the check above) before any access.
    unsafe { joined_tile(rows, 7, 4, src.as_ptr(), ssy, dst.as_mut_ptr(), 4, 1, m, &mut w) };
}

/// `count` repetitions of an `nx x ny` deinterleaving tile (each
/// repetition's source one run, `gap` bytes after the last's) whose
/// repetitions continue its destination rows (`rows.ds == ny * unit`).
fn joined_deinterleave_case(unit: usize, nx: usize, ny: usize, count: usize, gap: usize) -> (Rows, isize, isize) {
    let ssy = (nx * unit) as isize;
    let dsx = (count * ny * unit + 5) as isize;
    let rows = Rows { count, ss: (nx * ny * unit + gap) as isize, ds: (ny * unit) as isize };
    (rows, ssy, dsx)
}

/// `joined_deinterleave` itself, through the cache and streamed: units of
/// 1 to 16 bytes, 2 to 16 streams, rows of 1 unit to a few vectors,
/// repetitions in one chunk of the stage, exactly one, or one and a
/// shorter last, their sources apart or continuing one another; the bytes
/// between destination rows left alone; every kernel set.
#[test]
fn joined_deinterleaves_copy_every_unit() {
    for unit in [1, 2, 3, 4, 8, 16] {
        for nx in [2, 3, 5, 8, 12, 16] {
            for ny in [1, 2, 5, 15, 16, 33] {
                let run = nx * ny * unit;
                if 2 * run > STAGE {
                    continue;
                }
                let per = STAGE / run;
                for count in [2, per, per + 1] {
                    for gap in [0, 40] {
                        let (rows, ssy, dsx) = joined_deinterleave_case(unit, nx, ny, count, gap);
                        let (src, expected) = tile_oracle(rows, nx, ny, ssy, dsx, unit, 16, 0xA5);
                        let what = format!("unit {unit}, {nx} x {ny} x {count}, gap {gap}");
                        // SAFETY: as in `joined_repetitions_copy_every_unit`.
                        each_mode(&expected, &what, |d, m, w| unsafe {
                            joined_deinterleave(rows, nx, ny, src.as_ptr(), ssy, d, dsx, unit, m, w)
                        });
                    }
                }
            }
        }
    }
}

/// Tiles the choice sends to `joined_deinterleave`, through `copy_tile`:
/// bytes and 3-byte units in rows just under a vector, joined to a line
/// exactly and to more; against each unit's offsets, every kernel set.
#[test]
fn tiles_of_short_deinterleaved_rows_continued_copy_every_unit() {
    for (unit, nx, ny, count) in [(1, 12, 15, 232), (1, 14, 8, 8), (1, 7, 7, 224), (3, 6, 5, 56), (3, 4, 5, 5)] {
        let (rows, ssy, dsx) = joined_deinterleave_case(unit, nx, ny, count, 24);
        let (src, expected) = tile_oracle(rows, nx, ny, ssy, dsx, unit, 16, 0xA5);
        for isa in Isa::every_runnable() {
            let mut dst = vec![0xA5u8; expected.len()];
            run_tile(rows, nx, ny, &src, ssy, &mut dst, 16, dsx, unit, Mode { nt: false, isa, fetch: false });
            assert_eq!(dst, expected, "unit {unit}, {nx} x {ny} x {count}, {isa:?}");
        }
    }
}

/// A call whose repetitions do not continue the destination rows is
/// refused before it touches either buffer.
#[test]
#[should_panic(expected = "joined repetitions continue the destination rows")]
fn joined_deinterleaves_that_do_not_continue_the_rows_are_refused() {
    let (rows, ssy, dsx) = joined_deinterleave_case(1, 12, 15, 3, 0);
    let rows = Rows { ds: rows.ds + 1, ..rows };
    let (src, expected) = tile_oracle(rows, 12, 15, ssy, dsx, 1, 0, 0);
    let mut dst = vec![0u8; expected.len()];
    let mut w = Writers::new();
    let m = Mode { nt: false, isa: Isa::Portable, fetch: false };
    // SAFETY: refused (the check) before any access.
    unsafe { joined_deinterleave(rows, 12, 15, src.as_ptr(), ssy, dst.as_mut_ptr(), dsx, 1, m, &mut w) };
}

/// An interleave whose columns are not contiguous in the destination is
/// refused: a repetition's run out of the stage would write between them.
#[test]
#[should_panic(expected = "their columns contiguous")]
fn joined_repetitions_of_columns_apart_are_refused() {
    let (rows, ssy, _) = joined_case(1, 7, 4, 3, 0);
    let (src, expected) = tile_oracle(rows, 7, 4, ssy, 5, 1, 0, 0);
    let mut dst = vec![0u8; expected.len()];
    let mut w = Writers::new();
    let m = Mode { nt: false, isa: Isa::Portable, fetch: false };
    // SAFETY: refused (the check) before any access.
    unsafe { joined_tile(rows, 7, 4, src.as_ptr(), ssy, dst.as_mut_ptr(), 5, 1, m, &mut w) };
}

/// A deinterleave whose source rows are apart is refused: a repetition's
/// run into the stage would read between them.
#[test]
#[should_panic(expected = "their source one run")]
fn joined_deinterleaves_of_rows_apart_are_refused() {
    let (rows, _, dsx) = joined_deinterleave_case(1, 12, 15, 3, 0);
    let (src, expected) = tile_oracle(rows, 12, 15, 13, dsx, 1, 0, 0);
    let mut dst = vec![0u8; expected.len()];
    let mut w = Writers::new();
    let m = Mode { nt: false, isa: Isa::Portable, fetch: false };
    // SAFETY: refused (the check) before any access.
    unsafe { joined_deinterleave(rows, 12, 15, src.as_ptr(), 13, dst.as_mut_ptr(), dsx, 1, m, &mut w) };
}
