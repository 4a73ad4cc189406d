//! Rows gathered into a contiguous destination, streamed: which stream
//! ([`streams_gathered_rows`]), which go through a stage
//! ([`stages_gathered_rows`]), which join their ends through the line
//! writers (`CopyPlan::gathered`) and which are taken in the source's
//! order ([`scatters_gathered_rows`]).

use super::super::compile::*;
use super::super::rules::*;
use super::{compile_f32, l, nhwc, nhwc_padded};
use crate::engine::kernels::nest::{Loop, Window};

/// Which gathered rows [`streams_gathered_rows`] streams and which
/// [`stages_gathered_rows`] takes: 512 bytes and more; 256 and more where
/// the loop outside continues the row in the destination; units of at
/// least 32 bytes, whole 16-byte vectors streamed, others staged (never
/// both); the rows' units one after another in the destination.
#[test]
fn gathered_rows_stream_or_are_staged_from_512_bytes_or_256_continued() {
    let far = 1 << 20;
    for (outer_ds, count, unit, streams, stages) in [
        (far, 8, 64, true, false),
        (far, 4, 64, false, false),
        (256, 4, 64, true, false),
        (128, 2, 64, false, false),
        (far, 16, 32, true, false),
        (far, 8, 48, false, false),
        (far, 32, 16, false, false),
        (far, 15, 36, false, true),
        (far, 14, 36, false, false),
        (far, 7, 73, false, false),
        (288, 8, 36, false, true),
        (252, 7, 36, false, false),
        (255, 5, 51, false, false),
        (far, 8, 84, false, true),
        (far, 20, 31, false, false),
    ] {
        let loops = [l(10, far, outer_ds), l(count, 3 * unit as isize, unit as isize)];
        let case = format!("{count} x {unit}, outer {outer_ds}");
        assert_eq!(streams_gathered_rows(&loops, unit), streams, "{case}");
        assert_eq!(stages_gathered_rows(&loops, unit), stages, "{case}");
    }
    let loops = [l(10, far, far), l(15, 108, 40)];
    assert!(!stages_gathered_rows(&loops, 36));
}

/// Streaming NHWC space-to-batch of 32 float32 channels: each
/// destination row gathers every `block`-th 128-byte unit of a source
/// row, and the next row of its batch comes after the other block
/// positions' rows. Rows of 1 KiB, shorter than [`MAX_JOINED_ROW`],
/// store their whole lines straight and join their ends through the
/// line writers; rows of 4 KiB store every byte straight, unless W is
/// padded (by 1 at each end: a window on the rows). Unpadded rows of 4
/// KiB by 2 are taken in the source's order instead (see
/// [`scatters_gathered_rows`]): by 5, gathered.
#[test]
fn short_or_padded_gathered_rows_join_their_ends() {
    for (block, w, pad, joined) in [(2, 16, 0, true), (5, 160, 0, false), (2, 64, 1, true)] {
        let h = 64 / block * block;
        let shape = [8, h, w - 2 * pad, 32];
        let g = nhwc_padded(shape, block, [0, pad], true);
        let batch = 8 * block * block;
        let p = compile_f32(&g, Direction::Forward, &shape, &[batch, h / block, w / block, 32], true);
        let case = format!("block {block}, width {w}, padding {pad}");
        assert!(p.nt && !p.lines && !p.tile, "{case}");
        let last = p.loops[p.loops.len() - 1];
        assert_eq!((p.unit, last.count, last.ds), (128, w / block, 128), "{case}");
        assert_eq!(last.window.is_some(), pad > 0, "{case}");
        assert!(!continues_rows(&p.loops, p.unit), "{case}");
        assert_eq!(p.gathered, joined, "{case}");
    }
    let shape = [8, 64, 64, 32];
    let p = compile_f32(&nhwc(shape, 2, true), Direction::Forward, &shape, &[32, 32, 32, 32], true);
    assert!(p.nt && !p.lines && !p.tile && !p.gathered);
    let [.., x, y] = &p.loops[..] else { panic!("{:?}", p.loops) };
    assert_eq!((x.count, x.ss, x.ds, y.count, y.ss), (32, 256, 128, 2, 128));
}

/// Which gathered rows [`scatters_gathered_rows`] takes in the
/// source's order: 2 or 3 rows (the loop outside the rows, its units
/// one apart) that together read
/// every unit of the source rows, rows of [`MAX_JOINED_ROW`] bytes or
/// more, units of whole 16-byte vectors from 32 bytes, and no window on
/// either loop.
#[test]
fn few_rows_of_every_other_unit_scatter() {
    let far = 1 << 20;
    for (rows, count, unit, ss, scatters) in [
        (2, 32, 64, 128, true),
        (3, 32, 64, 192, true),
        (3, 16, 128, 384, true),
        (4, 32, 64, 256, false),
        (2, 31, 64, 128, false),
        (2, 64, 16, 32, false),
        (2, 48, 48, 96, true),
        (2, 64, 40, 80, false),
        (2, 32, 64, 192, false),
    ] {
        let loops = [l(10, far, far), l(rows, unit as isize, far), l(count, ss, unit as isize)];
        assert_eq!(scatters_gathered_rows(&loops, unit), scatters, "{rows} rows of {count} x {unit}, {ss} apart");
    }
    let window = Some(Window { outer: Some(0), oc: 2, ic: 1, lo: 1, hi: 19 });
    let loops = [l(10, far, far), l(2, 64, far), Loop { window, ..l(32, 128, 64) }];
    assert!(!scatters_gathered_rows(&loops, 64));
}

/// Streaming TF NHWC space-to-batch by 2 of 9 float32 channels (36-byte
/// units, not whole vectors): each destination row gathers every other
/// unit of a source row, and the rows do not continue one another. Rows
/// of 540 bytes and more, padded or not, stream, every one through a
/// stage and the line writers (those of 2,304 bytes too, which whole
/// vectors would store straight); rows of 504 bytes store through the
/// cache, as every row does unless streaming.
#[test]
fn gathered_rows_of_36_byte_units_stream_through_a_stage() {
    for (w, pad, staged) in [(128, 0, true), (64, 0, true), (64, 1, true), (30, 0, true), (28, 0, false)] {
        let shape = [2, 8, w - 2 * pad, 9];
        let g = nhwc_padded(shape, 2, [0, pad], true);
        for streaming in [true, false] {
            let p = compile_f32(&g, Direction::Forward, &shape, &[8, 4, w / 2, 9], streaming);
            let case = format!("width {w}, padding {pad}, streaming {streaming}");
            assert_eq!((p.nt, p.gathered), (staged && streaming, staged && streaming), "{case}");
            assert!(!p.lines && !p.tile, "{case}");
            let [.., x, y] = p.loops[..] else { panic!("{case}: {} loops", p.loops.len()) };
            assert_eq!((p.unit, y.count, y.ss, y.ds), (36, w / 2, 72, 36), "{case}");
            assert_eq!(y.window.is_some(), pad > 0, "{case}");
            assert_eq!((x.ss, x.ds), (36, (8 * w / 2 * 9 * 4) as isize), "{case}");
        }
    }
}
