//! [`super::units`]'s shifted steps: squares streamed into destination
//! rows that start anywhere in their lines, each row's bytes shifted into
//! whole lines with the step's above it ([`shifted`]; four squares a step
//! for packed units, [`shifted_packed`]; each row's lines stored by
//! [`store_row`]), and the shifts themselves ([`shift`] by whole units,
//! [`shift_bytes`] by bytes: [`shift_lanes`]).
//!
//! Layer: kernels; imports its parent's squares and arch.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use super::{rounds, transpose_rows, ROW};
use crate::engine::arch::mem::{lanes, LINE};

/// [`super::square`] streamed into rows that start anywhere in their lines (see
/// [`super::Squares::shifted`]).
///
/// # Safety
/// As [`super::Squares::shifted`]; the CPU has AVX-512F and BW.
#[inline(always)]
pub(super) unsafe fn shifted<const U: usize, const N: usize>(
    rows: &[*const u8],
    at: isize,
    out: &[*mut u8],
    to: isize,
    carry: &mut [MaybeUninit<__m512i>],
    first: bool,
) {
    // SAFETY: as the caller guarantees: each row's units `to..to + 64`
    // are the square's; the line before its first line boundary holds the
    // carried row's last `o` bytes, units of the square above.
    unsafe {
        let mut v = [_mm512_setzero_si512(); N];
        for i in 0..N {
            v[i] = _mm512_loadu_si512(rows[i].offset(at).cast());
        }
        rounds::<U, N>(&mut v);
        for j in 0..N {
            store_row::<U, U, 1>(out[j].offset(to), [v[j]], &mut carry[j], first);
        }
    }
}

/// Row `d`'s part of a shifted step, the `K` vectors `w` (64 bytes each
/// from `d`), streamed into whole lines, each the vector before's last
/// `o` bytes (the carried one's, for the first) and this one's first
/// `64 - o` ([`shift_lanes`]), `o` the row's offset in its line; the
/// chunk's first step (`first`) stores its first line's part through the
/// cache. The last vector is carried for the next step.
///
/// # Safety
/// As [`super::Squares::shifted`] for the row: its `64 * K` bytes from `d`
/// the step's, the `o` before them the carried vector's last unless
/// `first`; the CPU has AVX-512F and BW, and VBMI for packed units and
/// bytes.
#[inline(always)]
pub(super) unsafe fn store_row<const U: usize, const L: usize, const K: usize>(
    d: *mut u8,
    w: [__m512i; K],
    carry: &mut MaybeUninit<__m512i>,
    first: bool,
) {
    // The row's bytes before its line's end.
    let o = d as usize % LINE;
    let line = d.wrapping_sub(o);
    // SAFETY: as the caller guarantees; the carried slot is read only
    // when not `first` (every slot the caller passes is initialised:
    // `units`).
    unsafe {
        for k in 0..K {
            if k == 0 && first {
                _mm512_mask_storeu_epi8(d.cast(), lanes(0, LINE - o), w[0]);
            } else {
                let before = if k == 0 { carry.assume_init() } else { w[k - 1] };
                _mm512_stream_si512(line.add(k * LINE).cast(), shift_lanes::<U, L>(before, w[k], o));
            }
        }
        carry.write(w[K - 1]);
    }
}

/// [`super::Squares::flush`] for rows of `U`-byte units in lanes of `L`:
/// each carried row's bytes past the line its last step stored, through
/// the cache (row `j`'s last 64 bytes at `out[j] + to`, `carry[j]`).
///
/// # Safety
/// As [`super::Squares::flush`]; the CPU has AVX-512F and BW, and VBMI for
/// packed units and bytes.
#[inline(always)]
pub(super) unsafe fn flush_rows<const U: usize, const L: usize>(
    out: &[*mut u8],
    to: isize,
    carry: &[MaybeUninit<__m512i>],
) {
    for (d, c) in out.iter().zip(carry) {
        let d = d.wrapping_offset(to);
        let o = d as usize % LINE;
        if o != 0 {
            // SAFETY: the carried row's last `o` bytes, the units past the
            // line its step stored, into the row's next line (caller);
            // every slot is initialised (`units`).
            unsafe {
                let rest = shift_lanes::<U, L>(c.assume_init(), _mm512_setzero_si512(), o);
                _mm512_mask_storeu_epi8(d.add(LINE - o).cast(), lanes(0, o), rest);
            }
        }
    }
}

/// `a`'s last `o` bytes and `b`'s first `64 - o`: by `U`-byte lanes
/// ([`shift`]), or by bytes for packed units (`U != L`) and bytes
/// (`U == 1`: [`shift_bytes`]).
///
/// # Safety
/// As [`shift`], or [`shift_bytes`] for packed units and bytes.
#[inline(always)]
pub(super) unsafe fn shift_lanes<const U: usize, const L: usize>(a: __m512i, b: __m512i, o: usize) -> __m512i {
    // SAFETY: forwarded.
    unsafe {
        if U == L && U > 1 {
            shift::<U>(a, b, o)
        } else {
            shift_bytes(a, b, o)
        }
    }
}

/// The last `o` bytes of `a` followed by the first `64 - o` of `b` (`o`
/// a whole number of `U`-byte units, below 64), by a two-source permute of
/// `U`-byte lanes (of 8 bytes for wider units).
///
/// # Safety
/// The CPU has AVX-512F and BW.
#[inline(always)]
unsafe fn shift<const U: usize>(a: __m512i, b: __m512i, o: usize) -> __m512i {
    // SAFETY: as the caller guarantees.
    unsafe {
        // Lane `i` of the result is lane `n - k + i` of `a` for `i < k`
        // (an index below `n`), lane `i - k` of `b` after (`n` and up):
        // `(n - k + i) mod 2n`.
        match U {
            2 => {
                let k = (32 - o / 2) as i16;
                let idx = _mm512_and_si512(
                    _mm512_add_epi16(_mm512_loadu_si512(IOTA_16.as_ptr().cast()), _mm512_set1_epi16(k)),
                    _mm512_set1_epi16(63),
                );
                _mm512_permutex2var_epi16(a, idx, b)
            }
            4 => {
                let k = (16 - o / 4) as i32;
                let idx = _mm512_and_si512(
                    _mm512_add_epi32(
                        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                        _mm512_set1_epi32(k),
                    ),
                    _mm512_set1_epi32(31),
                );
                _mm512_permutex2var_epi32(a, idx, b)
            }
            _ => {
                let k = (8 - o / 8) as i64;
                let idx = _mm512_and_si512(
                    _mm512_add_epi64(_mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7), _mm512_set1_epi64(k)),
                    _mm512_set1_epi64(15),
                );
                _mm512_permutex2var_epi64(a, idx, b)
            }
        }
    }
}

/// [`shifted`] for packed units (`U != L`): four squares down the rows,
/// whose 48-byte destination rows make 192 bytes of each, three whole
/// vectors (joined by byte permutes), each then shifted into its line
/// with the one before it by bytes (a packed row starts anywhere).
///
/// Measured (one thread, ratio to memcpy): see `takes::shifts_packed` and
/// `SHIFTED_PACKED_COLS`.
///
/// # Safety
/// As [`super::Squares::shifted`] (`rows` of `4 * N`); the CPU has AVX-512F, BW
/// and VBMI.
#[inline(always)]
pub(super) unsafe fn shifted_packed<const U: usize, const L: usize, const N: usize>(
    rows: &[*const u8],
    at: isize,
    out: &[*mut u8],
    to: isize,
    carry: &mut [MaybeUninit<__m512i>],
    first: bool,
) {
    // Byte `i` of the joined vector `k` (0 to 2): byte `16 * k + i` of
    // square `k`'s row while that is in its 48 bytes, else byte
    // `i - (48 - 16 * k)` of square `k + 1`'s (lanes 64 on).
    const fn join(k: usize) -> [u8; 64] {
        let mut idx = [0u8; 64];
        let mut i = 0;
        while i < 64 {
            let from = 16 * k + i;
            idx[i] = if from < 48 { from as u8 } else { (64 + from - 48) as u8 };
            i += 1;
        }
        idx
    }
    const JOIN: [[u8; 64]; 3] = [join(0), join(1), join(2)];
    // SAFETY: as the caller guarantees: each square's source rows'
    // 48 bytes readable, each row's 192 bytes from `out[j] + to` the
    // step's (their line's bytes before them, `o`, the carried row's last
    // `o` bytes unless `first`).
    unsafe {
        let mut v = [[_mm512_setzero_si512(); N]; 4];
        for (q, v) in v.iter_mut().enumerate() {
            for i in 0..N {
                v[i] = _mm512_maskz_loadu_epi8(ROW, rows[q * N + i].offset(at).cast());
            }
            transpose_rows::<U, L, N>(v);
        }
        let join = JOIN.map(|t| _mm512_loadu_si512(t.as_ptr().cast()));
        for j in 0..N {
            let w = [
                _mm512_permutex2var_epi8(v[0][j], join[0], v[1][j]),
                _mm512_permutex2var_epi8(v[1][j], join[1], v[2][j]),
                _mm512_permutex2var_epi8(v[2][j], join[2], v[3][j]),
            ];
            store_row::<U, L, 3>(out[j].offset(to), w, &mut carry[j], first);
        }
    }
}

/// [`shift`] by bytes (`o` below 64): a two-source byte permute (VBMI).
///
/// # Safety
/// The CPU has AVX-512F, BW and VBMI.
#[inline(always)]
unsafe fn shift_bytes(a: __m512i, b: __m512i, o: usize) -> __m512i {
    // SAFETY: as the caller guarantees.
    unsafe {
        // Lane `i` is lane `64 - o + i` of the pair (`a`'s below 64).
        let idx = _mm512_add_epi8(_mm512_loadu_si512(IOTA_8.as_ptr().cast()), _mm512_set1_epi8((LINE - o) as i8));
        _mm512_permutex2var_epi8(a, idx, b)
    }
}

/// Bytes `0..64`, the lanes of a byte permute that moves nothing.
static IOTA_8: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        t[i] = i as u8;
        i += 1;
    }
    t
};

/// The word indices `0..32`, for [`shift`].
static IOTA_16: [u16; 32] = iota();

const fn iota() -> [u16; 32] {
    let mut idx = [0u16; 32];
    let mut k = 0;
    while k < 32 {
        idx[k] = k as u16;
        k += 1;
    }
    idx
}
