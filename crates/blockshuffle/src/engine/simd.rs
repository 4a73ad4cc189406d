//! Vector kernels for the short runs the compiler does not vectorise well:
//! interleaving and deinterleaving 2 or 4 streams of 1-, 2-, 4-, 8- and
//! 16-byte units (uint8 images, float16 and float32 pixel shuffles, NCHW
//! space-to-depth, complex128), and 3 streams with AVX2 (byte shuffles
//! within lanes: [`Vector::split3`], [`Vector::zip3`]; AVX-512 plans use
//! AVX2's).
//!
//! One body per direction, generic over the vector ([`Vector`]): SSE2
//! (16 bytes, the x86_64 baseline), AVX2 (32 bytes) and AVX-512 (64 bytes,
//! with AVX-512BW). The wider ones are chosen once, when a plan is compiled,
//! by runtime feature detection ([`Isa::detect`]); every one can be forced
//! (`Kernels`), so tests run them all on one machine. Other targets use the
//! portable kernels.
//!
//! The wide vectors work in 16-byte lanes: each step does the SSE2 operation
//! in every lane, then one cross-lane permutation puts the 8-byte halves
//! back in order.
//!
//! Each entry point handles the whole-vector body of its `n` units per
//! stream, for each of its rows (a loop around the tile, see `Rows`), and
//! returns how many units per stream it did; the caller finishes the tails
//! with the portable kernel.
//!
//! With AVX512-VBMI (byte permutes across whole registers), two more
//! kernels run whole streaming tiles whose destination streams continue
//! from one row to the next, 2 to 4 streams (three by permutes):
//! [`deinterleave_carried`] and [`interleave_carried`] carry each stream's
//! unfinished line in a register (units of other sizes, 2 to 4 streams of
//! them, gathered by byte permutes from tables: [`AnyUnits`]), so that
//! every line leaves with one
//! aligned 64-byte streaming store whatever the lengths of the rows. Below
//! VBMI, [`deinterleave_carried`] *joins* the line that a stream's row
//! shares with the next from the sources of the two rows instead
//! (`joined_body`), with any vector.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;
#[cfg(target_arch = "x86_64")]
use std::mem::MaybeUninit;

use super::kernels::{copy_short, prefetch, Rows, PREFETCH_AHEAD};
use super::lines::Writers;
use super::plan::Window;

/// The instruction set a plan's short-run kernels use, narrowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Isa {
    /// The portable kernels only.
    Portable,
    /// SSE2, the x86_64 baseline.
    Sse2,
    /// AVX2 (detected at run time).
    Avx2,
    /// AVX-512F and AVX-512BW (detected at run time).
    Avx512,
    /// AVX-512 with AVX512-VBMI's byte permutes across a whole register
    /// (detected at run time), for [`deinterleave_carried`] and
    /// [`interleave_carried`].
    Avx512Vbmi,
}

impl Isa {
    /// The widest vector kernels this CPU runs.
    pub(crate) fn detect() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw") {
                if is_x86_feature_detected!("avx512vbmi") {
                    return Isa::Avx512Vbmi;
                }
                return Isa::Avx512;
            }
            if is_x86_feature_detected!("avx2") {
                return Isa::Avx2;
            }
            Isa::Sse2
        }
        #[cfg(not(target_arch = "x86_64"))]
        Isa::Portable
    }

    /// The target's baseline vector kernels (no runtime-detected extensions).
    pub(crate) fn baseline() -> Isa {
        if cfg!(target_arch = "x86_64") {
            Isa::Sse2
        } else {
            Isa::Portable
        }
    }
}

/// The register operations the kernels are written in. `S` is the unit size
/// in bytes (1, 2, 4 or 8).
///
/// # Safety
/// Implementations use instructions of their instruction set: call them only
/// from code compiled for it (the `#[target_feature]` entry points below).
#[cfg(target_arch = "x86_64")]
trait Vector: Copy {
    const BYTES: usize;
    /// Loads `BYTES` bytes from `p` (unaligned).
    unsafe fn load(p: *const u8) -> Self;
    /// Stores `BYTES` bytes to `p` (unaligned).
    unsafe fn store(p: *mut u8, v: Self);
    /// Stores `BYTES` bytes to `p`, 16-byte aligned, with streaming stores
    /// of each 16-byte lane (the wider streaming stores need their own
    /// alignment, which outputs rarely have).
    unsafe fn stream(p: *mut u8, v: Self);
    /// Stores `BYTES` bytes to `p`, `BYTES`-byte aligned (a part of a whole
    /// line), with one streaming store.
    unsafe fn stream_aligned(p: *mut u8, v: Self);
    /// The even and the odd units of the concatenation `a ++ b`.
    unsafe fn split<const S: usize>(a: Self, b: Self) -> (Self, Self);
    /// `a0 b0 a1 b1 ...`: the first and the second half of the interleaving.
    unsafe fn zip<const S: usize>(a: Self, b: Self) -> (Self, Self);
    /// Units `j, j + 4, j + 8, ...` of the concatenation `v[0] ++ .. ++
    /// v[3]`, for each `j`: four streams split apart (by [`Vector::split`]
    /// twice, unless the vector has a shorter way).
    #[inline(always)]
    unsafe fn split4<const S: usize>(v: [Self; 4]) -> [Self; 4] {
        // SAFETY: register operations of the implementation's instruction set.
        unsafe { split_twice::<Self, S>(v) }
    }
    /// Units `j, j + 3, j + 6, ...` of `v[0] ++ v[1] ++ v[2]`, for each
    /// `j`: three streams split apart. By default byte by byte through
    /// memory: the kernels split three streams with AVX2 only
    /// (`dispatch3!`), whose way is byte shuffles.
    #[inline(always)]
    unsafe fn split3<const S: usize>(v: [Self; 3]) -> [Self; 3] {
        // SAFETY: the vectors' bytes, moved through memory.
        unsafe { by_bytes(v, |j, t| (t / S * 3 + j) * S + t % S) }
    }
    /// The inverse of [`Vector::split3`]: three streams interleaved, the
    /// three destination vectors in order.
    #[inline(always)]
    unsafe fn zip3<const S: usize>(v: [Self; 3]) -> [Self; 3] {
        // SAFETY: as `split3`.
        unsafe {
            by_bytes(v, |k, t| {
                ((k * Self::BYTES + t) / S % 3) * Self::BYTES + (k * Self::BYTES + t) / (3 * S) * S + t % S
            })
        }
    }
}

/// Three vectors rearranged byte by byte: byte `t` of output `j` is byte
/// `at(j, t)` of the inputs' concatenation (below `3 * V::BYTES`).
///
/// # Safety
/// The CPU runs `V`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn by_bytes<V: Vector>(v: [V; 3], at: impl Fn(usize, usize) -> usize) -> [V; 3] {
    let mut from = [0u8; 192];
    let mut to = [0u8; 192];
    // SAFETY: `3 * V::BYTES <= 192` bytes stored and loaded in the arrays.
    unsafe {
        for (k, v) in v.into_iter().enumerate() {
            V::store(from.as_mut_ptr().add(k * V::BYTES), v);
        }
        for j in 0..3 {
            for t in 0..V::BYTES {
                to[j * V::BYTES + t] = from[at(j, t)];
            }
        }
        std::array::from_fn(|j| V::load(to.as_ptr().add(j * V::BYTES)))
    }
}

/// [`Vector::split4`] by [`Vector::split`]: even and odd units, then the
/// even and odd of each.
///
/// # Safety
/// The CPU runs `V`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn split_twice<V: Vector, const S: usize>(v: [V; 4]) -> [V; 4] {
    // SAFETY: register operations of `V`'s instruction set.
    unsafe {
        let (e01, o01) = V::split::<S>(v[0], v[1]);
        let (e23, o23) = V::split::<S>(v[2], v[3]);
        let (s0, s2) = V::split::<S>(e01, e23);
        let (s1, s3) = V::split::<S>(o01, o23);
        [s0, s1, s2, s3]
    }
}

/// SSE2 lane operations, shared by every width: even/odd units of two lanes
/// (packed into one, in the order `a`'s then `b`'s), and interleavings.
#[cfg(target_arch = "x86_64")]
macro_rules! lane_ops {
    ($S:ident, $a:ident, $b:ident,
     and: $and:ident, set1_16: $set1:ident, packus16: $packus:ident, srli16: $srli16:ident,
     slli32: $slli32:ident, srai32: $srai32:ident, packs32: $packs:ident, castsi_ps: $tops:ident,
     castps_si: $tosi:ident, shuffle_ps: $shuf:ident, unpacklo64: $lo64:ident, unpackhi64: $hi64:ident) => {{
        match $S {
            1 => {
                let mask = $set1(0x00ff);
                ($packus($and($a, mask), $and($b, mask)), $packus($srli16::<8>($a), $srli16::<8>($b)))
            }
            // Sign-extend each 16-bit half, then pack with signed saturation:
            // the values fit, so the pack is exact.
            2 => (
                $packs($srai32::<16>($slli32::<16>($a)), $srai32::<16>($slli32::<16>($b))),
                $packs($srai32::<16>($a), $srai32::<16>($b)),
            ),
            4 => ($tosi($shuf::<0x88>($tops($a), $tops($b))), $tosi($shuf::<0xDD>($tops($a), $tops($b)))),
            _ => ($lo64($a, $b), $hi64($a, $b)),
        }
    }};
}

#[cfg(target_arch = "x86_64")]
macro_rules! lane_zip {
    ($S:ident, $a:ident, $b:ident, $lo8:ident, $hi8:ident, $lo16:ident, $hi16:ident, $lo32:ident, $hi32:ident,
     $lo64:ident, $hi64:ident) => {{
        match $S {
            1 => ($lo8($a, $b), $hi8($a, $b)),
            2 => ($lo16($a, $b), $hi16($a, $b)),
            4 => ($lo32($a, $b), $hi32($a, $b)),
            _ => ($lo64($a, $b), $hi64($a, $b)),
        }
    }};
}

#[cfg(target_arch = "x86_64")]
impl Vector for __m128i {
    const BYTES: usize = 16;
    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: the caller guarantees 16 readable bytes.
        unsafe { _mm_loadu_si128(p.cast()) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut u8, v: Self) {
        // SAFETY: the caller guarantees 16 writable bytes.
        unsafe { _mm_storeu_si128(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn stream(p: *mut u8, v: Self) {
        // SAFETY: the caller guarantees 16 writable, 16-byte aligned bytes.
        unsafe { _mm_stream_si128(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn stream_aligned(p: *mut u8, v: Self) {
        // SAFETY: as `stream`.
        unsafe { Self::stream(p, v) }
    }
    #[inline(always)]
    unsafe fn split<const S: usize>(a: Self, b: Self) -> (Self, Self) {
        if S == 16 {
            // One unit a vector: already apart.
            return (a, b);
        }
        // SAFETY: SSE2 register operations (x86_64 baseline).
        unsafe {
            lane_ops!(S, a, b, and: _mm_and_si128, set1_16: _mm_set1_epi16, packus16: _mm_packus_epi16,
                srli16: _mm_srli_epi16, slli32: _mm_slli_epi32, srai32: _mm_srai_epi32, packs32: _mm_packs_epi32,
                castsi_ps: _mm_castsi128_ps, castps_si: _mm_castps_si128, shuffle_ps: _mm_shuffle_ps,
                unpacklo64: _mm_unpacklo_epi64, unpackhi64: _mm_unpackhi_epi64)
        }
    }
    #[inline(always)]
    unsafe fn zip<const S: usize>(a: Self, b: Self) -> (Self, Self) {
        if S == 16 {
            return (a, b);
        }
        // SAFETY: SSE2 register operations (x86_64 baseline).
        unsafe {
            lane_zip!(
                S,
                a,
                b,
                _mm_unpacklo_epi8,
                _mm_unpackhi_epi8,
                _mm_unpacklo_epi16,
                _mm_unpackhi_epi16,
                _mm_unpacklo_epi32,
                _mm_unpackhi_epi32,
                _mm_unpacklo_epi64,
                _mm_unpackhi_epi64
            )
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl Vector for __m256i {
    const BYTES: usize = 32;
    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: the caller guarantees 32 readable bytes and AVX2.
        unsafe { _mm256_loadu_si256(p.cast()) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut u8, v: Self) {
        // SAFETY: the caller guarantees 32 writable bytes and AVX2.
        unsafe { _mm256_storeu_si256(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn stream(p: *mut u8, v: Self) {
        // SAFETY: the caller guarantees 32 writable bytes, 16-byte aligned, and AVX2.
        unsafe {
            _mm_stream_si128(p.cast(), _mm256_castsi256_si128(v));
            _mm_stream_si128(p.add(16).cast(), _mm256_extracti128_si256::<1>(v));
        }
    }
    #[inline(always)]
    unsafe fn stream_aligned(p: *mut u8, v: Self) {
        // SAFETY: the caller guarantees 32 writable, 32-byte aligned bytes, and AVX2.
        unsafe { _mm256_stream_si256(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn split<const S: usize>(a: Self, b: Self) -> (Self, Self) {
        if S == 16 {
            // SAFETY: register operations (AVX2): `[a0 b0]`, `[a1 b1]` of the lanes.
            return unsafe { (_mm256_permute2x128_si256::<0x20>(a, b), _mm256_permute2x128_si256::<0x31>(a, b)) };
        }
        // SAFETY: register operations (AVX2, the caller's guarantee). Per
        // lane the result's 8-byte halves are `[a's, b's]`; across the two
        // lanes `[a0 b0 a1 b1]`, reordered to `[a0 a1 b0 b1]`.
        unsafe {
            let (e, o) = lane_ops!(S, a, b, and: _mm256_and_si256, set1_16: _mm256_set1_epi16,
                packus16: _mm256_packus_epi16, srli16: _mm256_srli_epi16, slli32: _mm256_slli_epi32,
                srai32: _mm256_srai_epi32, packs32: _mm256_packs_epi32, castsi_ps: _mm256_castsi256_ps,
                castps_si: _mm256_castps_si256, shuffle_ps: _mm256_shuffle_ps,
                unpacklo64: _mm256_unpacklo_epi64, unpackhi64: _mm256_unpackhi_epi64);
            (_mm256_permute4x64_epi64::<0xD8>(e), _mm256_permute4x64_epi64::<0xD8>(o))
        }
    }
    #[inline(always)]
    unsafe fn split4<const S: usize>(v: [Self; 4]) -> [Self; 4] {
        if S >= 8 {
            // SAFETY: register operations (AVX2).
            return unsafe { split_twice::<Self, S>(v) };
        }
        // SAFETY: register operations (AVX2). Each 16-byte lane gathers its
        // units of each stream into one 4-byte part, in stream order (a byte
        // shuffle; 4-byte units already are); a 4x4 transpose of those parts
        // across the four vectors puts stream `j`'s parts in vector `j`,
        // lane by lane, and a permute of the 4-byte parts orders them
        // `[lane 0, lane 1]` of `v[0]`, then of `v[1]`, ...
        unsafe {
            let gather = match S {
                1 => _mm256_setr_epi8(
                    0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7,
                    11, 15,
                ),
                _ => _mm256_setr_epi8(
                    0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15, 0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7,
                    14, 15,
                ),
            };
            // (Array literals, not `map`: its closure is not always inlined.)
            let v = if S == 4 {
                v
            } else {
                let g = |x| _mm256_shuffle_epi8(x, gather);
                [g(v[0]), g(v[1]), g(v[2]), g(v[3])]
            };
            let (a, b) = (_mm256_unpacklo_epi32(v[0], v[1]), _mm256_unpackhi_epi32(v[0], v[1]));
            let (c, d) = (_mm256_unpacklo_epi32(v[2], v[3]), _mm256_unpackhi_epi32(v[2], v[3]));
            let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
            [
                _mm256_permutevar8x32_epi32(_mm256_unpacklo_epi64(a, c), order),
                _mm256_permutevar8x32_epi32(_mm256_unpackhi_epi64(a, c), order),
                _mm256_permutevar8x32_epi32(_mm256_unpacklo_epi64(b, d), order),
                _mm256_permutevar8x32_epi32(_mm256_unpackhi_epi64(b, d), order),
            ]
        }
    }
    #[inline(always)]
    unsafe fn split3<const S: usize>(v: [Self; 3]) -> [Self; 3] {
        // SAFETY: register operations (AVX2). Lane `L` of `g[c]` is 16-byte
        // chunk `c` of the 48-byte group `L` (bytes `48 L ..`); each stream
        // takes its bytes of the three chunks by byte shuffles within the
        // lane, so lane `L` of stream `j` is group `L`'s units of it.
        unsafe {
            let g = [
                _mm256_permute2x128_si256::<0x30>(v[0], v[1]),
                _mm256_permute2x128_si256::<0x21>(v[0], v[2]),
                _mm256_permute2x128_si256::<0x30>(v[1], v[2]),
            ];
            let m = &ThreeStreams::<S>::SPLIT;
            [
                gather3(g, [&m[0][0], &m[1][0], &m[2][0]]),
                gather3(g, [&m[0][1], &m[1][1], &m[2][1]]),
                gather3(g, [&m[0][2], &m[1][2], &m[2][2]]),
            ]
        }
    }
    #[inline(always)]
    unsafe fn zip3<const S: usize>(v: [Self; 3]) -> [Self; 3] {
        // SAFETY: register operations (AVX2). Chunk `c` of both groups
        // (`o[c]`, lane `L` of group `L`) gathers its bytes from the three
        // streams' lane `L`; the chunks are then put in memory order
        // `[o0.0 o1.0] [o2.0 o0.1] [o1.1 o2.1]`.
        unsafe {
            let m = &ThreeStreams::<S>::ZIP;
            let o = [
                gather3(v, [&m[0][0], &m[0][1], &m[0][2]]),
                gather3(v, [&m[1][0], &m[1][1], &m[1][2]]),
                gather3(v, [&m[2][0], &m[2][1], &m[2][2]]),
            ];
            [
                _mm256_permute2x128_si256::<0x20>(o[0], o[1]),
                _mm256_permute2x128_si256::<0x30>(o[2], o[0]),
                _mm256_permute2x128_si256::<0x31>(o[1], o[2]),
            ]
        }
    }
    #[inline(always)]
    unsafe fn zip<const S: usize>(a: Self, b: Self) -> (Self, Self) {
        if S == 16 {
            // Two units a vector: zipping is splitting's lane moves.
            // SAFETY: register operations (AVX2).
            return unsafe { Self::split::<16>(a, b) };
        }
        // SAFETY: register operations (AVX2). Halves `[0 2 1 3]` put halves
        // 0 and 1 in the low 8 bytes of the two lanes, so the per-lane
        // unpacks produce the interleaving in order.
        unsafe {
            let a = _mm256_permute4x64_epi64::<0xD8>(a);
            let b = _mm256_permute4x64_epi64::<0xD8>(b);
            lane_zip!(
                S,
                a,
                b,
                _mm256_unpacklo_epi8,
                _mm256_unpackhi_epi8,
                _mm256_unpacklo_epi16,
                _mm256_unpackhi_epi16,
                _mm256_unpacklo_epi32,
                _mm256_unpackhi_epi32,
                _mm256_unpacklo_epi64,
                _mm256_unpackhi_epi64
            )
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl Vector for __m512i {
    const BYTES: usize = 64;
    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: the caller guarantees 64 readable bytes and AVX-512F.
        unsafe { _mm512_loadu_si512(p.cast()) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut u8, v: Self) {
        // SAFETY: the caller guarantees 64 writable bytes and AVX-512F.
        unsafe { _mm512_storeu_si512(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn stream(p: *mut u8, v: Self) {
        // SAFETY: the caller guarantees 64 writable bytes, 16-byte aligned, and AVX-512F.
        unsafe {
            _mm_stream_si128(p.cast(), _mm512_extracti32x4_epi32::<0>(v));
            _mm_stream_si128(p.add(16).cast(), _mm512_extracti32x4_epi32::<1>(v));
            _mm_stream_si128(p.add(32).cast(), _mm512_extracti32x4_epi32::<2>(v));
            _mm_stream_si128(p.add(48).cast(), _mm512_extracti32x4_epi32::<3>(v));
        }
    }
    #[inline(always)]
    unsafe fn stream_aligned(p: *mut u8, v: Self) {
        // SAFETY: the caller guarantees 64 writable, 64-byte aligned bytes, and AVX-512F.
        unsafe { _mm512_stream_si512(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn split<const S: usize>(a: Self, b: Self) -> (Self, Self) {
        if S == 16 {
            // SAFETY: register operations (AVX-512F): lanes 0 and 2 of each,
            // then 1 and 3.
            return unsafe {
                (_mm512_shuffle_i64x2::<0b10_00_10_00>(a, b), _mm512_shuffle_i64x2::<0b11_01_11_01>(a, b))
            };
        }
        // SAFETY: register operations (AVX-512F/BW). Per lane `[a's, b's]`;
        // across four lanes `[a0 b0 a1 b1 a2 b2 a3 b3]`, reordered to
        // `[a0 a1 a2 a3 b0 b1 b2 b3]`.
        unsafe {
            let (e, o) = lane_ops!(S, a, b, and: _mm512_and_si512, set1_16: _mm512_set1_epi16,
                packus16: _mm512_packus_epi16, srli16: _mm512_srli_epi16, slli32: _mm512_slli_epi32,
                srai32: _mm512_srai_epi32, packs32: _mm512_packs_epi32, castsi_ps: _mm512_castsi512_ps,
                castps_si: _mm512_castps_si512, shuffle_ps: _mm512_shuffle_ps,
                unpacklo64: _mm512_unpacklo_epi64, unpackhi64: _mm512_unpackhi_epi64);
            let order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
            (_mm512_permutexvar_epi64(order, e), _mm512_permutexvar_epi64(order, o))
        }
    }
    #[inline(always)]
    unsafe fn zip<const S: usize>(a: Self, b: Self) -> (Self, Self) {
        if S == 16 {
            // SAFETY: register operations (AVX-512F): `[a0 a1 b0 b1]` and
            // `[a2 a3 b2 b3]`, each put in order `[0 2 1 3]`.
            return unsafe {
                let lo = _mm512_shuffle_i64x2::<0b01_00_01_00>(a, b);
                let hi = _mm512_shuffle_i64x2::<0b11_10_11_10>(a, b);
                (_mm512_shuffle_i64x2::<0b11_01_10_00>(lo, lo), _mm512_shuffle_i64x2::<0b11_01_10_00>(hi, hi))
            };
        }
        // SAFETY: register operations (AVX-512F/BW). Halves `[0 4 1 5 2 6 3 7]`
        // put halves 0..4 in the low 8 bytes of the four lanes.
        unsafe {
            let order = _mm512_setr_epi64(0, 4, 1, 5, 2, 6, 3, 7);
            let a = _mm512_permutexvar_epi64(order, a);
            let b = _mm512_permutexvar_epi64(order, b);
            lane_zip!(
                S,
                a,
                b,
                _mm512_unpacklo_epi8,
                _mm512_unpackhi_epi8,
                _mm512_unpacklo_epi16,
                _mm512_unpackhi_epi16,
                _mm512_unpacklo_epi32,
                _mm512_unpackhi_epi32,
                _mm512_unpacklo_epi64,
                _mm512_unpackhi_epi64
            )
        }
    }
}

/// Byte-shuffle controls for three streams of `S`-byte units, per 16-byte
/// lane (a value with the top bit set makes a zero byte).
#[cfg(target_arch = "x86_64")]
struct ThreeStreams<const S: usize>;

#[cfg(target_arch = "x86_64")]
impl<const S: usize> ThreeStreams<S> {
    /// `SPLIT[c][j]`: stream `j`'s bytes of chunk `c` of a 48-byte group,
    /// at their places in the stream's 16 bytes of the group.
    const SPLIT: [[[i8; 16]; 3]; 3] = {
        let mut m = [[[-128i8; 16]; 3]; 3];
        let mut j = 0;
        while j < 3 {
            let mut t = 0;
            while t < 16 {
                let q = (t / S * 3 + j) * S + t % S;
                m[q / 16][j][t] = (q % 16) as i8;
                t += 1;
            }
            j += 1;
        }
        m
    };
    /// `ZIP[c][j]`: the bytes of chunk `c` of a 48-byte group that come
    /// from stream `j`, taken from the stream's 16 bytes of the group.
    const ZIP: [[[i8; 16]; 3]; 3] = {
        let mut m = [[[-128i8; 16]; 3]; 3];
        let mut q = 0;
        while q < 48 {
            let (j, at) = (q / S % 3, q / (3 * S) * S + q % S);
            m[q / 16][j][q % 16] = at as i8;
            q += 1;
        }
        m
    };
}

/// The OR of the three vectors `v[k]`, each byte-shuffled within its
/// 16-byte lanes by `m[k]` (both lanes alike).
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn gather3(v: [__m256i; 3], m: [&[i8; 16]; 3]) -> __m256i {
    // SAFETY: register operations (AVX2, the caller's); each control is 16
    // readable bytes.
    unsafe {
        let c0 = _mm256_broadcastsi128_si256(_mm_loadu_si128(m[0].as_ptr().cast()));
        let c1 = _mm256_broadcastsi128_si256(_mm_loadu_si128(m[1].as_ptr().cast()));
        let c2 = _mm256_broadcastsi128_si256(_mm_loadu_si128(m[2].as_ptr().cast()));
        let (a, b, c) = (_mm256_shuffle_epi8(v[0], c0), _mm256_shuffle_epi8(v[1], c1), _mm256_shuffle_epi8(v[2], c2));
        _mm256_or_si256(_mm256_or_si256(a, b), c)
    }
}

/// `dst[x * B + j] = stream_j[x]` for the whole vectors of `n` units of `S`
/// bytes, stream `j` at `src + j * ss`, for each of `rows`. Returns the units
/// done per stream.
///
/// # Safety
/// As the portable `interleave` for each of `rows`, and the CPU runs `V`'s
/// instructions.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn interleave_body<V: Vector, const S: usize, const B: usize>(
    rows: Rows,
    n: usize,
    src: *const u8,
    ss: isize,
    dst: *mut u8,
) -> usize {
    let per = V::BYTES / S;
    if n < per {
        return 0;
    }
    let body = n / per * per;
    for r in 0..rows.count {
        let (src, dst) = rows.at(r, src, dst);
        // SAFETY: forwarded, for row `r`; a partial last vector is done as
        // the whole vector that ends the row (`per <= n` units), storing
        // again the same values over the units before it.
        unsafe {
            interleave_row::<V, S, B, false>(body, src, ss, dst);
            if body < n {
                let at = n - per;
                interleave_row::<V, S, B, false>(per, src.add(at * S), ss, dst.add(at * B * S));
            }
        }
    }
    n
}

/// [`interleave_body`] with streaming stores, if it can do every unit with
/// them: each row's `n` units per stream a whole number of vectors, and
/// each row's destination 16-byte aligned. Returns whether it did (if not,
/// it did nothing).
///
/// A streamed interleaving writes one destination run from start to end,
/// so every line is filled by consecutive stores, aligned or not. (A tail
/// left to ordinary stores would share lines with streaming ones, which is
/// slow, hence all or nothing.)
///
/// # Safety
/// As [`interleave_body`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn interleave_streamed_body<V: Vector, const S: usize, const B: usize>(
    rows: Rows,
    n: usize,
    src: *const u8,
    ss: isize,
    dst: *mut u8,
) -> bool {
    let per = V::BYTES / S;
    let aligned = (dst as usize).is_multiple_of(16) && (rows.count == 1 || rows.ds.unsigned_abs().is_multiple_of(16));
    if !n.is_multiple_of(per) || !aligned {
        return false;
    }
    for r in 0..rows.count {
        let (src, dst) = rows.at(r, src, dst);
        // SAFETY: forwarded, for row `r`; its destination is 16-byte aligned
        // and each store is a whole vector from its start.
        unsafe { interleave_row::<V, S, B, true>(n, src, ss, dst) };
    }
    true
}

/// One row of [`interleave_body`]: `body` units per stream, a whole number of vectors.
///
/// # Safety
/// As [`interleave_body`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn interleave_row<V: Vector, const S: usize, const B: usize, const NT: bool>(
    body: usize,
    src: *const u8,
    ss: isize,
    dst: *mut u8,
) {
    let per = V::BYTES / S;
    let s = |j: isize, x: usize| src.wrapping_offset(j * ss).wrapping_add(x * S);
    // SAFETY: every load reads one vector (`per` units) of one stream below
    // `body <= n`; every store writes one vector inside `dst[..n * B * S]`
    // (streaming: at a multiple of `V::BYTES` from `dst`, 16-byte aligned).
    unsafe {
        let store = |p: *mut u8, v: V| if NT { V::stream(p, v) } else { V::store(p, v) };
        let mut x = 0;
        while x < body {
            let d = dst.add(x * B * S);
            if NT && (x * S).is_multiple_of(64) {
                for j in 0..B as isize {
                    prefetch(s(j, x).wrapping_add(PREFETCH_AHEAD), 64);
                }
            }
            let out = interleave_step::<V, S, B>(std::array::from_fn(|j| V::load(s(j as isize, x))));
            for (k, v) in out.into_iter().enumerate() {
                store(d.add(k * V::BYTES), v);
            }
            x += per;
        }
    }
}

/// The `B` destination vectors, in order, of one vector of each of the `B`
/// streams `v` (`B` 2 or 4, or 3 where `V` zips three).
///
/// # Safety
/// The CPU runs `V`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn interleave_step<V: Vector, const S: usize, const B: usize>(v: [V; B]) -> [V; B] {
    // SAFETY: register operations of `V`'s instruction set (the caller's).
    unsafe {
        if B == 2 {
            let (lo, hi) = V::zip::<S>(v[0], v[1]);
            std::array::from_fn(|k| if k == 0 { lo } else { hi })
        } else if B == 3 {
            let o = V::zip3::<S>([v[0], v[1], v[2]]);
            std::array::from_fn(|k| o[k])
        } else {
            let (ac_lo, ac_hi) = V::zip::<S>(v[0], v[2]);
            let (bd_lo, bd_hi) = V::zip::<S>(v[1], v[3]);
            let (o0, o1) = V::zip::<S>(ac_lo, bd_lo);
            let (o2, o3) = V::zip::<S>(ac_hi, bd_hi);
            let o = [o0, o1, o2, o3];
            std::array::from_fn(|k| o[k])
        }
    }
}

/// `stream_j[y] = src[y * B + j]` for the whole vectors of `n` units of `S`
/// bytes per stream, stream `j` at `dst + j * ds`, for each of `rows`.
/// Returns the units done per stream.
///
/// # Safety
/// As the portable `deinterleave` for each of `rows`, and the CPU runs `V`'s
/// instructions.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn deinterleave_body<V: Vector, const S: usize, const B: usize>(
    rows: Rows,
    n: usize,
    src: *const u8,
    dst: *mut u8,
    ds: isize,
) -> usize {
    let per = V::BYTES / S;
    if n < per {
        return 0;
    }
    let body = n / per * per;
    for r in 0..rows.count {
        let (src, dst) = rows.at(r, src, dst);
        // SAFETY: forwarded, for row `r`; a partial last vector is done as
        // the whole vector that ends the row (`per <= n` units), storing
        // again the same values over the units before it.
        unsafe {
            deinterleave_row::<V, S, B>(body, src, dst, ds);
            if body < n {
                let at = n - per;
                deinterleave_row::<V, S, B>(per, src.add(at * B * S), dst.add(at * S), ds);
            }
        }
    }
    n
}

/// One row of [`deinterleave_body`]: `body` units per stream, a whole number of vectors.
///
/// # Safety
/// As [`deinterleave_body`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn deinterleave_row<V: Vector, const S: usize, const B: usize>(
    body: usize,
    src: *const u8,
    dst: *mut u8,
    ds: isize,
) {
    let per = V::BYTES / S;
    let d = |j: usize, y: usize| dst.wrapping_offset(j as isize * ds).wrapping_add(y * S);
    // SAFETY: loads read vectors of `src[..body * B * S]`; stores write one
    // vector (`per` units) of one stream below `body <= n`.
    unsafe {
        let mut y = 0;
        while y < body {
            let v = deinterleave_step::<V, S, B>(src.add(y * B * S));
            for (j, v) in v.into_iter().enumerate() {
                V::store(d(j, y), v);
            }
            y += per;
        }
    }
}

/// One vector of each of the `B` streams, from the `B` vectors at `sp`.
///
/// # Safety
/// `B * V::BYTES` bytes readable at `sp`; `B` is 2 or 4 (3 where `V` splits three); the CPU runs `V`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn deinterleave_step<V: Vector, const S: usize, const B: usize>(sp: *const u8) -> [V; B] {
    // SAFETY: forwarded (a run that does not continue elsewhere).
    unsafe { deinterleave_step_joined::<V, S, B>(sp, sp, usize::MAX) }
}

/// [`deinterleave_step`] from a source run that continues elsewhere: its
/// bytes before `cut` are at `lo`, the rest at `hi` (byte `o >= cut` at
/// `hi + (o - cut)`).
///
/// # Safety
/// The `B * V::BYTES` bytes of the run readable; `cut` a multiple of
/// `V::BYTES` (no vector reads across it); `B` is 2 to 4; the CPU runs `V`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn deinterleave_step_joined<V: Vector, const S: usize, const B: usize>(
    lo: *const u8,
    hi: *const u8,
    cut: usize,
) -> [V; B] {
    // SAFETY: each load reads `V::BYTES` bytes of the run, on one side of `cut`.
    unsafe {
        let mut v = [MaybeUninit::<V>::uninit(); 4];
        for (k, v) in v.iter_mut().enumerate().take(B) {
            let o = k * V::BYTES;
            v.write(V::load(if o < cut { lo.add(o) } else { hi.add(o - cut) }));
        }
        if B == 3 {
            let all = V::split3::<S>([v[0].assume_init(), v[1].assume_init(), v[2].assume_init()]);
            return std::array::from_fn(|j| all[j]);
        }
        if B == 2 {
            let (e, o) = V::split::<S>(v[0].assume_init(), v[1].assume_init());
            return std::array::from_fn(|j| if j == 0 { e } else { o });
        }
        let all = V::split4::<S>([v[0].assume_init(), v[1].assume_init(), v[2].assume_init(), v[3].assume_init()]);
        std::array::from_fn(|j| all[j])
    }
}

/// [`deinterleave_body`] with streaming stores of whole cache lines, if it
/// can do every row so: the `B` destination streams an equal distance from
/// a line boundary (`ds` a multiple of 64), units aligned in every row.
/// Each stream's units up to its first line boundary, and after its last,
/// go through the line writers `w` (which complete the line a row shares
/// with the stream's previous or next row, so that no line mixes ordinary
/// and streaming stores: measured, ordinary stores for those lines alone
/// made float32 NCHW space-to-depth 1.7x memcpy, against 1.2x); in between,
/// each step writes one whole line of every stream. Returns whether it did
/// (if not, it did nothing).
///
/// # Safety
/// As [`deinterleave_body`]; `w` holds only runs of this run's destination.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn deinterleave_streamed_body<V: Vector, const S: usize, const B: usize>(
    rows: Rows,
    n: usize,
    src: *const u8,
    dst: *mut u8,
    ds: isize,
    w: &mut Writers,
) -> bool {
    let lines_apart = ds.unsigned_abs().is_multiple_of(64);
    let units_aligned = (dst as usize).is_multiple_of(S) && rows.ds.unsigned_abs().is_multiple_of(S);
    let per_line = 64 / S;
    if !lines_apart || !units_aligned || n < per_line {
        return false;
    }
    let d = |dst: *mut u8, j: usize, y: usize| dst.wrapping_offset(j as isize * ds).wrapping_add(y * S);
    for r in 0..rows.count {
        let (src, dst) = rows.at(r, src, dst);
        // SAFETY: the head `[0, h)`, the lines `[h, done)` and the tail
        // `[done, n)` partition each stream's `n` units; every streaming
        // store is a 16-byte lane of a line that lies inside the stream's
        // units (64-byte aligned: `h` brings stream 0, and so every stream,
        // to a boundary); loads stay inside `src[..n * B * S]` (the head's
        // and the tail's lines are the first and the last `per_line <= n`
        // units); the writers get the heads and tails, and are told of the
        // lines between.
        unsafe {
            let h = (((64 - dst as usize % 64) % 64) / S).min(n);
            let lines = (n - h) / per_line;
            let done = h + lines * per_line;
            if h > 0 {
                let part = line_parts::<V, S, B>(src);
                for (j, p) in part.iter().enumerate() {
                    w.push(p.as_ptr().cast(), d(dst, j, 0), h * S);
                }
            }
            for l in 0..lines {
                let y = h + l * per_line;
                prefetch(src.wrapping_add(y * B * S + PREFETCH_AHEAD), 64 * B);
                let line = line_registers::<V, S, B>(src.add(y * B * S));
                for (j, l) in line.iter().enumerate() {
                    put_line::<V, true>(l, d(dst, j, y));
                }
            }
            if lines > 0 {
                for j in 0..B {
                    w.skip(d(dst, j, h), lines * 64);
                }
            }
            let t = n - done;
            if t > 0 {
                let part = line_parts::<V, S, B>(src.add((n - per_line) * B * S));
                for (j, p) in part.iter().enumerate() {
                    w.push(p.as_ptr().cast::<u8>().add((per_line - t) * S), d(dst, j, done), t * S);
                }
            }
        }
    }
    true
}

/// One line (64 bytes) of each of the `B` streams, from the `64 * B` source
/// bytes at `sp`, in registers (a line of several streams stored a vector
/// at a time in turn measured 1.7x memcpy, against 1.35x stored whole).
/// Entry `[j][k / V::BYTES]` holds bytes `k..k + V::BYTES` of stream `j`'s
/// line; the entries from `64 / V::BYTES` on are not set.
///
/// # Safety
/// `64 * B` bytes readable at `sp`; the CPU runs `V`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn line_registers<V: Vector, const S: usize, const B: usize>(sp: *const u8) -> [[MaybeUninit<V>; 4]; B] {
    // SAFETY: forwarded (a run that does not continue elsewhere).
    unsafe { line_registers_joined::<V, S, B>(sp, sp, usize::MAX) }
}

/// [`line_registers`] from a source run that continues elsewhere (see
/// [`deinterleave_step_joined`]).
///
/// # Safety
/// The `64 * B` bytes of the run readable; `cut` a multiple of
/// `V::BYTES`; the CPU runs `V`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn line_registers_joined<V: Vector, const S: usize, const B: usize>(
    lo: *const u8,
    hi: *const u8,
    cut: usize,
) -> [[MaybeUninit<V>; 4]; B] {
    let mut line = [[MaybeUninit::<V>::uninit(); 4]; B];
    let mut k = 0;
    while k < 64 {
        // SAFETY: the step reads `B * V::BYTES` bytes at `k * B < 64 * B`,
        // from `lo` below `cut` and from `hi` past it.
        let v = unsafe {
            let o = k * B;
            if o < cut {
                deinterleave_step_joined::<V, S, B>(lo.add(o), hi, cut - o)
            } else {
                deinterleave_step::<V, S, B>(hi.add(o - cut))
            }
        };
        for (l, v) in line.iter_mut().zip(v) {
            l[k / V::BYTES].write(v);
        }
        k += V::BYTES;
    }
    line
}

/// [`line_registers`], stored to a buffer per stream.
///
/// # Safety
/// As [`line_registers`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn line_parts<V: Vector, const S: usize, const B: usize>(sp: *const u8) -> [[MaybeUninit<u8>; 64]; B] {
    let mut part = [[MaybeUninit::<u8>::uninit(); 64]; B];
    // SAFETY: forwarded; each store writes `V::BYTES` bytes at `k < 64` of
    // a 64-byte part; the registers up to `64 / V::BYTES` are set.
    unsafe {
        let line = line_registers::<V, S, B>(sp);
        for (p, l) in part.iter_mut().zip(&line) {
            put_line::<V, false>(l, p.as_mut_ptr().cast());
        }
    }
    part
}

/// Stores one line held in registers (its first `64 / V::BYTES` vectors,
/// as [`line_registers`] gives them) to `at`: with one aligned streaming
/// store a vector when `NT` (`at` 64-byte aligned), ordinary ones if not.
///
/// # Safety
/// 64 writable bytes at `at` (aligned when `NT`); those vectors set; the
/// CPU runs `V`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn put_line<V: Vector, const NT: bool>(line: &[MaybeUninit<V>; 4], at: *mut u8) {
    let mut k = 0;
    while k < 64 {
        // SAFETY: vector `k / V::BYTES` of the line, to bytes `k..k + V::BYTES` of the 64.
        unsafe {
            let v = line[k / V::BYTES].assume_init();
            if NT {
                V::stream_aligned(at.add(k), v);
            } else {
                V::store(at.add(k), v);
            }
        }
        k += V::BYTES;
    }
}

/// Monomorphises a carried kernel (AVX512-VBMI) for each unit size and
/// stream count it has; `false` for the others.
#[cfg(target_arch = "x86_64")]
macro_rules! dispatch_carried {
    ($kernel:ident, $size:expr, $b:expr, ($($arg:expr),*)) => {
        match ($size, $b) {
            (1, 2) => $kernel::<1, 2>($($arg),*),
            (1, 3) => $kernel::<1, 3>($($arg),*),
            (1, 4) => $kernel::<1, 4>($($arg),*),
            (2, 2) => $kernel::<2, 2>($($arg),*),
            (2, 3) => $kernel::<2, 3>($($arg),*),
            (2, 4) => $kernel::<2, 4>($($arg),*),
            (4, 2) => $kernel::<4, 2>($($arg),*),
            (4, 3) => $kernel::<4, 3>($($arg),*),
            (4, 4) => $kernel::<4, 4>($($arg),*),
            (8, 2) => $kernel::<8, 2>($($arg),*),
            (8, 3) => $kernel::<8, 3>($($arg),*),
            (8, 4) => $kernel::<8, 4>($($arg),*),
            _ => return false,
        }
    };
}

/// Monomorphises a kernel of whole groups ([`carried_groups`],
/// [`interleaved_groups`]) for each stream count `b` and vectors a step
/// (the `b * step` bytes' vectors), the usual steps of three-channel pixels
/// and their blocks (48, 60 and 63 bytes) known at compile time (others
/// at run time: 0); `false` for the others.
#[cfg(target_arch = "x86_64")]
macro_rules! dispatch_groups {
    ($kernel:ident, $b:expr, $step:expr, ($($arg:expr),*)) => {
        match ($b, ($b * $step).div_ceil(64), $step) {
            (2, 2, 60) => $kernel::<2, 2, 60>($($arg),*),
            (2, 2, _) => $kernel::<2, 2, 0>($($arg),*),
            (3, 2, _) => $kernel::<3, 2, 0>($($arg),*),
            (3, 3, 63) => $kernel::<3, 3, 63>($($arg),*),
            (3, 3, 60) => $kernel::<3, 3, 60>($($arg),*),
            (3, 3, _) => $kernel::<3, 3, 0>($($arg),*),
            (4, 2, _) => $kernel::<4, 2, 0>($($arg),*),
            (4, 3, 48) => $kernel::<4, 3, 48>($($arg),*),
            (4, 3, _) => $kernel::<4, 3, 0>($($arg),*),
            (4, 4, _) => $kernel::<4, 4, 0>($($arg),*),
            _ => return false,
        }
    };
}

/// Monomorphises a kernel for each unit size and stream count it has.
#[cfg(target_arch = "x86_64")]
macro_rules! dispatch {
    ($kernel:ident, $V:ty, $size:expr, $b:expr, ($($arg:expr),*), $none:expr) => {
        match ($size, $b) {
            (1, 2) => $kernel::<$V, 1, 2>($($arg),*),
            (1, 4) => $kernel::<$V, 1, 4>($($arg),*),
            (2, 2) => $kernel::<$V, 2, 2>($($arg),*),
            (2, 4) => $kernel::<$V, 2, 4>($($arg),*),
            (4, 2) => $kernel::<$V, 4, 2>($($arg),*),
            (4, 4) => $kernel::<$V, 4, 4>($($arg),*),
            (8, 2) => $kernel::<$V, 8, 2>($($arg),*),
            (8, 4) => $kernel::<$V, 8, 4>($($arg),*),
            (16, 2) => $kernel::<$V, 16, 2>($($arg),*),
            (16, 4) => $kernel::<$V, 16, 4>($($arg),*),
            _ => $none,
        }
    };
}

/// [`dispatch!`] for three streams (AVX2: `__m256i`'s byte shuffles split
/// and zip them).
#[cfg(target_arch = "x86_64")]
macro_rules! dispatch3 {
    ($kernel:ident, $V:ty, $size:expr, ($($arg:expr),*), $none:expr) => {
        match $size {
            1 => $kernel::<$V, 1, 3>($($arg),*),
            2 => $kernel::<$V, 2, 3>($($arg),*),
            4 => $kernel::<$V, 4, 3>($($arg),*),
            8 => $kernel::<$V, 8, 3>($($arg),*),
            16 => $kernel::<$V, 16, 3>($($arg),*),
            _ => $none,
        }
    };
}

/// Defines `$name(isa, size, b, args...)`: the kernel `$body` compiled for
/// each instruction set (SSE2, AVX2, AVX-512) and for each unit size and
/// stream count (`dispatch!`), run for `isa`; without vector kernels (the
/// portable `isa`, or another target) it returns `$none`.
macro_rules! entry_point {
    ($(#[$doc:meta])* $name:ident => $body:ident($($arg:ident: $ty:ty),*) -> $ret:ty, none: $none:expr) => {
        $(#[$doc])*
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn $name(isa: Isa, size: usize, b: usize, $($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                // Unoptimised, every kernel of an instruction set inlined
                // into its dispatch made one frame of up to 2 MiB (the
                // padded joined kernel's: a thread's whole stack), so
                // there each unit size and stream count runs in a function
                // of its own (`sse2_kernel`, `avx2_kernel`,
                // `avx512_kernel`); optimised, the kernels are inlined as
                // they are written, into a dispatch whose frame is small.
                #[cfg(debug_assertions)]
                #[allow(clippy::too_many_arguments)]
                unsafe fn sse2_kernel<V: Vector, const S: usize, const B: usize>($($arg: $ty),*) -> $ret {
                    // SAFETY: forwarded.
                    unsafe { $body::<V, S, B>($($arg),*) }
                }
                #[cfg(debug_assertions)]
                #[allow(clippy::too_many_arguments)]
                #[target_feature(enable = "avx2")]
                unsafe fn avx2_kernel<V: Vector, const S: usize, const B: usize>($($arg: $ty),*) -> $ret {
                    // SAFETY: forwarded.
                    unsafe { $body::<V, S, B>($($arg),*) }
                }
                #[cfg(debug_assertions)]
                #[allow(clippy::too_many_arguments)]
                #[target_feature(enable = "avx512f,avx512bw")]
                unsafe fn avx512_kernel<V: Vector, const S: usize, const B: usize>($($arg: $ty),*) -> $ret {
                    // SAFETY: forwarded.
                    unsafe { $body::<V, S, B>($($arg),*) }
                }
                #[cfg(not(debug_assertions))]
                use $body as sse2_kernel;
                #[cfg(not(debug_assertions))]
                use $body as avx2_kernel;
                #[cfg(not(debug_assertions))]
                use $body as avx512_kernel;
                unsafe fn sse2(size: usize, b: usize, $($arg: $ty),*) -> $ret {
                    // SAFETY: SSE2 is the x86_64 baseline; the rest is forwarded.
                    unsafe { dispatch!(sse2_kernel, __m128i, size, b, ($($arg),*), $none) }
                }
                #[target_feature(enable = "avx2")]
                unsafe fn avx2(size: usize, b: usize, $($arg: $ty),*) -> $ret {
                    // SAFETY: the caller detected AVX2; the rest is forwarded.
                    unsafe {
                        if b == 3 {
                            return dispatch3!(avx2_kernel, __m256i, size, ($($arg),*), $none);
                        }
                        dispatch!(avx2_kernel, __m256i, size, b, ($($arg),*), $none)
                    }
                }
                #[target_feature(enable = "avx512f,avx512bw")]
                unsafe fn avx512(size: usize, b: usize, $($arg: $ty),*) -> $ret {
                    // SAFETY: the caller detected AVX-512F/BW; the rest is forwarded.
                    unsafe { dispatch!(avx512_kernel, __m512i, size, b, ($($arg),*), $none) }
                }
                // SAFETY: forwarded; the instruction set was detected.
                unsafe {
                    match isa {
                        Isa::Portable => $none,
                        Isa::Sse2 => sse2(size, b, $($arg),*),
                        Isa::Avx2 => avx2(size, b, $($arg),*),
                        // Three streams with AVX2's (AVX-512 has no byte
                        // shuffle across lanes without VBMI).
                        Isa::Avx512 | Isa::Avx512Vbmi if b == 3 => avx2(size, b, $($arg),*),
                        Isa::Avx512 | Isa::Avx512Vbmi => avx512(size, b, $($arg),*),
                    }
                }
            }
            #[cfg(not(target_arch = "x86_64"))]
            {
                let _ = (isa, size, b, $($arg),*);
                $none
            }
        }
    };
}

entry_point! {
    /// `dst[x * b + j] = stream_j[x]`, streams at `src + j * ss`; units of
    /// `size` bytes; for each of `rows`. Does the whole-vector body of every
    /// row; returns the units done per stream.
    ///
    /// # Safety
    /// As the portable `interleave` for each of `rows`: `n` units readable per
    /// stream, `n * b` writable at `dst`, no overlap; `isa` is one this CPU runs
    /// (from [`Isa::detect`] or below it).
    interleave => interleave_body(rows: Rows, n: usize, src: *const u8, ss: isize, dst: *mut u8) -> usize, none: 0
}

entry_point! {
    /// [`interleave`] with streaming stores for every unit of every row, if
    /// the vector kernel of `isa` can do them all (see `interleave_streamed_body`);
    /// returns whether it did (if not, nothing is written).
    ///
    /// # Safety
    /// As [`interleave`].
    interleave_streamed => interleave_streamed_body(
        rows: Rows, n: usize, src: *const u8, ss: isize, dst: *mut u8
    ) -> bool, none: false
}

entry_point! {
    /// `stream_j[y] = src[y * b + j]`, streams at `dst + j * ds`; units of
    /// `size` bytes; for each of `rows`. Does the whole-vector body of every
    /// row; returns the units done per stream.
    ///
    /// # Safety
    /// As the portable `deinterleave` for each of `rows`: `n * b` units readable
    /// at `src`, `n` writable per stream, no overlap; `isa` is one this CPU runs.
    deinterleave => deinterleave_body(rows: Rows, n: usize, src: *const u8, dst: *mut u8, ds: isize) -> usize, none: 0
}

entry_point! {
    /// [`deinterleave`] with streaming stores of whole lines, if the vector
    /// kernel of `isa` can do every row so (see `deinterleave_streamed_body`),
    /// the parts of lines through the line writers `w`; returns whether it did
    /// (if not, nothing is written).
    ///
    /// # Safety
    /// As [`deinterleave`]; `w` holds only runs of this run's destination.
    deinterleave_streamed => deinterleave_streamed_body(
        rows: Rows, n: usize, src: *const u8, dst: *mut u8, ds: isize, w: &mut Writers
    ) -> bool, none: false
}

/// The destination side of [`deinterleave_carried`]: `rows` steps every
/// stream by one row (`rows.ds` is the row's `n * size` bytes), so that each
/// stream is one contiguous run over all rows; `streams` is the loop of
/// stream groups inside it (`count` groups of `b` streams, group `i` at
/// `i * streams.ss` in the source and `i * streams.ds` in the destination),
/// and `ds` the distance between the `b` streams of a group.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Carried {
    pub rows: Rows,
    pub streams: Rows,
    pub ds: isize,
    /// What the kernel has fetched ahead while it reads each row.
    pub ahead: Ahead,
    /// The padding of source rows read in place (`None`: every source
    /// byte named is data).
    pub pad: Option<Padding>,
}

/// The padding of a carried deinterleave's source rows, read in place
/// (OpenVINO NCHW space-to-batch with pads): row `(r, i)` is data at bytes
/// `lo..hi` if group `i` is inside `groups`' range at `r` (the window of
/// the groups' loop on the rows' index), and wholly padding if not. Only
/// its data bytes need be readable; the rest reads as zeros.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Padding {
    pub lo: usize,
    pub hi: usize,
    pub groups: Option<Window>,
}

/// How [`joined_rows`] reads its source rows: [`NoPad`], each row whole in
/// place, or a [`Padding`].
#[cfg(target_arch = "x86_64")]
trait RowBytes: Copy {
    /// Whether some reads are checked against the row's data bytes.
    const PADDED: bool;
    /// The data bytes of row `(r, i)` of `row` bytes.
    fn data(&self, r: usize, i: usize, row: usize) -> (usize, usize);
}

/// Every source byte of every row is data.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct NoPad;

#[cfg(target_arch = "x86_64")]
impl RowBytes for NoPad {
    const PADDED: bool = false;
    #[inline(always)]
    fn data(&self, _: usize, _: usize, row: usize) -> (usize, usize) {
        (0, row)
    }
}

#[cfg(target_arch = "x86_64")]
impl RowBytes for Padding {
    const PADDED: bool = true;
    #[inline(always)]
    fn data(&self, r: usize, i: usize, _: usize) -> (usize, usize) {
        // The window's range within `0..=i` holds `i` exactly when its
        // whole range does.
        match self.groups.map(|w| w.range(r, i + 1)) {
            Some((s, e)) if !(s..e).contains(&i) => (0, 0),
            _ => (self.lo, self.hi),
        }
    }
}

/// `len` bytes from `o` of a source row at `sr` whose data bytes are
/// `lo..hi`: in place if they are all data, or else made whole in
/// `scratch` ([`made_whole`]).
///
/// # Safety
/// The row's data bytes readable; `len` (a multiple of `V::BYTES`) bytes
/// writable at `scratch`; the CPU runs `V`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn row_bytes<V: Vector, P: RowBytes>(
    sr: *const u8,
    data: (usize, usize),
    o: usize,
    len: usize,
    scratch: *mut u8,
) -> *const u8 {
    if !P::PADDED || (data.0 <= o && o + len <= data.1) {
        return sr.wrapping_add(o);
    }
    // SAFETY: forwarded.
    unsafe { made_whole::<V>(sr, data, o, len, scratch) };
    scratch
}

/// Writes bytes `o..o + len` of a source row at `sr` whose data bytes are
/// `lo..hi` to `to`: zeros, and the data bytes among them copied in.
///
/// # Safety
/// The row's data bytes readable; `len` rounded up to a whole number of
/// vectors writable at `to`; the CPU runs `V`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn made_whole<V: Vector>(sr: *const u8, (lo, hi): (usize, usize), o: usize, len: usize, to: *mut u8) {
    let a = lo.max(o).min(o + len);
    let b = hi.max(a).min(o + len);
    // SAFETY: the zeros fill whole vectors from `to` (the caller's bytes);
    // `a..b` are data bytes of the row inside `o..o + len`, copied by
    // vectors inside that range (the last one ending at `b`) or by
    // `copy_short`.
    unsafe {
        let zero = V::load(ZEROS.as_ptr());
        let mut k = 0;
        while k < len {
            V::store(to.add(k), zero);
            k += V::BYTES;
        }
        let (from, to, n) = (sr.add(a), to.add(a - o), b - a);
        if n <= 64 {
            copy_short(from, to, n);
        } else {
            let mut k = 0;
            while k + V::BYTES < n {
                V::store(to.add(k), V::load(from.add(k)));
                k += V::BYTES;
            }
            V::store(to.add(n - V::BYTES), V::load(from.add(n - V::BYTES)));
        }
    }
}

/// A line of zeros, for vector loads.
#[cfg(target_arch = "x86_64")]
static ZEROS: [u8; 64] = [0; 64];

/// What a carried kernel fetches ahead of its reads ([`prefetch`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ahead {
    /// The source [`PREFETCH_AHEAD`] bytes past the part being read (a
    /// source read in its order), below AVX512-VBMI; with it, nothing (see
    /// [`carried_rows`]).
    Source,
    /// While it reads row `r` of group `i`, the `len` bytes at `base + r *
    /// ss + i * gs`: the rows of the next chunk, when the kernel reads a
    /// staged copy of the source (a hint: they need not exist).
    Rows { base: *const u8, ss: isize, gs: isize, len: usize },
}

impl Ahead {
    /// Fetches ahead for row `r` of group `i`, whose `len` bytes are read at
    /// `from` (`Rows` fetches its own `len` of the next chunk's row instead).
    #[inline(always)]
    fn fetch(self, r: usize, i: usize, from: *const u8, len: usize) {
        match self {
            Ahead::Source => prefetch(from.wrapping_add(PREFETCH_AHEAD), len),
            Ahead::Rows { base, ss, gs, len: next } => {
                let at =
                    base.wrapping_offset((r as isize).wrapping_mul(ss).wrapping_add((i as isize).wrapping_mul(gs)));
                prefetch(at, next)
            }
        }
    }
}

/// Most destination streams [`deinterleave_carried`] carries (one vector
/// register each).
pub(crate) const CARRIED_STREAMS: usize = 16;

/// Deinterleaves `b` streams of `n` units of `size` bytes from each source
/// row, for every row of `c.rows` and group of `c.streams` (source row
/// `(r, i)` at `src + r * c.rows.ss + i * c.streams.ss`), into destination
/// streams that each continue from one row to the next: stream `(i, j)`'s
/// row `r` at `dst + i * c.streams.ds + j * c.ds + r * c.rows.ds`.
///
/// Each stream's bytes are carried from one row to the next in a register
/// (AVX512-VBMI permutes bytes across two registers), so that every line
/// of every stream leaves whole, with one 64-byte streaming store, however
/// the rows fall on lines; only a stream's first and last line, which it
/// shares with the bytes before and after it, take ordinary stores (of its
/// own bytes only). Measured (ratio to memcpy): uint8 pixel_unshuffle by 4
/// (16 streams of 128-byte rows) 1.15-1.2x, against 1.6-1.7x storing
/// through the cache; float32 NCHW space-to-depth 1.05-1.1x, against 1.3x
/// with whole lines per row and the rows' ends through the writers.
///
/// Below AVX512-VBMI, and for padded rows (`c.pad`) of 1- to 16-byte units
/// with it, the line a stream's row shares with the next is joined from
/// the two rows' sources instead (`joined_body`, `joined_padded_body`);
/// units of other sizes ([`carried_groups`]) read padded
/// rows in place with masked reads, their padding as zeros.
///
/// Returns whether it did the work (if not, nothing is written): it needs
/// a vector `isa` and rows of at least 64 bytes per stream; with
/// AVX512-VBMI, 2 to 4 streams of 1- to 8-byte units, or of units that
/// [`AnyUnits::groups_step`] takes, at most
/// [`CARRIED_STREAMS`] streams (each may start anywhere in a line); below
/// it, what `joined_body` needs.
///
/// # Safety
/// Every source unit named above readable, every destination unit writable,
/// no overlap; `isa` one this CPU runs (from [`Isa::detect`] or below it).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn deinterleave_carried(
    isa: Isa,
    size: usize,
    b: usize,
    c: Carried,
    n: usize,
    src: *const u8,
    dst: *mut u8,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let rows_fit = n.checked_mul(size).is_some_and(|row| row >= 64 && c.rows.ds == row as isize);
        if c.pad.is_some() && (isa < Isa::Avx512Vbmi || matches!(size, 1 | 2 | 4 | 8 | 16)) {
            // The VBMI kernel of these units reads whole rows, so padded
            // ones take the joined kernel whatever the `isa` (with VBMI,
            // AVX-512's); units of other sizes are gathered with masked
            // reads, which read padded rows in place.
            // SAFETY: forwarded, with `c.rows.ds` the row's bytes.
            return rows_fit && unsafe { deinterleave_joined_padded(isa, size, b, c, n, src, dst) };
        }
        if isa < Isa::Avx512Vbmi {
            // SAFETY: forwarded, with `c.rows.ds` the row's bytes.
            return rows_fit && unsafe { deinterleave_joined(isa, size, b, c, n, src, dst) };
        }
        let fits = rows_fit && c.streams.count.checked_mul(b).is_some_and(|s| s <= CARRIED_STREAMS);
        if !fits || c.rows.count == 0 {
            return fits;
        }
        if !matches!(size, 1 | 2 | 4 | 8) {
            let units = AnyUnits { size, b };
            let Some(step) = units.groups_step() else { return false };
            return Gathers::with(units, Gather::DeinterleaveGroups, |g| {
                // SAFETY: as below, with `step` the units' and `g` their
                // tables.
                unsafe { dispatch_groups!(carried_groups, b, step, (g, size, step, c, n, src, dst)) }
                true
            });
        }
        // SAFETY: the CPU has AVX512-VBMI (`isa`, detected); the rest is forwarded.
        unsafe { dispatch_carried!(carried, size, b, (c, n, src, dst)) }
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (isa, size, b, c, n, src, dst);
        false
    }
}

/// The body of [`deinterleave_carried`], which checked its conditions, for
/// units of 1 to 8 bytes: one vector of each stream per `64 * B` source
/// bytes, split apart in registers, carried by [`carried_rows`].
///
/// # Safety
/// As [`deinterleave_carried`], whose conditions hold; the CPU has AVX-512F,
/// AVX-512BW and AVX512-VBMI.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
unsafe fn carried<const S: usize, const B: usize>(c: Carried, n: usize, src: *const u8, dst: *mut u8) {
    let per = 64 / S;
    let thirds = Thirds::new(|j, t| t / S * 3 * S + j * S + t % S);
    // One vector of each stream from the `64 * B` source bytes at `sp`.
    let at = |sp: *const u8| -> [__m512i; B] {
        if B == 3 {
            // SAFETY: `64 * 3` bytes readable at `sp` (the caller's).
            let v = thirds.pick(unsafe { [0, 1, 2].map(|k| _mm512_loadu_si512(sp.add(k * 64).cast())) });
            std::array::from_fn(|j| v[j])
        } else {
            // SAFETY: as above, with `B` 2 or 4.
            unsafe { deinterleave_step::<__m512i, S, B>(sp) }
        }
    };
    // SAFETY: each step reads `64 * B` bytes of one source row, at unit `k
    // * per` for `k < n / per` or at `n - per` (`n >= per`: rows of at
    // least 64 bytes), so inside the row's `n * B` units; the rest is
    // forwarded.
    unsafe {
        carried_rows::<B, 64>(
            c,
            n * S,
            64,
            dst,
            |r, i| src.wrapping_offset(r as isize * c.rows.ss + i as isize * c.streams.ss),
            |sr, k| at(sr.add(k * 64 * B)),
            |sr| (at(sr.add((n - per) * B * S)), 64 - n % per * S),
        )
    }
}

/// The body of [`deinterleave_carried`] for units of other sizes, 2 to 4
/// streams (NHWC pixels of three channels, and their blocks): a step
/// reads `L` source vectors once, whose whole groups hold `step` bytes of
/// each stream ([`AnyUnits::groups_step`]: 48 bytes of units that divide
/// it, by 4; 63 of 3-byte units by 3), gathers each stream's by the same
/// table every step, held in registers (windows of vectors 0 and 1, and 1
/// and 2, or 2 and 3 of four), and pushes them onto the stream's line. The
/// gathers it replaced (`carried_any`, removed) read each stream's own
/// windows for each of its vectors, and tables by the vector's phase with
/// them.
///
/// # Safety
/// As [`deinterleave_carried`], whose conditions hold, for `B` streams of
/// units of `size` bytes, `step` their [`AnyUnits::groups_step`], `L`
/// vectors for `B * step` bytes, `g` their tables
/// ([`Gather::DeinterleaveGroups`]); the CPU has AVX-512F, AVX-512BW and
/// AVX512-VBMI.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[allow(clippy::too_many_arguments)]
unsafe fn carried_groups<const B: usize, const L: usize, const STEP: usize>(
    g: &Gathers,
    size: usize,
    step: usize,
    c: Carried,
    n: usize,
    src: *const u8,
    dst: *mut u8,
) {
    // The step's bytes known here (units that divide 48, by 4: measured
    // 0.77 -> 0.84x memcpy over 9 NHWC deinterleaves of them with it known
    // at run time), or at run time (0).
    let step = if STEP != 0 { STEP } else { step };
    let (row, src_row) = (n * size, n * size * B);
    // The data bytes of the row being read: all of it, or those that
    // `c.pad` gives (the rest read as zeros).
    let data = std::cell::Cell::new((0, src_row));
    // SAFETY: loads of the tables' 64-byte arrays.
    let idx: [[__m512i; 2]; B] =
        std::array::from_fn(|j| std::array::from_fn(|w| unsafe { _mm512_loadu_si512(g.idx[j][w].as_ptr().cast()) }));
    let take: [u64; B] = std::array::from_fn(|j| g.take[j]);
    // Each stream's `step` bytes of the groups from source byte `base` of
    // the row at `sr`.
    let at = |sr: *const u8, base: usize| -> [__m512i; B] {
        let (lo, hi) = data.get();
        let masked = base < lo || base + 64 * L > hi;
        // SAFETY: the `L` vectors lie in the row's data bytes unless
        // `masked`, when only those are read (`read`); register
        // operations of this function's features.
        unsafe {
            let v: [__m512i; L] = std::array::from_fn(|q| read(sr, base + 64 * q, (lo, hi), masked));
            std::array::from_fn(|j| {
                let lo = _mm512_permutex2var_epi8(v[0], idx[j][0], v[1]);
                if L == 2 {
                    return lo;
                }
                // The second window: vectors 1 and 2 of three, 2 and 3 of four.
                let hi = _mm512_permutex2var_epi8(v[L - 2], idx[j][1], v[L - 1]);
                _mm512_mask_blend_epi8(take[j], lo, hi)
            })
        }
    };
    let chunk = B * step;
    // SAFETY: step `k < row / step` reads source bytes `chunk * k..` of
    // the row (`B * row` bytes), the last `B * (row - step)..` (`row >= 64
    // >= step`), `L` vectors each, the row's data bytes alone near its
    // ends; the rest is forwarded.
    unsafe {
        carried_rows::<B, STEP>(
            c,
            row,
            step,
            dst,
            |r, i| {
                if let Some(pad) = c.pad {
                    data.set(pad.data(r, i, src_row));
                }
                src.wrapping_offset(r as isize * c.rows.ss + i as isize * c.streams.ss)
            },
            |sr, k| at(sr, chunk * k),
            |sr| (at(sr, B * (row - step)), step - row % step),
        )
    }
}

/// 64 bytes at `sr + at`, of which, if `masked`, only those in `data`
/// (a range of bytes from `sr`) are read, the rest zero: a row's end, or
/// its padding.
///
/// # Safety
/// The bytes read readable; the caller is compiled for AVX-512BW.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn read(sr: *const u8, at: usize, (lo, hi): (usize, usize), masked: bool) -> __m512i {
    let p = sr.wrapping_add(at);
    let below = |n: usize| if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
    // SAFETY: the caller's; masked-off lanes are not accessed.
    unsafe {
        if masked {
            let k = below(hi.saturating_sub(at)) & !below(lo.saturating_sub(at));
            _mm512_maskz_loadu_epi8(k, p.cast())
        } else {
            _mm512_loadu_si512(p.cast())
        }
    }
}

/// The row loop of [`carried`] and [`carried_groups`]:
/// for every row `r` of `c.rows` and group `i` of `c.streams`, the source
/// row at `row_at(r, i)` gives each of its `B` streams `row` bytes, `bytes`
/// of each per `step(sr, k)` (`STEP` if not 0: 64, whole vectors, or a
/// usual step of [`carried_groups`]; stream bytes `bytes * k..`, in a
/// vector's first `bytes` lanes) for `k < row / bytes`, and the row's last
/// `row % bytes` bytes from `last(sr)`: vectors of each stream and the
/// offset in them of those bytes.
///
/// Every stream gets the same bytes per row, so one count serves them all:
/// `pushed`, the bytes each stream has received. Stream `s` starts `m[s]`
/// bytes past a line boundary (`base[s]`, its line-aligned start), so its
/// next byte is `pos = m[s] + pushed` bytes from there: line `pos / 64`,
/// whose first `pos % 64` bytes its register holds. A push of `len` new
/// bytes (bytes `off..off + len` of a vector of the stream, `off + len <=
/// 64`) makes the line `held[..fill] ++ new`: if that reaches 64 bytes, the
/// line leaves and the rest of `new` is held; otherwise it is held. A
/// stream's first line starts `m[s]` bytes before it (bytes that are not
/// its own), its last ends `fill` bytes into a line.
///
/// # Safety
/// As [`deinterleave_carried`], whose conditions hold, with `step` and
/// `last` reading inside the row; the caller is compiled for AVX-512F,
/// AVX-512BW and AVX512-VBMI.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[inline]
unsafe fn carried_rows<const B: usize, const STEP: usize>(
    c: Carried,
    row: usize,
    bytes: usize,
    dst: *mut u8,
    row_at: impl Fn(usize, usize) -> *const u8,
    step: impl Fn(*const u8, usize) -> [__m512i; B],
    last: impl Fn(*const u8) -> ([__m512i; B], usize),
) {
    // A step's bytes known here (64: whole vectors; or a usual step of
    // `carried_groups`), or at run time (0).
    let bytes = if STEP != 0 { STEP } else { bytes };
    let whole = row / bytes;
    let tail = row % bytes;
    let groups = c.streams.count;
    let iota = iota();
    let permutes = |fill: usize, off: usize| carry_permutes(iota, fill, off);
    let mut held = [_mm512_setzero_si512(); CARRIED_STREAMS];
    let mut m = [0usize; CARRIED_STREAMS];
    let mut base = [dst; CARRIED_STREAMS];
    for i in 0..groups {
        for j in 0..B {
            let d = dst.wrapping_offset(i as isize * c.streams.ds + j as isize * c.ds);
            m[i * B + j] = d as usize % 64;
            base[i * B + j] = d.wrapping_sub(d as usize % 64);
        }
    }
    let mut pushed = 0usize;
    // SAFETY: loads: the caller's `step` and `last`. Stores: stream `s`'s
    // bytes `0..total` (`total = rows * row`) sit at `m[s]..m[s] + total`
    // from `base[s]`; a line that leaves whole lies inside them (aligned,
    // streaming); line 0 with `m[s] > 0` is stored masked to its bytes
    // `m[s]..`, the last partial line masked to its first `fill` bytes, so
    // no byte outside the stream is written (masked-off bytes are not
    // accessed).
    unsafe {
        // Pushes `new` onto stream `s` at `pos` (`m[s]` plus the bytes
        // before): the line leaves if `emit`.
        let push = |held: &mut __m512i, new: __m512i, s: usize, pos: usize, emit: bool, p| {
            let own = if pos < 64 { u64::MAX << m[s] } else { u64::MAX };
            let at = if emit { Some((base[s].wrapping_add(pos / 64 * 64), own)) } else { None };
            carry_push(held, new, p, at);
        };
        let mut p = [(iota, iota); B];
        for r in 0..c.rows.count {
            for i in 0..groups {
                let sr = row_at(r, i);
                for (j, p) in p.iter_mut().enumerate() {
                    *p = permutes((m[i * B + j] + pushed) % 64, 0);
                }
                // The next chunk's row once a row. A source read in its
                // order is left to the hardware prefetchers: fetching it
                // `PREFETCH_AHEAD` bytes ahead, a step at a time, measured
                // slower (4 runs alternating, median per workload: 44
                // carried deinterleaves, NHWC space-to-batch and
                // depth-to-space, pixel_unshuffle, OpenVINO space-to-batch,
                // geomean 0.894 -> 0.863x memcpy without; the public
                // workloads so carried, 3 runs: NCHW space-to-depth 0.73 ->
                // 0.64, pixel_unshuffle 0.79 -> 0.70 and 0.66 -> 0.61,
                // OpenVINO space-to-batch 1.04 -> 0.97).
                if let Ahead::Rows { .. } = c.ahead {
                    c.ahead.fetch(r, i, sr, 0);
                }
                for k in 0..whole {
                    for (j, v) in step(sr, k).into_iter().enumerate() {
                        let s = i * B + j;
                        let pos = m[s] + pushed + k * bytes;
                        if STEP == 64 {
                            // Whole vectors keep the line offset: the row's permutes.
                            push(&mut held[s], v, s, pos, true, p[j]);
                        } else {
                            push(&mut held[s], v, s, pos, pos % 64 + bytes >= 64, permutes(pos % 64, 0));
                        }
                    }
                }
                if tail > 0 {
                    let (v, off) = last(sr);
                    for (j, v) in v.into_iter().enumerate() {
                        let s = i * B + j;
                        let pos = m[s] + pushed + whole * bytes;
                        let emit = pos % 64 + tail >= 64;
                        push(&mut held[s], v, s, pos, emit, permutes(pos % 64, off));
                    }
                }
            }
            pushed += row;
        }
        for s in 0..groups * B {
            let pos = m[s] + pushed;
            if !pos.is_multiple_of(64) {
                let at = base[s].wrapping_add(pos / 64 * 64);
                _mm512_mask_storeu_epi8(at.cast(), (1u64 << (pos % 64)) - 1, held[s]);
            }
        }
    }
}

/// The body of [`deinterleave_carried`] below AVX512-VBMI, for any vector
/// width: each row's whole lines go straight out, and the line a stream's
/// row shares with its next row is *joined* in the source instead of being
/// carried in a register: its source is the end of the previous row's
/// source followed by the start of this one's, read from the two places
/// (or, where a vector would straddle them, from a copy of the two side by
/// side in a small buffer), and it leaves with aligned streaming stores
/// like the others. The `B` streams of a group must share their offset in
/// a line (`c.ds` a multiple of 64); groups and rows may start anywhere.
/// The source is walked in its order, each row fetched ahead whole; rows
/// shorter than [`BURST`] gather their lines per stream first (`Bursts`).
/// Measured with AVX2 (ratio to memcpy, one thread): uint8 pixel_unshuffle
/// by 4 (16 streams of 128-byte rows) 0.75-0.8x, against 1.4x storing
/// through the cache; float16 pixel_unshuffle by 2 0.75-0.9x, against
/// 1.05-1.1x with whole lines per row and the rows' ends through the
/// writers.
///
/// Returns whether it did the work (if not, nothing is written): it needs
/// rows of at least 64 bytes per stream, streams of a group a line multiple
/// apart, and units aligned in every stream.
///
/// # Safety
/// As [`deinterleave_carried`], with `c.rows.ds == n * S`; the CPU runs `V`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn joined_body<V: Vector, const S: usize, const B: usize>(
    c: Carried,
    n: usize,
    src: *const u8,
    dst: *mut u8,
) -> bool {
    // SAFETY: forwarded.
    unsafe { joined_with::<V, S, B, _>(c, n, src, dst, NoPad) }
}

/// [`joined_body`] of padded rows (`c.pad`), read in place: an entry point
/// of its own, so that neither kernel's frame holds both.
///
/// # Safety
/// As [`joined_body`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn joined_padded_body<V: Vector, const S: usize, const B: usize>(
    c: Carried,
    n: usize,
    src: *const u8,
    dst: *mut u8,
) -> bool {
    let Some(pad) = c.pad else { return false };
    // SAFETY: forwarded.
    unsafe { joined_with::<V, S, B, _>(c, n, src, dst, pad) }
}

/// [`joined_body`] with the rows read as `pad` says.
///
/// # Safety
/// As [`joined_body`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn joined_with<V: Vector, const S: usize, const B: usize, P: RowBytes>(
    c: Carried,
    n: usize,
    src: *const u8,
    dst: *mut u8,
    pad: P,
) -> bool {
    let row = n * S;
    let fits = row >= 64
        && c.ds.unsigned_abs().is_multiple_of(64)
        && (dst as usize).is_multiple_of(S)
        && c.streams.ds.unsigned_abs().is_multiple_of(S);
    if !fits {
        return false;
    }
    let chunk = (BURST / row).max(1);
    // SAFETY: forwarded; `chunk` rows put at most `BURST / 64` lines in
    // each stream (`Bursts`), at most `CARRIED_STREAMS` of them.
    unsafe {
        if chunk > 1 && c.streams.count.checked_mul(B).is_some_and(|s| s <= CARRIED_STREAMS) {
            joined_rows::<V, S, B, _, P>(c, n, src, dst, chunk, &mut Bursts::new(c.ds), pad)
        } else {
            joined_rows::<V, S, B, _, P>(c, n, src, dst, 1, &mut Direct(c.ds), pad)
        }
    }
    true
}

/// Bytes of each destination stream that [`joined_body`] writes back to
/// back. Streams a power of two apart (uint8 pixel_unshuffle by 4: sixteen
/// 16 KiB planes) written a line or two at a time in turn measured 1.25x
/// memcpy, at 512 bytes a turn as fast as streams that are not (0.7x; a
/// model of the stores alone: 2 lines a turn 0.9-1.0x memcpy, 8 lines
/// 0.6x, like one stream).
const BURST: usize = 512;

/// The rows of [`joined_body`], `chunk` at a time, their whole lines put
/// into `sink`, which sends them out after each chunk.
///
/// # Safety
/// As [`joined_body`], whose conditions hold; `sink` takes the lines of
/// `chunk` rows of every stream.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn joined_rows<V: Vector, const S: usize, const B: usize, K: LineSink, P: RowBytes>(
    c: Carried,
    n: usize,
    src: *const u8,
    dst: *mut u8,
    chunk: usize,
    sink: &mut K,
    pad: P,
) {
    let row = n * S;
    // One line of each of the `B` streams is `64 * B` source bytes.
    let span = 64 * B;
    // (A vector more than two reads: padded reads fill whole vectors.)
    let mut join = [MaybeUninit::<u8>::uninit(); 2 * 64 * 4 + 64];
    // Where a read that meets padding is made whole (outside the join).
    let mut padded = [MaybeUninit::<u8>::uninit(); 64 * 4];
    let pad_at = padded.as_mut_ptr().cast::<u8>();
    // SAFETY (whole body): let `d` be stream 0's row start in a group
    // (every stream of the group at the same offset `off` in a line) and
    // `p0 = (64 - off) % 64`. Each row's stream bytes `[p0, row)` of whole
    // lines start on a line boundary and are units (`d` and every stride
    // are unit multiples, so is `p0`); its last `t < 64` bytes and the next
    // row's first `p0' = 64 - t` form the joined line, which lies inside
    // the stream (`t`, `p0' < 64 <= row`). Stores: whole aligned lines
    // inside the stream (through `sink`, each group's in order), ordinary
    // stores of the first row's head and the last row's tail; together
    // every byte of every stream once. Loads: `span` bytes at unit offsets
    // `0 <= p0 + 64 * k <= row - 64` of a row (`n * B * S` bytes, readable
    // where `pad` says they are data: `row_bytes` copies reads that are not
    // all data into `padded`), or `span` bytes inside `join` (padded, the
    // joined line's `cut` and `span - cut` bytes of the two rows made whole
    // at `span - cut` and `span`, each filling whole vectors: at most
    // `2 * span + 64` bytes).
    unsafe {
        let at = |r: usize, i: usize| {
            let sr = src.wrapping_offset(r as isize * c.rows.ss + i as isize * c.streams.ss);
            (sr, dst.wrapping_offset(i as isize * c.streams.ds).wrapping_add(r * row))
        };
        let mut r0 = 0;
        while r0 < c.rows.count {
            let r1 = c.rows.count.min(r0 + chunk);
            for r in r0..r1 {
                for i in 0..c.streams.count {
                    let (sr, d) = at(r, i);
                    let data = pad.data(r, i, row * B);
                    c.ahead.fetch(r, i, sr, row * B);
                    let off = d as usize % 64;
                    let p0 = (64 - off) % 64;
                    if off != 0 && r == 0 {
                        line_part::<V, S, B>(row_bytes::<V, P>(sr, data, 0, span, pad_at), d, c.ds, 0, p0);
                    } else if off != 0 {
                        let buf = join.as_mut_ptr().cast::<u8>();
                        let cut = off * B;
                        let line = if P::PADDED {
                            // Only the line's bytes, made whole side by
                            // side: the previous row's last `cut` and this
                            // row's first `span - cut`.
                            let (prev, prev_data) = (sr.wrapping_offset(-c.rows.ss), pad.data(r - 1, i, row * B));
                            made_whole::<V>(prev, prev_data, row * B - cut, cut, buf.add(span - cut));
                            made_whole::<V>(sr, data, 0, span - cut, buf.add(span));
                            line_registers::<V, S, B>(buf.add(span - cut))
                        } else {
                            let prev = sr.wrapping_offset(-c.rows.ss).add((row - 64) * B);
                            if cut.is_multiple_of(V::BYTES) {
                                line_registers_joined::<V, S, B>(prev.add(span - cut), sr, cut)
                            } else {
                                let mut k = 0;
                                while k < span {
                                    V::store(buf.add(k), V::load(prev.add(k)));
                                    V::store(buf.add(span + k), V::load(sr.add(k)));
                                    k += V::BYTES;
                                }
                                line_registers::<V, S, B>(buf.add(span - cut))
                            }
                        };
                        sink.put::<V, B>(&line, i, d.sub(off));
                    }
                    let mut y = p0;
                    while y + 64 <= row {
                        let sp = row_bytes::<V, P>(sr, data, y * B, span, pad_at);
                        sink.put::<V, B>(&line_registers::<V, S, B>(sp), i, d.add(y));
                        y += 64;
                    }
                    let t = row - y;
                    if t > 0 && r + 1 == c.rows.count {
                        let sp = row_bytes::<V, P>(sr, data, (row - 64) * B, span, pad_at);
                        line_part::<V, S, B>(sp, d.add(y), c.ds, 64 - t, t);
                    }
                }
            }
            sink.flush::<V, B>(c.streams.count);
            r0 = r1;
        }
    }
}

/// Where [`joined_rows`] puts whole lines: one line of each of the `B`
/// streams of a group at a time, stream `j`'s to `d + j * ds`.
#[cfg(target_arch = "x86_64")]
trait LineSink {
    /// Takes the line of each stream of group `g` (`line[j]`, its first
    /// `64 / V::BYTES` vectors) for the 64-byte aligned `d + j * ds`.
    ///
    /// # Safety
    /// Those lines writable; the CPU runs `V`; the sink's own conditions.
    unsafe fn put<V: Vector, const B: usize>(&mut self, line: &[[MaybeUninit<V>; 4]; B], g: usize, d: *mut u8);
    /// Sends out what it holds of groups `0..groups` (of `B` streams).
    ///
    /// # Safety
    /// The CPU runs `V`.
    unsafe fn flush<V: Vector, const B: usize>(&mut self, groups: usize);
}

/// Lines straight out, with streaming stores; `.0` is `ds`.
#[cfg(target_arch = "x86_64")]
struct Direct(isize);

#[cfg(target_arch = "x86_64")]
impl LineSink for Direct {
    #[inline(always)]
    unsafe fn put<V: Vector, const B: usize>(&mut self, line: &[[MaybeUninit<V>; 4]; B], _: usize, d: *mut u8) {
        // SAFETY: each store is an aligned part of one of the lines (the caller's).
        unsafe {
            for (j, l) in line.iter().enumerate() {
                put_line::<V, true>(l, d.wrapping_offset(j as isize * self.0));
            }
        }
    }
    #[inline(always)]
    unsafe fn flush<V: Vector, const B: usize>(&mut self, _: usize) {}
}

/// Lines gathered per stream in a cache-resident buffer, then streamed out
/// one stream after another ([`BURST`] bytes of each back to back). The
/// lines a group puts between flushes must continue one another (each the
/// line after the last), at most `BURST / 64` of them, in at most
/// [`CARRIED_STREAMS`] streams.
#[cfg(target_arch = "x86_64")]
struct Bursts {
    /// Stream `s`'s lines at `s * BURST`.
    buf: BurstBuffer,
    /// Per group: the destination of its first line held (stream 0's), and
    /// how many lines each of its streams holds.
    first: [*mut u8; CARRIED_STREAMS],
    held: [usize; CARRIED_STREAMS],
    ds: isize,
}

#[cfg(target_arch = "x86_64")]
#[repr(align(64))]
struct BurstBuffer([MaybeUninit<u8>; CARRIED_STREAMS * BURST]);

#[cfg(target_arch = "x86_64")]
impl Bursts {
    fn new(ds: isize) -> Self {
        Bursts {
            buf: BurstBuffer([MaybeUninit::uninit(); CARRIED_STREAMS * BURST]),
            first: [std::ptr::null_mut(); CARRIED_STREAMS],
            held: [0; CARRIED_STREAMS],
            ds,
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl LineSink for Bursts {
    #[inline(always)]
    unsafe fn put<V: Vector, const B: usize>(&mut self, line: &[[MaybeUninit<V>; 4]; B], g: usize, d: *mut u8) {
        let k = self.held[g];
        // A real check (a line's, not an element's: two compares beside
        // 64 * B bytes of stores): the lines are written into a fixed
        // buffer. `joined_with` takes `chunk` rows of at most `BURST`
        // bytes per stream, whose whole lines are at most `BURST / 64`,
        // in at most `CARRIED_STREAMS` streams, but only this enforces it.
        assert!(k < BURST / 64 && (g + 1) * B <= CARRIED_STREAMS, "a burst outgrows its buffer");
        if k == 0 {
            self.first[g] = d;
        }
        // SAFETY: line `k < BURST / 64` of stream `g * B + j < CARRIED_STREAMS`
        // (both checked above) lies inside the buffer.
        unsafe {
            for (j, l) in line.iter().enumerate() {
                put_line::<V, false>(l, self.buf.0.as_mut_ptr().cast::<u8>().add((g * B + j) * BURST + k * 64));
            }
        }
        self.held[g] = k + 1;
    }
    #[inline(always)]
    unsafe fn flush<V: Vector, const B: usize>(&mut self, groups: usize) {
        for g in 0..groups {
            let lines = std::mem::take(&mut self.held[g]);
            for j in 0..B {
                let from = self.buf.0.as_ptr().cast::<u8>().wrapping_add((g * B + j) * BURST);
                let to = self.first[g].wrapping_offset(j as isize * self.ds);
                // SAFETY: the `lines` lines held of stream `(g, j)` continue
                // one another from `to` (64-byte aligned), all in the stream.
                unsafe {
                    let mut o = 0;
                    while o < lines * 64 {
                        V::stream_aligned(to.add(o), V::load(from.add(o)));
                        o += V::BYTES;
                    }
                }
            }
        }
    }
}

/// Stores bytes `from..from + len` of one line of each of the `B` streams,
/// deinterleaved from the `64 * B` source bytes at `sp`, to `d + j * ds`,
/// with ordinary stores.
///
/// # Safety
/// `64 * B` bytes readable at `sp`; `from + len <= 64`; `len` writable bytes
/// at each `d + j * ds`; the CPU runs `V`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn line_part<V: Vector, const S: usize, const B: usize>(
    sp: *const u8,
    d: *mut u8,
    ds: isize,
    from: usize,
    len: usize,
) {
    // SAFETY: forwarded; the copy reads inside a 64-byte part.
    unsafe {
        let part = line_parts::<V, S, B>(sp);
        for (j, p) in part.iter().enumerate() {
            std::ptr::copy_nonoverlapping(p.as_ptr().add(from).cast::<u8>(), d.wrapping_offset(j as isize * ds), len);
        }
    }
}

entry_point! {
    /// [`deinterleave_carried`] with any vector: see `joined_body`.
    ///
    /// # Safety
    /// As [`deinterleave_carried`], with `c.rows.ds == n * size`.
    deinterleave_joined => joined_body(c: Carried, n: usize, src: *const u8, dst: *mut u8) -> bool, none: false
}

entry_point! {
    /// [`deinterleave_joined`] of padded rows: see `joined_padded_body`.
    ///
    /// # Safety
    /// As [`deinterleave_carried`], with `c.rows.ds == n * size`.
    deinterleave_joined_padded => joined_padded_body(
        c: Carried, n: usize, src: *const u8, dst: *mut u8
    ) -> bool, none: false
}

/// Three vectors rearranged into three with AVX512-VBMI (splitting three
/// interleaved streams, or interleaving them): byte `t` of output `j` is
/// byte `q = at(j, t)` of the three inputs (`q < 192`), picked from the
/// first two or the last two by two permutes and a blend. Splitting
/// `S`-byte units, `at(j, t) = (t / S) * 3S + j * S + t % S`.
#[cfg(target_arch = "x86_64")]
struct Thirds {
    /// Per output: indices into inputs 0 and 1 (`q mod 128`), into 1 and 2
    /// (`q - 64`), and the lanes taken from the second (`q >= 128`).
    idx: [(__m512i, __m512i, u64); 3],
}

#[cfg(target_arch = "x86_64")]
impl Thirds {
    #[inline(always)]
    fn new(at: impl Fn(usize, usize) -> usize) -> Thirds {
        let table = |j: usize| {
            let (mut lo, mut hi, mut from_hi) = ([0u8; 64], [0u8; 64], 0u64);
            for t in 0..64 {
                let q = at(j, t);
                lo[t] = (q % 128) as u8;
                hi[t] = q.saturating_sub(64) as u8;
                from_hi |= u64::from(q >= 128) << t;
            }
            // SAFETY: unaligned loads of 64-byte arrays (AVX-512F: the
            // caller's target features).
            unsafe { (_mm512_loadu_si512(lo.as_ptr().cast()), _mm512_loadu_si512(hi.as_ptr().cast()), from_hi) }
        };
        Thirds { idx: [table(0), table(1), table(2)] }
    }

    /// The three outputs of the inputs `v`. Register operations: call it
    /// from code compiled for AVX-512F/BW and AVX512-VBMI.
    #[inline(always)]
    fn pick(&self, v: [__m512i; 3]) -> [__m512i; 3] {
        // SAFETY: register operations of the caller's instruction sets.
        unsafe {
            self.idx.map(|(lo, hi, from_hi)| {
                let a = _mm512_permutex2var_epi8(v[0], lo, v[1]);
                let b = _mm512_permutex2var_epi8(v[1], hi, v[2]);
                _mm512_mask_blend_epi8(from_hi, a, b)
            })
        }
    }
}

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
    fn fit(self) -> bool {
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
    idx: [[[u8; 64]; 2]; MAX_TABLES],
    /// Per table: the lanes taken from window 1 (window 0's are the rest).
    take: [u64; MAX_TABLES],
}

/// What the tables of a [`Gathers`] gather.
#[cfg(target_arch = "x86_64")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gather {
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
    fn with<R>(units: AnyUnits, what: Gather, f: impl FnOnce(&Gathers) -> R) -> R {
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
fn iota() -> __m512i {
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
fn carry_permutes(iota: __m512i, fill: usize, off: usize) -> (__m512i, __m512i) {
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
unsafe fn carry_push(held: &mut __m512i, new: __m512i, (idx, shift): (__m512i, __m512i), emit: Option<(*mut u8, u64)>) {
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

/// The source side of [`interleave_carried`]: destination rows follow one
/// another (`inner.ds` is a row's kept bytes, `outer.ds` is `inner.count`
/// rows), so that the whole destination is one contiguous run; row `(r,
/// i)` reads its `b` streams at `src + r * outer.ss + i * inner.ss + j *
/// ss`, and the destination keeps its interleaved bytes `keep.0..keep.1`
/// (all of them, or a crop of its ends: OpenVINO's batch-to-space).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Interleaved {
    pub outer: Rows,
    pub inner: Rows,
    pub ss: isize,
    pub keep: (usize, usize),
}

/// Interleaves `b` streams of `n` units of `size` bytes into each
/// destination row (`row[x * b + j] = stream_j[x]`), for every row of
/// `c.outer` and `c.inner`, and writes the rows' kept bytes (`c.keep`)
/// as one contiguous destination run from `dst`.
///
/// The run's bytes are carried across rows in a register (AVX512-VBMI
/// byte permutes), so that every line leaves whole with one 64-byte
/// streaming store however the rows fall on lines. The line the run
/// shares with the bytes before it continues the writers' stream that
/// reaches `dst`, if one does (a run before it, in an earlier call); the
/// line it shares with the bytes after it is left to the writers, for
/// the next run to finish. Where no run joins them, those two lines take
/// ordinary (masked) stores. Measured: uint8 depth-to-space with 500-byte
/// rows 8.4x memcpy through the cache, float32 pixel_shuffle of 255-wide
/// rows 2.3x (rows the 16-byte aligned kernel cannot stream). Returns
/// whether it did the work (if not, nothing is written): it needs
/// [`interleaves_carried`].
///
/// # Safety
/// Every source unit named above readable, every destination byte writable
/// and not held by the writers, no overlap; `isa` one this CPU runs (from
/// [`Isa::detect`] or below it).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn interleave_carried(
    isa: Isa,
    size: usize,
    b: usize,
    c: Interleaved,
    n: usize,
    src: *const u8,
    dst: *mut u8,
    w: &mut Writers,
) -> bool {
    let outer_ds = c.inner.count.checked_mul(c.keep.1.wrapping_sub(c.keep.0));
    let fits = interleaves_carried(isa, size, b, n, c.keep, c.inner.ds)
        && (c.outer.count <= 1 || outer_ds.is_some_and(|o| c.outer.ds == o as isize));
    if !fits || c.outer.count == 0 || c.inner.count == 0 {
        return fits;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU has AVX512-VBMI (`isa`, detected); the rest is
    // forwarded (for other units, with their reads `H` and windows `W`).
    unsafe {
        if !matches!(size, 1 | 2 | 4 | 8) {
            let units = AnyUnits { size, b };
            let Some(step) = units.groups_step() else { return false };
            return Gathers::with(units, Gather::InterleaveGroups, |g| {
                dispatch_groups!(interleaved_groups, b, step, (g, size, step, c, n, src, dst, w));
                true
            });
        }
        dispatch_carried!(interleaved, size, b, (c, n, src, dst, w))
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (src, dst, w);
    true
}

/// Whether [`interleave_carried`] runs rows of `b` streams of `n` units
/// of `size` bytes, of which the destination keeps the interleaved bytes
/// `keep.0..keep.1`, one row every `row_ds` bytes: with AVX512-VBMI
/// (`isa`) on x86_64, 2 to 4 streams of 1- to 8-byte units (or of units
/// that [`AnyUnits::groups_step`] takes), at least 64
/// bytes per stream in a row, and rows that follow one another (`row_ds`
/// the kept bytes).
pub(crate) fn interleaves_carried(
    isa: Isa,
    size: usize,
    b: usize,
    n: usize,
    keep: (usize, usize),
    row_ds: isize,
) -> bool {
    let row = n.checked_mul(size).and_then(|r| r.checked_mul(b));
    let units = matches!(size, 1 | 2 | 4 | 8) || AnyUnits { size, b }.groups_step().is_some();
    cfg!(target_arch = "x86_64")
        && isa >= Isa::Avx512Vbmi
        && units
        && matches!(b, 2..=4)
        && n.checked_mul(size).is_some_and(|r| r >= 64)
        && row.is_some_and(|row| keep.0 < keep.1 && keep.1 <= row)
        && row_ds == (keep.1 - keep.0) as isize
}

/// The body of [`interleave_carried`], which checked its conditions, for
/// units of 1 to 8 bytes: each row's body is `B` vectors per `64 / S`
/// units of each stream, covering `64 * B` bytes of the interleaved row; a
/// row's last units (fewer than `64 / S`) come from vectors of its last
/// `64 / S` units, of which only the new bytes are pushed. Carried by
/// [`interleaved_rows`].
///
/// # Safety
/// As [`interleave_carried`], whose conditions hold; the CPU has AVX-512F,
/// AVX-512BW and AVX512-VBMI.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
unsafe fn interleaved<const S: usize, const B: usize>(
    c: Interleaved,
    n: usize,
    src: *const u8,
    dst: *mut u8,
    w: &mut Writers,
) {
    let per = 64 / S;
    let row = n * S * B;
    let thirds = Thirds::new(|k, t| {
        let q = 64 * k + t;
        let u = q / S;
        (u % 3) * 64 + (u / 3) * S + q % S
    });
    // The `B` destination vectors of one vector of each stream at `sp`.
    let at = |sp: *const u8| -> [__m512i; B] {
        // SAFETY: one vector readable at `sp + j * c.ss` for each stream `j`
        // (the caller's); register operations of this function's features.
        unsafe {
            let v: [__m512i; B] =
                std::array::from_fn(|j| _mm512_loadu_si512(sp.wrapping_offset(j as isize * c.ss).cast()));
            if B == 3 {
                let o = thirds.pick([v[0], v[1], v[2]]);
                std::array::from_fn(|k| o[k])
            } else {
                interleave_step::<__m512i, S, B>(v)
            }
        }
    };
    // SAFETY: each step reads one vector of each stream of a row, at unit
    // `k * per` (`k < n / per`) or `n - per` (`n >= per`), inside the
    // stream's `n` units; the rest is forwarded.
    unsafe {
        interleaved_rows::<B>(
            c,
            row,
            64 * B,
            src,
            dst,
            w,
            |sr, k| fetch_streams::<B>(sr, c.ss, k * 64 + n * S),
            |sr, k| at(sr.add(k * 64)),
            |sr| (at(sr.add((n - per) * S)), row - 64 * B),
        )
    }
}

/// The body of [`interleave_carried`] for units of other sizes that
/// [`AnyUnits::groups_step`] takes (3 to 63 bytes, by 2 to 4: NHWC pixels
/// of three channels, and their blocks): a step reads one vector of each
/// stream, of which it takes `step` bytes, whole units, and gathers the
/// `b * step` interleaved bytes (more than `64 * (V - 1)`, at most `64 *
/// V`) into `V` vectors by the same tables every step, held in registers
/// (2 windows, a pair of streams each; of 3 streams, the second is stream
/// 2's vector twice). The gathers it replaced
/// (`interleaved_any`) read every stream again for each destination
/// vector, and tables by the vector's phase with it.
///
/// # Safety
/// As [`interleave_carried`], whose conditions hold, for `B` streams of
/// units of `size` bytes, `step` their [`AnyUnits::groups_step`], `g`
/// their tables ([`Gather::InterleaveGroups`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[allow(clippy::too_many_arguments)]
unsafe fn interleaved_groups<const B: usize, const V: usize, const STEP: usize>(
    g: &Gathers,
    size: usize,
    step: usize,
    c: Interleaved,
    n: usize,
    src: *const u8,
    dst: *mut u8,
    w: &mut Writers,
) {
    // The step's bytes known here (the usual ones: measured, units that
    // divide 48, by 4, 0.904 -> 0.971x memcpy over 9 NHWC interleaves of
    // them with it known at run time), or at run time (0).
    let step = if STEP != 0 { STEP } else { step };
    let (len, row) = (n * size, n * size * B);
    // SAFETY: loads of the tables' 64-byte arrays.
    let idx: [[__m512i; 2]; V] =
        std::array::from_fn(|k| std::array::from_fn(|w| unsafe { _mm512_loadu_si512(g.idx[k][w].as_ptr().cast()) }));
    let take: [u64; V] = std::array::from_fn(|k| g.take[k]);
    // The destination vectors of the groups from stream byte `base` on.
    let at = |sr: *const u8, base: usize| -> [__m512i; V] {
        // The vectors past the streams' ends read only their bytes.
        let masked = base + 64 > len;
        // SAFETY: each stream's `len` bytes readable (the caller's), and
        // no byte outside them read (`read`, masked past them); register
        // operations of this function's features.
        unsafe {
            let v: [__m512i; B] =
                std::array::from_fn(|j| read(sr.wrapping_offset(j as isize * c.ss), base, (0, len), masked));
            std::array::from_fn(|k| {
                let lo = _mm512_permutex2var_epi8(v[0], idx[k][0], v[1 % B]);
                if B == 2 {
                    return lo;
                }
                let hi = _mm512_permutex2var_epi8(v[2 % B], idx[k][1], v[(B - 1) % B]);
                _mm512_mask_blend_epi8(take[k], lo, hi)
            })
        }
    };
    let chunk = B * step;
    // SAFETY: step `k < row / chunk` reads stream bytes `step * k..step *
    // (k + 1)` of each stream, inside its `len`; the last, `len -
    // step..len` (`len >= 64 >= step`); each a whole number of units. The
    // rest is forwarded.
    unsafe {
        interleaved_rows::<V>(
            c,
            row,
            chunk,
            src,
            dst,
            w,
            |sr, k| fetch_streams::<B>(sr, c.ss, k * step + 2 * len),
            |sr, k| at(sr, k * step),
            |sr| (at(sr, len - step), row - chunk),
        )
    }
}

/// Fetches a line of each of `B` streams `ss` apart from `sr`, `at` bytes
/// into them. The callers fetch each stream a row or two of its own ahead,
/// not `PREFETCH_AHEAD`: the streams of OpenVINO's batch-to-space are
/// batches a power of two apart, 16 of them by 4x4, whose lines share sets
/// of the caches, and lines fetched far ahead are evicted before they are
/// read (measured, 2 runs alternating, 24 of those cropped, by 3 and 4, and
/// 24 pixel_shuffle and DCR by 4: two rows ahead, geomean 0.87 -> 0.83x
/// memcpy; the worst, uint8 of 16 channels by 4, 1.63 -> 1.11). One row
/// ahead, for the units of [`interleaved`]: 33 of those (by 2 to 4, and
/// pixel_shuffle and DCR by 4), 4 runs alternating, median per workload,
/// geomean 0.89 -> 0.84, above 1.10 1 -> 0 (another 27, 3 runs: 1.06
/// -> 0.98, uint8 of 16 channels by 4 1.26 -> 1.03); 49 other interleaves
/// (NHWC batch-to-space, space-to-depth, pixel_shuffle and DCR by 2 and 3)
/// alike, 0.808 -> 0.807. [`interleaved_groups`] keeps two (one measured
/// 0.821 on those 49 with the gathers before it).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn fetch_streams<const B: usize>(sr: *const u8, ss: isize, at: usize) {
    for j in 0..B {
        prefetch(sr.wrapping_offset(j as isize * ss).wrapping_add(at), 64);
    }
}

/// The row loop of [`interleaved`] and [`interleaved_groups`]: one
/// destination run from `dst`, `m` bytes past a line boundary (`base`);
/// `pos`, the next byte's offset from `base`, advances by every push (of
/// `len` bytes from `off` of a vector, `off + len <= 64`), whose line
/// leaves when it is whole. The run's bytes begin at `start`: `dst`, or before it, where the writers' stream that it
/// continues began (whose unfinished line it takes as its first `m`
/// bytes). Each row of `row` bytes from its source at `sr` gets `chunk`
/// bytes in `V` vectors per `step(sr, k)` (row bytes `chunk * k..`, the
/// last vector whole if `chunk` is `64 * V`, its first `chunk % 64` bytes
/// otherwise), for `k < row / chunk`, the middle ones after `fetch(sr,
/// k)`, and its end from `last(sr)`: the vectors of the chunk that ends
/// the row, and its row byte. Of a row's bytes, only those in `c.keep` are
/// pushed: the vectors inside it whole (but a short last one), with one
/// set of permutes a row (or a step, with a short last vector), those at
/// its ends in part.
///
/// # Safety
/// As [`interleave_carried`], whose conditions hold, with `step` and
/// `last` reading inside the streams; the caller is compiled for AVX-512F,
/// AVX-512BW and AVX512-VBMI.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[inline]
#[allow(clippy::too_many_arguments)]
unsafe fn interleaved_rows<const V: usize>(
    c: Interleaved,
    row: usize,
    chunk: usize,
    src: *const u8,
    dst: *mut u8,
    w: &mut Writers,
    fetch: impl Fn(*const u8, usize),
    step: impl Fn(*const u8, usize) -> [__m512i; V],
    last: impl Fn(*const u8) -> ([__m512i; V], usize),
) {
    debug_assert!(chunk > 64 * (V - 1) && chunk <= 64 * V);
    let whole = row / chunk;
    let (lo, hi) = c.keep;
    // The steps wholly inside the kept bytes: `first..end`.
    let first = lo.div_ceil(chunk).min(whole);
    let end = (hi / chunk).clamp(first, whole);
    let m = dst as usize % 64;
    let base = dst.wrapping_sub(m);
    let iota = iota();
    let mut line = [MaybeUninit::<u8>::uninit(); 64];
    let start = w.take(dst, &mut line);
    // Lanes of the line at offset `at` (a multiple of 64) from `base` that
    // are the run's: from `start` on.
    let own_from = start as isize - base as isize;
    // SAFETY: the lanes below `m` of `line` are the held bytes `take`
    // gave (masked-off lanes are not accessed); none if `start == dst`.
    let mut held = unsafe {
        let held = if start == dst || m == 0 { 0 } else { u64::MAX >> (64 - m) };
        _mm512_maskz_loadu_epi8(held, line.as_ptr().cast())
    };
    let mut pos = m;
    // SAFETY: loads: the caller's `step` and `last`. Stores: the run's
    // bytes sit at `own_from..m + total` from `base` (`total`, the kept
    // bytes of all rows); a line that leaves whole lies inside them
    // (aligned, streaming); the line at `start`, if it begins before it,
    // is stored masked to its bytes from `start` on, so no byte outside
    // the run is written (masked-off bytes are not accessed). The last
    // partial line goes to the writers.
    unsafe {
        let push = |held: &mut __m512i, pos: &mut usize, new: __m512i, p, len: usize| {
            let at = (*pos / 64 * 64) as isize;
            let own = if own_from > at { u64::MAX << (own_from - at) } else { u64::MAX };
            let emit = *pos % 64 + len >= 64;
            let at = if emit { Some((base.wrapping_offset(at), own)) } else { None };
            carry_push(held, new, p, at);
            *pos += len;
        };
        // The vectors of a step at row byte `a`, from row byte `from` on,
        // each in part: the bytes inside `lo..hi` (and the step's).
        let part = |held: &mut __m512i, pos: &mut usize, v: [__m512i; V], a: usize, from: usize| {
            for (k, v) in v.into_iter().enumerate() {
                let (va, vb) = ((a + 64 * k).max(from).max(lo), (a + 64 * k + 64).min(hi).min(a + chunk));
                if va < vb {
                    let p = carry_permutes(iota, *pos % 64, va - a - 64 * k);
                    push(held, pos, v, p, vb - va);
                }
            }
        };
        for r in 0..c.outer.count {
            for i in 0..c.inner.count {
                let sr = src.wrapping_offset(r as isize * c.outer.ss + i as isize * c.inner.ss);
                for k in 0..first {
                    part(&mut held, &mut pos, step(sr, k), k * chunk, 0);
                }
                // Whole vectors keep the line offset: one set of permutes
                // a row, or a step if its last vector is not whole.
                let mut p = carry_permutes(iota, pos % 64, 0);
                for k in first..end {
                    fetch(sr, k);
                    if !chunk.is_multiple_of(64) {
                        p = carry_permutes(iota, pos % 64, 0);
                    }
                    for (i, v) in step(sr, k).into_iter().enumerate() {
                        let len = if i + 1 < V { 64 } else { chunk - 64 * (V - 1) };
                        push(&mut held, &mut pos, v, p, len);
                    }
                }
                for k in end..whole {
                    part(&mut held, &mut pos, step(sr, k), k * chunk, 0);
                }
                if whole * chunk < row {
                    let (v, a) = last(sr);
                    part(&mut held, &mut pos, v, a, whole * chunk);
                }
            }
        }
        _mm512_storeu_si512(line.as_mut_ptr().cast(), held);
        w.hold(base.wrapping_add(pos), start, &line);
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    /// Three vectors of distinct bytes, and them as one array.
    fn three<V: Vector>() -> ([V; 3], Vec<u8>) {
        let bytes: Vec<u8> = (0..3 * V::BYTES).map(|i| (i * 7 + 3) as u8).collect();
        // SAFETY: `3 * V::BYTES` bytes readable; the CPU runs `V` (checked by the caller).
        let v = unsafe { std::array::from_fn(|k| V::load(bytes.as_ptr().add(k * V::BYTES))) };
        (v, bytes)
    }

    fn bytes_of<V: Vector>(v: [V; 3]) -> Vec<u8> {
        let mut out = vec![0u8; 3 * V::BYTES];
        for (k, v) in v.into_iter().enumerate() {
            // SAFETY: inside `out`; the CPU runs `V` (checked by the caller).
            unsafe { V::store(out.as_mut_ptr().add(k * V::BYTES), v) };
        }
        out
    }

    /// Three streams split and zipped, by `V`'s way, against the definition:
    /// unit `u` of stream `j` is unit `3u + j` of the interleaving.
    fn split3_and_zip3_follow_the_definition<V: Vector, const S: usize>() {
        let (v, bytes) = three::<V>();
        let n = V::BYTES;
        // SAFETY: register operations of `V` (the caller checked the CPU).
        let (split, zipped) = unsafe { (bytes_of(V::split3::<S>(v)), bytes_of(V::zip3::<S>(v))) };
        for j in 0..3 {
            for t in 0..n {
                let unit = t / S;
                assert_eq!(split[j * n + t], bytes[(3 * unit + j) * S + t % S], "split S {S} stream {j} byte {t}");
            }
        }
        for q in 0..3 * n {
            let (j, unit) = (q / S % 3, q / (3 * S));
            assert_eq!(zipped[q], bytes[j * n + unit * S + q % S], "zip S {S} byte {q}");
        }
    }

    /// Padded source rows are deinterleaved in place by every vector
    /// instruction set this CPU runs, AVX512-VBMI too (whose own kernel
    /// reads whole rows: the joined one runs them): `deinterleave_carried`
    /// does the work, the bytes outside each row's data read as zeros
    /// (they hold 0xee here), and nothing outside the streams is written.
    #[test]
    fn padded_rows_deinterleave_in_place_with_every_vector_isa() {
        const S: usize = 4;
        const B: usize = 2;
        // Per stream, rows of 20 units (80 bytes: a line and a part), 3 rows.
        let (n, rows) = (20usize, 3usize);
        let src_row = n * B * S;
        // Data bytes of each source row: past its first unit, short of its last two.
        let (lo, hi) = (S, src_row - 2 * S);
        let src: Vec<u8> = (0..rows * src_row)
            .map(|i| if (lo..hi).contains(&(i % src_row)) { (i * 7 % 251) as u8 + 1 } else { 0xee })
            .collect();
        // The streams 4 lines apart (each is 240 bytes), starting 16 bytes
        // into a line, 64 guard bytes either side.
        let stream_ds = 256usize;
        let len = 64 + 16 + stream_ds + rows * n * S + 64;
        for isa in [Isa::Sse2, Isa::Avx2, Isa::Avx512, Isa::Avx512Vbmi] {
            if isa > Isa::detect() {
                continue;
            }
            let mut out = vec![0u128; len.div_ceil(16) + 4];
            // SAFETY: a `u128` buffer is 16-byte aligned; `len` bytes in it.
            let buf = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), len) };
            let at = (64 - buf.as_ptr() as usize % 64) % 64 + 16;
            buf.fill(0x55);
            let pad = Padding { lo, hi, groups: None };
            let c = Carried {
                rows: Rows { count: rows, ss: src_row as isize, ds: (n * S) as isize },
                streams: Rows::ONE,
                ds: stream_ds as isize,
                ahead: Ahead::Source,
                pad: Some(pad),
            };
            // SAFETY: the source rows and the streams' bytes from `at` lie
            // inside their buffers; `isa` is one this CPU runs.
            let done = unsafe { deinterleave_carried(isa, S, B, c, n, src.as_ptr(), buf.as_mut_ptr().add(at)) };
            assert!(done, "{isa:?}: declined");
            let mut want = vec![0x55u8; len];
            for r in 0..rows {
                for x in 0..n {
                    for j in 0..B {
                        for k in 0..S {
                            let q = (x * B + j) * S + k;
                            let v = if (lo..hi).contains(&q) { src[r * src_row + q] } else { 0 };
                            want[at + j * stream_ds + (r * n + x) * S + k] = v;
                        }
                    }
                }
            }
            assert!(buf == &want[..], "{isa:?}");
        }
    }

    /// `interleave_carried` of rows cropped at their ends, in two calls
    /// that continue one destination run, after a run pushed to the
    /// writers that ends where the first call begins: the writers' line
    /// is taken over and the last one handed back, every row's kept bytes
    /// land in order, and nothing outside the runs is written. With
    /// AVX512-VBMI only (below it, the kernel declines).
    #[test]
    fn cropped_rows_interleave_carried_through_the_writers() {
        let isa = Isa::detect();
        // 2-byte units (the kernel's own) and units of other sizes
        // (gathered), 2 to 4 streams: steps of whole vectors (units that
        // divide 48 bytes, by 4) or not, of 2 or 3 vectors (30 bytes by 4
        // and 40 by 3 make 2).
        let shapes =
            [2usize, 3, 6, 9, 12, 24, 30, 36, 40, 48, 60].into_iter().flat_map(|u| [(u, 2usize), (u, 3), (u, 4)]);
        // 40 units a stream, or about the fewest the kernels take (a
        // vector of each stream; at least 9, for the crop below).
        let shapes = shapes.flat_map(|(size, b)| [40, 64usize.div_ceil(size).max(9)].map(|n| (size, b, n)));
        for (size, b, n) in shapes {
            // Rows of `n * size * b` bytes, kept from unit 3 to 5 units
            // short of the end.
            let rows = 5usize;
            let row = n * size * b;
            let keep = (3 * size, row - 5 * size);
            let kept = keep.1 - keep.0;
            // Stream `j` of row `r` at `r * b * n * size + j * n * size`.
            let src: Vec<u8> = (0..rows * row).map(|i| (i * 13 % 251) as u8).collect();
            let (pre, at) = (21usize, 64 + 37);
            let len = at + rows * kept + 64;
            let mut out = vec![0u128; len.div_ceil(16)];
            // SAFETY: `len` bytes inside the `u128` buffer.
            let buf = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), len) };
            buf.fill(0x55);
            let prefix: Vec<u8> = (0..pre).map(|i| 200 + i as u8).collect();
            let mut w = Writers::new();
            let d = buf.as_mut_ptr();
            let call = |w: &mut Writers, r0: usize, count: usize| {
                let inner = Rows { count, ss: row as isize, ds: kept as isize };
                let c = Interleaved { outer: Rows::ONE, inner, ss: (n * size) as isize, keep };
                let (from, to) = (src[r0 * row..].as_ptr(), d.wrapping_add(at + r0 * kept));
                // SAFETY: `count` rows of the source from `from`; their kept
                // bytes inside `buf` from `to`; `isa` detected.
                unsafe { interleave_carried(isa, size, b, c, n, from, to, w) }
            };
            // SAFETY: the prefix ends at `at`, inside `buf`.
            unsafe { w.push(prefix.as_ptr(), d.wrapping_add(at - pre), pre) };
            let done = call(&mut w, 0, 3) && call(&mut w, 3, 2);
            // SAFETY: the runs' bytes are `buf`'s.
            unsafe {
                w.finish();
                crate::engine::kernels::fence();
            }
            if isa < Isa::Avx512Vbmi {
                assert!(!done, "size {size} b {b}: {isa:?} has no carried interleave");
                continue;
            }
            assert!(done, "size {size} b {b}");
            let mut want = vec![0x55u8; len];
            want[at - pre..at].copy_from_slice(&prefix);
            for r in 0..rows {
                for q in keep.0..keep.1 {
                    let (x, j, k) = (q / size / b, q / size % b, q % size);
                    want[at + r * kept + q - keep.0] = src[r * row + j * n * size + x * size + k];
                }
            }
            assert!(buf == &want[..], "size {size} b {b} n {n}");
        }
    }

    /// The step of [`AnyUnits`]: the most whole units that fit a vector of
    /// each stream and three vectors for all the streams, or one unit
    /// (four vectors), and its tables' windows: those of three vectors or
    /// fewer draw on 0 and 1, and 1 and 2, those of four on 0 and 1, and 2
    /// and 3.
    #[test]
    fn any_units_steps_follow_their_sizes() {
        for size in 3..64 {
            for b in 2..=4 {
                let u = AnyUnits { size, b };
                let most = (1..=64).filter(|t| t % size == 0 && b * t <= 192).max().unwrap_or(size);
                let step = u.groups_step();
                assert_eq!(step, u.fit().then_some(most), "{size} x {b}");
                let Some(step) = step else { continue };
                assert!(b * step > 64 && b * step <= 256, "{size} x {b}");
                // Every stream byte's source byte lies in the windows.
                Gathers::with(u, Gather::DeinterleaveGroups, |g| {
                    let vectors = (b * step).div_ceil(64);
                    let windows = if vectors == 4 { [0, 2] } else { [0, vectors.saturating_sub(2)] };
                    for j in 0..b {
                        for t in 0..step {
                            let q = t / size * b * size + j * size + t % size;
                            let w = usize::from(g.take[j] >> t & 1 == 1);
                            assert_eq!(windows[w] * 64 + g.idx[j][w][t] as usize, q, "{size} x {b}, {j}, {t}");
                        }
                    }
                });
            }
        }
    }

    /// `deinterleave_carried` of units without a kernel of their own (3 to
    /// 63 bytes, not powers of two), with AVX512-VBMI: 2 groups of 2 to 4
    /// streams, each stream starting at its own offset in a line, rows
    /// ending at a line or anywhere in one; every stream's bytes land in
    /// order and nothing outside the streams is written; padded rows read
    /// in place, their padding as zeros (63-byte units by 4: four source
    /// vectors a step). Below VBMI the kernel declines (their vectors do
    /// not hold whole units).
    #[test]
    fn units_of_any_size_deinterleave_carried() {
        let isa = Isa::detect();
        for size in [3usize, 5, 6, 7, 9, 12, 18, 24, 36, 48, 60, 63] {
            for (b, padded) in [2usize, 3, 4].into_iter().flat_map(|b| [(b, false), (b, true)]) {
                for n in [64usize.div_ceil(size), 256 / size, 200usize.div_ceil(size)] {
                    let (rows, groups) = (3usize, 2usize);
                    let src_row = n * b * size;
                    // Padded: each row's data past its first unit, short of
                    // its last two; the rest holds 0xee and reads as zeros.
                    let data = if padded { (size, src_row - 2 * size) } else { (0, src_row) };
                    let is_data = |q: usize| (data.0..data.1).contains(&(q % src_row));
                    // Rows of both groups, one after another, then the next row.
                    let src: Vec<u8> = (0..rows * groups * src_row)
                        .map(|i| if is_data(i) { (i * 7 % 251) as u8 } else { 0xee })
                        .collect();
                    // Stream `s` at `64 + s * ds`: 5 bytes further into a line
                    // than the one before; 64 guard bytes after the last.
                    let ds = (rows * n * size).next_multiple_of(64) + 64 + 5;
                    let len = 64 + groups * b * ds + 64;
                    let mut out = vec![0u128; len.div_ceil(16) + 4];
                    // SAFETY: a `u128` buffer is 16-byte aligned; `len` bytes in it.
                    let buf = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), len) };
                    buf.fill(0x55);
                    let c = Carried {
                        rows: Rows { count: rows, ss: (groups * src_row) as isize, ds: (n * size) as isize },
                        streams: Rows { count: groups, ss: src_row as isize, ds: (b * ds) as isize },
                        ds: ds as isize,
                        ahead: Ahead::Source,
                        pad: padded.then_some(Padding { lo: data.0, hi: data.1, groups: None }),
                    };
                    // SAFETY: the source rows and the streams' bytes lie
                    // inside their buffers; `isa` detected.
                    let done =
                        unsafe { deinterleave_carried(isa, size, b, c, n, src.as_ptr(), buf.as_mut_ptr().add(64)) };
                    if isa < Isa::Avx512Vbmi {
                        assert!(!done, "{size} x {b}: {isa:?} has no carried deinterleave of them");
                        return;
                    }
                    assert!(done, "{size} x {b}, n {n}, padded {padded}");
                    let mut want = vec![0x55u8; len];
                    for g in 0..groups {
                        for j in 0..b {
                            for r in 0..rows {
                                for x in 0..n {
                                    for k in 0..size {
                                        let q = (r * groups + g) * src_row + (x * b + j) * size + k;
                                        let v = if is_data(q) { src[q] } else { 0 };
                                        want[64 + (g * b + j) * ds + (r * n + x) * size + k] = v;
                                    }
                                }
                            }
                        }
                    }
                    assert!(buf == &want[..], "{size} x {b}, n {n}, padded {padded}");
                }
            }
        }
    }

    #[test]
    fn three_streams_split_and_zip() {
        split3_and_zip3_follow_the_definition::<__m128i, 1>();
        split3_and_zip3_follow_the_definition::<__m128i, 2>();
        split3_and_zip3_follow_the_definition::<__m128i, 4>();
        split3_and_zip3_follow_the_definition::<__m128i, 8>();
        split3_and_zip3_follow_the_definition::<__m128i, 16>();
        if is_x86_feature_detected!("avx2") {
            split3_and_zip3_follow_the_definition::<__m256i, 16>();
            split3_and_zip3_follow_the_definition::<__m256i, 1>();
            split3_and_zip3_follow_the_definition::<__m256i, 2>();
            split3_and_zip3_follow_the_definition::<__m256i, 4>();
            split3_and_zip3_follow_the_definition::<__m256i, 8>();
        }
    }
}
