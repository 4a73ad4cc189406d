//! The permutes against their oracle, on every stream count and unit they
//! take.

use super::*;

/// Runs `kernel(rows, src, dst, streams)` on 3 rows of `b` streams of
/// `n` units (streams 3 bytes apart beyond their rows, `streams` bytes
/// apart; rows apart by more than they span on both sides, or, if
/// `continued`, each row's streams continuing the last's, 3 bytes apart
/// beyond all three) and compares the whole destination, a line past
/// its end too, with the oracle's, unit by unit: every unit if it ran,
/// none if not, no other byte.
fn check(
    way: Way,
    b: usize,
    unit: usize,
    n: usize,
    continued: bool,
    kernel: impl FnOnce(Rows, *const u8, *mut u8, isize) -> bool,
) {
    let (stream, run) = (n * unit, n * b * unit);
    let (streams, ss, ds) = match (way, continued) {
        (Way::Interleave, false) => (stream + 3, b * (stream + 3) + 5, run + 7),
        (Way::Interleave, true) => (stream + 3, b * (stream + 3) + 5, run),
        (Way::Deinterleave, false) => (stream + 3, run + 7, b * (stream + 3) + 5),
        (Way::Deinterleave, true) => (3 * stream + 3, run + 7, stream),
    };
    let rows = Rows { count: 3, ss: ss as isize, ds: ds as isize };
    let (src_len, dst_len) = match way {
        Way::Interleave => (3 * ss, 2 * ds + run),
        Way::Deinterleave => (3 * ss, 2 * ds + (b - 1) * streams + stream),
    };
    let src: Vec<u8> = (0..src_len).map(|i| (i * 7 + i / 251) as u8).collect();
    let mut got = vec![0xA5u8; dst_len + 64];
    let ran = kernel(rows, src.as_ptr(), got.as_mut_ptr(), streams as isize);
    let mut want = vec![0xA5u8; dst_len + 64];
    for r in 0..if ran { rows.count } else { 0 } {
        for x in 0..n {
            for j in 0..b {
                let (one, each) = ((x * b + j) * unit, j * streams + x * unit);
                let (a, o) = match way {
                    Way::Interleave => (r * ss + each, r * ds + one),
                    Way::Deinterleave => (r * ss + one, r * ds + each),
                };
                want[o..o + unit].copy_from_slice(&src[a..a + unit]);
            }
        }
    }
    assert!(got == want, "{way:?} {b} streams of {n} {unit}-byte units, continued {continued}");
}

#[test]
fn the_kernels_move_every_stream_count_and_unit_like_the_oracle() {
    if !Isa::detect().runs_vbmi() {
        return;
    }
    for way in [Way::Interleave, Way::Deinterleave] {
        for b in 2..=MAX_STREAMS {
            for unit in 1..=MAX_SLOT_UNIT {
                let k = match way {
                    Way::Interleave if unit <= MAX_UNIT || interleaves_wider(b, unit, usize::MAX) => {
                        interleave_units(b, unit).max(1)
                    }
                    Way::Deinterleave if deinterleaves(b, unit) => STEP / (b * unit),
                    _ => continue,
                };
                // Rows of a part of a step to several steps, on both
                // sides of the deinterleave's plain stores (a stream's
                // bytes of a step, to the next power of two from 8,
                // inside the bytes the call writes) and of the
                // interleave's plain loads (a row of a step or more).
                for n in [0, 1, 2, 3, k - 1, k, k + 1, 2 * k - 1, 3 * k - 1, 3 * k + 2, 64 / unit + 1] {
                    // Units a slot holds only wide go in rows of a wide slot.
                    if way == Way::Interleave && unit > MAX_UNIT && !interleaves_wider(b, unit, n) {
                        continue;
                    }
                    for continued in [false, true] {
                        // SAFETY: the rows lie inside the buffers (as
                        // built); the CPU has VBMI (checked above).
                        check(way, b, unit, n, continued, |rows, src, dst, streams| unsafe {
                            match way {
                                Way::Interleave => x86::interleave(rows, n, b, unit, src, streams, dst),
                                Way::Deinterleave => x86::deinterleave(rows, n, b, unit, src, dst, streams),
                            }
                            true
                        });
                    }
                }
            }
        }
    }
}

/// The deinterleave's grouped steps (a stream's bytes of a step in a
/// lane of 16 or 32 bytes, each lane stored whole) run only where the
/// lane ends inside the stream's bytes the call writes: every row
/// length from one unit to past two steps' worth of lanes, rows alone
/// (3 bytes between streams, which no store may touch) and continued,
/// so that the last grouped step ends at the run's end, a byte before
/// it and a unit before it.
#[test]
fn grouped_deinterleave_steps_stay_inside_the_streams() {
    if !Isa::detect().runs_vbmi() {
        return;
    }
    for b in [3, 4, 5, 7, 8, 11, 14, 16, 32] {
        for unit in (1..=MAX_DEINTERLEAVE_UNIT).filter(|&unit| deinterleaves(b, unit)) {
            let k = STEP / (b * unit);
            for n in 1..=(64 / unit + 2 * k) {
                for continued in [false, true] {
                    // SAFETY: as in the test above.
                    check(Way::Deinterleave, b, unit, n, continued, |rows, src, dst, streams| unsafe {
                        x86::deinterleave(rows, n, b, unit, src, dst, streams);
                        true
                    });
                }
            }
        }
    }
}

/// Interleaves `b` streams of `n` units of `unit` bytes back to back in
/// a buffer of exactly their bytes (its last stream ending where the
/// allocation does, which AddressSanitizer checks) and compares the
/// destination, also exactly their bytes, with the oracle's.
fn interleave_back_to_back(b: usize, unit: usize, n: usize) {
    assert!(Isa::detect().runs_vbmi(), "the caller checks the CPU");
    let stream = n * unit;
    let src: Vec<u8> = (0..b * stream).map(|i| (i * 13 + i / 241) as u8).collect();
    let mut got = vec![0xA5u8; b * stream];
    let rows = Rows { count: 1, ss: 0, ds: 0 };
    // SAFETY: `b` streams of `n` units back to back, and their `b * n`
    // units' destination; the CPU has VBMI (asserted above).
    unsafe { x86::interleave(rows, n, b, unit, src.as_ptr(), stream as isize, got.as_mut_ptr()) };
    let want: Vec<u8> = (0..b * n)
        .flat_map(|g| {
            let (x, j) = (g / b, g % b);
            src[j * stream + x * unit..][..unit].to_vec()
        })
        .collect();
    assert!(got == want, "{b} streams of {n} {unit}-byte units");
}

/// The interleave's plain loads read only the row's units: streams
/// back to back in a buffer of exactly their bytes (its last stream
/// ends where the allocation does, which AddressSanitizer checks), rows
/// of a slot to a few steps, the last step over units the one before
/// moved, its loads ending at the row's end. (In 9 streams or more, rows
/// of a wide slot and more take wide steps: see the next test.)
#[test]
fn the_plain_loads_stay_inside_the_streams() {
    if !Isa::detect().runs_vbmi() {
        return;
    }
    for b in 5..=MAX_STREAMS {
        for unit in (1..=MAX_SLOT_UNIT).filter(|&unit| slot(b, unit) >= unit) {
            let (k, slot) = (interleave_units(b, unit), slot(b, unit));
            assert_eq!(slot, 128 / b.next_power_of_two(), "{b} streams of {unit}-byte units");
            assert!(k >= 1 && slot - k * unit < unit, "{b} streams of {unit}-byte units");
            // From the shortest row of a slot on (shorter ones, of one
            // unit a slot, go masked: the oracle test's).
            let first = slot.div_ceil(unit);
            for n in
                [first, first + 1, k + 1, 2 * k - 1, 2 * k, 2 * k + 1, 3 * k + 1].into_iter().filter(|&n| n >= first)
            {
                interleave_back_to_back(b, unit, n);
            }
        }
    }
}

/// The interleave's wide steps (see [`loads_wide`]) read and write only
/// the row's units, as the plain ones: 9 to 32 streams back to back in
/// a buffer of exactly their bytes, every row from one wide slot to
/// three steps and more, the last step over units the one before moved;
/// the wide slot twice the plain one, 16 bytes of 9 to 16 streams and 8
/// of 17 to 32.
#[test]
fn the_wide_steps_stay_inside_the_streams() {
    if !Isa::detect().runs_vbmi() {
        return;
    }
    for b in 9..=MAX_STREAMS {
        assert_eq!(wide_slot(b), 2 * slot(b, 1), "{b} streams");
        for unit in (1..=MAX_SLOT_UNIT).filter(|&unit| interleaves_wider(b, unit, usize::MAX) && loads_wide(b, unit)) {
            let k = wide_slot(b) / unit;
            for n in wide_slot(b).div_ceil(unit)..=3 * k + 2 {
                interleave_back_to_back(b, unit, n);
            }
        }
    }
}

#[test]
fn each_runs_what_it_takes() {
    for way in [Way::Interleave, Way::Deinterleave] {
        for isa in [Isa::Portable, Isa::baseline(), Isa::Avx512, Isa::detect()] {
            for b in 1..=MAX_STREAMS + 1 {
                for unit in 1..=MAX_SLOT_UNIT + 1 {
                    for n in [0, 1, 2, 31, 32, 33, 100] {
                        check(way, b, unit, n, false, |rows, src, dst, streams| {
                            let ran = takes(way, b, unit, n, isa);
                            if ran {
                                // SAFETY: the rows lie inside the
                                // buffers (as built); it takes them.
                                unsafe { run(way, rows, n, b, unit, src, dst, streams) };
                            }
                            ran
                        });
                    }
                }
            }
        }
    }
}

#[test]
fn takes_vbmi_narrow_units_and_a_vector_a_row() {
    use Way::*;
    assert!(!takes(Interleave, 6, 1, 1000, Isa::Avx512));
    assert!(!takes(Deinterleave, 6, 1, 1000, Isa::Portable));
    let isa = Isa::detect();
    if isa.runs_vbmi() {
        for way in [Interleave, Deinterleave] {
            assert!(takes(way, 6, 1, 11, isa));
            assert!(!takes(way, 6, 1, 10, isa));
            assert!(takes(way, 32, 2, 1, isa));
            assert!(takes(way, 2, 2, 16, isa));
            assert!(!takes(way, 2, 2, 15, isa));
            assert!(!takes(way, 33, 1, 1000, isa));
            assert!(!takes(way, 1, 1, 1000, isa));
            assert!(!takes(way, 2, 5, 1000, isa) || way == Deinterleave);
        }
        // Interleaves of 3- and 4-byte units: 5 streams and more, any
        // length (fewer have kernels of their own).
        assert!(takes(Interleave, 9, 4, 17, isa));
        assert!(takes(Interleave, 5, 4, 100_000, isa));
        assert!(takes(Interleave, 16, 3, 1000, isa));
        assert!(takes(Interleave, 32, 3, 1, isa));
        assert!(!takes(Interleave, 4, 3, 1000, isa));
        assert!(!takes(Interleave, 4, 4, 1000, isa));
        assert!(takes(Interleave, 4, 2, 1000, isa));
        // Interleaves of 5- to 8-byte units: 5 to 16 streams, whose
        // slots hold a unit or more; their deinterleaves: of 5- and
        // 6-byte units, where a step holds two of each stream.
        assert!(takes(Interleave, 5, 6, 100, isa));
        assert!(takes(Interleave, 16, 8, 100, isa));
        assert!(!takes(Interleave, 17, 5, 100, isa));
        assert!(!takes(Interleave, 4, 8, 100, isa));
        // Of 9- to 16-byte units, one a slot of 16 bytes: 5 to 8 streams,
        // and 9 to 16 in rows of a slot or more (wide steps).
        assert!(takes(Interleave, 8, 9, 100, isa));
        assert!(takes(Interleave, 5, 16, 1, isa));
        assert!(!takes(Interleave, 4, 12, 100, isa));
        assert!(takes(Interleave, 16, 12, 2, isa));
        assert!(!takes(Interleave, 16, 12, 1, isa));
        assert!(takes(Interleave, 9, 16, 1, isa));
        assert!(!takes(Interleave, 17, 9, 100, isa));
        assert!(!takes(Interleave, 8, 17, 100, isa));
        assert!(takes(Deinterleave, 2, 5, 1000, isa));
        assert!(takes(Deinterleave, 12, 5, 100, isa));
        assert!(!takes(Deinterleave, 13, 5, 100, isa));
        assert!(takes(Deinterleave, 10, 6, 100, isa));
        assert!(!takes(Deinterleave, 11, 6, 100, isa));
        assert!(!takes(Deinterleave, 2, 7, 100, isa));
        assert!(!takes(Deinterleave, 5, 8, 100, isa));
        assert!(takes(Deinterleave, 2, 3, 1000, isa));
        assert!(takes(Deinterleave, 8, 4, 2, isa));
        assert!(!takes(Deinterleave, 8, 4, 1, isa));
    }
}
