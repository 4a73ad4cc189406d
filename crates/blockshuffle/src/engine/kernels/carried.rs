//! The carried deinterleaving kernel ([`deinterleave_carried`]): whole
//! streaming tiles whose destination streams continue from one row to the
//! next, each stream's unfinished line carried in a register (with VBMI) or
//! joined from the sources of two rows (`joined_body`, any vector); and the
//! stage of padded carried rows ([`PADDED_ROWS_BYTES`]).
//!
//! Layer: kernels; imports [`simd`](super::simd), [`any_units`](super::any_units),
//! [`lines`](super::lines), [`nest`](super::nest) and arch.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;
#[cfg(target_arch = "x86_64")]
use std::mem::MaybeUninit;

#[cfg(target_arch = "x86_64")]
use super::any_units::{carry_permutes, carry_push, iota, AnyUnits, Gather, Gathers};
use super::nest::{Rows, Window};
#[cfg(target_arch = "x86_64")]
use super::simd::{
    deinterleave_step, dispatch, dispatch3, dispatch_carried, dispatch_groups, entry_point, line_parts, line_registers,
    line_registers_joined, put_line,
};
#[cfg(target_arch = "x86_64")]
use crate::engine::arch::mem::{copy_short, lanes, prefetch, PREFETCH_AHEAD};
#[cfg(target_arch = "x86_64")]
use crate::engine::arch::vector::Vector;
use crate::engine::arch::Isa;

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
    /// source read in its order), a row at a time (see [`carried_rows`]).
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
            let v = thirds.pick(unsafe {
                [
                    _mm512_loadu_si512(sp.cast()),
                    _mm512_loadu_si512(sp.add(64).cast()),
                    _mm512_loadu_si512(sp.add(128).cast()),
                ]
            });
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
pub(super) unsafe fn read(sr: *const u8, at: usize, (lo, hi): (usize, usize), masked: bool) -> __m512i {
    let p = sr.wrapping_add(at);
    // SAFETY: the caller's; masked-off lanes are not accessed.
    unsafe {
        if masked {
            let k = lanes(lo.saturating_sub(at), hi.saturating_sub(at));
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
                // Once a row, as below AVX512-VBMI: the next chunk's row,
                // or (a source read in its order) the row's bytes
                // `PREFETCH_AHEAD` on. On an Intel Xeon (2 cores), the
                // hardware prefetchers alone left the loads waiting behind
                // the streaming stores (one thread, 3 runs alternating:
                // NCHW space-to-depth 1.35 -> 1.10x memcpy, uint8
                // pixel_unshuffle 1.05 -> 0.79, float16 0.92 -> 0.72). On
                // an AMD Zen 4, a fetch a step at a time had measured
                // slower than none (44 carried deinterleaves, 4 runs:
                // 0.863 -> 0.894x memcpy); once a row was not measured
                // there.
                c.ahead.fetch(r, i, sr, B * row);
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
pub(super) struct Thirds {
    /// Per output: indices into inputs 0 and 1 (`q mod 128`), into 1 and 2
    /// (`q - 64`), and the lanes taken from the second (`q >= 128`).
    idx: [(__m512i, __m512i, u64); 3],
}

#[cfg(target_arch = "x86_64")]
impl Thirds {
    #[inline(always)]
    pub(super) fn new(at: impl Fn(usize, usize) -> usize) -> Thirds {
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
    ///
    /// No array `map`: its closure is a generic instance the compiler may
    /// decline to inline (it did, once another kernel used the same
    /// permutes), leaving every intrinsic in it a call.
    #[inline(always)]
    pub(super) fn pick(&self, v: [__m512i; 3]) -> [__m512i; 3] {
        #[inline(always)]
        fn one(v: &[__m512i; 3], (lo, hi, from_hi): (__m512i, __m512i, u64)) -> __m512i {
            // SAFETY: register operations of the caller's instruction sets.
            unsafe {
                let a = _mm512_permutex2var_epi8(v[0], lo, v[1]);
                let b = _mm512_permutex2var_epi8(v[1], hi, v[2]);
                _mm512_mask_blend_epi8(from_hi, a, b)
            }
        }
        [one(&v, self.idx[0]), one(&v, self.idx[1]), one(&v, self.idx[2])]
    }
}

/// Bytes of the padded source rows that the executor stages for a
/// `plan::rules::padded_carry_level` at a time (at least one row of every stream
/// group).
pub(crate) const PADDED_ROWS_BYTES: usize = 64 << 10;
