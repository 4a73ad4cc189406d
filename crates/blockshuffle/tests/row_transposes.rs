//! Transposes that move whole rows (numpy's `1, 0, 2`), whose plan
//! streamed sweeps the source's rows through the line writers with the
//! destination in order inside, each row read apart, where the rows are
//! half a page to 4 KiB (`stream_order`), and otherwise writes each row
//! apart: rows of float64 either side of those sizes, more rows either
//! way than the writers, against the reference, with every kernel set,
//! streamed or not, from row-major buffers and from a view whose first
//! axis has a gap (which runs through the cache).

mod common;
use common::check_transpose;

#[test]
fn row_transposes_either_side_of_half_a_page_and_4_kib_match_the_reference() {
    for (a, b) in [(24, 24), (40, 20), (20, 40)] {
        // Rows of 2,040, 2,048, 2,944, 4,088 and 4,096 bytes.
        for r in [255, 256, 368, 511, 512] {
            check_transpose(&[a, b, r], &[1, 0, 2], 8, 41);
        }
    }
}
