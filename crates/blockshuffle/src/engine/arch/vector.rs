//! The per-ISA vector: [`Vector`], the register operations the vector
//! kernels are written in, and its implementations for SSE2 (`__m128i`, 16
//! bytes, the x86_64 baseline), AVX2 (`__m256i`, 32 bytes) and AVX-512
//! (`__m512i`, 64 bytes, with AVX-512BW).
//!
//! The wide vectors work in 16-byte lanes: each step does the SSE2 operation
//! in every lane, then one cross-lane permutation puts the 8-byte halves
//! back in order.
//!
//! Beside it, [`load_part`]: fewer than 16 bytes read exactly into a
//! vector, for the kernels' rows that end short of one; and
//! [`permute_four`]: a byte permute of four registers' 256 lanes.
//!
//! Layer: arch (the lowest); imports nothing from the engine.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// The register operations the kernels are written in. `S` is the unit size
/// in bytes (1, 2, 4 or 8).
///
/// # Safety
/// Implementations use instructions of their instruction set: call them only
/// from code compiled for it (the `#[target_feature]` entry points below).
#[cfg(target_arch = "x86_64")]
pub(crate) trait Vector: Copy {
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

/// The `n` bytes (at most 16) at `p` in a vector's low bytes, the rest
/// zero: two plain reads of the widest power of two in `n`, at its
/// start and at its end, whose bytes in common are the same.
///
/// # Safety
/// `n` bytes readable at `p`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) unsafe fn load_part(p: *const u8, n: usize) -> __m128i {
    /// `W`-byte reads at `0` and `n - W`, put together.
    #[inline(always)]
    unsafe fn two<const W: usize>(p: *const u8, n: usize) -> u128 {
        let read = |at: usize| {
            let mut b = [0u8; 16];
            // SAFETY: `at + W <= n` bytes readable (caller).
            b[..W].copy_from_slice(&unsafe { p.add(at).cast::<[u8; W]>().read_unaligned() });
            u128::from_le_bytes(b)
        };
        read(0) | read(n - W) << (8 * (n - W))
    }
    // SAFETY: each read ends at or before byte `n` (`W <= n`).
    unsafe {
        let x = match n {
            16.. => return _mm_loadu_si128(p.cast()),
            8.. => two::<8>(p, n),
            4.. => two::<4>(p, n),
            2.. => two::<2>(p, n),
            1 => u128::from(p.read()),
            0 => 0,
        };
        _mm_set_epi64x((x >> 64) as i64, x as i64)
    }
}

/// Byte `t` of the result is lane `idx[t]` of the four registers `v` side
/// by side (256 lanes): a two-register permute (`vpermt2b`, which reads
/// an index's low 7 bits) of each pair, blended by `high`, the lanes whose
/// index names the high pair ([`high_lanes`]`(idx)`). The gathers' blocks
/// and the interleaves' wide steps permute so.
///
/// # Safety
/// The CPU has AVX-512BW and VBMI.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) unsafe fn permute_four(v: &[__m512i; 4], idx: __m512i, high: u64) -> __m512i {
    // SAFETY: register operations (AVX-512BW and VBMI, the caller's).
    unsafe {
        let low = _mm512_permutex2var_epi8(v[0], idx, v[1]);
        let upper = _mm512_permutex2var_epi8(v[2], idx, v[3]);
        _mm512_mask_blend_epi8(high, low, upper)
    }
}

/// The lanes of `idx` that name the high pair of [`permute_four`]'s
/// registers (an index of 128 or more).
///
/// # Safety
/// The CPU has AVX-512BW.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) unsafe fn high_lanes(idx: __m512i) -> u64 {
    // SAFETY: a register operation (AVX-512BW, the caller's).
    unsafe { _mm512_cmpge_epu8_mask(idx, _mm512_set1_epi8(-128)) }
}

/// In each 16-byte lane, the 4 x 4 transpose of the 4-byte units of `v`'s
/// lanes: unpacks of dwords, then of qwords. The 4-byte round of the
/// tile's stream squares and of AVX2's full-line squares.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) unsafe fn transpose4_lanes(v: [__m256i; 4]) -> [__m256i; 4] {
    // SAFETY: register operations (AVX2, the caller's).
    unsafe {
        let (t0, t1) = (_mm256_unpacklo_epi32(v[0], v[1]), _mm256_unpackhi_epi32(v[0], v[1]));
        let (t2, t3) = (_mm256_unpacklo_epi32(v[2], v[3]), _mm256_unpackhi_epi32(v[2], v[3]));
        [
            _mm256_unpacklo_epi64(t0, t2),
            _mm256_unpackhi_epi64(t0, t2),
            _mm256_unpacklo_epi64(t1, t3),
            _mm256_unpackhi_epi64(t1, t3),
        ]
    }
}
