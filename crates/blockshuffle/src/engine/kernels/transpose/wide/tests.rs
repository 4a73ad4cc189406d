//! `wide`'s tests: its strips' and blocks' sizes, and where a streamed
//! strip's squares start.

use super::blocks::{block_steps, source_lead};
use super::bytes::Bytes;
use super::*;
use crate::engine::kernels::transpose::Rows2;

/// `block_steps`: 8 KiB of the strip's source rows, at most 64 rows,
/// at least one step, for steps of a square's rows (whole-line and
/// through the cache) and of a shifted step's (four squares of packed
/// units).
#[test]
fn blocks_read_8_kib_of_the_strips_rows() {
    // Strips of 512 bytes: 16 rows.
    assert_eq!(block_steps::<Masked<8, 8, 8>>(64, 8), 2);
    assert_eq!(block_steps::<Masked<4, 4, 16>>(128, 16), 1);
    assert_eq!(block_steps::<Masked<2, 2, 32>>(256, 32), 1);
    assert_eq!(block_steps::<Masked<32, 32, 2>>(16, 2), 8);
    // Narrower strips: at most 64 rows.
    assert_eq!(block_steps::<Masked<8, 8, 8>>(16, 8), 8);
    assert_eq!(block_steps::<Masked<8, 8, 8>>(32, 8), 4);
    assert_eq!(block_steps::<Masked<4, 4, 16>>(16, 16), 4);
    // Wider: at least a step (AVX2's packed strips of 2,048 bytes).
    assert_eq!(block_steps::<avx2::Packed<3, 4, 16>>(672, 16), 1);
    // Packed units' steps of four squares (64 rows of 3 bytes, 32 of 6,
    // 16 of 12), in their streamed strips of 32 columns: one a block
    // (of 3-byte units, whatever the strip: a step fills the block's 64
    // row pointers).
    assert_eq!(block_steps::<Masked<3, 4, 16>>(32, 64), 1);
    assert_eq!(block_steps::<Masked<6, 8, 8>>(32, 32), 1);
    assert_eq!(block_steps::<Masked<12, 16, 4>>(32, 16), 1);
    // Through the cache, steps of a square's rows (16 of 3 bytes, 4 of
    // 12), in the full strips (160 and 40 columns) and in those of 16
    // columns past 256 KiB (`strip_cols`): 480 bytes of each row a step a
    // block, 480 of 12-byte units 4 (16 rows, 7.5 KiB); 48 bytes 4 (64
    // rows), 192 bytes 10 (40 rows, 7.5 KiB).
    assert_eq!(block_steps::<Masked<3, 4, 16>>(160, 16), 1);
    assert_eq!(block_steps::<Masked<12, 16, 4>>(40, 4), 4);
    assert_eq!(block_steps::<Masked<3, 4, 16>>(16, 16), 4);
    assert_eq!(block_steps::<Masked<12, 16, 4>>(16, 4), 10);
    assert_eq!(block_steps::<Masked<8, 8, 8>>(0, 8), 8);
}

/// `source_lead`: the columns to the source rows' first line boundary
/// where every row starts at one offset in its line, a whole number of
/// units before it, and is a page or longer; otherwise none.
#[test]
fn squares_start_at_the_sources_line_boundary() {
    let base = 1usize << 20;
    let at = |shift: usize, rows: usize, cols: usize, from: Rows2| Matrix {
        rows,
        cols,
        unit: 8,
        src: (base + shift) as *const u8,
        from,
        dst: std::ptr::null_mut(),
        to: Rows2::strided(cols, 8 * rows as isize),
    };
    let lead = |mx: Matrix| source_lead::<Masked<8, 8, 8>>(mx);
    let lines = Rows2::strided(100, 4096);
    assert_eq!(lead(at(16, 100, 512, lines)), 6);
    assert_eq!(lead(at(56, 100, 512, lines)), 1);
    assert_eq!(lead(at(0, 100, 512, lines)), 0);
    // Rows shorter than a page, strides not whole lines, repetitions
    // not whole lines apart, an offset of no whole number of units.
    assert_eq!(lead(at(16, 100, 511, lines)), 0);
    assert_eq!(lead(at(16, 100, 512, Rows2::strided(100, 4104))), 0);
    assert_eq!(lead(at(16, 100, 512, Rows2 { inner: 10, stride: 4096, outer: 40968 })), 0);
    assert_eq!(lead(at(16, 10, 512, Rows2 { inner: 10, stride: 4096, outer: 40968 })), 6);
    assert_eq!(lead(at(20, 100, 512, lines)), 0);
    // Packed units: none.
    assert_eq!(source_lead::<avx2::Packed<6, 8, 8>>(Matrix { unit: 6, ..at(16, 100, 700, lines) }), 0);
}

/// Destination rows 65 lines apart, each in the next set of the first
/// level, which holds a line of each of any strip's.
const SPREAD: Rows2 = apart(65 * 64);

/// Destination rows `stride` bytes apart, all in one loop.
const fn apart(stride: isize) -> Rows2 {
    Rows2 { inner: usize::MAX, stride, outer: 0 }
}

/// `strip_cols`: 512 bytes of whole squares a strip, but through the
/// cache, from a matrix of 256 KiB and 64 columns on, 16 destination
/// rows (or a square's side, where that is more: 32 of 2-byte units, 64
/// of bytes); streamed, the 512 bytes whatever the size (packed units,
/// shifted four squares a step, 32 columns). Bytes whose squares shift
/// (with VBMI) take 256 columns wherever others take 512, streamed or
/// not.
#[test]
fn strips_through_the_cache_past_256_kib_write_16_rows() {
    // 8-byte units: 64 columns; 511 x 64 x 8 bytes is just under 256
    // KiB, 512 x 64 x 8 exactly it.
    assert_eq!(strip_cols::<Masked<8, 8, 8>>(511, 64, false, 0, SPREAD), 64);
    assert_eq!(strip_cols::<Masked<8, 8, 8>>(512, 64, false, 0, SPREAD), 16);
    assert_eq!(strip_cols::<Masked<8, 8, 8>>(512, 64, true, 0, SPREAD), 64);
    assert_eq!(strip_cols::<Masked<4, 4, 16>>(1024, 64, false, 0, SPREAD), 16);
    assert_eq!(strip_cols::<Masked<4, 4, 16>>(1023, 64, false, 0, SPREAD), 128);
    // 2-byte units: squares of 32.
    assert_eq!(strip_cols::<Masked<2, 2, 32>>(2047, 64, false, 0, SPREAD), 256);
    assert_eq!(strip_cols::<Masked<2, 2, 32>>(2048, 64, false, 0, SPREAD), 32);
    // Packed 3-byte units: 160 columns (480 bytes), then 16.
    assert_eq!(strip_cols::<Masked<3, 4, 16>>(1365, 64, false, 0, SPREAD), 160);
    assert_eq!(strip_cols::<Masked<3, 4, 16>>(1366, 64, false, 0, SPREAD), 16);
    // Streamed (shifted, four squares a step): 32 columns.
    assert_eq!(strip_cols::<Masked<3, 4, 16>>(1366, 64, true, 0, SPREAD), 32);
    assert_eq!(strip_cols::<Masked<6, 8, 8>>(100, 1000, true, 0, SPREAD), 32);
    assert_eq!(strip_cols::<Masked<12, 16, 4>>(100, 1000, true, 0, SPREAD), 32);
    // Fewer than 64 columns, or a full strip of fewer (12-, 16- and
    // 32-byte units: 40, 32 and 16 columns): the full strip, whatever
    // the size.
    assert_eq!(strip_cols::<Masked<8, 8, 8>>(600, 63, false, 0, SPREAD), 64);
    assert_eq!(strip_cols::<Masked<3, 4, 16>>(2000, 63, false, 0, SPREAD), 160);
    assert_eq!(strip_cols::<Masked<12, 16, 4>>(400, 64, false, 0, SPREAD), 40);
    assert_eq!(strip_cols::<Masked<16, 16, 4>>(400, 64, false, 0, SPREAD), 32);
    assert_eq!(strip_cols::<Masked<32, 32, 2>>(400, 64, false, 0, SPREAD), 16);
    // AVX2's packed squares: 2,048-byte strips (672 columns of 3
    // bytes, 336 of 6) whatever the size.
    assert_eq!(strip_cols::<avx2::Packed<3, 4, 16>>(100, 64, false, 0, SPREAD), 672);
    assert_eq!(strip_cols::<avx2::Packed<3, 4, 16>>(1366, 64, false, 0, SPREAD), 672);
    assert_eq!(strip_cols::<avx2::Packed<3, 4, 16>>(4096, 4096, false, 0, SPREAD), 672);
    assert_eq!(strip_cols::<avx2::Packed<6, 8, 8>>(4096, 4096, false, 0, SPREAD), 336);
    // Bytes: 512 columns, or 256 where the squares shift (with VBMI,
    // streamed or not); from 256 KiB, one square (64: 16 rounded up).
    assert_eq!(strip_cols::<Bytes<false>>(511, 512, false, 0, SPREAD), 512);
    assert_eq!(strip_cols::<Bytes<true>>(511, 512, false, 0, SPREAD), 256);
    assert_eq!(strip_cols::<Bytes<false>>(512, 512, false, 0, SPREAD), 64);
    assert_eq!(strip_cols::<Bytes<true>>(512, 512, false, 0, SPREAD), 64);
    assert_eq!(strip_cols::<Bytes<false>>(4096, 4096, true, 0, SPREAD), 512);
    assert_eq!(strip_cols::<Bytes<true>>(4096, 4096, true, 0, SPREAD), 256);
}

/// `held_strip`: through the cache, a strip whose destination rows crowd
/// the first level (a power of two of lines apart) is halved until it
/// holds a line of each of them, where one square's rows do; streamed,
/// and AVX2's packed squares, keep theirs.
#[test]
fn strips_whose_destination_rows_crowd_the_first_level_are_halved() {
    let l1 = crate::engine::arch::cache::first_level();
    if l1.line * l1.sets != 4096 || !(8..16).contains(&l1.ways) {
        return;
    }
    // 8-byte units, 64 columns: rows 1 KiB apart fill 4 sets (32 of
    // their lines held with 8 ways, 48 with 12), 2 KiB apart 2 sets, 4
    // KiB apart one (a square's 8 rows held).
    assert_eq!(strip_cols::<Masked<8, 8, 8>>(100, 64, false, 0, apart(1024)), 32);
    assert_eq!(strip_cols::<Masked<8, 8, 8>>(100, 64, false, 0, apart(2048)), 16);
    assert_eq!(strip_cols::<Masked<8, 8, 8>>(100, 64, false, 0, apart(4096)), 8);
    assert_eq!(strip_cols::<Masked<8, 8, 8>>(100, 64, true, 0, apart(4096)), 64);
    // Fewer columns than the strip: their rows are held.
    assert_eq!(strip_cols::<Masked<8, 8, 8>>(100, 16, false, 0, apart(2048)), 64);
    // Rows of two loops: only the inner loop's 8 are counted.
    let two_loops = Rows2 { inner: 8, stride: 4096, outer: 65 * 64 };
    assert_eq!(strip_cols::<Masked<8, 8, 8>>(100, 64, false, 0, two_loops), 64);
    // 16-byte units: 32 columns, 4 KiB apart, to 8.
    assert_eq!(strip_cols::<Masked<16, 16, 4>>(100, 64, false, 0, apart(4096)), 8);
    // 4-byte units: 16 rows 4 KiB apart are more than the ways, whatever
    // the strip: the full one; 2 KiB apart, a square (16 rows, 2 sets).
    assert_eq!(strip_cols::<Masked<4, 4, 16>>(100, 128, false, 0, apart(4096)), 128);
    assert_eq!(strip_cols::<Masked<4, 4, 16>>(100, 128, false, 0, apart(2048)), 16);
    assert_eq!(strip_cols::<avx2::Packed<3, 4, 16>>(100, 1000, false, 0, apart(4096)), 672);
}
