//! Transposes whose rows crowd into a few of the first-level cache's sets
//! (rows a power of two of lines apart: numpy and NCHW-to-NHWC layouts of
//! power-of-two sizes), which go in the transpose where the
//! blocked transpose or the byte permutes would read their lines again
//! from the second level (with AVX-512, float16 of at most 512 rows in
//! the full-line squares, `transpose::squares_for_crowded_rows`; with
//! VBMI, interleaves of 32 planes in the transpose rather than the byte
//! permutes, `tile::choice::spread`; float64 tiles whose sides are both
//! 32 or more in the full-line squares rather than the tile's own blocks,
//! `tile::choice::crowded`; 16-byte tiles whose sides are both 32 or
//! more and whose own kernels' rows crowd, in the full-line squares,
//! `tile::choice::crowded_wide`, their strips narrowed where the
//! destination rows crowd, `transpose`'s `held_strip`, as are float32's
//! and float64's), and their neighbours that do not:
//! against the reference, with every kernel set, streamed or not, from
//! row-major buffers and from a view whose first axis has a gap.

mod common;
use common::check_transpose;

#[test]
fn float16_rows_a_multiple_of_2_kib_apart_match_the_reference() {
    // Rows 8 KiB apart (64 and 300), 4 KiB apart (512 and 513: the
    // squares' last and a blocked one), 2 KiB and 1 KiB apart, a line
    // past a page and 4 bytes past it.
    for shape in [[64, 4096], [300, 4096], [512, 2048], [513, 2048], [256, 1024], [256, 512], [200, 2080], [256, 2050]]
    {
        check_transpose(&shape, &[1, 0], 2, 17);
    }
    // Repeated: the tile's rows of one loop, and matrices of two.
    check_transpose(&[3, 96, 4096], &[0, 2, 1], 2, 18);
    check_transpose(&[96, 3, 4096], &[1, 2, 0], 2, 19);
}

#[test]
fn interleaves_of_planes_a_multiple_of_4_kib_apart_match_the_reference() {
    // NCHW to NHWC: 32 planes of 4,096 units (crowded in one set), 16
    // of them (which the permutes keep), 32 of 4,128 (spread), of 1-, 2-
    // and 4-byte units.
    for elem in [1, 2, 4] {
        for (c, plane) in [(32, 4096), (16, 4096), (32, 4128)] {
            check_transpose(&[2, c, plane], &[0, 2, 1], elem, 20 + c as u8);
        }
    }
}

#[test]
fn float64_rows_a_power_of_two_of_lines_apart_match_the_reference() {
    // Both sides 32 or more (the squares, with AVX-512), a side of 31
    // and 16 (other kernels), and sides a line past a power of two
    // (spread over the sets).
    for shape in [[32, 256], [64, 128], [128, 128], [128, 256], [256, 256], [256, 32], [31, 512], [16, 512], [136, 264]]
    {
        check_transpose(&shape, &[1, 0], 8, 24);
    }
    // Three dims: a tile of 128 x 32 repeated 32 times.
    check_transpose(&[32, 32, 128], &[2, 1, 0], 8, 25);
}

#[test]
fn complex128_rows_a_power_of_two_of_lines_apart_match_the_reference() {
    // Walked, zipped and blocked tiles whose rows crowd (the squares,
    // with AVX-512, some in strips narrowed to 8 or 16 destination rows),
    // rows the first level holds (the tile's own kernels: 32 x 64, and
    // 512 x 64 in blocks), and sides a few lines past a power of two.
    for shape in
        [[64, 64], [128, 64], [128, 32], [32, 256], [64, 512], [256, 32], [256, 256], [32, 64], [512, 64], [72, 136]]
    {
        check_transpose(&shape, &[1, 0], 16, 26);
    }
    // Three dims: a tile of 64 x 64 repeated 8 times apart, and one of
    // 64 x 32 repeated 4 times, continuing the destination rows (a matrix
    // of 64 x 128).
    check_transpose(&[8, 64, 64], &[0, 2, 1], 16, 27);
    check_transpose(&[32, 4, 64], &[2, 1, 0], 16, 28);
}

#[test]
fn float32_destination_rows_a_power_of_two_of_lines_apart_match_the_reference() {
    // The full-line squares' strips narrowed where the first level does
    // not hold a line of each destination row (2 KiB and 1 KiB apart), kept
    // where even a square's 16 rows crowd (4 KiB apart), and rows a line
    // past a power of two.
    for shape in [[512, 64], [256, 128], [1024, 256], [1024, 64], [512, 33], [528, 64]] {
        check_transpose(&shape, &[1, 0], 4, 29);
    }
    // Repeated, each tile's destination rows 2 KiB apart.
    check_transpose(&[4, 512, 64], &[0, 2, 1], 4, 30);
}
