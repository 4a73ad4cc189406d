//! The blocked transpose's tests: every kernel against a unit-by-unit
//! oracle, per ISA.

use super::takes::*;
use super::*;

/// The oracle: unit by unit, with plain indexing.
fn naive(rows: usize, cols: usize, src: &[u8], from: Rows2, to: Rows2, unit: usize, len: usize) -> Vec<u8> {
    let mut dst = vec![0xA5u8; len];
    for r in 0..rows {
        for c in 0..cols {
            let a = from.at(r) as usize + c * unit;
            let b = to.at(c) as usize + r * unit;
            dst[b..b + unit].copy_from_slice(&src[a..a + unit]);
        }
    }
    dst
}

/// Every kernel set this machine runs: portable, the baseline, and the
/// widest (AVX-512 with masked edges where the CPU has it).
fn isas() -> [Isa; 3] {
    [Isa::Portable, Isa::baseline(), Isa::detect()]
}

/// Runs the kernel on a destination `shift` bytes past a line boundary
/// (at 0, `nt` can stream whole lines) and compares it, gaps included,
/// with the oracle. Source rows of `inner` a repetition, destination
/// rows of `dinner`; `pad` and `dpad` bytes between rows and between
/// repetitions.
#[allow(clippy::too_many_arguments)]
fn check(
    rows: usize,
    cols: usize,
    unit: usize,
    inner: usize,
    dinner: usize,
    pad: usize,
    dpad: usize,
    isa: Isa,
    nt: bool,
    shift: usize,
) {
    check_from((rows, cols, unit), (inner, dinner), (pad, dpad), (isa, nt), shift, None);
}

/// [`check`] (its arguments in pairs and threes: `(rows, cols, unit)`,
/// `(inner, dinner)`, `(pad, dpad)`, `(isa, nt)`) with the source
/// `src_shift` bytes past a line boundary (`None`: wherever its vector's
/// allocation is).
fn check_from(
    (rows, cols, unit): (usize, usize, usize),
    (inner, dinner): (usize, usize),
    (pad, dpad): (usize, usize),
    (isa, nt): (Isa, bool),
    shift: usize,
    src_shift: Option<usize>,
) {
    let from =
        Rows2 { inner, stride: (cols * unit + pad) as isize, outer: ((cols * unit + pad) * inner + pad) as isize };
    let ds = rows * unit + dpad;
    let to = Rows2 { inner: dinner, stride: ds as isize, outer: (ds * dinner + dpad) as isize };
    let src_len = from.at(rows - 1) as usize + cols * unit;
    let len = to.at(cols - 1) as usize + rows * unit + 64;
    let bytes: Vec<u8> = (0..src_len + 2 * LINE).map(|i| (i * 7 + i / 251) as u8).collect();
    let at = src_shift.map_or(0, |s| bytes.as_ptr().align_offset(LINE) + s);
    let src = &bytes[at..at + src_len];
    let want = naive(rows, cols, src, from, to, unit, len);
    // Fetched ahead (the tensors past the caches) or not: the same bytes.
    for fetch in [false, true] {
        let mut buf = vec![0xA5u8; len + 2 * LINE];
        let off = buf.as_ptr().align_offset(LINE) + shift;
        let got = &mut buf[off..off + len];
        let mx = Matrix { rows, cols, unit, src: src.as_ptr(), from, dst: got.as_mut_ptr(), to };
        // SAFETY: both matrices lie inside their buffers (offsets as built).
        unsafe { transpose(mx, isa, nt, fetch) };
        let what = format!(
            "rows {rows} cols {cols} unit {unit} inner {inner}/{dinner} pad {pad}/{dpad} {isa:?} nt {nt} fetch {fetch} \
             shift {shift} source at {src_shift:?}"
        );
        assert!(got == want.as_slice(), "{what}");
    }
}

#[test]
fn every_unit_size_shape_and_kernel_matches_the_oracle() {
    for unit in [1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32, 40] {
        let (br, bc) = (block_rows(unit), block_cols(unit));
        let m = micro_side(unit).max(1);
        // Edges of a square on both sides, narrow (unit by unit) and wide
        // (squares without masks, reading the last row's units exactly).
        let edges = (m + m / 2 + 1, m + m / 2 + 3);
        let shapes =
            [(1, 1), (m, m), (m + 1, m + 2), edges, (br, bc), (br - 1, bc + 1), (2 * br + 3, bc + m + 1), (3, 200)];
        for (rows, cols) in shapes {
            for isa in isas() {
                for (pad, dpad) in [(0, 0), (64, 64), (5, 15)] {
                    check(rows, cols, unit, rows, cols, pad, dpad, isa, false, 0);
                }
                check(rows, cols, unit, rows, cols, 0, 0, isa, true, 0);
            }
        }
    }
}

#[test]
fn rows_of_two_loops() {
    // A tile of 7 or 10 rows (or columns) repeated: squares straddle
    // the repetitions, on either side.
    for unit in [1, 2, 4, 8, 3] {
        for (inner, reps, other) in [(7, 9, 5), (10, 40, 13), (16, 3, 16), (5, 200, 6)] {
            for isa in isas() {
                check(inner * reps, other, unit, inner, other, 3, 0, isa, false, 0);
                check(inner * reps, other, unit, inner, other, 0, 64, isa, true, 0);
                check(other, inner * reps, unit, other, inner, 0, 3, isa, false, 0);
                check(other, inner * reps, unit, other, inner, 64, 0, isa, true, 0);
            }
        }
    }
}

#[test]
fn streamed_blocks_of_whole_lines() {
    // Destination strides of whole lines: full blocks go through the stage.
    for unit in [1, 2, 4, 8, 16] {
        let (br, bc) = (block_rows(unit), block_cols(unit));
        let (rows, cols) = (3 * br, 2 * bc + 5);
        assert!((rows * unit).is_multiple_of(LINE));
        for isa in isas() {
            check(rows, cols, unit, rows, cols, 0, 0, isa, true, 0);
        }
    }
}

#[test]
fn streamed_rows_that_start_inside_a_line() {
    // Destination rows of whole lines that start `shift` bytes into
    // one: the first step of every strip stops at the line boundary,
    // the squares after it store whole lines (a shift that is no whole
    // number of units: no streaming).
    for unit in [1, 2, 3, 4, 6, 8, 12, 16, 32] {
        let side = wide_side(unit);
        for rows in [5 * side, 5 * side + 3, 3] {
            let dpad = (LINE - rows * unit % LINE) % LINE;
            for shift in [0, 4, 8, 16, 24, 40, 60, 6] {
                for cols in [side, 3 * side + 1, 600 / unit] {
                    for isa in Isa::every_runnable() {
                        check(rows, cols, unit, rows, cols, 0, dpad, isa, true, shift);
                        check(rows, cols, unit, 2, cols, 0, dpad, isa, true, shift);
                    }
                }
            }
        }
    }
}

#[test]
fn streamed_rows_each_shifted_in_their_lines() {
    // Destination rows a whole number of units apart but not of lines
    // (each row starts at its own place in a line: `wide::shifted`),
    // the first `shift` bytes into one: rows around a square, a chunk
    // (1,024) and a chunk's last partial step; columns around a strip;
    // rows of two loops. A shift that is no whole number of units goes
    // through the cache.
    for unit in [1, 2, 4, 8, 16, 32] {
        let n = wide_side(unit);
        let strip = 512 / unit / n * n;
        for (rows, dpad) in [(n, unit), (3 * n + 1, 3 * unit), (1024 + n, unit), (1024 + 2 * n + 3, 0), (2048, unit)] {
            for cols in [n, strip + 1, 2 * strip + n + 1] {
                if rows * cols > 128 * 1024 {
                    continue;
                }
                for shift in [0, 4, 8, 32, 2, 3] {
                    for isa in Isa::every_runnable() {
                        check(rows, cols, unit, rows, cols, 0, dpad, isa, true, shift);
                    }
                }
                check(rows, cols, unit, rows, 5, 0, dpad, Isa::detect(), true, 8);
            }
        }
    }
}

/// `shifts_packed`: packed units in rows of 1 KiB and more, at most an
/// eighth of the columns outside whole squares (16 units of 3 bytes, 8 of
/// 6, 4 of 12).
#[test]
fn packed_units_shift_in_long_rows_of_mostly_whole_squares() {
    // 342 x 3 bytes is 1,026, 341 x 3 1,023.
    assert!(shifts_packed(342, 64, 3) && !shifts_packed(341, 64, 3));
    // 9 of 73 columns outside squares of 16; 10 of 74.
    assert!(shifts_packed(342, 73, 3) && !shifts_packed(342, 74, 3));
    assert!(!shifts_packed(342, 40, 3) && !shifts_packed(342, 63, 3));
    assert!(shifts_packed(171, 18, 6) && !shifts_packed(171, 19, 6) && !shifts_packed(170, 32, 6));
    assert!(shifts_packed(86, 9, 12) && !shifts_packed(86, 10, 12) && !shifts_packed(85, 16, 12));
    // Other units do not.
    assert!(!shifts_packed(1000, 64, 4) && !shifts_packed(1000, 64, 8));
}

/// Packed units (3, 6 and 12 bytes, with VBMI) streamed into rows that
/// start anywhere: four squares a step, each row's 192 bytes shifted by
/// bytes into three whole lines (`wide::shifted_packed`). Rows on both
/// sides of `MIN_SHIFTED_ROW` (under it, through the cache), of a step
/// and of a chunk (1,024), with a last partial step of one square and
/// less (after whole steps, and alone in a chunk); columns around a
/// square and a streamed strip (32), and too few in whole squares
/// (through the cache); destination rows a byte, a unit and 7 bytes
/// apart past their length; rows of two loops.
#[test]
fn streamed_packed_rows_go_four_squares_a_step() {
    for unit in [3, 6, 12] {
        let n = wide_side(unit);
        let step = 4 * n;
        let least = MIN_SHIFTED_ROW.div_ceil(unit);
        let long = least.next_multiple_of(step);
        let rows_around =
            [least - 1, least, long - 1, long, long + n, long + step - 1, 1024 + step, 1024 + 3, 2048 + n + 1];
        for rows in rows_around {
            // (Of `5 * n / 2` columns, a fifth outside whole squares.)
            for cols in [n, n + 1, 5 * n / 2, 33, 65, 2 * 32 + n + 1] {
                for (shift, dpad) in [(0, 0), (1, 1), (5, unit), (32, 7), (63, 0)] {
                    for isa in Isa::every_runnable() {
                        check(rows, cols, unit, rows, cols, 0, dpad, isa, true, shift);
                    }
                }
                check(rows, cols, unit, rows, 5, 0, 3, Isa::detect(), true, 3);
            }
        }
    }
}

#[test]
fn steps_are_step_by() {
    for (start, end, step) in [(0, 0, 1), (0, 1, 8), (0, 16, 8), (0, 17, 8), (3, 20, 5), (5, 3, 2), (0, 1000, 512)] {
        let want: Vec<_> = (start..end).step_by(step).collect();
        assert_eq!(steps(start, end, step).collect::<Vec<_>>(), want, "{start}..{end} by {step}");
    }
    // Steps that would pass `usize::MAX` end there.
    assert_eq!(steps(usize::MAX - 3, usize::MAX, 2).collect::<Vec<_>>(), [usize::MAX - 3, usize::MAX - 1]);
}

#[test]
fn rows_walk_to_each_rows_offset() {
    // Runs of the inner loop cut at any row: every offset is the row's own.
    for rows in [
        Rows2::strided(600, 26),
        Rows2::strided(600, -64),
        Rows2 { inner: 7, stride: 13, outer: 1000 },
        Rows2 { inner: 86, stride: 26, outer: 29068 },
        Rows2 { inner: 1, stride: 5, outer: -77 },
    ] {
        for (first, n) in [(0, 0), (0, 1), (0, 600), (5, 9), (6, 1), (85, 260), (599, 1), (3, 512)] {
            let mut seen = Vec::new();
            rows.walk(first, n, |i, at| seen.push((i, at)));
            let want: Vec<_> = (0..n).map(|i| (i, rows.at(first + i))).collect();
            assert_eq!(seen, want, "{rows:?} from {first}, {n} rows");
        }
    }
}

#[test]
fn rows_count_their_pages() {
    assert_eq!(Rows2::strided(2000, 4096).pages(2000), 2000);
    assert_eq!(Rows2::strided(2000, -9000).pages(2000), 2000);
    assert_eq!(Rows2::strided(2000, 64).pages(2000), 32);
    assert_eq!(Rows2::strided(2000, 0).pages(2000), 1);
    // 200 repetitions of 10 rows a line apart, each on its own page.
    assert_eq!(Rows2 { inner: 10, stride: 64, outer: 1 << 20 }.pages(2000), 200);
    assert_eq!(Rows2 { inner: 10, stride: 4096, outer: 1 << 20 }.pages(2000), 2000);
}

#[test]
fn rows_a_page_apart_go_in_chunks() {
    // Source rows a page or more apart, more of them than CHUNK_ROWS:
    // the blocks go a chunk of rows at a time, and the next block
    // fetched crosses the chunks' and the columns' boundaries. Rows
    // around a chunk's end, columns around a block's.
    for unit in [1, 2, 3, 4, 8, 16] {
        let (br, bc) = (block_rows(unit), block_cols(unit));
        let chunk = (CHUNK_ROWS / br).max(1) * br;
        let pad = PAGE - bc * unit % PAGE;
        for rows in [CHUNK_ROWS.max(chunk) + 1, chunk + br + 3, 2 * chunk + 1] {
            for cols in [bc, bc + 1] {
                assert!(Rows2::strided(rows, (cols * unit + pad) as isize).pages(rows) > CHUNK_ROWS);
                for isa in isas() {
                    check(rows, cols, unit, rows, cols, pad, 0, isa, false, 0);
                }
            }
        }
    }
}

#[test]
fn full_line_squares_around_every_boundary() {
    // Sides around a square (N), a strip's columns (512 bytes, 2,048 for
    // AVX2's packed squares, or the whole squares in them) and a chunk's
    // rows (1024).
    for unit in [1, 2, 3, 4, 6, 8, 12, 16, 32] {
        let n = wide_side(unit);
        let (strip, wide) = (512 / unit / n * n, 2048 / unit / n * n);
        for rows in [1, n - 1, n, n + 1, 2 * n + 3, 1024 + n + 1] {
            for cols in [1, n - 1, n, n + 1, strip - 1, strip + n + 1, wide - 1, wide + n + 1] {
                if rows * cols > 64 * 1024 {
                    continue;
                }
                // Every kernel set: AVX2's squares (without masks) too
                // where the CPU has AVX-512.
                for isa in Isa::every_runnable() {
                    check(rows, cols, unit, rows, cols, 0, 0, isa, false, 0);
                    check(rows, cols, unit, rows, cols, 3, 7, isa, false, 0);
                    check(rows, cols, unit, rows, cols, 0, 0, isa, true, 0);
                }
            }
        }
    }
}

/// Streamed full-line squares go in blocks of steps, the next block
/// fetched ahead, and, where every source row starts at one offset in its
/// line and is a page or longer, from the source's first line boundary
/// (the lead columns a strip of their own): rows around a block's (8 KiB
/// of 512-byte strips: 16; 32, two blocks) and a chunk's, columns on both
/// sides of a page's worth and past a strip; sources at every offset in a line
/// (a whole number of units from its boundary or not), with row strides
/// of whole lines and not, in repetitions too; every kernel set, streamed
/// and through the cache.
#[test]
fn streamed_squares_go_in_blocks_from_the_sources_line_boundary() {
    for unit in [1, 2, 4, 8, 16, 32] {
        let n = wide_side(unit);
        let page = 4096 / unit;
        for (rows, cols) in
            [(31, page), (32, page + 1), (33, page + n + 1), (3 * 32 + 5, page - 1), (2 * n + 3, page + 512 / unit + 3)]
        {
            // Row strides of whole lines, and not.
            let lines = (LINE - cols * unit % LINE) % LINE;
            for pad in [lines, lines + 8] {
                for src_shift in [0, unit, 16, 40, LINE - unit, 3] {
                    for isa in Isa::every_runnable() {
                        check_from((rows, cols, unit), (rows, cols), (pad, 0), (isa, true), 0, Some(src_shift));
                        check_from((rows, cols, unit), (5, cols), (pad, 0), (isa, true), 16, Some(src_shift));
                    }
                }
                let isa = Isa::detect();
                check_from((rows, cols, unit), (rows, cols), (pad, 0), (isa, false), 0, Some(unit));
            }
        }
        // A chunk and a block more: the last block's next is the next chunk's first.
        let (rows, cols) = (CHUNK_ROWS + 33, page + 1);
        let pad = (LINE - cols * unit % LINE) % LINE;
        check_from((rows, cols, unit), (rows, cols), (pad, 0), (Isa::detect(), true), 0, Some(16));
    }
}

/// AVX2's packed squares' edges go as whole squares over the ones before
/// them: sides of one square to a few squares and a few units; a chunk's
/// last rows fewer than a square (its square reaching into the chunk
/// before); a strip's last columns fewer than a square, and a last strip
/// narrower than one (strips of 16 columns past 256 KiB, of 2,048 bytes
/// below); rows and columns with gaps between them, and in repetitions.
#[cfg(target_arch = "x86_64")]
#[test]
fn avx2_packed_squares_overlap_their_edges() {
    if Isa::detect() < Isa::Avx2 {
        return;
    }
    for unit in [3, 6] {
        let n = wide_side(unit);
        let wide = 2048 / unit / n * n;
        let sides = [
            (n, n),
            (n + 1, n),
            (n, n + 1),
            (2 * n - 1, 2 * n + 1),
            (3 * n + 5, 2 * n + 7),
            (CHUNK_ROWS + 5, n + 3),
            (CHUNK_ROWS + n - 1, 100),
            (n + 2, wide + 5),
            (2 * n + 1, 2 * wide + n - 1),
        ];
        for (rows, cols) in sides {
            assert!(in_squares(rows, cols, unit, Isa::Avx2, false), "{rows} x {cols}");
            check(rows, cols, unit, rows, cols, 0, 0, Isa::Avx2, false, 0);
            check(rows, cols, unit, rows, cols, 3, 7, Isa::Avx2, false, 5);
            check(rows, cols, unit, 5, 3, 1, 2, Isa::Avx2, false, 0);
        }
    }
}

/// Through the cache, a matrix of 256 KiB and 64 columns or more goes in
/// strips of 16 destination rows (32 of 2-byte units, 64 of bytes), not 512
/// bytes, except in AVX2's packed squares, which keep their strips of 2,048
/// bytes: columns on both sides of 64, past whole narrow strips, and past a
/// whole 2,048-byte strip of squares by half a square and one (the last
/// strip then narrower than a square), rows on both sides of the 256 KiB,
/// every kernel set, through the cache and asked to stream (where its rows
/// are not whole lines: through the cache again, or shifted into them).
#[test]
fn full_line_squares_past_256_kib_go_in_strips_of_16_rows() {
    for unit in [1, 2, 3, 4, 6, 8, 12, 16] {
        let side = wide_side(unit);
        let (strip, full) = (16usize.next_multiple_of(side), 2048 / unit / side * side);
        for cols in [63, 64, 64 + strip + 1, full + side / 2 + 1] {
            // The most rows under 256 KiB, and one more.
            let under = (256usize << 10).div_ceil(cols * unit) - 1;
            for rows in [under, under + 1] {
                for isa in Isa::every_runnable() {
                    check(rows, cols, unit, rows, cols, 0, 0, isa, false, 0);
                    check(rows, cols, unit, rows, cols, 5, 3, isa, true, 0);
                }
            }
        }
    }
}

/// `squares_for_crowded_rows`: float16 matrices of at most 512 rows
/// whose block's lines crowd into one or two first-level sets (rows a
/// multiple of 2 KiB apart) go in full-line squares through the cache,
/// with AVX-512's masks; taller ones, rows 1 KiB or a line past a page
/// apart, streamed, other units, rows of two loops inside a block, and
/// AVX2's kernels do not. Every one against the oracle, each kernel set.
#[test]
fn float16_rows_crowding_the_first_level_go_in_full_line_squares() {
    // Where the first level has sets of 64-byte lines in ways of 4 KiB
    // (every x86_64 core of the last decade).
    let l1 = crate::engine::arch::cache::first_level();
    #[cfg(target_arch = "x86_64")]
    if (l1.line, l1.sets) == (64, 64) {
        let mx = |rows: usize, cols: usize, stride: isize, inner: usize| Matrix {
            rows,
            cols,
            unit: 2,
            src: (1usize << 20) as *const u8,
            from: Rows2 { inner, stride, outer: stride * inner as isize + 64 },
            dst: ptr::null_mut(),
            to: Rows2::strided(cols, 2 * rows as isize),
        };
        let squares = |m: Matrix, isa: Isa, nt: bool| squares_for_crowded_rows(&m, isa, nt);
        assert!(!squares(mx(512, 64, 4096, 512), Isa::Avx2, false));
        let isa = Isa::detect();
        if masks(isa) {
            assert!(squares(mx(512, 64, 4096, 512), isa, false));
            assert!(squares(mx(32, 32, -8192, 32), isa, false) && squares(mx(300, 40, 2048, 300), isa, false));
            assert!(!squares(mx(513, 64, 4096, 513), isa, false));
            assert!(!squares(mx(512, 64, 4096, 512), isa, true));
            assert!(!squares(mx(300, 64, 1024, 300), isa, false) && !squares(mx(300, 64, 4160, 300), isa, false));
            assert!(!squares(mx(300, 64, 4096, 100), isa, false) && squares(mx(300, 64, 4096, 256), isa, false));
            assert!(!squares(mx(31, 64, 4096, 31), isa, false) && !squares(mx(64, 31, 4096, 64), isa, false));
            assert!(!squares(Matrix { unit: 4, ..mx(64, 64, 4096, 64) }, isa, false));
        }
    }
    // Against the oracle: rows 4 and 8 KiB apart (2,048 units; 1,000 and
    // 40 units and a gap), 2 KiB and 1 KiB, and 4,160 bytes.
    for rows in [32, 257, 512, 513] {
        for (cols, pad) in [(2048, 0), (1000, 2096), (40, 8112), (1024, 0), (512, 0), (2080, 0)] {
            for isa in isas() {
                check(rows, cols, 2, rows, cols, pad, 6, isa, false, 0);
            }
        }
    }
    // Rows of two loops whose first block is in the first (256 of 300),
    // and not (100): the squares, and the blocked transpose.
    for inner in [256, 100] {
        for isa in isas() {
            check(300, 2048, 2, inner, 2048, 0, 6, isa, false, 0);
        }
    }
}

/// Bytes go in 64 x 64 full-line squares wherever AVX-512's masks run,
/// through the cache and streamed, both sides 64 or more (the blocked
/// transpose's 16 x 16 squares otherwise): against the oracle with
/// partial squares at both edges, streamed into rows that start inside
/// their lines (shifted into them with VBMI, from 1 KiB), every kernel
/// set.
#[test]
fn bytes_go_in_squares_of_64_with_masks() {
    for isa in Isa::every_runnable() {
        assert_eq!(in_squares(64, 64, 1, isa, false), masks(isa), "{isa:?}");
        assert_eq!(in_squares(64, 64, 1, isa, true), masks(isa), "{isa:?}");
        assert!(!in_squares(63, 1000, 1, isa, false) && !in_squares(1000, 63, 1, isa, true));
        for (rows, cols) in [(64, 64), (127, 65), (1100, 200), (70, 1030)] {
            check(rows, cols, 1, rows, cols, 0, 0, isa, false, 0);
            check(rows, cols, 1, rows, cols, 5, 3, isa, true, 7);
            check(rows, cols, 1, 50, cols, 0, 64, isa, true, 0);
        }
        // Shifted over three strips of 256 columns (with VBMI), the last
        // partial, and a last step of 12 rows.
        check(1100, 600, 1, 1100, 600, 0, 3, isa, true, 7);
    }
}

#[test]
fn full_line_squares_need_a_whole_square_on_both_sides() {
    assert!(square_sides(32, 32, 2, Isa::Sse2));
    assert!(!square_sides(1000, 31, 2, Isa::Sse2));
    assert!(!square_sides(31, 1000, 2, Isa::Sse2));
    assert!(
        square_sides(16, 16, 4, Isa::Sse2) && square_sides(8, 8, 8, Isa::Sse2) && square_sides(4, 4, 16, Isa::Sse2)
    );
    assert!(!square_sides(16, 15, 4, Isa::Sse2));
    assert!(
        square_sides(16, 16, 3, Isa::Sse2) && square_sides(8, 8, 6, Isa::Sse2) && square_sides(4, 4, 12, Isa::Sse2)
    );
    assert!(
        !square_sides(16, 15, 3, Isa::Sse2)
            && !square_sides(7, 100, 6, Isa::Sse2)
            && !square_sides(100, 3, 12, Isa::Sse2)
    );
    assert!(
        square_sides(2, 2, 32, Isa::Sse2)
            && !square_sides(1, 100, 32, Isa::Sse2)
            && !square_sides(100, 1, 32, Isa::Sse2)
    );
    // Bytes in squares of 64.
    assert!(
        square_sides(64, 64, 1, Isa::Sse2)
            && !square_sides(63, 100, 1, Isa::Sse2)
            && !square_sides(100, 63, 1, Isa::Sse2)
    );
    assert!(!square_sides(100, 100, 5, Isa::Sse2) && !square_sides(100, 100, 24, Isa::Sse2));
    // Without masks, AVX2's squares of 4- and 8-byte units: more than two
    // squares each way.
    if cfg!(target_arch = "x86_64") {
        assert!(square_sides(33, 33, 4, Isa::Avx2) && square_sides(17, 1000, 8, Isa::Avx2));
        assert!(!square_sides(32, 1000, 4, Isa::Avx2) && !square_sides(1000, 32, 4, Isa::Avx2));
        assert!(!square_sides(16, 1000, 8, Isa::Avx2) && !square_sides(1000, 16, 8, Isa::Avx2));
        assert!(square_sides(32, 32, 2, Isa::Avx2) && square_sides(4, 4, 16, Isa::Avx2));
    }
}

/// `takes_squares`: float64, and with VBMI packed 6- and 12-byte units,
/// take sides of at least a square and 8 units that fill two thirds of
/// their squares' lanes (8 x 8 squares of 6 and 8 bytes, 4 x 4 of 12),
/// with AVX-512's masks; streamed only into whole lines, and packed units
/// never; no other unit.
#[test]
fn squares_take_short_sides_that_fill_two_thirds_of_their_lanes() {
    // (unit, sides taken, sides not) for each unit the rule takes.
    let sides: [(usize, &[usize], &[usize]); 3] = [
        (8, &[8, 11, 12, 13, 14, 15], &[1, 7, 9, 10]),
        (6, &[8, 11, 12, 13, 14, 15], &[1, 6, 7, 9, 10]),
        (12, &[8, 9, 10, 11, 12, 13, 15], &[1, 3, 4, 5, 6, 7]),
    ];
    for isa in Isa::every_runnable() {
        for (unit, taken, not) in sides {
            // Partial squares need AVX-512's masks (not AVX2's), and packed
            // units VBMI's byte permutes.
            let squares = masks(isa) && full_lines(unit, isa);
            assert_eq!(squares, masks(isa) && (unit == 8 || isa >= Isa::Avx512Vbmi), "unit {unit}, {isa:?}");
            for &n in taken {
                assert_eq!(takes_squares(n, 100, unit, isa, 688, false), squares, "unit {unit}, {n} rows, {isa:?}");
                assert_eq!(takes_squares(100, n, unit, isa, 688, false), squares, "unit {unit}, {n} cols, {isa:?}");
            }
            for &n in not {
                assert!(!takes_squares(n, 100, unit, isa, 688, false), "unit {unit}, {n} rows, {isa:?}");
                assert!(!takes_squares(100, n, unit, isa, 688, false), "unit {unit}, {n} cols, {isa:?}");
            }
            // Streamed, float64 into whole lines only; packed units never
            // (their squares store through the cache).
            let n = taken[1];
            assert_eq!(takes_squares(n, 100, unit, isa, 3 * 640, true), squares && unit == 8, "unit {unit}");
            assert!(!takes_squares(n, 100, unit, isa, 688, true), "unit {unit}");
        }
        // Other units keep `takes`'s sides.
        for unit in [1, 2, 3, 4, 16, 32] {
            assert!(!takes_squares(12, 100, unit, isa, 640, false), "unit {unit}");
        }
    }
}

#[test]
fn full_line_squares_stream_into_whole_lines_or_with_masks_whole_units() {
    let isa = Isa::detect();
    for unit in [4, 8, 16, 32] {
        // Through the cache, any stride (AVX-512's only, not of 16-byte
        // units: `cached`); streamed, whole lines (AVX2's too, for 4- and
        // 8-byte units), or with AVX-512's masks rows a whole number of
        // units apart (688 bytes: 43 of 16).
        let squares = masks(isa) || cfg!(target_arch = "x86_64") && isa >= Isa::Avx2 && unit <= 8;
        assert_eq!(takes(100, 100, unit, isa, 688, false), masks(isa) && unit != 16);
        assert_eq!(takes(100, 100, unit, isa, 640, true), squares);
        assert_eq!(takes(100, 100, unit, isa, -640, true), squares);
        // (Rows of 1 KiB: `MIN_SHIFTED_ROW`.)
        let rows = 1024 / unit;
        assert_eq!(takes(rows, 100, unit, isa, 688, true), masks(isa) && unit <= 16, "{unit}");
        assert_eq!(takes(rows, 100, unit, isa, -688, true), masks(isa) && unit <= 16, "{unit}");
        assert!(!takes(rows - 1, 100, unit, isa, 688, true));
        assert!(!takes(rows, 100, unit, isa, 690, true));
    }
    // Packed units (with VBMI) stream only shifted, by bytes: rows of 1
    // KiB and more, whatever their stride.
    for unit in [3, 6, 12] {
        assert_eq!(takes(100, 100, unit, isa, 688, false), full_lines(unit, isa));
        let rows = 1024usize.div_ceil(unit);
        for stride in [640, 688, 1001, -1001] {
            assert_eq!(takes(rows, 100, unit, isa, stride, true), masks(isa) && full_lines(unit, isa), "{unit}");
            assert!(!takes(rows - 1, 100, unit, isa, stride, true), "{unit}");
        }
    }
    // Packed units in columns mostly outside whole squares: through the
    // cache (`shifts_packed`).
    assert!(!takes(342, 40, 3, isa, 688, true));
    // The planner's streamed squares of packed units: with AVX-512's masks
    // (and VBMI) only; AVX2's packed squares never stream.
    for unit in [3, 6, 12] {
        let rows = 1024usize.div_ceil(unit);
        assert_eq!(streams_squares(rows, 100, unit, isa, 688), masks(isa) && full_lines(unit, isa), "{unit}");
        assert!(!streams_squares(rows - 1, 100, unit, isa, 688), "{unit}");
        assert!(!streams_squares(rows, 100, unit, Isa::Avx2, 688), "{unit}");
    }
    // The narrow units' blocked kernel is not affected.
    assert!(takes(100, 100, 1, isa, 688, true));
}

#[cfg(target_arch = "x86_64")]
#[test]
fn avx2_squares_take_4_and_8_byte_units_and_packed_3_and_6_without_masks() {
    for unit in 1..=64 {
        let whole = matches!(unit, 4 | 8);
        let packed = matches!(unit, 3 | 6);
        assert_eq!(halves(unit, Isa::Avx2), whole, "unit {unit}");
        assert_eq!(packed_halves(unit, Isa::Avx2), packed, "unit {unit}");
        for isa in [Isa::Sse2, Isa::Portable] {
            assert!(!halves(unit, isa) && !packed_halves(unit, isa), "unit {unit} {isa:?}");
        }
        assert_eq!(full_lines(unit, Isa::Avx2), whole || packed, "unit {unit}");
    }
    // With masks, AVX-512's own squares.
    assert_eq!(halves(8, Isa::detect()), Isa::detect() >= Isa::Avx2 && !masks(Isa::detect()));
    assert_eq!(packed_halves(3, Isa::detect()), Isa::detect() >= Isa::Avx2 && !masks(Isa::detect()));
}

/// AVX2's packed squares take tiles through the cache only, both sides a
/// square long and [`MIN_SIDE`] (their edges go as whole squares over the
/// ones before them); streamed tiles of packed units stay with the tile's
/// own kernels.
#[cfg(target_arch = "x86_64")]
#[test]
fn avx2_packed_squares_take_tiles_of_a_square_through_the_cache() {
    for unit in [3, 6] {
        let side = wide_side(unit).max(MIN_SIDE);
        assert!(super::takes(side, side, unit, Isa::Avx2, 48, false), "unit {unit}");
        assert!(super::takes(1000, side, unit, Isa::Avx2, 7, false), "unit {unit}");
        assert!(!super::takes(side - 1, 1000, unit, Isa::Avx2, 48, false), "unit {unit}");
        assert!(!super::takes(1000, side - 1, unit, Isa::Avx2, 48, false), "unit {unit}");
        assert!(!super::takes(1000, 1000, unit, Isa::Avx2, 64, true), "unit {unit}");
        assert!(!super::takes(1000, 1000, unit, Isa::Sse2, 48, false), "unit {unit}");
    }
    assert!(!super::takes(1000, 1000, 12, Isa::Avx2, 48, false));
}

#[test]
fn takes_long_tiles_and_narrow_deinterleaves_with_masks() {
    let takes = |rows, cols, unit, isa| takes(rows, cols, unit, isa, 64, false);
    assert!(takes(16, 16, 1, Isa::Portable));
    assert!(takes(16, 16, 2, Isa::Sse2));
    // A 16 x 16 square of packed units: AVX-512's, with VBMI's byte
    // permutes, or AVX2's without masks; others no kernel.
    let isa = Isa::detect();
    assert_eq!(takes(16, 16, 3, isa), isa >= Isa::Avx512Vbmi && masks(isa) || packed_halves(3, isa));
    assert!(!takes(16, 15, 3, Isa::detect()) && !takes(16, 16, 5, Isa::detect()));
    // AVX-512 without VBMI: none (asked only where the CPU runs it, as
    // `takes` requires; elsewhere `Avx512` has no masks, and AVX2's packed
    // squares take them).
    if Isa::detect() >= Isa::Avx512 {
        assert!(!takes(16, 16, 3, Isa::Avx512));
    }
    for unit in [4, 8, 16, 32] {
        // Through the cache, AVX-512's full-line squares, but of 16-byte
        // units (`cached`), which they take streamed only.
        assert_eq!(takes(1000, 1000, unit, Isa::detect()), masks(Isa::detect()) && unit != 16);
        assert_eq!(
            super::takes(1000, 1000, unit, Isa::detect(), 64, true),
            masks(Isa::detect()) || unit <= 8 && Isa::detect() >= Isa::Avx2 && cfg!(target_arch = "x86_64")
        );
        // Without masks, AVX2's squares of 4- and 8-byte units, streamed
        // only, more than two squares each way.
        let streamed = |rows, cols| super::takes(rows, cols, unit, Isa::Avx2, 64, true);
        assert!(!takes(1000, 1000, unit, Isa::Avx2));
        assert_eq!(streamed(1000, 1000), cfg!(target_arch = "x86_64") && unit <= 8);
        let two = 2 * wide_side(unit);
        assert!(!streamed(two, 1000) && !streamed(1000, two));
        assert!(!takes(1000, 1000, unit, Isa::Sse2));
        assert!(!takes(1000, 8, unit, Isa::detect()));
    }
    // 2-byte units: the full-line squares streamed only (`cached`);
    // through the cache, the blocked transpose's squares (but for rows
    // that crowd the first level's sets: `squares_for_crowded_rows`).
    assert!(!in_squares(1000, 1000, 2, Isa::detect(), false));
    assert_eq!(in_squares(1000, 1000, 2, Isa::detect(), true), masks(Isa::detect()));
    assert!(takes(1000, 1000, 2, Isa::detect()));
    assert!(!takes(15, 1000, 1, Isa::Portable));
    assert!(!takes(1000, 15, 1, Isa::Sse2));
    assert!(!takes(1000, 4, 1, Isa::detect()));
    assert!(!takes(1000, 7, 1, Isa::detect()));
    assert_eq!(takes(1000, 8, 1, Isa::detect()), masks(Isa::detect()));
    assert!(!takes(5, 1000, 1, Isa::detect()));
}
