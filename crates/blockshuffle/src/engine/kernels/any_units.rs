//! Units of any size for the carried kernels: [`AnyUnits`], the byte-permute
//! tables that gather 2 to 4 streams of units other than 1, 2, 4, 8 or 16
//! bytes (with AVX512-VBMI), and the register carry those kernels share.
//!
//! Layer: kernels; imports arch only.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// Most tables a [`Gathers`] has: one per stream (4) or per destination
/// vector of a step (4).
const MAX_TABLES: usize = 4;

/// Units of sizes that have no kernel of their own (not 1, 2, 4, 8 or 16
/// bytes), up to 64 bytes, `b` (2 to 4) streams: three-channel NHWC
/// pixels, 3 to 48 bytes, and their blocks. The carried kernels move them
/// in steps of whole groups (one unit of each stream), as many as a
/// vector of each stream holds ([`Self::groups_step`]), gathered with
/// byte permutes by tables that are the same every step ([`Gathers`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct AnyUnits {
    pub size: usize,
    pub b: usize,
}

impl AnyUnits {
    /// Whether the carried kernels take these units at all: 2 to 4
    /// streams of units of 3 to 63 bytes, not powers of two.
    pub(super) fn fit(self) -> bool {
        matches!(self.b, 2..=4) && self.size > 2 && self.size < 64 && !self.size.is_power_of_two()
    }

    /// The bytes of each stream a step of [`interleaved_groups`] and
    /// [`carried_groups`] takes, whole units: as many as one vector holds
    /// and the `b` streams' together at most three (`min(64, 192 / b)`), or
    /// one unit (4 streams of units over 48 bytes: at most four vectors
    /// together), if the units fit ([`Self::fit`]).
    pub(crate) fn groups_step(self) -> Option<usize> {
        let per = (64.min(192 / self.b.max(1)) / self.size).max(1);
        self.fit().then_some(per * self.size)
    }
}

/// The tables of the gathers of [`AnyUnits`]: one 64-byte vector from two
/// windows of 128 bytes (two vectors each) by a byte permute of each,
/// blended. Built once per thread for the units last used
/// ([`Gathers::with`]): a cropped tile calls its kernel once per row.
#[cfg(target_arch = "x86_64")]
pub(crate) struct Gathers {
    /// The units, and what is gathered, the tables are for.
    key: Option<(usize, usize, Gather)>,
    /// Per table and window: the indices into the window.
    pub(super) idx: [[[u8; 64]; 2]; MAX_TABLES],
    /// Per table: the lanes taken from window 1 (window 0's are the rest).
    pub(super) take: [u64; MAX_TABLES],
}

/// What the tables of a [`Gathers`] gather.
#[cfg(target_arch = "x86_64")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Gather {
    /// The destination vectors of a step of whole groups
    /// ([`interleaved_groups`]: a table per vector of the step).
    InterleaveGroups,
    /// A step's bytes of each stream from whole groups of the source
    /// ([`carried_groups`]: a table per stream).
    DeinterleaveGroups,
}

#[cfg(target_arch = "x86_64")]
thread_local! {
    static GATHERS: std::cell::RefCell<Gathers> = const {
        std::cell::RefCell::new(Gathers { key: None, idx: [[[0; 64]; 2]; MAX_TABLES], take: [0; MAX_TABLES] })
    };
}

#[cfg(target_arch = "x86_64")]
impl Gathers {
    /// Runs `f` with this thread's tables for gathering `units` by
    /// `what`, built if they are not the last ones used. The caller
    /// checked that the units take them ([`AnyUnits::groups_step`]).
    pub(super) fn with<R>(units: AnyUnits, what: Gather, f: impl FnOnce(&Gathers) -> R) -> R {
        GATHERS.with_borrow_mut(|g| {
            let key = Some((units.size, units.b, what));
            if g.key != key {
                g.key = None;
                let (size, b) = (units.size, units.b);
                let step = units.groups_step().unwrap_or(size);
                let chunk = b * step;
                if what == Gather::DeinterleaveGroups {
                    // Stream `j`'s bytes in lanes `0..step`, from windows
                    // of source vectors 0 and 1, and 1 and 2 of three (2
                    // and 3 of four); the lanes past them are left as any.
                    let second = if chunk > 192 { 128 } else { 192 };
                    g.build(b, |j, t| {
                        let t = t % step;
                        let q = t / size * b * size + j * size + t % size;
                        if q < 128 {
                            q
                        } else {
                            q - 128 + second
                        }
                    });
                } else {
                    // Window `w`: streams `2w` and `2w + 1`, a vector each;
                    // the lanes past the step's bytes are left as any.
                    let group = b * size;
                    g.build(chunk.div_ceil(64), |k, t| {
                        let q = (64 * k + t) % chunk;
                        (q % group / size) * 64 + q / group * size + q % size
                    });
                }
                g.key = key;
            }
            f(g)
        })
    }

    /// The first `tables` tables: byte `t` of a vector by table `k` is
    /// byte `at(k, t)` of the two windows side by side.
    fn build(&mut self, tables: usize, at: impl Fn(usize, usize) -> usize) {
        for k in 0..tables {
            self.take[k] = 0;
            for t in 0..64 {
                let q = at(k, t);
                self.idx[k][q / 128][t] = (q % 128) as u8;
                self.take[k] |= u64::from(q >= 128) << t;
            }
        }
    }
}

/// Bytes `0, 1, ..., 63`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn iota() -> __m512i {
    // SAFETY: a register constant (AVX-512F: the caller's target features).
    unsafe {
        _mm512_set_epi64(
            0x3f3e3d3c3b3a3938,
            0x3736353433323130,
            0x2f2e2d2c2b2a2928,
            0x2726252423222120,
            0x1f1e1d1c1b1a1918,
            0x1716151413121110,
            0x0f0e0d0c0b0a0908,
            0x0706050403020100,
        )
    }
}

/// The permutes of a push of `len` new bytes (bytes `off..off + len` of a
/// vector, `off + len == 64`) onto a line whose first `fill` bytes are
/// held: `line[t] = t < fill ? held[t] : new[t - fill + off]` (index bit 6
/// picks the second register) and, once the line is whole, `held'[t] =
/// new[t + 64 - fill + off]` (indices mod 64).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn carry_permutes(iota: __m512i, fill: usize, off: usize) -> (__m512i, __m512i) {
    // SAFETY: register operations (AVX-512F/BW: the caller's target features).
    unsafe {
        let shift = _mm512_add_epi8(iota, _mm512_set1_epi8((off + 64 - fill) as u8 as i8));
        let mine = _mm512_cmplt_epu8_mask(iota, _mm512_set1_epi8(fill as i8));
        let from_new = _mm512_or_si512(_mm512_and_si512(shift, _mm512_set1_epi8(63)), _mm512_set1_epi8(64));
        (_mm512_mask_blend_epi8(mine, from_new, iota), shift)
    }
}

/// One push of a carried stream (see [`carry_permutes`] for `idx` and
/// `shift`): the line `held ++ new`; with `emit`, its destination and the
/// lanes there that are the stream's (all, but at the stream's first
/// line), where it leaves (a whole line with one aligned streaming store, a
/// first line masked to its lanes with an ordinary one) and the rest of
/// `new` is held; without, the line is held.
///
/// # Safety
/// With `emit`, the line's 64-byte aligned destination is writable in the
/// lanes given; the caller is compiled for AVX-512F/BW and AVX512-VBMI.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn carry_push(
    held: &mut __m512i,
    new: __m512i,
    (idx, shift): (__m512i, __m512i),
    emit: Option<(*mut u8, u64)>,
) {
    // SAFETY: register operations of the caller's features; the stores as
    // the caller guarantees (masked-off lanes are not accessed).
    unsafe {
        let line = _mm512_permutex2var_epi8(*held, idx, new);
        match emit {
            Some((at, u64::MAX)) => _mm512_stream_si512(at.cast(), line),
            Some((at, own)) => _mm512_mask_storeu_epi8(at.cast(), own, line),
            None => {
                *held = line;
                return;
            }
        }
        *held = _mm512_permutexvar_epi8(shift, new);
    }
}
