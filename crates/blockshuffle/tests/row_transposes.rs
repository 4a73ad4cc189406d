//! Transposes that move whole rows (numpy's `1, 0, 2`), whose plan
//! streamed sweeps the source's rows through the line writers with the
//! destination in order inside, each row read apart, where the rows read
//! apart better than any other way (`rules::reads_units_apart`: whole
//! 16-byte vectors of 512 bytes to 4 KiB that the source's order would
//! write apart, other rows from 256 bytes), and otherwise goes another
//! way: rows of float32 and float64 either side of those sizes, and of
//! 3-, 6- and 12-byte elements either side of 256 bytes,
//! more rows either way than the writers, against the reference, with
//! every kernel set, streamed or not, from row-major buffers and from a
//! view whose first axis has a gap (which runs through the cache).

mod common;
use common::check_transpose;

#[test]
fn row_transposes_of_rows_read_apart_or_not_match_the_reference() {
    // Rows of 496, 512, 640 and 1,008 bytes of float32; of 2,040, 2,048,
    // 2,944, 4,088 and 4,096 bytes of float64; of 255 and 258 bytes of
    // 3-byte elements, 1,002 of 6-byte and 780 of 12-byte ones.
    let rows = [
        (4, 124),
        (4, 128),
        (4, 160),
        (4, 252),
        (8, 255),
        (8, 256),
        (8, 368),
        (8, 511),
        (8, 512),
        (3, 85),
        (3, 86),
        (6, 167),
        (12, 65),
    ];
    for (a, b) in [(24, 24), (40, 20), (20, 40)] {
        for (elem, r) in rows {
            check_transpose(&[a, b, r], &[1, 0, 2], elem, 41);
        }
    }
}
