//! Packed units of 3 or 6 bytes (the three channels of a uint8 or
//! float16 pixel) gathered into a contiguous destination a vector at a
//! time: every 48 bytes of the destination (16 or 8 units) go as three
//! 16-byte stores, the units' bytes shifted into place in registers.
//!
//! Moved one at a time (`copy::widens`: one load and one store of the
//! power of two above the unit, each store overlapping the last), such
//! a run costs a store a unit, and a store of 4 bytes into the 3 of a
//! unit (overlapping the one before it by a byte) runs far below the
//! store's own rate. Measured in C on this project's machine (AMD Zen 1),
//! rows of 33 units gathered 4 apart into an L2-resident destination,
//! time over memcpy's: units of 3 bytes 11.1x a unit at a time against
//! 3.0x here; 6 bytes 3.1 against 2.1. (Units of 12 bytes, 1.74 against
//! 1.35 there, measured slower in the engine's grids, whose rows are
//! short: the broad workloads it took, 1.01 to 1.07 of the time.)
//!
//! In the engine (one thread, alternated runs, each workload's minimum,
//! time after over before), the broad workloads whose grids it takes:
//! seed 26's 10, 0.81 (TF NCHW depth-to-space of 6-byte units by 7,
//! 7.3 -> 3.6x memcpy; OpenVINO space-to-depth of 3-byte units by 5,
//! 3.4 -> 2.4); seeds 801 and 802, 14: 0.84.
//!
//! The source units come in the destination's order: rows of `n` units
//! `ss` apart ([`rows`]), or a grid whose rows continue each other in the
//! destination ([`Table`]: the block positions of a depth-to-space, a
//! pixel a row), listed once.
//!
//! Layer: kernels; imports [`nest`](super::nest), [`copy`](super::copy)'s
//! odometer and arch.

use arrayvec::ArrayVec;

use super::nest::{Loop, Rows};
use crate::engine::arch::Isa;

/// The source units of a run, in the destination's order: `rows` rows
/// of `n0` units each, unit `k` of row `i` at `i * ss1 + k * ss0` bytes
/// from the run's source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Units {
    pub rows: usize,
    pub n0: usize,
    pub ss0: isize,
    pub ss1: isize,
}

/// The power of two above a packed unit: the bytes each unit's vector
/// load reads.
const fn wide(unit: usize) -> usize {
    unit.next_power_of_two()
}

/// Whether [`rows`] and [`Table`] move units of `unit` bytes on `isa`:
/// 3 or 6 bytes, with AVX2 (whose byte shuffles and blends of 16-byte
/// vectors they use).
pub(crate) fn takes(isa: Isa, unit: usize) -> bool {
    cfg!(target_arch = "x86_64") && isa >= Isa::Avx2 && matches!(unit, 3 | 6)
}

/// Whether every unit of `units` but the last in the destination's order
/// has the power of two above the unit readable at its source, where the
/// unit itself is: the next unit of its row lies at least that far on
/// (`ss0`), and after a row's last unit, the next row's last unit lies
/// on by at least that less a unit (`ss1`), so that the bytes read past
/// a unit lie between two of the grid's units, inside the source.
fn reads_widened(unit: usize, units: Units) -> bool {
    let w = wide(unit) as isize;
    (units.n0 <= 1 || units.ss0 >= w) && (units.rows <= 1 || units.ss1 >= w - unit as isize)
}

/// Copies each of `rows`' `n` units of `unit` bytes `ss` apart at its
/// source into its contiguous run of the destination: repetition `r`
/// from `src + r * rows.ss` to `dst + r * rows.ds`, at every position
/// of the loops `outer` around them (none: once).
///
/// # Safety
/// Every unit readable at its source and each row's `n * unit` bytes of
/// the destination writable, at every position of `outer`, not
/// overlapping them; `isa` one this CPU runs.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn rows(
    isa: Isa,
    unit: usize,
    outer: &[Loop],
    rows: Rows,
    n: usize,
    ss: isize,
    src: *const u8,
    dst: *mut u8,
) {
    let units = Units { rows: 1, n0: n, ss0: ss, ss1: 0 };
    // A real check, once a call: the kernel reads each unit but a row's
    // last as a whole power of two, past the unit.
    assert!(takes(isa, unit) && reads_widened(unit, units), "packed units of {unit} bytes: {units:?} on {isa:?}");
    #[cfg(target_arch = "x86_64")]
    // SAFETY: forwarded; the reads past each unit are inside the source
    // (`reads_widened`, checked above); AVX2 (`takes`, and the caller's
    // `isa`).
    unsafe {
        match unit {
            3 => x86::strided::<3>(outer, rows, n, ss, src, dst),
            _ => x86::strided::<6>(outer, rows, n, ss, src, dst),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (outer, rows, src, dst);
}

/// The bytes of the destination each step of the kernels stores: three
/// 16-byte vectors, 16 units of 3 bytes or 8 of 6.
const GROUP: usize = 48;

/// The fewest bytes a row [`rows`] moves by itself pays for: two
/// groups. (Shorter rows, OpenVINO batch-to-space of 6-byte units in
/// rows of 9, each grid its own call, took 1.2 times as long as a unit
/// at a time.)
pub(crate) const ROW_BYTES: usize = 2 * GROUP;

/// Most units a [`Table`] lists.
const TABLE: usize = 64;

/// The sources of a grid's units whose rows continue each other in the
/// destination, listed once for all the runs of its shape: walked unit
/// by unit, a row's end makes each unit's source wait on the last's;
/// listed, they are independent. Whole rows, as many as [`TABLE`] holds,
/// go as one run of the destination, those after them in the next.
pub(crate) struct Table {
    units: Units,
    /// Rows a run takes (the last run: the rest): as many as the table
    /// holds, eight or more where the grid has them.
    per: usize,
    /// The sources of a run's units, from its first unit's.
    offsets: ArrayVec<isize, TABLE>,
}

impl Table {
    /// The table of `units`, run `repeats` times, if it pays and the
    /// kernel takes them ([`takes`]): units of 6 bytes in rows shorter
    /// than a group (48 bytes), which the table joins, rows that continue
    /// each other (`rows > 1`), listed for four runs or more, and every
    /// unit but the last reading widened inside the source. Each group's
    /// offsets are as many loads again as its units. Measured against a
    /// unit at a time (alternated runs, each workload's minimum), the
    /// broad workloads of seeds 26, 801 and 802 a table took:
    ///
    /// - 6-byte units in rows of 4 to 8: 0.59 to 0.97 of the time (TF
    ///   NCHW depth-to-space by 7, pixel shuffles by 8, OpenVINO
    ///   depth-to-space by 6);
    /// - in rows of 11 to 15: 0.97 to 1.19 (ONNX depth-to-space by 11
    ///   and 14, TF batch-to-space by 12), so a row of more than 48 bytes
    ///   goes by itself;
    /// - 3-byte units (groups of 16 loads) in rows of 6 and 12: 1.05
    ///   and 1.09 (OpenVINO depth-to-space by 6 and 12);
    /// - a grid listed for each run of its own (OpenVINO batch-to-space
    ///   of 6-byte units with crops on the loops around it): 1.7.
    pub(crate) fn of(isa: Isa, unit: usize, units: Units, repeats: usize) -> Option<Table> {
        let Units { rows, n0, ss0, ss1 } = units;
        let pays = unit == 6 && n0 * unit <= GROUP && repeats >= 4;
        if !pays || !takes(isa, unit) || rows <= 1 || n0 == 0 || !reads_widened(unit, units) {
            return None;
        }
        let per = (TABLE / n0).min(rows);
        let mut offsets = ArrayVec::new();
        for i in 0..per {
            for k in 0..n0 {
                offsets.push(i as isize * ss1 + k as isize * ss0);
            }
        }
        Some(Table { units, per, offsets })
    }

    /// Copies the units of the table's grid from `src` into the
    /// contiguous run at `dst`, in the destination's order, at every
    /// position of the loops `outer` around it (none: once).
    ///
    /// # Safety
    /// Every unit readable at its source and the `rows * n0 * unit` bytes
    /// at `dst` writable, at every position of `outer`, not overlapping
    /// them; the `isa` the table was made for one this CPU runs.
    pub(crate) unsafe fn run(&self, outer: &[Loop], src: *const u8, dst: *mut u8) {
        // SAFETY: forwarded; the reads past each unit but a run's last
        // are inside the source (`reads_widened`, checked by `of`, and a
        // run ends on a row's end); AVX2 (`takes`, checked by `of`).
        #[cfg(target_arch = "x86_64")]
        unsafe {
            x86::listed::<6>(self, outer, src, dst)
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (outer, src, dst);
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;
    use std::ptr;

    use super::super::copy::odometer;
    use super::super::nest::{Loop, Rows};
    use super::{Table, Units};
    use crate::engine::arch::mem::pair;

    /// [`super::rows`] for units of `U` bytes.
    ///
    /// # Safety
    /// As [`super::rows`]; `ss` at least the power of two above `U` (or
    /// one unit a row); the CPU has AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn strided<const U: usize>(
        outer: &[Loop],
        rows: Rows,
        n: usize,
        ss: isize,
        src: *const u8,
        dst: *mut u8,
    ) {
        odometer(outer, 0, 0, |so, dof| {
            let (src, dst) = (src.wrapping_offset(so), dst.wrapping_offset(dof));
            for r in 0..rows.count {
                let (src, dst) = rows.at(r, src, dst);
                // SAFETY: forwarded, the row's units.
                unsafe { gathered::<U>(n, |t| src.wrapping_offset(t as isize * ss), dst) }
            }
        })
    }

    /// [`Table::run`] for units of `U` bytes: each run the table's rows,
    /// from the source's rows `ss1` on from the last run's.
    ///
    /// # Safety
    /// As [`Table::run`]; the CPU has AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn listed<const U: usize>(table: &Table, outer: &[Loop], src: *const u8, dst: *mut u8) {
        let Units { rows, n0, ss1, .. } = table.units;
        let offsets = &table.offsets;
        odometer(outer, 0, 0, |so, dof| {
            let (src, dst) = (src.wrapping_offset(so), dst.wrapping_offset(dof));
            let mut i = 0;
            while i < rows {
                let take = table.per.min(rows - i);
                let s = src.wrapping_offset(i as isize * ss1);
                // SAFETY: rows `i..i + take` of the grid, whose units lie
                // at the table's offsets from their first (caller); their
                // bytes of the destination, from row `i`'s.
                unsafe { gathered::<U>(take * n0, |t| s.wrapping_offset(offsets[t]), dst.add(i * n0 * U)) };
                i += take;
            }
        })
    }

    /// Copies `n` units of `U` bytes, unit `t` from `at(t)`, into the
    /// contiguous run at `dst`: 48 bytes at a time while a unit follows
    /// them, the rest a unit at a time, widened but the last. (Ending on
    /// a group of the last 48 bytes, overlapping the one before it and
    /// its last unit read from before it, measured slower: the broad
    /// workloads of 3-byte units this takes, 0.91 of the time of a unit
    /// at a time against 0.98.)
    ///
    /// # Safety
    /// Each unit readable at its source, the power of two above `U` for
    /// every one but the last; `n * U` bytes writable at `dst`; AVX2.
    #[inline(always)]
    unsafe fn gathered<const U: usize>(n: usize, at: impl Fn(usize) -> *const u8, dst: *mut u8) {
        let Some(last) = n.checked_sub(1) else { return };
        let group = super::GROUP / U;
        let mut t = 0;
        // SAFETY: units `t < last` read widened, `last` exactly (caller);
        // each group stores its units' 48 bytes, each widened unit's
        // excess lands on the next unit's place, written next.
        unsafe {
            while t + group <= last {
                let twelve = |t: usize| twelve::<U>(&at, t);
                store48(dst.add(t * U), [twelve(t), twelve(t + 12 / U), twelve(t + 24 / U), twelve(t + 36 / U)]);
                t += group;
            }
            while t < last {
                widened::<U>(at(t), dst.add(t * U));
                t += 1;
            }
            let (s, d) = (at(last), dst.add(last * U));
            match U {
                3 => pair::<2>(s, d, 3),
                _ => pair::<4>(s, d, 6),
            }
        }
    }

    /// Units `t..t + 12 / U` of the run (two of 6 bytes, four of 3) in a
    /// vector's first 12 bytes (the rest any).
    ///
    /// # Safety
    /// The power of two above `U` readable at each unit's source; AVX2.
    #[inline(always)]
    unsafe fn twelve<const U: usize>(at: &impl Fn(usize) -> *const u8, t: usize) -> __m128i {
        // SAFETY: caller.
        unsafe {
            if U == 6 {
                let (a, b) = (_mm_loadl_epi64(at(t).cast()), _mm_loadl_epi64(at(t + 1).cast()));
                // Bytes 6..12 (words 3 to 5) from `b` moved up by 6.
                return _mm_blend_epi16::<0x38>(a, _mm_slli_si128::<6>(b));
            }
            let q = |j: usize| _mm_loadu_si32(at(t + j));
            let lo = _mm_unpacklo_epi32(q(0), q(1));
            let hi = _mm_unpacklo_epi32(q(2), q(3));
            let packed = _mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
            _mm_shuffle_epi8(_mm_unpacklo_epi64(lo, hi), packed)
        }
    }

    /// Stores the first 12 bytes of each of `v` as 48 contiguous bytes at
    /// `d`, three vectors.
    ///
    /// # Safety
    /// 48 bytes writable at `d`; AVX2.
    #[inline(always)]
    unsafe fn store48(d: *mut u8, v: [__m128i; 4]) {
        // SAFETY: caller.
        unsafe {
            let o0 = _mm_blend_epi16::<0xC0>(v[0], _mm_slli_si128::<12>(v[1]));
            let o1 = _mm_blend_epi16::<0xF0>(_mm_srli_si128::<4>(v[1]), _mm_slli_si128::<8>(v[2]));
            let o2 = _mm_blend_epi16::<0xFC>(_mm_srli_si128::<8>(v[2]), _mm_slli_si128::<4>(v[3]));
            _mm_storeu_si128(d.cast(), o0);
            _mm_storeu_si128(d.add(16).cast(), o1);
            _mm_storeu_si128(d.add(32).cast(), o2);
        }
    }

    /// Copies a unit of `U` bytes as the power of two above it.
    ///
    /// # Safety
    /// That many bytes readable at `s` and writable at `d`.
    #[inline(always)]
    unsafe fn widened<const U: usize>(s: *const u8, d: *mut u8) {
        // SAFETY: caller.
        unsafe {
            if U == 3 {
                ptr::write_unaligned(d.cast(), ptr::read_unaligned(s.cast::<MaybeUninit<[u8; 4]>>()));
            } else {
                ptr::write_unaligned(d.cast(), ptr::read_unaligned(s.cast::<MaybeUninit<[u8; 8]>>()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The units of `units` (unit `k` of row `i` at `i * ss1 + k * ss0`),
    /// copied one by one from a source that ends where its last unit
    /// does (a read past it leaves the allocation).
    fn check(unit: usize, units: Units, table: Option<&Table>, outer: &[Loop]) {
        let Units { rows, n0, ss0, ss1 } = units;
        let reps: usize = outer.iter().map(|l| l.count).product();
        let (span, out) = ((rows - 1) as isize * ss1 + (n0 - 1) as isize * ss0 + unit as isize, rows * n0 * unit);
        let (src_len, dst_len) =
            (outer.iter().map(|l| (l.count - 1) * l.ss as usize).sum::<usize>() + span as usize, reps * out);
        let src: Vec<u8> = (0..src_len).map(|i| (i * 7 + i / 251 + 1) as u8).collect();
        let mut want = vec![0xA5u8; dst_len];
        for r in 0..reps {
            let (mut so, mut dof, mut rest) = (0, 0, r);
            for l in outer.iter().rev() {
                so += rest % l.count * l.ss as usize;
                dof += rest % l.count * l.ds as usize;
                rest /= l.count;
            }
            for i in 0..rows {
                for k in 0..n0 {
                    let s = so + i * ss1 as usize + k * ss0 as usize;
                    let d = dof + (i * n0 + k) * unit;
                    want[d..d + unit].copy_from_slice(&src[s..s + unit]);
                }
            }
        }
        let mut dst = vec![0xA5u8; dst_len];
        let rows_of = Rows { count: rows, ss: ss1, ds: (n0 * unit) as isize };
        // SAFETY: every unit inside `src`, each repetition's rows inside
        // `dst`; the kernels check the rest; AVX2 (`takes`, below).
        unsafe {
            match table {
                Some(t) => t.run(outer, src.as_ptr(), dst.as_mut_ptr()),
                None => super::rows(Isa::detect(), unit, outer, rows_of, n0, ss0, src.as_ptr(), dst.as_mut_ptr()),
            }
        }
        assert_eq!(dst, want, "unit {unit}, {units:?}, table {}, {} outer", table.is_some(), outer.len());
    }

    /// Rows of 3- and 6-byte units around every size a group switches on
    /// (16 and 8 units: shorter rows go a unit at a time, longer ones
    /// end on units after the last group), at every gap between units
    /// from the widened move's up, each row its own run.
    #[test]
    fn rows_gather_every_unit_in_order() {
        if !takes(Isa::detect(), 3) {
            return;
        }
        for unit in [3usize, 6] {
            let group = GROUP / unit;
            for n in [1, 2, group - 1, group, group + 1, 2 * group - 1, 2 * group, 2 * group + 1, 33, 50] {
                for ss in [wide(unit), 2 * unit, 3 * unit, 4 * unit, 13, 64] {
                    let ss = ss.max(wide(unit)) as isize;
                    for rows in [1, 3] {
                        let units = Units { rows, n0: n, ss0: ss, ss1: n as isize * ss + 5 };
                        check(unit, units, None, &[]);
                    }
                }
            }
        }
    }

    /// Grids of 6-byte units whose rows of 1 to 8 continue each other,
    /// listed once and run at each position of two loops around them:
    /// rows the least apart the widened reads allow (2 bytes) and
    /// further, more rows than a run of the table takes (the last run
    /// shorter).
    #[test]
    fn tables_join_rows_into_one_run() {
        if !takes(Isa::detect(), 6) {
            return;
        }
        for n0 in 1..=8usize {
            for rows in [2usize, 7, 8, 9, 17, 64 / n0 + 3] {
                for (ss0, ss1) in [(8isize, 2isize), (8, 6), (30, 6), (6 * rows as isize + 2, 6)] {
                    let ss0 = if n0 == 1 { 1 } else { ss0 };
                    let units = Units { rows, n0, ss0, ss1 };
                    // Repetitions side by side on both sides.
                    let span = (rows - 1) as isize * ss1 + (n0 - 1) as isize * ss0 + 6;
                    let out = (rows * n0 * 6) as isize;
                    let outer = [
                        Loop { count: 2, ss: 3 * span, ds: 3 * out, window: None, is_outer: false },
                        Loop { count: 3, ss: span, ds: out, window: None, is_outer: false },
                    ];
                    let table = Table::of(Isa::detect(), 6, units, 6).expect("a table of short rows");
                    check(6, units, Some(&table), &outer);
                    check(6, units, Some(&table), &[]);
                }
            }
        }
    }

    /// A table only where it measured faster: 6-byte units in rows of at
    /// most 48 bytes, listed for four runs or more, whose reads stay
    /// inside the source.
    #[test]
    fn tables_only_where_they_pay() {
        let isa = Isa::detect();
        if !takes(isa, 6) {
            return;
        }
        let units = Units { rows: 4, n0: 6, ss0: 8, ss1: 6 };
        assert!(Table::of(isa, 6, units, 4).is_some());
        assert!(Table::of(isa, 6, units, 3).is_none(), "too few runs");
        assert!(Table::of(isa, 3, units, 4).is_none(), "3-byte units");
        assert!(Table::of(isa, 6, Units { n0: 9, ..units }, 4).is_none(), "rows of 54 bytes");
        assert!(Table::of(isa, 6, Units { ss1: 1, ..units }, 4).is_none(), "a row's last unit read past the next's");
        assert!(Table::of(isa, 6, Units { ss0: 7, ..units }, 4).is_none(), "units read into the next");
        assert!(Table::of(isa, 6, Units { rows: 1, ..units }, 4).is_none(), "one row");
        assert!(Table::of(Isa::Portable, 6, units, 4).is_none(), "no AVX2");
    }

    /// Units closer than the widened move reads are refused, not read
    /// past: a real check.
    #[test]
    #[should_panic(expected = "packed units of 6 bytes")]
    fn rows_refuse_units_closer_than_a_widened_read() {
        let src = [0u8; 64];
        let mut dst = [0u8; 64];
        // SAFETY: ten units 7 apart end inside `src`; the check panics first.
        unsafe { super::rows(Isa::detect().max(Isa::Avx2), 6, &[], Rows::ONE, 8, 7, src.as_ptr(), dst.as_mut_ptr()) };
    }
}
