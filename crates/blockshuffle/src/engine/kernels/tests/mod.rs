use super::copy::*;
use super::cropped::*;
use super::grid::*;
use super::lines::*;
use super::nest::*;
use super::stream::*;
use super::tile::*;
use crate::engine::arch::mem::*;
use crate::engine::arch::Isa;

mod joined;
mod streams;
mod unit_walks;

/// A grid of `n1 x n0` units of `unit` bytes, rows `ss1` apart in the
/// source and units `ss0` apart, written to a contiguous destination,
/// cropped by `window` on the row index (as the executor builds it),
/// against the window's definition unit by unit.
fn check_grid(unit: usize, n1: usize, n0: usize, window: Option<Window>) {
    let (ss0, ss1) = ((unit * n1) as isize, unit as isize);
    let (ds0, ds1) = (unit as isize, (unit * n0) as isize);
    let src: Vec<u8> = (0..unit * n0 * n1).map(|i| (i * 7 + 1) as u8).collect();
    let mut expected = vec![0u8; unit * n0 * n1];
    for i in 0..n1 {
        let (a, b) = window.map_or((0, n0), |w| w.range(i, n0));
        for k in a..b {
            let (s, d) = (i as isize * ss1 + k as isize * ss0, i as isize * ds1 + k as isize * ds0);
            expected[d as usize..d as usize + unit].copy_from_slice(&src[s as usize..s as usize + unit]);
        }
    }
    for (nt, isa) in [(false, Isa::Portable), (false, Isa::detect()), (true, Isa::detect())] {
        let g = Grid {
            n1,
            ss1,
            ds1,
            n0,
            ss0,
            ds0,
            bounds: window.map_or(Bounds::ALL, |w| w.bounds(0)),
            oc: window.map_or(0, |w| w.oc),
        };
        let mut dst = vec![0u8; expected.len()];
        // SAFETY: every unit of the grid is inside both buffers.
        unsafe {
            g.copy(&[], src.as_ptr(), dst.as_mut_ptr(), unit, Mode { nt, isa, fetch: false });
            fence();
        }
        assert_eq!(dst, expected, "unit {unit}, {n1}x{n0}, {window:?}, nt {nt}, {isa:?}");
    }
}

/// A padded grid (see [`Grid::padded`]) against units copied one by
/// one: row `i`'s unit `k` is space position `n1 * k + i` (the grid's
/// source strides), and the units outside the row's bounds are zeros
/// in a destination that held other bytes; once, and repeated over
/// two copies of the buffers (the loop around the grid).
fn check_padded_grid(unit: usize, n1: usize, n0: usize, window: Window) {
    let (ss0, ss1) = ((unit * n1) as isize, unit as isize);
    let len = unit * n0 * n1;
    for reps in [1, 2] {
        let src: Vec<u8> = (0..reps * len).map(|i| (i * 7 + i / 253 + 1) as u8).collect();
        let mut expected = vec![0u8; reps * len];
        for r in 0..reps {
            for i in 0..n1 {
                let (a, b) = window.range(i, n0);
                for k in a..b {
                    let s = r * len + (i as isize * ss1 + k as isize * ss0) as usize;
                    let d = r * len + (i * n0 + k) * unit;
                    expected[d..d + unit].copy_from_slice(&src[s..s + unit]);
                }
            }
        }
        for (nt, isa) in [(false, Isa::Portable), (false, Isa::detect()), (true, Isa::detect())] {
            let g = Grid {
                n1,
                ss1,
                ds1: (unit * n0) as isize,
                n0,
                ss0,
                ds0: unit as isize,
                bounds: window.bounds(0),
                oc: window.oc,
            };
            let outer = Rows { count: reps, ss: len as isize, ds: len as isize };
            let mut dst = vec![0xA5u8; expected.len()];
            // SAFETY: every unit of each repetition of the grid is inside
            // both buffers, and each row's destination is contiguous; the
            // CPU runs `isa`.
            unsafe {
                g.padded(outer, src.as_ptr(), dst.as_mut_ptr(), unit, Mode { nt, isa, fetch: false });
                fence();
            }
            assert_eq!(dst, expected, "unit {unit}, {reps} x {n1}x{n0}, {window:?}, nt {nt}, {isa:?}");
        }
    }
}

/// `rows` of `nx x ny` interleaved units cropped at both ends (the
/// window keeps row positions `[lo, hi)`), through `cropped_rows`, its
/// kept bytes streamed through the writers and stored through the cache,
/// against the definition unit by unit: whole rows a chunk of the
/// stage, rows in pieces of columns, and columns longer than the stage.
fn check_cropped_rows(unit: usize, nx: usize, ny: usize, rows: usize, (lo, hi): (usize, usize)) {
    let units = nx * ny;
    let src: Vec<u8> = (0..rows * units * unit).map(|i| (i * 7 + i / 251 + 1) as u8).collect();
    let kept = hi - lo;
    let mut expected = vec![0u8; rows * kept * unit];
    for r in 0..rows {
        for q in lo..hi {
            let (i, j) = (q / ny, q % ny);
            let s = r * units * unit + (j * nx + i) * unit;
            let d = (r * kept + q - lo) * unit;
            expected[d..d + unit].copy_from_slice(&src[s..s + unit]);
        }
    }
    let x = Loop { count: nx, ss: unit as isize, ds: (ny * unit) as isize, window: None, is_outer: true };
    let win = Window { outer: Some(0), oc: ny as i64, ic: 1, lo: lo as i64, hi: hi as i64 };
    let y = Loop { count: ny, ss: (nx * unit) as isize, ds: unit as isize, window: Some(win), is_outer: false };
    let outer = Rows { count: rows, ss: (units * unit) as isize, ds: (kept * unit) as isize };
    for (isa, nt) in [(Isa::Portable, true), (Isa::detect(), true), (Isa::Portable, false), (Isa::detect(), false)] {
        let mut dst = vec![0u8; expected.len()];
        let mut w = Writers::new();
        // SAFETY: every source unit of every row exists; the kept
        // positions of row `r` are `dst[r * kept..][..kept]`, shifted
        // back by `lo` (never dereferenced outside `[lo, hi)`).
        unsafe {
            let to = dst.as_mut_ptr().wrapping_sub(lo * unit);
            cropped_rows(outer, &x, &y, win, src.as_ptr(), to, unit, isa, nt, &mut w);
            w.finish();
            fence();
        }
        assert!(dst == expected, "unit {unit}, {rows} x {nx}x{ny}, [{lo}, {hi}), {isa:?}, nt {nt}");
    }
}

#[test]
fn cropped_rows_of_every_length() {
    // Rows that fit the stage several times, rows longer than the stage
    // (in pieces of columns), columns longer than the stage.
    // Rows of a few units, as short as the stage takes through the cache.
    for (unit, nx, ny) in
        [(1, 8, 2), (4, 5, 6), (1, 100, 2), (4, 1000, 3), (1, 20_000, 2), (4, 3000, 4), (8, 3, 2100), (16, 2, 1500)]
    {
        let units = nx * ny;
        for (lo, hi) in [(0, units), (1, units - 3), (ny - 1, units - ny + 1), (units / 2, units / 2 + 1)] {
            check_cropped_rows(unit, nx, ny, 3, (lo, hi));
        }
    }
    // More short rows than one chunk of the stage holds (1,024 of 16 bytes).
    check_cropped_rows(1, 8, 2, 1100, (1, 16));
}

/// A window whose inner index is not the row position `q = x * ny + y`
/// (here `x + nx * y`, a deinterleave's) would have the kept range
/// name destination positions that do not exist: refused before any
/// byte is read or written.
#[test]
#[should_panic(expected = "rows are not contiguous")]
fn cropped_rows_refuse_a_window_of_another_shape() {
    let (unit, nx, ny) = (4, 16, 2);
    let src = vec![0u8; nx * ny * unit];
    let mut dst = vec![0u8; nx * ny * unit];
    let x = Loop { count: nx, ss: unit as isize, ds: (ny * unit) as isize, window: None, is_outer: true };
    let win = Window { outer: Some(0), oc: 1, ic: nx as i64, lo: 1, hi: (nx * ny) as i64 - 1 };
    let y = Loop { count: ny, ss: (nx * unit) as isize, ds: unit as isize, window: Some(win), is_outer: false };
    let mut w = Writers::new();
    // SAFETY: the call panics before it touches either buffer.
    unsafe { cropped_rows(Rows::ONE, &x, &y, win, src.as_ptr(), dst.as_mut_ptr(), unit, Isa::detect(), true, &mut w) };
}

#[test]
fn padded_grids_zero_the_units_outside_their_windows() {
    // Units of the shuffle kernels (3, rows long enough and not), the
    // widened ones (6, 12, 20, 36) and others.
    for unit in [1, 2, 3, 4, 6, 8, 12, 16, 20, 36, 64] {
        for (n1, n0) in [(3, 40), (3, 5), (2, 33), (4, 17)] {
            let (n1i, n0i) = (n1 as i64, n0 as i64);
            let rows = Some(0);
            // NHWC space-to-batch: padding before and after (1 and 2).
            check_padded_grid(unit, n1, n0, Window { outer: rows, oc: 1, ic: n1i, lo: 1, hi: n1i * n0i - 2 });
            // Padding after only; rows that keep one unit or none.
            check_padded_grid(unit, n1, n0, Window { outer: rows, oc: 1, ic: n1i, lo: 0, hi: n1i * n0i - 5 });
            check_padded_grid(unit, n1, n0, Window { outer: rows, oc: 1, ic: n1i, lo: 5, hi: 6 });
            // A window on the block factor: row `i` keeps `3 <= n0 * i + k < n1 * n0 - 3`.
            check_padded_grid(unit, n1, n0, Window { outer: rows, oc: n0i, ic: 1, lo: 3, hi: n1i * n0i - 3 });
        }
    }
}

/// Streaming gathers of `n` units `ss` apart into a contiguous
/// destination, at a 16-byte-aligned destination and 8 bytes off one
/// (units of whole vectors go straight to the destination, others
/// through the stage), with the source exactly the units' span.
#[test]
fn streaming_gathers_copy_their_units() {
    for unit in [12, 16, 32, 36, 48, 64, 128] {
        for n in [1, 2, 5, 40, 200] {
            for ss in [unit, unit * 3, unit * 4 + 16] {
                let src: Vec<u8> = (0..(n - 1) * ss + unit).map(|i| (i * 11 + 3) as u8).collect();
                let expected: Vec<u8> = (0..n).flat_map(|i| src[i * ss..i * ss + unit].to_vec()).collect();
                for off in [0, 8] {
                    let mut buf = vec![0u128; (n * unit + off).div_ceil(16)];
                    // SAFETY: u128 is plain bytes; the view is the buffer's own length.
                    let dst = unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<u8>(), buf.len() * 16) };
                    let dst = &mut dst[off..off + n * unit];
                    // SAFETY: `n` units `ss` apart inside `src`, `n * unit` bytes at `dst`.
                    unsafe {
                        copy_run(
                            n,
                            src.as_ptr(),
                            ss as isize,
                            dst.as_mut_ptr(),
                            unit as isize,
                            unit,
                            Mode { nt: true, isa: Isa::detect(), fetch: false },
                        );
                        fence();
                    }
                    assert_eq!(dst, &expected[..], "unit {unit}, n {n}, ss {ss}, offset {off}");
                }
            }
        }
    }
}

/// Streaming gathers whose rows fetch their units ahead along the row
/// ([`fetches_along`]: units of a line or more, a page or more apart, in
/// rows of more than twice [`UNITS_AHEAD`] units) and those around each of
/// its bounds, which sweep: every unit copied, the last [`UNITS_AHEAD`]
/// (fetched by no one) too, from a source of exactly the units' span.
#[test]
fn streaming_gathers_of_far_rows_fetch_along_them() {
    let n = 2 * UNITS_AHEAD;
    assert!(fetches_along(n + 1, PAGE as isize, LINE) && fetches_along(n + 1, -(PAGE as isize), 640));
    assert!(!fetches_along(n, PAGE as isize, LINE));
    assert!(!fetches_along(n + 1, PAGE as isize - 16, LINE));
    assert!(!fetches_along(n + 1, PAGE as isize, LINE - 16));
    for (n, ss, unit) in
        [(n + 1, PAGE, LINE), (n, PAGE, LINE), (n + 1, PAGE - 16, LINE), (n + 1, PAGE, 48), (40, PAGE + 16, 160)]
    {
        let src: Vec<u8> = (0..(n - 1) * ss + unit).map(|i| (i * 7 + i / 251) as u8).collect();
        let expected: Vec<u8> = (0..n).flat_map(|i| src[i * ss..i * ss + unit].to_vec()).collect();
        for (first, step) in [(0, ss as isize), ((n - 1) * ss, -(ss as isize))] {
            let mut buf = vec![0u128; (n * unit).div_ceil(16)];
            // SAFETY: u128 is plain bytes; the view is the buffer's own length.
            let dst = unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<u8>(), n * unit) };
            // SAFETY: `n` units `ss` apart inside `src` from `first` (each way),
            // `n * unit` bytes at `dst`.
            unsafe {
                let at = src.as_ptr().add(first);
                copy_run(
                    n,
                    at,
                    step,
                    dst.as_mut_ptr(),
                    unit as isize,
                    unit,
                    Mode { nt: true, isa: Isa::detect(), fetch: false },
                );
                fence();
            }
            let want: Vec<u8> =
                if step > 0 { expected.clone() } else { expected.chunks(unit).rev().flatten().copied().collect() };
            assert_eq!(dst, &want[..], "n {n}, ss {step}, unit {unit}");
        }
    }
}

/// Gathered rows through the line writers: two destination streams,
/// their rows pushed in turn (each row continuing its stream's last),
/// at every byte offset from a line (16-byte-aligned ones store whole
/// lines straight, others go through the stage), against the units,
/// and nothing written around the streams.
#[test]
fn gathered_rows_join_their_ends_through_the_writers() {
    for unit in [16, 32, 48, 64, 80, 128] {
        for n in [1, 3, 4, 9, 40] {
            let ss = unit * 3 + 16;
            let rows = 3;
            // Row `r` of stream `t`: source units from `(t * rows + r) * n * ss`.
            let src: Vec<u8> = (0..2 * rows * n * ss).map(|i| (i * 7 + i / 251) as u8).collect();
            let row = n * unit;
            let want = |t: usize| -> Vec<u8> {
                (0..rows * n)
                    .flat_map(|u| {
                        let at = (t * rows * n + u) * ss;
                        src[at..at + unit].to_vec()
                    })
                    .collect()
            };
            for off in 0..64 {
                // Stream `t` at `off + t * (rows * row + 100)`, 64 guard bytes after.
                let gap = rows * row + 100;
                let mut buf = vec![0u128; (off + 2 * gap + 64).div_ceil(16)];
                let base = buf.as_mut_ptr().cast::<u8>();
                let mut w = Writers::new();
                // SAFETY: each row's units lie in `src`; stream `t`'s rows
                // are `rows * row` bytes at `base + off + t * gap`, inside
                // `buf`; the CPU runs `Isa::detect()`.
                unsafe {
                    for r in 0..rows {
                        for t in 0..2 {
                            let from = src.as_ptr().add((t * rows + r) * n * ss);
                            let to = base.add(off + t * gap + r * row);
                            gather_lines(&mut w, n, from, ss as isize, to, unit, Isa::detect());
                        }
                    }
                    w.finish();
                    fence();
                }
                // SAFETY: u128 is plain bytes; the view is the buffer's own length.
                let out = unsafe { std::slice::from_raw_parts(base, buf.len() * 16) };
                for t in 0..2 {
                    let at = off + t * gap;
                    assert_eq!(&out[at..at + rows * row], &want(t)[..], "unit {unit}, n {n}, offset {off}, stream {t}");
                    let after = &out[at + rows * row..at + gap];
                    assert!(after.iter().all(|&b| b == 0), "unit {unit}, n {n}, offset {off}: written after {t}");
                }
                assert!(out[..off].iter().all(|&b| b == 0), "unit {unit}, n {n}, offset {off}: written before");
            }
        }
    }
}

#[test]
fn grids_copy_the_units_of_their_windows() {
    // 16 to 496 in rows of up to 16 units: streamed (`streams_rows`),
    // whole rows of 2 to 4 units of 16 to 64 by `whole_rows`; 17 not.
    for unit in [1, 3, 4, 6, 12, 16, 20, 24, 31, 32, 36, 48, 63, 64, 100, 256, 496, 512] {
        check_grid(unit, 5, 7, None);
        check_grid(unit, 3, 16, None);
        check_grid(unit, 3, 17, None);
        check_grid(unit, 4, 16, Some(Window { outer: Some(0), oc: 16, ic: 1, lo: 5, hi: 57 }));
        check_grid(unit, 7, 3, None);
        // A crop of the block factor (OpenVINO batch-to-space): row `i`
        // keeps `3 <= 4i + k < 17`.
        check_grid(unit, 5, 4, Some(Window { outer: Some(0), oc: 4, ic: 1, lo: 3, hi: 17 }));
        // A crop on an outer factor inside its block factor: `2 <= i + 3k < 11`.
        check_grid(unit, 3, 5, Some(Window { outer: Some(0), oc: 1, ic: 3, lo: 2, hi: 11 }));
        // Rows that keep nothing.
        check_grid(unit, 4, 3, Some(Window { outer: Some(0), oc: 3, ic: 1, lo: 4, hi: 5 }));
        // Rows of two units, whole and cropped at the run's ends.
        check_grid(unit, 9, 2, None);
        check_grid(unit, 9, 2, Some(Window { outer: Some(0), oc: 2, ic: 1, lo: 1, hi: 17 }));
        // Crops past a row at each end: row 0 keeps nothing, row 1
        // its last three units, rows 2 and 3 all, row 4 its first
        // three, row 5 nothing.
        check_grid(unit, 6, 4, Some(Window { outer: Some(0), oc: 4, ic: 1, lo: 5, hi: 19 }));
    }
}

/// Grids whose rows' units are contiguous in the source, each to its
/// own destination stream, continued by the next row (the source's
/// order of rows gathered a unit at a time: [`Grid::stream_scattered`]
/// when streaming), at every 16-byte offset from a line, against the
/// units copied one by one, nothing written between the streams.
#[test]
fn scattered_grids_continue_each_stream() {
    for unit in [16, 32, 48, 64, 192] {
        // Streams a row of `n1` units and a gap apart: of 80 bytes, or
        // 88 (streams off 16-byte alignment, which stream elsewhere).
        for (n1, n0, gap) in [(9, 2, 80), (7, 3, 80), (5, 4, 80), (7, 3, 88)] {
            let (ss0, ss1, ds1) = (unit as isize, (n0 * unit) as isize, unit as isize);
            let ds0 = (n1 * unit + gap) as isize;
            let src: Vec<u8> = (0..n0 * n1 * unit).map(|i| (i * 7 + i / 253 + 1) as u8).collect();
            for off in [0, 16, 32, 48] {
                let len = off + n0 * ds0 as usize;
                let mut expected = vec![0xA5u8; len];
                for i in 0..n1 {
                    for k in 0..n0 {
                        let s = i * ss1 as usize + k * unit;
                        let d = off + k * ds0 as usize + i * unit;
                        expected[d..d + unit].copy_from_slice(&src[s..s + unit]);
                    }
                }
                for (nt, isa) in [(false, Isa::Portable), (true, Isa::detect())] {
                    let g = Grid { n1, ss1, ds1, n0, ss0, ds0, bounds: Bounds::ALL, oc: 0 };
                    let mut buf = vec![0xA5A5_A5A5_A5A5_A5A5_A5A5_A5A5_A5A5_A5A5u128; len.div_ceil(16)];
                    // SAFETY: every unit of the grid is inside both
                    // buffers; `buf` is 16-byte aligned, so is `off`.
                    let out = unsafe {
                        let base = buf.as_mut_ptr().cast::<u8>();
                        g.copy(&[], src.as_ptr(), base.add(off), unit, Mode { nt, isa, fetch: false });
                        fence();
                        std::slice::from_raw_parts(base, len)
                    };
                    assert_eq!(out, &expected[..], "unit {unit}, {n1}x{n0}, gap {gap}, offset {off}, nt {nt}");
                }
            }
        }
    }
}

/// `copy::units` against each unit's offset computed from its indices,
/// for nests of 0 to 6 loops (the last four nested plainly, the rest
/// through the odometer), units of every size the unit copies switch on
/// (1 to 65 bytes and beyond), and strides reversed, zero on the source
/// (one unit read many times) and interleaved; and `copy::listed` given
/// those offsets as a list (a tiny plan's), in the destination's order
/// and reversed.
#[test]
fn units_copy_every_unit_of_their_nest() {
    let shapes: [&[usize]; 9] = [
        &[],
        &[3],
        &[4, 5],
        &[3, 1, 4],
        &[2, 3, 2, 3],
        &[1, 2, 1, 2],
        &[2, 3, 4, 3],
        &[2, 3, 1, 3, 2],
        &[2, 2, 3, 2, 3, 2],
    ];
    for unit in [1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 24, 32, 33, 48, 64, 65, 100] {
        for counts in shapes {
            let n: usize = counts.iter().product();
            // Destination: row-major over the counts. Source: the axes in
            // reverse order (a transpose), the first axis reversed, and a
            // last axis of one read at a zero stride.
            let mut ds = vec![0isize; counts.len()];
            let mut ss = vec![0isize; counts.len()];
            let mut acc = unit as isize;
            for j in (0..counts.len()).rev() {
                ds[j] = acc;
                acc *= counts[j] as isize;
            }
            let mut acc = unit as isize;
            for j in 0..counts.len() {
                ss[j] = if j == 0 { -acc } else { acc };
                acc *= counts[j] as isize;
            }
            let src_base = if counts.is_empty() { 0 } else { (counts[0] as isize - 1) * -ss[0] };
            let src: Vec<u8> = (0..n * unit).map(|i| (i * 13 + i / 251 + 1) as u8).collect();
            let loops: Vec<Loop> = counts
                .iter()
                .zip(ss.iter().zip(&ds))
                .map(|(&count, (&ss, &ds))| Loop { count, ss, ds, window: None, is_outer: false })
                .collect();
            let mut expected = vec![0u8; n * unit];
            let mut list = Vec::new();
            for flat in 0..n {
                let (mut rest, mut s, mut d) = (flat, src_base, 0isize);
                for j in (0..counts.len()).rev() {
                    let i = (rest % counts[j]) as isize;
                    rest /= counts[j];
                    s += i * ss[j];
                    d += i * ds[j];
                }
                list.push([s, d]);
                let (s, d) = (s as usize, d as usize);
                expected[d..d + unit].copy_from_slice(&src[s..s + unit]);
            }
            let mut dst = vec![0u8; n * unit];
            // SAFETY: every unit of the nest is inside both buffers (the
            // offsets above, from the source's last unit back).
            unsafe { units(&loops, src.as_ptr().wrapping_offset(src_base), dst.as_mut_ptr(), unit) };
            assert_eq!(dst, expected, "unit {unit}, counts {counts:?}");
            for reversed in [false, true] {
                if reversed {
                    list.reverse();
                }
                let mut dst = vec![0u8; n * unit];
                // SAFETY: the same units, listed with the bases added.
                unsafe { listed(&list, src.as_ptr(), dst.as_mut_ptr(), unit) };
                assert_eq!(dst, expected, "listed, unit {unit}, counts {counts:?}, reversed {reversed}");
            }
        }
    }
}

/// `copy::units` where its last loop's destination is contiguous, in runs
/// with gaps between them (bytes no unit owns, which must keep what they
/// held): units of 3, 5-7, 9-15, ... bytes but the last of each run go in
/// one move of the power of two above them, whose excess lands on the
/// next unit of the run, never in a gap; source units just a move apart
/// (the excess read the next unit's first bytes) and one byte fewer (no
/// unit widened), both buffers ending with their last unit.
#[test]
fn units_widen_only_inside_their_runs() {
    for unit in [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 24, 31, 33, 48, 63, 64] {
        let wide = wide_move(unit).unwrap_or(unit);
        for ss in [wide, wide.max(unit + 1) - 1, 2 * wide + 1] {
            for (runs, n, gap) in [(1, 1, 1), (1, 5, 0), (3, 1, 2), (3, 4, 1), (4, 7, 5)] {
                // Runs (the outer loop) `n * unit + gap` bytes apart in the
                // destination, their units `ss` apart in the source and the
                // runs `n * ss + 1` apart.
                let (ds_run, ss_run) = ((n * unit + gap) as isize, (n * ss + 1) as isize);
                let src_len = (runs - 1) * ss_run as usize + (n - 1) * ss + unit;
                let dst_len = (runs - 1) * ds_run as usize + n * unit;
                let src: Vec<u8> = (0..src_len).map(|i| (i * 29 + 3) as u8).collect();
                let mut expected = vec![0xA5u8; dst_len];
                for r in 0..runs {
                    for k in 0..n {
                        let (s, d) = (r * ss_run as usize + k * ss, r * ds_run as usize + k * unit);
                        expected[d..d + unit].copy_from_slice(&src[s..s + unit]);
                    }
                }
                let loops = [
                    Loop { count: runs, ss: ss_run, ds: ds_run, window: None, is_outer: false },
                    Loop { count: n, ss: ss as isize, ds: unit as isize, window: None, is_outer: false },
                ];
                let mut dst = vec![0xA5u8; dst_len];
                // SAFETY: every unit of the nest is inside both buffers.
                unsafe { units(&loops, src.as_ptr(), dst.as_mut_ptr(), unit) };
                assert_eq!(dst, expected, "unit {unit}, source stride {ss}, {runs} runs of {n}, gaps of {gap}");
            }
        }
    }
}

/// The source and the expected destination of `rows` repetitions of an
/// `nx x ny` tile of `unit`-byte units: unit `(r, x, y)` from `r * rows.ss
/// + x * unit + y * ssy` to `pad + r * rows.ds + x * dsx + y * unit`, the
/// destination `pad` bytes longer than its units at each end, its other
/// bytes `fill`. Both buffers end with their last unit (and `pad`).
#[allow(clippy::too_many_arguments)]
fn tile_oracle(
    rows: Rows,
    nx: usize,
    ny: usize,
    ssy: isize,
    dsx: isize,
    unit: usize,
    pad: usize,
    fill: u8,
) -> (Vec<u8>, Vec<u8>) {
    let at = |r: usize, x: usize, y: usize| {
        let s = r as isize * rows.ss + (x * unit) as isize + y as isize * ssy;
        let d = pad as isize + r as isize * rows.ds + x as isize * dsx + (y * unit) as isize;
        (s as usize, d as usize)
    };
    let (s_len, d_len) = at(rows.count - 1, nx - 1, ny - 1);
    let src: Vec<u8> = (0..s_len + unit).map(|i| (i * 29 + i / 241 + 3) as u8).collect();
    let mut expected = vec![fill; d_len + unit + pad];
    for r in 0..rows.count {
        for x in 0..nx {
            for y in 0..ny {
                let (s, d) = at(r, x, y);
                expected[d..d + unit].copy_from_slice(&src[s..s + unit]);
            }
        }
    }
    (src, expected)
}

/// Runs [`copy_tile`] on `tile_oracle`'s buffers: `rows` repetitions of
/// the `nx x ny` tile from `src` into `dst` from byte `pad` on, through
/// line writers of its own, finished and fenced.
#[allow(clippy::too_many_arguments)]
fn run_tile(
    rows: Rows,
    nx: usize,
    ny: usize,
    src: &[u8],
    ssy: isize,
    dst: &mut [u8],
    pad: usize,
    dsx: isize,
    unit: usize,
    m: Mode,
) {
    // The last unit of the last repetition on each side (every stride here
    // is positive): both buffers hold it.
    let last = |outer: isize, a: isize, b: isize| (rows.count - 1) as isize * outer + a + b + unit as isize;
    let (x, y) = ((nx - 1) as isize, (ny - 1) as isize);
    assert!(last(rows.ss, x * unit as isize, y * ssy) <= src.len() as isize);
    assert!(pad as isize + last(rows.ds, x * dsx, y * unit as isize) <= dst.len() as isize);
    // SAFETY: every unit of every repetition is inside both buffers (the
    // last ones, checked above); the buffers are distinct.
    unsafe {
        let mut w = Writers::new();
        copy_tile(rows, nx, ny, src.as_ptr(), ssy, dst.as_mut_ptr().add(pad), dsx, unit, m, &mut w);
        w.finish();
        fence();
    }
}

/// Checks `rows` repetitions of the `nx x ny` tile (arguments as
/// [`tile_oracle`]'s) on every kernel set this CPU runs, through the cache
/// and, if `streamed`, streamed, against each unit's offsets and with the
/// bytes between units left `fill`; `what` names the case in a failure.
#[allow(clippy::too_many_arguments)]
fn check_repeated_tile(
    rows: Rows,
    nx: usize,
    ny: usize,
    ssy: isize,
    dsx: isize,
    unit: usize,
    pad: usize,
    fill: u8,
    streamed: bool,
    what: &str,
) {
    let (src, expected) = tile_oracle(rows, nx, ny, ssy, dsx, unit, pad, fill);
    for isa in Isa::every_runnable() {
        for nt in [false, true].into_iter().take(1 + usize::from(streamed)) {
            // The source fetched ahead (the tensors past the caches) or not.
            for fetch in [false, true] {
                let mut dst = vec![fill; expected.len()];
                run_tile(rows, nx, ny, &src, ssy, &mut dst, pad, dsx, unit, Mode { nt, isa, fetch });
                assert_eq!(dst, expected, "{what}, {isa:?}, nt {nt}, fetch {fetch}");
            }
        }
    }
}

/// Tiles repeated so that each repetition continues the destination rows
/// (or the source rows): the matrix of all the repetitions is what the
/// kernel is chosen for, so short sides (below a square's 16) continued
/// past it take the transpose. Against each unit's offsets, for units of
/// 1 and 2 bytes (the transpose's) and 4, every kernel set, streamed or
/// not, sides around 16 and repetitions that make them long or not.
#[test]
fn tiles_whose_repetitions_continue_their_rows() {
    let isas = [Isa::Portable, Isa::baseline(), Isa::detect()];
    for unit in [1, 2, 4] {
        for (nx, ny, count) in [(12, 15, 29), (9, 5, 4), (16, 3, 6), (5, 12, 1), (8, 15, 2), (20, 2, 9)] {
            for continues_rows in [true, false] {
                // Continued destination rows: a destination row holds every
                // repetition's `ny` units; the source's repetitions are
                // apart by their rows and a gap. Continued source rows:
                // the other way round.
                let (ssy, dsx, rows) = if continues_rows {
                    let (ssy, dsx) = ((nx * unit + 3) as isize, (count * ny * unit + 5) as isize);
                    (ssy, dsx, Rows { count, ss: ny as isize * ssy + 7, ds: (ny * unit) as isize })
                } else {
                    let (ssy, dsx) = ((count * nx * unit + 3) as isize, (ny * unit + 5) as isize);
                    (ssy, dsx, Rows { count, ss: (nx * unit) as isize, ds: nx as isize * dsx + 7 })
                };
                let (src, expected) = tile_oracle(rows, nx, ny, ssy, dsx, unit, 0, 0);
                for isa in isas {
                    for nt in [false, true] {
                        let mut dst = vec![0u8; expected.len()];
                        run_tile(rows, nx, ny, &src, ssy, &mut dst, 0, dsx, unit, Mode { nt, isa, fetch: false });
                        let what =
                            format!("unit {unit}, {nx} x {ny} x {count}, rows {continues_rows}, {isa:?}, nt {nt}");
                        for (i, (a, b)) in dst.iter().zip(&expected).enumerate() {
                            // Bytes between units are the kernel's to leave alone.
                            assert_eq!(a, b, "{what}: byte {i}");
                        }
                    }
                }
            }
        }
    }
}

/// Tiles that no kernel takes (small tiles of units without a vector
/// kernel, neither side continuing the other's rows), which go through the
/// cache as a nest of their units (`unit_tiles`) and streamed as strided
/// runs: every arm of the unit's copy, the longer side either way and
/// both sides equal, source rows apart or one run (deinterleaves, walked
/// in the source's order from 16-byte units), once and repeated with gaps
/// or continuing the destination rows, the destination's bytes between
/// units left alone; against each unit's offsets, every kernel set.
#[test]
fn tiles_no_kernel_takes_copy_each_unit() {
    for unit in [1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 24, 32, 33, 48, 64, 65, 100] {
        for (nx, ny) in [(15, 2), (2, 15), (5, 3), (3, 5), (7, 7), (1, 9), (9, 1), (13, 10), (6, 11)] {
            for (count, continues, apart) in [(1, false, 5), (3, false, 5), (3, true, 5), (1, false, 0), (3, true, 0)] {
                let ssy = (nx * unit + apart) as isize;
                let (dsx, rows) = if continues {
                    let dsx = (count * ny * unit + 3) as isize;
                    (dsx, Rows { count, ss: ny as isize * ssy + 11, ds: (ny * unit) as isize })
                } else {
                    let dsx = (ny * unit + 3) as isize;
                    (dsx, Rows { count, ss: ny as isize * ssy + 11, ds: nx as isize * dsx + 7 })
                };
                let what = format!("unit {unit}, {nx} x {ny} x {count}, continues {continues}, apart {apart}");
                check_repeated_tile(rows, nx, ny, ssy, dsx, unit, 9, 0x5A, true, &what);
            }
        }
    }
}

/// The walk in the source's order takes deinterleaves (source rows one
/// run) of units from 16 bytes, whichever side is longer.
#[test]
fn unit_walks_deinterleaves_of_whole_vectors_in_the_source_order() {
    for (nx, ssy, unit, walks) in [
        (5, 80, 16, true),
        (9, 9 * 48, 48, true),
        (5, 85, 17, true),
        (5, 75, 15, false),
        (5, 40, 8, false),
        (5, 81, 16, false),
        (5, 96, 16, false),
    ] {
        assert_eq!(walks_source_order(nx, ssy, unit), walks, "{nx} units of {unit} bytes, rows {ssy} apart");
    }
}

/// Tiles of float64, and of packed 6- and 12-byte units, with a side
/// shorter than 16 units, which go in the full-line squares where AVX-512
/// runs (with VBMI, for the packed units) and the side fills two thirds of
/// their lanes (`transpose::takes_squares`), unless the tile's destination
/// rows are one run of its rows (an interleave, left to the tile's own
/// kernels): sides on both sides of that rule, once and repeated (with
/// gaps, or continuing the destination rows into one long matrix),
/// destination rows of whole lines streamed, every kernel set, against
/// each unit's offsets and with the bytes between units left alone.
#[test]
fn tiles_of_6_8_and_12_byte_units_with_sides_of_2_to_15_units() {
    for unit in [6usize, 8, 12] {
        for (nx, ny) in [
            (8, 8),
            (15, 2),
            (2, 15),
            (11, 9),
            (9, 11),
            (10, 30),
            (13, 20),
            (12, 12),
            (14, 5),
            (8, 40),
            (4, 6),
            (3, 20),
            (5, 16),
        ] {
            for (count, continues, interleave) in
                [(1, false, false), (3, false, false), (40, true, false), (3, false, true)]
            {
                let ssy = (nx * unit + 24) as isize;
                let (dsx, rows) = if continues {
                    // A row of whole lines when the matrix's are (40 x 8 x 2 units).
                    let dsx = (count * ny * unit).next_multiple_of(64) as isize;
                    (dsx, Rows { count, ss: ny as isize * ssy + 16, ds: (ny * unit) as isize })
                } else {
                    let dsx = if interleave { ny * unit } else { ny * unit + 24 } as isize;
                    (dsx, Rows { count, ss: ny as isize * ssy + 16, ds: nx as isize * dsx + 8 })
                };
                for pad in [0, 64, 8] {
                    let what = format!(
                        "unit {unit}, {nx} x {ny} x {count}, continues {continues}, interleave {interleave}, pad {pad}"
                    );
                    check_repeated_tile(rows, nx, ny, ssy, dsx, unit, pad, 0x5A, true, &what);
                }
            }
        }
    }
}

/// Interleaves and deinterleaves of 2 to 4 streams whose runs (a stream's
/// units in one repetition) are shorter than a wide vector go by the
/// widest vector they fill (`Isa::fitting`): runs of 15 to 65 bytes, each
/// side of 16, 32 and 64, for every unit the vector kernels take, three
/// repetitions apart by gaps, on every kernel set, against each unit's
/// offsets.
#[test]
fn short_runs_of_a_few_streams_take_the_widest_vector_they_fill() {
    for unit in [1, 2, 4, 8, 16] {
        for run in [15usize, 16, 17, 31, 32, 33, 48, 63, 64, 65] {
            let n = run.div_ceil(unit);
            for streams in 2..=4 {
                for interleave in [true, false] {
                    let (nx, ny, ssy, dsx, rows) = if interleave {
                        let ssy = (n * unit + 3) as isize;
                        (
                            n,
                            streams,
                            ssy,
                            (streams * unit) as isize,
                            Rows { count: 3, ss: 5 * ssy, ds: (n * streams * unit + 9) as isize },
                        )
                    } else {
                        let dsx = (n * unit + 3) as isize;
                        (
                            streams,
                            n,
                            (streams * unit) as isize,
                            dsx,
                            Rows { count: 3, ss: (n * streams * unit + 9) as isize, ds: 5 * dsx },
                        )
                    };
                    let (src, expected) = tile_oracle(rows, nx, ny, ssy, dsx, unit, 0, 0);
                    for isa in Isa::every_runnable() {
                        let mut dst = vec![0u8; expected.len()];
                        run_tile(
                            rows,
                            nx,
                            ny,
                            &src,
                            ssy,
                            &mut dst,
                            0,
                            dsx,
                            unit,
                            Mode { nt: false, isa, fetch: false },
                        );
                        assert_eq!(
                            dst, expected,
                            "unit {unit}, {n} units x {streams} streams, interleave {interleave}, {isa:?}"
                        );
                    }
                }
            }
        }
    }
}

/// Runs one `nx x ny` tile (source rows `ssy` apart, destination rows
/// `dsx`) of `unit`-byte units on `tile_oracle`'s buffers with every
/// kernel set, through the cache and streamed, and checks every byte.
fn check_tile(nx: usize, ny: usize, ssy: isize, dsx: isize, unit: usize) {
    let (src, expected) = tile_oracle(Rows::ONE, nx, ny, ssy, dsx, unit, 0, 0);
    for isa in [Isa::Portable, Isa::baseline(), Isa::detect()] {
        for nt in [false, true] {
            let mut dst = vec![0u8; expected.len()];
            run_tile(Rows::ONE, nx, ny, &src, ssy, &mut dst, 0, dsx, unit, Mode { nt, isa, fetch: false });
            let first = dst.iter().zip(&expected).position(|(a, b)| a != b);
            assert_eq!(first, None, "unit {unit}, {nx} x {ny}, {isa:?}, nt {nt}: first byte that differs");
        }
    }
}

/// Tall tiles (a short side of 2 or more, a long one) of 8 MiB and more go
/// in blocks (`blocked`): deinterleaving (the short side `x`, contiguous
/// in the source) and interleaving (the short side `y`); and one just
/// under 8 MiB, whole. Units without a vector kernel and with one (the
/// latter in more than 4 streams, which no kernel of its own takes).
/// Against each unit's offsets, every kernel set, streamed or not.
#[test]
fn tall_tiles_go_in_blocks_from_8_mib() {
    let tall = |unit: usize, short: usize| (8usize << 20).div_ceil(unit * short);
    for (unit, nx, ny, blocks) in [
        (32, 15, tall(32, 15), true),
        (6, tall(6, 11), 11, true),
        (8, 9, tall(8, 9), true),
        (12, 5, tall(12, 5) - 1, false),
    ] {
        check_blocked(unit, nx, ny, (nx * unit) as isize, (ny * unit) as isize, blocks);
    }
}

/// Transposes' tiles (both sides long, the destination's rows the
/// streams' units side by side) of more streams than the zip keeps in
/// the caches (`zips`: 64 streams a page apart or more, 512 nearer) go in
/// blocks, and those just inside both limits are zipped. Against each
/// unit's offsets, every kernel set, through the cache (where the zip
/// runs) and streamed.
#[test]
fn transposes_of_more_streams_than_the_zip_keeps_go_in_blocks() {
    for (unit, nx, ny, zipped) in [
        // Streams 8,400 bytes apart: 64 of them, and 65.
        (12, 700, 64, true),
        (12, 700, 65, false),
        // Streams 1,500 bytes apart: 512 of them, and 513.
        (5, 300, 512, true),
        (5, 300, 513, false),
        // 3-, 4- and 8-byte units, in the blocks' register squares
        // (`streams::block`) where a block has a square's side both ways,
        // by units elsewhere: more rows than columns (blocks whatever the
        // streams), and 513 or 600 streams.
        (3, 515, 700, false),
        (3, 600, 513, false),
        (4, 515, 700, false),
        (8, 200, 600, false),
    ] {
        let (ssy, dsx) = ((nx * unit) as isize, (ny * unit) as isize);
        assert_eq!(zips(ny, ssy), zipped, "unit {unit}, {nx} x {ny}");
        check_blocked(unit, nx, ny, ssy, dsx, true);
    }
}

/// Tiles of any size whose columns (a unit of each source row) read more
/// lines than the L1 cache holds or more pages than the first-level TLB
/// (`spill`) go in blocks (`blocked`) where their rows are longer than a
/// line; whole: those just inside each limit, of one column, rows of a
/// line or less, or whole 16-byte vectors. Units without a vector kernel
/// and with one (3-, 4- and 8-byte units in the blocks' register
/// squares), each against its offsets, every kernel set, streamed or not.
#[test]
fn tiles_whose_columns_spill_from_the_caches_go_in_blocks() {
    let pages = (PAGE + 8) as isize;
    for (unit, nx, ny, ssy, blocks) in [
        // Rows a page apart: 65 of them, and 64.
        (6, 44, 65, pages, true),
        (6, 44, 64, pages, false),
        (8, 20, 113, pages, true),
        (3, 22, 70, pages, true),
        // Rows a line apart or more: 513 of them, and 512.
        (12, 7, 513, 84, true),
        (12, 7, 512, 84, false),
        (4, 33, 600, 132, true),
        // One column; rows of a line or less; whole vectors.
        (72, 1, 600, pages, false),
        (4, 16, 600, 64, false),
        (3, 21, 600, pages, false),
        (16, 7, 600, 112, false),
    ] {
        check_blocked(unit, nx, ny, ssy, (ny * unit + 24) as isize, blocks);
    }
}

/// The same from the destination's side: tiles whose rows (a unit to each
/// destination row) write more lines than the L1 cache holds or more
/// pages than the first-level TLB go in blocks where the destination's
/// rows are longer than a line; whole: those just inside each limit, of
/// one row, destination rows of a line or less, or whole 16-byte vectors.
/// Each against its offsets, every kernel set, streamed or not.
#[test]
fn tiles_whose_rows_spill_from_the_caches_go_in_blocks() {
    let pages = (PAGE + 8) as isize;
    for (unit, nx, ny, dsx, blocks) in [
        // Destination rows a page apart: 65 of them, and 64.
        (6, 65, 44, pages, true),
        (6, 64, 44, pages, false),
        (4, 100, 21, pages, true),
        (3, 70, 22, pages, true),
        // Destination rows a line apart or more: 513 of them, and 512.
        (12, 513, 7, 84, true),
        (12, 512, 7, 84, false),
        // One row; destination rows of a line or less; whole vectors.
        (72, 600, 1, pages, false),
        (4, 600, 16, 64, false),
        (3, 600, 21, pages, false),
        (16, 600, 7, 112, false),
    ] {
        check_blocked(unit, nx, ny, (nx * unit + 24) as isize, dsx, blocks);
    }
}

/// Blocked tiles with more than one column of blocks go a row of blocks
/// at a time up to `BLOCK_ROW_BYTES` (256 KiB: 64 rows of 1,365 3-byte
/// units), a column of blocks at a time past it; one column of blocks
/// whatever its rows. Partial blocks at both ends; each against its
/// offsets, every kernel set, streamed or not. Tiles of 8 MiB and more
/// go a row of blocks at a time up to `LARGE_BLOCK_ROW_BYTES` (1 MiB).
#[test]
fn blocks_go_a_row_at_a_time_where_a_row_of_blocks_fits() {
    for (unit, nx, ny, rows) in [
        (3, 1365, 150, true),
        (3, 1366, 150, false),
        (8, 512, 77, true),
        (8, 513, 77, false),
        (5, 100, 1100, true),
        (12, 40, 900, false),
    ] {
        let b = block_side(unit);
        assert_eq!(rows_of_blocks(nx, ny, b, unit), rows, "unit {unit}, {nx} x {ny}, blocks of {b}");
        check_blocked(unit, nx, ny, (nx * unit + 8) as isize, (ny * unit + 24) as isize, true);
    }
    // Rows of blocks of 512 KiB: a tile of 8 MiB (2,048 x 1,024 4-byte
    // units) and one a row smaller; of 1 MiB (4,096 units) and just past
    // it, both in tiles of 8 MiB and more.
    let b = block_side(4);
    for (nx, ny, rows) in [(2048, 1024, true), (2048, 1023, false), (4096, 512, true), (4097, 512, false)] {
        assert_eq!(nx * ny * 4 >= 8 << 20, ny != 1023, "{nx} x {ny}");
        assert_eq!(rows_of_blocks(nx, ny, b, 4), rows, "{nx} x {ny}");
    }
}

/// Asserts whether a tile goes in blocks, and checks its copy.
fn check_blocked(unit: usize, nx: usize, ny: usize, ssy: isize, dsx: isize, blocks: bool) {
    let what = format!("unit {unit}, {nx} x {ny}, rows {ssy} apart, destination rows {dsx} apart");
    assert_eq!(blocked(nx, ny, unit, ssy, dsx), blocks, "{what}");
    check_tile(nx, ny, ssy, dsx, unit);
}

/// Streamed interleaving tiles that no kernel streams itself (5 and more
/// streams, units with and without kernels of their own), built in the
/// stage and pushed through the line writers: columns in one chunk and in
/// several (a tile past the stage's 8 KiB), repetitions that continue one
/// another (staged several at a time) or not, a destination off its lines,
/// and columns longer than the stage (not staged). Against each unit's
/// offsets, every kernel set.
#[test]
fn streamed_interleaves_of_many_streams_go_through_the_stage() {
    let isas = [Isa::Portable, Isa::baseline(), Isa::detect()];
    for unit in [1, 2, 3, 4, 8, 12, 16] {
        for (nx, ny, count) in [(25, 22, 3), (7, 5, 9), (300, 11, 2), (13, 33, 4), (3, 600, 2)] {
            for continued in [true, false] {
                let (ssy, dsx, col) = ((nx * unit + 5) as isize, (ny * unit) as isize, ny * unit);
                let run = nx * col;
                let rows =
                    Rows { count, ss: ny as isize * ssy + 3, ds: (if continued { run } else { run + 24 }) as isize };
                let (src, expected) = tile_oracle(rows, nx, ny, ssy, dsx, unit, 16, 0xA5);
                for isa in isas {
                    let mut dst = vec![0xA5u8; expected.len()];
                    run_tile(rows, nx, ny, &src, ssy, &mut dst, 16, dsx, unit, Mode { nt: true, isa, fetch: false });
                    let what = format!("unit {unit}, {nx} x {ny} x {count}, continued {continued}, {isa:?}");
                    for (i, (a, b)) in dst.iter().zip(&expected).enumerate() {
                        assert_eq!(a, b, "{what}: byte {i}");
                    }
                }
            }
        }
    }
}
