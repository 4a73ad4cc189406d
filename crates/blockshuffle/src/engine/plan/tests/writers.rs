//! Which streaming plans' long units go through the line writers
//! ([`takes_lines`]): not whole regions ([`streams_regions`]), nor long
//! units of whole vectors ([`streams_long_units`]), nor rows the source's
//! order scatters ([`scatters_rows`]); and rows gathered from units far
//! apart, which do ([`gathers_far_apart`]).

use super::super::compile::*;
use super::super::rules::streams_continued_rows;
use super::super::writers::*;
use super::{compile_c, compile_f32, counts_and_strides, l, nhwc, nhwc_padded};
use crate::engine::geometry::{k, o, Factor, Geometry, SpaceAxis};
use crate::engine::kernels::nest::{Loop, Window};

/// Units of whole 16-byte vectors from 16 KiB stream as regions; shorter
/// ones, and units of other lengths, do not.
#[test]
fn whole_vector_units_from_16_kib_stream_as_regions() {
    for (unit, regions) in
        [(16 << 10, true), ((16 << 10) - 16, false), ((16 << 10) + 16, true), ((16 << 10) + 8, false), (1 << 20, true)]
    {
        assert_eq!(streams_regions(unit), regions, "{unit}");
    }
}

/// Streaming NHWC depth-to-space by 4 of `c` float32 channels out: each
/// input row's units of `16 * c` bytes go one to each of 4 output rows,
/// an input pixel's 4 units innermost (each continuing the source).
/// Through the line writers under 4 KiB; from 4 KiB, each unit streams by
/// itself in the source's order ([`streams_long_units`]; from 16 KiB, as
/// a region), the loops the same either way. Units short enough to stream
/// one by one (256 bytes, 16 channels) stream instead as a grid whose
/// rows take 8 of them, one from each of 8 input pixels
/// (`streams_continued_rows`).
#[test]
fn whole_vector_units_from_4_kib_stream_by_themselves() {
    for (c, lines) in [(32, true), (255, true), (256, false), (1023, false), (1024, false)] {
        let (space, block) = ([1, 32, 32, c], [1, 8, 8, 16 * c]);
        let p = compile_f32(&nhwc(space, 4, false), Direction::Backward, &space, &block, true);
        assert!(p.nt && !p.tile, "{c} channels");
        assert_eq!((p.unit, p.lines), (16 * c, lines), "{c} channels");
        let unit = 16 * c as isize;
        let loops = vec![(8, 32 * unit, 32 * unit), (8, 4 * unit, unit), (4, unit, 8 * unit)];
        assert_eq!(counts_and_strides(&p.loops), loops, "{c} channels");
    }
    let (space, block) = ([1, 32, 32, 16], [1, 8, 8, 256]);
    let p = compile_f32(&nhwc(space, 4, false), Direction::Backward, &space, &block, true);
    assert!(p.nt && !p.tile && !p.lines && p.unit == 256, "{p:?}");
    assert!(streams_continued_rows(&p.loops, p.unit, p.fill), "{p:?}");
    assert_eq!(counts_and_strides(&p.loops), vec![(8, 8192, 8192), (4, 256, 2048), (8, 1024, 256)]);
}

/// Units from 4 KiB that are not whole 16-byte vectors (3-byte channels:
/// 4,104 bytes; 4,128 are), and whole-vector ones in plans that carry a
/// window (NHWC space-to-batch by 2 padded by 1 at each end), go through
/// the line writers.
#[test]
fn long_units_of_other_lengths_or_with_windows_go_through_the_line_writers() {
    for (c, lines) in [(342, true), (344, false)] {
        let (space, block) = ([1, 32, 32, c], [1, 8, 8, 16 * c]);
        let p = compile_c(&nhwc(space, 4, false), Direction::Backward, 3, &space, &block, true);
        assert!(p.nt && !p.tile, "{c} channels");
        assert_eq!((p.unit, p.lines), (12 * c, lines), "{c} channels");
    }
    for c in [1024, 2048] {
        let (space, block) = ([2, 14, 14, c], [8, 8, 8, c]);
        let p = compile_f32(&nhwc_padded(space, 2, [1, 1], true), Direction::Forward, &space, &block, true);
        assert!(p.nt && !p.tile && p.loops.iter().any(|l| l.window.is_some()), "{c} channels");
        assert_eq!((p.unit, p.lines), (4 * c, true), "{c} channels");
    }
}

/// Streaming TF batch-to-space-nd by 3 of one spatial axis of 64 units of
/// `c` float32 channels: each output row gathers a unit from each of the
/// 3 batches. Units of 1,536 bytes (rows of 4,608) go through the line
/// writers, the row innermost; of 4 KiB, each a run, they stream by
/// themselves, in the source's order (each batch's units in turn): the
/// bound of [`streams_long_units`] on a gather.
#[test]
fn gathered_units_of_4_kib_stream_in_the_source_order() {
    let op = "t";
    for (c, lines) in [(384, true), (1024, false)] {
        let space = [SpaceAxis::plain(1), SpaceAxis::new(op, 3 * 64, 0, 0, 3).unwrap(), SpaceAxis::plain(c as u64)];
        let groups: [&[Factor]; 3] = [&[k(1), o(0)], &[o(1)], &[o(2)]];
        let g = Geometry::new(op, &space, &groups).unwrap();
        let p = compile_f32(&g, Direction::Backward, &[1, 3 * 64, c], &[3, 64, c], true);
        let unit = 4 * c as isize;
        assert!(p.nt && !p.tile, "{c} channels");
        assert_eq!((p.unit, p.lines), (4 * c, lines), "{c} channels");
        let (batches, row) = ((3, 64 * unit, unit), (64, unit, 3 * unit));
        let loops = if lines { vec![row, batches] } else { vec![batches, row] };
        assert_eq!(counts_and_strides(&p.loops), loops, "{c} channels");
    }
}

/// The streaming plan of an NHWC space-to-batch by `b` of `rows` x `cols`
/// blocks (2 images) of `c` float32 channels.
fn streamed_s2b(b: usize, rows: usize, cols: usize, c: usize) -> CopyPlan {
    let space = [2, rows * b, cols * b, c];
    let block = [2 * b * b, rows, cols, c];
    let p = compile_f32(&nhwc(space, b, true), Direction::Forward, &space, &block, true);
    assert!(p.nt && !p.tile, "{c} channels by {b}");
    p
}

/// Streaming NHWC space-to-batch of 256-byte units: by 2 and 3, each
/// source row's units go in turn to 2 or 3 destination rows of 3 KiB,
/// which the source's order scatters ([`scatters_rows`]: the rows' loop
/// inside, streamed as a grid); by 4, and rows of 1 KiB by 2 (shorter
/// than `rules::MAX_JOINED_ROW`), through the line writers.
#[test]
fn rows_of_two_or_three_block_columns_scatter() {
    for (b, cols, scatters) in [(2, 12, true), (3, 12, true), (4, 12, false), (2, 4, false)] {
        let p = streamed_s2b(b, 12, cols, 64);
        assert_eq!((p.unit, p.lines, p.gathered), (256, !scatters, false), "by {b}, {cols} columns");
        if scatters {
            let [.., x, y] = p.loops[..] else { panic!("by {b}: {} loops", p.loops.len()) };
            assert_eq!((x.count, x.ss, x.ds), (cols, 256 * b as isize, 256), "by {b}");
            assert_eq!((y.count, y.ss), (b, 256), "by {b}");
        }
    }
}

/// Rows gathered into the destination whose units are 9 and more apart
/// in the source; fewer apart, they are not.
#[test]
fn gathered_rows_of_units_9_apart_are_far_apart() {
    for (apart, far) in [(1, false), (8, false), (9, true), (16, true)] {
        let loops = [l(10, 1 << 20, 1 << 20), l(20, 128 * apart, 128)];
        assert_eq!(gathers_far_apart(&loops, 128), far, "{apart} apart");
        let loops = [l(10, 1 << 20, 1 << 20), l(20, 128 * apart, 129)];
        assert_eq!(gathers_far_apart(&loops, 129), far && apart == 16, "{apart} apart of 129 bytes");
        // Units that land apart in the destination are not a gathered row.
        let loops = [l(10, 1 << 20, 1 << 20), l(20, 128 * apart, 256)];
        assert!(!gathers_far_apart(&loops, 128), "{apart} apart, landing apart");
    }
}

/// Streaming NHWC space-to-batch of 32 float32 channels (128-byte units)
/// by `b`: each destination row gathers every `b`-th unit of a source
/// row. By 8, row by row; by 9 and 12, through the line writers, in the
/// source's order (each source row's units in turn to `b` streams).
#[test]
fn rows_gathered_far_apart_go_through_the_line_writers() {
    for (b, far) in [(8, false), (9, true), (12, true)] {
        let p = streamed_s2b(b, 4, 16, 32);
        assert_eq!((p.unit, p.lines), (128, far), "by {b}");
        let last = p.loops[p.loops.len() - 1];
        let (ss, ds) = if far { (128, (2 * 4 * 16 * 32 * 4) as isize) } else { (128 * b as isize, 128) };
        assert_eq!((last.ss, last.ds), (ss, ds), "by {b}");
    }
}

/// Streaming NHWC space-to-batch of `c` float32 channels by `b`: units of
/// 64 bytes read 11 or more apart go through the line writers, in the
/// source's order; 10 apart, or units of 32 bytes, do not.
#[test]
fn units_from_64_bytes_read_11_apart_go_through_the_line_writers() {
    for (c, b, lines) in [(16, 10, false), (16, 11, true), (16, 16, true), (8, 16, false), (24, 11, true)] {
        let p = streamed_s2b(b, 2, 16, c);
        assert_eq!((p.unit, p.lines), (4 * c, lines), "{c} channels by {b}");
    }
}

/// Which units [`takes_lines`] takes, the innermost loop reading them
/// `apart` units apart: from 128 bytes, however apart; from 64 bytes, 11
/// or more apart; not whole regions, nor whole vectors from 4 KiB, but in
/// loops that carry a window.
#[test]
fn lines_take_units_from_128_bytes_or_64_read_11_apart() {
    for (unit, apart, takes) in [
        (128, 1, true),
        (127, 10, false),
        (127, 11, true),
        (64, 11, true),
        (63, 16, false),
        (48, 16, false),
        (4080, 1, true),
        (4096, 1, false),
        (4104, 1, true),
        (16 << 10, 1, false),
    ] {
        for ss in [(unit * apart) as isize, -((unit * apart) as isize)] {
            let loops = [l(10, 1 << 30, 1 << 30), l(20, ss, unit as isize)].into_iter().collect();
            assert_eq!(takes_lines(&loops, unit), takes, "{unit} bytes {ss} apart");
        }
    }
    // Not a row gathered into the destination: its units land apart.
    let loops = [l(10, 1 << 30, 1 << 30), l(20, 64 * 16, 64 * 20)].into_iter().collect();
    assert!(!takes_lines(&loops, 64));
    // Whole vectors from 4 KiB in loops that carry a window (a crop of the
    // first row's first unit).
    let window = Some(Window { outer: Some(0), oc: 20, ic: 1, lo: 1, hi: 200 });
    let loops = [l(10, 1 << 30, 1 << 30), Loop { window, ..l(20, 4096, 4096) }].into_iter().collect();
    assert!(takes_lines(&loops, 4096));
}
