//! Transposes of bytes, which with AVX-512 go in the transpose's 64 x 64
//! full-line squares (`transpose::wide`'s `bytes`) where both sides are
//! 64 or more, streamed rows that start inside their lines shifted into
//! them with VBMI, and their neighbours with a side of 63, which do not:
//! against the reference, with every kernel set, streamed or not, from
//! row-major buffers and from a view whose first axis has a gap.

mod common;
use common::check_transpose;

#[test]
fn byte_transposes_around_a_square_of_64_match_the_reference() {
    // A square; a side of 63 (the blocked transpose); partial squares on
    // both sides; destination rows of 1,100 and 1,030 bytes (shifted
    // where streamed, over one strip and two); rows a power of two of
    // lines apart.
    for shape in [[64, 64], [63, 200], [200, 63], [65, 127], [1100, 200], [1030, 300], [256, 1024], [2048, 256]] {
        check_transpose(&shape, &[1, 0], 1, 40);
    }
    // Repeated matrices, and the rows of two loops.
    check_transpose(&[3, 130, 70], &[0, 2, 1], 1, 41);
    check_transpose(&[70, 3, 130], &[1, 2, 0], 1, 42);
}
