//! Small destination blocks gathered by byte permutes ([`gather_block`]).

use super::super::rules::*;
use super::l;
use crate::engine::arch::Isa;

#[test]
fn a_block_whose_rows_take_too_many_loads_gathers_a_smaller_one() {
    // OpenVINO depth-to-space blocks first by 4 of 3-byte units [2, 192,
    // 11, 4, 5]: the innermost three loops make a 240-byte destination
    // block from 16 source rows of 15 bytes, which straddle the
    // registers (more loads than a gather has); the innermost two, a
    // 60-byte block from 4 rows, in one register.
    let loops = [
        l(2, 126720, 126720),
        l(33, 60, 3840),
        l(4, 31680, 960),
        l(4, 15, 240),
        l(4, 7920, 60),
        l(5, 3, 12),
        l(4, 1980, 3),
    ];
    let (k, g) = gather_block(&loops, 3, false, Isa::Avx512Vbmi).expect("a gather");
    assert_eq!((k, g.len(), g.loads()), (5, 60, 4));
    // Streamed, blocks must be whole lines; without VBMI, no gather.
    assert!(gather_block(&loops, 3, true, Isa::Avx512Vbmi).is_none());
    assert!(gather_block(&loops, 3, false, Isa::Avx512).is_none());
}
