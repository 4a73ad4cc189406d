//! Small destination blocks gathered by byte permutes ([`gather_block`]).

use super::super::gathers::gather_block;
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

#[test]
fn avx2_gathers_blocks_of_bytes_only() {
    // einops' `(c p2 p1)` blocks: 64 bytes from 2 rows of 32 bytes; the
    // same of 2-byte units, 128 bytes from 2 rows of 64.
    let bytes = [l(10, 32, 64), l(4, 1, 16), l(8, 4, 2), l(2, 1000, 1)];
    let (k, g) = gather_block(&bytes, 1, false, Isa::Avx2).expect("a gather");
    assert_eq!((k, g.len()), (1, 64));
    let pairs = [l(10, 64, 128), l(4, 2, 32), l(8, 8, 4), l(2, 2000, 2)];
    assert!(gather_block(&pairs, 2, false, Isa::Avx2).is_none());
    assert!(gather_block(&pairs, 2, false, Isa::Avx512).is_none());
    assert_eq!(gather_block(&pairs, 2, false, Isa::Avx512Vbmi).map(|(k, g)| (k, g.len())), Some((1, 128)));
}
